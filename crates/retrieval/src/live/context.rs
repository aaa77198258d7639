//! Reads of a [`ProfileIndex`]: one target's ranked context.

use std::sync::Arc;

use pgraphrag_core::{Entry, ItemId, RankedProfile, Scored, TieOrder, top_k};
use pgraphrag_graph::Scope;

use super::doc::StoredDoc;
use super::index::{ProfileIndex, check_rows};
use super::snapshot::{Side, Snapshot};
use crate::scoring::{rrf_scores, similarity};
use crate::sparse::Tokenizer;
use crate::sparse::fit::with_scratch;
use crate::{Error, Result};

/// Which retriever ranks a context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum RetrieverKind {
    /// BM25Okapi fitted on each candidate list (PGraphRAG's retriever, rank_bm25 parity).
    #[default]
    Bm25,
    /// The index's dense encoder, [`super::IndexOptions::similarity`] between the query's and
    /// each document's vector.
    Dense,
    /// Reciprocal-rank fusion of the BM25 and dense rankings of the same candidates.
    Hybrid,
}

impl RetrieverKind {
    /// `"bm25"`, `"dense"` or `"hybrid"`.
    pub fn name(self) -> &'static str {
        match self {
            RetrieverKind::Bm25 => "bm25",
            RetrieverKind::Dense => "dense",
            RetrieverKind::Hybrid => "hybrid",
        }
    }
}

/// What to retrieve for one target, set with a struct literal and `..Default::default()`.
///
/// ```
/// use pgraphrag_graph::Scope;
/// use pgraphrag_retrieval::live::{ContextRequest, RetrieverKind};
/// let r = ContextRequest { user: "ann".into(), query: "lavender".into(), ..Default::default() };
/// assert_eq!((r.scope, r.k, r.retriever), (Some(Scope::Both), 5, RetrieverKind::Bm25));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ContextRequest {
    /// The target user (who must have a document in the index).
    pub user: String,
    /// The target item: the user's documents about it are left out of the user side, and the
    /// neighbour side is other users' documents about it. Required for [`Scope::Neighbor`].
    pub item: Option<String>,
    /// The query the candidates are ranked against (for PGraphRAG, [`pgraphrag_core::Task::query`]).
    pub query: String,
    /// Which sides: [`Scope::User`], [`Scope::Neighbor`], [`Scope::Both`] (each side ranked
    /// and cut to `k` on its own, as PGraphRAG does), or `None` for no retrieval. Default
    /// `Some(Scope::Both)`; [`Scope::Both`] without an item ranks the user side only.
    pub scope: Option<Scope>,
    /// How many entries per side (at least 1). Default 5.
    pub k: usize,
    /// The retriever. Default BM25.
    pub retriever: RetrieverKind,
}

impl Default for ContextRequest {
    fn default() -> Self {
        ContextRequest {
            user: String::new(),
            item: None,
            query: String::new(),
            scope: Some(Scope::Both),
            k: 5,
            retriever: RetrieverKind::Bm25,
        }
    }
}

/// One retrieved document with its score.
#[derive(Debug, Clone)]
pub struct Hit {
    /// The document (shared with the snapshot it came from).
    pub doc: Arc<StoredDoc>,
    /// The retriever's score (higher is better).
    pub score: f64,
}

/// A target's ranked context at one generation.
#[derive(Debug, Clone)]
pub struct Context {
    /// The generation it was computed from.
    pub generation: u64,
    /// The user side, best first (at most `k`).
    pub user: Vec<Hit>,
    /// The neighbour side, best first (at most `k`).
    pub neighbors: Vec<Hit>,
}

impl Context {
    /// Every hit: the user side, then the neighbour side.
    pub fn entries(&self) -> impl Iterator<Item = &Hit> {
        self.user.iter().chain(&self.neighbors)
    }

    /// The context as the [`RankedProfile`] prompts are built from
    /// (`pgraphrag_prompt::pgraphrag::PromptBuilder`), for the target `user` and `item`;
    /// `target` fills the profile's target review (its fields are quoted in a prompt).
    pub fn to_profile(&self, req: &ContextRequest, target: Option<Entry>) -> RankedProfile {
        let item = req.item.clone().unwrap_or_default();
        let target = target.unwrap_or_else(|| Entry {
            author: req.user.clone(),
            item: item.clone(),
            ..Default::default()
        });
        RankedProfile {
            user_id: req.user.clone(),
            target,
            target_item: ItemId::Str(item),
            user: self.user.iter().map(|h| h.doc.to_ranked(h.score)).collect(),
            neighbors: self
                .neighbors
                .iter()
                .map(|h| h.doc.to_ranked(h.score))
                .collect(),
            random: None,
        }
    }
}

impl<T: Tokenizer> ProfileIndex<T> {
    /// The ranked context of one target, from the latest snapshot. Never waits for a writer.
    ///
    /// Errors: `k = 0` with a scope, an unknown user, a neighbour scope without an item or
    /// with an unknown one, dense or hybrid retrieval without an encoder.
    pub fn context(&self, req: &ContextRequest) -> Result<Context> {
        self.context_at(&self.snapshot(), req)
    }

    /// [`ProfileIndex::context`] on a snapshot the caller holds (several reads of one
    /// consistent state).
    pub fn context_at(&self, snap: &Snapshot, req: &ContextRequest) -> Result<Context> {
        let mut ctx = Context {
            generation: snap.generation(),
            user: Vec::new(),
            neighbors: Vec::new(),
        };
        let Some(scope) = req.scope else {
            return Ok(ctx);
        };
        if req.k == 0 {
            return Err(Error::ZeroK);
        }
        if req.user.trim().is_empty() {
            return Err(Error::EmptyField {
                field: "user",
                what: "the context request".into(),
            });
        }
        if !snap.has_user(&req.user) {
            return Err(Error::UnknownUser {
                user: req.user.clone(),
            });
        }
        let item = req.item.as_deref();
        if scope == Scope::Neighbor {
            match item {
                None => return Err(Error::MissingItem),
                Some(i) if !snap.has_item(i) => {
                    return Err(Error::UnknownItem {
                        item: i.to_string(),
                    });
                }
                Some(_) => {}
            }
        }
        let query = Query::new(self, snap, req)?;
        if matches!(scope, Scope::User | Scope::Both) {
            ctx.user = self.rank_side(snap, &query, &snap.user_side(&req.user, item), req)?;
        }
        if let (Scope::Neighbor | Scope::Both, Some(item)) = (scope, item) {
            let side = snap.neighbor_side(&req.user, item);
            ctx.neighbors = self.rank_side(snap, &query, &side, req)?;
        }
        Ok(ctx)
    }

    /// One side's candidates ranked and cut to `k`.
    fn rank_side(
        &self,
        snap: &Snapshot,
        q: &Query,
        side: &Side,
        req: &ContextRequest,
    ) -> Result<Vec<Hit>> {
        let cands = &side.cands[..];
        let ranked = match req.retriever {
            RetrieverKind::Bm25 => self.bm25(snap, q, side, Some(req.k)),
            RetrieverKind::Dense => dense(q, cands, self.opts.similarity, Some(req.k))?,
            RetrieverKind::Hybrid => {
                let rankings = [
                    self.bm25(snap, q, side, None),
                    dense(q, cands, self.opts.similarity, None)?,
                ];
                let fused = rrf_scores(cands.len(), &rankings, self.opts.rrf_k);
                top_k(&fused, Some(req.k), TieOrder::InputOrder)
            }
        };
        Ok(ranked
            .into_iter()
            .map(|s| Hit {
                doc: Arc::clone(cands[s.item]),
                score: s.score,
            })
            .collect())
    }

    /// BM25Okapi fitted on the side's candidates with tokens (those without are dropped, as
    /// the clean recipe does); indices into the candidates. A long list's kept fit
    /// ([`super::IndexOptions::fit_min_docs`]; made by the writer right after publishing, so
    /// a read never waits for one) gives the same scores, bit for bit, without walking every
    /// token; until it is there, the list is fitted for the read.
    fn bm25(
        &self,
        snap: &Snapshot,
        q: &Query,
        side: &Side,
        k: Option<usize>,
    ) -> Vec<Scored<usize>> {
        let cands = &side.cands;
        let kept: Vec<usize> = (0..cands.len()).filter(|&i| cands[i].len > 0).collect();
        if kept.is_empty() {
            return Vec::new();
        }
        let (ids, bound, params) = (&q.token_ids[..], snap.id_bound, self.opts.bm25);
        let scores = with_scratch(|sc| match side.list.and_then(|l| l.fit().map(|f| (l, f))) {
            Some((list, fit)) => {
                let terms_of = |d: u32| list.kept_terms(fit, d);
                sc.list_scores(fit, &side.excluded, terms_of, ids, bound, params)
            }
            None => {
                let docs = kept.iter().map(|&i| (cands[i].len, &cands[i].terms[..]));
                sc.scores(docs, ids, bound, params)
            }
        });
        top_k(&scores, k, self.opts.ties)
            .into_iter()
            .map(|s| Scored::new(kept[s.item], s.score))
            .collect()
    }
}

/// The query, tokenized and (for the dense retrievers) embedded once per request.
struct Query {
    token_ids: Vec<u32>,
    vector: Option<Vec<f32>>,
}

impl Query {
    fn new<T: Tokenizer>(
        index: &ProfileIndex<T>,
        snap: &Snapshot,
        req: &ContextRequest,
    ) -> Result<Self> {
        let token_ids = match req.retriever {
            RetrieverKind::Dense => Vec::new(),
            _ => snap.token_ids(&index.tokenizer.tokenize(&req.query)),
        };
        let vector = match req.retriever {
            RetrieverKind::Bm25 => None,
            kind => {
                let enc = index.encoder.as_ref().ok_or(Error::NoEncoder {
                    retriever: kind.name(),
                })?;
                let what = || format!("the query {:?}", req.query);
                let e = enc
                    .encode(&[req.query.as_str()])
                    .map_err(|e| Error::Encode {
                        what: what(),
                        message: e.to_string(),
                    })?;
                check_rows(&e, 1, snap.dim.or(index.dim()), what)?;
                Some(e.into_vec())
            }
        };
        Ok(Query { token_ids, vector })
    }
}

/// The dense ranking of the candidates (ties in input order, as `DenseRetriever` ranks).
fn dense(
    q: &Query,
    cands: &[&Arc<StoredDoc>],
    sim: crate::scoring::Similarity,
    k: Option<usize>,
) -> Result<Vec<Scored<usize>>> {
    let Some(qv) = &q.vector else {
        return Ok(Vec::new());
    };
    let mut scores = Vec::with_capacity(cands.len());
    for d in cands {
        let Some(dv) = d.embedding.as_deref() else {
            return Err(Error::Encode {
                what: format!("document {:?} of user {:?}", d.id(), d.user()),
                message: "it has no embedding (written before the encoder was added)".into(),
            });
        };
        let s = similarity(sim, qv, dv);
        if !s.is_finite() {
            return Err(Error::NonFiniteScore {
                index: scores.len(),
                score: s,
                what: "dense similarity".into(),
            });
        }
        scores.push(s);
    }
    Ok(top_k(&scores, k, TieOrder::InputOrder))
}
