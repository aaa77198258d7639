//! Parity with the Python references, on fixtures made by `scripts/fixtures/metrics_golden.py`
//! (rouge-score 0.1.2, nltk 3.9.1, sacreBLEU 2.x, numpy). METEOR tests need WordNet 3.0
//! (`apt-get install -y wordnet-base` or `WORDNET_DIR`); they fail when it is missing.
use pgraphrag_metrics::bleu::{corpus_bleu, sentence_bleu};
use pgraphrag_metrics::meteor::{Meteor, meteor_tokens};
use pgraphrag_metrics::rouge::{Rouge, RougeOptions};
use pgraphrag_metrics::stats::{BootstrapAggregator, RandomState, percentile, student_t_cdf};
use pgraphrag_metrics::wordnet::WordNet;
use serde_json::Value;

const TOL: f64 = 1e-9;

fn fixture(name: &str) -> Value {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    let s = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&s).expect("fixture JSON")
}

fn f(v: &Value) -> f64 {
    v.as_f64().expect("number")
}

fn strs(v: &Value) -> Vec<String> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_str().expect("str").to_string())
        .collect()
}

fn wordnet() -> &'static WordNet {
    let dir = pgraphrag_metrics::wordnet::find(&pgraphrag_metrics::wordnet::search_paths(
        |k| std::env::var_os(k),
        &[std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))],
    ))
    .unwrap_or_else(|e| panic!("{e}"));
    WordNet::global_in(&dir).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn porter_matches_nltk() {
    let fx = fixture("metrics_porter.json");
    let words = strs(&fx["words"]);
    let stems = strs(&fx["stems"]);
    assert!(words.len() >= 5000);
    let bad: Vec<_> = words
        .iter()
        .zip(&stems)
        .filter(|(w, s)| pgraphrag_text::porter::stem(w) != **s)
        .map(|(w, s)| {
            format!(
                "{w:?}: want {s:?} got {:?}",
                pgraphrag_text::porter::stem(w)
            )
        })
        .collect();
    assert!(
        bad.is_empty(),
        "{} of {} differ: {:?}",
        bad.len(),
        words.len(),
        &bad[..bad.len().min(20)]
    );
}

#[test]
fn rouge_matches_rouge_score() {
    let fx = fixture("metrics_pairs.json");
    let pairs = fx["pairs"].as_array().unwrap();
    assert!(pairs.len() >= 1000);
    let mut bad = Vec::new();
    for (key, stem) in [("rouge", false), ("rouge_stem", true)] {
        let r = Rouge::new(RougeOptions {
            stemmer: stem,
            ..Default::default()
        });
        for (i, p) in pairs.iter().enumerate() {
            let s = r.score(
                p["prediction"].as_str().unwrap(),
                p["reference"].as_str().unwrap(),
            );
            for (name, got) in s.named() {
                let want = &p[key][name];
                let w = [f(&want[0]), f(&want[1]), f(&want[2])];
                let g = [got.precision, got.recall, got.fmeasure];
                if w.iter().zip(&g).any(|(a, b)| (a - b).abs() > TOL) {
                    bad.push(format!("pair {i} {key} {name}: want {w:?} got {g:?}"));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "{} mismatches: {:?}",
        bad.len(),
        &bad[..bad.len().min(20)]
    );
}

#[test]
fn meteor_matches_nltk_on_nltk_tokens() {
    let fx = fixture("metrics_pairs.json");
    let toks = fixture("metrics_tokens.json");
    let wn = wordnet();
    let mut bad = Vec::new();
    for (i, (p, t)) in fx["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .zip(toks.as_array().unwrap())
        .enumerate()
    {
        let got = meteor_tokens(&strs(&t["hyp"]), &strs(&t["ref"]), wn);
        let want = f(&p["meteor"]);
        if (got - want).abs() > TOL {
            bad.push(format!("pair {i}: want {want} got {got}"));
        }
    }
    assert!(
        bad.is_empty(),
        "{} mismatches: {:?}",
        bad.len(),
        &bad[..bad.len().min(20)]
    );
}

#[test]
fn meteor_strings_match_nltk() {
    // End to end: pgraphrag_text::word_tokenize + METEOR against HF evaluate's pipeline.
    let fx = fixture("metrics_pairs.json");
    let toks = fixture("metrics_tokens.json");
    let m = Meteor::with_wordnet(wordnet(), Default::default());
    let mut bad = Vec::new();
    let mut tok_diff = 0;
    for (i, (p, t)) in fx["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .zip(toks.as_array().unwrap())
        .enumerate()
    {
        let (pred, rf) = (
            p["prediction"].as_str().unwrap(),
            p["reference"].as_str().unwrap(),
        );
        if pgraphrag_text::word_tokenize(pred) != strs(&t["hyp"])
            || pgraphrag_text::word_tokenize(rf) != strs(&t["ref"])
        {
            tok_diff += 1;
        }
        let got = m.score_str(pred, rf);
        let want = f(&p["meteor"]);
        if (got - want).abs() > TOL {
            bad.push(format!("pair {i}: want {want} got {got}"));
        }
    }
    assert!(
        bad.is_empty(),
        "{} mismatches ({tok_diff} pairs tokenized differently): {:?}",
        bad.len(),
        &bad[..bad.len().min(20)]
    );
}

#[test]
fn wordnet_synsets_match_nltk() {
    let fx = fixture("metrics_wordnet.json");
    let wn = wordnet();
    let mut bad = Vec::new();
    for (w, names) in fx.as_object().unwrap() {
        let got = wn.synset_lemma_names(w);
        if got != strs(names) {
            bad.push(format!("{w}: want {names} got {got:?}"));
        }
    }
    assert!(
        bad.is_empty(),
        "{} mismatches: {:?}",
        bad.len(),
        &bad[..bad.len().min(10)]
    );
}

#[test]
fn bleu_matches_sacrebleu() {
    let fx = fixture("metrics_pairs.json");
    let pairs = fx["pairs"].as_array().unwrap();
    let mut bad = Vec::new();
    let (mut hyps, mut refs) = (Vec::new(), Vec::new());
    for (i, p) in pairs.iter().enumerate() {
        let (pred, rf) = (
            p["prediction"].as_str().unwrap(),
            p["reference"].as_str().unwrap(),
        );
        hyps.push(pred);
        refs.push(rf);
        let got = sentence_bleu(pred, &[rf]).score;
        let want = f(&p["bleu"]);
        if (got - want).abs() > TOL {
            bad.push(format!("pair {i}: want {want} got {got}"));
        }
    }
    assert!(
        bad.is_empty(),
        "{} mismatches: {:?}",
        bad.len(),
        &bad[..bad.len().min(20)]
    );
    let c = corpus_bleu(&hyps, &refs).unwrap().score;
    assert!(
        (c - f(&fx["corpus_bleu"])).abs() < TOL,
        "corpus {c} vs {}",
        fx["corpus_bleu"]
    );
}

#[test]
fn numpy_random_state_choice() {
    let fx = fixture("metrics_pairs.json");
    for case in fx["rng"].as_array().unwrap() {
        let seed = case["seed"].as_u64().unwrap() as u32;
        let n = case["n"].as_u64().unwrap() as usize;
        let want: Vec<usize> = case["draws"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap() as usize)
            .collect();
        assert_eq!(RandomState::new(seed).choice(n), want, "seed {seed} n {n}");
    }
}

#[test]
fn numpy_percentile() {
    let fx = fixture("metrics_pairs.json");
    for case in fx["percentile"].as_array().unwrap() {
        let x: Vec<f64> = case["x"].as_array().unwrap().iter().map(f).collect();
        for (q, p) in case["q"]
            .as_array()
            .unwrap()
            .iter()
            .zip(case["p"].as_array().unwrap())
        {
            assert!((percentile(&x, f(q)) - f(p)).abs() < 1e-12);
        }
    }
}

#[test]
fn bootstrap_aggregator_matches_rouge_score_with_seed() {
    let fx = fixture("metrics_pairs.json");
    let r = Rouge::default();
    let mut agg = BootstrapAggregator::default();
    for p in fx["pairs"].as_array().unwrap() {
        let s = r.score(
            p["prediction"].as_str().unwrap(),
            p["reference"].as_str().unwrap(),
        );
        agg.add_scores(s.named());
    }
    let seed = fx["bootstrap"]["seed"].as_u64().unwrap() as u32;
    for (name, a) in agg.aggregate(seed) {
        let want = &fx["bootstrap"]["scores"][&name];
        for (k, got) in [("low", a.low), ("mid", a.mid), ("high", a.high)] {
            let w = &want[k];
            let g = [got.precision, got.recall, got.fmeasure];
            for j in 0..3 {
                assert!(
                    (f(&w[j]) - g[j]).abs() < TOL,
                    "{name} {k}[{j}]: want {} got {}",
                    w[j],
                    g[j]
                );
            }
        }
    }
}

#[test]
fn student_t_cdf_matches_mpmath() {
    let fx = fixture("metrics_pairs.json");
    for case in fx["student_t_cdf"].as_array().unwrap() {
        let (df, t, want) = (f(&case[0]), f(&case[1]), f(&case[2]));
        let got = student_t_cdf(t, df);
        assert!(
            (got - want).abs() < 1e-12,
            "df {df} t {t}: want {want} got {got}"
        );
    }
}
