//! The words of a text, as the synthesis stage and its stopword list count them.

/// The words of `text` in order: `nltk.word_tokenize(text.lower())` tokens
/// ([`pgraphrag_text::word_tokenize_lower`], Python's `str.lower`) that start with an
/// alphanumeric character (Rust's `char::is_alphanumeric`, Unicode). Punctuation tokens (`.`,
/// `,`, `''`, `--`, `...`) and the Treebank clitics `'s`, `'re`, `'ll`, `'d`, `'m`, `'ve` are not
/// words; `n't`, `ca` (from `can't`) and numbers are (the stopword list drops the first two).
///
/// ```
/// use pgraphrag_stages::multistage::words;
/// assert_eq!(words("I can't read Tolstoy's 2 novels..."), ["i", "ca", "n't", "read", "tolstoy", "2", "novels"]);
/// ```
pub fn words(text: &str) -> Vec<String> {
    pgraphrag_text::word_tokenize_lower(text)
        .into_iter()
        .filter(|t| t.chars().next().is_some_and(char::is_alphanumeric))
        .collect()
}
