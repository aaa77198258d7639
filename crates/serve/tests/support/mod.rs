//! What the HTTP tests share: a server on loopback, requests with a key, the test double
//! backend.
#![allow(dead_code)]

use futures_util::future::BoxFuture;
use pgraphrag_core::{GenParams, Prompt};
use pgraphrag_serve::{ChatBackend, Completion, Keys, Service, ServiceOptions, store::Store};
use serde_json::Value;

pub const KEYS: &str =
    "[tenants.acme]\nkeys = [\"acme-secret-1\"]\n[tenants.beta]\nkeys = [\"beta-secret-1\"]\n";
pub const ACME: &str = "acme-secret-1";
pub const BETA: &str = "beta-secret-1";

/// A server on 127.0.0.1, stopped (gracefully) when dropped.
pub struct Server {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
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

pub fn start(store: Store, opts: ServiceOptions) -> Server {
    let keys = Keys::parse(KEYS, "KEYS.toml").unwrap();
    serve(Service::new(keys, store, opts).unwrap())
}

/// Serves `service` on 127.0.0.1 (a free port) until the returned server is dropped.
pub fn serve(service: Service) -> Server {
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
            pgraphrag_serve::serve(l, service, async {
                let _ = stop_rx.await;
            })
            .await
            .unwrap();
        });
    });
    let addr = addr_rx.recv().unwrap();
    Server {
        base: format!("http://{addr}"),
        stop: Some(stop_tx),
        thread: Some(thread),
    }
}

pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into()
}

/// (status, JSON body) of a request with `key` (none when empty) and a raw `body`.
pub fn call(s: &Server, method: &str, path: &str, key: &str, body: Option<&str>) -> (u16, Value) {
    let url = format!("{}{path}", s.base);
    let a = agent();
    let auth = format!("Bearer {key}");
    let mut resp = match (method, body) {
        ("GET", _) => {
            let mut r = a.get(&url);
            if !key.is_empty() {
                r = r.header("Authorization", &auth);
            }
            r.call()
        }
        ("DELETE", _) => {
            let mut r = a.delete(&url);
            if !key.is_empty() {
                r = r.header("Authorization", &auth);
            }
            r.call()
        }
        (m, b) => {
            let mut r = if m == "PUT" {
                a.put(&url)
            } else {
                a.post(&url)
            };
            if !key.is_empty() {
                r = r.header("Authorization", &auth);
            }
            r.content_type("application/json").send(b.unwrap_or(""))
        }
    }
    .unwrap();
    let status = resp.status().as_u16();
    let text = resp.body_mut().read_to_string().unwrap();
    let v = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, v)
}

/// A PUT announcing a 10 MB body: the server must answer before reading it (a client that
/// streams the body on regardless sees the connection closed, as from any server).
pub fn announce_10mb(s: &Server, path: &str, key: &str) -> (u16, Value) {
    use std::io::{Read, Write};
    let addr = s.base.trim_start_matches("http://");
    let mut tcp = std::net::TcpStream::connect(addr).unwrap();
    let head = format!(
        "PUT {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {key}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        10 << 20
    );
    tcp.write_all(head.as_bytes()).unwrap();
    tcp.write_all(b"{\"text\": \"").unwrap();
    let mut answer = String::new();
    tcp.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    let _ = tcp.read_to_string(&mut answer);
    let status = answer
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = answer.split("\r\n\r\n").nth(1).unwrap_or_default();
    // The body may be chunked: keep the JSON object.
    let json = body
        .find('{')
        .and_then(|a| body.rfind('}').map(|b| &body[a..=b]))
        .unwrap_or("null");
    (status, serde_json::from_str(json).unwrap_or(Value::Null))
}

pub fn put(s: &Server, key: &str, user: &str, doc: &str, body: Value) -> (u16, Value) {
    let path = format!("/v1/users/{user}/documents/{doc}");
    call(s, "PUT", &path, key, Some(&body.to_string()))
}

pub fn ctx(s: &Server, key: &str, body: Value) -> (u16, Value) {
    call(s, "POST", "/v1/context", key, Some(&body.to_string()))
}

pub fn docs(v: &Value) -> Vec<(String, String)> {
    v["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["user"].as_str().unwrap().into(),
                e["doc"].as_str().unwrap().into(),
            )
        })
        .collect()
}

/// A test double: answers with the number of documents in its system message, or, asked
/// for a summary, with the number of reviews it was given.
pub struct Counting;
impl ChatBackend for Counting {
    fn complete(
        &self,
        prompt: Prompt,
        _: GenParams,
    ) -> BoxFuture<'static, pgraphrag_core::Result<Completion>> {
        let first = &prompt.messages()[0].content;
        let text = if first.starts_with("Based on this user's past reviews") {
            format!("{} reviews", first.matches("Review: ").count())
        } else {
            format!("{} documents", first.matches("\n- ").count())
        };
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
        "counting".into()
    }
}
