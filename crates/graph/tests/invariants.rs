//! Property tests of the graph's profile scopes, the notebook's overwrite semantics, and the
//! exactness of `TokenGraph`'s indexed BM25 against brute-force rank_bm25.

use pgraphrag_core::Entry;
use pgraphrag_graph::tokens::{Bm25Params, Side, TokenGraph, TokenReview, bm25okapi_scores};
use pgraphrag_graph::{Duplicates, GraphOptions, ItemId, Scope, UserItemGraph};
use proptest::prelude::*;

fn entries() -> impl Strategy<Value = Vec<(u8, u8)>> {
    proptest::collection::vec((0u8..6, 0u8..6), 1..60)
}

fn build(pairs: &[(u8, u8)], dup: Duplicates) -> UserItemGraph {
    let mut g = UserItemGraph::new(GraphOptions { duplicates: dup });
    for (i, &(u, it)) in pairs.iter().enumerate() {
        g.insert(Entry {
            id: i,
            author: format!("u{u}"),
            item: format!("p{it}"),
            ..Default::default()
        });
    }
    g
}

proptest! {
    #[test]
    fn profiles_never_hold_the_target(pairs in entries(), keep in any::<bool>()) {
        let g = build(&pairs, if keep { Duplicates::KeepAll } else { Duplicates::Overwrite });
        for &(u, it) in &pairs {
            let (user, item) = (format!("u{u}"), ItemId::from(format!("p{it}")));
            let mine = g.profile(&user, &item, Scope::User);
            let theirs = g.profile(&user, &item, Scope::Neighbors);
            let both = g.profile(&user, &item, Scope::Both);
            for &r in &mine {
                let e = &g.review(r).entry;
                prop_assert_eq!(&e.author, &user);
                prop_assert_ne!(&g.review(r).item, &item);
            }
            for &r in &theirs {
                let e = &g.review(r).entry;
                prop_assert_eq!(&g.review(r).item, &item);
                prop_assert_ne!(&e.author, &user);
            }
            let mut cat = mine.clone();
            cat.extend(&theirs);
            prop_assert_eq!(&both, &cat);
            for r in g.target_reviews(&user, &item) {
                prop_assert!(!both.contains(&r));
            }
            // slot order
            prop_assert!(mine.windows(2).all(|w| w[0] < w[1]));
            prop_assert!(theirs.windows(2).all(|w| w[0] < w[1]));
        }
    }

    /// Overwrite reproduces a Python dict keyed by (user, item): first insertion position,
    /// last value.
    #[test]
    fn overwrite_is_a_python_dict(pairs in entries()) {
        let g = build(&pairs, Duplicates::Overwrite);
        let mut keys: Vec<(u8, u8)> = Vec::new();
        let mut vals: Vec<usize> = Vec::new();
        for (i, &k) in pairs.iter().enumerate() {
            match keys.iter().position(|x| *x == k) {
                Some(j) => vals[j] = i,
                None => { keys.push(k); vals.push(i); }
            }
        }
        let got: Vec<usize> = g.reviews().iter().map(|r| r.entry.id).collect();
        prop_assert_eq!(got, vals);
        prop_assert_eq!(g.num_overwritten(), pairs.len() - keys.len());
        let kept = build(&pairs, Duplicates::KeepAll);
        prop_assert_eq!(kept.num_reviews(), pairs.len());
    }

}

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
