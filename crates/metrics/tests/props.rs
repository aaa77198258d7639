//! Robustness: no panic on any UTF-8, scores in range, score(x, x) = 1 where the metric promises it.
use pgraphrag_metrics::bleu::{sentence_bleu, tokenize_13a};
use pgraphrag_metrics::meteor::Meteor;
use pgraphrag_metrics::rating::parse_python_float;
use pgraphrag_metrics::rouge::{Rouge, RougeOptions, RougeTokenizer};
use proptest::prelude::*;

fn rouges() -> Vec<Rouge> {
    let mut v = Vec::new();
    for stemmer in [false, true] {
        for tokenizer in [RougeTokenizer::Ascii, RougeTokenizer::Unicode] {
            v.push(Rouge::new(RougeOptions { stemmer, tokenizer }));
        }
    }
    v
}

/// sacreBLEU's `Tokenizer13a` with its four regexes (Rust's `regex` has Python `re`'s
/// leftmost-first, non-overlapping semantics for these patterns): the oracle for the hand-written
/// scanner in `tokenize_13a`.
fn regex_13a(line: &str) -> String {
    let mut line = line
        .replace("<skipped>", "")
        .replace("-\n", "")
        .replace('\n', " ");
    if line.contains('&') {
        line = line
            .replace("&quot;", "\"")
            .replace("&amp;", "&")
            .replace("&lt;", "<")
            .replace("&gt;", ">");
    }
    let mut s = format!(" {line} ");
    for (re, rep) in [
        (r"([\{-~\[-`\x20-&\(-\+:-@/])", " $1 "),
        (r"([^0-9])([\.,])", "$1 $2 "),
        (r"([\.,])([^0-9])", " $1 $2"),
        (r"([0-9])(-)", "$1 $2 "),
    ] {
        s = regex::Regex::new(re)
            .unwrap()
            .replace_all(&s, rep)
            .into_owned();
    }
    s.split(|c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c))
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[a-zA-Z0-9 .,!?'\\-\n]{0,80}",
        "[a-zçãéíóúâêôà ]{0,60}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn rouge_in_range(p in text(), r in text()) {
        for rouge in rouges() {
            for (_, s) in rouge.score(&p, &r).named() {
                for x in [s.precision, s.recall, s.fmeasure] {
                    prop_assert!((0.0..=1.0).contains(&x), "{x}");
                }
            }
        }
    }

    #[test]
    fn rouge_identity(p in text()) {
        for rouge in rouges() {
            let n = rouge.tokenize(&p).len();
            let s = rouge.score(&p, &p);
            if n >= 1 {
                prop_assert_eq!(s.rouge1.fmeasure, 1.0);
                prop_assert_eq!(s.rouge_l.fmeasure, 1.0);
                prop_assert_eq!(s.rouge_lsum.fmeasure, 1.0);
            }
            if n >= 2 {
                prop_assert_eq!(s.rouge2.fmeasure, 1.0);
            }
        }
    }

    #[test]
    fn bleu_in_range_and_identity(p in text(), r in text()) {
        let s = sentence_bleu(&p, &[&r]).score;
        prop_assert!((0.0..=100.0 + 1e-9).contains(&s), "{s}");
        let same = sentence_bleu(&p, &[&p]).score;
        if !tokenize_13a(p.trim_end()).is_empty() {
            prop_assert!((same - 100.0).abs() < 1e-9, "{same}");
        }
    }

    #[test]
    fn tokenize_13a_equals_the_regex_rules(p in "[ a-z0-9.,\\-&;<>'\"\n]{0,40}", q in any::<String>()) {
        for s in [p, q] {
            prop_assert_eq!(tokenize_13a(&s), regex_13a(&s), "{:?}", s);
        }
    }

    #[test]
    fn porter_and_float_never_panic(w in any::<String>()) {
        let _ = pgraphrag_text::porter::stem(&w);
        let _ = parse_python_float(&w);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn meteor_in_range(p in text(), r in text()) {
        let m = Meteor::load(&pgraphrag_metrics::wordnet::find(&pgraphrag_metrics::wordnet::search_paths(
        |k| std::env::var_os(k),
        &[std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))],
    ))
        .unwrap_or_else(|e| panic!("{e}")))
        .unwrap_or_else(|e| panic!("{e}"));
        let s = m.score_str(&p, &r);
        prop_assert!((0.0..=1.0).contains(&s), "{s}");
        let same = m.score_str(&p, &p);
        prop_assert!((0.0..=1.0).contains(&same), "{same}");
    }
}
