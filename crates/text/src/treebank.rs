//! Port of nltk 3.9.1 `NLTKWordTokenizer.tokenize` (`nltk/tokenize/destructive.py`): the improved
//! Treebank word tokenizer that `nltk.word_tokenize` applies to each sentence.
//!
//! Every regex substitution of the Python class is a hand-written pass below, in the same order,
//! with Python `re.sub` semantics (leftmost, non-overlapping matches; `$` also matches before a
//! final `\n`; `\w`, `\d`, `\s` and `\b` are Unicode as CPython defines them).
//!
//! Speed: the text is processed as UTF-8 bytes (every trigger character of the patterns is
//! ASCII or found by its UTF-8 encoding; characters are decoded only where a pattern looks at an
//! arbitrary character). Every match of a pass contains a "trigger" byte at most `lb` characters
//! after its start, so a pass tries a match only near triggers, copies the text between matches
//! in bulk, and copies nothing at all when nothing matches. A pass whose trigger characters are
//! absent from the sentence is skipped. None of this changes the output.

use crate::py::{is_space, split as py_split};
use crate::unicode::{ci_eq, is_digit, is_word};

mod bytes;
mod contractions;
use bytes::*;
use contractions::*;

/// Tokenize one sentence like `NLTKWordTokenizer().tokenize(text, convert_parentheses)`.
///
/// ```
/// use pgraphrag_text::treebank_tokenize;
/// assert_eq!(
///     treebank_tokenize("They'll pay $3.88 (roughly).", false),
///     ["They", "'ll", "pay", "$", "3.88", "(", "roughly", ")", "."]
/// );
/// ```
pub fn treebank_tokenize(text: &str, convert_parentheses: bool) -> Vec<String> {
    let mut out = Vec::new();
    treebank_tokenize_into(text, convert_parentheses, &mut out);
    out
}

/// [`treebank_tokenize`] appending to `out`.
pub(crate) fn treebank_tokenize_into(text: &str, convert_parentheses: bool, out: &mut Vec<String>) {
    thread_local! {
        static SCRATCH: std::cell::RefCell<(Buf, Buf)> =
            const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
    }
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut bufs) => {
            let (a, b) = &mut *bufs;
            tokenize_with(text, convert_parentheses, out, a, b);
        }
        Err(_) => tokenize_with(
            text,
            convert_parentheses,
            out,
            &mut Vec::new(),
            &mut Vec::new(),
        ),
    });
}

const OPEN_QUOTES: [&[u8]; 4] = [
    "«".as_bytes(),
    "“".as_bytes(),
    "‘".as_bytes(),
    "„".as_bytes(),
];
const CLOSE_QUOTES: [&[u8]; 3] = ["»".as_bytes(), "”".as_bytes(), "’".as_bytes()];

fn tokenize_with(
    text: &str,
    convert_parentheses: bool,
    out: &mut Vec<String>,
    a: &mut Buf,
    b: &mut Buf,
) {
    a.clear();
    a.extend_from_slice(text.as_bytes());
    // Which characters occur. Passes only ever add spaces, backticks and apostrophes, so a pass
    // whose trigger characters are absent from the input can be skipped without scanning.
    let mut ascii = 0u128;
    let mut high = 0u8;
    for &c in text.as_bytes() {
        ascii |= 1u128 << (c & 0x7F);
        high |= c;
    }
    // Non-ASCII bytes may have set bits of ASCII characters: `any` below may then be true for a
    // character that is absent, which only costs a scan (never skips a needed pass).
    let high = high >= 0x80;
    let (mut open_q, mut close_q) = (false, false);
    if high {
        for c in text.chars() {
            if matches!(c, '«' | '“' | '‘' | '„') {
                open_q = true;
            } else if matches!(c, '»' | '”' | '’') {
                close_q = true;
            }
        }
    }
    let any = |cs: &str| cs.bytes().any(|c| ascii & (1u128 << c) != 0);
    let apos = any("'");
    let dquote = any("\"");
    macro_rules! pass {
        ($cond:expr, $f:expr) => {{
            if $cond {
                b.clear();
                if $f(&a[..], &mut *b) {
                    std::mem::swap(a, b);
                }
            }
        }};
    }
    // STARTING_QUOTES
    pass!(open_q || any("`"), starting_quotes_pad);
    if a.first() == Some(&b'"') {
        // ^\" -> ``
        a.splice(0..1, *b"``");
    }
    pass!(any("`") || dquote, |s: &[u8], o: &mut Buf| replace_lit(
        s, o, b"``", b" `` "
    ));
    pass!(dquote || apos, open_quote_after_space);
    pass!(apos, apostrophe_clitic);
    // PUNCTUATION
    final_period(a, CLOSERS1, true);
    pass!(any(":,"), colon_comma);
    colon_comma_end(a);
    pass!(any("."), multi_periods);
    pass!(any(";@#$%&"), |s: &[u8], o: &mut Buf| pad(
        s,
        o,
        |c| matches!(c, b';' | b'@' | b'#' | b'$' | b'%' | b'&')
    ));
    final_period(a, CLOSERS2, false);
    pass!(any("?!"), |s: &[u8], o: &mut Buf| pad(s, o, |c| c == b'?'
        || c == b'!'));
    pass!(apos, quote_space);
    pass!(any("*"), |s: &[u8], o: &mut Buf| pad(s, o, |c| c == b'*'));
    // PARENS_BRACKETS
    let parens = any("][(){}<>");
    pass!(parens, |s: &[u8], o: &mut Buf| pad(s, o, |c| matches!(
        c,
        b']' | b'[' | b'(' | b')' | b'{' | b'}' | b'<' | b'>'
    )));
    pass!(convert_parentheses && parens, convert_parens);
    // DOUBLE_DASHES
    pass!(any("-"), |s: &[u8], o: &mut Buf| replace_lit(
        s, o, b"--", b" -- "
    ));
    // text = " " + text + " "
    a.insert(0, b' ');
    a.push(b' ');
    // ENDING_QUOTES
    pass!(close_q, pad_close_quotes);
    pass!(apos, |s: &[u8], o: &mut Buf| replace_lit(
        s, o, b"''", b" '' "
    ));
    pass!(dquote, |s: &[u8], o: &mut Buf| replace_lit(
        s, o, b"\"", b" '' "
    ));
    pass!(true, collapse_space);
    // From here on `'` may also come from `"` -> `''`.
    let apos = apos || dquote;
    pass!(apos, clitic_short);
    pass!(apos, clitic_long);
    // CONTRACTIONS2, all eight patterns in one scan (see `contractions2`).
    pass!(true, contractions2);
    // CONTRACTIONS3
    pass!(apos, |s: &[u8], o: &mut Buf| contraction3(s, o, "is"));
    pass!(apos, |s: &[u8], o: &mut Buf| contraction3(s, o, "was"));
    // text.split(): since `collapse_space`, the only whitespace is `' '` (later passes insert
    // nothing else).
    match std::str::from_utf8(a) {
        Ok(s) => {
            let b = s.as_bytes();
            out.reserve(b.iter().filter(|&&c| c == b' ').count());
            let mut start = None;
            for (i, &c) in b.iter().enumerate() {
                if c == b' ' {
                    if let Some(t) = start.take() {
                        out.push(s[t..i].to_string());
                    }
                } else if start.is_none() {
                    start = Some(i);
                }
            }
            if let Some(t) = start {
                out.push(s[t..].to_string());
            }
        }
        // Unreachable (passes keep the text valid UTF-8); degrade instead of panicking.
        Err(_) => out.extend(py_split(&String::from_utf8_lossy(a)).map(str::to_string)),
    }
}

const CLOSERS1: &[char] = &[']', ')', '}', '>', '"', '\'', '»', '”', '’', ' '];
const CLOSERS2: &[char] = &[']', ')', '}', '>', '"', '\''];

/// Replace each ASCII byte matching `f` by ` c `.
fn pad(s: &[u8], o: &mut Buf, f: impl Fn(u8) -> bool) -> bool {
    let Some(first) = s.iter().position(|&c| f(c)) else {
        return false;
    };
    o.reserve(s.len() + 16);
    o.extend_from_slice(&s[..first]);
    for &c in &s[first..] {
        if f(c) {
            o.extend_from_slice(&[b' ', c, b' ']);
        } else {
            o.push(c);
        }
    }
    true
}

/// `([»”’])` -> ` \1 `
fn pad_close_quotes(s: &[u8], o: &mut Buf) -> bool {
    scan(
        s,
        o,
        |c| c == 0xC2 || c == 0xE2,
        0,
        |s, i, o| {
            let q = CLOSE_QUOTES.iter().find(|q| s[i..].starts_with(q))?;
            o.push(b' ');
            o.extend_from_slice(q);
            o.push(b' ');
            Some(i + q.len())
        },
    )
}

/// Non-overlapping literal replacement (ASCII pattern).
fn replace_lit(s: &[u8], o: &mut Buf, pat: &[u8], rep: &[u8]) -> bool {
    scan(
        s,
        o,
        |c| c == pat[0],
        0,
        |s, i, o| {
            if s[i..].starts_with(pat) {
                o.extend_from_slice(rep);
                Some(i + pat.len())
            } else {
                None
            }
        },
    )
}

/// `([«“‘„]|[`]+)` -> ` \1 `
fn starting_quotes_pad(s: &[u8], o: &mut Buf) -> bool {
    scan(
        s,
        o,
        |c| c == b'`' || c == 0xC2 || c == 0xE2,
        0,
        |s, i, o| {
            if s[i] == b'`' {
                let j = i + s[i..].iter().take_while(|&&c| c == b'`').count();
                o.push(b' ');
                o.extend_from_slice(&s[i..j]);
                o.push(b' ');
                return Some(j);
            }
            let q = OPEN_QUOTES.iter().find(|q| s[i..].starts_with(q))?;
            o.push(b' ');
            o.extend_from_slice(q);
            o.push(b' ');
            Some(i + q.len())
        },
    )
}

/// `([ \(\[{<])(\"|\'{2})` -> `\1 `` `
fn open_quote_after_space(s: &[u8], o: &mut Buf) -> bool {
    scan(
        s,
        o,
        |c| c == b'"' || c == b'\'',
        1,
        |s, i, o| {
            let c = s[i];
            if !matches!(c, b' ' | b'(' | b'[' | b'{' | b'<') {
                return None;
            }
            let len = if s.get(i + 1) == Some(&b'"') {
                2
            } else if s.get(i + 1) == Some(&b'\'') && s.get(i + 2) == Some(&b'\'') {
                3
            } else {
                return None;
            };
            o.extend_from_slice(&[c, b' ', b'`', b'`', b' ']);
            Some(i + len)
        },
    )
}

/// `(?i)(\')(?!re|ve|ll|m|t|s|d|n)(\w)\b` -> `\1 \2`
///
/// With `\b` right after the single `\w`, only the one-letter alternatives of the look-ahead can
/// apply.
fn apostrophe_clitic(s: &[u8], o: &mut Buf) -> bool {
    scan(
        s,
        o,
        |c| c == b'\'',
        0,
        |s, i, o| {
            if s[i] != b'\'' {
                return None;
            }
            let (w, lw) = ch(s, i + 1)?;
            let e = i + 1 + lw;
            if is_word(w)
                && no_word_at(s, e)
                && !['m', 't', 's', 'd', 'n'].iter().any(|&l| ci_eq(w, l))
            {
                o.extend_from_slice(b"' ");
                o.extend_from_slice(&s[i + 1..e]);
                Some(e)
            } else {
                None
            }
        },
    )
}

/// `([^\.])(\.)([closers]*)\s*$` -> `\1 \2 \3 ` (`spaced`) or `\1 \2\3 `, in place.
///
/// A match needs the last `.` of the text (anything after it is closers and whitespace).
fn final_period(s: &mut Buf, closers: &[char], spaced: bool) {
    let Some(p) = s.iter().rposition(|&c| c == b'.') else {
        return;
    };
    if p == 0 || s[p - 1] == b'.' {
        return;
    }
    let mut k = p + 1;
    while let Some((c, l)) = ch(s, k) {
        if !closers.contains(&c) {
            break;
        }
        k += l;
    }
    let mut j = k;
    while let Some((c, l)) = ch(s, j) {
        if !is_space(c) {
            return;
        }
        j += l;
    }
    s.truncate(k);
    s.push(b' ');
    if spaced {
        s.insert(p + 1, b' ');
    }
    s.insert(p, b' ');
}

/// `([:,])([^\d])` -> ` \1 \2`
fn colon_comma(s: &[u8], o: &mut Buf) -> bool {
    scan(
        s,
        o,
        |c| c == b':' || c == b',',
        0,
        |s, i, o| {
            let c = s[i];
            if c != b':' && c != b',' {
                return None;
            }
            let (n, ln) = ch(s, i + 1)?;
            if is_digit(n) {
                return None;
            }
            o.extend_from_slice(&[b' ', c, b' ']);
            o.extend_from_slice(&s[i + 1..i + 1 + ln]);
            Some(i + 1 + ln)
        },
    )
}

/// `([:,])$` -> ` \1 ` (`$` also matches before a final newline), in place.
fn colon_comma_end(s: &mut Buf) {
    let n = s.len();
    let p = if n >= 1 && matches!(s[n - 1], b':' | b',') {
        n - 1
    } else if n >= 2 && s[n - 1] == b'\n' && matches!(s[n - 2], b':' | b',') {
        n - 2
    } else {
        return;
    };
    s.insert(p + 1, b' ');
    s.insert(p, b' ');
}

/// `\.{2,}` -> ` \g<0> `
fn multi_periods(s: &[u8], o: &mut Buf) -> bool {
    scan(
        s,
        o,
        |c| c == b'.',
        0,
        |s, i, o| {
            if s[i] != b'.' {
                return None;
            }
            let j = i + s[i..].iter().take_while(|&&c| c == b'.').count();
            if j - i < 2 {
                return None;
            }
            o.push(b' ');
            o.extend_from_slice(&s[i..j]);
            o.push(b' ');
            Some(j)
        },
    )
}

/// `([^'])' ` -> `\1 ' `
fn quote_space(s: &[u8], o: &mut Buf) -> bool {
    scan(
        s,
        o,
        |c| c == b'\'',
        1,
        |s, i, o| {
            let lc = char_len(s[i]);
            if s[i] != b'\'' && s.get(i + lc) == Some(&b'\'') && s.get(i + lc + 1) == Some(&b' ') {
                o.extend_from_slice(&s[i..i + lc]);
                o.extend_from_slice(b" ' ");
                Some(i + lc + 2)
            } else {
                None
            }
        },
    )
}

fn convert_parens(s: &[u8], o: &mut Buf) -> bool {
    let rep = |c: u8| match c {
        b'(' => Some(&b"-LRB-"[..]),
        b')' => Some(&b"-RRB-"[..]),
        b'[' => Some(&b"-LSB-"[..]),
        b']' => Some(&b"-RSB-"[..]),
        b'{' => Some(&b"-LCB-"[..]),
        b'}' => Some(&b"-RCB-"[..]),
        _ => None,
    };
    scan(
        s,
        o,
        |c| rep(c).is_some(),
        0,
        |s, i, o| {
            o.extend_from_slice(rep(s[i])?);
            Some(i + 1)
        },
    )
}

/// `\s+` -> ` ` (a lone `' '` is left as it is).
fn collapse_space(s: &[u8], o: &mut Buf) -> bool {
    // Fast read-only check: is there a whitespace run other than a lone `' '`?
    let mut i = 0;
    let n = s.len();
    let first = loop {
        while i < n && !SPACE_LEAD[s[i] as usize] {
            i += 1;
        }
        if i >= n {
            return false;
        }
        match space_at(s, i) {
            Some(1) if s[i] == b' ' => {
                if i + 1 < n && SPACE_LEAD[s[i + 1] as usize] && space_at(s, i + 1).is_some() {
                    break i;
                }
                i += 1;
            }
            Some(_) => break i,
            None => i += 1,
        }
    };
    o.reserve(n);
    o.extend_from_slice(&s[..first]);
    let mut i = first;
    while i < n {
        let k = s[i..]
            .iter()
            .position(|&c| SPACE_LEAD[c as usize])
            .unwrap_or(n - i);
        o.extend_from_slice(&s[i..i + k]);
        i += k;
        if i >= n {
            break;
        }
        if let Some(l) = space_at(s, i) {
            let mut j = i + l;
            while let Some(l) = space_at(s, j) {
                j += l;
            }
            o.push(b' ');
            i = j;
        } else {
            let e = (i + char_len(s[i])).min(n);
            o.extend_from_slice(&s[i..e]);
            i = e;
        }
    }
    true
}
