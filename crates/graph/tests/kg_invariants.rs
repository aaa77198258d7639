//! Property tests of the knowledge graph's ego sub-graphs.
use std::collections::{BTreeMap, BTreeSet, VecDeque};

use pgraphrag_graph::kg::{EntityId, KnowledgeGraph};
use proptest::prelude::*;

fn graph() -> impl Strategy<Value = Vec<(u8, u8, u8)>> {
    prop::collection::vec((0u8..25, 0u8..4, 0u8..25), 1..80)
}

/// Undirected hop distances from `c`, by breadth-first search over the triples.
fn distances(triples: &[(u8, u8, u8)], c: u8) -> BTreeMap<u8, usize> {
    let mut d = BTreeMap::from([(c, 0usize)]);
    let mut q = VecDeque::from([c]);
    while let Some(n) = q.pop_front() {
        for &(h, _, t) in triples {
            for (a, b) in [(h, t), (t, h)] {
                if a == n && !d.contains_key(&b) {
                    d.insert(b, d[&n] + 1);
                    q.push_back(b);
                }
            }
        }
    }
    d
}

proptest! {
    #[test]
    fn ego_edges_are_real_and_within_k(triples in graph(), centre in 0usize..25, k in 0usize..4) {
        let mut kg = KnowledgeGraph::new();
        for &(h, r, t) in &triples {
            kg.add_triple(&format!("e{h}"), &format!("film.film.r{r}"), &format!("e{t}")).unwrap();
        }
        prop_assert_eq!(kg.edge_count(), triples.len());
        let Some(c) = kg.find(&format!("e{}", triples[centre % triples.len()].0)) else {
            return Err(TestCaseError::fail("centre missing"));
        };
        let key = |id: EntityId| kg.entity(id).key[1..].parse::<u8>().unwrap();
        let truth = distances(&triples, key(c));
        let ego = kg.ego(c, k);
        prop_assert_eq!(ego.nodes[0], (c, 0));
        let nodes: BTreeMap<EntityId, usize> = ego.nodes.iter().copied().collect();
        // Nodes: exactly those within k hops, at their true distance.
        let expect: BTreeSet<u8> = truth.iter().filter(|(_, d)| **d <= k).map(|(n, _)| *n).collect();
        prop_assert_eq!(nodes.keys().map(|&n| key(n)).collect::<BTreeSet<_>>(), expect);
        for (&n, &d) in &nodes {
            prop_assert_eq!(truth[&key(n)], d);
        }
        // Edges: real KG edges, each with an endpoint below k hops, none missing, none twice.
        let mut ids = BTreeSet::new();
        for e in &ego.edges {
            prop_assert!(kg.contains_edge(e));
            prop_assert!(ids.insert(e.id));
            let (dh, dt) = (nodes.get(&e.head), nodes.get(&e.tail));
            prop_assert!(dh.is_some() && dt.is_some());
            prop_assert!(dh.unwrap().min(dt.unwrap()) < &k);
        }
        let expected_edges = kg
            .edges()
            .filter(|e| {
                let dh = truth.get(&key(e.head)).copied().unwrap_or(usize::MAX);
                let dt = truth.get(&key(e.tail)).copied().unwrap_or(usize::MAX);
                dh.min(dt) < k
            })
            .count();
        prop_assert_eq!(ego.edges.len(), expected_edges);
        prop_assert_eq!(ego.triples(&kg).len(), ego.edges.len());
    }
}
