//! Character classes and case mapping exactly as CPython 3.11 defines them (tables generated
//! from CPython by `scripts/fixtures/text_unicode_tables.py`). `str.isspace`, `str.split`,
//! `str.strip` and `str.lower` live in [`crate::py`].

use crate::unicode_tables::{CI_EXTRA, DIGIT, LOWER, UPPER, WORD};

pub use crate::unicode_tables::UNICODE_VERSION;

/// Whether `c` lies in one of the sorted, disjoint inclusive ranges of `table`.
#[inline]
pub(crate) fn in_ranges(table: &[(u32, u32)], c: char) -> bool {
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
