//! NLTK's Porter stemmer (`PorterStemmer.NLTK_EXTENSIONS` mode), as rouge-score and METEOR use it.
//!
//! A line-by-line port of `nltk/stem/porter.py` from nltk 3.9.1 in its default mode
//! (`NLTK_EXTENSIONS`): the irregular-forms pool (`skies` → `sky`, `dying` → `die`, …), the
//! `ies`/`ied` length-4 rules, the `(*c and not c) Y → I` step 1c, the recursive `alli` rule,
//! `fulli` and `logi` in step 2, and words of at most two characters returned unchanged.
//! Quirks of the Python code are kept on purpose (for instance the `*d` rule of step 1b also
//! fires on a literal `*d` suffix), so that every input stems exactly as NLTK stems it.
//!
//! ```
//! use pgraphrag_text::porter::stem;
//! assert_eq!(stem("caresses"), "caress");
//! assert_eq!(stem("Running"), "run");
//! assert_eq!(stem("skies"), "sky");
//! assert_eq!(stem("generalizations"), "gener");
//! ```

/// NLTK's irregular forms: `(form, stem)`, checked against the word as given (before lowercasing).
const POOL: &[(&str, &str)] = &[
    ("sky", "sky"),
    ("skies", "sky"),
    ("dying", "die"),
    ("lying", "lie"),
    ("tying", "tie"),
    ("news", "news"),
    ("innings", "inning"),
    ("inning", "inning"),
    ("outings", "outing"),
    ("outing", "outing"),
    ("cannings", "canning"),
    ("canning", "canning"),
    ("howe", "howe"),
    ("proceed", "proceed"),
    ("exceed", "exceed"),
    ("succeed", "succeed"),
];

/// A Porter stemmer in NLTK's `NLTK_EXTENSIONS` mode. Stateless; [`stem`] is the same thing as a function.
#[derive(Debug, Clone, Copy, Default)]
pub struct PorterStemmer;

impl PorterStemmer {
    /// Creates the stemmer (NLTK extensions mode, the only mode implemented).
    pub fn new() -> Self {
        PorterStemmer
    }

    /// Stems one word exactly like `nltk.stem.PorterStemmer().stem(word)` (lowercases first).
    pub fn stem(&self, word: &str) -> String {
        stem(word)
    }
}

/// Stems one word exactly like `nltk.stem.PorterStemmer().stem(word)` in nltk 3.9.1.
///
/// The word is lowercased first (Python `str.lower`). Never panics, on any UTF-8 input.
pub fn stem(word: &str) -> String {
    if let Some((_, s)) = POOL.iter().find(|(w, _)| *w == word) {
        return (*s).to_string();
    }
    let lower = word.to_lowercase();
    if word.chars().count() <= 2 {
        return lower;
    }
    let mut w: Vec<char> = lower.chars().collect();
    w = step1a(w);
    w = step1b(w);
    w = step1c(w);
    w = step2(w);
    w = step3(w);
    w = step4(w);
    w = step5a(w);
    w = step5b(w);
    w.into_iter().collect()
}

type W = Vec<char>;

fn is_vowel(c: char) -> bool {
    matches!(c, 'a' | 'e' | 'i' | 'o' | 'u')
}

/// `_is_consonant(word, i)`; the recursion on runs of `y` is unrolled.
fn is_consonant(w: &[char], i: usize) -> bool {
    // y at i is a consonant iff i == 0 or w[i-1] is not a consonant.
    let mut i = i;
    let mut negations = 0usize;
    loop {
        let c = w[i];
        let base = if is_vowel(c) {
            false
        } else if c == 'y' {
            if i == 0 {
                true
            } else {
                negations += 1;
                i -= 1;
                continue;
            }
        } else {
            true
        };
        return if negations.is_multiple_of(2) {
            base
        } else {
            !base
        };
    }
}

/// Calls `f(is_consonant)` for each position, left to right, without allocating.
fn for_each_cv(w: &[char], mut f: impl FnMut(bool)) {
    let mut prev_cons = false;
    for (i, &c) in w.iter().enumerate() {
        let cons = if is_vowel(c) {
            false
        } else if c == 'y' {
            i == 0 || !prev_cons
        } else {
            true
        };
        f(cons);
        prev_cons = cons;
    }
}

/// The number of `vc` sequences in the consonant/vowel pattern (Porter's m).
fn measure(w: &[char]) -> usize {
    let mut m = 0;
    let mut prev_vowel = false;
    for_each_cv(w, |cons| {
        if cons && prev_vowel {
            m += 1;
        }
        prev_vowel = !cons;
    });
    m
}

fn contains_vowel(w: &[char]) -> bool {
    let mut any = false;
    for_each_cv(w, |cons| any |= !cons);
    any
}

fn ends_double_consonant(w: &[char]) -> bool {
    let n = w.len();
    n >= 2 && w[n - 1] == w[n - 2] && is_consonant(w, n - 1)
}

fn ends_cvc(w: &[char]) -> bool {
    let n = w.len();
    (n >= 3
        && is_consonant(w, n - 3)
        && !is_consonant(w, n - 2)
        && is_consonant(w, n - 1)
        && !matches!(w[n - 1], 'w' | 'x' | 'y'))
        || (n == 2 && !is_consonant(w, 0) && is_consonant(w, 1))
}

fn ends_with(w: &[char], suffix: &str) -> bool {
    let n = suffix.chars().count();
    n <= w.len() && w[w.len() - n..].iter().copied().eq(suffix.chars())
}

fn strip(w: &[char], suffix: &str) -> W {
    w[..w.len() - suffix.chars().count()].to_vec()
}

fn cat(mut stem: W, rep: &str) -> W {
    stem.extend(rep.chars());
    stem
}

enum Cond<'a> {
    None,
    PosMeasure,
    MeasureGt1,
    Fn(&'a dyn Fn(&[char]) -> bool),
}

impl Cond<'_> {
    fn ok(&self, stem: &[char]) -> bool {
        match self {
            Cond::None => true,
            Cond::PosMeasure => measure(stem) > 0,
            Cond::MeasureGt1 => measure(stem) > 1,
            Cond::Fn(f) => f(stem),
        }
    }
}

/// `_apply_rule_list`: the first rule whose suffix matches decides (applied or word unchanged).
fn apply_rules(w: W, rules: &[(&str, &str, Cond<'_>)]) -> W {
    for (suffix, rep, cond) in rules {
        if *suffix == "*d" && ends_double_consonant(&w) {
            let stem = w[..w.len() - 2].to_vec();
            return if cond.ok(&stem) { cat(stem, rep) } else { w };
        }
        if ends_with(&w, suffix) {
            let stem = strip(&w, suffix);
            return if cond.ok(&stem) { cat(stem, rep) } else { w };
        }
    }
    w
}

fn step1a(w: W) -> W {
    if ends_with(&w, "ies") && w.len() == 4 {
        return cat(strip(&w, "ies"), "ie");
    }
    apply_rules(
        w,
        &[
            ("sses", "ss", Cond::None),
            ("ies", "i", Cond::None),
            ("ss", "ss", Cond::None),
            ("s", "", Cond::None),
        ],
    )
}

fn step1b(w: W) -> W {
    if ends_with(&w, "ied") {
        let rep = if w.len() == 4 { "ie" } else { "i" };
        return cat(strip(&w, "ied"), rep);
    }
    if ends_with(&w, "eed") {
        let stem = strip(&w, "eed");
        return if measure(&stem) > 0 {
            cat(stem, "ee")
        } else {
            w
        };
    }
    let mut inter: Option<W> = None;
    for suffix in ["ed", "ing"] {
        if ends_with(&w, suffix) {
            let s = strip(&w, suffix);
            if contains_vowel(&s) {
                inter = Some(s);
                break;
            }
        }
    }
    let Some(inter) = inter else { return w };
    // contains_vowel guarantees a non-empty stem.
    let last = inter[inter.len() - 1];
    let last_s = last.to_string();
    let not_lsz = move |_: &[char]| !matches!(last, 'l' | 's' | 'z');
    let m1_cvc = |s: &[char]| measure(s) == 1 && ends_cvc(s);
    apply_rules(
        inter,
        &[
            ("at", "ate", Cond::None),
            ("bl", "ble", Cond::None),
            ("iz", "ize", Cond::None),
            ("*d", &last_s, Cond::Fn(&not_lsz)),
            ("", "e", Cond::Fn(&m1_cvc)),
        ],
    )
}

fn step1c(w: W) -> W {
    let cond = |s: &[char]| s.len() > 1 && is_consonant(s, s.len() - 1);
    apply_rules(w, &[("y", "i", Cond::Fn(&cond))])
}

fn step2(w: W) -> W {
    if ends_with(&w, "alli") && measure(&strip(&w, "alli")) > 0 {
        return step2(cat(strip(&w, "alli"), "al"));
    }
    let word_minus3: W = if w.len() >= 3 {
        w[..w.len() - 3].to_vec()
    } else {
        Vec::new()
    };
    let logi = move |_: &[char]| measure(&word_minus3) > 0;
    apply_rules(
        w,
        &[
            ("ational", "ate", Cond::PosMeasure),
            ("tional", "tion", Cond::PosMeasure),
            ("enci", "ence", Cond::PosMeasure),
            ("anci", "ance", Cond::PosMeasure),
            ("izer", "ize", Cond::PosMeasure),
            ("bli", "ble", Cond::PosMeasure),
            ("alli", "al", Cond::PosMeasure),
            ("entli", "ent", Cond::PosMeasure),
            ("eli", "e", Cond::PosMeasure),
            ("ousli", "ous", Cond::PosMeasure),
            ("ization", "ize", Cond::PosMeasure),
            ("ation", "ate", Cond::PosMeasure),
            ("ator", "ate", Cond::PosMeasure),
            ("alism", "al", Cond::PosMeasure),
            ("iveness", "ive", Cond::PosMeasure),
            ("fulness", "ful", Cond::PosMeasure),
            ("ousness", "ous", Cond::PosMeasure),
            ("aliti", "al", Cond::PosMeasure),
            ("iviti", "ive", Cond::PosMeasure),
            ("biliti", "ble", Cond::PosMeasure),
            ("fulli", "ful", Cond::PosMeasure),
            ("logi", "log", Cond::Fn(&logi)),
        ],
    )
}

fn step3(w: W) -> W {
    apply_rules(
        w,
        &[
            ("icate", "ic", Cond::PosMeasure),
            ("ative", "", Cond::PosMeasure),
            ("alize", "al", Cond::PosMeasure),
            ("iciti", "ic", Cond::PosMeasure),
            ("ical", "ic", Cond::PosMeasure),
            ("ful", "", Cond::PosMeasure),
            ("ness", "", Cond::PosMeasure),
        ],
    )
}

fn step4(w: W) -> W {
    let ion = |s: &[char]| measure(s) > 1 && matches!(s.last(), Some('s' | 't'));
    apply_rules(
        w,
        &[
            ("al", "", Cond::MeasureGt1),
            ("ance", "", Cond::MeasureGt1),
            ("ence", "", Cond::MeasureGt1),
            ("er", "", Cond::MeasureGt1),
            ("ic", "", Cond::MeasureGt1),
            ("able", "", Cond::MeasureGt1),
            ("ible", "", Cond::MeasureGt1),
            ("ant", "", Cond::MeasureGt1),
            ("ement", "", Cond::MeasureGt1),
            ("ment", "", Cond::MeasureGt1),
            ("ent", "", Cond::MeasureGt1),
            ("ion", "", Cond::Fn(&ion)),
            ("ou", "", Cond::MeasureGt1),
            ("ism", "", Cond::MeasureGt1),
            ("ate", "", Cond::MeasureGt1),
            ("iti", "", Cond::MeasureGt1),
            ("ous", "", Cond::MeasureGt1),
            ("ive", "", Cond::MeasureGt1),
            ("ize", "", Cond::MeasureGt1),
        ],
    )
}

fn step5a(w: W) -> W {
    if ends_with(&w, "e") {
        let stem = strip(&w, "e");
        let m = measure(&stem);
        if m > 1 || (m == 1 && !ends_cvc(&stem)) {
            return stem;
        }
    }
    w
}

fn step5b(w: W) -> W {
    let minus1: W = w[..w.len().saturating_sub(1)].to_vec();
    let cond = move |_: &[char]| measure(&minus1) > 1;
    apply_rules(w, &[("ll", "l", Cond::Fn(&cond))])
}

#[cfg(test)]
mod tests {
    use super::stem;

    #[test]
    fn classic_vocabulary() {
        for (w, s) in [
            ("caresses", "caress"),
            ("ponies", "poni"),
            ("ties", "tie"),
            ("cats", "cat"),
            ("agreed", "agre"),
            ("plastered", "plaster"),
            ("motoring", "motor"),
            ("hopping", "hop"),
            ("happy", "happi"),
            ("relational", "relat"),
            ("controlling", "control"),
            ("dying", "die"),
            ("a*ding", "ad"),
            ("", ""),
        ] {
            assert_eq!(stem(w), s, "{w}");
        }
    }
}
