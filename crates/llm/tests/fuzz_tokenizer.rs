//! Fuzz target: the SmolLM2 tokenizer rebuilt from the GGUF metadata ([`LlmTokenizer`],
//! loaded once from `models/SmolLM2-135M-Instruct.Q4_1.gguf`): `encode` on arbitrary strings
//! (odd Unicode, special-token texts, long runs) and `decode` on arbitrary ids, including
//! ids past the vocabulary.
//!
//! No input may panic; text that encodes without special ids decodes back to itself.
//! Budget and `PGRAPHRAG_FUZZ_CASES`: see `crates/data/tests/support/fuzz.rs`.

use std::collections::HashSet;
use std::sync::OnceLock;

use pgraphrag_llm::LlmTokenizer;
use proptest::prelude::*;

#[path = "../../data/tests/support/fuzz.rs"]
mod fuzz;
#[path = "support/model.rs"]
mod model;

/// Ids of the special tokens (dropped by `decode`).
fn specials() -> &'static HashSet<u32> {
    static S: OnceLock<HashSet<u32>> = OnceLock::new();
    S.get_or_init(|| {
        tokenizer()
            .inner()
            .get_added_tokens_decoder()
            .iter()
            .filter(|(_, t)| t.special)
            .map(|(&i, _)| i)
            .collect()
    })
}

fn tokenizer() -> &'static LlmTokenizer {
    static T: OnceLock<LlmTokenizer> = OnceLock::new();
    T.get_or_init(|| {
        let p = model::model_path();
        LlmTokenizer::from_gguf(&p).unwrap_or_else(|e| {
            panic!("{e} (the tokenizer fuzz target needs the SmolLM2 GGUF: scripts/fetch-llms.sh --smollm-only)")
        })
    })
}

const PIECES: &[&str] = &[
    "<|im_start|>",
    "<|im_end|>",
    "<|endoftext|>",
    "<",
    "|",
    ">",
    "<|",
    "|>",
    "system",
    "user",
    "\n",
    "\r\n",
    " ",
    "  ",
    "\t",
    "\u{0}",
    "\u{301}",
    "\u{200d}",
    "\u{feff}",
    "\u{fffd}",
    "\u{10ffff}",
    "日本語",
    "😀",
    "👨‍👩‍👧",
    "é",
    "e\u{301}",
    "0123456789",
    "12.5",
    "Hello",
    " world",
    "'s",
    "n't",
    "...",
    "Ġ",
    "Ċ",
    "âĢ",
    "<think>",
];

fn text() -> impl Strategy<Value = String> {
    let atom = prop_oneof![
        2 => proptest::sample::select(PIECES).prop_map(String::from),
        2 => any::<char>().prop_map(String::from),
        1 => ".{0,12}",
        1 => (proptest::sample::select(PIECES), 1usize..2_000).prop_map(|(p, n)| p.repeat(n)),
    ];
    proptest::collection::vec(atom, 0..16).prop_map(|v| v.concat())
}

fn roundtrip(s: &str) -> Result<(), TestCaseError> {
    let t = tokenizer();
    let ids = fuzz::no_panic(s, |s| t.encode(s))?
        .map_err(|e| TestCaseError::fail(format!("encode failed on {s:?}: {e}")))?;
    prop_assert!(ids.iter().all(|&i| (i as usize) < t.vocab_size()));
    let back = fuzz::no_panic(&ids[..], |ids| t.decode(ids))?
        .map_err(|e| TestCaseError::fail(format!("decode failed on {ids:?}: {e}")))?;
    // Special ids decode to nothing: the texts of special tokens, and bytes the vocabulary
    // lacks (they become the unknown token, `<|endoftext|>` for SmolLM2: "\u{4}", "\u{40000}").
    // Text encoded without them round-trips.
    if !ids.iter().any(|i| specials().contains(i)) {
        prop_assert_eq!(back, s);
    }
    Ok(())
}

proptest! {
    #![proptest_config(fuzz::config("llm-tokenizer/utf8", 30_000))]
    #[test]
    fn tokenizer_arbitrary_strings(s in any::<String>()) {
        roundtrip(&s)?;
    }
}

proptest! {
    #![proptest_config(fuzz::config("llm-tokenizer/pieces", 1_500))]
    #[test]
    fn tokenizer_odd_strings(s in text()) {
        roundtrip(&s)?;
    }
}

proptest! {
    #![proptest_config(fuzz::config("llm-tokenizer/decode", 80_000))]
    /// Any ids, in the vocabulary or not: a string or a typed error, never a panic.
    #[test]
    fn tokenizer_decode_arbitrary_ids(ids in proptest::collection::vec(
        prop_oneof![4 => 0u32..49_152, 1 => any::<u32>()], 0..64)) {
        let t = tokenizer();
        let _ = fuzz::no_panic(&ids[..], |ids| t.decode(ids))?;
        for &i in &ids {
            let _ = fuzz::no_panic(&i, |&i| t.token_text(i))?;
        }
    }
}
