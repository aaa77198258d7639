//! OpenAiClient against a real llama.cpp-backed OpenAI-compatible server: the `cyllama`
//! wheel's server (`python -m cyllama.llama.server`, llama.cpp linked in, prebuilt on PyPI),
//! serving SmolLM2 on loopback. With the `async` feature, AsyncOpenAiClient too: the same
//! greedy request gives the blocking client's answer, whole and streamed.
//!
//! Needs `pip install --no-deps cyllama==0.2.18` for `$PGRAPHRAG_PYTHON` (default `python3`)
//! and the model from `scripts/fetch-llms.sh --smollm-only`. Fails loudly when either is missing.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use pgraphrag_core::{GenParams, Prompt};
use pgraphrag_llm::{OpenAiClient, OpenAiOptions};

#[path = "support/model.rs"]
mod model;

#[path = "support/llama_server.rs"]
mod llama_server;

#[test]
fn chat_completion_from_llama_cpp_server() {
    let model: PathBuf = model::model_path();
    assert!(
        model.exists(),
        "{} is missing: run scripts/fetch-llms.sh --smollm-only",
        model.display()
    );
    let py = std::env::var("PGRAPHRAG_PYTHON").unwrap_or_else(|_| "python3".into());
    let ok = Command::new(&py)
        .args(["-c", "import cyllama.llama.server"])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(
        ok,
        "{py} cannot import cyllama: run `{py} -m pip install --no-deps cyllama==0.2.18`"
    );
    let server = llama_server::LlamaServer::start(&py, &model);
    let port = server.port;
    let c = OpenAiClient::new(
        format!("http://127.0.0.1:{port}/v1"),
        "smollm2",
        OpenAiOptions {
            timeout: Duration::from_secs(120),
            ..Default::default()
        },
    )
    .unwrap();
    let params = GenParams {
        max_tokens: 12,
        temperature: 0.0,
        ..Default::default()
    };
    let p = Prompt::user("What is the capital of France?");
    let full = c.complete(&p, &params).unwrap();
    assert!(!full.text.trim().is_empty(), "empty completion: {full:?}");
    assert!(full.completion_tokens.unwrap_or(0) <= 12, "{full:?}");
    // A second request on the same connection pool is served too. (cyllama 0.2.18's Python
    // server answers repeated requests on its single slot with an empty completion, so the
    // text is not compared.)
    let again = c
        .complete(&Prompt::user("Name a colour."), &params)
        .unwrap();
    assert!(again.finish_reason.is_some(), "{again:?}");

    #[cfg(feature = "async")]
    async_client_gives_the_same_answer(&py, &model, &p, &params, &full.text);
}

/// AsyncOpenAiClient's answer to the greedy request, whole and streamed, equals the blocking
/// client's. Each request goes to a server of its own, fresh: cyllama 0.2.18 answers a second
/// request on its single slot with an empty completion. (cyllama's server also ignores
/// `"stream": true` and answers in one JSON body, which `stream` then hands out in one piece;
/// the event-stream path is covered by `tests/openai_async.rs`.)
#[cfg(feature = "async")]
fn async_client_gives_the_same_answer(
    py: &str,
    model: &std::path::Path,
    prompt: &Prompt,
    params: &GenParams,
    blocking_text: &str,
) {
    use pgraphrag_llm::AsyncOpenAiClient;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let client = |port: u16| {
        AsyncOpenAiClient::new(
            format!("http://127.0.0.1:{port}/v1"),
            "smollm2",
            OpenAiOptions {
                timeout: Duration::from_secs(120),
                ..Default::default()
            },
        )
        .unwrap()
    };
    let whole = {
        let server = llama_server::LlamaServer::start(py, model);
        rt.block_on(client(server.port).complete(prompt, params))
            .unwrap()
    };
    assert_eq!(whole.text, blocking_text, "{whole:?}");
    let streamed = {
        let server = llama_server::LlamaServer::start(py, model);
        rt.block_on(async {
            client(server.port)
                .stream(prompt, params)
                .await?
                .into_text()
                .await
        })
        .unwrap()
    };
    assert_eq!(streamed, blocking_text);
}
