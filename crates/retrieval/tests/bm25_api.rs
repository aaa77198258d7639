//! Behaviour of the sparse retrievers at the edges of their input.

use pgraphrag_core::Retriever;
use pgraphrag_retrieval::Error;
use pgraphrag_retrieval::sparse::{
    Bm25Builder, Bm25Lucene, Bm25Okapi, Bm25Params, Bm25Retriever, NoRetriever, PythonSplit,
    RandomRetriever, TieOrder, Tokenizer, python_split,
};

#[test]
fn empty_candidate_list_gives_empty_ranking() {
    let none: [&str; 0] = [];
    assert!(
        Bm25Retriever::lamp()
            .rank("q", &none, Some(3))
            .unwrap()
            .is_empty()
    );
    assert!(
        Bm25Lucene::new(PythonSplit)
            .rank("q", &none, None)
            .unwrap()
            .is_empty()
    );
    assert!(
        RandomRetriever::new(1)
            .rank("q", &none, None)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn candidates_without_tokens_score_zero_in_tie_order() {
    let docs = ["", "  ", "\t"];
    let r = Bm25Retriever::lamp().rank("anything", &docs, None).unwrap();
    assert_eq!(r.iter().map(|s| s.item).collect::<Vec<_>>(), vec![2, 1, 0]);
    assert!(r.iter().all(|s| s.score == 0.0));
    let r = Bm25Retriever::lamp()
        .with_tie_order(TieOrder::InputOrder)
        .rank("anything", &docs, None)
        .unwrap();
    assert_eq!(r.iter().map(|s| s.item).collect::<Vec<_>>(), vec![0, 1, 2]);
}

#[test]
fn typed_errors_instead_of_zero_division() {
    let empty: Vec<Vec<&str>> = vec![];
    assert!(matches!(
        Bm25Okapi::fit(&empty, Bm25Params::default()),
        Err(Error::EmptyCorpus)
    ));
    let blank: Vec<Vec<&str>> = vec![vec![], vec![]];
    assert!(matches!(
        Bm25Okapi::fit(&blank, Bm25Params::default()),
        Err(Error::EmptyVocabulary { documents: 2 })
    ));
    let bm25 = Bm25Okapi::fit(&[vec!["a"], vec!["b"]], Bm25Params::default()).unwrap();
    assert!(matches!(
        bm25.get_batch_scores(&["a"], &[0, 2]),
        Err(Error::DocumentOutOfRange {
            index: 2,
            corpus_size: 2
        })
    ));
    assert_eq!(bm25.get_batch_scores(&["a"], &[1, 0]).unwrap(), {
        let s = bm25.get_scores(&["a"]);
        vec![s[1], s[0]]
    });
    assert!(matches!(
        bm25.get_top_n_docs(&["a"], &["only one"], 1),
        Err(Error::CorpusMismatch {
            fitted: 2,
            given: 1
        })
    ));
    assert_eq!(
        bm25.get_top_n_docs(&["b"], &["x", "y"], 1).unwrap(),
        vec![&"y"]
    );
}

#[test]
fn non_finite_scores_are_an_error_for_retrievers() {
    // k1 = 0: rank_bm25 computes 0 / 0 for documents without the term.
    let r = Bm25Retriever::lamp().with_params(Bm25Params {
        k1: 0.0,
        ..Default::default()
    });
    let err = r.rank("a", &["a b", "c d", "e"], None).unwrap_err();
    assert!(err.to_string().contains("non-finite"), "{err}");
    // ... while the index itself returns rank_bm25's NaNs.
    let bm25 = Bm25Okapi::fit(
        &[vec!["a", "b"], vec!["c", "d"], vec!["e"]],
        Bm25Params {
            k1: 0.0,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(bm25.get_scores(&["a"]).iter().any(|s| s.is_nan()));
}

#[test]
fn empty_query_scores_zero() {
    let r = Bm25Retriever::lamp()
        .rank("", &["a b", "b c"], None)
        .unwrap();
    assert!(r.iter().all(|s| s.score == 0.0));
    assert_eq!(r.len(), 2);
}

#[test]
fn negative_epsilon_floor_ranks_matches_below_non_matches() {
    // Both documents contain "a": idf(a) < 0, average idf < 0, so the floor is negative.
    let bm25 = Bm25Okapi::fit(&[vec!["a", "b"], vec!["a", "c"]], Bm25Params::default()).unwrap();
    assert!(bm25.average_idf() < 0.0);
    assert!(bm25.idf("a").unwrap() < 0.0);
    assert_eq!(bm25.idf("b"), Some(0.0)); // in exactly half of the documents
    assert!(bm25.get_scores(&["a"]).iter().all(|&s| s < 0.0));
}

#[test]
fn closures_are_tokenizers_and_python_split_matches_python() {
    let lower = |s: &str| {
        python_split(&s.to_lowercase())
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    let r = Bm25Retriever::new(lower);
    let top = r.rank("CAT", &["dog", "Cat cat", "bird"], Some(1)).unwrap();
    assert_eq!(top[0].item, 1);
    // U+001C..U+001F split in Python but are not Unicode White_Space.
    assert_eq!(
        PythonSplit.tokenize("a\u{1f}b\u{200b}c"),
        vec!["a", "b\u{200b}c"]
    );
}

#[test]
fn lucene_scores_are_non_negative_and_rank_matches_first() {
    let docs = ["the cat sat on the mat", "dogs bark", "a cat and a dog"];
    let l = Bm25Lucene::new(PythonSplit);
    let s = l.scores("cat", &docs).unwrap();
    assert!(s.iter().all(|&x| x >= 0.0));
    assert!(s[0] > 0.0 && s[2] > 0.0 && s[1] == 0.0);
    let top = l.rank("cat", &docs, Some(2)).unwrap();
    assert!(top.iter().all(|x| x.item != 1));
    assert!(NoRetriever.rank("cat", &docs, None).unwrap().is_empty());
}

mod cached_freshness {
    //! The token cache of `CachedBm25` never ranks superseded text (regression tests for the
    //! stale-edit and two-graph reports).
    use pgraphrag_core::{DocText, Entry};
    use pgraphrag_graph::{GraphOptions, ItemId, UserItemGraph};
    use pgraphrag_retrieval::profile::{CachedBm25, ProfileOptions, ProfileRanker, RandomReview};

    fn e(id: usize, u: &str, i: &str, text: &str) -> Entry {
        Entry {
            id,
            author: u.into(),
            item: i.into(),
            title: Some("t".into()),
            text: Some(text.into()),
            ..Default::default()
        }
    }

    fn opts() -> ProfileOptions {
        ProfileOptions {
            random: RandomReview::Off,
            ..ProfileOptions::default()
        }
    }

    fn top_neighbor(r: &mut ProfileRanker<CachedBm25>, g: &UserItemGraph, q: &str) -> usize {
        let p = r.rank(g, "a", &ItemId::from("p"), q).unwrap();
        p.neighbors[0].entry.id
    }

    #[test]
    fn an_in_place_edit_that_keeps_its_id_is_re_tokenized() {
        // The notebook's dict semantics overwrite a (user, item) review in place.
        let mut g = UserItemGraph::new(GraphOptions::notebook());
        for x in [
            e(0, "a", "p", "x"),
            e(1, "b", "p", "soap"),
            e(2, "c", "p", "towel"),
            e(3, "d", "p", "mat"),
        ] {
            g.insert(x);
        }
        let mut warm = ProfileRanker::new(CachedBm25::pgraphrag(), opts());
        assert_eq!(top_neighbor(&mut warm, &g, "lavender soap"), 1);
        // c edits its review (same doc id, same slot) to mention lavender.
        g.insert(e(2, "c", "p", "lavender lavender"));
        let mut fresh = ProfileRanker::new(CachedBm25::pgraphrag(), opts());
        assert_eq!(top_neighbor(&mut fresh, &g, "lavender soap"), 2);
        assert_eq!(top_neighbor(&mut warm, &g, "lavender soap"), 2);
    }

    #[test]
    fn a_ranker_reused_on_another_graph_ranks_that_graph() {
        let a = UserItemGraph::from_entries(
            [
                e(0, "a", "p", "x"),
                e(1, "b", "p", "soap"),
                e(2, "c", "p", "towel"),
                e(3, "d", "p", "mat"),
            ],
            GraphOptions::default(),
        )
        .unwrap();
        let b = UserItemGraph::from_entries(
            [
                e(0, "a", "p", "x"),
                e(1, "b", "p", "towel"),
                e(2, "c", "p", "soap"),
                e(3, "d", "p", "mat"),
            ],
            GraphOptions::default(),
        )
        .unwrap();
        let mut r = ProfileRanker::new(CachedBm25::pgraphrag(), opts());
        assert_eq!(top_neighbor(&mut r, &a, "soap"), 1);
        assert_eq!(top_neighbor(&mut r, &b, "soap"), 2);
    }

    #[test]
    fn the_clean_document_has_no_none_token() {
        let mut x = e(1, "b", "p", "soap");
        x.title = None;
        let g = UserItemGraph::from_entries(
            [
                e(0, "a", "p", "x"),
                x,
                e(2, "c", "p", "towel"),
                e(3, "d", "p", "mat"),
            ],
            GraphOptions::default(),
        )
        .unwrap();
        let score = |doc_text| {
            let mut r = ProfileRanker::new(CachedBm25::pgraphrag().with_doc_text(doc_text), opts());
            let p = r.rank(&g, "a", &ItemId::from("p"), "none").unwrap();
            p.neighbors
                .iter()
                .find(|n| n.entry.id == 1)
                .unwrap()
                .score
                .unwrap()
        };
        assert!(score(DocText::Notebook) > 0.0);
        assert_eq!(score(DocText::Clean), 0.0);
    }
}
