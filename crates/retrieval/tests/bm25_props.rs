//! Invariants of the sparse retrievers (proptest).

use pgraphrag_core::Retriever;
use pgraphrag_retrieval::sparse::{
    Bm25Builder, Bm25Lucene, Bm25Okapi, Bm25Params, Bm25Retriever, NoRetriever, PythonSplit,
    RandomRetriever, TieOrder, numpy_argsort,
};
use proptest::prelude::*;

/// Documents over a small vocabulary so that terms repeat and scores tie.
fn docs_strategy() -> impl Strategy<Value = Vec<Vec<String>>> {
    prop::collection::vec(
        prop::collection::vec(
            prop::sample::select(vec!["a", "b", "c", "d", "e", "f", "g"]),
            0..8,
        )
        .prop_map(|d| d.into_iter().map(str::to_owned).collect()),
        1..40,
    )
}

fn query_strategy() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(prop::sample::select(vec!["a", "b", "c", "x", "g"]), 0..5)
        .prop_map(|q| q.into_iter().map(str::to_owned).collect())
}

fn check_ranking(top: &[pgraphrag_core::Scored<usize>], n: usize, k: Option<usize>) {
    assert!(top.len() <= k.unwrap_or(n).min(n));
    assert!(top.iter().all(|s| s.score.is_finite() && s.item < n));
    assert!(
        top.windows(2).all(|w| w[0].score >= w[1].score),
        "not sorted: {top:?}"
    );
    let mut items: Vec<usize> = top.iter().map(|s| s.item).collect();
    items.sort_unstable();
    items.dedup();
    assert_eq!(items.len(), top.len(), "duplicate items");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn top_k_is_bounded_sorted_finite(docs in docs_strategy(), q in query_strategy(),
                                      k in prop::option::of(0usize..50),
                                      ties in prop::sample::select(vec![TieOrder::NumpyReversedArgsort, TieOrder::InputOrder])) {
        let texts: Vec<String> = docs.iter().map(|d| d.join(" ")).collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let query = q.join(" ");
        let okapi = Bm25Retriever::new(PythonSplit).with_tie_order(ties);
        check_ranking(&okapi.rank(&query, &refs, k).unwrap(), refs.len(), k);
        let lucene = Bm25Lucene::new(PythonSplit).with_tie_order(ties);
        check_ranking(&lucene.rank(&query, &refs, k).unwrap(), refs.len(), k);
        check_ranking(&RandomRetriever::new(7).rank(&query, &refs, k).unwrap(), refs.len(), k);
        prop_assert!(NoRetriever.rank(&query, &refs, k).unwrap().is_empty());
        // All of them when k is None (NoRetriever aside).
        prop_assert_eq!(okapi.rank(&query, &refs, None).unwrap().len(), refs.len());
    }

    #[test]
    fn scores_do_not_depend_on_document_order(docs in docs_strategy(), q in query_strategy(),
                                              seed in any::<u64>()) {
        prop_assume!(docs.iter().any(|d| !d.is_empty()));
        let a = Bm25Okapi::fit(&docs, Bm25Params::default()).unwrap().get_scores(&q);
        // A seeded permutation of the documents.
        let mut perm: Vec<usize> = (0..docs.len()).collect();
        let mut s = seed | 1;
        for i in (1..perm.len()).rev() {
            s ^= s << 13; s ^= s >> 7; s ^= s << 17;
            perm.swap(i, (s % (i as u64 + 1)) as usize);
        }
        let shuffled: Vec<Vec<String>> = perm.iter().map(|&i| docs[i].clone()).collect();
        let b = Bm25Okapi::fit(&shuffled, Bm25Params::default()).unwrap().get_scores(&q);
        // Each document keeps its score up to the summation order of the average idf.
        for (j, &i) in perm.iter().enumerate() {
            prop_assert!((a[i] - b[j]).abs() <= 1e-12 * (1.0 + a[i].abs()), "{} vs {}", a[i], b[j]);
        }
        // As multisets.
        let mut sa = a.clone();
        let mut sb = b.clone();
        sa.sort_by(f64::total_cmp);
        sb.sort_by(f64::total_cmp);
        for (x, y) in sa.iter().zip(&sb) {
            prop_assert!((x - y).abs() <= 1e-12 * (1.0 + x.abs()));
        }
    }

    #[test]
    fn numpy_argsort_sorts(v in prop::collection::vec(prop::sample::select(vec![0.0, 1.0, 2.5, -1.0, f64::NAN]), 0..300)) {
        let o = numpy_argsort(&v);
        let mut seen = o.clone();
        seen.sort_unstable();
        prop_assert_eq!(seen, (0..v.len()).collect::<Vec<_>>());
        for w in o.windows(2) {
            let (a, b) = (v[w[0]], v[w[1]]);
            // ascending with NaN last
            prop_assert!(a <= b || b.is_nan(), "{a} before {b}");
        }
    }

    #[test]
    fn matches_a_naive_transliteration_bit_for_bit(
        docs in docs_strategy(), q in query_strategy(),
        params in prop::sample::select(vec![
            Bm25Params::default(),
            Bm25Params { k1: 1.2, b: 0.75, epsilon: 0.25 },
            Bm25Params { k1: 1.5, b: 1.0, epsilon: 0.25 },  // NaN for empty documents
            Bm25Params { k1: 0.0, b: 0.75, epsilon: 0.25 }, // NaN without the term
            Bm25Params { k1: 1.5, b: 1.2, epsilon: -0.5 },  // negative norms
            Bm25Params { k1: 1.5, b: 0.0, epsilon: 0.0 },
        ])) {
        prop_assume!(docs.iter().any(|d| !d.is_empty()));
        let ours = Bm25Okapi::fit(&docs, params).unwrap().get_scores(&q);
        let want = naive(&docs, &q, params);
        prop_assert_eq!(ours.len(), want.len());
        for (a, b) in ours.iter().zip(&want) {
            prop_assert!(a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
                         "{a:?} vs {b:?} with {params:?}");
        }
    }
}

/// rank_bm25 0.2.2 `BM25Okapi`, transliterated line by line (dicts as insertion-ordered
/// vectors, numpy broadcasting as loops over documents).
fn naive(corpus: &[Vec<String>], query: &[String], p: Bm25Params) -> Vec<f64> {
    use std::collections::HashMap;
    let mut nd: Vec<(String, usize)> = Vec::new();
    let mut doc_freqs: Vec<HashMap<&str, usize>> = Vec::new();
    let mut doc_len = Vec::new();
    let mut num_doc = 0usize;
    for document in corpus {
        doc_len.push(document.len());
        num_doc += document.len();
        let mut order: Vec<&str> = Vec::new();
        let mut freqs: HashMap<&str, usize> = HashMap::new();
        for w in document {
            if !freqs.contains_key(w.as_str()) {
                order.push(w);
            }
            *freqs.entry(w).or_insert(0) += 1;
        }
        for w in order {
            match nd.iter_mut().find(|(x, _)| x == w) {
                Some((_, c)) => *c += 1,
                None => nd.push((w.to_owned(), 1)),
            }
        }
        doc_freqs.push(freqs);
    }
    let n = corpus.len();
    let avgdl = num_doc as f64 / n as f64;
    let mut idf: Vec<(String, f64)> = Vec::new();
    let mut idf_sum = 0.0;
    let mut negative = Vec::new();
    for (w, freq) in &nd {
        let v = ((n - freq) as f64 + 0.5).ln() - (*freq as f64 + 0.5).ln();
        idf.push((w.clone(), v));
        idf_sum += v;
        if v < 0.0 {
            negative.push(idf.len() - 1);
        }
    }
    let average_idf = idf_sum / idf.len() as f64;
    let eps = p.epsilon * average_idf;
    for i in negative {
        idf[i].1 = eps;
    }
    let mut score = vec![0.0f64; n];
    for q in query {
        let qidf = idf.iter().find(|(w, _)| w == q).map_or(0.0, |x| x.1);
        for d in 0..n {
            let qf = *doc_freqs[d].get(q.as_str()).unwrap_or(&0) as f64;
            let dl = doc_len[d] as f64;
            score[d] += qidf * (qf * (p.k1 + 1.0) / (qf + p.k1 * (1.0 - p.b + p.b * dl / avgdl)));
        }
    }
    score
}

#[test]
fn random_retriever_is_reproducible_and_seed_dependent() {
    let docs: Vec<String> = (0..50).map(|i| format!("doc {i}")).collect();
    let refs: Vec<&str> = docs.iter().map(String::as_str).collect();
    let a = RandomRetriever::new(1).rank("q", &refs, None).unwrap();
    let b = RandomRetriever::new(1).rank("q", &refs, None).unwrap();
    let c = RandomRetriever::new(2).rank("q", &refs, None).unwrap();
    assert_eq!(a, b);
    assert_ne!(
        a.iter().map(|s| s.item).collect::<Vec<_>>(),
        c.iter().map(|s| s.item).collect::<Vec<_>>()
    );
}
