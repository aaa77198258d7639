//! Port of nltk 3.9.1's Punkt sentence tokenizer (`nltk/tokenize/punkt.py`,
//! `PunktSentenceTokenizer` with the default `PunktLanguageVars` and `PunktToken`), inference
//! only, with parameters loaded from the compact files in `crates/text/data/`.

use std::borrow::{Borrow, Cow};
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::path::Path;
use std::sync::OnceLock;

use crate::error::TextError;
use crate::py::{is_space, lower as python_lower, rstrip as py_rstrip};
use crate::unicode::{is_alpha_re, is_digit, is_lower, is_upper};
use pgraphrag_core::Language;

const ORTHO_BEG_UC: u32 = 1 << 1;
const ORTHO_MID_UC: u32 = 1 << 2;
const ORTHO_UNK_UC: u32 = 1 << 3;
const ORTHO_BEG_LC: u32 = 1 << 4;
const ORTHO_MID_LC: u32 = 1 << 5;
const ORTHO_UNK_LC: u32 = 1 << 6;
const ORTHO_UC: u32 = ORTHO_BEG_UC + ORTHO_MID_UC + ORTHO_UNK_UC;
const ORTHO_LC: u32 = ORTHO_BEG_LC + ORTHO_MID_LC + ORTHO_UNK_LC;

/// The four learned tables of a Punkt model (NLTK's `PunktParameters`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PunktParameters {
    /// Abbreviation types (lowercase, without the final period).
    pub abbrev_types: HashSet<String>,
    /// Collocations `(type1, type2)` across which no sentence break is made.
    pub collocations: HashSet<(String, String)>,
    /// Frequent sentence starters.
    pub sent_starters: HashSet<String>,
    /// Orthographic context flags of each type.
    pub ortho_context: HashMap<String, u32>,
}

impl PunktParameters {
    /// Parse the compact format of `crates/text/data/*.punkt` (see `data/README.md`).
    pub fn from_compact(text: &str, source: &str) -> Result<Self, TextError> {
        let mut p = PunktParameters::default();
        let mut section = "";
        for (no, line) in text.lines().enumerate() {
            let err = |what: &str| TextError::PunktData {
                resource: source.to_string(),
                line: no + 1,
                message: what.to_string(),
            };
            if let Some(name) = line.strip_prefix("@@") {
                section = match name {
                    "abbrev_types" | "collocations" | "sent_starters" | "ortho_context" => name,
                    _ => return Err(err("unknown section")),
                };
                continue;
            }
            match section {
                "" if line.starts_with('#') || line.is_empty() => {}
                "" => return Err(err("record before the first @@section")),
                "abbrev_types" => {
                    p.abbrev_types.insert(line.to_string());
                }
                "sent_starters" => {
                    p.sent_starters.insert(line.to_string());
                }
                "collocations" => {
                    let (a, b) = line
                        .split_once('\t')
                        .ok_or_else(|| err("collocation without a tab"))?;
                    p.collocations.insert((a.to_string(), b.to_string()));
                }
                _ => {
                    let (a, b) = line
                        .split_once('\t')
                        .ok_or_else(|| err("ortho_context record without a tab"))?;
                    let v = b
                        .parse::<u32>()
                        .map_err(|_| err("ortho_context flags are not an integer"))?;
                    p.ortho_context.insert(a.to_string(), v);
                }
            }
        }
        Ok(p)
    }

    /// Load an NLTK `punkt_tab/<language>/` directory (`abbrev_types.txt`, `collocations.tab`,
    /// `sent_starters.txt`, `ortho_context.tab`), as `nltk.tokenize.punkt.load_punkt_params` does.
    pub fn from_punkt_tab_dir(dir: &Path) -> Result<Self, TextError> {
        let read = |name: &str| {
            let path = dir.join(name);
            std::fs::read_to_string(&path).map_err(|e| TextError::Io {
                path: path.display().to_string(),
                source: e,
            })
        };
        // NLTK strips only one trailing "\n" per line (`rm_nl`).
        let lines = |s: &str| -> Vec<String> {
            s.split_inclusive('\n')
                .map(|l| l.strip_suffix('\n').unwrap_or(l).to_string())
                .collect()
        };
        let mut p = PunktParameters::default();
        for l in lines(&read("abbrev_types.txt")?) {
            p.abbrev_types.insert(l);
        }
        for l in lines(&read("sent_starters.txt")?) {
            p.sent_starters.insert(l);
        }
        let src = dir.display().to_string();
        for (no, l) in lines(&read("collocations.tab")?).into_iter().enumerate() {
            let parts: Vec<&str> = l.split('\t').collect();
            if parts.len() != 2 {
                return Err(TextError::PunktData {
                    resource: format!("{src}/collocations.tab"),
                    line: no + 1,
                    message: "expected two tab-separated fields".into(),
                });
            }
            p.collocations.insert((parts[0].into(), parts[1].into()));
        }
        for (no, l) in lines(&read("ortho_context.tab")?).into_iter().enumerate() {
            let bad = || TextError::PunktData {
                resource: format!("{src}/ortho_context.tab"),
                line: no + 1,
                message: "expected `type<TAB>integer`".into(),
            };
            let (a, b) = l.split_once('\t').ok_or_else(bad)?;
            p.ortho_context
                .insert(a.into(), b.parse().map_err(|_| bad())?);
        }
        Ok(p)
    }

    fn ortho(&self, typ: &str) -> u32 {
        self.ortho_context.get(typ).copied().unwrap_or(0)
    }
}

static ENGLISH: &str = include_str!("../data/english.punkt");
static PORTUGUESE: &str = include_str!("../data/portuguese.punkt");

/// The shipped parameters of `lang`, parsed once.
pub fn parameters(lang: Language) -> &'static PunktParameters {
    static EN: OnceLock<PunktParameters> = OnceLock::new();
    static PT: OnceLock<PunktParameters> = OnceLock::new();
    let (cell, data, name) = match lang {
        Language::English => (&EN, ENGLISH, "data/english.punkt"),
        Language::Portuguese => (&PT, PORTUGUESE, "data/portuguese.punkt"),
    };
    cell.get_or_init(|| {
        PunktParameters::from_compact(data, name)
            .expect("the embedded Punkt data is valid (checked by the crate's tests)")
    })
}

/// A Punkt sentence tokenizer (inference with fixed parameters).
#[derive(Debug, Clone, Copy)]
pub struct PunktSentenceTokenizer<'p> {
    params: &'p PunktParameters,
}

impl PunktSentenceTokenizer<'static> {
    /// The tokenizer NLTK's `sent_tokenize(text, language)` uses.
    pub fn for_language(lang: Language) -> Self {
        PunktSentenceTokenizer {
            params: parameters(lang),
        }
    }
}

impl<'p> PunktSentenceTokenizer<'p> {
    /// A tokenizer with custom parameters.
    pub fn new(params: &'p PunktParameters) -> Self {
        PunktSentenceTokenizer { params }
    }

    /// `PunktSentenceTokenizer.tokenize(text)` (with `realign_boundaries=True`).
    pub fn tokenize<'t>(&self, text: &'t str) -> Vec<&'t str> {
        self.span_tokenize(text)
            .into_iter()
            .map(|(s, e)| if s < e { &text[s..e] } else { "" })
            .collect()
    }

    /// `span_tokenize(text)`: byte ranges of the sentences (`start >= end` means an empty
    /// sentence, which NLTK can produce in rare realignment cases).
    pub fn span_tokenize(&self, text: &str) -> Vec<(usize, usize)> {
        let slices = self.slices_from_text(text);
        realign_boundaries(text, &slices)
    }

    fn slices_from_text(&self, text: &str) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let mut last_break = 0usize;
        let mut ctx = String::new();
        for m in potential_end_contexts(text) {
            ctx.clear();
            ctx.push_str(slice(text, m.prev_start, m.prev_stop));
            ctx.push_str(&text[m.pos..m.after_end]);
            if self.text_contains_sentbreak(&ctx) {
                out.push((last_break, m.pos + 1));
                last_break = m.next_tok_start.unwrap_or(m.pos + 1);
            }
        }
        out.push((last_break, py_rstrip(text).len()));
        out
    }

    /// `text_contains_sentbreak`: does a token other than the last end a sentence?
    fn text_contains_sentbreak(&self, text: &str) -> bool {
        // Streaming over consecutive pairs: `second_pass(t_i, t_i+1)` only changes `t_i`, so
        // this is NLTK's loop over the fully annotated list, without building the list.
        let mut prev: Option<Token> = None;
        for line in text.split('\n') {
            for w in punkt_word_tokenize(line) {
                let cur = self.first_pass(w);
                if let Some(mut p) = prev.take() {
                    self.second_pass(&mut p, &cur);
                    if p.sentbreak {
                        return true;
                    }
                }
                prev = Some(cur);
            }
        }
        false
    }

    fn first_pass<'t>(&self, tok: &'t str) -> Token<'t> {
        let mut t = Token::new(tok);
        if tok == "." || tok == "?" || tok == "!" {
            t.sentbreak = true;
        } else if is_ellipsis(tok) {
            t.ellipsis = true;
        } else if t.period_final && !tok.ends_with("..") {
            let low = lower_cow(&tok[..tok.len() - 1]);
            let last = low.rsplit('-').next().unwrap_or("");
            // `last` is `low` itself when there is no hyphen: one lookup then.
            if self.params.abbrev_types.contains(low.as_ref())
                || (last.len() != low.len() && self.params.abbrev_types.contains(last))
            {
                t.abbr = true;
            } else {
                t.sentbreak = true;
            }
        }
        t
    }

    fn second_pass(&self, t1: &mut Token, t2: &Token) {
        if !t1.period_final {
            return;
        }
        let typ = t1.type_no_period();
        let next_typ = t2.type_no_sentperiod();
        let initial = t1.is_initial();
        if !self.params.collocations.is_empty()
            && self
                .params
                .collocations
                .contains(&(typ, next_typ) as &dyn PairKey)
        {
            t1.sentbreak = false;
            t1.abbr = true;
            return;
        }
        if (t1.abbr || t1.ellipsis) && !initial {
            let h = self.ortho_heuristic(t2);
            if h == Ortho::True {
                t1.sentbreak = true;
                return;
            }
            if t2.first_upper() && self.params.sent_starters.contains(next_typ) {
                t1.sentbreak = true;
                return;
            }
        }
        if initial || typ == "##number##" {
            let h = self.ortho_heuristic(t2);
            if h == Ortho::False {
                t1.sentbreak = false;
                t1.abbr = true;
                return;
            }
            if h == Ortho::Unknown
                && initial
                && t2.first_upper()
                && self.params.ortho(next_typ) & ORTHO_LC == 0
            {
                t1.sentbreak = false;
                t1.abbr = true;
            }
        }
    }

    fn ortho_heuristic(&self, t: &Token) -> Ortho {
        if matches!(t.tok, ";" | ":" | "," | "." | "!" | "?") {
            return Ortho::False;
        }
        let oc = self.params.ortho(t.type_no_sentperiod());
        if t.first_upper() && oc & ORTHO_LC != 0 && oc & ORTHO_MID_UC == 0 {
            return Ortho::True;
        }
        if t.first_lower() && (oc & ORTHO_UC != 0 || oc & ORTHO_BEG_LC == 0) {
            return Ortho::False;
        }
        Ortho::Unknown
    }
}

/// A borrowed `(type1, type2)` key, to look up `collocations` without allocating.
trait PairKey {
    fn pair(&self) -> (&str, &str);
}

impl PairKey for (String, String) {
    fn pair(&self) -> (&str, &str) {
        (&self.0, &self.1)
    }
}

impl PairKey for (&str, &str) {
    fn pair(&self) -> (&str, &str) {
        (self.0, self.1)
    }
}

impl<'a> Borrow<dyn PairKey + 'a> for (String, String) {
    fn borrow(&self) -> &(dyn PairKey + 'a) {
        self
    }
}

/// Hashes like `(String, String)` (the tuple hashes its fields in order, a `String` like its
/// `str`), as `Borrow` requires.
impl Hash for dyn PairKey + '_ {
    fn hash<H: Hasher>(&self, state: &mut H) {
        let (a, b) = self.pair();
        a.hash(state);
        b.hash(state);
    }
}

impl PartialEq for dyn PairKey + '_ {
    fn eq(&self, other: &Self) -> bool {
        self.pair() == other.pair()
    }
}

impl Eq for dyn PairKey + '_ {}

/// `str.lower()`, borrowing when the text is ASCII without capitals (lowercasing changes nothing).
fn lower_cow(s: &str) -> Cow<'_, str> {
    if s.bytes().all(|b| b.is_ascii() && !b.is_ascii_uppercase()) {
        Cow::Borrowed(s)
    } else {
        Cow::Owned(python_lower(s))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ortho {
    True,
    False,
    Unknown,
}

/// `PunktToken` (only what inference needs).
struct Token<'t> {
    tok: &'t str,
    typ: Cow<'t, str>,
    period_final: bool,
    sentbreak: bool,
    abbr: bool,
    ellipsis: bool,
}

impl<'t> Token<'t> {
    fn new(tok: &'t str) -> Self {
        let low = lower_cow(tok);
        let typ = if is_numeric(&low) {
            Cow::Borrowed("##number##")
        } else {
            low
        };
        Token {
            tok,
            typ,
            period_final: tok.ends_with('.'),
            sentbreak: false,
            abbr: false,
            ellipsis: false,
        }
    }

    fn type_no_period(&self) -> &str {
        if self.typ.len() > 1 && self.typ.ends_with('.') {
            &self.typ[..self.typ.len() - 1]
        } else {
            &self.typ
        }
    }

    fn type_no_sentperiod(&self) -> &str {
        if self.sentbreak {
            self.type_no_period()
        } else {
            &self.typ
        }
    }

    fn first_upper(&self) -> bool {
        self.tok.chars().next().is_some_and(is_upper)
    }

    fn first_lower(&self) -> bool {
        self.tok.chars().next().is_some_and(is_lower)
    }

    /// `[^\W\d]\.$`
    fn is_initial(&self) -> bool {
        let mut cs = self.tok.chars();
        matches!((cs.next(), cs.next(), cs.next()), (Some(c), Some('.'), None) if is_alpha_re(c))
    }
}

/// `\.\.+$` (match at the start).
fn is_ellipsis(tok: &str) -> bool {
    tok.len() >= 2 && tok.bytes().all(|b| b == b'.')
}

/// `^-?[\.,]?\d[\d,\.-]*\.?$`
fn is_numeric(s: &str) -> bool {
    let mut cs = s.chars().peekable();
    if cs.peek() == Some(&'-') {
        cs.next();
    }
    if matches!(cs.peek(), Some('.') | Some(',')) {
        cs.next();
    }
    match cs.next() {
        Some(c) if is_digit(c) => {}
        _ => return false,
    }
    // `[\d,\.-]*\.?$`: the optional period is itself in the class.
    cs.all(|c| is_digit(c) || matches!(c, ',' | '.' | '-'))
}

fn slice(text: &str, s: usize, e: usize) -> &str {
    if s < e { &text[s..e] } else { "" }
}

/// A match of `_period_context_re` with what `_match_potential_end_contexts` yields.
struct EndContext {
    /// Byte position of the sentence-end character.
    pos: usize,
    /// End of `after_tok`.
    after_end: usize,
    next_tok_start: Option<usize>,
    /// The previous word slice.
    prev_start: usize,
    prev_stop: usize,
}

/// `PunktLanguageVars._re_non_word_chars`.
#[inline]
fn is_non_word(c: char) -> bool {
    matches!(
        c,
        ')' | '"' | ';' | '}' | ']' | '*' | ':' | '@' | '\'' | '(' | '{' | '[' | '?' | '!'
    )
}

/// `_match_potential_end_contexts`.
fn potential_end_contexts(text: &str) -> Vec<EndContext> {
    struct Raw {
        pos: usize,
        after_end: usize,
        next_tok_start: Option<usize>,
    }
    let bytes = text.as_bytes();
    let mut raws = Vec::new();
    for (i, _) in bytes
        .iter()
        .enumerate()
        .filter(|&(_, &b)| matches!(b, b'.' | b'?' | b'!'))
    {
        let rest = &text[i + 1..];
        let mut it = rest.char_indices();
        match it.next() {
            Some((_, n)) if is_non_word(n) => raws.push(Raw {
                pos: i,
                after_end: i + 1 + n.len_utf8(),
                next_tok_start: None,
            }),
            Some((_, n)) if is_space(n) => {
                let ws_end = rest.find(|c: char| !is_space(c));
                if let Some(ws) = ws_end {
                    let tok = &rest[ws..];
                    let tok_len = tok.find(is_space).unwrap_or(tok.len());
                    raws.push(Raw {
                        pos: i,
                        after_end: i + 1 + ws + tok_len,
                        next_tok_start: Some(i + 1 + ws),
                    });
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::with_capacity(raws.len());
    let (mut prev_start, mut prev_stop) = (0usize, 0usize);
    let mut previous: Option<Raw> = None;
    for m in raws {
        // _get_last_whitespace_index over text[prev_stop:m.pos] (string.whitespace is ASCII).
        let before = if prev_stop < m.pos {
            &bytes[prev_stop..m.pos]
        } else {
            &[][..]
        };
        let idx = before
            .iter()
            .rposition(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c'))
            .unwrap_or(0);
        let start = if idx != 0 {
            idx + prev_stop + 1
        } else {
            prev_start
        };
        if let Some(p) = previous.take()
            && prev_stop <= start
        {
            out.push(EndContext {
                pos: p.pos,
                after_end: p.after_end,
                next_tok_start: p.next_tok_start,
                prev_start,
                prev_stop,
            });
        }
        previous = Some(m);
        prev_start = start;
        prev_stop = out_pos(&previous);
    }
    if let Some(p) = previous {
        out.push(EndContext {
            pos: p.pos,
            after_end: p.after_end,
            next_tok_start: p.next_tok_start,
            prev_start,
            prev_stop,
        });
    }
    return out;

    fn out_pos(r: &Option<Raw>) -> usize {
        r.as_ref().map_or(0, |r| r.pos)
    }
}

/// `_realign_boundaries`.
fn realign_boundaries(text: &str, slices: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let mut out = Vec::with_capacity(slices.len());
    let mut realign = 0usize;
    for (k, &(s1, e1)) in slices.iter().enumerate() {
        let s1 = s1 + realign;
        let Some(&(s2, e2)) = slices.get(k + 1) else {
            if s1 < e1 {
                out.push((s1, e1));
            }
            continue;
        };
        match boundary_realignment(slice(text, s2, e2)) {
            Some((kept, end)) => {
                out.push((s1, s2 + kept));
                realign = end;
            }
            None => {
                realign = 0;
                if s1 < e1 {
                    out.push((s1, e1));
                }
            }
        }
    }
    out
}

/// `re_boundary_realignment.match(s)`: `["\')\]}]+?(?:\s+|(?=--)|$)` (MULTILINE). Returns the
/// length of the closing punctuation and the end of the match.
fn boundary_realignment(s: &str) -> Option<(usize, usize)> {
    let b = s.as_bytes();
    let closer = |x: u8| matches!(x, b'"' | b'\'' | b')' | b']' | b'}');
    let mut k = 0;
    while k < b.len() && closer(b[k]) {
        k += 1;
        let rest = &s[k..];
        if rest.starts_with(is_space) {
            let ws = rest.find(|c: char| !is_space(c)).unwrap_or(rest.len());
            return Some((k, k + ws));
        }
        if rest.starts_with("--") || rest.is_empty() || rest.starts_with('\n') {
            return Some((k, k));
        }
    }
    None
}

/// `PunktLanguageVars.word_tokenize` on one line (no `\n` inside).
pub(crate) fn punkt_word_tokenize(line: &str) -> Vec<&str> {
    let cs: Vec<(usize, char)> = line.char_indices().collect();
    let n = cs.len();
    let at = |q: usize| cs.get(q).map(|&(_, c)| c);
    let off = |q: usize| cs.get(q).map_or(line.len(), |&(o, _)| o);
    // `(?:\-{2,}|\.{2,}|(?:\.\s){2,}\.)` at q: length in chars.
    let multichar = |q: usize| -> Option<usize> {
        let c = at(q)?;
        let c1 = at(q + 1);
        if c == '-' && c1 == Some('-') {
            return Some(cs[q..].iter().take_while(|&&(_, c)| c == '-').count());
        }
        if c == '.' && c1 == Some('.') {
            return Some(cs[q..].iter().take_while(|&&(_, c)| c == '.').count());
        }
        if c == '.' {
            let mut k = 0;
            let mut j = q;
            while at(j) == Some('.') && at(j + 1).is_some_and(is_space) {
                k += 1;
                j += 2;
            }
            if k >= 2 && at(j) == Some('.') {
                return Some(2 * k + 1);
            }
            if k >= 3 {
                return Some(2 * k - 1);
            }
        }
        None
    };
    let word_start_excluded = |c: char| {
        matches!(
            c,
            '(' | '"'
                | '`'
                | '{'
                | '['
                | ':'
                | ';'
                | '&'
                | '#'
                | '*'
                | '@'
                | ')'
                | '}'
                | ']'
                | '-'
                | ','
        )
    };
    let end_ok = |q: usize| -> bool {
        match at(q) {
            None => true,
            Some(c) if is_space(c) || is_non_word(c) => true,
            Some(c) => {
                multichar(q).is_some()
                    || (c == ','
                        && match at(q + 1) {
                            None => true,
                            Some(d) => is_space(d) || is_non_word(d) || multichar(q + 1).is_some(),
                        })
            }
        }
    };
    let mut out = Vec::new();
    let mut p = 0;
    while p < n {
        let c = cs[p].1;
        if let Some(l) = multichar(p) {
            out.push(&line[off(p)..off(p + l)]);
            p += l;
        } else if is_space(c) {
            p += 1;
        } else if !word_start_excluded(c) {
            let mut q = p + 1;
            while !end_ok(q) {
                q += 1;
            }
            out.push(&line[off(p)..off(q)]);
            p = q;
        } else {
            out.push(&line[off(p)..off(p + 1)]);
            p += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_types() {
        for s in ["3.5", "-1,000.", ".5", "1-2-3", "٣"] {
            assert!(is_numeric(s), "{s}");
        }
        for s in ["a1", "-", "1a", "--1", ""] {
            assert!(!is_numeric(s), "{s}");
        }
    }

    #[test]
    fn punkt_words() {
        assert_eq!(
            punkt_word_tokenize("Hello, world... (U.S.) don't -- x. . . y"),
            vec![
                "Hello", ",", "world", "...", "(", "U.S.", ")", "don", "'t", "--", "x", ". . .",
                "y"
            ]
        );
    }
}
