//! Task summaries on a JetStream work queue (`ServiceOptions::summary_queue`): two services on
//! one PostgreSQL database (`$PGRAPHRAG_PG_URL`: `scripts/cluster.sh start && .
//! runs/cluster/env.sh`) and one JetStream node of their own (`scripts/cluster_nats.sh
//! install` puts the server in runs/cluster/venv). Without either the tests skip with a
//! message, except under `CI=true`, where they fail. The backend is a test double that records
//! which process made each summary and can be held (a gate) to keep a unit in progress.
//!
//! * writes on A: each distinct fingerprint is summarised exactly once, by either process,
//!   stored, and served by both processes' `context`;
//! * a unit whose documents changed before it ran, or whose summary is stored, calls no model;
//! * a worker whose index is behind reads the documents from the store (and a process without
//!   a model only submits);
//! * a process dropped while holding a unit: the unit is redelivered and made by the other;
//! * a store of one process (SQLite) refuses a queue.
#![cfg(all(feature = "postgres", feature = "jetstream"))]

mod pg_support;
#[path = "../../store/tests/queue_support/mod.rs"]
mod queue_support;

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use pg_support::*;
use pgraphrag_core::{GenParams, Prompt};
use pgraphrag_serve::postgres::PgOptions;
use pgraphrag_serve::store::DocumentStore;
use pgraphrag_serve::summaries::{SummaryUnit, UNIT_KIND, fingerprint};
use pgraphrag_serve::{Backend, ChatBackend, Completion, ServiceOptions, SummaryOptions};
use pgraphrag_serve::{SummaryQueue, postgres::PgDocuments};
use pgraphrag_store::queue::{QueueConfig, Unit, WorkQueue};

/// A backend call: which process made it, and the summary prompt.
#[derive(Debug, Clone)]
struct Call {
    process: String,
    prompt: String,
}

type Calls = Arc<Mutex<Vec<Call>>>;

/// Holds backend calls until opened (at most 10 s).
struct Gate {
    open: Mutex<bool>,
    cv: Condvar,
}

impl Gate {
    fn new(open: bool) -> Arc<Gate> {
        Arc::new(Gate {
            open: Mutex::new(open),
            cv: Condvar::new(),
        })
    }

    fn open(&self) {
        *self.open.lock().unwrap() = true;
        self.cv.notify_all();
    }

    fn pass(&self) {
        let open = self.open.lock().unwrap();
        let _ = self
            .cv
            .wait_timeout_while(open, Duration::from_secs(10), |o| !*o)
            .unwrap();
    }
}

/// The test double: records the call, waits at its process's gate, answers
/// `"<n> reviews by <process>"`.
struct Recorder {
    process: String,
    calls: Calls,
    gate: Arc<Gate>,
}

impl ChatBackend for Recorder {
    fn complete(
        &self,
        prompt: Prompt,
        _: GenParams,
    ) -> BoxFuture<'static, pgraphrag_core::Result<Completion>> {
        let prompt = prompt.messages()[0].content.clone();
        let text = format!(
            "{} reviews by {}",
            prompt.matches("Review: ").count(),
            self.process
        );
        self.calls.lock().unwrap().push(Call {
            process: self.process.clone(),
            prompt,
        });
        self.gate.pass();
        Box::pin(async move {
            Ok(Completion {
                text,
                finish_reason: None,
                prompt_tokens: None,
                completion_tokens: None,
            })
        })
    }

    fn model(&self) -> String {
        "recorder".into()
    }
}

/// A test's database schema, JetStream node and call log (dropped after its services).
struct Env {
    schema: Schema,
    calls: Calls,
    queue: SummaryQueue,
    _node: queue_support::Node,
}

impl Env {
    fn new(test: &str) -> Option<Env> {
        let url = url("PGRAPHRAG_PG_URL")?;
        let bin = queue_support::server_or_skip(test)?;
        let node = queue_support::Node::start(&bin);
        let queue = SummaryQueue {
            config: QueueConfig {
                ack_wait: Duration::from_secs(1),
                ..SummaryQueue::config_for(1)
            },
            ..SummaryQueue::new(&node.url)
        };
        Some(Env {
            // The process id: two runs of this file at once use schemas of their own.
            schema: Schema::new(&url, &format!("pgserve_js_{test}_{}", std::process::id())),
            calls: Calls::default(),
            queue,
            _node: node,
        })
    }

    /// A service on the test's database and queue; with a model (the recorder, held by `gate`)
    /// when `gate` is given.
    fn process(&self, name: &str, gate: Option<Arc<Gate>>, store: PgDocuments) -> Server {
        let backend = gate.map(|gate| {
            Backend::new(Arc::new(Recorder {
                process: name.into(),
                calls: Arc::clone(&self.calls),
                gate,
            }))
        });
        let opts = ServiceOptions {
            backend,
            summaries: Some(SummaryOptions {
                debounce: Duration::from_millis(250),
                ..Default::default()
            }),
            summary_queue: Some(self.queue.clone()),
            ..Default::default()
        };
        start_with(store, opts)
    }

    fn calls(&self) -> Vec<Call> {
        self.calls.lock().unwrap().clone()
    }

    /// The test's own connection to the queue, on `rt`.
    fn connect(&self, rt: &tokio::runtime::Runtime) -> WorkQueue {
        rt.block_on(WorkQueue::connect(
            &self.queue.urls,
            self.queue.config.clone(),
            "test",
        ))
        .unwrap()
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Polls `until` every 20 ms for at most `secs` seconds.
fn eventually(what: &str, secs: u64, mut until: impl FnMut() -> bool) {
    let t = Instant::now();
    while !until() {
        assert!(
            t.elapsed() < Duration::from_secs(secs),
            "{what}: not after {secs} s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `user`'s summary in `s`'s `context` answer.
fn summary(s: &Server, user: &str) -> Option<String> {
    let (_, v) = context(s, user, "soap");
    v["summary"]["text"].as_str().map(str::to_string)
}

/// Waits until both services answer the same summary of `user`, starting with `prefix`.
fn in_both(a: &Server, b: &Server, user: &str, prefix: &str) -> String {
    let mut text = String::new();
    eventually(
        &format!("{user}'s summary {prefix:?} in both"),
        8,
        || match (summary(a, user), summary(b, user)) {
            (Some(x), Some(y)) if x == y && x.starts_with(prefix) => {
                text = x;
                true
            }
            _ => false,
        },
    );
    text
}

fn write(s: &Server, user: &str, doc: &str, text: &str) {
    let (status, v) = put(s, user, doc, text, "soap");
    assert_eq!(status, 200, "{v}");
}

/// The fingerprint of `user`'s documents in `s`'s index.
fn fp(s: &Server, user: &str) -> u64 {
    let snap = s.service.tenant("acme").unwrap().index.snapshot();
    fingerprint(snap.user_documents(user))
}

fn calls_for<'a>(calls: &'a [Call], user: &str) -> Vec<&'a Call> {
    calls
        .iter()
        .filter(|c| c.prompt.contains(&format!("{user}'s")))
        .collect()
}

fn depth(s: &Server) -> f64 {
    let mut r = ureq::get(format!("{}/metrics", s.base)).call().unwrap();
    let text = r.body_mut().read_to_string().unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix("pgraphrag_queue_depth "))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no pgraphrag_queue_depth in {text}"))
}

#[test]
fn each_fingerprint_is_summarised_once_by_either_process_and_reaches_both() {
    let Some(env) = Env::new("once") else { return };
    let a = env.process("A", Some(Gate::new(true)), env.schema.open());
    let b = env.process("B", Some(Gate::new(true)), env.schema.open());
    write(&a, "ann", "1", "ann's lavender soap lasts long");
    in_both(&a, &b, "ann", "1 reviews by ");
    write(&a, "ann", "2", "ann's skin is dry after a week");
    in_both(&a, &b, "ann", "2 reviews by ");
    // A burst within the debounce: one summary, of the last state.
    write(&a, "bob", "1", "bob's soap");
    write(&a, "bob", "2", "bob's second soap");
    write(&a, "bob", "1", "bob's soap, replaced");
    in_both(&a, &b, "bob", "2 reviews by ");
    write(&a, "cara", "1", "cara's soap");
    in_both(&a, &b, "cara", "1 reviews by ");

    let calls = env.calls();
    let made: Vec<&str> = calls.iter().map(|c| c.process.as_str()).collect();
    eprintln!("summaries made by {made:?}");
    assert_eq!(calls_for(&calls, "ann").len(), 2, "{calls:#?}");
    assert_eq!(calls_for(&calls, "bob").len(), 1, "{calls:#?}");
    assert!(calls_for(&calls, "bob")[0].prompt.contains("replaced"));
    assert_eq!(calls_for(&calls, "cara").len(), 1, "{calls:#?}");
    assert_eq!(calls.len(), 4, "{calls:#?}");
    // Stored, with the fingerprint of the documents both indexes hold.
    let store = env.schema.open();
    for user in ["ann", "bob", "cara"] {
        let stored = store.user_data("acme", user).unwrap().summary.unwrap();
        assert_eq!(stored.fingerprint, fp(&a, user));
        assert_eq!(stored.fingerprint, fp(&b, user));
        assert_eq!(Some(stored.text), summary(&b, user));
    }
    // Nothing left in the shared queue: both processes' gauges read it.
    assert_eq!((depth(&a), depth(&b)), (0.0, 0.0));
}

#[test]
fn a_unit_whose_documents_changed_or_whose_summary_is_stored_calls_no_model() {
    let Some(env) = Env::new("stale") else { return };
    let a = env.process("A", Some(Gate::new(true)), env.schema.open());
    let b = env.process("B", Some(Gate::new(true)), env.schema.open());
    write(&a, "ann", "1", "ann's lavender soap lasts long");
    in_both(&a, &b, "ann", "1 reviews by ");
    let before = fp(&a, "ann");
    write(&a, "ann", "2", "ann's skin is dry after a week");
    let now = in_both(&a, &b, "ann", "2 reviews by ");
    assert_eq!(env.calls().len(), 2);
    // The units a submitter sent for those two states, delivered again (ids of their own: the
    // queue remembers the real ones).
    let rt = runtime();
    let q = env.connect(&rt);
    let unit = |fingerprint: u64, id: &str| Unit {
        kind: UNIT_KIND.into(),
        id: id.into(),
        payload: SummaryUnit {
            tenant: "acme".into(),
            user: "ann".into(),
            fingerprint,
        }
        .to_unit()
        .payload,
    };
    let units = [unit(before, "t-changed"), unit(fp(&a, "ann"), "t-stored")];
    assert_eq!(rt.block_on(q.submit(&units)).unwrap().published, 2);
    eventually("the two units done", 5, || {
        let s = rt.block_on(q.status()).unwrap();
        s.messages == 0 && s.in_flight == 0
    });
    assert!(rt.block_on(q.status()).unwrap().dead.is_empty());
    assert_eq!(env.calls().len(), 2, "{:#?}", env.calls());
    assert_eq!(summary(&a, "ann").as_deref(), Some(now.as_str()));
    assert_eq!(summary(&b, "ann").as_deref(), Some(now.as_str()));
}

#[test]
fn a_worker_whose_index_is_behind_reads_the_store() {
    let Some(env) = Env::new("behind") else {
        return;
    };
    // A takes the writes and has no model: it only submits. B's follower reads the log every
    // 30 s only, so its index does not have A's writes when its worker takes the units.
    let a = env.process("A", None, env.schema.open());
    let lagging = env.schema.open_with(PgOptions {
        listen: false,
        poll: Duration::from_secs(30),
        ..Default::default()
    });
    let b = env.process("B", Some(Gate::new(true)), lagging);
    write(&a, "ann", "1", "ann's lavender soap lasts long");
    write(&a, "ann", "2", "ann's skin is dry after a week");
    let mut text = None;
    eventually("ann's summary from B in A", 8, || {
        text = summary(&a, "ann");
        text.is_some()
    });
    assert_eq!(text.as_deref(), Some("2 reviews by B"));
    assert!(held(&b).is_empty(), "B's index was to be behind");
    let calls = env.calls();
    assert_eq!(calls.len(), 1, "{calls:#?}");
    assert!(calls[0].prompt.contains("dry after a week"), "{calls:#?}");
    let stored = env.schema.open().user_data("acme", "ann").unwrap();
    assert_eq!(stored.summary.unwrap().fingerprint, fp(&a, "ann"));
}

#[test]
fn a_unit_held_by_a_process_that_stops_is_made_by_the_other() {
    let Some(env) = Env::new("kill") else { return };
    let gates = [Gate::new(false), Gate::new(false)];
    let a = env.process("A", Some(Arc::clone(&gates[0])), env.schema.open());
    let b = env.process("B", Some(Arc::clone(&gates[1])), env.schema.open());
    let mut servers = [Some(a), Some(b)];
    let index = |p: &str| usize::from(p == "B");
    // The first unit holds one process's worker; the second goes to the other.
    write(servers[0].as_ref().unwrap(), "xena", "1", "xena's soap");
    eventually("xena's unit taken", 5, || env.calls().len() == 1);
    write(servers[0].as_ref().unwrap(), "yuri", "1", "yuri's soap");
    eventually("yuri's unit taken", 5, || env.calls().len() == 2);
    let calls = env.calls();
    let (first, second) = (calls[0].process.clone(), calls[1].process.clone());
    assert!(calls[1].prompt.contains("yuri's"), "{calls:#?}");
    assert_ne!(first, second, "one worker runs one unit at a time");
    // The process holding yuri's unit stops (its model still running); the other finishes
    // xena's, then gets yuri's again once the ack wait (1 s) passed.
    drop(servers[index(&second)].take());
    gates[index(&first)].open();
    let survivor = servers[index(&first)].take().unwrap();
    let t = Instant::now();
    let made = format!("1 reviews by {first}");
    eventually("yuri's summary by the survivor", 8, || {
        summary(&survivor, "yuri").as_deref() == Some(made.as_str())
    });
    eprintln!(
        "{second} stopped holding yuri's unit; {first} made it {:.1} s later",
        t.elapsed().as_secs_f64()
    );
    assert_eq!(summary(&survivor, "xena").as_deref(), Some(made.as_str()));
    // The stopped process's model call returns now: it stores nothing.
    gates[index(&second)].open();
    std::thread::sleep(Duration::from_millis(300));
    let store = env.schema.open();
    let stored = store.user_data("acme", "yuri").unwrap().summary.unwrap();
    assert_eq!(stored.text, made);
    let yuri: Vec<String> = calls_for(&env.calls(), "yuri")
        .iter()
        .map(|c| c.process.clone())
        .collect();
    assert_eq!(yuri, [second, first]);
    assert_eq!(env.calls().len(), 3, "{:#?}", env.calls());
}

#[test]
fn a_store_of_one_process_refuses_a_queue() {
    let keys = pgraphrag_serve::Keys::parse(KEYS, "KEYS.toml").unwrap();
    let opts = ServiceOptions {
        summary_queue: Some(SummaryQueue::new("nats://127.0.0.1:1")),
        ..Default::default()
    };
    let store = pgraphrag_serve::store::Store::in_memory().unwrap();
    let e = pgraphrag_serve::Service::new(keys, store, opts).unwrap_err();
    assert!(matches!(e, pgraphrag_serve::Error::Queue(_)), "{e}");
    assert!(e.to_string().contains("shares"), "{e}");
}
