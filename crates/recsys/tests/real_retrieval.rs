//! The sub-graph index and retrieval on real data: ML-100K's Freebase KG
//! (`models/corpora/ml-100k` at the workspace root, or `$PGRAPHRAG_CORPORA/ml-100k`; from
//! `scripts/fetch-corpora.sh`) and all-MiniLM-L6-v2 (`models/all-MiniLM-L6-v2`, or
//! `$PGRAPHRAG_MINILM`; from `scripts/fetch_models.sh`). Kept fast: only the KG restricted to
//! the 2-hop neighbourhoods of 20 items is indexed. Missing files fail the test with the
//! command that fetches them.
use std::collections::BTreeSet;
mod common;
use common::*;

use pgraphrag_core::{Encoder, NoProgress};
use pgraphrag_graph::kg::KnowledgeGraph;
use pgraphrag_recsys::{
    Counted, ExactIndex, HopVectors, IndexOptions, KgRetriever, Ml100k, Retrieval, SubgraphIndex,
    build_kg, leave_one_out, ml100k_titles,
};
use pgraphrag_retrieval::dense::{BertEncoder, EncoderOptions};

#[test]
fn index_and_retrieve_on_ml100k_with_minilm() {
    let ml = Ml100k::load(&ml100k_dir()).expect("load ML-100K");
    let full = build_kg(&ml).expect("build the KG");
    let encoder = BertEncoder::load_with(
        &minilm_dir(),
        EncoderOptions {
            normalize: true,
            ..EncoderOptions::default()
        },
    )
    .expect("load all-MiniLM-L6-v2");
    let model = encoder.fingerprint().expect("hash the model");

    // One row whose gate selects something; the 20 items are its history and the next
    // linked items by id.
    let loo = leave_one_out(&ml.interactions, 10);
    let pop = ml.popularity(Counted::All).unwrap();
    let config = Retrieval::paper();
    let row = loo
        .rows
        .iter()
        .find(|r| {
            let s = config.gate.select(&pop, &r.history).unwrap();
            !s.is_empty() && r.history.iter().all(|i| full.items.contains_key(i))
        })
        .expect("a row with a cold, linked history");
    let mut items: Vec<u32> = row.history.clone();
    items.extend(
        full.items
            .keys()
            .copied()
            .filter(|i| !row.history.contains(i))
            .take(10),
    );
    assert_eq!(items.len(), 20);

    // The KG restricted to the items' 2-hop ego sub-graphs, triples in file order.
    let mut edge_ids = BTreeSet::new();
    for i in &items {
        edge_ids.extend(full.graph.ego(full.items[i], 2).edges.iter().map(|e| e.id));
    }
    let mut kg = KnowledgeGraph::new();
    for e in full.graph.edges().filter(|e| edge_ids.contains(&e.id)) {
        let (h, t) = (full.graph.entity(e.head), full.graph.entity(e.tail));
        kg.add_triple(&h.key, &full.graph.relation(e.relation).key, &t.key)
            .unwrap();
    }
    for id in kg.entity_ids().collect::<Vec<_>>() {
        let key = kg.entity(id).key.clone();
        if let Some(name) = &full.graph.entity(full.graph.find(&key).unwrap()).name {
            kg.set_name(id, name);
        }
    }
    eprintln!(
        "sub-KG: {} entities, {} edges, {} relations (of {} entities, {} edges)",
        kg.entity_count(),
        kg.edge_count(),
        kg.relations().len(),
        full.graph.entity_count(),
        full.graph.edge_count()
    );

    let opts = IndexOptions::default();
    let vectors = HopVectors::build(&kg, &encoder, &model, &opts, &NoProgress).expect("build");
    assert_eq!(
        (vectors.dim(), vectors.entities(), vectors.max_hop()),
        (384, kg.entity_count(), 2)
    );
    for hop in 0..=2 {
        let m = vectors.hop_matrix(hop).unwrap();
        assert_eq!(m.len(), kg.entity_count() * 384);
        for row in m.chunks(384) {
            let n: f64 = row.iter().map(|&x| f64::from(x).powi(2)).sum();
            assert!((n - 1.0).abs() < 1e-4 || n == 0.0, "row norm² {n}");
        }
    }

    // The file round trip.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ml100k-minilm.bin");
    vectors.save(&path).unwrap();
    let loaded = HopVectors::load(&path, &model, &kg, Some(encoder.dim())).expect("load the index");
    assert_eq!(loaded, vectors);
    eprintln!(
        "index file: {} bytes",
        std::fs::metadata(&path).unwrap().len()
    );

    // A title finds its own movie at hop 0.
    let index = ExactIndex::new(&loaded);
    let toy = ml.items[&items[0]].title.as_str();
    let q = encoder.encode(&[toy]).unwrap();
    let hit = index.top_k(0, q.row(0), 1).unwrap()[0];
    eprintln!(
        "top hop-0 hit for {toy:?}: {:?} ({:.3})",
        kg.entity(hit.subgraph.centre).text(),
        hit.score
    );

    // Retrieval for the row.
    let titles = ml100k_titles(&ml);
    let retriever = KgRetriever::new(&kg, &loaded, &index, &encoder, config).unwrap();
    let out = retriever
        .retrieve(&row.history, &pop, &titles)
        .expect("retrieve");
    assert!(!out.selected.is_empty());
    assert!(!out.subgraphs.is_empty() && out.subgraphs.len() <= 5);
    let real: BTreeSet<(&str, &str, &str)> = ml
        .triples
        .iter()
        .map(|t| (t.head.as_str(), t.relation.as_str(), t.tail.as_str()))
        .collect();
    for s in &out.subgraphs {
        for e in &s.ego.edges {
            assert!(kg.contains_edge(e));
            let key = (
                kg.entity(e.head).key.as_str(),
                kg.relation(e.relation).key.as_str(),
                kg.entity(e.tail).key.as_str(),
            );
            assert!(real.contains(&key), "{key:?} is not a triple of ml-100k.kg");
            assert!(full.graph.find(key.0).is_some() && full.graph.find(key.2).is_some());
        }
    }
    let triples = out.triples(&kg);
    assert!(!triples.is_empty());
    eprintln!("prompt: {}", out.prompt);
    eprintln!(
        "selected: {:?} ({} sub-graphs retrieved)",
        out.selected, out.retrieved
    );
    for s in &out.subgraphs {
        eprintln!(
            "  hop {} centre {:?} (item {} {:?}, item score {:.3}, prompt score {:.3}): {} triples",
            s.subgraph.hop,
            kg.entity(s.subgraph.centre).text(),
            s.item,
            titles[&s.item],
            s.item_score,
            s.score,
            s.ego.edges.len()
        );
    }
    let texts = out.distinct_triple_texts(&kg);
    assert!(!texts.is_empty() && texts.len() <= triples.len());
    for t in texts.iter().take(10) {
        eprintln!("  ({}, {}, {})", t.head, t.relation, t.tail);
    }
    eprintln!(
        "  … {} distinct edges, {} distinct triple texts",
        triples.len(),
        texts.len()
    );
}
