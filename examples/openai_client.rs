//! Generation through any OpenAI-compatible server (OpenAI, llama.cpp's `llama-server`, vLLM,
//! Ollama's `/v1`, ...) with `pgraphrag_llm::OpenAiClient`, a `Generator` like the local GGUF
//! models: everything that takes a `Generator` (the eval grid, the CLI) runs on it unchanged.
//!
//! ```sh
//! llama-server -m models/SmolLM2-135M-Instruct.Q4_1.gguf --port 8080 &
//! cargo run -p pgraphrag-examples --example openai_client -- --url http://127.0.0.1:8080/v1 \
//!     --model smollm2 [--prompt "What is the capital of France?"] [--max-tokens 16]
//! ```
//! The API key, if the server wants one, comes from `$OPENAI_API_KEY`.
use anyhow::{Context, bail};
use pgraphrag_core::{GenParams, Prompt};
use pgraphrag_llm::{OpenAiClient, OpenAiOptions};

fn main() -> anyhow::Result<()> {
    let (mut url, mut model) = (None, None);
    let mut prompt = "What is the capital of France?".to_string();
    let mut max_tokens = 16;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let v = args.next().with_context(|| format!("{a} needs a value"))?;
        match a.as_str() {
            "--url" => url = Some(v),
            "--model" => model = Some(v),
            "--prompt" => prompt = v,
            "--max-tokens" => max_tokens = v.parse()?,
            _ => bail!(
                "usage: openai_client --url URL --model NAME [--prompt TEXT] [--max-tokens N]"
            ),
        }
    }
    let (url, model) = url.zip(model).context("--url and --model are required")?;
    let key = std::env::var("OPENAI_API_KEY")
        .ok()
        .filter(|k| !k.is_empty());
    let client = OpenAiClient::new(url, model, OpenAiOptions::default().with_api_key(key))?;
    let params = GenParams {
        max_tokens,
        temperature: 0.0,
        ..Default::default()
    };
    // `Generator::generate` returns the text alone; `complete` also gives the usage figures.
    let c = client.complete(&Prompt::user(prompt), &params)?;
    println!("{}", c.text.trim());
    println!(
        "finish_reason: {}, prompt_tokens: {}, completion_tokens: {}",
        c.finish_reason.as_deref().unwrap_or("?"),
        c.prompt_tokens.map_or("?".into(), |n| n.to_string()),
        c.completion_tokens.map_or("?".into(), |n| n.to_string()),
    );
    Ok(())
}
