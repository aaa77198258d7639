//! The byte-level primitives every Treebank pass is written with: the working buffer, character
//! decoding, word and space tests, and the scan driver.
use crate::py::is_space;
use crate::unicode::is_word;

/// The working text: UTF-8 bytes. Every trigger character of the Treebank patterns is ASCII or
/// is found by its UTF-8 encoding, and ASCII bytes never occur inside a multi-byte sequence, so
/// byte comparisons are character comparisons; the few patterns that look at any character
/// (`\w`, `\d`, `\s`, `[^']`) decode it. Passes only copy whole characters and insert ASCII,
/// so the buffer stays valid UTF-8.
pub(super) type Buf = Vec<u8>;

/// Decode the character starting at byte `i` (a character boundary): `(char, length in bytes)`.
#[inline]
pub(super) fn ch(s: &[u8], i: usize) -> Option<(char, usize)> {
    let b0 = *s.get(i)?;
    if b0 < 0x80 {
        return Some((b0 as char, 1));
    }
    let (len, init) = if b0 >= 0xF0 {
        (4, b0 & 0x07)
    } else if b0 >= 0xE0 {
        (3, b0 & 0x0F)
    } else {
        (2, b0 & 0x1F)
    };
    let mut c = u32::from(init);
    for k in 1..len {
        c = (c << 6) | u32::from(*s.get(i + k)? & 0x3F);
    }
    char::from_u32(c).map(|c| (c, len))
}

/// Length in bytes of the character whose first byte is `b`.
#[inline]
pub(super) fn char_len(b: u8) -> usize {
    if b < 0x80 {
        1
    } else if b >= 0xF0 {
        4
    } else if b >= 0xE0 {
        3
    } else {
        2
    }
}

/// Start of the character that ends at byte `i` (`i > 0`, a character boundary).
#[inline]
pub(super) fn prev_start(s: &[u8], i: usize) -> usize {
    let mut j = i - 1;
    while j > 0 && s[j] & 0xC0 == 0x80 {
        j -= 1;
    }
    j
}

/// Whether the character before byte `i` is a `\w` (false at the start).
#[inline]
pub(super) fn word_before(s: &[u8], i: usize) -> bool {
    i > 0 && ch(s, prev_start(s, i)).is_some_and(|(c, _)| is_word(c))
}

/// Whether there is no `\w` character at byte `i` (the end of the text counts).
#[inline]
pub(super) fn no_word_at(s: &[u8], i: usize) -> bool {
    ch(s, i).is_none_or(|(c, _)| !is_word(c))
}

/// The scan driver: `trigger` marks bytes every match contains, at most `lb` characters after
/// the match start; `try_at(s, i, o)` tries a match at byte `i` (a character boundary), and on
/// success appends the replacement to `o` and returns the end of the match (on failure it writes
/// nothing). The text between matches is copied lazily, in bulk: when nothing matches, nothing
/// is copied and the result is false (the text is unchanged). `o` must be empty.
#[inline]
pub(super) fn scan(
    s: &[u8],
    o: &mut Buf,
    trigger: impl Fn(u8) -> bool,
    lb: usize,
    try_at: impl Fn(&[u8], usize, &mut Buf) -> Option<usize>,
) -> bool {
    let n = s.len();
    // `s[flushed..]` is not yet in `o`; matches never start before `i`.
    let (mut flushed, mut i, mut matched) = (0, 0, false);
    while let Some(k) = s[i..].iter().position(|&c| trigger(c)) {
        let next = i + k;
        let mut start = next;
        for _ in 0..lb {
            if start > i {
                start = prev_start(s, start);
            }
        }
        i = start;
        // Try every position from `start` through the trigger.
        while i <= next && i < n {
            let len = o.len();
            match try_at(s, i, o) {
                Some(e) => {
                    if !matched {
                        matched = true;
                        o.reserve(n + 16);
                    }
                    o.splice(len..len, s[flushed..i].iter().copied());
                    flushed = e;
                    i = e;
                }
                None => i += char_len(s[i]),
            }
        }
        if i >= n {
            break;
        }
    }
    if !matched {
        return false;
    }
    o.extend_from_slice(&s[flushed.min(n)..]);
    true
}

/// Bytes that can start a whitespace character (`\s`): ASCII whitespace and the lead bytes of
/// U+0085, U+00A0, U+1680, U+2000..U+205F and U+3000.
#[inline]
pub(super) const fn space_lead(c: u8) -> bool {
    matches!(c, b'\t'..=b'\r' | 0x1C..=0x1F | b' ' | 0xC2 | 0xE1 | 0xE2 | 0xE3)
}

#[inline]
pub(super) fn space_at(s: &[u8], i: usize) -> Option<usize> {
    let c = *s.get(i)?;
    if c == b' ' {
        return Some(1);
    }
    if !space_lead(c) {
        return None;
    }
    ch(s, i).filter(|&(c, _)| is_space(c)).map(|(_, l)| l)
}

/// Bytes that can start a `\s` character, as a table.
pub(super) static SPACE_LEAD: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = space_lead(b as u8);
        b += 1;
    }
    t
};
