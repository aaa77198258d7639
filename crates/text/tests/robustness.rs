//! Property tests: no input panics, and invariants that hold for nltk 3.9.1 (checked there on
//! 20,000 random strings over the same kind of alphabet) hold here too.

use pgraphrag_text::{
    Language, first_k_chars, is_python_whitespace, sent_tokenize, snippets, whitespace_split,
    word_tokenize, word_tokenize_lower,
};
use proptest::prelude::*;

fn tricky() -> impl Strategy<Value = String> {
    let atoms = prop::sample::select(vec![
        "a", "A", "Mr.", "U.S.", "e.g.", "...", "..", ". .", "--", "-", " ", "  ", "\n", "\t",
        "\u{a0}", "\u{1c}", ".", ",", "!", "?", ";", ":", "'", "''", "\"", "`", "``", "(", ")",
        "[", "]", "{", "}", "<", ">", "«", "»", "“", "”", "‘", "’", "„", "*", "&", "@", "#", "$",
        "%", "3.5", "1,000", "can", "not", "gon", "na", "wan", "'t", "is", "n't", "'s", "İ", "Σ",
        "ſ", "\u{212a}", "é", "e\u{301}", "😀", "_",
    ]);
    prop::collection::vec(atoms, 0..30).prop_map(|v| v.concat())
}

fn check(s: &str) {
    for toks in [word_tokenize(s), word_tokenize_lower(s)] {
        for t in &toks {
            assert!(!t.is_empty(), "empty token from {s:?}");
            assert!(
                !t.chars().any(is_python_whitespace),
                "token {t:?} with whitespace from {s:?}"
            );
        }
    }
    for lang in [Language::English, Language::Portuguese] {
        let sents = sent_tokenize(s, lang);
        // Sentences cover every non-whitespace character of the text, in order.
        let strip = |x: &str| {
            x.chars()
                .filter(|&c| !is_python_whitespace(c))
                .collect::<String>()
        };
        assert_eq!(
            strip(&sents.concat()),
            strip(s),
            "sentences of {s:?}: {sents:?}"
        );
    }
    for t in whitespace_split(s) {
        assert!(!t.is_empty() && !t.chars().any(is_python_whitespace));
    }
    let snips = snippets(s, 50);
    assert!(snips.iter().all(|x| !x.is_empty()));
    assert!(first_k_chars(s, 7).chars().count() <= 7);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn any_utf8_is_safe(s in any::<String>()) {
        check(&s);
    }

    #[test]
    fn tricky_strings_are_safe(s in tricky()) {
        check(&s);
    }
}
