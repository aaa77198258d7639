//! AsyncOpenAiClient (feature `async`) against a loopback test double
//! (`support/canned_http.rs`: a tokio listener on 127.0.0.1:0 writing canned HTTP answers):
//! a completion, a streamed completion, HTTP 500 with a JSON error body, malformed bodies,
//! timeouts, retries and connection refused.
#![cfg(feature = "async")]

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use pgraphrag_core::{GenParams, Prompt};
use pgraphrag_llm::{AsyncGenerator, AsyncOpenAiClient, LlmError, OpenAiOptions};

#[path = "support/canned_http.rs"]
mod canned_http;

use canned_http::{Canned, Reply, delta_event, json};

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

const CHAT_ANSWER: &str = r#"{"id":"x","choices":[{"index":0,"message":{"role":"assistant","content":"Paris is the capital. STOP here"},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":7}}"#;

#[tokio::test]
async fn completion_round_trip_chat_and_raw() {
    let s = Canned::start(vec![
        json(200, CHAT_ANSWER),
        json(
            200,
            r#"{"choices":[{"text":"raw answer","finish_reason":"length"}]}"#,
        ),
    ])
    .await;
    let opts = OpenAiOptions {
        api_key: Some("k123".into()),
        ..fast_opts()
    };
    let c = AsyncOpenAiClient::new(s.url(), "test-model", opts).unwrap();
    let mut gp = params();
    gp.stop = vec!["STOP".into()];
    gp.top_p = Some(0.9);
    let p = Prompt::user("capital of France?").with_system("sys");
    let full = c.complete(&p, &gp).await.unwrap();
    assert_eq!(full.text, "Paris is the capital. ");
    assert_eq!(full.finish_reason.as_deref(), Some("stop"));
    assert_eq!(
        (full.prompt_tokens, full.completion_tokens),
        (Some(9), Some(7))
    );
    // Through the trait.
    let raw = AsyncGenerator::generate(&c, &Prompt::Raw("raw text".into()), &params())
        .await
        .unwrap();
    assert_eq!(raw, "raw answer");

    let seen = s.seen();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0].path, "/v1/chat/completions");
    assert_eq!(seen[1].path, "/v1/completions");
    assert!(
        seen[0]
            .headers
            .iter()
            .any(|h| h == "authorization: Bearer k123"),
        "{:?}",
        seen[0].headers
    );
    let b = &seen[0].body;
    assert_eq!(b["model"], "test-model");
    assert_eq!(b["max_tokens"], 16);
    assert_eq!(b["seed"], 7);
    assert_eq!(b["top_p"], 0.9);
    assert_eq!(b["stop"][0], "STOP");
    assert_eq!(b["messages"][0]["role"], "system");
    assert_eq!(b["messages"][1]["content"], "capital of France?");
    assert!(b.get("stream").is_none(), "{b}");
    assert_eq!(seen[1].body["prompt"], "raw text");
}

#[tokio::test]
async fn streamed_completion_arrives_in_pieces() {
    // A role-only first event, text split across events and across TCP writes (even inside
    // an event and inside the two bytes of `ö`), a comment, then [DONE] and trailing junk
    // that must not be read as part of the answer.
    let mut tail = delta_event("w\u{f6}rld");
    let split = tail.len() - 8;
    let pieces = vec![
        b"data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"}}]}\n\n".to_vec(),
        delta_event("Hello"),
        b": keep-alive\n\n".to_vec(),
        delta_event(", "),
        tail.drain(..split).collect(),
        tail,
        b"data: [DONE]\n\ndata: {\"garbage after done\"\n\n".to_vec(),
    ];
    let s = Canned::start(vec![Reply::Chunked {
        pieces,
        pause: Duration::from_millis(15),
        stall: None,
    }])
    .await;
    let c = AsyncOpenAiClient::new(s.url(), "m", fast_opts()).unwrap();
    let mut stream = c.stream(&Prompt::user("hi"), &params()).await.unwrap();
    let mut got = Vec::new();
    while let Some(piece) = stream.next().await {
        got.push(piece.unwrap());
    }
    assert_eq!(got.concat(), "Hello, w\u{f6}rld");
    assert!(got.len() >= 3, "pieces arrived as written: {got:?}");
    assert!(got.iter().all(|p| !p.is_empty()));
    let seen = s.seen();
    assert_eq!(seen[0].body["stream"], true);
    assert!(
        seen[0]
            .headers
            .iter()
            .any(|h| h == "accept: text/event-stream")
    );
}

#[tokio::test]
async fn streamed_stop_strings_cut_like_complete() {
    let pieces = ["The answer", " is 4", "2.\nQ", "uestion: next", " one"]
        .iter()
        .map(|t| delta_event(t))
        .chain([b"data: [DONE]\n\n".to_vec()])
        .collect();
    let s = Canned::start(vec![
        Reply::Chunked {
            pieces,
            pause: Duration::from_millis(5),
            stall: None,
        },
        json(
            200,
            r#"{"choices":[{"message":{"content":"The answer is 42.\nQuestion: next one"}}]}"#,
        ),
    ])
    .await;
    let c = AsyncOpenAiClient::new(s.url(), "m", fast_opts()).unwrap();
    let mut gp = params();
    gp.stop = vec!["\nQuestion:".into()];
    let streamed = c
        .stream(&Prompt::user("q"), &gp)
        .await
        .unwrap()
        .into_text()
        .await
        .unwrap();
    let whole = c.complete(&Prompt::user("q"), &gp).await.unwrap().text;
    assert_eq!(streamed, "The answer is 42.");
    assert_eq!(streamed, whole);
}

#[tokio::test]
async fn http_500_with_json_error_is_retried_then_reported() {
    let err_body = r#"{"error":{"message":"model crashed: out of memory","type":"server_error"}}"#;
    let s = Canned::start(vec![
        json(500, err_body),
        json(500, err_body),
        json(500, err_body),
    ])
    .await;
    let c = AsyncOpenAiClient::new(s.url(), "m", fast_opts()).unwrap();
    let e = c.complete(&Prompt::user("x"), &params()).await.unwrap_err();
    match &e {
        LlmError::Http {
            url,
            status,
            body,
            attempts,
        } => {
            assert_eq!(*status, 500);
            assert!(body.contains("model crashed: out of memory"), "{body}");
            assert_eq!(*attempts, 3);
            assert!(url.ends_with("/v1/chat/completions"), "{url}");
        }
        other => panic!("expected Http, got {other:?}"),
    }
    assert!(e.to_string().contains("HTTP 500"), "{e}");
    assert_eq!(s.seen().len(), 3, "1 try + 2 retries");

    // A stream that cannot start reports the same way, before any piece.
    let s = Canned::start(vec![json(500, err_body)]).await;
    let opts = OpenAiOptions {
        max_retries: 0,
        ..fast_opts()
    };
    let c = AsyncOpenAiClient::new(s.url(), "m", opts).unwrap();
    let e = c.stream(&Prompt::user("x"), &params()).await.unwrap_err();
    assert!(
        matches!(&e, LlmError::Http { status: 500, attempts: 1, body, .. } if body.contains("out of memory")),
        "{e:?}"
    );
    // Through the trait it is a backend error that keeps the message.
    let s = Canned::start(vec![json(400, r#"{"error":"unknown model 'nope'"}"#)]).await;
    let c = AsyncOpenAiClient::new(s.url(), "nope", fast_opts()).unwrap();
    let e = AsyncGenerator::generate(&c, &Prompt::user("x"), &params())
        .await
        .unwrap_err();
    assert!(e.to_string().contains("unknown model 'nope'"), "{e}");
    assert_eq!(s.seen().len(), 1, "400 is not retried");
}

#[tokio::test]
async fn a_503_then_an_answer_recovers_with_backoff() {
    let s = Canned::start(vec![
        Reply::Full {
            status: 429,
            content_type: "application/json",
            headers: vec!["retry-after: 0".into()],
            body: br#"{"error":"slow down"}"#.to_vec(),
        },
        json(503, r#"{"error":"warming up"}"#),
        json(200, CHAT_ANSWER),
    ])
    .await;
    let c = AsyncOpenAiClient::new(s.url(), "m", fast_opts()).unwrap();
    let t = Instant::now();
    let text = c
        .complete(&Prompt::user("x"), &params())
        .await
        .unwrap()
        .text;
    assert!(text.starts_with("Paris"), "{text}");
    assert!(
        t.elapsed() >= Duration::from_millis(40),
        "the 503 backoff was not waited"
    );
    assert_eq!(s.seen().len(), 3);
}

#[tokio::test]
async fn malformed_bodies_are_typed_errors() {
    let s = Canned::start(vec![
        json(200, "this is not json"),
        json(200, r#"{"choices":[]}"#),
    ])
    .await;
    let c = AsyncOpenAiClient::new(s.url(), "m", fast_opts()).unwrap();
    let e = c.complete(&Prompt::user("x"), &params()).await.unwrap_err();
    match &e {
        LlmError::InvalidResponse { reason, body, url } => {
            assert!(reason.contains("not JSON"), "{reason}");
            assert!(body.contains("this is not json"), "{body}");
            assert!(url.ends_with("/chat/completions"), "{url}");
        }
        other => panic!("expected InvalidResponse, got {other:?}"),
    }
    let e = c.complete(&Prompt::user("x"), &params()).await.unwrap_err();
    assert!(
        matches!(&e, LlmError::InvalidResponse { reason, .. } if reason.contains("choices")),
        "{e:?}"
    );

    // A malformed event mid-stream: the pieces before it, then one error, then the end.
    let s = Canned::start(vec![Reply::Chunked {
        pieces: vec![
            delta_event("fine"),
            b"data: {\"choices\":[{\"delta\":\n\n".to_vec(),
            delta_event("never seen"),
        ],
        pause: Duration::from_millis(5),
        stall: None,
    }])
    .await;
    let c = AsyncOpenAiClient::new(s.url(), "m", fast_opts()).unwrap();
    let mut stream = c.stream(&Prompt::user("x"), &params()).await.unwrap();
    assert_eq!(stream.next().await.unwrap().unwrap(), "fine");
    let e = stream.next().await.unwrap().unwrap_err();
    assert!(
        matches!(&e, LlmError::InvalidResponse { reason, .. } if reason.contains("not JSON")),
        "{e:?}"
    );
    assert!(stream.next().await.is_none());
}

#[tokio::test]
async fn silent_server_times_out() {
    let s = Canned::start(vec![Reply::Silence(Duration::from_secs(5))]).await;
    let opts = OpenAiOptions {
        timeout: Duration::from_millis(300),
        max_retries: 0,
        ..fast_opts()
    };
    let c = AsyncOpenAiClient::new(s.url(), "m", opts.clone()).unwrap();
    let t = Instant::now();
    let e = c.complete(&Prompt::user("x"), &params()).await.unwrap_err();
    assert!(
        t.elapsed() < Duration::from_secs(3),
        "took {:?}",
        t.elapsed()
    );
    match &e {
        LlmError::Transport {
            reason, attempts, ..
        } => {
            assert!(reason.contains("timed out after 300ms"), "{reason}");
            assert_eq!(*attempts, 1);
        }
        other => panic!("expected Transport, got {other:?}"),
    }

    // A stream that starts, then stalls: the piece that came, then a timeout error.
    let s = Canned::start(vec![Reply::Chunked {
        pieces: vec![delta_event("partial")],
        pause: Duration::ZERO,
        stall: Some(Duration::from_secs(5)),
    }])
    .await;
    let c = AsyncOpenAiClient::new(s.url(), "m", opts).unwrap();
    let t = Instant::now();
    let mut stream = c.stream(&Prompt::user("x"), &params()).await.unwrap();
    assert_eq!(stream.next().await.unwrap().unwrap(), "partial");
    let e = stream.next().await.unwrap().unwrap_err();
    assert!(
        t.elapsed() < Duration::from_secs(3),
        "took {:?}",
        t.elapsed()
    );
    assert!(
        matches!(&e, LlmError::Transport { reason, .. } if reason.contains("timed out")),
        "{e:?}"
    );
    assert!(stream.next().await.is_none());
}

#[tokio::test]
async fn connection_refused_is_a_transport_error() {
    // Bind then drop a listener to get a port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let c =
        AsyncOpenAiClient::new(format!("http://127.0.0.1:{port}/v1"), "m", fast_opts()).unwrap();
    let e = c.complete(&Prompt::user("x"), &params()).await.unwrap_err();
    assert!(
        matches!(e, LlmError::Transport { attempts: 3, .. }),
        "{e:?}"
    );
    let msg = e.to_string();
    assert!(msg.contains(&format!("127.0.0.1:{port}")), "{msg}");
    // The URL is said once, by our error, not again by reqwest's.
    assert_eq!(
        msg.matches(&format!("127.0.0.1:{port}")).count(),
        1,
        "{msg}"
    );
}

#[tokio::test]
async fn clients_are_send_and_spawnable() {
    let s = Canned::start(vec![json(200, CHAT_ANSWER), json(200, CHAT_ANSWER)]).await;
    let c = AsyncOpenAiClient::new(s.url(), "m", fast_opts()).unwrap();
    let tasks: Vec<_> = (0..2)
        .map(|_| {
            let c = c.clone();
            tokio::spawn(async move { c.complete(&Prompt::user("x"), &params()).await })
        })
        .collect();
    for t in tasks {
        assert!(t.await.unwrap().unwrap().text.starts_with("Paris"));
    }
}
