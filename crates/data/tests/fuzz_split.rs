//! Fuzz target: the PGraphRAG split loader, [`parse_split`], on arbitrary bytes and on
//! structured mutations (bit flips, JSON tokens spliced in, truncations, repeated ranges) of
//! a slice of the real Amazon dev split (`$PGRAPHRAG_DATA/pgraphrag/amazon_dev.json`, else
//! `../shared/data` beside the checkout; a built-in sample when neither exists).
//!
//! Bad input must give a typed error naming the file, never a panic. Budget and
//! `PGRAPHRAG_FUZZ_CASES`: see `support/fuzz.rs`.

use std::path::PathBuf;
use std::sync::OnceLock;

use pgraphrag_data::{Error, IdPolicy, parse_split};
use pgraphrag_graph::GraphOptions;
use proptest::prelude::*;

#[path = "support/fuzz.rs"]
mod fuzz;

const NAME: &str = "fuzz.json";

/// JSON tokens and odd values spliced into the real split.
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
    b"false",
    b"0",
    b"-0",
    b"1e999",
    b"-1e400",
    b"18446744073709551616",
    b"-9223372036854775809",
    b"1.5",
    b"NaN",
    b"\"\\ud800\"",
    b"\"\\u0000\"",
    b"\\",
    b"\"id\"",
    b"\"profile\"",
    b"\"pid\"",
    b"\"productAsin\"",
    b"\"rating\"",
    b"\"title\"",
    b"\"text\"",
    b"[]",
    b"{}",
    b"\"\"",
    b"[[[[[[[[",
    b"\xff",
    b"\xc3",
    b"\xe2\x80",
    b"\n",
    b" ",
    b"\t",
];

const BUILT_IN: &str = r#"[{"id":"u1","profile":[{"title":"T","text":"X","rating":5,"pid":"p1"},{"title":"","text":"Y","rating":4.0,"pid":7}]},
{"id":"u2","profile":[{"title":"A","text":"B","rating":1,"productAsin":"p1"}]}]"#;

/// The first three users of the real Amazon dev split, pretty-printed (about 2 KB).
fn seed() -> &'static [u8] {
    static SEED: OnceLock<Vec<u8>> = OnceLock::new();
    SEED.get_or_init(|| {
        let dir = match std::env::var_os("PGRAPHRAG_DATA") {
            Some(v) if !v.is_empty() => PathBuf::from(v),
            _ => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data"),
        };
        let p = dir.join("pgraphrag/amazon_dev.json");
        match std::fs::read(&p) {
            Ok(b) => {
                let v: serde_json::Value = serde_json::from_slice(&b).expect("the real split");
                let users: Vec<_> = v.as_array().expect("a list").iter().take(3).collect();
                serde_json::to_vec_pretty(&users).unwrap()
            }
            Err(e) => {
                eprintln!(
                    "fuzz_split: {} unreadable ({e}); mutating the built-in sample",
                    p.display()
                );
                BUILT_IN.as_bytes().to_vec()
            }
        }
    })
}

/// Parses `bytes`; on success builds the graph too. Checks the result's invariants.
fn check(bytes: &[u8]) -> Result<(), TestCaseError> {
    let r = fuzz::no_panic(bytes, |b| {
        parse_split(b, NAME).map(|s| {
            let g = s.to_graph(GraphOptions::notebook(), IdPolicy::KeepJsonType);
            let _ = s.to_graph(GraphOptions::default(), IdPolicy::Normalize);
            (s, g)
        })
    })?;
    match r {
        Ok((s, g)) => {
            prop_assert!(s.users.iter().all(|u| !u.profile.is_empty()));
            prop_assert_eq!(g.num_reviews() + g.num_overwritten(), s.num_reviews());
        }
        Err(Error::Json { line, .. }) => prop_assert!(line >= 1),
        Err(e) => prop_assert!(e.to_string().contains(NAME), "{e}"),
    }
    Ok(())
}

proptest! {
    #![proptest_config(fuzz::config("split/bytes", 400_000))]
    #[test]
    fn split_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        check(&bytes)?;
    }
}

proptest! {
    #![proptest_config(fuzz::config("split/mutations", 300_000))]
    #[test]
    fn split_mutations_of_the_real_split(edits in fuzz::edits(8)) {
        let b = fuzz::apply(seed(), &edits, JSON_TOKENS);
        check(&b)?;
    }
}

#[test]
fn the_seed_parses() {
    let s = parse_split(seed(), NAME).unwrap();
    assert!(!s.users.is_empty());
}
