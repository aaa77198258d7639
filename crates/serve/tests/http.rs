//! The HTTP contract over loopback: writes visible at once and durable across a restart,
//! tenant isolation, bad input as JSON 4xx, chat completions (whole and streamed) with the
//! documents used, metrics, and parity with the batch ranker's clean recipe on a real split.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use pgraphrag_serve::{Backend, ServiceOptions, store::Store};
use serde_json::{Value, json};

mod support;
use support::*;

fn seed(s: &Server) {
    for (key, user, doc, item, text) in [
        (ACME, "ann", "1", "shampoo", "Lavender scent, soft hair"),
        (ACME, "bob", "1", "soap", "Lavender soap that lasts"),
        (ACME, "cat", "1", "soap", "Dry skin after a week"),
        (ACME, "dot", "1", "soap", "Fine for the price"),
        (ACME, "eli", "1", "soap", "Too small a bar"),
        (ACME, "fox", "1", "soap", "Nice box"),
        (BETA, "dan", "1", "soap", "Lavender lavender, best soap"),
        (BETA, "eve", "1", "soap", "Fine soap"),
    ] {
        let (st, v) = put(
            s,
            key,
            user,
            doc,
            json!({"text": text, "item": item, "rating": 4}),
        );
        assert_eq!(st, 200, "{v}");
    }
}

#[test]
fn writes_are_visible_at_once_and_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let first = {
        let s = start(Store::open(dir.path()).unwrap(), ServiceOptions::default());
        seed(&s);
        let q = json!({"user": "ann", "item": "soap", "query": "lavender", "scope": "both", "k": 2, "retriever": "bm25"});
        let (st, v) = ctx(&s, ACME, q.clone());
        assert_eq!(st, 200, "{v}");
        assert_eq!(docs(&v)[0], ("ann".into(), "1".into()));
        assert_eq!(docs(&v)[1], ("bob".into(), "1".into()));
        // An edit is answered by the very next read.
        let (st, w) = put(
            &s,
            ACME,
            "cat",
            "1",
            json!({"text": "lavender lavender lavender", "item": "soap"}),
        );
        assert_eq!(st, 200);
        let (_, v) = ctx(&s, ACME, q.clone());
        assert_eq!(v["generation"], w["generation"]);
        assert_eq!(docs(&v)[1], ("cat".into(), "1".into()));
        v
    };
    // A new server over the same folder answers the same.
    let s = start(Store::open(dir.path()).unwrap(), ServiceOptions::default());
    let q = json!({"user": "ann", "item": "soap", "query": "lavender", "scope": "both", "k": 2, "retriever": "bm25"});
    let (_, v) = ctx(&s, ACME, q);
    assert_eq!(v["entries"], first["entries"]);
}

#[test]
fn tenants_see_only_their_own_users() {
    let s = start(Store::in_memory().unwrap(), ServiceOptions::default());
    seed(&s);
    let q = json!({"user": "ann", "item": "soap", "query": "lavender", "scope": "both", "k": 4, "retriever": "bm25"});
    assert_eq!(ctx(&s, BETA, q.clone()).0, 404);
    assert_eq!(call(&s, "DELETE", "/v1/users/ann", BETA, None).0, 404);
    assert_eq!(
        call(&s, "DELETE", "/v1/users/ann/documents/1", BETA, None).0,
        404
    );
    // The neighbour scope stays inside the tenant.
    let (st, v) = ctx(&s, ACME, q);
    assert_eq!(st, 200);
    let acme = ["ann", "bob", "cat", "dot", "eli", "fox"];
    assert!(
        docs(&v).iter().all(|(u, _)| acme.contains(&u.as_str())),
        "{v}"
    );
    let q =
        json!({"user": "eve", "item": "soap", "query": "lavender", "scope": "neighbor", "k": 4});
    let (_, v) = ctx(&s, BETA, q);
    assert_eq!(docs(&v), [("dan".to_string(), "1".to_string())]);
    // Erasing a user answers a receipt, and the user is gone.
    let (st, r) = call(&s, "DELETE", "/v1/users/bob", ACME, None);
    assert_eq!((st, r["documents"].as_u64()), (200, Some(1)), "{r}");
    let q = json!({"user": "bob", "query": "x", "scope": "user", "k": 1});
    assert_eq!(ctx(&s, ACME, q).0, 404);
}

#[test]
fn bad_input_is_a_json_4xx_never_a_500() {
    let s = start(
        Store::in_memory().unwrap(),
        ServiceOptions {
            max_body: 64 * 1024,
            ..Default::default()
        },
    );
    seed(&s);
    let path = "/v1/users/ann/documents/2";
    let cases: Vec<(u16, (u16, Value))> = vec![
        (401, call(&s, "PUT", path, "", Some(r#"{"text": "x"}"#))),
        (
            401,
            call(&s, "PUT", path, "wrong-key-123", Some(r#"{"text": "x"}"#)),
        ),
        (400, call(&s, "PUT", path, ACME, Some(r#"{"text": "x""#))),
        (
            400,
            call(
                &s,
                "PUT",
                path,
                ACME,
                Some(r#"{"text": "x", "colour": "red"}"#),
            ),
        ),
        (
            400,
            call(
                &s,
                "PUT",
                path,
                ACME,
                Some(r#"{"text": "x", "rating": NaN}"#),
            ),
        ),
        (
            400,
            call(
                &s,
                "PUT",
                path,
                ACME,
                Some(r#"{"text": "x", "rating": 7.5}"#),
            ),
        ),
        (400, call(&s, "PUT", path, ACME, Some(r#"{"text": "  "}"#))),
        (
            400,
            call(
                &s,
                "PUT",
                path,
                ACME,
                Some(r#"{"text": "x", "time": "yesterday"}"#),
            ),
        ),
        (
            413,
            call(
                &s,
                "PUT",
                path,
                ACME,
                Some(&format!(r#"{{"text": "{}"}}"#, "a".repeat(65 << 10))),
            ),
        ),
        (413, announce_10mb(&s, path, ACME)),
        (
            404,
            ctx(
                &s,
                ACME,
                json!({"user": "zed", "query": "x", "scope": "user", "k": 1}),
            ),
        ),
        (
            400,
            ctx(
                &s,
                ACME,
                json!({"user": "ann", "query": "x", "scope": "user", "k": 0}),
            ),
        ),
        (
            400,
            ctx(
                &s,
                ACME,
                json!({"user": "ann", "query": "x", "scope": "user", "k": 1, "retriever": "dense"}),
            ),
        ),
        (
            400,
            ctx(
                &s,
                ACME,
                json!({"user": "ann", "query": "x", "scope": "sideways", "k": 1}),
            ),
        ),
        (
            400,
            ctx(
                &s,
                ACME,
                json!({"user": "ann", "query": "x", "k": 1, "task": "poem"}),
            ),
        ),
        // The text task's prompt quotes the review's title: without it, a 400 naming it.
        (
            400,
            ctx(
                &s,
                ACME,
                json!({"user": "ann", "query": "x", "k": 1, "task": "text", "target": {"text": "x"}}),
            ),
        ),
        (
            404,
            call(&s, "DELETE", "/v1/users/ann/documents/9", ACME, None),
        ),
        (404, call(&s, "GET", "/v1/nothing", ACME, None)),
        (
            503,
            call(
                &s,
                "POST",
                "/v1/chat/completions",
                ACME,
                Some(r#"{"user": "ann", "messages": [{"role": "user", "content": "hi"}]}"#),
            ),
        ),
    ];
    for (i, (want, (got, body))) in cases.into_iter().enumerate() {
        assert_eq!(got, want, "case {i}: {body}");
        assert!(
            body["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "case {i}: {body}"
        );
    }
    // Nothing of it was written.
    let q = json!({"user": "ann", "query": "x", "scope": "user", "k": 5});
    assert_eq!(docs(&ctx(&s, ACME, q).1).len(), 1);
}

#[test]
fn chat_completions_use_the_users_context() {
    let s = start(
        Store::in_memory().unwrap(),
        ServiceOptions {
            backend: Some(Backend::new(Arc::new(Counting))),
            ..Default::default()
        },
    );
    seed(&s);
    let body = json!({
        "model": "any", "user": "ann",
        "messages": [{"role": "user", "content": "Write about lavender soap"}],
        "pgraphrag": {"item": "soap", "scope": "both", "k": 1},
    });
    let (st, v) = call(
        &s,
        "POST",
        "/v1/chat/completions",
        ACME,
        Some(&body.to_string()),
    );
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["choices"][0]["message"]["content"], "2 documents");
    let used = v["pgraphrag"]["documents"].as_array().unwrap();
    assert_eq!(used.len(), 2);
    assert_eq!(used[1]["user"], "bob");
    let mut streamed = body.clone();
    streamed["stream"] = json!(true);
    let (st, text) = call(
        &s,
        "POST",
        "/v1/chat/completions",
        ACME,
        Some(&streamed.to_string()),
    );
    assert_eq!(st, 200);
    let events: Vec<&str> = text
        .as_str()
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .collect();
    assert_eq!(events.last(), Some(&"[DONE]"));
    let chunks: Vec<Value> = events[..events.len() - 1]
        .iter()
        .map(|e| serde_json::from_str(e).unwrap())
        .collect();
    assert_eq!(
        chunks[0]["pgraphrag"]["documents"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let content: String = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(content, "2 documents");
}

/// A backend slower than the service's timeout.
struct Slow;
impl pgraphrag_serve::ChatBackend for Slow {
    fn complete(
        &self,
        _: pgraphrag_core::Prompt,
        _: pgraphrag_core::GenParams,
    ) -> futures_util::future::BoxFuture<'static, pgraphrag_core::Result<pgraphrag_serve::Completion>>
    {
        Box::pin(async {
            tokio::time::sleep(std::time::Duration::from_secs(5)).await;
            Err(pgraphrag_core::Error::InvalidInput("never reached".into()))
        })
    }
    fn model(&self) -> String {
        "slow".into()
    }
}

#[test]
fn the_timeout_and_body_limit_answer_json() {
    let s = start(
        Store::in_memory().unwrap(),
        ServiceOptions {
            backend: Some(Backend::new(Arc::new(Slow))),
            timeout: std::time::Duration::from_millis(200),
            max_body: 4096,
            ..Default::default()
        },
    );
    seed(&s);
    let body = json!({"model": "any", "user": "ann",
        "messages": [{"role": "user", "content": "hello"}]});
    let t = std::time::Instant::now();
    let (st, v) = call(
        &s,
        "POST",
        "/v1/chat/completions",
        ACME,
        Some(&body.to_string()),
    );
    assert_eq!(
        (st, v["error"]["code"].as_str()),
        (503, Some("timeout")),
        "{v}"
    );
    assert!(
        v["error"]["message"].as_str().unwrap().contains("200ms"),
        "{v}"
    );
    assert!(t.elapsed() < std::time::Duration::from_secs(4));
    let big = json!({"text": "x".repeat(5000)}).to_string();
    let (st, v) = call(&s, "PUT", "/v1/users/ann/documents/big", ACME, Some(&big));
    assert_eq!(
        (st, v["error"]["code"].as_str()),
        (413, Some("too_large")),
        "{v}"
    );
    assert!(
        v["error"]["message"].as_str().unwrap().contains("4096"),
        "{v}"
    );
}

#[test]
fn a_key_past_its_rate_gets_429() {
    let s = start(
        Store::in_memory().unwrap(),
        ServiceOptions {
            rate_per_key: Some(5.0),
            ..Default::default()
        },
    );
    let q = json!({"user": "zed", "query": "x", "scope": "none"}).to_string();
    let codes: Vec<u16> = (0..20)
        .map(|_| call(&s, "POST", "/v1/context", ACME, Some(&q)).0)
        .collect();
    assert!(codes.contains(&429), "{codes:?}");
    // Another tenant's key has its own bucket.
    assert_eq!(call(&s, "POST", "/v1/context", BETA, Some(&q)).0, 200);
}

#[test]
fn health_and_metrics() {
    let s = start(Store::in_memory().unwrap(), ServiceOptions::default());
    seed(&s);
    let (st, h) = call(&s, "GET", "/healthz", "", None);
    assert_eq!((st, h["status"].as_str()), (200, Some("ok")));
    let (st, m) = call(&s, "GET", "/metrics", "", None);
    assert_eq!(st, 200);
    let m = m.as_str().unwrap();
    assert!(m.contains("pgraphrag_documents{tenant=\"acme\"} 6"), "{m}");
    assert!(
        m.contains("route=\"/v1/users/{user}/documents/{doc}\",method=\"PUT\",status=\"200\"} 8"),
        "{m}"
    );
}

fn data_dir() -> PathBuf {
    std::env::var_os("PGRAPHRAG_DATA")
        .filter(|d| !d.is_empty())
        .map_or_else(
            || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data"),
            PathBuf::from,
        )
}

/// The reviews of a dev split streamed in as PUTs, then `context` for every target (BM25,
/// both, k = 4, the clean recipe) gives the batch ranker's clean rankings, id for id and score
/// for score.
#[test]
fn streamed_split_matches_the_batch_ranker() {
    use pgraphrag_core::{DocText, Task, TieOrder};
    use pgraphrag_data::{IdPolicy, load_split};
    use pgraphrag_graph::GraphOptions;
    use pgraphrag_retrieval::Bm25Builder;
    use pgraphrag_retrieval::profile::{CachedBm25, ProfileOptions, ProfileRanker, RandomReview};

    let path = data_dir().join("pgraphrag/amazon_dev.json");
    let split = load_split(&path).unwrap_or_else(|e| panic!("{e} (set PGRAPHRAG_DATA)"));
    // No rate limit: the PUTs stream as fast as the loopback allows.
    let opts = ServiceOptions {
        rate_per_key: None,
        ..Default::default()
    };
    let s = start(Store::in_memory().unwrap(), opts);
    let entries: Vec<_> = split.entries(IdPolicy::Normalize).map(|(e, _)| e).collect();
    for e in &entries {
        let mut body = json!({"text": e.text.clone().unwrap_or_default(), "item": e.item});
        if let Some(t) = &e.title {
            body["title"] = json!(t);
        }
        if let Some(r) = e.rating {
            body["rating"] = json!(r);
        }
        let (st, v) = put(&s, ACME, &e.author, &e.id.to_string(), body);
        let blank = e.title.is_none() && e.text.as_deref().unwrap_or("").trim().is_empty();
        assert_eq!(st, if blank { 400 } else { 200 }, "{e:?}: {v}");
    }
    let graph = split.to_graph(GraphOptions::default(), IdPolicy::Normalize);
    let bm25 = CachedBm25::pgraphrag()
        .with_doc_text(DocText::Clean)
        .with_tie_order(TieOrder::InputOrder);
    let opts = ProfileOptions {
        k: 4,
        random: RandomReview::Off,
        ..ProfileOptions::default()
    };
    let mut ranker = ProfileRanker::new(bm25, opts);
    let mut compared = 0;
    for u in &split.users {
        let Some(t) = u.target() else { continue };
        let item = IdPolicy::Normalize.apply(&t.pid);
        let query = Task::Text.query(t.title.as_deref(), t.text.as_deref());
        let want = ranker.rank(&graph, &u.id, &item, &query).unwrap();
        let want: Vec<(String, String, u64)> = want
            .user
            .iter()
            .chain(&want.neighbors)
            .map(|r| {
                (
                    r.entry.author.clone(),
                    r.entry.id.to_string(),
                    r.score.unwrap().to_bits(),
                )
            })
            .collect();
        let q = json!({"user": u.id, "item": item.to_string(), "query": query, "scope": "both", "k": 4, "retriever": "bm25"});
        let (st, v) = ctx(&s, ACME, q);
        if st == 404 {
            assert!(want.is_empty(), "{}: {v}", u.id);
            continue;
        }
        let got: Vec<(String, String, u64)> = v["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                let score = e["score"].as_f64().unwrap();
                (
                    e["user"].as_str().unwrap().into(),
                    e["doc"].as_str().unwrap().into(),
                    score.to_bits(),
                )
            })
            .collect();
        assert_eq!(got, want, "user {}", u.id);
        compared += 1;
    }
    assert!(compared > 2000, "{compared}");
}
