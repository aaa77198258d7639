//! Parity of `Bm25Okapi` with rank_bm25 0.2.2 on golden fixtures made by
//! `scripts/fixtures/bm25_golden.py` (real PGraphRAG candidate lists plus edge cases).

use pgraphrag_retrieval::Error;
use pgraphrag_retrieval::sparse::{
    Bm25Okapi, Bm25Params, Bm25Retriever, PythonSplit, TieOrder, numpy_argsort, rank_order,
};
use serde::Deserialize;

#[derive(Deserialize)]
struct Fixture {
    vocab: Vec<String>,
    lists: Vec<ListCase>,
    edge_cases: Vec<EdgeCase>,
    argsort_cases: Vec<ArgsortCase>,
}

#[derive(Deserialize)]
struct ListCase {
    dataset: String,
    user_index: usize,
    query: Vec<usize>,
    docs: Vec<Vec<usize>>,
    scores: Vec<Option<f64>>,
    order_native: Vec<usize>,
    order_scalar: Vec<usize>,
    avgdl: f64,
    average_idf: f64,
}

#[derive(Deserialize)]
struct EdgeCase {
    name: String,
    docs: Vec<Vec<String>>,
    query: Vec<String>,
    params: Params,
    error: Option<String>,
    scores: Option<Vec<Option<f64>>>,
    score_bits: Option<Vec<u64>>,
    order_native: Option<Vec<usize>>,
    order_scalar: Option<Vec<usize>>,
    avgdl: Option<f64>,
    average_idf: Option<f64>,
    idf: Option<Vec<(String, f64)>>,
}

#[derive(Deserialize)]
struct Params {
    k1: Option<f64>,
    b: Option<f64>,
    epsilon: Option<f64>,
}

#[derive(Deserialize)]
struct ArgsortCase {
    values: Vec<i64>,
    argsort_scalar: Vec<usize>,
}

fn fixture() -> Fixture {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/bm25_golden.json"
    );
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
        panic!("{path}: {e}; regenerate with python3 scripts/fixtures/bm25_golden.py")
    });
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Both orders rank the same scores at every position (they differ only among ties).
fn same_up_to_ties(scores: &[f64], a: &[usize], b: &[usize]) -> bool {
    let mut sa = a.to_vec();
    let mut sb = b.to_vec();
    sa.sort_unstable();
    sb.sort_unstable();
    sa == sb
        && a.len() == scores.len()
        && a.iter()
            .zip(b)
            .all(|(&i, &j)| scores[i].to_bits() == scores[j].to_bits())
}

#[test]
fn real_candidate_lists_match_rank_bm25() {
    let fx = fixture();
    assert!(fx.lists.len() >= 300, "only {} lists", fx.lists.len());
    let (mut max_diff, mut n_scores, mut n_bits, mut n_big) = (0.0f64, 0usize, 0usize, 0usize);
    let mut native_exact = 0usize;
    for case in &fx.lists {
        let who = format!("{} user {}", case.dataset, case.user_index);
        let docs: Vec<Vec<&str>> = case
            .docs
            .iter()
            .map(|d| d.iter().map(|&t| fx.vocab[t].as_str()).collect())
            .collect();
        let query: Vec<&str> = case.query.iter().map(|&t| fx.vocab[t].as_str()).collect();
        let bm25 = Bm25Okapi::fit(&docs, Bm25Params::default()).unwrap();
        assert_eq!(bm25.avgdl().to_bits(), case.avgdl.to_bits(), "{who}: avgdl");
        assert!(
            (bm25.average_idf() - case.average_idf).abs() <= 1e-12,
            "{who}: average_idf {} vs {}",
            bm25.average_idf(),
            case.average_idf
        );
        let ours = bm25.get_scores(&query);
        let want: Vec<f64> = case
            .scores
            .iter()
            .map(|s| s.expect("real lists have finite scores"))
            .collect();
        assert_eq!(ours.len(), want.len(), "{who}");
        for (d, (a, b)) in ours.iter().zip(&want).enumerate() {
            let diff = (a - b).abs();
            assert!(diff <= 1e-9, "{who} doc {d}: ours {a:?} rank_bm25 {b:?}");
            max_diff = max_diff.max(diff);
            n_bits += usize::from(a.to_bits() == b.to_bits());
            n_scores += 1;
        }
        let order = rank_order(&ours, TieOrder::NumpyReversedArgsort);
        assert_eq!(
            order, case.order_scalar,
            "{who}: numpy (scalar) argsort order"
        );
        assert!(
            same_up_to_ties(&want, &order, &case.order_native),
            "{who}: ranking differs from this machine's numpy beyond ties"
        );
        native_exact += usize::from(order == case.order_native);
        assert_eq!(
            bm25.get_top_n(&query, 5),
            case.order_scalar[..case.order_scalar.len().min(5)]
        );
        let stable = rank_order(&ours, TieOrder::InputOrder);
        assert!(same_up_to_ties(&want, &stable, &case.order_scalar), "{who}");
        n_big += usize::from(docs.len() > 16);
    }
    eprintln!(
        "bm25 parity: {} lists ({n_big} with >16 docs), {n_scores} scores, {n_bits} bit-identical, \
         max |diff| = {max_diff:e}; order = numpy scalar argsort in all lists, = native numpy in {native_exact}",
        fx.lists.len()
    );
    assert!(
        n_big > 50,
        "fixture lacks lists above numpy's insertion-sort threshold"
    );
}

#[test]
fn edge_cases_match_rank_bm25() {
    let fx = fixture();
    for case in &fx.edge_cases {
        let name = &case.name;
        let d = Bm25Params::default();
        let params = Bm25Params {
            k1: case.params.k1.unwrap_or(d.k1),
            b: case.params.b.unwrap_or(d.b),
            epsilon: case.params.epsilon.unwrap_or(d.epsilon),
        };
        let fitted = Bm25Okapi::fit(&case.docs, params);
        if let Some(err) = &case.error {
            assert!(err.contains("ZeroDivisionError"), "{name}");
            match fitted {
                Err(Error::EmptyCorpus) => assert!(case.docs.is_empty(), "{name}"),
                Err(Error::EmptyVocabulary { documents }) => {
                    assert_eq!(documents, case.docs.len(), "{name}")
                }
                other => panic!("{name}: expected a typed error, got {other:?}"),
            }
            continue;
        }
        let bm25 = fitted.unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            bm25.avgdl().to_bits(),
            case.avgdl.unwrap().to_bits(),
            "{name}"
        );
        assert_eq!(
            bm25.average_idf().to_bits(),
            case.average_idf.unwrap().to_bits(),
            "{name}: average_idf"
        );
        let idf = case.idf.as_ref().unwrap();
        let ours_idf = bm25.idf_entries();
        assert_eq!(ours_idf.len(), idf.len(), "{name}");
        for ((t, v), (wt, wv)) in ours_idf.iter().zip(idf) {
            assert_eq!(
                (*t, v.to_bits()),
                (wt.as_str(), wv.to_bits()),
                "{name}: idf order/value"
            );
        }
        let ours = bm25.get_scores(&case.query);
        let bits = case.score_bits.as_ref().unwrap();
        let scores = case.scores.as_ref().unwrap();
        assert_eq!(ours.len(), bits.len(), "{name}");
        for (i, (a, &b)) in ours.iter().zip(bits).enumerate() {
            let want = f64::from_bits(b);
            if want.is_nan() {
                assert!(
                    a.is_nan() && scores[i].is_none(),
                    "{name} doc {i}: {a} vs NaN"
                );
            } else {
                assert_eq!(
                    a.to_bits(),
                    b,
                    "{name} doc {i}: ours {a:?} rank_bm25 {want:?}"
                );
            }
        }
        let order = rank_order(&ours, TieOrder::NumpyReversedArgsort);
        assert_eq!(&order, case.order_scalar.as_ref().unwrap(), "{name}: order");
        let want: Vec<f64> = bits.iter().map(|&b| f64::from_bits(b)).collect();
        if want.iter().all(|s| s.is_finite()) {
            assert!(
                same_up_to_ties(&want, &order, case.order_native.as_ref().unwrap()),
                "{name}"
            );
        }
    }
    // The named rank_bm25 quirks are all present.
    let names: Vec<&str> = fx.edge_cases.iter().map(|c| c.name.as_str()).collect();
    for n in [
        "idf exactly zero",
        "two documents",
        "all idfs negative",
        "empty query",
        "empty corpus",
    ] {
        assert!(
            names.iter().any(|x| x.starts_with(n)),
            "missing edge case {n}"
        );
    }
}

#[test]
fn numpy_argsort_port_matches_numpy() {
    let fx = fixture();
    for (i, case) in fx.argsort_cases.iter().enumerate() {
        let v: Vec<f64> = case.values.iter().map(|&x| x as f64).collect();
        assert_eq!(
            numpy_argsort(&v),
            case.argsort_scalar,
            "argsort case {i} (n = {})",
            v.len()
        );
    }
}

#[test]
fn retriever_on_tokens_matches_notebook_top5() {
    let fx = fixture();
    let r = Bm25Retriever::new(PythonSplit);
    for case in fx.lists.iter().take(100) {
        let docs: Vec<Vec<&str>> = case
            .docs
            .iter()
            .map(|d| d.iter().map(|&t| fx.vocab[t].as_str()).collect())
            .collect();
        let query: Vec<&str> = case.query.iter().map(|&t| fx.vocab[t].as_str()).collect();
        let top = r.rank_tokens(&query, &docs, Some(5)).unwrap();
        let idx: Vec<usize> = top.iter().map(|s| s.item).collect();
        assert_eq!(idx, case.order_scalar[..idx.len()]);
        for s in &top {
            assert!((s.score - case.scores[s.item].unwrap()).abs() <= 1e-9);
        }
    }
}
