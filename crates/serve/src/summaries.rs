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

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, RwLock, Weak, mpsc};
use std::time::{Duration, Instant};

use pgraphrag_core::{GenParams, LampProfileItem, LampTask, Message, Prompt, Role};
use pgraphrag_retrieval::live::StoredDoc;
use pgraphrag_stages::SummaryPrompt;
use sha2::{Digest, Sha256};

use crate::service::Inner;
use crate::store::{StoredSummary, Write};

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
    let items: Vec<LampProfileItem> = docs.iter().map(|d| item(d)).collect();
    let rendered = pgraphrag_stages::render_profile(task, &items)?;
    let mut kept: Vec<&str> = Vec::new();
    let mut used = 0;
    for r in &rendered {
        if !kept.is_empty() && used + r.len() > max_chars {
            break;
        }
        used += r.len();
        kept.push(r);
    }
    let prompt = SummaryPrompt::table2(task).expect("every LaMP task has a Table 2 prompt");
    Ok(prompt.message(&kept))
}

/// A document as a LaMP profile item: `text`, `title` (also as `headline`, `subject`),
/// `score` (the rating, an integer when it is one), and the day it was written.
fn item(d: &StoredDoc) -> LampProfileItem {
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

/// The background summarizer's handle: marks users dirty.
#[derive(Debug)]
pub(crate) struct Queue {
    tx: std::sync::Mutex<mpsc::Sender<(String, String)>>,
    /// Users waiting for (or in) a recomputation.
    pub(crate) depth: Arc<AtomicUsize>,
}

impl Queue {
    /// Marks `tenant`'s `user` dirty.
    pub(crate) fn dirty(&self, tenant: &str, user: &str) {
        if let Ok(tx) = self.tx.lock() {
            let _ = tx.send((tenant.to_string(), user.to_string()));
        }
    }
}

/// Starts the summarizer thread for `inner`; it ends when the service is dropped.
pub(crate) fn start(opts: SummaryOptions) -> (Queue, impl FnOnce(Weak<Inner>)) {
    let (tx, rx) = mpsc::channel::<(String, String)>();
    let depth = Arc::new(AtomicUsize::new(0));
    let queue = Queue {
        tx: std::sync::Mutex::new(tx),
        depth: Arc::clone(&depth),
    };
    let run = move |inner: Weak<Inner>| {
        let spawned = std::thread::Builder::new()
            .name("pgraphrag-summaries".into())
            .spawn(move || worker(inner, rx, opts, depth));
        if let Err(e) = spawned {
            tracing::error!(error = %e, "cannot start the summarizer thread; no summaries");
        }
    };
    (queue, run)
}

fn worker(
    inner: Weak<Inner>,
    rx: mpsc::Receiver<(String, String)>,
    opts: SummaryOptions,
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
            if let Err(e) = rt.block_on(summarize(&inner, &key.0, &key.1, &opts)) {
                tracing::warn!(tenant = %key.0, user = %key.1, error = %e, "summary not updated");
            }
            depth.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// Recomputes one user's summary; stores and publishes it if the user's documents are still
/// the ones it summarises.
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
    let snap = t.index.snapshot();
    let docs = snap.user_documents(user);
    if docs.is_empty() {
        return Ok(());
    }
    let fp = fingerprint(docs);
    if t.summary(user).is_some_and(|s| s.fingerprint == fp) {
        return Ok(());
    }
    let text = message(opts.task, docs, opts.max_input_chars)
        .map_err(|e| crate::Error::BadRequest(format!("summarising user {user:?}: {e}")))?;
    let generation = snap.generation();
    drop(snap);
    let prompt = Prompt::Chat(vec![Message {
        role: Role::User,
        content: text,
    }]);
    let params = GenParams {
        max_tokens: opts.max_tokens,
        ..Default::default()
    };
    let reply = backend
        .complete(prompt, params)
        .await
        .map_err(|e| crate::Error::Backend(e.to_string()))?;
    let summary = reply.text.trim().to_string();
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
    t.summaries
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .insert(
            user.to_string(),
            UserSummary {
                text: summary,
                as_of_generation: generation,
                fingerprint: fp,
            },
        );
    Ok(())
}
