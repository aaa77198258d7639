//! Background task summaries: made after a user's documents change (debounced), returned by
//! `context` with the generation they reflect (never waited for), remade after a change,
//! erased with the user, durable across a restart, and not served when stale at start.

use std::sync::Arc;
use std::time::{Duration, Instant};

use pgraphrag_serve::{Backend, ServiceOptions, SummaryOptions, store::Store};
use serde_json::{Value, json};

mod support;
use support::*;

fn opts() -> ServiceOptions {
    ServiceOptions {
        backend: Some(Backend::new(Arc::new(Counting))),
        summaries: Some(SummaryOptions {
            debounce: Duration::from_millis(50),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn context_of(s: &Server, user: &str) -> Value {
    let (st, v) = ctx(
        s,
        ACME,
        json!({"user": user, "query": "soap", "scope": "user", "k": 4}),
    );
    assert_eq!(st, 200, "{v}");
    v
}

/// Polls `context` (bounded: 10 s) until the summary says `text`; the answer.
fn wait_for_summary(s: &Server, user: &str, text: &str) -> Value {
    let t = Instant::now();
    loop {
        let v = context_of(s, user);
        if v["summary"]["text"] == text {
            return v;
        }
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "no summary {text:?} after 10 s: {v}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn review(s: &Server, user: &str, doc: &str, text: &str) -> u64 {
    let (st, v) = put(
        s,
        ACME,
        user,
        doc,
        json!({"text": text, "item": "soap", "rating": 4}),
    );
    assert_eq!(st, 200, "{v}");
    v["generation"].as_u64().unwrap()
}

#[test]
fn summaries_follow_the_users_documents() {
    let dir = tempfile::tempdir().unwrap();
    {
        let s = start(Store::open(dir.path()).unwrap(), opts());
        // Context never waits for a summary: the first answer has none yet.
        review(&s, "ann", "1", "Lavender soap, lasts long");
        let g = review(&s, "ann", "2", "Dry skin after a week");
        let v = wait_for_summary(&s, "ann", "2 reviews");
        assert_eq!(v["summary"]["as_of_generation"], g, "{v}");
        // A change makes it again, reflecting the new generation.
        let g = review(&s, "ann", "3", "Fine for the price");
        let v = wait_for_summary(&s, "ann", "3 reviews");
        assert_eq!(v["summary"]["as_of_generation"], g, "{v}");
        // A deleted document too.
        let (st, v) = call(&s, "DELETE", "/v1/users/ann/documents/1", ACME, None);
        assert_eq!(st, 200, "{v}");
        wait_for_summary(&s, "ann", "2 reviews");
        // Another user's summary is theirs alone.
        review(&s, "bob", "1", "Nice box");
        wait_for_summary(&s, "bob", "1 reviews");
        // Metrics show the queue.
        let (st, m) = call(&s, "GET", "/metrics", "", None);
        assert_eq!(st, 200);
        assert!(m.as_str().unwrap().contains("pgraphrag_queue_depth"), "{m}");
    }
    // Durable: a restarted service serves the stored summaries at once.
    {
        let s = start(Store::open(dir.path()).unwrap(), opts());
        let v = context_of(&s, "ann");
        assert_eq!(v["summary"]["text"], "2 reviews", "{v}");
        // Erasing the user erases the summary, and it does not come back.
        let (st, r) = call(&s, "DELETE", "/v1/users/ann", ACME, None);
        assert_eq!(st, 200, "{r}");
        assert_eq!(r["summaries"], 1, "{r}");
        std::thread::sleep(Duration::from_millis(300));
        let (st, v) = ctx(
            &s,
            ACME,
            json!({"user": "ann", "query": "soap", "scope": "user", "k": 4}),
        );
        assert_eq!(st, 404, "{v}");
    }
    // Nothing of ann is left in the store; bob's summary is.
    let s = start(Store::open(dir.path()).unwrap(), opts());
    assert_eq!(context_of(&s, "bob")["summary"]["text"], "1 reviews");
}

#[test]
fn a_stale_or_missing_summary_is_made_at_start() {
    let dir = tempfile::tempdir().unwrap();
    {
        let s = start(Store::open(dir.path()).unwrap(), opts());
        review(&s, "ann", "1", "Lavender soap, lasts long");
        wait_for_summary(&s, "ann", "1 reviews");
    }
    // Written while no summarizer runs (as if the process died before the summary was made).
    {
        let no_summaries = ServiceOptions {
            summaries: None,
            ..opts()
        };
        let s = start(Store::open(dir.path()).unwrap(), no_summaries);
        review(&s, "ann", "2", "Dry skin after a week");
        assert_eq!(context_of(&s, "ann")["summary"]["text"], "1 reviews");
        // A user who never had a summary.
        review(&s, "bob", "1", "Nice box");
    }
    let s = start(Store::open(dir.path()).unwrap(), opts());
    let v = context_of(&s, "ann");
    assert!(
        v["summary"].is_null() || v["summary"]["text"] == "2 reviews",
        "{v}"
    );
    wait_for_summary(&s, "ann", "2 reviews");
    wait_for_summary(&s, "bob", "1 reviews");
}

#[test]
fn without_a_backend_there_are_no_summaries_and_context_works() {
    let s = start(Store::in_memory().unwrap(), ServiceOptions::default());
    review(&s, "ann", "1", "Lavender soap, lasts long");
    std::thread::sleep(Duration::from_millis(100));
    let v = context_of(&s, "ann");
    assert!(v.get("summary").is_none(), "{v}");
    assert_eq!(v["entries"].as_array().unwrap().len(), 1, "{v}");
}
