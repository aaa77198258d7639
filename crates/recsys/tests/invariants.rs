//! Property tests of the row, candidate and gate invariants.
use std::collections::{BTreeMap, BTreeSet};

use pgraphrag_recsys::{
    CandidateSampler, Interacted, Interaction, LETTERS, Popularity, PopularityGate, Row, Take,
    leave_one_out,
};
use proptest::prelude::*;

fn interactions() -> impl Strategy<Value = Vec<Interaction>> {
    prop::collection::vec((1u32..8, 1u32..60, 0i64..40), 0..200).prop_map(|xs| {
        xs.into_iter()
            .enumerate()
            .map(|(k, (user, item, timestamp))| Interaction {
                user,
                item,
                rating: 4.0,
                timestamp,
                line: k + 2,
            })
            .collect()
    })
}

proptest! {
    #[test]
    fn leave_one_out_rows_hold(xs in interactions(), h in 1usize..12) {
        let loo = leave_one_out(&xs, h);
        let users: BTreeSet<u32> = xs.iter().map(|x| x.user).collect();
        prop_assert_eq!(loo.users, users.len());
        prop_assert_eq!(loo.rows.len() + loo.skipped_short, users.len());
        for r in &loo.rows {
            prop_assert_eq!(r.history.len(), h);
            prop_assert!(!r.history.contains(&r.target));
            // The target is the item the user met last (a repeated item counts at its first time).
            let mut first: BTreeMap<u32, i64> = BTreeMap::new();
            for x in xs.iter().filter(|x| x.user == r.user) {
                let t = first.entry(x.item).or_insert(x.timestamp);
                *t = (*t).min(x.timestamp);
            }
            prop_assert_eq!(first.values().max(), first.get(&r.target));
        }
    }

    #[test]
    fn candidate_sets_hold(
        xs in interactions(),
        m in prop::sample::select(vec![10usize, 20]),
        seed in any::<u64>(),
    ) {
        let loo = leave_one_out(&xs, 3);
        let mut interacted: BTreeMap<u32, BTreeSet<u32>> = BTreeMap::new();
        for x in &xs {
            interacted.entry(x.user).or_default().insert(x.item);
        }
        let sampler = CandidateSampler::new(1..=80, m, seed).unwrap();
        let sets = sampler.sample_rows(&loo.rows, Interacted::Ever(&interacted));
        let sets = match sets {
            Ok(s) => s,
            Err(e) => return Err(TestCaseError::fail(format!("{e}"))),
        };
        for (r, c) in loo.rows.iter().zip(&sets) {
            prop_assert_eq!(c.items.len(), m);
            // Letters map one-to-one to candidates.
            let letters: Vec<char> = c.options().map(|(l, _)| l).collect();
            prop_assert_eq!(&letters[..], &LETTERS[..m]);
            let distinct: BTreeSet<u32> = c.items.iter().copied().collect();
            prop_assert_eq!(distinct.len(), m);
            for (l, item) in c.options() {
                prop_assert_eq!(c.item(l), Some(item));
            }
            // The target is among the candidates, never in the history.
            prop_assert_eq!(c.item(c.target_letter()), Some(r.target));
            prop_assert!(!r.history.contains(&r.target));
            // No other candidate was interacted with.
            for &i in &c.items {
                prop_assert!(i == r.target || !interacted[&r.user].contains(&i));
            }
        }
        // The same seed gives the same sets.
        prop_assert_eq!(sampler.sample_rows(&loo.rows, Interacted::Ever(&interacted)).ok(), Some(sets));
    }

    #[test]
    fn row_only_negatives_avoid_the_row(
        history in prop::collection::btree_set(1u32..40, 1..11),
        target in 40u32..50,
        seed in any::<u64>(),
    ) {
        let row = Row { user: 1, history: history.iter().copied().collect(), target };
        let sets = CandidateSampler::new(1..=60, 20, seed).unwrap().sample_rows(std::slice::from_ref(&row), Interacted::Row).unwrap();
        prop_assert!(sets[0].items.iter().all(|i| !row.history.contains(i)));
        prop_assert_eq!(sets[0].items.iter().filter(|&&i| i == target).count(), 1);
    }

    #[test]
    fn gate_never_selects_popular_items(
        occ in prop::collection::vec(1u32..30, 0..300),
        history in prop::collection::vec(1u32..30, 0..15),
        p in 0.0f64..=1.0,
        k in 0usize..20,
    ) {
        let pop = Popularity::count(1..30, occ).unwrap();
        let sel = PopularityGate::BelowPercentile { p }.select(&pop, &history).unwrap();
        for i in &sel {
            prop_assert!(pop.percentile(*i).unwrap() < p);
            prop_assert!(history.contains(i));
        }
        // Every history item below the threshold is selected.
        let below = history.iter().filter(|i| pop.percentile(**i).unwrap() < p).count();
        prop_assert_eq!(sel.len(), below);
        // The released variant keeps the k least popular, ascending.
        let asc = PopularityGate::Ascending { take: Take::Count(k) }.select(&pop, &history).unwrap();
        prop_assert_eq!(asc.len(), k.min(history.len()));
        let counts: Vec<u32> = asc.iter().map(|i| pop.get(*i).unwrap()).collect();
        prop_assert!(counts.windows(2).all(|w| w[0] <= w[1]));
        let max_kept = counts.last().copied().unwrap_or(0);
        let left_out = history.len() - asc.len();
        if left_out > 0 && !asc.is_empty() {
            let mut sorted: Vec<u32> = history.iter().map(|i| pop.get(*i).unwrap()).collect();
            sorted.sort_unstable();
            prop_assert!(sorted[asc.len()..].iter().all(|&c| c >= max_kept));
        }
    }
}
