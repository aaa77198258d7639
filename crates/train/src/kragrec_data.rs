//! K-RagRec's training and evaluation rows from `pgraphrag-recsys` rows: each row's retrieved
//! knowledge sub-graphs (the popularity gate, hop-field retrieval and re-ranking of
//! [`KgRetriever`], cached on disk so epochs and evaluations do not retrieve again), their
//! features (the index's hop-0 node vectors, encoded relation texts), and the released
//! `train.py` prompt around the graph token(s), tokenized, with the answer letter.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use pgraphrag_core::Encoder;
use pgraphrag_graph::kg::{EntityId, KnowledgeGraph, TripleText};
use pgraphrag_llm::LlmTokenizer;
use pgraphrag_recsys::{
    CandidateSet, HopVectors, KgRetriever, LETTERS, Popularity, PromptStyle, Row, instruction,
    with_facts,
};
use serde::{Deserialize, Serialize};

use crate::error::{Result, TrainError};
use crate::gnn::Subgraph;
use crate::kragrec::KragrecExample;

/// What the retrieval cache keeps of one row: the centres of the kept sub-graphs (in the
/// retriever's order) and the first distinct triples of their ego graphs as text (what the
/// rows file records as the row's knowledge).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CachedRetrieval {
    /// Entity ids of the kept sub-graphs' centres (`EntityId.0`); empty when the gate
    /// selected no history item.
    pub centres: Vec<u32>,
    /// The first distinct triples of the kept sub-graphs, `[head, relation, tail]`.
    pub triples: Vec<[String; 3]>,
}

#[derive(Serialize, Deserialize)]
struct CacheFile {
    format: String,
    key: String,
    rows: BTreeMap<usize, CachedRetrieval>,
}

const CACHE_FORMAT: &str = "pgraphrag-kragrec-retrieval-1";

/// Each row's retrieval, kept in a JSON file written atomically ([`RetrievalCache::save`]),
/// so training epochs, resumed runs and evaluations reuse it. The file records a key (the
/// retrieval settings, index and KG identity): a file made with another key is refused.
///
/// ```
/// use pgraphrag_train::{CachedRetrieval, RetrievalCache};
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("retrieval.json");
/// let mut c = RetrievalCache::open(&path, "settings-1")?;
/// c.insert(7, CachedRetrieval { centres: vec![3], triples: vec![] });
/// c.save()?;
/// assert_eq!(RetrievalCache::open(&path, "settings-1")?.get(7).unwrap().centres, [3]);
/// assert!(RetrievalCache::open(&path, "settings-2").is_err());
/// # Ok::<(), pgraphrag_train::TrainError>(())
/// ```
#[derive(Debug)]
pub struct RetrievalCache {
    path: PathBuf,
    key: String,
    rows: BTreeMap<usize, CachedRetrieval>,
    dirty: bool,
}

impl RetrievalCache {
    /// The cache at `path` for retrievals made as `key` says: empty when the file does not
    /// exist. A file that is not a retrieval cache, or was made with another key, is
    /// [`TrainError::NoData`] naming the file.
    pub fn open(path: &Path, key: &str) -> Result<Self> {
        let mut c = RetrievalCache {
            path: path.to_path_buf(),
            key: key.to_string(),
            rows: BTreeMap::new(),
            dirty: false,
        };
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(c),
            Err(source) => {
                return Err(TrainError::Io {
                    path: path.to_path_buf(),
                    source,
                });
            }
        };
        let bad = |reason: String| TrainError::NoData {
            path: path.to_path_buf(),
            reason,
        };
        let f: CacheFile = serde_json::from_str(&text)
            .map_err(|e| bad(format!("not a K-RagRec retrieval cache ({e})")))?;
        if f.format != CACHE_FORMAT {
            return Err(bad(format!("format `{}`, not `{CACHE_FORMAT}`", f.format)));
        }
        if f.key != key {
            return Err(bad(format!(
                "made with other retrieval settings (`{}`, now `{key}`); pass another cache file",
                f.key
            )));
        }
        c.rows = f.rows;
        Ok(c)
    }

    /// Row `index`'s retrieval, when cached.
    pub fn get(&self, index: usize) -> Option<&CachedRetrieval> {
        self.rows.get(&index)
    }

    /// Records row `index`'s retrieval (written by the next [`RetrievalCache::save`]).
    pub fn insert(&mut self, index: usize, r: CachedRetrieval) {
        self.rows.insert(index, r);
        self.dirty = true;
    }

    /// Rows cached.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether no row is cached.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Writes the cache (temporary file, fsync, rename: the file is always whole) when
    /// something was inserted since it was opened or last saved.
    pub fn save(&mut self) -> Result<()> {
        if !self.dirty {
            return Ok(());
        }
        let f = CacheFile {
            format: CACHE_FORMAT.into(),
            key: self.key.clone(),
            rows: std::mem::take(&mut self.rows),
        };
        let bytes = serde_json::to_vec(&f);
        self.rows = f.rows;
        let bytes = bytes.map_err(|e| TrainError::Io {
            path: self.path.clone(),
            source: std::io::Error::other(e),
        })?;
        crate::checkpoint::write_file(&self.path, &bytes)?;
        self.dirty = false;
        Ok(())
    }
}

/// Row `history`'s retrieval through `retriever` (the same call as the inference-only
/// KG-Text method: popularity gate, per-hop search, re-ranking), in the cache's form, with
/// at most `max_triples` triples of text.
///
/// ```no_run
/// # fn f(r: &pgraphrag_recsys::KgRetriever<'_>, pop: &pgraphrag_recsys::Popularity,
/// #      titles: &std::collections::BTreeMap<u32, String>) -> pgraphrag_train::Result<()> {
/// let c = pgraphrag_train::retrieve_row(r, pop, titles, &[1, 2, 3], 10)?;
/// println!("{} sub-graphs", c.centres.len());
/// # Ok(()) }
/// ```
pub fn retrieve_row(
    retriever: &KgRetriever<'_>,
    popularity: &Popularity,
    titles: &BTreeMap<u32, String>,
    history: &[u32],
    max_triples: usize,
) -> Result<CachedRetrieval> {
    let k = retriever
        .retrieve(history, popularity, titles)
        .map_err(|e| TrainError::Input(format!("retrieval for history {history:?}: {e}")))?;
    let mut triples: Vec<[String; 3]> = k
        .distinct_triple_texts(retriever.kg())
        .into_iter()
        .map(|t| [t.head.into(), t.relation.into(), t.tail.into()])
        .collect();
    triples.truncate(max_triples);
    Ok(CachedRetrieval {
        centres: k.subgraphs.iter().map(|s| s.subgraph.centre.0).collect(),
        triples,
    })
}

/// Node and edge features of retrieved sub-graphs: each node's row of the index's hop-0
/// matrix (its encoded text), each edge's encoded relation text.
pub struct GraphFeatures<'a> {
    kg: &'a KnowledgeGraph,
    vectors: &'a HopVectors,
    relations: Vec<Vec<f32>>,
    ego_hops: usize,
}

impl std::fmt::Debug for GraphFeatures<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GraphFeatures")
            .field("dim", &self.vectors.dim())
            .field("relations", &self.relations.len())
            .field("ego_hops", &self.ego_hops)
            .finish()
    }
}

impl<'a> GraphFeatures<'a> {
    /// Features over `kg` and its index `vectors`; every relation text of `kg` is encoded
    /// once with `encoder` (the one the index was built with: its dimension is checked).
    /// Centres are expanded to `ego_hops`-hop ego graphs, as the retriever does
    /// ([`pgraphrag_recsys::Retrieval::ego_hops`]).
    ///
    /// ```no_run
    /// # fn f(kg: &pgraphrag_graph::kg::KnowledgeGraph, v: &pgraphrag_recsys::HopVectors,
    /// #      enc: &dyn pgraphrag_core::Encoder) -> pgraphrag_train::Result<()> {
    /// let feats = pgraphrag_train::GraphFeatures::new(kg, v, enc, 1)?;
    /// let graphs = feats.subgraphs(&[0, 5])?;
    /// assert_eq!(graphs.len(), 2);
    /// # Ok(()) }
    /// ```
    pub fn new(
        kg: &'a KnowledgeGraph,
        vectors: &'a HopVectors,
        encoder: &dyn Encoder,
        ego_hops: usize,
    ) -> Result<Self> {
        vectors
            .check_kg(kg)
            .map_err(|e| TrainError::Input(e.to_string()))?;
        let texts: Vec<&str> = kg.relations().iter().map(|r| r.text.as_str()).collect();
        let relations = if texts.is_empty() {
            Vec::new()
        } else {
            let e = encoder
                .encode(&texts)
                .map_err(|e| TrainError::Input(format!("encoding the relation texts: {e}")))?;
            if e.dim() != vectors.dim() || e.rows() != texts.len() {
                return Err(TrainError::Input(format!(
                    "the encoder gave {} vectors of {} values for {} relation texts; the index has {}",
                    e.rows(),
                    e.dim(),
                    texts.len(),
                    vectors.dim()
                )));
            }
            (0..e.rows()).map(|i| e.row(i).to_vec()).collect()
        };
        Ok(GraphFeatures {
            kg,
            vectors,
            relations,
            ego_hops,
        })
    }

    /// The feature size (the index's dimension).
    pub fn dim(&self) -> usize {
        self.vectors.dim()
    }

    /// The sub-graphs of `centres` (entity ids): each centre's ego graph
    /// ([`KnowledgeGraph::ego`]) through [`Subgraph::from_ego`].
    pub fn subgraphs(&self, centres: &[u32]) -> Result<Vec<Subgraph>> {
        let n = self.kg.entity_count();
        centres
            .iter()
            .map(|&c| {
                if c as usize >= n {
                    return Err(TrainError::Input(format!(
                        "entity {c} is not in the knowledge graph ({n} entities)"
                    )));
                }
                let ego = self.kg.ego(EntityId(c), self.ego_hops);
                Subgraph::from_ego(
                    &ego,
                    self.dim(),
                    |e| self.vectors.vector(0, e).map(<[f32]>::to_vec),
                    |r| self.relations.get(r.index()).cloned(),
                )
            })
            .collect()
    }
}

/// K-RagRec's prompt, tokenized around the graph token(s) as the released `train.py` builds
/// it: `<s>[INST]`, the soft token(s), the instruction (the released training wording,
/// [`PromptStyle::ReleasedTrain`], or another style), `[/INST]`; the answer is the target's
/// option letter, a single token (`tokenizer.encode('A', add_special_tokens=False)`).
#[derive(Debug)]
pub struct KragrecPrompt {
    tokenizer: LlmTokenizer,
    style: PromptStyle,
    prefix: Vec<u32>,
    letters: Vec<u32>,
}

impl KragrecPrompt {
    /// The prompt for `tokenizer`'s model in `style`. Errors when a letter A–Z is not one
    /// token, or the tokenizer fails.
    ///
    /// ```no_run
    /// let t = pgraphrag_llm::LlmTokenizer::from_gguf("models/SmolLM2-135M-Instruct.Q4_1.gguf".as_ref())?;
    /// let p = pgraphrag_train::KragrecPrompt::new(t, pgraphrag_recsys::PromptStyle::ReleasedTrain)?;
    /// assert_eq!(p.letter_ids(20)?.len(), 20);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(tokenizer: LlmTokenizer, style: PromptStyle) -> Result<Self> {
        let mut prefix: Vec<u32> = tokenizer.bos().into_iter().collect();
        prefix.extend(tokenizer.encode("[INST]")?);
        let mut letters = Vec::with_capacity(LETTERS.len());
        for l in LETTERS {
            match tokenizer.encode(&l.to_string())?[..] {
                [id] => letters.push(id),
                ref ids => {
                    return Err(TrainError::Input(format!(
                        "the letter {l} is {} tokens, not one",
                        ids.len()
                    )));
                }
            }
        }
        Ok(KragrecPrompt {
            tokenizer,
            style,
            prefix,
            letters,
        })
    }

    /// The token ids of the first `m` option letters.
    pub fn letter_ids(&self, m: usize) -> Result<&[u32]> {
        self.letters
            .get(..m)
            .ok_or_else(|| TrainError::Input(format!("{m} options: at most 26 letters")))
    }

    /// The example of one row: the instruction over `history` and the options' titles
    /// (`titles` must hold every item), the sub-graphs `graphs` as soft tokens, the answer
    /// the letter of `candidates.target_index`.
    pub fn example(
        &self,
        row: &Row,
        candidates: &CandidateSet,
        titles: &BTreeMap<u32, String>,
        graphs: Vec<Subgraph>,
    ) -> Result<KragrecExample> {
        self.example_with_facts(row, candidates, titles, graphs, &[])
    }

    /// [`KragrecPrompt::example`] with `facts` (`[head, relation, tail]`, e.g.
    /// [`CachedRetrieval::triples`]) written before the instruction as the KG-Text method
    /// writes them ([`with_facts`]): the prompt of the "-Encoding" ablation, where a
    /// [`crate::SoftPrompt`] replaces the graph encoder and the knowledge goes in as text.
    /// No facts gives [`KragrecPrompt::example`]'s prompt.
    pub fn example_with_facts(
        &self,
        row: &Row,
        candidates: &CandidateSet,
        titles: &BTreeMap<u32, String>,
        graphs: Vec<Subgraph>,
        facts: &[[String; 3]],
    ) -> Result<KragrecExample> {
        let title = |i: &u32| {
            titles
                .get(i)
                .map(String::as_str)
                .ok_or_else(|| TrainError::Input(format!("item {i} has no title")))
        };
        let history = row.history.iter().map(title).collect::<Result<Vec<_>>>()?;
        let options = candidates
            .items
            .iter()
            .map(title)
            .collect::<Result<Vec<_>>>()?;
        let text = instruction(self.style, &history, &options)
            .map_err(|e| TrainError::Input(e.to_string()))?;
        let facts: Vec<TripleText<'_>> = facts
            .iter()
            .map(|[head, relation, tail]| TripleText {
                head,
                relation,
                tail,
            })
            .collect();
        let text = with_facts(&facts, &text);
        let rest = self.tokenizer.encode(&format!("{text}[/INST]"))?;
        let answer = *self
            .letter_ids(options.len())?
            .get(candidates.target_index)
            .ok_or_else(|| {
                TrainError::Input(format!(
                    "target index {} of {} options",
                    candidates.target_index,
                    options.len()
                ))
            })?;
        Ok(KragrecExample {
            prefix: self.prefix.clone(),
            graphs,
            rest,
            answer,
        })
    }
}
