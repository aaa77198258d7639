//! Invariants of PGraphRAG profile ranking over many seeded random graphs (a property test
//! without a proptest dependency): a profile never holds the target review; every neighbour
//! review is on the target item and by another user; every user review is by the target user
//! on another item; each list holds at most k entries, sorted by score, all finite. Also:
//! `CachedBm25` gives the same rankings as `sparse::Bm25Retriever`.

use pgraphrag_core::Entry;
use pgraphrag_graph::{Duplicates, GraphOptions, ItemId, UserItemGraph};
use pgraphrag_retrieval::profile::{
    CachedBm25, ProfileOptions, ProfileRanker, SingleNeighbor, Task, WithRetriever,
};
use pgraphrag_retrieval::sparse::{Bm25Builder, Bm25Retriever, TieOrder};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const WORDS: [&str; 12] = [
    "good", "bad", "soap", "smell", "great", "dry", "skin", "the", "it", "!", "lavender", "  ",
];

fn text(r: &mut Rng) -> Option<String> {
    let n = r.below(6);
    if n == 0 {
        return None;
    }
    Some(
        (0..n)
            .map(|_| WORDS[r.below(WORDS.len() as u64) as usize])
            .collect::<Vec<_>>()
            .join(" "),
    )
}

fn random_graph(seed: u64) -> UserItemGraph {
    let mut r = Rng(seed);
    let dup = if r.below(2) == 0 {
        Duplicates::KeepAll
    } else {
        Duplicates::Overwrite
    };
    let mut g = UserItemGraph::new(GraphOptions { duplicates: dup });
    let n = 1 + r.below(40) as usize;
    for id in 0..n {
        let e = Entry {
            id,
            author: format!("u{}", r.below(6)),
            item: format!("p{}", r.below(5)),
            title: text(&mut r),
            text: text(&mut r),
            rating: Some(1.0 + r.below(5) as f64),
            time: None,
        };
        g.insert(e);
    }
    g
}

fn check<R: pgraphrag_retrieval::profile::CandidateRanker>(
    g: &UserItemGraph,
    ranker: &mut ProfileRanker<R>,
    k: usize,
) {
    for (ri, rev) in g.reviews().iter().enumerate() {
        let user = &rev.entry.author;
        let item = &rev.item;
        for task in [Task::Text, Task::Title, Task::Rating] {
            let q = task.query(rev.entry.title.as_deref(), rev.entry.text.as_deref());
            let p = ranker.rank(g, user, item, &q).unwrap();
            for (list, is_user) in [(&p.user, true), (&p.neighbors, false)] {
                assert!(list.len() <= k, "review {ri}: {} > {k}", list.len());
                let scores: Vec<f64> = list.iter().filter_map(|h| h.score).collect();
                assert!(scores.iter().all(|s| s.is_finite()));
                assert!(
                    scores.windows(2).all(|w| w[0] >= w[1]),
                    "not sorted: {scores:?}"
                );
                for h in list {
                    let x = h;
                    assert!(
                        !(x.entry.author == *user && x.item == *item),
                        "target pair in profile"
                    );
                    if is_user {
                        assert_eq!(&x.entry.author, user);
                        assert_ne!(&x.item, item);
                    } else {
                        assert_eq!(&x.item, item);
                        assert_ne!(&x.entry.author, user);
                    }
                }
            }
            if let Some(rr) = &p.random {
                assert_ne!(&rr.entry.author, user);
            }
        }
    }
}

#[test]
fn invariants_hold_on_random_graphs() {
    for seed in 0..150u64 {
        let g = random_graph(seed);
        let k = 1 + (seed % 6) as usize;
        for notebook in [false, true] {
            let mut opts = if notebook {
                ProfileOptions::notebook()
            } else {
                ProfileOptions::default()
            };
            opts.k = k;
            let mut a = ProfileRanker::new(CachedBm25::pgraphrag(), opts);
            check(&g, &mut a, k);
            let mut b = ProfileRanker::new(WithRetriever(Bm25Retriever::pgraphrag()), opts);
            check(&g, &mut b, k);
        }
    }
}

#[test]
fn cached_bm25_equals_bm25_retriever() {
    for seed in 0..150u64 {
        let g = random_graph(1000 + seed);
        for ties in [TieOrder::NumpyReversedArgsort, TieOrder::InputOrder] {
            let opts = ProfileOptions {
                single_neighbor: SingleNeighbor::Rank,
                ..ProfileOptions::notebook()
            };
            let mut a = ProfileRanker::new(CachedBm25::pgraphrag().with_tie_order(ties), opts);
            let mut b = ProfileRanker::new(
                WithRetriever(Bm25Retriever::pgraphrag().with_tie_order(ties)),
                opts,
            );
            for rev in g.reviews() {
                let q = Task::Rating.query(rev.entry.title.as_deref(), rev.entry.text.as_deref());
                let pa = a.rank(&g, &rev.entry.author, &rev.item, &q).unwrap();
                let pb = b.rank(&g, &rev.entry.author, &rev.item, &q).unwrap();
                assert_eq!(pa, pb);
            }
        }
    }
}

#[test]
fn unknown_target_gives_empty_lists() {
    let g = random_graph(7);
    let mut r = ProfileRanker::new(CachedBm25::pgraphrag(), ProfileOptions::default());
    let p = r
        .rank(&g, "nobody", &ItemId::from("nothing"), "soap")
        .unwrap();
    assert!(p.user.is_empty() && p.neighbors.is_empty());
}
