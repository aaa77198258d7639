//! The service on PostgreSQL (`PgDocuments`), on one server (`$PGRAPHRAG_PG_URL`) and on the
//! loopback sharded cluster (`$PGRAPHRAG_PG_SHARDED_URL`): `scripts/cluster.sh start && .
//! runs/cluster/env.sh`. Without the variables the tests skip with a message, except under
//! `CI=true`, where they fail. Each test uses its own schema and drops it at the end.
//!
//! * documents and summaries round-trip, and a restarted service serves the same context;
//! * two services on one database (two processes): writes on one become visible on the other
//!   (the measured delay is printed: `cargo test ... -- --nocapture`);
//! * a follower that fell behind the log's retention reloads the tenant;
//! * a stopped shard server: writes of its users answer 503 `store_unavailable`, reads keep
//!   answering, and once it is back every acknowledged write is there and no refused one.
#![cfg(feature = "postgres")]

mod pg_support;

use std::collections::BTreeMap;
use std::sync::RwLock;
use std::time::{Duration, Instant};

use pg_support::*;
use pgraphrag_serve::postgres::{PgDocuments, PgOptions};
use pgraphrag_serve::store::{DocumentStore, StoredSummary, Write};
use serde_json::{Value, json};

/// Stopping a shard server breaks every sharded test running beside it: those hold this for
/// reading, the shard test for writing.
static SHARDS: RwLock<()> = RwLock::new(());

fn round_trip(url: &str, schema: &str) {
    let schema = Schema::new(url, schema);
    let store = schema.open();
    // The store alone: order of first writes, replacement in place, summaries, deletes.
    for (u, d, t) in [
        ("ann", "1", "lavender soap"),
        ("bob", "1", "soap"),
        ("ann", "2", "x"),
    ] {
        assert_eq!(
            store.apply("acme", &Write::Upsert(doc(u, d, t))).unwrap(),
            1
        );
    }
    store
        .apply(
            "acme",
            &Write::Upsert(doc("ann", "1", "lavender soap, again")),
        )
        .unwrap();
    store
        .apply("other", &Write::Upsert(doc("ann", "1", "another tenant")))
        .unwrap();
    let sum = StoredSummary {
        user: "ann".into(),
        text: "likes lavender".into(),
        fingerprint: u64::MAX - 3,
    };
    assert_eq!(
        store.apply("acme", &Write::Summary(sum.clone())).unwrap(),
        1
    );
    let remove = |u: &str, d: &str| Write::Remove {
        user: u.into(),
        doc: d.into(),
    };
    assert_eq!(store.apply("acme", &remove("ann", "2")).unwrap(), 1);
    assert_eq!(store.apply("acme", &remove("ann", "2")).unwrap(), 0);
    let loaded = store.load().unwrap();
    let got: Vec<(&str, &str, &str, &str)> = loaded
        .documents
        .iter()
        .map(|(t, d)| (t.as_str(), d.user.as_str(), d.id.as_str(), d.text.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("acme", "ann", "1", "lavender soap, again"),
            ("acme", "bob", "1", "soap"),
            ("other", "ann", "1", "another tenant"),
        ]
    );
    assert_eq!(
        loaded.documents[0].1,
        doc("ann", "1", "lavender soap, again")
    );
    assert_eq!(loaded.summaries, [("acme".to_string(), sum)]);
    let gone = store
        .apply("other", &Write::RemoveUser { user: "ann".into() })
        .unwrap();
    assert_eq!(gone, 1);

    // Over HTTP, then after a restart on the same database: the same context.
    let s = start(store);
    for (u, d, t, item) in [
        ("cat", "1", "Lavender scent, my hair is soft", "shampoo"),
        ("dan", "1", "Lavender soap that lasts long", "soap"),
        ("cat", "2", "A soap for dry skin", "soap"),
    ] {
        assert_eq!(put(&s, u, d, t, item).0, 200);
    }
    let before = context(&s, "cat", "soap");
    assert_eq!(before.0, 200, "{}", before.1);
    // cat's shampoo review; ann's, bob's and dan's of the soap.
    assert_eq!(entries(&before.1).len(), 4, "{}", before.1);
    drop(s);
    let s = start(schema.open());
    let after = context(&s, "cat", "soap");
    assert_eq!(entries(&after.1), entries(&before.1));
    assert_eq!(after.1["entries"], before.1["entries"]);
    // The summary came back too (its fingerprint does not match ann's documents: stale,
    // so not served, as with the SQLite store).
    assert!(s.service.tenant("acme").unwrap().summary("ann").is_none());
}

#[test]
fn documents_and_summaries_round_trip_on_one_server() {
    let Some(url) = url("PGRAPHRAG_PG_URL") else {
        return;
    };
    round_trip(&url, "pgserve_t_round_single");
}

#[test]
fn documents_and_summaries_round_trip_on_the_sharded_cluster() {
    let Some(url) = url("PGRAPHRAG_PG_SHARDED_URL") else {
        return;
    };
    let _shards = SHARDS.read().unwrap_or_else(|e| e.into_inner());
    round_trip(&url, "pgserve_t_round_sharded");
}

fn two_processes(url: &str, schema: &str) -> Vec<Duration> {
    let schema = Schema::new(url, schema);
    let a = start(schema.open());
    let b = start(schema.open());
    let mut delays = Vec::new();
    assert_eq!(put(&a, "ann", "r1", "Lavender soap, lovely", "soap").0, 200);
    // The writer sees its write on its very next read. (ann's own documents are read for
    // another item: the user scope leaves out the target item's.)
    assert_eq!(entries(&context(&a, "ann", "shampoo").1).len(), 1);
    delays.push(visible("a PUT on A, read on B", || {
        entries(&context(&b, "ann", "shampoo").1).len() == 1
    }));
    // A summary stored by a third process reaches both (it matches ann's documents).
    let docs = a.service.tenant("acme").unwrap().index.snapshot();
    let summary = StoredSummary {
        user: "ann".into(),
        text: "likes lavender".into(),
        fingerprint: pgraphrag_serve::summaries::fingerprint(docs.user_documents("ann")),
    };
    schema
        .open()
        .apply("acme", &Write::Summary(summary))
        .unwrap();
    let summarised = |s: &Server| {
        let t = s.service.tenant("acme").unwrap();
        t.summary("ann").is_some_and(|x| x.text == "likes lavender")
    };
    delays.push(visible("a summary from a third process, read on B", || {
        summarised(&b)
    }));
    visible("a summary from a third process, read on A", || {
        summarised(&a)
    });
    for i in 0..10 {
        let user = format!("u{i}");
        assert_eq!(put(&a, &user, "r", "lavender soap", "soap").0, 200);
        delays.push(visible("a PUT on A, read on B", || {
            context(&b, &user, "soap").0 == 200
        }));
    }
    // And the other way round; a replacement.
    assert_eq!(
        put(&b, "ann", "r1", "Lavender soap, changed", "soap").0,
        200
    );
    delays.push(visible("a replacement on B, read on A", || {
        entries(&context(&a, "ann", "shampoo").1)
            .iter()
            .any(|e| e.2 == "Lavender soap, changed")
    }));
    assert_eq!(put(&b, "ann", "r2", "Soap number two", "soap").0, 200);
    delays.push(visible("a PUT on B, read on A", || {
        entries(&context(&a, "ann", "shampoo").1).len() == 2
    }));
    let (st, _) = call(&a, "DELETE", "/v1/users/ann/documents/r2", None);
    assert_eq!(st, 200);
    delays.push(visible("a DELETE on A, read on B", || {
        entries(&context(&b, "ann", "shampoo").1).len() == 1
    }));
    let (st, receipt) = call(&a, "DELETE", "/v1/users/ann", None);
    assert_eq!((st, receipt["documents"].as_u64()), (200, Some(1)));
    delays.push(visible("a DELETE of a user on A, read on B", || {
        context(&b, "ann", "shampoo").0 == 404
    }));
    assert!(b.service.tenant("acme").unwrap().summary("ann").is_none());
    // Both hold the same documents in the same order (u3's neighbours: the other nine).
    assert_eq!(entries(&context(&a, "u3", "soap").1).len(), 9);
    assert_eq!(
        entries(&context(&a, "u3", "soap").1),
        entries(&context(&b, "u3", "soap").1)
    );
    delays
}

#[test]
fn two_processes_see_each_others_writes_on_one_server() {
    let Some(url) = url("PGRAPHRAG_PG_URL") else {
        return;
    };
    report("one server", two_processes(&url, "pgserve_t_two_single"));
}

#[test]
fn two_processes_see_each_others_writes_on_the_sharded_cluster() {
    let Some(url) = url("PGRAPHRAG_PG_SHARDED_URL") else {
        return;
    };
    let _shards = SHARDS.read().unwrap_or_else(|e| e.into_inner());
    report("sharded", two_processes(&url, "pgserve_t_two_sharded"));
}

#[test]
fn without_notifications_a_follower_polls() {
    let Some(url) = url("PGRAPHRAG_PG_URL") else {
        return;
    };
    let schema = Schema::new(&url, "pgserve_t_poll");
    let a = start(schema.open());
    let poll = Duration::from_millis(100);
    let b = start(schema.open_with(PgOptions {
        listen: false,
        poll,
        ..Default::default()
    }));
    let mut delays = Vec::new();
    for i in 0..5 {
        let user = format!("u{i}");
        assert_eq!(put(&a, &user, "r", "lavender soap", "soap").0, 200);
        delays.push(visible("a PUT on A, read on a polling B", || {
            context(&b, &user, "soap").0 == 200
        }));
    }
    assert!(delays.iter().all(|d| *d < poll * 3), "{delays:?}");
    report("one server, polling every 100 ms", delays);
}

#[test]
fn a_follower_behind_the_logs_retention_reloads_the_tenant() {
    let Some(url) = url("PGRAPHRAG_PG_URL") else {
        return;
    };
    let schema = Schema::new(&url, "pgserve_t_retention");
    let b = start(schema.open());
    // A process that keeps no log at all: every change is pruned at once.
    let a = start(schema.open_with(PgOptions {
        retention: Duration::ZERO,
        ..Default::default()
    }));
    assert_eq!(put(&a, "ann", "1", "lavender", "soap").0, 200);
    assert_eq!(put(&a, "bob", "1", "lavender soap", "soap").0, 200);
    visible("writes pruned from the log, read on B", || {
        entries(&context(&b, "ann", "shampoo").1).len() == 1
            && entries(&context(&b, "ann", "soap").1).len() == 1
    });
    assert_eq!(call(&a, "DELETE", "/v1/users/bob", None).0, 200);
    visible("a pruned DELETE of a user, read on B", || {
        context(&b, "bob", "shampoo").0 == 404
    });
}

#[test]
fn a_stopped_shard_refuses_its_writes_with_503_and_loses_nothing() {
    let Some(url) = url("PGRAPHRAG_PG_SHARDED_URL") else {
        return;
    };
    let _shards = SHARDS.write().unwrap_or_else(|e| e.into_inner());
    let schema = Schema::new(&url, "pgserve_t_shard_fault");
    let store = schema.open();
    // Users on each shard server.
    let mut on: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for i in 0..16 {
        let user = format!("u{i}");
        let (server, _) = store.placement("acme", &user).unwrap();
        on.entry(server).or_default().push(user);
    }
    let (down, up) = (&on["pgraphrag_shard0"], &on["pgraphrag_shard1"]);
    let s = start(store);
    // A second process, following the first through it all.
    let b = start(schema.open());
    // What the store must hold at the end: (user, doc) -> text.
    let mut want: BTreeMap<(String, String), String> = BTreeMap::new();
    for u in down.iter().chain(up) {
        for d in ["a", "b"] {
            let text = format!("lavender soap by {u}, {d}");
            assert_eq!(put(&s, u, d, &text, "soap").0, 200);
            want.insert((u.clone(), d.into()), text);
        }
    }
    let before = context(&s, &down[0], "shampoo");
    assert_eq!(entries(&before.1).len(), 2, "{}", before.1);

    shard("stop", 0);
    let restart = Restart(0);
    let refused = |(st, v): (u16, Value), what: &str| {
        assert_eq!(st, 503, "{what}: {v}");
        assert_eq!(v["error"]["code"], "store_unavailable", "{what}: {v}");
        let m = v["error"]["message"].as_str().unwrap_or_default();
        assert!(
            m.contains("pgraphrag_shard0") && m.contains("may be retried"),
            "{what}: {m}"
        );
        eprintln!("{what}: 503 {m}");
    };
    refused(
        put(&s, &down[0], "new", "lavender, never stored", "soap"),
        "PUT",
    );
    refused(
        put(&s, &down[1], "a", "a replacement, never stored", "soap"),
        "PUT",
    );
    let path = format!("/v1/users/{}/documents/b", down[0]);
    refused(call(&s, "DELETE", &path, None), "DELETE");
    let path = format!("/v1/users/{}", down[1]);
    refused(call(&s, "DELETE", &path, None), "DELETE user");
    // The other shard's users are written as usual.
    for u in up {
        let text = format!("lavender soap by {u}, during the outage");
        assert_eq!(put(&s, u, "c", &text, "soap").0, 200);
        want.insert((u.clone(), "c".into()), text);
    }
    let path = format!("/v1/users/{}/documents/b", up[0]);
    assert_eq!(call(&s, "DELETE", &path, None).0, 200);
    want.remove(&(up[0].clone(), "b".into()));
    // Reads answer from memory, unchanged by the refused writes.
    let during = context(&s, &down[0], "shampoo");
    assert_eq!(during.0, 200);
    assert_eq!(entries(&during.1), entries(&before.1));
    assert_eq!(context(&s, &down[1], "shampoo").0, 200);

    drop(restart);
    // Full service again: the refused writes now succeed.
    let t = Instant::now();
    let text = format!("lavender soap by {}, after", down[0]);
    loop {
        let (st, v) = put(&s, &down[0], "after", &text, "soap");
        if st == 200 {
            break;
        }
        assert_eq!(st, 503, "{v}");
        assert!(t.elapsed() < Duration::from_secs(10), "still refused: {v}");
        std::thread::sleep(Duration::from_millis(50));
    }
    eprintln!("first write after the restart took {:?}", t.elapsed());
    want.insert((down[0].clone(), "after".into()), text);
    let path = format!("/v1/users/{}", down[1]);
    assert_eq!(call(&s, "DELETE", &path, None).0, 200);
    want.retain(|(u, _), _| u != &down[1]);
    visible("every acknowledged write, on the second process", || {
        held(&b) == want
    });
    drop((s, b));

    // Every acknowledged write is stored, and none of the refused ones; a new process serves
    // exactly that.
    let store = schema.open();
    let got: BTreeMap<(String, String), String> = stored(&store)
        .into_iter()
        .map(|(u, d, t)| ((u, d), t))
        .collect();
    assert_eq!(got, want);
    let s = start(store);
    let snap = s.service.tenant("acme").unwrap().index.snapshot();
    assert_eq!(snap.num_documents(), want.len());
    for ((u, d), text) in &want {
        assert_eq!(snap.document(u, d).map(|x| x.text()), Some(text.as_str()));
    }
}

#[test]
fn a_database_gone_away_answers_503_and_the_service_recovers() {
    let Some(url) = url("PGRAPHRAG_PG_URL") else {
        return;
    };
    let mut db = Database::new(&url, "pgserve_t_gone");
    let opts = PgOptions {
        schema: "pgserve".into(),
        poll: Duration::from_millis(200),
        ..Default::default()
    };
    let s = start(PgDocuments::open(&db.url, opts.clone()).unwrap());
    assert_eq!(put(&s, "ann", "1", "lavender soap", "soap").0, 200);

    db.available(false);
    let (st, v) = put(&s, "ann", "2", "never stored", "soap");
    assert_eq!(
        (st, &v["error"]["code"]),
        (503, &json!("store_unavailable")),
        "{v}"
    );
    let m = v["error"]["message"].as_str().unwrap_or_default();
    assert!(m.contains("pgserve_t_gone") && m.contains("retr"), "{m}");
    eprintln!("the database gone: 503 {m}");
    // Reads answer from memory.
    assert_eq!(entries(&context(&s, "ann", "shampoo").1).len(), 1);

    // Back: the next write reconnects.
    db.available(true);
    assert_eq!(put(&s, "ann", "3", "lavender again", "soap").0, 200);
    drop(s);
    let store = PgDocuments::open(&db.url, opts).unwrap();
    let got: Vec<String> = stored(&store).into_iter().map(|(_, d, _)| d).collect();
    assert_eq!(got, ["1", "3"]);
}
