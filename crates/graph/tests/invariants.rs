//! Property tests of the graph's profile scopes and the notebook's overwrite semantics.

use pgraphrag_core::Entry;
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
            let theirs = g.profile(&user, &item, Scope::Neighbor);
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
