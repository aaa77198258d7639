//! The KAPING-style baseline (Baek et al., 2023, *Knowledge-Augmented Language Model
//! Prompting*): the triples around the history items' entities, verbalised, ranked by
//! similarity to the history prompt, the top k given to the model as text.
use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;

use pgraphrag_core::Encoder;
use pgraphrag_graph::kg::{EntityId, KnowledgeGraph, TripleText};

use crate::index::{dot, encode_checked, normalize};
use crate::prompt::triple_line;
use crate::{Error, Result};

/// One triple KAPING kept, with its cosine to the history prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct ScoredTriple<'a> {
    /// The triple's text.
    pub triple: TripleText<'a>,
    /// Cosine of its verbalisation with the history prompt.
    pub score: f64,
}

/// KAPING-style triple retrieval over a KG.
///
/// For a row: every triple within one hop of each history item's entity (the item's KG link;
/// unlinked items add nothing), deduplicated by text; each verbalised as `(head, relation,
/// tail)` ([`triple_line`]) and encoded; scored by cosine with the encoded history prompt; the
/// top `k` kept, ties to the earlier triple (history order, then edge id). Unlike K-RagRec
/// there is no popularity gate, no hop field and no re-ranking: this is what KAPING does with
/// a question's entities. Triple vectors are kept in memory, so each distinct verbalisation is
/// encoded once per [`Kaping`].
pub struct Kaping<'a> {
    kg: &'a KnowledgeGraph,
    encoder: &'a dyn Encoder,
    k: usize,
    vectors: Mutex<HashMap<String, Vec<f32>>>,
}

impl<'a> Kaping<'a> {
    /// KAPING over `kg` with `encoder`, keeping `k` triples (`k` ≥ 1).
    ///
    /// ```
    /// use pgraphrag_core::{Embeddings, Encoder, Result};
    /// use pgraphrag_graph::kg::KnowledgeGraph;
    /// use pgraphrag_recsys::Kaping;
    ///
    /// /// Scores by whether a text mentions "Mann": a test double.
    /// struct Mann;
    /// impl Encoder for Mann {
    ///     fn encode(&self, texts: &[&str]) -> Result<Embeddings> {
    ///         let v = texts.iter().flat_map(|t| [1.0, if t.contains("Mann") { 5.0 } else { 0.0 }]).collect();
    ///         Embeddings::new(2, v)
    ///     }
    /// }
    /// let mut kg = KnowledgeGraph::new();
    /// kg.add_triple("m.heat", "film.film.genre", "m.crime").unwrap();
    /// kg.add_triple("m.heat", "film.film.directed_by", "m.mann").unwrap();
    /// kg.set_name(kg.find("m.heat").unwrap(), "Heat");
    /// kg.set_name(kg.find("m.mann").unwrap(), "Michael Mann");
    /// let kaping = Kaping::new(&kg, &Mann, 1).unwrap();
    /// let heat = kg.find("m.heat").unwrap();
    /// let top = kaping.retrieve(&[heat], "films by Mann").unwrap();
    /// assert_eq!(top[0].triple.tail, "Michael Mann");
    /// ```
    pub fn new(kg: &'a KnowledgeGraph, encoder: &'a dyn Encoder, k: usize) -> Result<Self> {
        if k == 0 {
            return Err(Error::Option {
                name: "KAPING k",
                value: "0".into(),
                expected: "at least 1",
            });
        }
        Ok(Kaping {
            kg,
            encoder,
            k,
            vectors: Mutex::new(HashMap::new()),
        })
    }

    /// The number of triples kept.
    pub fn k(&self) -> usize {
        self.k
    }

    /// The top `k` triples around `entities` for the history `prompt`, best first. No
    /// entities, or entities without edges, give none (and the encoder is not called).
    pub fn retrieve(&self, entities: &[EntityId], prompt: &str) -> Result<Vec<ScoredTriple<'a>>> {
        let mut seen_edges = BTreeSet::new();
        let mut seen_text = BTreeSet::new();
        let mut triples = Vec::new();
        for &e in entities {
            if self.kg.get_entity(e).is_none() {
                return Err(Error::Option {
                    name: "KAPING entity",
                    value: format!("{e:?}"),
                    expected: "an entity of the knowledge graph",
                });
            }
            for edge in self.kg.ego(e, 1).edges {
                if seen_edges.insert(edge.id) {
                    let t = self.kg.triple_text(&edge);
                    if seen_text.insert((t.head, t.relation, t.tail)) {
                        triples.push(t);
                    }
                }
            }
        }
        if triples.is_empty() {
            return Ok(Vec::new());
        }
        let lines: Vec<String> = triples.iter().map(triple_line).collect();
        let (_, mut prompt_v) = encode_checked(self.encoder, &[prompt], None, "the KAPING prompt")?;
        normalize(&mut prompt_v);
        let d = prompt_v.len();
        let mut cache = self.vectors.lock().unwrap_or_else(|p| p.into_inner());
        // The lines are distinct: the triples were deduplicated by text.
        let missing: Vec<&str> = lines
            .iter()
            .map(String::as_str)
            .filter(|l| !cache.contains_key(*l))
            .collect();
        if !missing.is_empty() {
            let (_, v) = encode_checked(self.encoder, &missing, Some(d), "KAPING triples")?;
            for (text, row) in missing.iter().zip(v.chunks_exact(d)) {
                let mut row = row.to_vec();
                normalize(&mut row);
                cache.insert((*text).to_string(), row);
            }
        }
        let scores: Vec<f64> = lines.iter().map(|l| dot(&cache[l], &prompt_v)).collect();
        let top =
            pgraphrag_core::top_k(&scores, Some(self.k), pgraphrag_core::TieOrder::InputOrder);
        Ok(top
            .into_iter()
            .map(|s| ScoredTriple {
                triple: triples[s.item],
                score: s.score,
            })
            .collect())
    }
}
