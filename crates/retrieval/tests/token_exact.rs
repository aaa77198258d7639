//! Exactness of `TokenGraph` against brute-force rank_bm25 on every search path: tiny index
//! thresholds (so that small graphs use the inverted index, the dense bound columns and the
//! bound pass that takes over from impact-ordered search), and the default thresholds.

use pgraphrag_retrieval::token_graph::{
    Bm25Params, IndexOptions, Side, TokenGraph, TokenReview, bm25okapi_scores,
};
use proptest::prelude::*;

/// Checks every target (up to `max_targets`) on both sides against brute force.
fn check(
    reviews: &[TokenReview],
    g: &TokenGraph,
    query: &[u32],
    k: usize,
    p: Bm25Params,
    max_targets: usize,
) -> Result<(), TestCaseError> {
    let mut s = g.scratch();
    for target in 0..reviews.len().min(max_targets) as u32 {
        let (u, i) = g.review_ends(target);
        for side in [Side::User, Side::Item] {
            let node = if side == Side::User { u } else { i };
            let keep = |r: &TokenReview| {
                if side == Side::User {
                    r.item != i
                } else {
                    r.user != u
                }
            };
            let list: Vec<u32> = g
                .node_reviews(side, node)
                .iter()
                .copied()
                .filter(|&r| keep(&reviews[r as usize]))
                .collect();
            let docs: Vec<&[u32]> = list
                .iter()
                .map(|&r| reviews[r as usize].tokens.as_slice())
                .collect();
            let scores = bm25okapi_scores(&docs, query, p);
            let got = match side {
                Side::User => g.user_top_k(target, query, k, p, &mut s),
                Side::Item => g.neighbors_top_k(target, query, k, p, &mut s),
            };
            prop_assert_eq!(got.len(), k.min(list.len()));
            let mut want: Vec<(usize, f64)> = scores.iter().copied().enumerate().collect();
            want.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            for ((gr, gs), (wi, ws)) in got.iter().zip(&want) {
                prop_assert!(gs.is_finite());
                let tol = 1e-9 * ws.abs().max(1.0);
                prop_assert!((gs - ws).abs() <= tol, "{} vs {}", gs, ws);
                if *gr != list[*wi] {
                    let ties = scores.iter().filter(|x| (*x - ws).abs() <= tol).count();
                    prop_assert!(ties > 1, "got review {}, want {}", gr, list[*wi]);
                }
            }
        }
    }
    Ok(())
}

/// Reviews over a small vocabulary with a Zipf-like skew (term `t` drawn as `min(a, b)` of
/// two uniform ids), so that frequent terms dominate as in real text.
fn skewed_reviews(
    users: u32,
    items: u32,
    vocab: u32,
    max_reviews: usize,
) -> impl Strategy<Value = Vec<TokenReview>> {
    proptest::collection::vec(
        (
            0..users,
            0..items,
            proptest::collection::vec((0..vocab, 0..vocab), 0..14),
        ),
        1..max_reviews,
    )
    .prop_map(|v| {
        v.into_iter()
            .map(|(user, item, t)| TokenReview {
                user,
                item,
                tokens: t.into_iter().map(|(a, b)| a.min(b)).collect(),
            })
            .collect()
    })
}

fn params() -> impl Strategy<Value = Bm25Params> {
    prop_oneof![
        4 => Just(Bm25Params::default()),
        1 => (0.2f64..3.0, 0.0f64..1.0, -1.0f64..1.0)
            .prop_map(|(k1, b, epsilon)| Bm25Params { k1, b, epsilon }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    /// Every node indexed, every term dense, no budget for impact order: the bound pass
    /// answers almost every query.
    #[test]
    fn bound_pass_is_exact(
        reviews in skewed_reviews(3, 3, 30, 160),
        query in proptest::collection::vec(0u32..34, 0..7),
        k in 1usize..7,
        p in params(),
        budget in 0usize..4,
        df_div in 1usize..40,
    ) {
        let opts = IndexOptions {
            index_min_degree: 1,
            dense_min_degree: 1,
            dense_df_div: df_div,
            budget_base: budget,
        };
        let g = TokenGraph::build_with(reviews.clone(), opts).unwrap();
        check(&reviews, &g, &query, k, p, 30)?;
    }

    /// Default thresholds on graphs big enough for inverted indexes (>= 48 reviews a node).
    #[test]
    fn default_thresholds_are_exact(
        reviews in skewed_reviews(2, 2, 40, 300),
        query in proptest::collection::vec(0u32..44, 0..7),
        k in 1usize..7,
        p in params(),
    ) {
        let g = TokenGraph::build(reviews.clone()).unwrap();
        check(&reviews, &g, &query, k, p, 25)?;
    }
}

/// Repeated pair reviews (a user reviewing the same item several times) are all excluded,
/// on the cached-idf path (up to 2 excluded) and beyond it.
#[test]
fn repeated_pairs_are_excluded() {
    let mut reviews = Vec::new();
    for r in 0..400u32 {
        let (user, item) = match r % 10 {
            0..=3 => (0, 0), // user 0 reviews item 0 many times
            4..=6 => (0, r % 7 + 1),
            _ => (r % 5 + 1, 0),
        };
        // Term 99 is in every review (negative idf: the epsilon floor, which depends on the
        // idf sum of the whole candidate vocabulary).
        let mut tokens: Vec<u32> = (0..(r % 9 + 1)).map(|j| (r * 7 + j * 3) % 23).collect();
        tokens.push(99);
        reviews.push(TokenReview { user, item, tokens });
    }
    let opts = IndexOptions {
        dense_min_degree: 1,
        budget_base: 0,
        ..IndexOptions::default()
    };
    for g in [
        TokenGraph::build(reviews.clone()).unwrap(),
        TokenGraph::build_with(reviews.clone(), opts).unwrap(),
    ] {
        for q in [
            vec![0u32],
            vec![1, 2, 3],
            vec![5, 5, 22],
            vec![99],
            vec![99, 4],
            vec![],
        ] {
            check(&reviews, &g, &q, 5, Bm25Params::default(), 400).unwrap();
        }
    }
}
