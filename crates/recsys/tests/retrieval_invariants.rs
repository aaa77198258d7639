//! Property tests of the sub-graph index and of retrieval and re-ranking, on small random KGs
//! with a deterministic test-double encoder; plus the index file's typed errors.
use std::collections::{BTreeMap, BTreeSet, VecDeque};

use pgraphrag_core::{Embeddings, Encoder, NoProgress};
use pgraphrag_graph::kg::{EntityId, KgEdge, KnowledgeGraph};
use pgraphrag_recsys::{
    Aggregation, Error, ExactIndex, HopVectors, IndexOptions, KgRetriever, Popularity,
    PopularityGate, Rerank, Retrieval, SubgraphIndex, Take,
};
use proptest::prelude::*;

/// A deterministic bag-of-words encoder: each word adds a fixed pseudo-random vector (FNV of
/// the word), so texts sharing words are close.
struct Words;

const DIM: usize = 8;

impl Encoder for Words {
    fn encode(&self, texts: &[&str]) -> pgraphrag_core::Result<Embeddings> {
        let mut v = Vec::with_capacity(texts.len() * DIM);
        for t in texts {
            let mut row = [0.01f32; DIM];
            for w in t.split_whitespace() {
                let mut h: u64 = 0xcbf2_9ce4_8422_2325;
                for b in w.to_lowercase().bytes() {
                    h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
                }
                for (i, x) in row.iter_mut().enumerate() {
                    *x += (((h >> (i * 7)) & 0x7f) as f32 - 63.5) / 64.0;
                }
            }
            v.extend(row);
        }
        Embeddings::new(DIM, v)
    }
    fn dim(&self) -> Option<usize> {
        Some(DIM)
    }
}

const RELATIONS: [&str; 4] = [
    "film.film.directed_by",
    "film.film.genre",
    "film.actor.film",
    "film.film.language",
];
const WORDS: [&str; 8] = [
    "war", "love", "space", "crime", "night", "story", "blue", "king",
];

/// A random KG over entities `e0..e{n}` (items 1..=n named `e{i-1}` with titles of two words),
/// with its titles table.
fn kg_strategy() -> impl Strategy<Value = (KnowledgeGraph, BTreeMap<u32, String>)> {
    (2usize..10)
        .prop_flat_map(|n| {
            (
                Just(n),
                prop::collection::vec((0..n, 0..RELATIONS.len(), 0..n), 1..25),
                prop::collection::vec((0..WORDS.len(), 0..WORDS.len()), n),
            )
        })
        .prop_map(|(n, triples, names)| {
            let mut kg = KnowledgeGraph::new();
            for (h, r, t) in triples {
                kg.add_triple(&format!("e{h}"), RELATIONS[r], &format!("e{t}"))
                    .unwrap();
            }
            let mut titles = BTreeMap::new();
            for (i, (a, b)) in names.into_iter().enumerate().take(n) {
                let title = format!("{} {}", WORDS[a], WORDS[b]);
                if let Some(e) = kg.find(&format!("e{i}")) {
                    kg.set_name(e, &title);
                }
                titles.insert(i as u32 + 1, title);
            }
            (kg, titles)
        })
}

fn aggregation() -> impl Strategy<Value = Aggregation> {
    prop_oneof![
        Just(Aggregation::Mean),
        (0u64..4).prop_map(|seed| Aggregation::ReleasedGcn { seed })
    ]
}

/// Distances from `centre`, edges followed both ways (an independent BFS).
fn distances(kg: &KnowledgeGraph, centre: EntityId) -> BTreeMap<EntityId, usize> {
    let edges: Vec<KgEdge> = kg.edges().collect();
    let mut dist = BTreeMap::from([(centre, 0)]);
    let mut queue = VecDeque::from([centre]);
    while let Some(n) = queue.pop_front() {
        for e in &edges {
            for (a, b) in [(e.head, e.tail), (e.tail, e.head)] {
                if a == n && !dist.contains_key(&b) {
                    dist.insert(b, dist[&n] + 1);
                    queue.push_back(b);
                }
            }
        }
    }
    dist
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn exact_top_k_is_sorted_and_complete(
        (kg, _) in kg_strategy(),
        agg in aggregation(),
        q in prop::collection::vec(-1.0f32..1.0, DIM),
        hop in 0usize..3,
        k in 1usize..12,
    ) {
        let opts = IndexOptions { aggregation: agg, ..IndexOptions::default() };
        let v = HopVectors::build(&kg, &Words, "words", &opts, &NoProgress).unwrap();
        let index = ExactIndex::new(&v);
        let hits = index.top_k(hop, &q, k).unwrap();
        prop_assert_eq!(hits.len(), k.min(kg.entity_count()));
        let all = index.scores(hop, &q).unwrap();
        // The scores are the cosines, entity by entity (whatever rows the index deduplicated).
        let norm = q.iter().map(|&x| f64::from(x).powi(2)).sum::<f64>().sqrt();
        for (i, &s) in all.iter().enumerate() {
            let row = v.vector(hop, EntityId(i as u32)).unwrap();
            let want = if norm > 0.0 {
                row.iter().zip(&q).map(|(&r, &x)| f64::from(r) * f64::from((f64::from(x) / norm) as f32)).sum::<f64>()
            } else {
                0.0
            };
            prop_assert!((s - want).abs() < 1e-12, "entity {}: {} against {}", i, s, want);
        }
        // A batch is the queries one by one.
        let q2: Vec<f32> = q.iter().rev().copied().collect();
        let batch = index.top_k_batch(hop, &[&q, &q2], k).unwrap();
        prop_assert_eq!(&batch[0], &hits);
        prop_assert_eq!(&batch[1], &index.top_k(hop, &q2, k).unwrap());
        for w in hits.windows(2) {
            let (a, b) = (&w[0], &w[1]);
            prop_assert!(a.score > b.score || (a.score == b.score && a.subgraph.centre < b.subgraph.centre));
        }
        // Nothing left out scores above the last hit.
        let kept: BTreeSet<EntityId> = hits.iter().map(|h| h.subgraph.centre).collect();
        if let Some(last) = hits.last() {
            for (i, &s) in all.iter().enumerate() {
                if !kept.contains(&EntityId(i as u32)) {
                    prop_assert!(s <= last.score);
                }
            }
        }
        for h in &hits {
            prop_assert!((-1.0 - 1e-9..=1.0 + 1e-9).contains(&h.score));
            prop_assert_eq!(h.subgraph.hop, hop);
        }
    }

    #[test]
    fn retrieval_invariants_hold(
        (kg, titles) in kg_strategy(),
        agg in aggregation(),
        counts in prop::collection::vec(0u32..6, 9),
        history in prop::collection::vec(1u32..10, 1..6),
        p in 0.0f64..=1.0,
        top_k in 1usize..4,
        top_n in 1usize..6,
        rerank in prop::sample::select(vec![Rerank::Pooled, Rerank::PerHop, Rerank::Off]),
        ego_hops in 1usize..3,
    ) {
        let history: Vec<u32> = history.into_iter().filter(|i| titles.contains_key(i)).collect();
        let catalogue: Vec<u32> = titles.keys().copied().collect();
        let occurrences = catalogue.iter().flat_map(|&i| std::iter::repeat_n(i, counts[i as usize - 1] as usize));
        let pop = Popularity::count(catalogue.iter().copied(), occurrences).unwrap();
        let opts = IndexOptions { aggregation: agg, ..IndexOptions::default() };
        let v = HopVectors::build(&kg, &Words, "words", &opts, &NoProgress).unwrap();
        let index = ExactIndex::new(&v);
        let config = Retrieval {
            top_k,
            top_n,
            gate: PopularityGate::BelowPercentile { p },
            rerank,
            ego_hops,
            ..Retrieval::paper()
        };
        let r = KgRetriever::new(&kg, &v, &index, &Words, config.clone()).unwrap();
        let row = r.retrieve(&history, &pop, &titles).unwrap();

        // The gate: nothing at or above the threshold is selected or retrieved for.
        for &item in &row.selected {
            prop_assert!(pop.percentile(item).unwrap() < p);
        }
        for s in &row.subgraphs {
            prop_assert!(row.selected.contains(&s.item));
            prop_assert!(pop.percentile(s.item).unwrap() < p);
        }
        // Re-ranking keeps at most N (per hop under PerHop), sorted by score, ties to the
        // lower hop then the lower centre. Without it, every sub-graph is kept as found: by
        // selected item (gate order), then hop.
        let groups: Vec<Vec<_>> = match config.rerank {
            Rerank::Pooled => vec![row.subgraphs.iter().collect()],
            Rerank::PerHop => config.hops.clone().map(|h| row.subgraphs.iter().filter(|s| s.subgraph.hop == h).collect()).collect(),
            Rerank::Off => {
                let pos = |i: u32| row.selected.iter().position(|&s| s == i);
                prop_assert!(row.subgraphs.windows(2).all(|w| (pos(w[0].item), w[0].subgraph.hop) <= (pos(w[1].item), w[1].subgraph.hop)));
                Vec::new()
            }
        };
        for g in &groups {
            prop_assert!(g.len() <= top_n);
            for w in g.windows(2) {
                let (a, b) = (w[0], w[1]);
                prop_assert!(a.score > b.score || (a.score == b.score && (a.subgraph.hop, a.subgraph.centre) < (b.subgraph.hop, b.subgraph.centre)));
            }
        }
        if config.rerank == Rerank::PerHop {
            let hops: Vec<usize> = row.subgraphs.iter().map(|s| s.subgraph.hop).collect();
            prop_assert!(hops.windows(2).all(|w| w[0] <= w[1]));
        }
        let distinct: BTreeSet<_> = row.subgraphs.iter().map(|s| s.subgraph).collect();
        prop_assert_eq!(distinct.len(), row.subgraphs.len());
        prop_assert!(row.subgraphs.len() <= row.retrieved);
        if row.selected.is_empty() {
            prop_assert!(row.subgraphs.is_empty());
        } else {
            let expect = match config.rerank {
                Rerank::Pooled => row.retrieved.min(top_n),
                Rerank::PerHop => row.subgraphs.len(),
                Rerank::Off => row.retrieved,
            };
            prop_assert_eq!(row.subgraphs.len(), expect);
        }
        // Every retrieved sub-graph is a real ego sub-graph: KG edges within `ego_hops` of the
        // centre, exactly those with an endpoint closer than `ego_hops`.
        for s in &row.subgraphs {
            prop_assert_eq!(&s.ego, &kg.ego(s.subgraph.centre, ego_hops));
            let dist = distances(&kg, s.subgraph.centre);
            let expected: Vec<KgEdge> = kg.edges().filter(|e| {
                [e.head, e.tail].iter().any(|n| dist.get(n).is_some_and(|&d| d < ego_hops))
            }).collect();
            prop_assert_eq!(&s.ego.edges, &expected);
            for e in &s.ego.edges {
                prop_assert!(kg.contains_edge(e));
            }
        }
        // Triples: each edge once, in sub-graph order.
        let triples = row.triples(&kg);
        let edges: BTreeSet<u32> = row.subgraphs.iter().flat_map(|s| s.ego.edges.iter().map(|e| e.id)).collect();
        prop_assert_eq!(triples.len(), edges.len());
    }

    #[test]
    fn index_file_round_trips((kg, _) in kg_strategy(), agg in aggregation()) {
        let opts = IndexOptions { aggregation: agg, max_hop: 1, ..IndexOptions::default() };
        let v = HopVectors::build(&kg, &Words, "words", &opts, &NoProgress).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("i.bin");
        v.save(&path).unwrap();
        prop_assert_eq!(HopVectors::load(&path, "words", &kg, Some(DIM)).unwrap(), v);
    }
}

fn small() -> (KnowledgeGraph, HopVectors) {
    let mut kg = KnowledgeGraph::new();
    kg.add_triple("m.1", "film.film.genre", "m.2").unwrap();
    kg.add_triple("m.3", "film.film.directed_by", "m.4")
        .unwrap();
    let v = HopVectors::build(&kg, &Words, "words", &IndexOptions::default(), &NoProgress).unwrap();
    (kg, v)
}

#[test]
fn index_file_errors_are_typed() {
    let (kg, v) = small();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("i.bin");
    v.save(&path).unwrap();
    let load = |p: &std::path::Path| HopVectors::load(p, "words", &kg, Some(DIM));
    assert!(matches!(
        HopVectors::load(&path, "other", &kg, None),
        Err(Error::IndexModel { .. })
    ));
    assert!(matches!(
        HopVectors::load(&path, "words", &kg, Some(DIM + 1)),
        Err(Error::IndexDim { found: DIM, .. })
    ));
    let mut renamed = kg.clone();
    renamed.set_name(EntityId(0), "Heat");
    assert!(matches!(
        HopVectors::load(&path, "words", &renamed, None),
        Err(Error::IndexKg { .. })
    ));
    assert!(matches!(
        load(&dir.path().join("missing.bin")),
        Err(Error::IndexIo { .. })
    ));

    let bytes = std::fs::read(&path).unwrap();
    let write = |name: &str, b: &[u8]| {
        let p = dir.path().join(name);
        std::fs::write(&p, b).unwrap();
        p
    };
    let e = load(&write("short.bin", &bytes[..bytes.len() - 5])).unwrap_err();
    assert!(matches!(e, Error::IndexFormat { .. }), "{e}");
    let e = load(&write("tiny.bin", &bytes[..6])).unwrap_err();
    assert!(e.to_string().contains("truncated"), "{e}");
    let mut bad = bytes.clone();
    bad[0] = b'X';
    let e = load(&write("magic.bin", &bad)).unwrap_err();
    assert!(e.to_string().contains("not a K-RagRec index"), "{e}");
    let mut bad = bytes.clone();
    bad[8] = 9;
    assert!(matches!(
        load(&write("version.bin", &bad)),
        Err(Error::IndexVersion { found: 9, .. })
    ));
    let mut bad = bytes.clone();
    let n = bad.len();
    bad[n - 20] ^= 0x40;
    let e = load(&write("flip.bin", &bad)).unwrap_err();
    assert!(e.to_string().contains("checksum"), "{e}");
    let mut bad = bytes.clone();
    bad[12] = 0xff;
    bad[13] = 0xff;
    bad[14] = 0xff;
    let e = load(&write("len.bin", &bad)).unwrap_err();
    assert!(matches!(e, Error::IndexFormat { .. }), "{e}");
}

#[test]
fn bad_queries_and_settings_are_typed() {
    let (kg, v) = small();
    let index = ExactIndex::new(&v);
    assert!(matches!(
        index.top_k(0, &[1.0; 3], 2),
        Err(Error::Query { dim: DIM, .. })
    ));
    assert!(matches!(
        index.top_k(0, &[f32::NAN; DIM], 2),
        Err(Error::Query { .. })
    ));
    assert!(matches!(
        index.top_k(3, &[1.0; DIM], 2),
        Err(Error::NoSuchHop { hop: 3, max: 2 })
    ));
    let with = |f: fn(&mut Retrieval)| {
        let mut c = Retrieval::paper();
        f(&mut c);
        KgRetriever::new(&kg, &v, &index, &Words, c).map(|_| ())
    };
    assert!(matches!(
        with(|c| c.top_k = 0),
        Err(Error::Option { name: "top_k", .. })
    ));
    assert!(matches!(
        with(|c| c.top_n = 0),
        Err(Error::Option { name: "top_n", .. })
    ));
    assert!(matches!(
        with(|c| c.hops = 0..=3),
        Err(Error::NoSuchHop { hop: 3, .. })
    ));
    #[allow(clippy::reversed_empty_ranges)]
    let empty = with(|c| c.hops = 2..=1);
    assert!(matches!(empty, Err(Error::Option { name: "hops", .. })));

    let mut other = kg.clone();
    other.add_triple("m.5", "film.film.genre", "m.2").unwrap();
    assert!(matches!(
        KgRetriever::new(&other, &v, &index, &Words, Retrieval::paper()),
        Err(Error::KgMismatch { .. })
    ));

    let r = KgRetriever::new(&kg, &v, &index, &Words, Retrieval::released()).unwrap();
    let pop = Popularity::count([1, 2], [1]).unwrap();
    let titles: BTreeMap<u32, String> = [(1, "crime story".to_string())].into();
    assert!(matches!(
        r.retrieve(&[1, 2], &pop, &titles),
        Err(Error::NoTitle { item: 2, .. })
    ));
    assert!(matches!(
        r.retrieve(&[3], &pop, &titles),
        Err(Error::NotInCatalogue { item: 3, .. })
    ));
    let row = r.retrieve(&[1], &pop, &titles).unwrap();
    assert_eq!(row.selected, [1]);
    assert!(!row.subgraphs.is_empty() && row.subgraphs.len() <= 10);
    let _ = Take::Count(1);
}

/// An encoder that breaks its contract.
struct Broken(usize);

impl Encoder for Broken {
    fn encode(&self, texts: &[&str]) -> pgraphrag_core::Result<Embeddings> {
        match self.0 {
            0 => Embeddings::new(2, vec![0.0; 2 * (texts.len() + 1)]),
            1 => Embeddings::new(2, vec![f32::INFINITY; 2 * texts.len()]),
            _ => Err(pgraphrag_core::Error::InvalidInput("no model".into())),
        }
    }
}

#[test]
fn broken_encoders_are_typed() {
    let mut kg = KnowledgeGraph::new();
    kg.add_triple("a", "r", "b").unwrap();
    let build =
        |e: &dyn Encoder| HopVectors::build(&kg, e, "x", &IndexOptions::default(), &NoProgress);
    assert!(matches!(
        build(&Broken(0)),
        Err(Error::EncoderOutput { .. })
    ));
    assert!(matches!(
        build(&Broken(1)),
        Err(Error::EncoderOutput { .. })
    ));
    assert!(matches!(build(&Broken(2)), Err(Error::Encode { .. })));
    let opts = IndexOptions {
        batch: 0,
        ..IndexOptions::default()
    };
    assert!(matches!(
        HopVectors::build(&kg, &Words, "x", &opts, &NoProgress),
        Err(Error::Option { name: "batch", .. })
    ));
}

/// An index that breaks the contract in one of three ways.
struct Liar(usize);

impl SubgraphIndex for Liar {
    fn top_k(
        &self,
        hop: usize,
        _query: &[f32],
        k: usize,
    ) -> pgraphrag_recsys::Result<Vec<pgraphrag_recsys::SubgraphHit>> {
        let hit = |hop, centre| pgraphrag_recsys::SubgraphHit {
            subgraph: pgraphrag_recsys::Subgraph {
                hop,
                centre: EntityId(centre),
            },
            score: 0.5,
        };
        Ok(match self.0 {
            0 => vec![hit(hop + 1, 0)],
            1 => vec![hit(hop, 99)],
            _ => vec![hit(hop, 0); k + 1],
        })
    }
}

#[test]
fn broken_indexes_are_typed() {
    let (kg, v) = small();
    let pop = Popularity::count([1], []).unwrap();
    let titles: BTreeMap<u32, String> = [(1, "crime story".to_string())].into();
    for lie in 0..3 {
        let index = Liar(lie);
        let r = KgRetriever::new(&kg, &v, &index, &Words, Retrieval::paper()).unwrap();
        let e = r.retrieve(&[1], &pop, &titles).unwrap_err();
        assert!(matches!(e, Error::IndexOutput { .. }), "{e}");
    }
}

#[test]
fn shared_vectors_are_scanned_once_and_map_back_to_every_entity() {
    // Eight films, each with its own unnamed genre entity: the genres all read "genre", so
    // hop 0 holds far fewer distinct vectors than entities.
    let mut kg = KnowledgeGraph::new();
    for i in 0..8 {
        kg.add_triple(&format!("m.f{i}"), "film.film.genre", &format!("m.g{i}"))
            .unwrap();
    }
    let v = HopVectors::build(&kg, &Words, "words", &IndexOptions::default(), &NoProgress).unwrap();
    let index = ExactIndex::new(&v);
    let scanned = index.scanned_rows();
    assert!(scanned[0] < kg.entity_count(), "{scanned:?}");
    // A query along "genre": every genre entity ties, so the best come by ascending id.
    let genre = Words.encode(&["genre"]).unwrap();
    let hits = index.top_k(0, genre.as_slice(), 3).unwrap();
    let all = index.scores(0, genre.as_slice()).unwrap();
    let best = all.iter().copied().fold(f64::MIN, f64::max);
    let tied: Vec<EntityId> = (0..all.len())
        .filter(|&i| all[i] == best)
        .map(|i| EntityId(i as u32))
        .collect();
    assert!(tied.len() >= 3, "{all:?}");
    let got: Vec<EntityId> = hits.iter().map(|h| h.subgraph.centre).collect();
    assert_eq!(got, tied[..3]);
}
