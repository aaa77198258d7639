//! Small cases with expected values taken from Python 3.11 / nltk 3.9.1 (see comments).

use pgraphrag_text::{
    Language, WordTokenizeOptions, first_k_chars, python_lower, sent_tokenize, snippets,
    whitespace_split, word_tokenize, word_tokenize_lower, word_tokenize_with,
};

#[test]
fn word_tokenize_examples() {
    // nltk.word_tokenize("I can't go.")
    assert_eq!(word_tokenize("I can't go."), ["I", "ca", "n't", "go", "."]);
    // nltk.word_tokenize("Mr. Smith isn't here. He's in the U.S. now.".lower())
    assert_eq!(
        word_tokenize_lower("Mr. Smith isn't here. He's in the U.S. now."),
        [
            "mr.", "smith", "is", "n't", "here", ".", "he", "'s", "in", "the", "u.s.", "now", "."
        ]
    );
    // nltk.word_tokenize('Hello world. Another sentence here.', preserve_line=True)
    let opts = WordTokenizeOptions {
        preserve_line: true,
        ..Default::default()
    };
    assert_eq!(
        word_tokenize_with("Hello world. Another sentence here.", &opts),
        ["Hello", "world.", "Another", "sentence", "here", "."]
    );
}

#[test]
fn sent_tokenize_example() {
    assert_eq!(
        sent_tokenize(
            "Mr. Smith isn't here. He's in the U.S. now. Right?",
            Language::English
        ),
        ["Mr. Smith isn't here.", "He's in the U.S. now.", "Right?"]
    );
    assert_eq!(
        sent_tokenize("O Sr. Silva chegou. Ótimo!", Language::Portuguese),
        ["O Sr. Silva chegou.", "Ótimo!"]
    );
}

#[test]
fn whitespace_split_is_python_split() {
    // ' a\x1cb\u00a0c\u200bd\u3000e '.split() == ['a', 'b', 'c\u200bd', 'e']
    assert_eq!(
        whitespace_split(" a\u{1c}b\u{a0}c\u{200b}d\u{3000}e "),
        ["a", "b", "c\u{200b}d", "e"]
    );
    assert!(whitespace_split(" \t\n ").is_empty());
    assert!(whitespace_split("").is_empty());
}

#[test]
fn first_k_chars_counts_scalar_values() {
    // 'héllo wörld'[:4] == 'héll'
    assert_eq!(first_k_chars("héllo wörld", 4), "héll");
    assert_eq!(first_k_chars("abc", 10), "abc");
    assert_eq!(first_k_chars("abc", 0), "");
}

#[test]
fn python_lower_special_cases() {
    // 'İ'.lower() == 'i̇'; 'ΟΔΟΣ ΣΟΦΙΑΣ.'.lower() == 'οδος σοφιας.'; 'Σ'.lower() == 'σ'
    assert_eq!(python_lower("İ"), "i\u{307}");
    assert_eq!(python_lower("ΟΔΟΣ ΣΟΦΙΑΣ."), "οδος σοφιας.");
    assert_eq!(python_lower("Σ"), "σ");
    assert_eq!(python_lower("ΑΣ"), "ας");
}

#[test]
fn snippets_gather_sentences() {
    let text = "First sentence here. Second one. Third sentence is longer than the others. End.";
    let s = snippets(text, 30);
    assert_eq!(
        s,
        [
            "First sentence here. Second one.",
            "Third sentence is longer than the others.",
            "End."
        ]
    );
    assert!(snippets("", 250).is_empty());
    assert_eq!(snippets("Short.", 250), ["Short."]);
}
