//! Builder invariants on generated corpora: no target in its own profile, no profile item
//! dated after (or at the time of) its target, no author in two splits, every rule and cap
//! held, and the same output for the same input.
use std::collections::HashMap;

use pgraphrag_corpora::AuthoredDoc;
use pgraphrag_corpora::lamp::{
    self, BuildOptions, LampBuild, MovieLens, MovieRating, SplitName, SplitRatio, split_users,
};
use proptest::prelude::*;

fn docs() -> impl Strategy<Value = Vec<AuthoredDoc>> {
    // Few authors, few distinct times (ties) and texts (duplicates), some missing titles.
    proptest::collection::vec(
        (
            0..7usize,
            0..40i64,
            0..12usize,
            0..3usize,
            proptest::bool::weighted(0.9),
        ),
        0..120,
    )
    .prop_map(|rows| {
        rows.into_iter()
            .enumerate()
            .map(|(i, (a, t, txt, len, titled))| AuthoredDoc {
                author: format!("author{a}"),
                doc_id: format!("d{i}"),
                time: t * 43_200,
                title: titled.then(|| format!("Title {i}")),
                text: format!("text {txt} ").repeat(1 + len * 20),
            })
            .collect()
    })
}

fn options() -> impl Strategy<Value = BuildOptions> {
    (
        any::<u64>(),
        0..200usize,
        0..4usize,
        0..4usize,
        proptest::option::of(1..6usize),
        proptest::option::of(4..9usize),
    )
        .prop_map(|(seed, chars, minp, mint, maxt, maxp)| BuildOptions {
            seed,
            split: SplitRatio::default(),
            min_target_chars: chars,
            min_profile: minp,
            min_targets_per_author: mint,
            max_targets_per_author: maxt,
            max_profile: maxp,
        })
}

/// Checks the invariants of `b` built from documents with these times.
fn check(
    b: &LampBuild,
    time: &HashMap<String, i64>,
    opts: &BuildOptions,
) -> Result<(), TestCaseError> {
    let mut part_of = HashMap::new();
    let mut per_author: HashMap<String, usize> = HashMap::new();
    let mut total = 0;
    for part in SplitName::ALL {
        let set = b.set(part);
        prop_assert_eq!(set.questions.len(), set.golds.len());
        for (q, g) in set.questions.iter().zip(&set.golds) {
            total += 1;
            prop_assert_eq!(&q.id, &g.id);
            let user = q.user_id.clone().unwrap();
            prop_assert_eq!(
                *part_of.entry(user.clone()).or_insert(part),
                part,
                "author in two splits"
            );
            *per_author.entry(user).or_default() += 1;
            let t = time[&q.id];
            prop_assert!(q.profile.len() >= opts.min_profile);
            prop_assert!(opts.max_profile.is_none_or(|m| q.profile.len() <= m));
            let mut last = i64::MIN;
            for p in &q.profile {
                prop_assert!(p.id != q.id, "target in its own profile");
                let pt = time[&p.id];
                prop_assert!(pt < t, "profile item not earlier than its target");
                prop_assert!(pt >= last, "profile not in time order");
                prop_assert!(p.date.as_deref().unwrap() <= pgraphrag_corpora::ymd(t).as_str());
                last = pt;
            }
        }
    }
    for n in per_author.values() {
        // The minimum is checked before the cap (the multistage order: qualify, then cap).
        let floor = opts.min_targets_per_author.max(1);
        prop_assert!(*n >= opts.max_targets_per_author.map_or(floor, |m| floor.min(m)));
        prop_assert!(opts.max_targets_per_author.is_none_or(|m| *n <= m));
    }
    prop_assert_eq!(b.report.kept, total);
    Ok(())
}

proptest! {
    #[test]
    fn lamp6_and_lamp4_keep_their_invariants(docs in docs(), opts in options()) {
        let time: HashMap<String, i64> = docs.iter().map(|d| (d.doc_id.clone(), d.time)).collect();
        for build in [lamp::lamp6, lamp::lamp4] {
            let b = build(&docs, &opts).unwrap();
            check(&b, &time, &opts)?;
            for part in SplitName::ALL {
                for (q, g) in b.set(part).questions.iter().zip(&b.set(part).golds) {
                    let d = docs.iter().find(|d| d.doc_id == q.id).unwrap();
                    prop_assert!(d.text.chars().count() >= opts.min_target_chars);
                    prop_assert_eq!(Some(g.output.as_str()), d.title.as_deref());
                    prop_assert!(q.input.ends_with(d.text.as_str()));
                }
            }
            prop_assert_eq!(&b, &build(&docs, &opts).unwrap(), "not deterministic");
        }
    }

    #[test]
    fn movielens_keeps_its_invariants(
        rows in proptest::collection::vec((0..6u8, 0..30u8, 1..=5u8, 0..15i64), 0..150),
        opts in options(),
    ) {
        let mut ml = MovieLens::default();
        let mut seen = std::collections::HashSet::new();
        for (u, i, r, t) in rows {
            ml.descriptions.insert(i.to_string(), format!("Movie {i}"));
            if seen.insert((u, i)) {
                ml.ratings.push(MovieRating { user: u.to_string(), item: i.to_string(), rating: r, time: t * 86_400 });
            }
        }
        let time: HashMap<String, i64> =
            ml.ratings.iter().map(|r| (format!("{}-{}", r.user, r.item), r.time)).collect();
        let b = lamp::lamp3_from_movielens(&ml, &opts).unwrap();
        check(&b, &time, &opts)?;
        for part in SplitName::ALL {
            for (q, g) in b.set(part).questions.iter().zip(&b.set(part).golds) {
                prop_assert!(["1", "2", "3", "4", "5"].contains(&g.output.as_str()));
                prop_assert!(q.profile.iter().all(|p| p.get("score").is_some() && p.get("text").is_some()));
            }
        }
        prop_assert_eq!(&b, &lamp::lamp3_from_movielens(&ml, &opts).unwrap());
    }

    #[test]
    fn split_users_is_a_partition(n in 0..300usize, seed in any::<u64>(), w in (0..10u32, 0..10u32, 1..10u32)) {
        let users: Vec<String> = (0..n).map(|i| format!("u{i}")).collect();
        let ratio = SplitRatio { train: w.0, dev: w.1, test: w.2 };
        let s = split_users(&users, ratio, seed);
        prop_assert_eq!(s.len(), n);
        let count = |p| s.values().filter(|&&v| v == p).count();
        if n >= 3 {
            prop_assert!(count(SplitName::Test) >= 1);
            prop_assert!(w.1 == 0 || count(SplitName::Dev) >= 1);
        }
        prop_assert!(w.1 > 0 || count(SplitName::Dev) == 0);
        prop_assert_eq!(s, split_users(&users, ratio, seed));
    }
}

#[test]
fn duplicate_doc_ids_are_an_error_naming_the_id() {
    let d = AuthoredDoc {
        author: "a".into(),
        doc_id: "same".into(),
        time: 0,
        title: Some("t".into()),
        text: "x".into(),
    };
    let e = lamp::lamp6(&[d.clone(), d], &BuildOptions::multistage()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "doc_id \"same\" appears twice; document ids must be unique"
    );
}

#[test]
fn unusable_options_are_errors() {
    for opts in [
        BuildOptions {
            max_targets_per_author: Some(0),
            ..BuildOptions::multistage()
        },
        BuildOptions {
            max_profile: Some(1),
            ..BuildOptions::multistage()
        },
        BuildOptions {
            split: SplitRatio {
                train: 0,
                dev: 0,
                test: 0,
            },
            ..BuildOptions::multistage()
        },
    ] {
        assert!(lamp::lamp6(&[], &opts).is_err(), "{opts:?}");
    }
}

#[test]
fn the_split_is_cpython_random_shuffle_of_the_sorted_ids() {
    // random.Random(42).shuffle(['u0'..'u9'] sorted) == ['u7','u3','u2','u8','u5','u6','u9','u4','u0','u1']
    // (CPython 3.11); 85/5/10 of 10 users: 8 train, 1 dev, 1 test.
    let users: Vec<String> = (0..10).map(|i| format!("u{i}")).collect();
    let s = split_users(&users, SplitRatio::default(), 42);
    assert_eq!(s["u0"], SplitName::Dev);
    assert_eq!(s["u1"], SplitName::Test);
    assert!(
        ["u7", "u3", "u2", "u8", "u5", "u6", "u9", "u4"]
            .iter()
            .all(|u| s[*u] == SplitName::Train)
    );
}
