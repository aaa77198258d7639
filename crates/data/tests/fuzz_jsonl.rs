//! Fuzz target: the JSON Lines readers of `pgraphrag metrics` ([`parse_pairs`]) and
//! `pgraphrag embed` ([`parse_texts`]), on arbitrary bytes, on structured mutations of a
//! pairs file and a texts file made from real reviews (the Amazon dev split, as in
//! `fuzz_split.rs`; built-in texts when it is absent), and a round trip of arbitrary records.
//!
//! Bad input must give a [`JsonlError`] naming the file and a line inside it, never a panic.
//! Budget and `PGRAPHRAG_FUZZ_CASES`: see `support/fuzz.rs`.

use std::path::PathBuf;
use std::sync::OnceLock;

use pgraphrag_data::JsonlError;
use pgraphrag_data::jsonl::{parse_pairs, parse_texts};
use proptest::prelude::*;
use serde_json::{Value, json};

#[path = "support/fuzz.rs"]
mod fuzz;

const NAME: &str = "fuzz.jsonl";

const JSON_TOKENS: &[&[u8]] = &[
    b"{",
    b"}",
    b"[",
    b"]",
    b"\"",
    b":",
    b",",
    b"null",
    b"true",
    b"0",
    b"1e999",
    b"18446744073709551616",
    b"\"\\ud800\"",
    b"\"\\u0000\"",
    b"\\",
    b"\"id\"",
    b"\"prediction\"",
    b"\"reference\"",
    b"\"text\"",
    b"\"\"",
    b"{}",
    b"[[[[",
    b"\xff",
    b"\xe2\x80",
    b"\n",
    b"\r\n",
    b"\n\n",
    b" ",
    b"\t",
];

/// Review texts: the first reviews of the real Amazon dev split, or built-in ones.
fn texts() -> &'static [String] {
    static T: OnceLock<Vec<String>> = OnceLock::new();
    T.get_or_init(|| {
        let dir = match std::env::var_os("PGRAPHRAG_DATA") {
            Some(v) if !v.is_empty() => PathBuf::from(v),
            _ => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data"),
        };
        let p = dir.join("pgraphrag/amazon_dev.json");
        match pgraphrag_data::load_split(&p) {
            Ok(s) => s
                .users
                .iter()
                .flat_map(|u| &u.profile)
                .take(6)
                .filter_map(|r| r.text.clone())
                .collect(),
            Err(e) => {
                eprintln!("fuzz_jsonl: {e}; using built-in texts");
                [
                    "Great soap, smells nice.",
                    "Arrived broken — “not happy”.\tNo.",
                    "",
                ]
                .map(String::from)
                .to_vec()
            }
        }
    })
}

fn pairs_seed() -> &'static [u8] {
    static S: OnceLock<Vec<u8>> = OnceLock::new();
    S.get_or_init(|| {
        let t = texts();
        let mut out = String::new();
        for i in 0..t.len() {
            let id = if i % 2 == 0 {
                json!(i)
            } else {
                json!(format!("u{i}"))
            };
            let line = json!({"id": id, "prediction": t[i], "reference": t[(i + 1) % t.len()]});
            out.push_str(&line.to_string());
            out.push('\n');
        }
        out.into_bytes()
    })
}

fn texts_seed() -> &'static [u8] {
    static S: OnceLock<Vec<u8>> = OnceLock::new();
    S.get_or_init(|| {
        let mut out = String::new();
        for (i, t) in texts().iter().enumerate() {
            out.push_str(&json!({"id": [i, "x"], "text": t}).to_string());
            out.push_str(if i % 2 == 0 { "\n" } else { "\r\n\n" });
        }
        out.into_bytes()
    })
}

/// The error's line lies in the input and its message names the file.
fn check_err(e: &JsonlError, bytes: &[u8]) -> Result<(), TestCaseError> {
    let lines = bytes.iter().filter(|&&b| b == b'\n').count() + 1;
    let line = match e {
        JsonlError::Read { line, .. }
        | JsonlError::NotJson { line, .. }
        | JsonlError::NotAnObject { line, .. }
        | JsonlError::Missing { line, .. }
        | JsonlError::NotAString { line, .. } => *line,
        other => return Err(TestCaseError::fail(format!("unexpected {other:?}"))),
    };
    prop_assert!((1..=lines).contains(&line), "line {line} of {lines}: {e}");
    prop_assert!(e.to_string().contains(NAME), "{e}");
    Ok(())
}

fn check(bytes: &[u8]) -> Result<(), TestCaseError> {
    let lines = bytes.iter().filter(|&&b| b == b'\n').count() + 1;
    match fuzz::no_panic(bytes, |b| parse_pairs(b, NAME))? {
        Ok(p) => prop_assert!(p.len() <= lines),
        Err(e) => check_err(&e, bytes)?,
    }
    match fuzz::no_panic(bytes, |b| parse_texts(b, NAME))? {
        Ok(t) => prop_assert!(t.len() <= lines),
        Err(e) => check_err(&e, bytes)?,
    }
    Ok(())
}

/// Any JSON value up to a small depth (the `id` field).
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from), // NaN and infinities become null
        ".*".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            proptest::collection::btree_map(".{0,4}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(fuzz::config("jsonl/bytes", 250_000))]
    #[test]
    fn jsonl_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        check(&bytes)?;
    }
}

proptest! {
    #![proptest_config(fuzz::config("jsonl/mutations", 80_000))]
    #[test]
    fn jsonl_mutations_of_real_files(edits in fuzz::edits(8), texts in any::<bool>()) {
        let seed = if texts { texts_seed() } else { pairs_seed() };
        check(&fuzz::apply(seed, &edits, JSON_TOKENS))?;
    }
}

proptest! {
    #![proptest_config(fuzz::config("jsonl/roundtrip", 60_000))]
    /// Records written as JSON lines read back unchanged, whatever their strings hold.
    #[test]
    fn jsonl_roundtrip(rows in proptest::collection::vec((json_value(), ".*", "\\PC*"), 0..6)) {
        let mut pairs = String::new();
        let mut texts = String::new();
        for (id, a, b) in &rows {
            pairs.push_str(&json!({"reference": b, "id": id, "prediction": a}).to_string());
            pairs.push('\n');
            texts.push_str(&json!({"text": a, "id": id}).to_string());
            texts.push_str("\n \n");
        }
        let p = fuzz::no_panic(pairs.as_bytes(), |b| parse_pairs(b, NAME))?.unwrap();
        let t = fuzz::no_panic(texts.as_bytes(), |b| parse_texts(b, NAME))?.unwrap();
        prop_assert_eq!(p.len(), rows.len());
        prop_assert_eq!(t.len(), rows.len());
        for ((id, a, b), (p, t)) in rows.iter().zip(p.iter().zip(&t)) {
            prop_assert_eq!(&p.id, id);
            prop_assert_eq!(&p.prediction, a);
            prop_assert_eq!(&p.reference, b);
            prop_assert_eq!(&t.id, id);
            prop_assert_eq!(&t.text, a);
        }
    }
}

#[test]
fn the_seeds_parse() {
    assert_eq!(
        parse_pairs(pairs_seed(), NAME).unwrap().len(),
        texts().len()
    );
    assert_eq!(
        parse_texts(texts_seed(), NAME).unwrap().len(),
        texts().len()
    );
}
