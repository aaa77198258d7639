//! Summaries on a JetStream work queue (feature `jetstream`): the process that took a write
//! submits a [`SummaryUnit`] once the user's debounce ends, and every process with a model
//! runs a worker ([`pgraphrag_store::queue::run_worker`]) that takes units from the shared
//! queue, makes the summary and stores it (then acknowledges: ack after store). The change log
//! of the shared store brings the stored summary to every other process.
//!
//! A unit names a tenant, a user and the [`fingerprint`](super::fingerprint) of the documents
//! it asks to summarise; its dedup id `<tenant>/<user>@<fingerprint>` makes a resubmission
//! harmless. A worker reads the documents from its own index, or from the store when its index
//! is behind (another fingerprint), and makes the summary only while the documents are still
//! those: a unit whose documents changed since is done without work (a newer unit exists), and
//! one whose summary is already stored (a redelivery after a crash between store and ack) too.

use std::sync::Weak;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use pgraphrag_store::queue::{
    self, Delivery, Event, Failure, Outcome, QueueConfig, Unit, WorkQueue, WorkerOptions,
    run_worker,
};
use serde::{Deserialize, Serialize};

use super::{SummaryOptions, fingerprint, fingerprint_of, publish};
use crate::service::Inner;
use crate::store::{StoredSummary, UserData, Write};

/// The kind (subject token) of the summary units.
pub const UNIT_KIND: &str = "serve-summary";

/// How long a failed submission waits before it is tried again.
const SUBMIT_RETRY: Duration = Duration::from_secs(2);
/// The pause before a worker that lost the queue starts again.
const WORKER_RESTART: Duration = Duration::from_secs(1);

/// Where a service's summary work goes: a JetStream work queue on the NATS servers `urls`,
/// shared by every `serve` process of one PostgreSQL store ([`crate::ServiceOptions`]'s
/// `summary_queue`).
///
/// ```
/// use pgraphrag_serve::summaries::SummaryQueue;
/// let q = SummaryQueue::new("nats://127.0.0.1:14201,nats://127.0.0.1:14202");
/// assert_eq!(q.config.stream, "PGRAPHRAG_SERVE");
/// assert_eq!(q.config.replicas, 2); // one per server given, at most 3
/// assert!(q.config.validate().is_ok());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummaryQueue {
    /// The NATS servers, comma-separated (`nats://HOST:PORT,...`).
    pub urls: String,
    /// The queue's names and limits ([`SummaryQueue::config_for`] by default: a stream of its
    /// own, apart from the offline jobs' `PGRAPHRAG_JOBS`).
    pub config: QueueConfig,
}

impl SummaryQueue {
    /// The queue on `urls` with [`SummaryQueue::config_for`] (replicas: one per server given,
    /// at most 3, as `pgraphrag worker` does).
    ///
    /// ```
    /// let q = pgraphrag_serve::SummaryQueue::new("nats://127.0.0.1:4222");
    /// assert_eq!((q.config.replicas, q.config.ack_wait.as_secs()), (1, 30));
    /// ```
    pub fn new(urls: &str) -> Self {
        let servers = urls.split(',').filter(|s| !s.trim().is_empty()).count();
        SummaryQueue {
            urls: urls.to_string(),
            config: Self::config_for(servers.clamp(1, 3)),
        }
    }

    /// The service's queue: stream `PGRAPHRAG_SERVE` on `pgraphrag.serve.units.*`, consumer
    /// `serve`, dead letters on `pgraphrag.serve.dead.*`, `replicas` replicas, 30 s ack wait,
    /// 5 deliveries, and a 2-minute dedup window (a user whose documents come back to an
    /// earlier state within it is submitted again once it passed).
    ///
    /// ```
    /// let c = pgraphrag_serve::summaries::SummaryQueue::config_for(1);
    /// assert_eq!((c.consumer.as_str(), c.max_deliver), ("serve", 5));
    /// ```
    pub fn config_for(replicas: usize) -> QueueConfig {
        QueueConfig {
            stream: "PGRAPHRAG_SERVE".into(),
            subjects: "pgraphrag.serve.units".into(),
            consumer: "serve".into(),
            dead_subjects: "pgraphrag.serve.dead".into(),
            replicas,
            dedup_window: Duration::from_secs(120),
            ..Default::default()
        }
    }
}

/// One unit of summary work: make `user`'s summary of the documents whose
/// [`fingerprint`](super::fingerprint) is `fingerprint`. Its payload is this as JSON.
///
/// ```
/// use pgraphrag_serve::summaries::SummaryUnit;
/// let u = SummaryUnit { tenant: "acme".into(), user: "ann".into(), fingerprint: 42 };
/// let unit = u.to_unit();
/// assert_eq!((unit.kind.as_str(), unit.id.as_str()), ("serve-summary", "acme/ann@42"));
/// assert_eq!(SummaryUnit::from_payload(&unit.payload).unwrap(), u);
/// // Bytes a header cannot carry are percent-encoded in the id (the payload keeps them).
/// let odd = SummaryUnit { tenant: "acme".into(), user: "a b%".into(), fingerprint: 1 };
/// assert_eq!(odd.id(), "acme/a%20b%25@1");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SummaryUnit {
    /// The tenant.
    pub tenant: String,
    /// The user.
    pub user: String,
    /// The fingerprint of the documents to summarise.
    pub fingerprint: u64,
}

/// A unit's payload that is not a [`SummaryUnit`].
///
/// ```
/// let e = pgraphrag_serve::summaries::SummaryUnit::from_payload(b"{}").unwrap_err();
/// assert!(e.to_string().contains("summary unit payload"));
/// ```
#[derive(Debug, thiserror::Error)]
#[error("summary unit payload is not {{\"tenant\", \"user\", \"fingerprint\"}} JSON: {0}")]
pub struct BadPayload(#[from] serde_json::Error);

impl SummaryUnit {
    /// The dedup id: `<tenant>/<user>@<fingerprint>`, with bytes outside printable ASCII and
    /// `%` percent-encoded (so different users never share an id).
    pub fn id(&self) -> String {
        format!(
            "{}/{}@{}",
            encode(&self.tenant),
            encode(&self.user),
            self.fingerprint
        )
    }

    /// The unit to submit.
    pub fn to_unit(&self) -> Unit {
        Unit {
            kind: UNIT_KIND.into(),
            id: self.id(),
            payload: serde_json::to_vec(self).unwrap_or_default(),
        }
    }

    /// Reads a unit's payload.
    pub fn from_payload(payload: &[u8]) -> Result<Self, BadPayload> {
        Ok(serde_json::from_slice(payload)?)
    }
}

fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_graphic() && b != b'%' {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Why a worker did not finish a unit (retried, then a dead letter).
#[derive(Debug, thiserror::Error)]
enum UnitError {
    #[error(transparent)]
    Payload(#[from] BadPayload),
    #[error("tenant {0:?} is not in this process's key file")]
    UnknownTenant(String),
    #[error("the service stopped while the unit ran (it goes back to the queue)")]
    Stopped,
    #[error("making the summary of user {user:?} (tenant {tenant:?})")]
    Service {
        tenant: String,
        user: String,
        source: Box<crate::Error>,
    },
}

/// What a service holds of its queue: the connection (submissions, the depth gauge) and the
/// worker thread's stop signal (dropped with the service).
pub(crate) struct QueueHandle {
    pub(crate) queue: WorkQueue,
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl std::fmt::Debug for QueueHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QueueHandle")
            .field("urls", &self.queue.urls())
            .field("stream", &self.queue.config().stream)
            .finish()
    }
}

/// The summarizer's side of the queue: submits units.
pub(crate) struct Submitter {
    queue: WorkQueue,
}

impl QueueHandle {
    /// The executor submitting to this queue.
    pub(crate) fn submitter(&self) -> Submitter {
        Submitter {
            queue: self.queue.clone(),
        }
    }
}

impl Submitter {
    /// Submits the unit of `user`'s current documents unless their summary is already current;
    /// `Some(wait)` when the user must be looked at again (the submission failed, or the queue
    /// already held that unit: once its dedup id is forgotten, in case its summary was
    /// replaced since).
    pub(crate) async fn submit(&self, inner: &Inner, tenant: &str, user: &str) -> Option<Duration> {
        let t = inner.tenants.get(tenant)?;
        let unit = {
            let snap = t.index.snapshot();
            let docs = snap.user_documents(user);
            if docs.is_empty() {
                return None;
            }
            let fp = fingerprint(docs);
            if t.summary(user).is_some_and(|s| s.fingerprint == fp) {
                return None;
            }
            SummaryUnit {
                tenant: tenant.to_string(),
                user: user.to_string(),
                fingerprint: fp,
            }
        };
        match self.queue.submit(&[unit.to_unit()]).await {
            Ok(r) if r.duplicates > 0 => {
                tracing::debug!(unit = %unit.id(), "summary unit already queued");
                Some(self.queue.config().dedup_window + Duration::from_secs(1))
            }
            Ok(_) => None,
            Err(e) => {
                tracing::warn!(unit = %unit.id(), error = %e, "summary unit not submitted; retrying");
                Some(SUBMIT_RETRY)
            }
        }
    }
}

/// Connects to the queue (creating its streams and consumer when missing) on a thread of its
/// own, which then runs a worker when `work` (the process has a model) until the service is
/// dropped. Answers the handle and the function that hands the thread the started service.
pub(crate) fn connect(
    q: &SummaryQueue,
    opts: SummaryOptions,
    work: bool,
) -> crate::Result<(QueueHandle, impl FnOnce(Weak<Inner>) + use<>)> {
    let (ready_tx, ready_rx) = std::sync::mpsc::channel::<crate::Result<WorkQueue>>();
    let (inner_tx, inner_rx) = tokio::sync::oneshot::channel::<Weak<Inner>>();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let (urls, config) = (q.urls.clone(), q.config.clone());
    let name = worker_name();
    std::thread::Builder::new()
        .name("pgraphrag-summary-queue".into())
        .spawn(move || {
            let rt = match tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
            {
                Ok(rt) => rt,
                Err(e) => {
                    let _ = ready_tx.send(Err(e.into()));
                    return;
                }
            };
            rt.block_on(async move {
                let queue = match open(&urls, config, &name).await {
                    Ok(q) => q,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e.into()));
                        return;
                    }
                };
                let _ = ready_tx.send(Ok(queue.clone()));
                // The client's connection lives on this runtime: keep it while the service
                // lives, working units when this process has a model.
                let Ok(inner) = inner_rx.await else { return };
                if work {
                    serve_units(&queue, inner, opts, &name, stop_rx).await;
                } else {
                    let _ = stop_rx.await;
                }
            });
            // A unit in progress on a blocking thread is left to finish; it stores nothing
            // once the service is gone, and the queue redelivers it.
            rt.shutdown_background();
        })?;
    let queue = ready_rx.recv().map_err(|_| {
        queue::Error::Config("the summary queue's thread stopped while connecting".into())
    })??;
    let handle = QueueHandle {
        queue,
        _stop: stop_tx,
    };
    let start = move |inner: Weak<Inner>| {
        let _ = inner_tx.send(inner);
    };
    Ok((handle, start))
}

async fn open(urls: &str, config: QueueConfig, name: &str) -> queue::Result<WorkQueue> {
    let queue = WorkQueue::connect(urls, config, name).await?;
    queue.ensure().await?;
    Ok(queue)
}

/// A name unique to this worker (in dead letters and the server's client list).
fn worker_name() -> String {
    static COUNT: AtomicU64 = AtomicU64::new(0);
    format!(
        "pgraphrag-serve-{}-{}",
        std::process::id(),
        COUNT.fetch_add(1, Ordering::Relaxed)
    )
}

/// Runs the worker until `stop` (the service dropped), starting it again after losing the
/// queue for longer than it waits.
async fn serve_units(
    queue: &WorkQueue,
    inner: Weak<Inner>,
    opts: SummaryOptions,
    name: &str,
    mut stop: tokio::sync::oneshot::Receiver<()>,
) {
    let wopts = WorkerOptions {
        name: name.to_string(),
        ..Default::default()
    };
    let mut log = log_event;
    loop {
        let handler = UnitHandler {
            inner: inner.clone(),
            opts: opts.clone(),
        };
        tokio::select! {
            r = run_worker(queue, handler, &wopts, &mut log) => {
                // No upgrade here: the last owner dropping the service on an async thread
                // would drop its store's blocking client there.
                if inner.strong_count() == 0 {
                    return;
                }
                if let Err(e) = r {
                    tracing::warn!(error = %e, "summary worker stopped; starting it again");
                }
            }
            _ = &mut stop => return,
        }
        tokio::select! {
            _ = tokio::time::sleep(WORKER_RESTART) => {}
            _ = &mut stop => return,
        }
    }
}

fn log_event(e: &Event) {
    match e {
        Event::Done { id, outcome, .. } => tracing::debug!(unit = %id, ?outcome, "summary unit"),
        Event::Failed {
            id,
            error,
            delivered,
            dead,
        } => tracing::warn!(unit = %id, error, delivered, dead, "summary unit failed"),
        Event::Retrying { error } => tracing::warn!(error, "summary queue unreachable; retrying"),
    }
}

/// Whether a unit is settled by what the store holds: its summary is stored, or the documents
/// are no longer the unit's (erased, or changed: a newer unit exists).
fn settled(data: &UserData, fp: u64) -> Option<&'static str> {
    if data.summary.as_ref().is_some_and(|s| s.fingerprint == fp) {
        Some("its summary is stored")
    } else if data.documents.is_empty() || fingerprint_of(&data.documents) != fp {
        Some("the documents changed since")
    } else {
        None
    }
}

/// The worker's handler: one unit at a time, on a blocking thread.
struct UnitHandler {
    inner: Weak<Inner>,
    opts: SummaryOptions,
}

impl queue::Handler for UnitHandler {
    fn handle(&mut self, d: &Delivery) -> Result<Outcome, Failure> {
        match self.run(d) {
            Ok(outcome) => Ok(outcome),
            Err(UnitError::Stopped) => Err(Failure::Fatal(Box::new(UnitError::Stopped))),
            Err(e) => Err(Failure::Retry(Box::new(e))),
        }
    }
}

impl UnitHandler {
    fn run(&mut self, d: &Delivery) -> Result<Outcome, UnitError> {
        let u = SummaryUnit::from_payload(&d.payload)?;
        let (tenant, user, fp) = (u.tenant.as_str(), u.user.as_str(), u.fingerprint);
        let failed = |source| UnitError::Service {
            tenant: tenant.to_string(),
            user: user.to_string(),
            source: Box::new(source),
        };
        let done = |why: &str| {
            tracing::debug!(unit = %d.id, why, "summary unit done without work");
            Ok(Outcome::AlreadyDone)
        };
        // The prompt, from this process's index or, when it is behind (or on a redelivery,
        // whose summary may be stored already), from the store. No hold on the service while
        // the model runs: a service dropped meanwhile stores nothing.
        let (backend, prompt) = {
            let inner = self.inner.upgrade().ok_or(UnitError::Stopped)?;
            let backend = inner.opts.backend.clone().ok_or(UnitError::Stopped)?;
            let t = inner
                .tenants
                .get(tenant)
                .ok_or_else(|| UnitError::UnknownTenant(tenant.to_string()))?;
            if t.summary(user).is_some_and(|s| s.fingerprint == fp) {
                return done("its summary is here");
            }
            let snap = t.index.snapshot();
            let docs = snap.user_documents(user);
            let prompt = if d.delivered == 1 && !docs.is_empty() && fingerprint(docs) == fp {
                super::request(docs, user, &self.opts).map_err(failed)?
            } else {
                drop(snap);
                let data = inner.store.user_data(tenant, user).map_err(failed)?;
                if let Some(why) = settled(&data, fp) {
                    return done(why);
                }
                super::request(&data.documents, user, &self.opts).map_err(failed)?
            };
            (backend, prompt)
        };
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| failed(e.into()))?;
        let text = rt
            .block_on(super::complete(&backend, prompt, &self.opts))
            .map_err(failed)?;
        let inner = self.inner.upgrade().ok_or(UnitError::Stopped)?;
        // Stored only while the documents are still those (another process may have written
        // since the prompt was read): the store answers, not this process's index.
        let data = inner.store.user_data(tenant, user).map_err(failed)?;
        if let Some(why) = settled(&data, fp) {
            return done(why);
        }
        let t = inner
            .tenants
            .get(tenant)
            .ok_or_else(|| UnitError::UnknownTenant(tenant.to_string()))?;
        let _order = t.write_order();
        inner
            .store
            .apply(
                tenant,
                &Write::Summary(StoredSummary {
                    user: user.to_string(),
                    text: text.clone(),
                    fingerprint: fp,
                }),
            )
            .map_err(failed)?;
        // Its own change is not followed: published here when this index holds those
        // documents (otherwise the follower takes it with them).
        publish(t, user, text, fp, None);
        Ok(Outcome::Stored)
    }
}
