//! Snippet ranking (RankSnippet, RankDocBySnpt) and reciprocal-rank fusion, with test doubles
//! for the inner retrievers (no model needed).
#![cfg(feature = "dense")]

use pgraphrag_core::{Retriever, Scored, TieOrder};
use pgraphrag_retrieval::dense::{Rrf, SnippetRanker};

/// Scores a text by the number of times it contains the query word.
struct Count;
impl Retriever for Count {
    fn scores(&self, q: &str, docs: &[&str]) -> pgraphrag_core::Result<Vec<f64>> {
        Ok(docs.iter().map(|d| d.matches(q).count() as f64).collect())
    }
}

/// Retrieves only the listed documents, in the listed order (best first): the one listed
/// `r`-th scores `100 - r`, an unlisted one `-inf` and is left out of the ranking.
struct Fixed(Vec<usize>);
impl Retriever for Fixed {
    fn scores(&self, _q: &str, docs: &[&str]) -> pgraphrag_core::Result<Vec<f64>> {
        let mut s = vec![f64::NEG_INFINITY; docs.len()];
        let listed = self.0.iter().filter(|i| **i < docs.len());
        for (r, &i) in listed.enumerate() {
            s[i] = 100.0 - r as f64;
        }
        Ok(s)
    }

    /// The provided ranking without the unlisted documents: a ranking that leaves documents
    /// out, which the consumers (`Rrf`, `SnippetRanker`) must bear.
    fn rank(
        &self,
        q: &str,
        docs: &[&str],
        k: Option<usize>,
    ) -> pgraphrag_core::Result<Vec<Scored<usize>>> {
        let all = pgraphrag_core::top_k(&self.scores(q, docs)?, None, TieOrder::InputOrder);
        let listed = all.into_iter().filter(|s| s.score.is_finite());
        Ok(listed.take(k.unwrap_or(usize::MAX)).collect())
    }
}

fn sentences(t: &str, min: usize) -> Vec<String> {
    // Sentences split at ". ", appended until `min` characters (a stand-in for Punkt).
    let mut out = Vec::new();
    let mut cur = String::new();
    for s in t.split_inclusive(". ") {
        cur.push_str(s);
        if cur.chars().count() >= min {
            out.push(std::mem::take(&mut cur).trim().to_string());
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

#[test]
fn rank_doc_by_snippet_takes_the_best_snippet() {
    let docs = [
        "cat cat. dog. dog. dog.", // snippets (min 5): "cat cat." "dog." "dog." "dog."
        "cat. cat. cat. bird.",    // each snippet holds one "cat"
        "",                        // empty: one empty snippet
    ];
    let r = SnippetRanker::new(Count).min_chars(5).splitter(sentences);
    let snippets = r.split(&docs);
    assert_eq!(snippets.iter().filter(|s| s.doc == 2).count(), 1);
    // Whole-document counting would put doc 1 (3 cats) first; by best snippet doc 0 wins (2).
    let top = r.rank("cat", &docs, None).unwrap();
    assert_eq!(
        top.iter().map(|s| s.item).collect::<Vec<_>>(),
        vec![0, 1, 2]
    );
    assert_eq!(top[0].score, 2.0);
    assert_eq!(Count.rank("cat", &docs, None).unwrap()[0].item, 1);
    let s = r.rank_snippets("cat", &docs, Some(2)).unwrap();
    assert_eq!(s.len(), 2);
    assert_eq!(
        (s[0].item.doc, s[0].item.snippet, s[0].item.text.as_str()),
        (0, 0, "cat cat.")
    );
    assert_eq!(s[1].item.doc, 1);
    assert_eq!(r.rank("cat", &docs, Some(1)).unwrap().len(), 1);
    assert!(r.rank("cat", &[], None).unwrap().is_empty());
}

#[test]
fn rrf_fuses_ranks() {
    let docs = ["a", "b", "c", "d"];
    // a: 0 1 2 3, b: 3 2 1 0 -> ties broken by input order; 1 and 2 tie with 0 and 3 ...
    let f = Rrf::new(Fixed(vec![0, 1, 2, 3]), Fixed(vec![1, 0, 3, 2]));
    let top = f.rank("q", &docs, None).unwrap();
    let want = |r: &[usize]| r.iter().map(|x| 1.0 / (60.0 + *x as f64)).sum::<f64>();
    assert_eq!(
        top.iter().map(|s| s.item).collect::<Vec<_>>(),
        vec![0, 1, 2, 3]
    );
    assert!((top[0].score - want(&[1, 2])).abs() < 1e-15);
    assert!((top[2].score - want(&[3, 4])).abs() < 1e-15);
    // A document missing from one ranking gets only the other's share.
    let f = Rrf::new(Fixed(vec![2]), Fixed(vec![1, 2])).with_k(0.0);
    let top = f.rank("q", &docs, Some(3)).unwrap();
    assert_eq!(top[0].item, 2);
    assert!((top[0].score - (1.0 + 0.5)).abs() < 1e-15);
    assert_eq!((top[1].item, top[1].score), (1, 1.0));
    assert_eq!((top[2].item, top[2].score), (0, 0.0));
    assert!(
        Rrf::new(Count, Count)
            .with_k(f64::NAN)
            .rank("q", &docs, None)
            .is_err()
    );
}
