//! OpenAiClient against a real HTTP server process on loopback (tests/support/openai_stub_server.py,
//! Python stdlib only) for the success path and every error path: 500, 400, garbage, missing
//! fields, slow (timeout), flaky 503 and 429 (retries), connection refused.
//!
//! Needs `python3` (or `$PGRAPHRAG_PYTHON`); fails loudly if it cannot start the server.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use pgraphrag_core::{GenParams, Generator, Prompt};
use pgraphrag_llm::{LlmError, OpenAiClient, OpenAiOptions};

struct Server {
    child: Child,
    port: u16,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    fn start(args: &[&str]) -> Server {
        let py = std::env::var("PGRAPHRAG_PYTHON").unwrap_or_else(|_| "python3".into());
        let script =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/support/openai_stub_server.py");
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("requests.jsonl");
        let mut child = Command::new(&py)
            .arg(&script)
            .args(args)
            .arg("--log")
            .arg(&log)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {py} {}: {e}", script.display()));
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .trim()
            .strip_prefix("PORT ")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("stub server printed {line:?} instead of its port"));
        Server {
            child,
            port,
            log,
            _dir: dir,
        }
    }
    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }
    fn requests(&self) -> Vec<serde_json::Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

fn fast_opts() -> OpenAiOptions {
    OpenAiOptions {
        timeout: Duration::from_secs(10),
        max_retries: 2,
        initial_backoff: Duration::from_millis(20),
        max_backoff: Duration::from_millis(100),
        ..Default::default()
    }
}

fn params() -> GenParams {
    GenParams {
        max_tokens: 16,
        temperature: 0.0,
        seed: 7,
        ..Default::default()
    }
}

#[test]
fn chat_and_raw_prompts_round_trip() {
    let s = Server::start(&["--mode", "echo"]);
    let c = OpenAiClient::new(
        s.url(),
        "test-model",
        OpenAiOptions {
            api_key: Some("k123".into()),
            ..fast_opts()
        },
    )
    .unwrap();
    let p = Prompt::user("hello there STOP tail").with_system("sys");
    let mut gp = params();
    assert_eq!(c.generate(&p, &gp).unwrap(), "echo: hello there STOP tail");
    gp.stop = vec!["STOP".into()];
    gp.top_p = Some(0.9);
    let full = c.complete(&p, &gp).unwrap();
    assert_eq!(full.text, "echo: hello there ");
    assert_eq!(full.finish_reason.as_deref(), Some("stop"));
    assert_eq!(
        c.generate(&Prompt::Raw("raw text".into()), &params())
            .unwrap(),
        "echo: raw text"
    );
    let reqs = s.requests();
    assert_eq!(reqs.len(), 3);
    assert_eq!(reqs[0]["path"], "/v1/chat/completions");
    assert_eq!(reqs[2]["path"], "/v1/completions");
    let b: serde_json::Value = serde_json::from_str(reqs[1]["body"].as_str().unwrap()).unwrap();
    assert_eq!(b["model"], "test-model");
    assert_eq!(b["max_tokens"], 16);
    assert_eq!(b["seed"], 7);
    assert_eq!(b["top_p"], 0.9);
    assert_eq!(b["stop"][0], "STOP");
    assert_eq!(b["messages"][0]["role"], "system");
    assert_eq!(b["messages"][1]["content"], "hello there STOP tail");
}

#[test]
fn http_500_is_retried_then_reported_with_the_server_message() {
    let s = Server::start(&["--mode", "error500"]);
    let c = OpenAiClient::new(s.url(), "m", fast_opts()).unwrap();
    let e = c.complete(&Prompt::user("x"), &params()).unwrap_err();
    match &e {
        LlmError::Http {
            status,
            body,
            attempts,
            url,
        } => {
            assert_eq!(*status, 500);
            assert!(body.contains("model crashed: out of memory"), "{body}");
            assert_eq!(*attempts, 3);
            assert!(url.ends_with("/v1/chat/completions"));
        }
        other => panic!("expected Http, got {other:?}"),
    }
    assert!(e.to_string().contains("HTTP 500"));
    assert_eq!(s.requests().len(), 3, "1 try + 2 retries");
    // Through the trait, it is a backend error that keeps the message.
    let core_err = c.generate(&Prompt::user("x"), &params()).unwrap_err();
    assert!(core_err.to_string().contains("out of memory"), "{core_err}");
}

#[test]
fn http_400_is_not_retried() {
    let s = Server::start(&["--mode", "badreq"]);
    let c = OpenAiClient::new(s.url(), "nope", fast_opts()).unwrap();
    let e = c.complete(&Prompt::user("x"), &params()).unwrap_err();
    assert!(
        matches!(
            e,
            LlmError::Http {
                status: 400,
                attempts: 1,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("unknown model 'nope'"));
    assert_eq!(s.requests().len(), 1);
}

#[test]
fn garbage_and_missing_fields_are_typed_errors() {
    let s = Server::start(&["--mode", "garbage"]);
    let c = OpenAiClient::new(s.url(), "m", fast_opts()).unwrap();
    let e = c.complete(&Prompt::user("x"), &params()).unwrap_err();
    match &e {
        LlmError::InvalidResponse { reason, body, .. } => {
            assert!(reason.contains("not JSON"), "{reason}");
            assert!(body.contains("this is not json"));
        }
        other => panic!("expected InvalidResponse, got {other:?}"),
    }
    let s = Server::start(&["--mode", "nochoice"]);
    let c = OpenAiClient::new(s.url(), "m", fast_opts()).unwrap();
    let e = c.complete(&Prompt::user("x"), &params()).unwrap_err();
    assert!(
        matches!(&e, LlmError::InvalidResponse { reason, .. } if reason.contains("choices")),
        "{e:?}"
    );
}

#[test]
fn slow_server_times_out() {
    let s = Server::start(&["--mode", "slow", "--delay", "5"]);
    let opts = OpenAiOptions {
        timeout: Duration::from_millis(500),
        max_retries: 1,
        ..fast_opts()
    };
    let c = OpenAiClient::new(s.url(), "m", opts).unwrap();
    let t = Instant::now();
    let e = c.complete(&Prompt::user("x"), &params()).unwrap_err();
    assert!(
        t.elapsed() < Duration::from_secs(4),
        "took {:?}",
        t.elapsed()
    );
    match &e {
        LlmError::Transport {
            reason, attempts, ..
        } => {
            assert!(
                reason.to_lowercase().contains("timeout")
                    || reason.to_lowercase().contains("timed out"),
                "{reason}"
            );
            assert_eq!(*attempts, 2);
        }
        other => panic!("expected Transport, got {other:?}"),
    }
}

#[test]
fn flaky_503_and_429_recover_with_backoff() {
    let s = Server::start(&["--mode", "flaky", "--failures", "2"]);
    let c = OpenAiClient::new(s.url(), "m", fast_opts()).unwrap();
    let t = Instant::now();
    assert_eq!(
        c.generate(&Prompt::user("ok"), &params()).unwrap(),
        "echo: ok"
    );
    assert!(
        t.elapsed() >= Duration::from_millis(60),
        "backoff 20 ms + 40 ms was not waited"
    );
    assert_eq!(s.requests().len(), 3);

    let s = Server::start(&["--mode", "ratelimit", "--failures", "1"]);
    let c = OpenAiClient::new(s.url(), "m", fast_opts()).unwrap();
    assert_eq!(
        c.generate(&Prompt::user("ok"), &params()).unwrap(),
        "echo: ok"
    );
    assert_eq!(s.requests().len(), 2);

    // More failures than retries: the last 503 is reported.
    let s = Server::start(&["--mode", "flaky", "--failures", "5"]);
    let c = OpenAiClient::new(s.url(), "m", fast_opts()).unwrap();
    let e = c.complete(&Prompt::user("x"), &params()).unwrap_err();
    assert!(
        matches!(&e, LlmError::Http { status: 503, attempts: 3, body, .. } if body.contains("warming up (3)")),
        "{e:?}"
    );
}

#[test]
fn connection_refused_is_a_transport_error() {
    // Bind then drop a listener to get a port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let c = OpenAiClient::new(format!("http://127.0.0.1:{port}/v1"), "m", fast_opts()).unwrap();
    let e = c.complete(&Prompt::user("x"), &params()).unwrap_err();
    assert!(
        matches!(e, LlmError::Transport { attempts: 3, .. }),
        "{e:?}"
    );
    assert!(e.to_string().contains(&format!("127.0.0.1:{port}")));
}
