//! Exactness of `TokenGraph`'s indexed BM25 against brute-force rank_bm25 on graphs dense
//! enough to use the inverted index (moved from `pgraphrag-graph` with the index).

use pgraphrag_retrieval::token_graph::{
    Bm25Params, Side, TokenGraph, TokenReview, bm25okapi_scores,
};
use proptest::prelude::*;

proptest! {
    // Each case checks up to 42 targets on both sides against brute force: fewer cases.
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    /// TokenGraph's top-k equals brute-force rank_bm25 on the explicit candidate lists, on
    /// graphs dense enough to use the inverted index (>= 48 reviews per node).
    #[test]
    fn token_graph_is_exact(
        revs in proptest::collection::vec((0u32..4, 0u32..3, proptest::collection::vec(0u32..25, 0..12)), 1..220),
        query in proptest::collection::vec(0u32..30, 0..6),
        k in 1usize..8,
        params in prop_oneof![
            3 => Just(Bm25Params::default()),
            // Other k1/b, and a negative epsilon (negative weights disable pruning).
            1 => (0.2f64..3.0, 0.0f64..1.0, -1.0f64..1.0)
                .prop_map(|(k1, b, epsilon)| Bm25Params { k1, b, epsilon }),
        ],
    ) {
        let reviews: Vec<TokenReview> = revs.iter().map(|(u, i, t)| TokenReview { user: *u, item: *i, tokens: t.clone() }).collect();
        let g = TokenGraph::build(reviews.clone()).unwrap();
        let p = params;
        let mut s = g.scratch();
        for target in 0..reviews.len() as u32 {
            let (u, i) = g.review_ends(target);
            for side in [Side::User, Side::Item] {
                let node = if side == Side::User { u } else { i };
                let keep = |r: &TokenReview| if side == Side::User { r.item != i } else { r.user != u };
                let list: Vec<u32> = g.node_reviews(side, node).iter().copied().filter(|&r| keep(&reviews[r as usize])).collect();
                let docs: Vec<&[u32]> = list.iter().map(|&r| reviews[r as usize].tokens.as_slice()).collect();
                let scores = bm25okapi_scores(&docs, &query, p);
                let got = match side {
                    Side::User => g.user_top_k(target, &query, k, p, &mut s),
                    Side::Item => g.neighbors_top_k(target, &query, k, p, &mut s),
                };
                prop_assert_eq!(got.len(), k.min(list.len()));
                prop_assert!(got.windows(2).all(|w| w[0].1 >= w[1].1 - 1e-12));
                let mut want: Vec<(usize, f64)> = scores.iter().copied().enumerate().collect();
                want.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
                for ((gr, gs), (wi, ws)) in got.iter().zip(&want) {
                    prop_assert!(gs.is_finite());
                    prop_assert!((gs - ws).abs() <= 1e-9 * ws.abs().max(1.0), "{} vs {}", gs, ws);
                    if *gr != list[*wi] {
                        let ties = scores.iter().filter(|x| (*x - ws).abs() <= 1e-9 * ws.abs().max(1.0)).count();
                        prop_assert!(ties > 1);
                    }
                }
            }
            if target > 40 { break; }
        }
    }
}
