//! Character classes and case mapping exactly as CPython 3.11 defines them (tables generated
//! from CPython by `scripts/fixtures/text_unicode_tables.py`).

use crate::unicode_tables::{
    CASE_IGNORABLE, CASED_NONIGNORABLE, CI_EXTRA, DIGIT, LOWER, LOWER_MAP, SPACE, UPPER, WORD,
};

pub use crate::unicode_tables::UNICODE_VERSION;

#[inline]
fn in_ranges(table: &[(u32, u32)], c: char) -> bool {
    let c = c as u32;
    table
        .binary_search_by(|&(lo, hi)| {
            if hi < c {
                std::cmp::Ordering::Less
            } else if lo > c {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// Python `re` `\w` for `str` patterns (`str.isalnum()` or `_`).
#[inline]
pub fn is_word(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_alphanumeric() || c == '_'
    } else {
        in_ranges(WORD, c)
    }
}

/// Python `re` `\d` for `str` patterns (Unicode decimal digits).
#[inline]
pub fn is_digit(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_digit()
    } else {
        in_ranges(DIGIT, c)
    }
}

/// Python's `str.isspace()` (and `re`'s `\s`), the whitespace of `str.split()`: it includes
/// U+001C..U+001F, which Rust's `char::is_whitespace` does not.
///
/// ```
/// use pgraphrag_text::is_python_whitespace;
/// assert!(is_python_whitespace('\u{1c}') && !'\u{1c}'.is_whitespace());
/// ```
#[inline]
pub fn is_python_whitespace(c: char) -> bool {
    is_space(c)
}

#[inline]
pub(crate) fn is_space(c: char) -> bool {
    if c.is_ascii() {
        matches!(c, '\t'..='\r' | '\x1c'..='\x1f' | ' ')
    } else {
        in_ranges(SPACE, c)
    }
}

/// Python `str.isupper()` of one character.
#[inline]
pub fn is_upper(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_uppercase()
    } else {
        in_ranges(UPPER, c)
    }
}

/// Python `str.islower()` of one character.
#[inline]
pub fn is_lower(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_lowercase()
    } else {
        in_ranges(LOWER, c)
    }
}

/// Python `re` `[^\W\d]`: a word character that is not a decimal digit.
#[inline]
pub(crate) fn is_alpha_re(c: char) -> bool {
    is_word(c) && !is_digit(c)
}

/// Whether Python's `(?i)` matches `c` against the lowercase ASCII letter `letter`.
#[inline]
pub(crate) fn ci_eq(c: char, letter: char) -> bool {
    if c.is_ascii() {
        return c.to_ascii_lowercase() == letter;
    }
    CI_EXTRA
        .iter()
        .any(|&(l, extra)| l == letter && extra.contains(c))
}

fn lower_char(c: char) -> Option<&'static str> {
    let cu = c as u32;
    LOWER_MAP
        .binary_search_by_key(&cu, |&(k, _)| k)
        .ok()
        .map(|i| LOWER_MAP[i].1)
}

#[inline]
fn is_cased(c: char) -> bool {
    c == '\u{3a3}' || in_ranges(CASED_NONIGNORABLE, c)
}

#[inline]
fn is_case_ignorable(c: char) -> bool {
    in_ranges(CASE_IGNORABLE, c)
}

/// Python's `str.lower()`: full Unicode lowercase mapping of CPython 3.11 (Unicode 14),
/// including `'İ'` → `"i̇"` and the final-sigma rule (`'Σ'` → `'ς'` at the end of a word).
///
/// ```
/// use pgraphrag_text::python_lower;
/// assert_eq!(python_lower("ÀB İ ΟΔΟΣ"), "àb i\u{307} οδος");
/// ```
pub fn python_lower(text: &str) -> String {
    if text.is_ascii() {
        return text.to_ascii_lowercase();
    }
    let mut out = String::with_capacity(text.len());
    for (i, c) in text.char_indices() {
        if c.is_ascii() {
            out.push(c.to_ascii_lowercase());
        } else if c == '\u{3a3}' {
            out.push(final_sigma(text, i));
        } else if let Some(l) = lower_char(c) {
            out.push_str(l);
        } else {
            out.push(c);
        }
    }
    out
}

/// CPython's `handle_capital_sigma`.
fn final_sigma(text: &str, i: usize) -> char {
    let before = text[..i].chars().rev().find(|&c| !is_case_ignorable(c));
    let mut fin = before.is_some_and(is_cased);
    if fin {
        let after = text[i + '\u{3a3}'.len_utf8()..]
            .chars()
            .find(|&c| !is_case_ignorable(c));
        fin = after.is_none_or(|c| !is_cased(c));
    }
    if fin { '\u{3c2}' } else { '\u{3c3}' }
}

/// Python `str.split()` with no argument.
pub(crate) fn py_split(text: &str) -> impl Iterator<Item = &str> {
    text.split(is_space).filter(|s| !s.is_empty())
}

/// Python `str.rstrip()` with no argument.
pub(crate) fn py_rstrip(text: &str) -> &str {
    text.trim_end_matches(is_space)
}
