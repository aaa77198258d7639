//! Our PGraphRAG tokenizer (`nltk.word_tokenize(text.lower())`) reproduces the nltk tokens
//! stored in the BM25 golden fixture, from the raw texts of the real splits.
//!
//! Needs the PGraphRAG dev splits under `$PGRAPHRAG_DATA` (fallback `../shared/data` from the
//! repository root); fails if they are missing.

use pgraphrag_retrieval::sparse::{PgraphragTokenizer, Tokenizer};
use serde::Deserialize;
use serde_json::Value;
use std::collections::HashMap;
use std::path::PathBuf;

#[derive(Deserialize)]
struct Fixture {
    vocab: Vec<String>,
    lists: Vec<ListCase>,
}

#[derive(Deserialize)]
struct ListCase {
    dataset: String,
    user_index: usize,
    query_field: String,
    doc_refs: Vec<(usize, usize)>,
    query: Vec<usize>,
    docs: Vec<Vec<usize>>,
}

fn data_dir() -> PathBuf {
    match std::env::var_os("PGRAPHRAG_DATA") {
        Some(p) => p.into(),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data"),
    }
}

/// The notebook's field formatting: a missing or empty field is the string `None`.
fn field(review: &Value, name: &str) -> String {
    match review.get(name).and_then(Value::as_str) {
        Some(s) if !s.is_empty() => s.to_owned(),
        _ => "None".to_owned(),
    }
}

#[test]
fn pgraphrag_tokenizer_matches_stored_nltk_tokens() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/bm25_golden.json"
    );
    let fx: Fixture = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut splits: HashMap<String, Vec<Value>> = HashMap::new();
    let (mut texts, mut tokens, mut mismatches) = (0usize, 0usize, Vec::new());
    for case in &fx.lists {
        let users = splits.entry(case.dataset.clone()).or_insert_with(|| {
            let p = data_dir()
                .join("pgraphrag")
                .join(format!("{}_dev.json", case.dataset));
            let text = std::fs::read_to_string(&p).unwrap_or_else(|e| {
                panic!(
                    "{}: {e}; set PGRAPHRAG_DATA to the shared data folder",
                    p.display()
                )
            });
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        });
        let review = |u: usize, r: usize| &users[u]["profile"][r];
        let target = review(case.user_index, 0);
        let query = target
            .get(&case.query_field)
            .and_then(Value::as_str)
            .unwrap_or("")
            .trim_matches(|c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c));
        let mut pairs = vec![(query.to_owned(), &case.query)];
        for (&(u, r), toks) in case.doc_refs.iter().zip(&case.docs) {
            let rv = review(u, r);
            pairs.push((
                format!("{} {}", field(rv, "title"), field(rv, "text")),
                toks,
            ));
        }
        for (text, want) in pairs {
            let want: Vec<&str> = want.iter().map(|&t| fx.vocab[t].as_str()).collect();
            let got = PgraphragTokenizer.tokenize(&text);
            texts += 1;
            tokens += want.len();
            if got != want {
                mismatches.push(format!(
                    "{} user {}: {text:?}\n  ours {got:?}\n  nltk {want:?}",
                    case.dataset, case.user_index
                ));
            }
        }
    }
    eprintln!(
        "tokenizer parity: {texts} texts, {tokens} tokens, {} mismatches",
        mismatches.len()
    );
    assert!(
        mismatches.is_empty(),
        "{} of {texts} texts tokenize differently:\n{}",
        mismatches.len(),
        mismatches[..mismatches.len().min(5)].join("\n")
    );
}
