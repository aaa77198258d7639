//! `str` methods: `isspace`, `split`, `strip`, `lstrip`, `rstrip`, `lower`.

use crate::unicode::in_ranges;
use crate::unicode_tables::{CASE_IGNORABLE, CASED_NONIGNORABLE, LOWER_MAP, SPACE};

/// Python's `str.isspace()` of one character (also `re`'s `\s` and the whitespace of
/// `str.split()` and `str.strip()`): bidirectional class WS, B or S, or category Zs. This is
/// Rust's [`char::is_whitespace`] plus the four information separators U+001C..U+001F.
///
/// ```
/// use pgraphrag_text::py::is_space;
/// assert!(is_space('\u{1c}') && !'\u{1c}'.is_whitespace());
/// assert!(is_space('\u{3000}') && is_space('\u{85}') && !is_space('\u{200b}'));
/// ```
#[inline]
pub fn is_space(c: char) -> bool {
    if c.is_ascii() {
        matches!(c, '\t'..='\r' | '\x1c'..='\x1f' | ' ')
    } else {
        in_ranges(SPACE, c)
    }
}

/// Python's `str.split()` with no argument: the runs of non-[`is_space`] characters, borrowed
/// from `text` (never an empty token).
///
/// ```
/// use pgraphrag_text::py::split;
/// assert_eq!(split("  It's  a\ttest\u{1f}\n").collect::<Vec<_>>(), ["It's", "a", "test"]);
/// assert_eq!(split(" \u{3000} ").count(), 0);
/// ```
#[inline]
pub fn split(text: &str) -> impl Iterator<Item = &str> + Clone {
    text.split(is_space).filter(|s| !s.is_empty())
}

/// Python's `str.strip()` with no argument.
///
/// ```
/// assert_eq!(pgraphrag_text::py::strip("\u{85} 4.5\u{1c}\n"), "4.5");
/// ```
#[inline]
pub fn strip(text: &str) -> &str {
    text.trim_matches(is_space)
}

/// Python's `str.lstrip()` with no argument.
///
/// ```
/// assert_eq!(pgraphrag_text::py::lstrip("\u{a0} a "), "a ");
/// ```
#[inline]
pub fn lstrip(text: &str) -> &str {
    text.trim_start_matches(is_space)
}

/// Python's `str.rstrip()` with no argument.
///
/// ```
/// assert_eq!(pgraphrag_text::py::rstrip(" a\u{1f}\u{2028}"), " a");
/// ```
#[inline]
pub fn rstrip(text: &str) -> &str {
    text.trim_end_matches(is_space)
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
/// use pgraphrag_text::py::lower;
/// assert_eq!(lower("ÀB İ ΟΔΟΣ"), "àb i\u{307} οδος");
/// ```
pub fn lower(text: &str) -> String {
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
