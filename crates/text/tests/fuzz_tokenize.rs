//! Fuzz target: [`word_tokenize`] and [`sent_tokenize`] on arbitrary UTF-8, on odd Unicode
//! (combining marks, joiners, bidi controls, non-characters, scripts without spaces), on very
//! long tokens, and on byte-level mutations of real review texts (the inputs of
//! `tests/fixtures/word_tokenize.json`) that are still UTF-8.
//!
//! No input may panic; tokens are never empty and hold no whitespace; the sentences keep
//! every non-whitespace character, in order. Budget and `PGRAPHRAG_FUZZ_CASES`: see
//! `crates/data/tests/support/fuzz.rs`.

use std::sync::OnceLock;

use pgraphrag_text::{Language, is_python_whitespace, sent_tokenize, word_tokenize};
use proptest::prelude::*;

#[path = "../../data/tests/support/fuzz.rs"]
mod fuzz;

/// Odd Unicode and punctuation the tokenizers treat specially.
const ODD: &[&str] = &[
    "\u{301}",
    "\u{200d}",
    "\u{200b}",
    "\u{feff}",
    "\u{202e}",
    "\u{2066}",
    "\u{fffd}",
    "\u{ffff}",
    "\u{10ffff}",
    "\u{e000}",
    "\u{85}",
    "\u{2028}",
    "\u{2029}",
    "\u{3000}",
    "\u{a0}",
    "\u{1c}",
    "\u{0}",
    "\r",
    "\n",
    "\t",
    " ",
    "İ",
    "ı",
    "ß",
    "ſ",
    "\u{212a}",
    "Σ",
    "ǅ",
    "ﬃ",
    "ﬀ",
    "日本語",
    "ไทย",
    "한국어",
    "العربية",
    "עברית",
    "😀",
    "👍🏽",
    "👨‍👩‍👧",
    "🇧🇷",
    "e\u{301}",
    "...",
    "…",
    ".",
    "!",
    "?",
    "'",
    "''",
    "\"",
    "`",
    "``",
    "«",
    "»",
    "“",
    "”",
    "‘",
    "’",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "<",
    ">",
    "--",
    "—",
    "Mr.",
    "U.S.",
    "e.g.",
    "3.5",
    "1,000",
    "can't",
    "gonna",
    "n't",
    "'s",
    "'ll",
    "cannot",
    "Dr",
    "1.",
    "A.",
    "Sr.",
    "http://x.y/z?a=b",
    "a@b.c",
    "$",
    "%",
    "&",
    "#",
    "_",
    "-",
    "\\",
    "/",
    "|",
    "~",
    "^",
];

fn check(s: &str) -> Result<(), TestCaseError> {
    let toks = fuzz::no_panic(s, word_tokenize)?;
    for t in &toks {
        prop_assert!(!t.is_empty(), "empty token from {:?}", s);
        prop_assert!(
            !t.chars().any(is_python_whitespace),
            "token {:?} from {:?}",
            t,
            s
        );
    }
    let strip = |x: &str| {
        x.chars()
            .filter(|&c| !is_python_whitespace(c))
            .collect::<String>()
    };
    for lang in [Language::English, Language::Portuguese] {
        let sents = fuzz::no_panic(s, |s| sent_tokenize(s, lang))?;
        prop_assert_eq!(strip(&sents.concat()), strip(s), "sentences of {:?}", s);
    }
    Ok(())
}

/// Review texts from the word_tokenize fixture (the first 200).
fn real_texts() -> &'static [String] {
    static T: OnceLock<Vec<String>> = OnceLock::new();
    T.get_or_init(|| {
        let p = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/word_tokenize.json"
        );
        let v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(p).expect("the word_tokenize fixture"))
                .expect("JSON");
        v["word_tokenize"]
            .as_array()
            .expect("cases")
            .iter()
            .filter_map(|c| c["input"].as_str().map(String::from))
            .take(200)
            .collect()
    })
}

fn odd_text() -> impl Strategy<Value = String> {
    let atom = prop_oneof![
        3 => proptest::sample::select(ODD).prop_map(String::from),
        1 => any::<char>().prop_map(String::from),
        1 => "[a-zA-Z]{1,8}",
    ];
    proptest::collection::vec(atom, 0..40).prop_map(|v| v.concat())
}

/// One very long token (or run of punctuation / spaces), possibly inside other text.
fn long_text() -> impl Strategy<Value = String> {
    (
        proptest::sample::select(ODD),
        proptest::sample::select(&["a", "x", "0", ".", "'", "-", "\u{301}", "😀", "é", "A."][..]),
        1_000usize..40_000,
        odd_text(),
    )
        .prop_map(|(pre, unit, n, post)| format!("{pre}{}{post}", unit.repeat(n)))
}

proptest! {
    #![proptest_config(fuzz::config("tokenize/utf8", 400_000))]
    #[test]
    fn tokenize_arbitrary_utf8(s in any::<String>()) {
        check(&s)?;
    }
}

proptest! {
    #![proptest_config(fuzz::config("tokenize/odd-unicode", 240_000))]
    #[test]
    fn tokenize_odd_unicode(s in odd_text()) {
        check(&s)?;
    }
}

proptest! {
    #![proptest_config(fuzz::config("tokenize/long-tokens", 7_000))]
    #[test]
    fn tokenize_very_long_tokens(s in long_text()) {
        check(&s)?;
    }
}

proptest! {
    #![proptest_config(fuzz::config("tokenize/mutations", 200_000))]
    #[test]
    fn tokenize_mutations_of_real_text(i in any::<proptest::sample::Index>(), edits in fuzz::edits(8)) {
        let texts = real_texts();
        let seed = texts[i.index(texts.len())].as_bytes();
        let dict: Vec<&[u8]> = ODD.iter().map(|s| s.as_bytes()).collect();
        let b = fuzz::apply(seed, &edits, &dict);
        check(&String::from_utf8_lossy(&b))?;
    }
}
