//! The clitic and contraction passes of the Treebank tokenizer (NLTK's `ENDING_QUOTES` clitics
//! and `CONTRACTIONS2`/`CONTRACTIONS3`), split from `treebank.rs` by concept.
use super::bytes::*;
use crate::unicode::ci_eq;

/// `(w1, w2, followed_by_space)`: `(?i)\b(w1)(w2)\b`, or `(?=\s)` at the end for "wanna".
const CONTRACTIONS2: &[(&str, &str, bool)] = &[
    ("can", "not", false),
    ("d", "'ye", false),
    ("gim", "me", false),
    ("gon", "na", false),
    ("got", "ta", false),
    ("lem", "me", false),
    ("more", "'n", false),
    ("wan", "na", true),
];

/// `([^' ])('[sS]|'[mM]|'[dD]|') ` -> `\1 \2 `
pub(super) fn clitic_short(s: &[u8], o: &mut Buf) -> bool {
    scan(
        s,
        o,
        |c| c == b'\'',
        1,
        |s, i, o| {
            let c = s[i];
            let lc = char_len(c);
            let j = i + lc;
            if c == b'\'' || c == b' ' || s.get(j) != Some(&b'\'') {
                return None;
            }
            if let Some(&l) = s.get(j + 1)
                && matches!(l, b's' | b'S' | b'm' | b'M' | b'd' | b'D')
                && s.get(j + 2) == Some(&b' ')
            {
                o.extend_from_slice(&s[i..j]);
                o.extend_from_slice(&[b' ', b'\'', l, b' ']);
                return Some(j + 3);
            }
            if s.get(j + 1) == Some(&b' ') {
                o.extend_from_slice(&s[i..j]);
                o.extend_from_slice(b" ' ");
                return Some(j + 2);
            }
            None
        },
    )
}

/// `([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) ` -> `\1 \2 `
pub(super) fn clitic_long(s: &[u8], o: &mut Buf) -> bool {
    const ALTS: [&[u8; 3]; 8] = [
        b"'ll", b"'LL", b"'re", b"'RE", b"'ve", b"'VE", b"n't", b"N'T",
    ];
    scan(
        s,
        o,
        |c| c == b'\'',
        2,
        |s, i, o| {
            let c = s[i];
            let j = i + char_len(c);
            if c == b'\'' || c == b' ' || j + 3 >= s.len() || s[j + 3] != b' ' {
                return None;
            }
            let w = &s[j..j + 3];
            if ALTS.iter().any(|a| &a[..] == w) {
                o.extend_from_slice(&s[i..j]);
                o.push(b' ');
                o.extend_from_slice(w);
                o.push(b' ');
                Some(j + 4)
            } else {
                None
            }
        },
    )
}

/// Case-insensitive (Python `(?i)`) match of the ASCII pattern `pat` at byte `i`: the end of the
/// match.
#[inline]
pub(super) fn ci_match(s: &[u8], i: usize, pat: &str) -> Option<usize> {
    let mut j = i;
    for p in pat.bytes() {
        let b = *s.get(j)?;
        if b < 0x80 {
            if b.to_ascii_lowercase() != p {
                return None;
            }
            j += 1;
        } else {
            let (c, l) = ch(s, j)?;
            if !p.is_ascii_alphabetic() || !ci_eq(c, p as char) {
                return None;
            }
            j += l;
        }
    }
    Some(j)
}

/// NLTK's eight `CONTRACTIONS2` substitutions `(?i)\b(w1)(w2)\b` -> ` \1 \2 ` (for "wanna" the
/// final `\b` is `(?=\s)`), done in one scan.
///
/// NLTK applies them one after the other. One scan is equivalent: each pattern matches a whole
/// word (it starts after a `\b` and ends before one, or before a space), so matches of different
/// patterns never overlap, and the pieces a substitution creates (`not`, `'ye`, `me`, `na`, `ta`,
/// `'n` after a space) cannot start a match of a later pattern, while the spaces it inserts sit
/// where word boundaries already were. No first letter of the patterns has a non-ASCII
/// case-insensitive equivalent, so the trigger is ASCII.
pub(super) fn contractions2(s: &[u8], o: &mut Buf) -> bool {
    // Read-only pre-check with the cheapest tests first; most texts have no match.
    let cheap = |i: usize| {
        contraction2_trigger(s[i])
            && (i == 0 || !(s[i - 1].is_ascii_alphanumeric() || s[i - 1] == b'_'))
    };
    if !(0..s.len()).any(|i| cheap(i) && contraction2_at(s, i).is_some()) {
        return false;
    }
    scan(s, o, contraction2_trigger, 0, |s, i, o| {
        let (e1, e) = contraction2_at(s, i)?;
        o.push(b' ');
        o.extend_from_slice(&s[i..e1]);
        o.push(b' ');
        o.extend_from_slice(&s[e1..e]);
        o.push(b' ');
        Some(e)
    })
}

#[inline]
pub(super) fn contraction2_trigger(c: u8) -> bool {
    matches!(c | 0x20, b'c' | b'd' | b'g' | b'l' | b'm' | b'w')
}

/// A `CONTRACTIONS2` match starting at byte `i`: the ends of `w1` and `w2`.
#[inline]
pub(super) fn contraction2_at(s: &[u8], i: usize) -> Option<(usize, usize)> {
    if !contraction2_trigger(s[i]) {
        return None;
    }
    // `\b` before: the previous character is not `\w` (fast path for ASCII).
    if i > 0 {
        let p = s[i - 1];
        if p < 0x80 {
            if p.is_ascii_alphanumeric() || p == b'_' {
                return None;
            }
        } else if word_before(s, i) {
            return None;
        }
    }
    // Necessary condition, cheap: an ASCII second character must begin a second pattern
    // character (`a`, `'`, `i`, `o`, `e`).
    let &c2 = s.get(i + 1)?;
    if c2 < 0x80 && !matches!(c2 | 0x20, b'a' | b'\'' | b'i' | b'o' | b'e') {
        return None;
    }
    for &(w1, w2, space_after) in CONTRACTIONS2 {
        let Some(e1) = ci_match(s, i, w1) else {
            continue;
        };
        let Some(e) = ci_match(s, e1, w2) else {
            continue;
        };
        let end_ok = if space_after {
            space_at(s, e).is_some()
        } else {
            no_word_at(s, e)
        };
        if end_ok {
            return Some((e1, e));
        }
    }
    None
}

/// `(?i) ('t)(w2)\b` -> ` \1 \2 `
pub(super) fn contraction3(s: &[u8], o: &mut Buf, w2: &str) -> bool {
    scan(
        s,
        o,
        |c| c == b'\'',
        1,
        |s, i, o| {
            if s[i] != b' ' {
                return None;
            }
            let e1 = ci_match(s, i + 1, "'t")?;
            let e = ci_match(s, e1, w2)?;
            if no_word_at(s, e) {
                o.push(b' ');
                o.extend_from_slice(&s[i + 1..e1]);
                o.push(b' ');
                o.extend_from_slice(&s[e1..e]);
                o.push(b' ');
                return Some(e);
            }
            None
        },
    )
}
