//! Task summaries as the summary-augmented LaMP paper (Richardson et al.) makes them, kept
//! current in the background: when a user's documents change, the user is marked dirty;
//! after [`SummaryOptions::debounce`] without further changes the summary is recomputed with
//! the generation backend (the paper's Table 2 prompt for the task, over the user's entries
//! rendered as `pgraphrag-stages` renders LaMP profiles, most recent first), stored durably
//! and published. `POST /v1/context` answers the last summary with the generation it
//! reflects and never waits for the LLM.
//!
//! A summary is stored with a [`fingerprint`] of the documents it was made from: at start a
//! stored summary whose documents have changed since (a crash between the write and the
//! summary) is not served, and is recomputed.
//!
//! Where the work runs is the summarizer's executor: in this process (the default), or, with
//! the feature `jetstream` and [`crate::ServiceOptions::summary_queue`], on a JetStream work
//! queue shared by every process of a service on one PostgreSQL store (`SummaryQueue`: the
//! process that took the write submits a unit after the debounce; any process's worker makes
//! and stores the summary, and the change log brings it to the others).

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, RwLock, Weak, mpsc};
use std::time::{Duration, Instant};

use pgraphrag_core::{GenParams, LampProfileItem, LampTask, Message, Prompt, Role};
use pgraphrag_retrieval::live::{Document, StoredDoc};
use pgraphrag_stages::SummaryPrompt;
use sha2::{Digest, Sha256};

use crate::chat::Backend;
use crate::service::{Inner, Tenant};
use crate::store::{StoredSummary, Write};

#[cfg(feature = "jetstream")]
pub(crate) mod queue;
#[cfg(feature = "jetstream")]
pub(crate) use queue::QueueHandle;
#[cfg(feature = "jetstream")]
#[cfg_attr(docsrs, doc(cfg(feature = "jetstream")))]
pub use queue::{BadPayload, SummaryQueue, SummaryUnit, UNIT_KIND};

/// How the service summarises users (see the module docs).
#[derive(Debug, Clone)]
pub struct SummaryOptions {
    /// The LaMP task whose Table 2 prompt and entry format are used (default LaMP-3, the
    /// product-review task: `Score: …` / `Review: …` entries).
    pub task: LampTask,
    /// Quiet time after a user's last change before the summary is recomputed (default 2 s).
    pub debounce: Duration,
    /// The summary's token limit (default 128).
    pub max_tokens: usize,
    /// The most characters of rendered entries the prompt takes, most recent first
    /// (default 6,000: about 1,500 tokens).
    pub max_input_chars: usize,
}

impl Default for SummaryOptions {
    fn default() -> Self {
        SummaryOptions {
            task: LampTask::Lamp3,
            debounce: Duration::from_secs(2),
            max_tokens: 128,
            max_input_chars: 6000,
        }
    }
}

/// A user's current summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserSummary {
    /// The text.
    pub text: String,
    /// The index generation whose documents it summarises.
    pub as_of_generation: u64,
    /// [`fingerprint`] of those documents.
    pub fingerprint: u64,
}

/// A tenant's summaries by user.
pub(crate) type Summaries = RwLock<HashMap<String, UserSummary>>;

/// The fields of a document that a summary reads, whether the document comes from an index
/// snapshot or from the store.
pub(crate) trait Fields {
    fn id(&self) -> &str;
    fn item(&self) -> Option<&str>;
    fn title(&self) -> Option<&str>;
    fn text(&self) -> &str;
    fn rating(&self) -> Option<f64>;
    fn time(&self) -> Option<i64>;
}

impl Fields for Arc<StoredDoc> {
    fn id(&self) -> &str {
        StoredDoc::id(self)
    }
    fn item(&self) -> Option<&str> {
        StoredDoc::item(self)
    }
    fn title(&self) -> Option<&str> {
        StoredDoc::title(self)
    }
    fn text(&self) -> &str {
        StoredDoc::text(self)
    }
    fn rating(&self) -> Option<f64> {
        StoredDoc::rating(self)
    }
    fn time(&self) -> Option<i64> {
        StoredDoc::time(self)
    }
}

impl Fields for Document {
    fn id(&self) -> &str {
        &self.id
    }
    fn item(&self) -> Option<&str> {
        self.item.as_deref()
    }
    fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }
    fn text(&self) -> &str {
        &self.text
    }
    fn rating(&self) -> Option<f64> {
        self.rating
    }
    fn time(&self) -> Option<i64> {
        self.time
    }
}

/// A stable 64-bit fingerprint of a user's documents (ids and every field the summary
/// reads), independent of their order: SHA-256 over the sorted records.
///
/// ```
/// use pgraphrag_retrieval::live::{Document, ProfileIndex};
/// let index = ProfileIndex::new(Default::default()).unwrap();
/// index.upsert(Document { user: "u".into(), id: "1".into(), text: "Good.".into(), ..Default::default() }).unwrap();
/// let a = pgraphrag_serve::summaries::fingerprint(index.snapshot().user_documents("u"));
/// index.upsert(Document { user: "u".into(), id: "1".into(), text: "Bad.".into(), ..Default::default() }).unwrap();
/// assert_ne!(a, pgraphrag_serve::summaries::fingerprint(index.snapshot().user_documents("u")));
/// ```
pub fn fingerprint(docs: &[Arc<StoredDoc>]) -> u64 {
    fingerprint_of(docs)
}

/// [`fingerprint`] of documents as the store holds them (the same value for the same
/// documents).
pub(crate) fn fingerprint_of<D: Fields>(docs: &[D]) -> u64 {
    let mut records: Vec<String> = docs
        .iter()
        .map(|d| {
            format!(
                "{}\u{0}{}\u{0}{}\u{0}{}\u{0}{:?}\u{0}{:?}",
                d.id(),
                d.item().unwrap_or(""),
                d.title().unwrap_or(""),
                d.text(),
                d.rating(),
                d.time()
            )
        })
        .collect();
    records.sort();
    let mut h = Sha256::new();
    for r in &records {
        h.update(r.as_bytes());
        h.update([1u8]);
    }
    let d = h.finalize();
    u64::from_le_bytes(d[..8].try_into().expect("8 bytes"))
}

/// The user message that asks for a summary of `docs` for `task`: the Table 2 instruction,
/// then the entries most recent first, cut to `max_chars` of entries (at least one entry).
///
/// ```
/// use pgraphrag_retrieval::live::{Document, ProfileIndex};
/// let index = ProfileIndex::new(Default::default()).unwrap();
/// index.upsert(Document { user: "u".into(), id: "1".into(), text: "Sturdy pan.".into(), rating: Some(5.0), ..Default::default() }).unwrap();
/// let m = pgraphrag_serve::summaries::message(pgraphrag_core::LampTask::Lamp3, index.snapshot().user_documents("u"), 6000).unwrap();
/// assert!(m.starts_with("Based on this user's past reviews"));
/// assert!(m.ends_with("Score: 5\nReview: Sturdy pan."));
/// ```
pub fn message(
    task: LampTask,
    docs: &[Arc<StoredDoc>],
    max_chars: usize,
) -> Result<String, pgraphrag_stages::Error> {
    let rendered = pgraphrag_stages::render_profile(task, &profile_items(docs))?;
    Ok(compose(task, &rendered, max_chars))
}

/// The profile items of `docs` (from an index snapshot or from the store).
fn profile_items<D: Fields>(docs: &[D]) -> Vec<LampProfileItem> {
    docs.iter().map(profile_item).collect()
}

/// [`message`] from the rendered entries, most recent first.
fn compose(task: LampTask, rendered: &[String], max_chars: usize) -> String {
    let mut kept: Vec<&str> = Vec::new();
    let mut used = 0;
    for r in rendered {
        if !kept.is_empty() && used + r.len() > max_chars {
            break;
        }
        used += r.len();
        kept.push(r);
    }
    let prompt = SummaryPrompt::table2(task).expect("every LaMP task has a Table 2 prompt");
    prompt.message(&kept)
}

/// A document as a LaMP profile item: `text`, `title` (also as `headline`, `subject`),
/// `score` (the rating, an integer when it is one), and the day it was written.
fn profile_item<D: Fields>(d: &D) -> LampProfileItem {
    let mut it = LampProfileItem::new(d.id()).with("text", d.text());
    if let Some(t) = d.title() {
        it = it.with("title", t);
    }
    if let Some(r) = d.rating() {
        let score = if r.fract() == 0.0 {
            format!("{}", r as i64)
        } else {
            format!("{r}")
        };
        it = it.with("score", score);
    }
    if let Some(day) = d
        .time()
        .and_then(|t| time::OffsetDateTime::from_unix_timestamp(t).ok())
        .map(|t| t.date().to_string())
    {
        it = it.dated(day);
    }
    it
}

/// Where the summarizer sends a user whose debounce ended.
pub(crate) enum SummaryExecutor {
    /// Makes the summary in this process, on the summarizer's thread.
    Local,
    /// Submits a unit to the shared JetStream work queue (feature `jetstream`): any process's
    /// worker makes it.
    #[cfg(feature = "jetstream")]
    Queue(Box<queue::Submitter>),
}

impl SummaryExecutor {
    /// Runs or submits `tenant`'s `user`; `Some(wait)` when the user must be looked at again
    /// after `wait` (a submission that failed, or one the queue already held).
    fn run(
        &self,
        rt: &tokio::runtime::Runtime,
        inner: &Inner,
        tenant: &str,
        user: &str,
        opts: &SummaryOptions,
    ) -> Option<Duration> {
        match self {
            SummaryExecutor::Local => {
                if let Err(e) = rt.block_on(summarize(inner, tenant, user, opts)) {
                    tracing::warn!(tenant, user, error = %e, "summary not updated");
                }
                None
            }
            #[cfg(feature = "jetstream")]
            SummaryExecutor::Queue(q) => rt.block_on(q.submit(inner, tenant, user)),
        }
    }
}

/// The background summarizer's handle: marks users dirty.
#[derive(Debug)]
pub(crate) struct Summarizer {
    tx: std::sync::Mutex<mpsc::Sender<(String, String)>>,
    /// Users waiting for (or in) a recomputation or a submission.
    pub(crate) depth: Arc<AtomicUsize>,
}

impl Summarizer {
    /// Marks `tenant`'s `user` dirty.
    pub(crate) fn dirty(&self, tenant: &str, user: &str) {
        if let Ok(tx) = self.tx.lock() {
            let _ = tx.send((tenant.to_string(), user.to_string()));
        }
    }
}

/// Starts the summarizer thread for `inner`; it ends when the service is dropped.
pub(crate) fn start(
    opts: SummaryOptions,
    executor: SummaryExecutor,
) -> (Summarizer, impl FnOnce(Weak<Inner>)) {
    let (tx, rx) = mpsc::channel::<(String, String)>();
    let depth = Arc::new(AtomicUsize::new(0));
    let summarizer = Summarizer {
        tx: std::sync::Mutex::new(tx),
        depth: Arc::clone(&depth),
    };
    let run = move |inner: Weak<Inner>| {
        let spawned = std::thread::Builder::new()
            .name("pgraphrag-summaries".into())
            .spawn(move || debounce(inner, rx, opts, executor, depth));
        if let Err(e) = spawned {
            tracing::error!(error = %e, "cannot start the summarizer thread; no summaries");
        }
    };
    (summarizer, run)
}

/// The summarizer's loop: collects dirty users, and hands each to the executor once it has
/// been quiet for the debounce.
fn debounce(
    inner: Weak<Inner>,
    rx: mpsc::Receiver<(String, String)>,
    opts: SummaryOptions,
    executor: SummaryExecutor,
    depth: Arc<AtomicUsize>,
) {
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            tracing::error!(error = %e, "cannot start the summarizer's runtime; no summaries");
            return;
        }
    };
    let mut due: HashMap<(String, String), Instant> = HashMap::new();
    loop {
        let next = due.values().min().copied();
        let msg = match next {
            None => rx.recv().map_err(|_| mpsc::RecvTimeoutError::Disconnected),
            Some(t) => rx.recv_timeout(t.saturating_duration_since(Instant::now())),
        };
        match msg {
            Ok(key) => {
                if due.insert(key, Instant::now() + opts.debounce).is_none() {
                    depth.fetch_add(1, Ordering::Relaxed);
                }
                continue;
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => return,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        let now = Instant::now();
        let ready: Vec<(String, String)> = due
            .iter()
            .filter(|(_, t)| **t <= now)
            .map(|(k, _)| k.clone())
            .collect();
        for key in ready {
            due.remove(&key);
            let Some(inner) = inner.upgrade() else { return };
            let again = executor.run(&rt, &inner, &key.0, &key.1, &opts);
            drop(inner);
            match again {
                // Still counted: it waits again.
                Some(wait) => {
                    due.insert(key, Instant::now() + wait);
                }
                None => {
                    depth.fetch_sub(1, Ordering::Relaxed);
                }
            }
        }
    }
}

/// The chat prompt asking for a summary of `docs` (of `user`, for errors).
pub(crate) fn request<D: Fields>(
    docs: &[D],
    user: &str,
    opts: &SummaryOptions,
) -> crate::Result<Prompt> {
    let rendered = pgraphrag_stages::render_profile(opts.task, &profile_items(docs))
        .map_err(|e| crate::Error::BadRequest(format!("summarising user {user:?}: {e}")))?;
    let text = compose(opts.task, &rendered, opts.max_input_chars);
    Ok(Prompt::Chat(vec![Message {
        role: Role::User,
        content: text,
    }]))
}

/// The backend's summary for `prompt`, trimmed.
pub(crate) async fn complete(
    backend: &Backend,
    prompt: Prompt,
    opts: &SummaryOptions,
) -> crate::Result<String> {
    let params = GenParams {
        max_tokens: opts.max_tokens,
        ..Default::default()
    };
    let reply = backend
        .complete(prompt, params)
        .await
        .map_err(|e| crate::Error::Backend(e.to_string()))?;
    Ok(reply.text.trim().to_string())
}

/// Publishes `text` as `user`'s summary in `tenant`'s memory when it summarises the documents
/// the index holds now (the caller holds the tenant's write order and has stored it), as of
/// `generation` (default: the index's now). Answers whether it did.
pub(crate) fn publish(
    tenant: &Tenant,
    user: &str,
    text: String,
    fingerprint: u64,
    generation: Option<u64>,
) -> bool {
    let snap = tenant.index.snapshot();
    if fingerprint_of(snap.user_documents(user)) != fingerprint {
        return false;
    }
    tenant
        .summaries
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .insert(
            user.to_string(),
            UserSummary {
                text,
                as_of_generation: generation.unwrap_or(snap.generation()),
                fingerprint,
            },
        );
    true
}

/// Recomputes one user's summary in this process; stores and publishes it if the user's
/// documents are still the ones it summarises.
async fn summarize(
    inner: &Inner,
    tenant: &str,
    user: &str,
    opts: &SummaryOptions,
) -> crate::Result<()> {
    let Some(t) = inner.tenants.get(tenant) else {
        return Ok(());
    };
    let Some(backend) = inner.opts.backend.clone() else {
        return Ok(());
    };
    let prompt = {
        let snap = t.index.snapshot();
        let docs = snap.user_documents(user);
        if docs.is_empty() {
            return Ok(());
        }
        let fp = fingerprint(docs);
        if t.summary(user).is_some_and(|s| s.fingerprint == fp) {
            return Ok(());
        }
        (request(docs, user, opts)?, fp, snap.generation())
    };
    let (prompt, fp, generation) = prompt;
    let summary = complete(&backend, prompt, opts).await?;
    // Under the tenant's write order: only if the documents are still the summarised ones
    // (a user erased meanwhile gets no summary back; a changed one is already queued again).
    let _order = t.write_order();
    if fingerprint(t.index.snapshot().user_documents(user)) != fp {
        return Ok(());
    }
    inner.store.apply(
        tenant,
        &Write::Summary(StoredSummary {
            user: user.to_string(),
            text: summary.clone(),
            fingerprint: fp,
        }),
    )?;
    publish(t, user, summary, fp, Some(generation));
    Ok(())
}
