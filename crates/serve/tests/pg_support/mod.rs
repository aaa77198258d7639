//! Helpers of `tests/postgres.rs`: the server URLs (skip or fail), a schema or a database of a
//! test's own, a service on loopback driven over HTTP with ureq, the cluster's shard switch.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::process::Command;
use std::time::{Duration, Instant};

use pgraphrag_retrieval::live::Document;
use pgraphrag_serve::postgres::{PgDocuments, PgOptions};
use pgraphrag_serve::store::DocumentStore;
use pgraphrag_serve::{Keys, Service, ServiceOptions};
use serde_json::{Value, json};

pub const KEYS: &str = "[tenants.acme]\nkeys = [\"acme-secret-1\"]\n";
pub const ACME: &str = "acme-secret-1";

/// The server URL in `var`, or `None` (skip) outside CI.
pub fn url(var: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(u) if !u.is_empty() => Some(u),
        _ => {
            let msg = format!(
                "{var} is not set: start the loopback cluster (scripts/cluster.sh start) and \
                 source runs/cluster/env.sh"
            );
            if std::env::var("CI").is_ok_and(|v| v == "true") {
                panic!("{msg}");
            }
            eprintln!("skipping: {msg}");
            None
        }
    }
}

/// A schema of its own for one test, dropped (here and on the shards) when it ends.
pub struct Schema {
    pub url: String,
    pub name: String,
}

impl Schema {
    pub fn new(url: &str, name: &str) -> Self {
        PgDocuments::drop_schema(url, name).unwrap();
        Schema {
            url: url.into(),
            name: name.into(),
        }
    }

    pub fn open(&self) -> PgDocuments {
        self.open_with(PgOptions {
            poll: Duration::from_millis(200),
            ..Default::default()
        })
    }

    pub fn open_with(&self, opts: PgOptions) -> PgDocuments {
        let opts = PgOptions {
            schema: self.name.clone(),
            ..opts
        };
        PgDocuments::open(&self.url, opts).unwrap()
    }
}

impl Drop for Schema {
    fn drop(&mut self) {
        if let Err(e) = PgDocuments::drop_schema(&self.url, &self.name) {
            eprintln!("dropping schema {}: {e}", self.name);
        }
    }
}

/// A service on 127.0.0.1, stopped (gracefully) when dropped.
pub struct Server {
    pub base: String,
    pub service: Service,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

pub fn start(store: PgDocuments) -> Server {
    start_with(store, ServiceOptions::default())
}

/// [`start`] with `opts`.
pub fn start_with(store: PgDocuments, opts: ServiceOptions) -> Server {
    let keys = Keys::parse(KEYS, "KEYS.toml").unwrap();
    let service = Service::new(keys, store, opts).unwrap();
    let served = service.clone();
    let (addr_tx, addr_rx) = std::sync::mpsc::channel();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            addr_tx.send(l.local_addr().unwrap()).unwrap();
            pgraphrag_serve::serve(l, served, async {
                let _ = stop_rx.await;
            })
            .await
            .unwrap();
        });
    });
    let addr = addr_rx.recv().unwrap();
    Server {
        base: format!("http://{addr}"),
        service,
        stop: Some(stop_tx),
        thread: Some(thread),
    }
}

/// (status, JSON body).
pub fn call(s: &Server, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let a: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let url = format!("{}{path}", s.base);
    let auth = format!("Bearer {ACME}");
    let mut resp = match (method, body) {
        ("DELETE", _) => a.delete(&url).header("Authorization", &auth).call(),
        ("PUT", b) => a
            .put(&url)
            .header("Authorization", &auth)
            .send_json(b.unwrap_or(Value::Null)),
        (_, b) => a
            .post(&url)
            .header("Authorization", &auth)
            .send_json(b.unwrap_or(Value::Null)),
    }
    .unwrap();
    let status = resp.status().as_u16();
    let text = resp.body_mut().read_to_string().unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

pub fn put(s: &Server, user: &str, doc: &str, text: &str, item: &str) -> (u16, Value) {
    let body = json!({"text": text, "item": item, "rating": 4});
    call(
        s,
        "PUT",
        &format!("/v1/users/{user}/documents/{doc}"),
        Some(body),
    )
}

/// The context of `user` for `item` (both scopes, BM25, "lavender"): (status, body).
pub fn context(s: &Server, user: &str, item: &str) -> (u16, Value) {
    let q = json!({"user": user, "item": item, "query": "lavender soap", "scope": "both", "k": 10});
    call(s, "POST", "/v1/context", Some(q))
}

/// (user, doc, text) of a context's entries, in order.
pub fn entries(v: &Value) -> Vec<(String, String, String)> {
    v["entries"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|e| {
                    let f = |k: &str| e[k].as_str().unwrap_or_default().to_string();
                    (f("user"), f("doc"), f("text"))
                })
                .collect()
        })
        .unwrap_or_default()
}

pub fn doc(user: &str, id: &str, text: &str) -> Document {
    Document {
        user: user.into(),
        id: id.into(),
        item: Some("soap".into()),
        text: text.into(),
        rating: Some(4.0),
        ..Default::default()
    }
}

/// The store's (user, doc) → text, in load order.
pub fn stored(store: &PgDocuments) -> Vec<(String, String, String)> {
    store
        .load()
        .unwrap()
        .documents
        .into_iter()
        .map(|(_, d)| (d.user, d.id, d.text))
        .collect()
}

/// Polls `until` on `s` every millisecond for at most 5 s; the time it took.
pub fn visible(what: &str, mut until: impl FnMut() -> bool) -> Duration {
    let t = Instant::now();
    while !until() {
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "{what}: not visible after 5 s"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    t.elapsed()
}

pub fn report(layout: &str, mut delays: Vec<Duration>) {
    delays.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    eprintln!(
        "{layout}: write on one process -> visible on the other: n = {}, median {:.1} ms, \
         max {:.1} ms",
        delays.len(),
        ms(delays[delays.len() / 2]),
        ms(delays[delays.len() - 1])
    );
}

/// `scripts/cluster.sh shard stop|start N`.
pub fn shard(action: &str, n: usize) {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/cluster.sh");
    let st = Command::new(script)
        .args(["shard", action, &n.to_string()])
        .status()
        .unwrap();
    assert!(st.success(), "scripts/cluster.sh shard {action} {n}: {st}");
}

/// Starts the shard server again however the test ends.
pub struct Restart(pub usize);

impl Drop for Restart {
    fn drop(&mut self) {
        // No panic here: this may run while a failed assertion unwinds.
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/cluster.sh");
        let st = Command::new(script)
            .args(["shard", "start", &self.0.to_string()])
            .status();
        if !st.as_ref().is_ok_and(|s| s.success()) {
            eprintln!("scripts/cluster.sh shard start {} failed: {st:?}", self.0);
        }
    }
}

/// A database of its own on the server of `url` (`name`), dropped when the test ends; with an
/// admin connection to switch it off and on.
pub struct Database {
    admin: postgres::Client,
    pub name: String,
    pub url: String,
}

impl Database {
    pub fn new(url: &str, name: &str) -> Self {
        use pgraphrag_store::postgres::{config, connect_config};
        let mut admin = connect_config(&config(url).unwrap(), url).unwrap();
        // One statement each: DROP and CREATE DATABASE refuse a transaction block.
        for sql in [
            format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
            format!("CREATE DATABASE {name}"),
        ] {
            admin.batch_execute(&sql).unwrap();
        }
        let base = url.rsplit_once('/').map_or(url, |(b, _)| b);
        Database {
            admin,
            name: name.into(),
            url: format!("{base}/{name}"),
        }
    }

    /// Refuses new connections and ends the open ones (a server that went away), or lets them
    /// in again.
    pub fn available(&mut self, yes: bool) {
        let name = &self.name;
        self.admin
            .batch_execute(&format!("ALTER DATABASE {name} ALLOW_CONNECTIONS {yes}"))
            .unwrap();
        if !yes {
            self.admin
                .execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1",
                    &[&self.name],
                )
                .unwrap();
        }
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        let name = &self.name;
        let _ = self
            .admin
            .batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
    }
}

/// What `s`'s index holds: (user, doc) -> text.
pub fn held(s: &Server) -> BTreeMap<(String, String), String> {
    let snap = s.service.tenant("acme").unwrap().index.snapshot();
    snap.users()
        .flat_map(|u| snap.user_documents(u))
        .map(|d| {
            (
                (d.user().to_string(), d.id().to_string()),
                d.text().to_string(),
            )
        })
        .collect()
}
