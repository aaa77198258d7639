//! Parity with nltk 3.9.1 on the golden fixtures made by `scripts/fixtures/text_tokenize.py`.

mod common;
use common::{diff, fixture, report, strs};
use pgraphrag_text::{
    Language, WordTokenizeOptions, python_lower, sent_tokenize, word_tokenize, word_tokenize_lower,
    word_tokenize_with,
};

#[test]
fn word_tokenize_matches_nltk() {
    let fx = fixture("word_tokenize.json");
    let cases = fx["word_tokenize"].as_array().expect("word_tokenize array");
    assert!(cases.len() >= 1000, "fixture too small");
    let real = cases
        .iter()
        .filter(|c| {
            !c["name"].as_str().unwrap().starts_with("hard/")
                && !c["name"].as_str().unwrap().starts_with("fuzz/")
        })
        .count();
    assert!(real >= 1000, "only {real} real texts in the fixture");
    let mut failures = Vec::new();
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let input = c["input"].as_str().unwrap();
        if let Some(d) = diff(&strs(&c["tokens"]), &word_tokenize(input)) {
            failures.push(format!("[{name}] raw {input:?}: {d}"));
        }
        if let Some(d) = diff(&strs(&c["lower_tokens"]), &word_tokenize_lower(input)) {
            failures.push(format!("[{name}] lower {input:?}: {d}"));
        }
    }
    report("word_tokenize", &failures, cases.len() * 2);
}

#[test]
fn python_lower_matches_str_lower() {
    let fx = fixture("word_tokenize.json");
    let cases = fx["word_tokenize"].as_array().unwrap();
    let mut failures = Vec::new();
    for c in cases {
        let input = c["input"].as_str().unwrap();
        let want = c["lower_input"].as_str().unwrap();
        if python_lower(input) != want {
            failures.push(format!("[{}] {input:?}", c["name"]));
        }
    }
    report("python_lower", &failures, cases.len());
}

#[test]
fn preserve_line_matches_nltk() {
    let fx = fixture("word_tokenize.json");
    let cases = fx["preserve_line"].as_array().unwrap();
    let opts = WordTokenizeOptions {
        preserve_line: true,
        ..Default::default()
    };
    let mut failures = Vec::new();
    for c in cases {
        let input = c["input"].as_str().unwrap();
        if let Some(d) = diff(&strs(&c["tokens"]), &word_tokenize_with(input, &opts)) {
            failures.push(format!("[{}] {input:?}: {d}", c["name"]));
        }
    }
    report("word_tokenize(preserve_line=True)", &failures, cases.len());
}

fn check_sents(key: &str, lang: Language) {
    let fx = fixture("sent_tokenize.json");
    let cases = fx[key].as_array().unwrap();
    assert!(!cases.is_empty());
    let mut failures = Vec::new();
    for c in cases {
        let input = c["input"].as_str().unwrap();
        if let Some(d) = diff(&strs(&c["sentences"]), &sent_tokenize(input, lang)) {
            failures.push(format!("[{}] {input:?}: {d}", c["name"]));
        }
    }
    report(&format!("sent_tokenize({key})"), &failures, cases.len());
}

#[test]
fn sent_tokenize_english_matches_nltk() {
    check_sents("english", Language::English);
}

#[test]
fn sent_tokenize_portuguese_matches_nltk() {
    check_sents("portuguese", Language::Portuguese);
}
