//! Building the typed knowledge graph of `pgraphrag-graph` from ML-100K's KG and links.
use std::collections::BTreeMap;

use pgraphrag_graph::kg::{EntityId, KnowledgeGraph};
use serde::{Deserialize, Serialize};

use crate::ml100k::Ml100k;
use crate::title::display_title;
use crate::{Error, Result};

/// What [`build_kg`] built.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KgReport {
    /// Triples added (one edge each).
    pub triples: usize,
    /// Distinct entities.
    pub entities: usize,
    /// Distinct relations.
    pub relations: usize,
    /// Links whose entity is in the graph (those entities are named after their movie).
    pub linked_items: usize,
    /// Links whose entity appears in no triple (counted, not named).
    pub links_not_in_kg: usize,
}

/// The KG and where each linked ML-100K item sits in it.
#[derive(Debug, Clone, Default)]
pub struct MovieKg {
    /// The graph.
    pub graph: KnowledgeGraph,
    /// ML-100K item id → its entity in `graph`.
    pub items: BTreeMap<u32, EntityId>,
    /// The counts.
    pub report: KgReport,
}

/// Builds the knowledge graph from `ml100k.triples` (file order, each triple one edge) and
/// names every linked entity after its movie: the [`display_title`] of the ML-100K title
/// (`"Usual Suspects, The"` → `"The Usual Suspects"`). Other entities keep their role label
/// (`pgraphrag_graph::kg::KnowledgeGraph::add_triple` documents the rule). Errors name
/// `ml-100k.kg` in `ml100k.dir` and the line.
///
/// ```
/// use pgraphrag_recsys::{build_kg, Ml100k, Movie, Triple};
/// let mut ml = Ml100k::default();
/// ml.items.insert(12, Movie { id: 12, title: "Usual Suspects, The".into(), year: Some(1995), genres: vec![], line: 13 });
/// ml.links.insert(12, "m.us".into());
/// ml.triples.push(Triple { head: "m.us".into(), relation: "film.film.directed_by".into(), tail: "m.bs".into(), line: 2 });
/// let kg = build_kg(&ml).unwrap();
/// let ego = kg.graph.ego(kg.items[&12], 1);
/// let t = ego.triples(&kg.graph);
/// assert_eq!((t[0].head, t[0].relation, t[0].tail), ("The Usual Suspects", "film directed by", "directed by"));
/// ```
pub fn build_kg(ml100k: &Ml100k) -> Result<MovieKg> {
    let mut graph = KnowledgeGraph::new();
    for t in &ml100k.triples {
        graph
            .add_triple(&t.head, &t.relation, &t.tail)
            .map_err(|source| Error::Kg {
                path: ml100k.dir.join("ml-100k.kg"),
                line: t.line,
                source,
            })?;
    }
    let mut items = BTreeMap::new();
    let mut report = KgReport {
        triples: ml100k.triples.len(),
        entities: graph.entity_count(),
        relations: graph.relations().len(),
        ..Default::default()
    };
    for (&item, entity) in &ml100k.links {
        match graph.find(entity) {
            Some(id) => {
                if let Some(m) = ml100k.items.get(&item) {
                    graph.set_name(id, &display_title(&m.title));
                }
                items.insert(item, id);
                report.linked_items += 1;
            }
            None => report.links_not_in_kg += 1,
        }
    }
    Ok(MovieKg {
        graph,
        items,
        report,
    })
}
