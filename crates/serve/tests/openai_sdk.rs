//! A real client we did not write: the `openai` Python package (pinned in scripts/test.sh),
//! unchanged, asks `pgraphrag serve` for personalized chat completions, whole and streamed,
//! answered by the native engine with SmolLM2-135M; every answer lists the documents it used,
//! which are the user's context for the same request.
//!
//! Needs `$PGRAPHRAG_PYTHON` (default `python3`) with `openai==2.8.1` (scripts/test.sh
//! installs it into models/py) and models/SmolLM2-135M-Instruct.Q4_1.gguf
//! (scripts/fetch-llms.sh --smollm-only).

use std::path::{Path, PathBuf};
use std::process::Command;

use pgraphrag_serve::{Backend, ServiceOptions, store::Store};
use serde_json::{Value, json};

mod support;
use support::*;

fn model_path() -> PathBuf {
    if let Some(p) = std::env::var_os("PGRAPHRAG_MODEL").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    let rel = Path::new("models").join("SmolLM2-135M-Instruct.Q4_1.gguf");
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|d| d.join(&rel))
        .find(|p| p.exists())
        .unwrap_or(rel)
}

#[test]
fn the_openai_python_package_gets_personalized_answers() {
    let py = std::env::var("PGRAPHRAG_PYTHON").unwrap_or_else(|_| "python3".into());
    let has_sdk = Command::new(&py)
        .args(["-c", "import openai"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        has_sdk,
        "{py} cannot import openai: run scripts/test.sh (it installs openai==2.8.1 into models/py), \
         or `{py} -m pip install openai==2.8.1`"
    );
    let model = model_path();
    assert!(
        model.exists(),
        "{} is missing: run scripts/fetch-llms.sh --smollm-only",
        model.display()
    );
    let gguf = pgraphrag_llm::GgufModel::load(&model, Default::default()).unwrap();
    let tokenizer = gguf.tokenizer().clone();
    let s = start(
        Store::in_memory().unwrap(),
        ServiceOptions {
            backend: Some(Backend::local_counted(gguf, tokenizer, "smollm2")),
            summaries: None,
            ..Default::default()
        },
    );
    for (user, doc, text) in [
        ("ann", "1", "Lavender scent, soft hair"),
        ("ann", "2", "My favourite lavender soap"),
        ("bob", "1", "Lavender soap that lasts"),
        ("cat", "1", "Dry skin after a week"),
    ] {
        let item = if doc == "1" && user == "ann" {
            "shampoo"
        } else {
            "soap"
        };
        let (st, v) = put(&s, ACME, user, doc, json!({"text": text, "item": item}));
        assert_eq!(st, 200, "{v}");
    }
    // The documents the same request's context holds.
    let q = "Write a one-line review of a lavender soap.";
    let (st, c) = ctx(
        &s,
        ACME,
        json!({"user": "ann", "item": "soap", "query": q, "scope": "both", "k": 2}),
    );
    assert_eq!(st, 200, "{c}");
    let expected = docs(&c);
    // ann's own review of the soap is the target's item: PGraphRAG leaves it out.
    assert_eq!(expected.len(), 3, "{c}");

    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/openai_sdk.py");
    let out = Command::new(&py)
        .arg(&script)
        .args([&s.base, ACME])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the openai package failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    for mode in ["whole", "stream"] {
        let a = &v[mode];
        assert!(
            !a["text"].as_str().unwrap_or("").trim().is_empty(),
            "{mode}: empty answer: {v}"
        );
        assert!(
            ["stop", "length"].contains(&a["finish_reason"].as_str().unwrap_or("")),
            "{mode}: {v}"
        );
        let used: Vec<(String, String)> = a["pgraphrag"]["documents"]
            .as_array()
            .unwrap_or_else(|| panic!("{mode}: no documents listed: {v}"))
            .iter()
            .map(|d| {
                (
                    d["user"].as_str().unwrap().to_string(),
                    d["doc"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        assert_eq!(used, expected, "{mode}: {v}");
    }
    // Twelve tokens asked for: a 135M model's review runs longer, so both answers are cut.
    assert_eq!(v["whole"]["finish_reason"], "length", "{v}");
    assert_eq!(v["stream"]["finish_reason"], "length", "{v}");
    assert!(v["stream"]["chunks"].as_u64().unwrap() >= 3, "{v}");
}
