//! [`Service`]: the tenants' indexes, the store and the generation backend.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use pgraphrag_core::Encoder;
use pgraphrag_retrieval::live::{Document, IndexOptions, ProfileIndex, Written};

use crate::chat::Backend;
use crate::keys::Keys;
use crate::metrics::Metrics;
use crate::store::{DocumentStore, Write};
use crate::summaries::{
    self, Summaries, Summarizer, SummaryExecutor, SummaryOptions, UserSummary, fingerprint,
};
use crate::{Error, Result};

/// Options of a [`Service`], set with a struct literal and `..Default::default()`.
#[derive(Clone)]
pub struct ServiceOptions {
    /// The live indexes' options (rating range, BM25 parameters, ...).
    pub index: IndexOptions,
    /// The dense encoder (dense and hybrid retrieval answer 400 without one).
    pub encoder: Option<Arc<dyn Encoder + Send + Sync>>,
    /// The chat completions backend (chat answers 503 without one).
    pub backend: Option<Backend>,
    /// The largest request body, in bytes. Default 1 MiB.
    pub max_body: usize,
    /// Requests per second allowed to one key (a token bucket of one second's burst);
    /// `None` = no limit. Default 1,000.
    pub rate_per_key: Option<f64>,
    /// The longest a request may take. Default 30 s.
    pub timeout: std::time::Duration,
    /// Background task summaries (made only when there is a [`ServiceOptions::backend`]);
    /// `None` turns them off. Default: on, with [`SummaryOptions::default`].
    pub summaries: Option<SummaryOptions>,
    /// Make the summaries on a JetStream work queue shared by every process of one PostgreSQL
    /// store instead of in the process that took the write (feature `jetstream`; the store
    /// must be one that several processes share, such as `PgDocuments`: [`Service::new`]
    /// refuses another). Used when [`ServiceOptions::summaries`] is on: every process submits
    /// its users' units, and those with a [`ServiceOptions::backend`] also run a worker.
    /// `None` (the default): in this process.
    ///
    /// ```no_run
    /// use pgraphrag_serve::{ServiceOptions, SummaryQueue};
    /// let opts = ServiceOptions {
    ///     summary_queue: Some(SummaryQueue::new("nats://127.0.0.1:14201")),
    ///     ..Default::default()
    /// };
    /// # let _ = opts;
    /// ```
    #[cfg(feature = "jetstream")]
    #[cfg_attr(docsrs, doc(cfg(feature = "jetstream")))]
    pub summary_queue: Option<crate::SummaryQueue>,
}

impl Default for ServiceOptions {
    fn default() -> Self {
        ServiceOptions {
            index: IndexOptions::default(),
            encoder: None,
            backend: None,
            max_body: 1 << 20,
            rate_per_key: Some(1000.0),
            timeout: std::time::Duration::from_secs(30),
            summaries: Some(SummaryOptions::default()),
            #[cfg(feature = "jetstream")]
            summary_queue: None,
        }
    }
}

impl std::fmt::Debug for ServiceOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("ServiceOptions");
        d.field("index", &self.index)
            .field("encoder", &self.encoder.is_some())
            .field("backend", &self.backend.as_ref().map(Backend::describe))
            .field("max_body", &self.max_body)
            .field("rate_per_key", &self.rate_per_key)
            .field("timeout", &self.timeout)
            .field("summaries", &self.summaries);
        #[cfg(feature = "jetstream")]
        d.field("summary_queue", &self.summary_queue);
        d.finish()
    }
}

/// One tenant: its index, its users' summaries, and the lock that keeps its store and
/// index writes in one order.
#[derive(Debug)]
pub struct Tenant {
    /// The tenant's live index.
    pub index: ProfileIndex,
    pub(crate) summaries: Summaries,
    writes: Mutex<()>,
}

impl Tenant {
    /// `user`'s current summary, if one has been made for their current documents (or for
    /// documents they had before a later change, until the new one is made).
    pub fn summary(&self, user: &str) -> Option<UserSummary> {
        self.summaries
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(user)
            .cloned()
    }

    /// Holds the tenant's write order (store, then index) while the guard lives.
    pub(crate) fn write_order(&self) -> std::sync::MutexGuard<'_, ()> {
        // The guarded section has no state of its own: a panic in it left nothing half-done
        // here (the store and the index each guard their own consistency).
        self.writes.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Everything a request needs; cheap to clone (shared).
#[derive(Clone)]
pub struct Service {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) keys: Keys,
    pub(crate) tenants: HashMap<String, Tenant>,
    pub(crate) store: Arc<dyn DocumentStore>,
    pub(crate) opts: ServiceOptions,
    pub(crate) metrics: Metrics,
    pub(crate) buckets: Mutex<HashMap<String, (f64, std::time::Instant)>>,
    /// The background summarizer, when summaries are on and there is a backend (or a queue).
    pub(crate) summarizer: Option<Summarizer>,
    /// The summaries' shared work queue, when there is one.
    #[cfg(feature = "jetstream")]
    pub(crate) summary_work: Option<summaries::QueueHandle>,
}

impl std::fmt::Debug for Service {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Service")
            .field("tenants", &self.inner.keys.tenants())
            .field("opts", &self.inner.opts)
            .finish()
    }
}

impl Service {
    /// A service over `store`: one index per tenant of `keys`, filled from the store in the
    /// order the documents were first written. Documents of tenants no longer in the key file
    /// stay in the store, unserved.
    pub fn new(
        keys: Keys,
        store: impl DocumentStore + 'static,
        opts: ServiceOptions,
    ) -> Result<Self> {
        let store: Arc<dyn DocumentStore> = Arc::new(store);
        let mut tenants = HashMap::new();
        for t in keys.tenants() {
            let mut index = ProfileIndex::new(opts.index)?;
            if let Some(enc) = &opts.encoder {
                index = index.with_encoder(Arc::clone(enc))?;
            }
            tenants.insert(
                t.clone(),
                Tenant {
                    index,
                    summaries: Summaries::default(),
                    writes: Mutex::new(()),
                },
            );
        }
        let mut batches: HashMap<String, Vec<Document>> = HashMap::new();
        // A store shared with other processes: where its change log stands, read before the
        // data (which then holds every change up to it); `None` for a store with one writer.
        let cursor = store.cursor(keys.tenants())?;
        #[cfg(feature = "jetstream")]
        if opts.summary_queue.is_some() && cursor.is_none() {
            return Err(pgraphrag_store::queue::Error::Config(
                "a summary queue needs a store that every process shares (PgDocuments, \
                 --store postgres://...): this store has one writer, this process"
                    .into(),
            )
            .into());
        }
        let loaded = store.load()?;
        for (tenant, doc) in loaded.documents {
            if tenants.contains_key(&tenant) {
                batches.entry(tenant).or_default().push(doc);
            }
        }
        for (tenant, docs) in batches {
            let index = &tenants[&tenant].index;
            for chunk in docs.chunks(1024) {
                index
                    .upsert_batch(chunk.to_vec())
                    .map_err(|source| Error::Load {
                        what: format!("the documents of tenant {tenant:?}"),
                        source,
                    })?;
            }
        }
        // Summaries of the loaded documents; stale ones (documents changed after they were
        // made) are not served and are made again.
        let mut stale = Vec::new();
        for (tenant, s) in loaded.summaries {
            let Some(t) = tenants.get(&tenant) else {
                continue;
            };
            let snap = t.index.snapshot();
            let docs = snap.user_documents(&s.user);
            if docs.is_empty() {
                continue;
            }
            if fingerprint(docs) != s.fingerprint {
                stale.push((tenant, s.user));
                continue;
            }
            t.summaries
                .write()
                .unwrap_or_else(|e| e.into_inner())
                .insert(
                    s.user,
                    UserSummary {
                        text: s.text,
                        as_of_generation: snap.generation(),
                        fingerprint: s.fingerprint,
                    },
                );
        }
        // Where summaries are made: in this process with a backend, or (feature `jetstream`)
        // by the workers of the queue every process of the shared store uses.
        let executor = opts.backend.as_ref().map(|_| SummaryExecutor::Local);
        #[cfg(feature = "jetstream")]
        let (executor, summary_work, start_work) = match (&opts.summaries, &opts.summary_queue) {
            (Some(so), Some(q)) => {
                let (handle, start) =
                    summaries::queue::connect(q, so.clone(), opts.backend.is_some())?;
                let submit = SummaryExecutor::Queue(Box::new(handle.submitter()));
                (Some(submit), Some(handle), Some(start))
            }
            _ => (executor, None, None),
        };
        let summarizer = match (&opts.summaries, executor) {
            (Some(so), Some(executor)) => Some(summaries::start(so.clone(), executor)),
            _ => None,
        };
        let (queue, run) = match summarizer {
            Some((q, run)) => (Some(q), Some(run)),
            None => (None, None),
        };
        let inner = Arc::new(Inner {
            keys,
            tenants,
            store,
            opts,
            metrics: Metrics::default(),
            buckets: Mutex::default(),
            summarizer: queue,
            #[cfg(feature = "jetstream")]
            summary_work,
        });
        #[cfg(feature = "jetstream")]
        if let Some(start) = start_work {
            start(Arc::downgrade(&inner));
        }
        if let Some(run) = run {
            run(Arc::downgrade(&inner));
            if let Some(q) = &inner.summarizer {
                for (tenant, user) in &stale {
                    q.dirty(tenant, user);
                }
                // Users without a summary (the process stopped before it was made, or
                // summaries were off): made now, one at a time in the background.
                for (name, t) in &inner.tenants {
                    let snap = t.index.snapshot();
                    let have = t.summaries.read().unwrap_or_else(|e| e.into_inner());
                    for user in snap.users() {
                        if !have.contains_key(user)
                            && !stale.iter().any(|(n, u)| n == name && u == user)
                        {
                            q.dirty(name, user);
                        }
                    }
                }
            }
        }
        if let Some(cursor) = cursor {
            crate::follow::spawn(&inner, cursor)?;
        }
        Ok(Service { inner })
    }

    /// Users waiting for (or in) a summary recomputation in this process; with a summary
    /// queue, waiting for their debounce or for a submission (see [`Service::queue_depth`]).
    pub fn summary_queue_depth(&self) -> usize {
        self.inner
            .summarizer
            .as_ref()
            .map_or(0, |q| q.depth.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// What `/metrics` reports as `pgraphrag_queue_depth`: with a summary queue (feature
    /// `jetstream`), the summary units not yet delivered to a worker, read from the JetStream
    /// stream every process shares; otherwise [`Service::summary_queue_depth`].
    ///
    /// ```
    /// # async fn demo() -> pgraphrag_serve::Result<()> {
    /// use pgraphrag_serve::{Keys, Service, ServiceOptions, store::Store};
    /// let keys = Keys::parse("[tenants.acme]\nkeys = [\"k\"]\n", "KEYS.toml")?;
    /// let service = Service::new(keys, Store::in_memory()?, ServiceOptions::default())?;
    /// assert_eq!(service.queue_depth().await?, 0);
    /// # Ok(()) }
    /// ```
    pub async fn queue_depth(&self) -> Result<u64> {
        #[cfg(feature = "jetstream")]
        if let Some(work) = &self.inner.summary_work {
            return Ok(work.queue.depth().await?.pending);
        }
        Ok(self.summary_queue_depth() as u64)
    }

    fn changed(&self, name: &str, user: &str) {
        if let Some(q) = &self.inner.summarizer {
            q.dirty(name, user);
        }
    }

    /// The tenants' names.
    pub fn tenant_names(&self) -> &[String] {
        self.inner.keys.tenants()
    }

    /// The tenant named `name`.
    pub fn tenant(&self, name: &str) -> Option<&Tenant> {
        self.inner.tenants.get(name)
    }

    /// The metrics.
    pub fn metrics(&self) -> &Metrics {
        &self.inner.metrics
    }

    /// Creates or replaces a document of `tenant`: checked, stored durably, then published.
    pub fn put(&self, tenant: &Tenant, name: &str, doc: Document) -> Result<Written> {
        let user = doc.user.clone();
        let staged = tenant.index.stage(vec![doc.clone()])?;
        let written = {
            let _order = tenant.write_order();
            self.inner.store.apply(name, &Write::Upsert(doc))?;
            tenant.index.commit(staged)?
        };
        self.changed(name, &user);
        Ok(written)
    }

    /// Deletes one document of `tenant`.
    pub fn delete(&self, tenant: &Tenant, name: &str, user: &str, doc: &str) -> Result<u64> {
        let generation = self.delete_locked(tenant, name, user, doc)?;
        self.changed(name, user);
        Ok(generation)
    }

    fn delete_locked(&self, tenant: &Tenant, name: &str, user: &str, doc: &str) -> Result<u64> {
        let _order = tenant.write_order();
        if tenant.index.snapshot().document(user, doc).is_none() {
            return Err(pgraphrag_retrieval::Error::UnknownDocument {
                user: user.into(),
                doc: doc.into(),
            }
            .into());
        }
        self.inner.store.apply(
            name,
            &Write::Remove {
                user: user.into(),
                doc: doc.into(),
            },
        )?;
        Ok(tenant.index.remove(user, doc)?)
    }

    /// Deletes every document of a user of `tenant`, and everything derived from them (the
    /// summary too); the receipt's counts, and whether a summary was erased.
    pub fn delete_user(
        &self,
        tenant: &Tenant,
        name: &str,
        user: &str,
    ) -> Result<(pgraphrag_retrieval::live::UserRemoval, bool)> {
        let _order = tenant.write_order();
        if !tenant.index.snapshot().has_user(user) {
            return Err(pgraphrag_retrieval::Error::UnknownUser { user: user.into() }.into());
        }
        self.inner
            .store
            .apply(name, &Write::RemoveUser { user: user.into() })?;
        let removal = tenant.index.remove_user(user)?;
        let summary = tenant
            .summaries
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(user)
            .is_some();
        Ok((removal, summary))
    }
}
