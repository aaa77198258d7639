//! Graph-scoped profile retrieval: PGraphRAG's user / neighbour / both profiles, task queries
//! and the ranking-file semantics of the released notebook (`notebook/ranking.ipynb`).
//!
//! For a target (user, item) on a [`UserItemGraph`], a [`ProfileRanker`] ranks
//!
//! * the user's reviews of other items (`user_ratings`),
//! * the other users' reviews of the target item (`neighbor_ratings`),
//!
//! against a [`Task`] query with any [`CandidateRanker`] (any
//! [`pgraphrag_core::Retriever`] through [`WithRetriever`], or the token-caching
//! [`CachedBm25`]), keeps the top `k`, and draws a seeded random review of a random other
//! user, exactly as the notebook's `random.choice` calls do ([`PyRandom`]).
//!
//! The notebook's quirks are options ([`ProfileOptions`]); [`ProfileOptions::default`] is the
//! clean behaviour, [`ProfileOptions::notebook`] reproduces the released code (the `pgraphrag
//! rank` default). Tie order among equal scores is the retriever's (`sparse::TieOrder`).
//!
//! ```
//! use pgraphrag_core::Entry;
//! use pgraphrag_graph::{GraphOptions, ItemId, UserItemGraph};
//! use pgraphrag_retrieval::profile::{CachedBm25, ProfileOptions, ProfileRanker, Task};
//!
//! let mut g = UserItemGraph::new(GraphOptions::default());
//! let mut add = |id, u: &str, i: &str, title: &str, text: &str| {
//!     g.insert(Entry { id, author: u.into(), item: i.into(), title: Some(title.into()),
//!                      text: Some(text.into()), rating: Some(5.0), time: None });
//! };
//! add(0, "ann", "soap", "Lovely soap", "Smells of lavender");
//! add(1, "ann", "shampoo", "Great shampoo", "My hair is soft");
//! add(2, "bob", "soap", "Lavender soap", "Lavender scent, lasts long");
//! add(3, "cat", "soap", "Dry skin", "Left my skin dry");
//! add(4, "dan", "soap", "Fine", "It does the job");
//! let query = Task::Text.query(Some("Lovely soap"), Some("Smells of lavender"));
//! assert_eq!(query, "Lovely soap");
//! let mut ranker = ProfileRanker::new(CachedBm25::pgraphrag(), ProfileOptions::default());
//! let p = ranker.rank(&g, "ann", &ItemId::from("soap"), &query).unwrap();
//! assert_eq!(p.user.len(), 1);
//! assert_eq!(g.review(p.neighbors[0].review).entry.author, "bob");
//! assert!(p.random.is_some());
//! ```

mod pyrandom;

pub use pyrandom::PyRandom;

use pgraphrag_core::{Retriever, Scored};
use pgraphrag_graph::{ItemId, ReviewId, Scope, UserItemGraph};

use crate::sparse::interner::Interner;
use crate::sparse::{Bm25Params, PgraphragTokenizer, TieOrder, Tokenizer, top_k};
use crate::{Error, Result};

/// The three PGraphRAG tasks; each picks the query from the target review.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Task {
    /// Review text generation (`reviewText`): the query is the target's **title**.
    Text,
    /// Review title generation (`reviewTitle`): the query is the target's **text**.
    Title,
    /// Rating prediction (`reviewRating`): the query is `f"{title} {text}".strip()`.
    Rating,
}

impl Task {
    /// The notebook's name of the task (`reviewText`, `reviewTitle`, `reviewRating`).
    pub fn notebook_name(self) -> &'static str {
        match self {
            Task::Text => "reviewText",
            Task::Title => "reviewTitle",
            Task::Rating => "reviewRating",
        }
    }

    /// The query for a target review with raw `title` and `text` (`None` counts as empty),
    /// stripped like Python's `str.strip()`.
    ///
    /// ```
    /// use pgraphrag_retrieval::profile::Task;
    /// assert_eq!(Task::Title.query(Some("T"), Some(" body ")), "body");
    /// assert_eq!(Task::Rating.query(Some(" "), Some("x")), "x");
    /// ```
    pub fn query(self, title: Option<&str>, text: Option<&str>) -> String {
        let t = title.unwrap_or("").trim();
        let x = text.unwrap_or("").trim();
        match self {
            Task::Text => t.to_string(),
            Task::Title => x.to_string(),
            Task::Rating => format!("{t} {x}").trim().to_string(),
        }
    }
}

/// What to do with candidate documents that tokenize to nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EmptyDocs {
    /// Hand every candidate to the ranker.
    Keep,
    /// Drop them before ranking and map results back to the right review (the fix).
    #[default]
    Drop,
    /// The notebook: drop them before fitting BM25 but index the *unfiltered* list with the
    /// filtered positions, so every review after a dropped one is reported in the place of its
    /// predecessor's score.
    DropMisaligned,
}

/// How ranked documents map back to reviews when two candidates have the same text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DuplicateTexts {
    /// Each ranked document is its own review.
    #[default]
    Distinct,
    /// The notebook's `combined_documents.index(doc)`: every duplicate maps to the first
    /// candidate with that text (so one review can appear several times).
    FirstOccurrence,
}

/// What to do when exactly one neighbour review remains.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SingleNeighbor {
    /// Rank it like any list (it gets a score).
    #[default]
    Rank,
    /// The notebook: return it without ranking (no score, even if its text is empty).
    Unranked,
}

/// The random-review baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RandomReview {
    /// No random review.
    Off,
    /// The notebook: `random.choice` of another user (users in first-appearance order), then
    /// `random.choice` of that user's reviews, with CPython's Mersenne Twister seeded once.
    Python {
        /// The seed (`random.seed(42)` in the notebook).
        seed: u64,
    },
}

/// Options of a [`ProfileRanker`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProfileOptions {
    /// How many reviews to keep per list (the notebook's `limit = 5`).
    pub k: usize,
    /// Candidates that tokenize to nothing.
    pub empty_docs: EmptyDocs,
    /// Candidates with identical texts.
    pub duplicate_texts: DuplicateTexts,
    /// A single remaining neighbour.
    pub single_neighbor: SingleNeighbor,
    /// The random review.
    pub random: RandomReview,
    /// Notebook order for the random user's reviews: rank them against the empty query with
    /// the same ranker and quirks before `random.choice` (as `get_user_all_ratings(..., query="")`
    /// does). When false the choice is over the user's reviews in graph order.
    pub random_via_ranker: bool,
}

impl Default for ProfileOptions {
    /// The clean choices: k = 5, empty documents dropped with correct mapping, duplicate texts
    /// distinct, a single neighbour ranked, random review seeded 42 over graph order.
    fn default() -> Self {
        ProfileOptions {
            k: 5,
            empty_docs: EmptyDocs::Drop,
            duplicate_texts: DuplicateTexts::Distinct,
            single_neighbor: SingleNeighbor::Rank,
            random: RandomReview::Python { seed: 42 },
            random_via_ranker: false,
        }
    }
}

impl ProfileOptions {
    /// The released notebook's behaviour (with `k = 5`).
    pub fn notebook() -> Self {
        ProfileOptions {
            k: 5,
            empty_docs: EmptyDocs::DropMisaligned,
            duplicate_texts: DuplicateTexts::FirstOccurrence,
            single_neighbor: SingleNeighbor::Unranked,
            random: RandomReview::Python { seed: 42 },
            random_via_ranker: true,
        }
    }
}

/// Ranks candidate reviews of a graph for a query. Implemented by [`WithRetriever`] (any
/// [`Retriever`] over `"{title} {text}"` documents) and [`CachedBm25`].
pub trait CandidateRanker {
    /// Ranks `cands` for `query`: indices into `cands` with scores, best first, at most `k`
    /// (all when `None`).
    fn rank_reviews(
        &mut self,
        graph: &UserItemGraph,
        query: &str,
        cands: &[ReviewId],
        k: Option<usize>,
    ) -> pgraphrag_core::Result<Vec<Scored<usize>>>;

    /// Whether the document of review `r` tokenizes to nothing. The default: its
    /// `"{title} {text}"` is blank.
    fn is_empty_doc(&mut self, graph: &UserItemGraph, r: ReviewId) -> bool {
        graph.review(r).entry.title_text().trim().is_empty()
    }
}

/// Adapts any [`Retriever`]: documents are `Entry::title_text()` (`f"{title} {text}"`).
#[derive(Debug, Clone)]
pub struct WithRetriever<R>(pub R);

impl<R: Retriever> CandidateRanker for WithRetriever<R> {
    fn rank_reviews(
        &mut self,
        graph: &UserItemGraph,
        query: &str,
        cands: &[ReviewId],
        k: Option<usize>,
    ) -> pgraphrag_core::Result<Vec<Scored<usize>>> {
        let docs: Vec<String> = cands
            .iter()
            .map(|&r| graph.review(r).entry.title_text())
            .collect();
        let refs: Vec<&str> = docs.iter().map(String::as_str).collect();
        self.0.rank(query, &refs, k)
    }
}

/// BM25Okapi (rank_bm25 parity, fitted on each candidate list) that tokenizes every review
/// once, interns its tokens and caches the token ids by review slot: the same scores as
/// `sparse::Bm25Retriever` (bit for bit), many times faster on a whole split.
///
/// With the usual parameters (`k1 > 0`, `0 <= b < 1`, finite `epsilon`) each candidate list
/// is fitted over token ids with reusable scratch arrays, in rank_bm25's order of operations
/// (idfs summed in first-appearance order, per-document sums in query-token order); other
/// parameters go through [`crate::sparse::Bm25Okapi`] itself. An empty query scores every
/// candidate 0 without fitting.
#[derive(Debug, Clone)]
pub struct CachedBm25<T = PgraphragTokenizer> {
    tokenizer: T,
    params: Bm25Params,
    ties: TieOrder,
    vocab: Interner,
    /// Per review slot: the doc id it was tokenized for, its token count and its distinct
    /// token ids with their counts, in first-appearance order.
    cache: Vec<Option<CachedDoc>>,
    /// Set when the vocabulary outgrew u32 ids (reported by the next ranking).
    overflow: bool,
    /// The last query and its tokens.
    query: Option<(String, Vec<String>)>,
    scratch: FitScratch,
}

/// One tokenized review of [`CachedBm25`].
#[derive(Debug, Clone)]
struct CachedDoc {
    doc_id: usize,
    len: usize,
    /// (token id, count), in order of first appearance.
    terms: Vec<(u32, u32)>,
}

static EMPTY_DOC: CachedDoc = CachedDoc {
    doc_id: usize::MAX,
    len: 0,
    terms: Vec::new(),
};

/// Per-term scratch arrays of [`CachedBm25`], indexed by token id and reset by generation
/// stamps.
#[derive(Debug, Clone, Default)]
struct FitScratch {
    gen_: u32,
    doc_gen: u32,
    /// `gen_` when the term was first seen in the current candidate list.
    seen: Vec<u32>,
    /// `gen_` (document generation) when last counted for a document.
    doc: Vec<u32>,
    df: Vec<u32>,
    tf: Vec<u32>,
    idf: Vec<f64>,
    order: Vec<u32>,
    /// `ln(i + 0.5)` for `i` in `0..len`, as rank_bm25's idf computes it.
    ln_half: Vec<f64>,
}

impl FitScratch {
    /// Sizes the arrays for `terms` token ids and starts a new candidate list.
    fn next_list(&mut self, terms: usize) -> u32 {
        if self.seen.len() < terms {
            self.seen.resize(terms, 0);
            self.doc.resize(terms, 0);
            self.df.resize(terms, 0);
            self.tf.resize(terms, 0);
            self.idf.resize(terms, 0.0);
        }
        if self.gen_ == u32::MAX {
            self.seen.iter_mut().for_each(|x| *x = 0);
            self.gen_ = 0;
        }
        self.gen_ += 1;
        self.gen_
    }

    /// Starts a new document (after `next_list` sized the arrays).
    fn next_doc(&mut self) -> u32 {
        if self.doc_gen == u32::MAX {
            self.doc.iter_mut().for_each(|x| *x = 0);
            self.doc_gen = 0;
        }
        self.doc_gen += 1;
        self.doc_gen
    }
}

impl CachedBm25<PgraphragTokenizer> {
    /// PGraphRAG's BM25: `nltk.word_tokenize(text.lower())`, k1 = 1.5, b = 0.75,
    /// epsilon = 0.25, ties as `np.argsort(scores)[::-1]`.
    pub fn pgraphrag() -> Self {
        CachedBm25::new(PgraphragTokenizer)
    }
}

impl<T: Tokenizer> CachedBm25<T> {
    /// BM25Okapi with default parameters over `tokenizer`.
    pub fn new(tokenizer: T) -> Self {
        CachedBm25 {
            tokenizer,
            params: Bm25Params::default(),
            ties: TieOrder::default(),
            vocab: Interner::default(),
            cache: Vec::new(),
            overflow: false,
            query: None,
            scratch: FitScratch::default(),
        }
    }
    /// Sets k1, b, epsilon.
    pub fn with_params(mut self, params: Bm25Params) -> Self {
        self.params = params;
        self
    }
    /// Sets the order among equal scores.
    pub fn with_tie_order(mut self, ties: TieOrder) -> Self {
        self.ties = ties;
        self
    }

    /// Tokenizes (once) every review of `graph` that is not cached yet, so that later
    /// rankings only read the cache. Optional: rankings fill the cache as they go.
    pub fn warm(&mut self, graph: &UserItemGraph) {
        for i in 0..graph.num_reviews() {
            self.tokens(graph, ReviewId(i as u32));
        }
    }

    fn is_fresh(&self, graph: &UserItemGraph, i: usize) -> bool {
        let doc_id = graph.review(ReviewId(i as u32)).entry.id;
        matches!(self.cache.get(i), Some(Some(d)) if d.doc_id == doc_id)
    }

    fn store(&mut self, graph: &UserItemGraph, i: usize, toks: &[String]) {
        if self.cache.len() <= i {
            self.cache.resize(graph.num_reviews().max(i + 1), None);
        }
        let mut terms: Vec<(u32, u32)> = Vec::new();
        for t in toks {
            match self.vocab.intern(t) {
                Some((id, _)) => match terms.iter_mut().find(|x| x.0 == id) {
                    Some(x) => x.1 += 1,
                    None => terms.push((id, 1)),
                },
                None => self.overflow = true,
            }
        }
        self.cache[i] = Some(CachedDoc {
            doc_id: graph.review(ReviewId(i as u32)).entry.id,
            len: toks.len(),
            terms,
        });
    }

    fn tokens(&mut self, graph: &UserItemGraph, r: ReviewId) -> &CachedDoc {
        let i = r.index();
        if self.cache.len() <= i {
            self.cache.resize(graph.num_reviews().max(i + 1), None);
        }
        if !self.is_fresh(graph, i) {
            let toks = self.tokenizer.tokenize(&graph.review(r).entry.title_text());
            self.store(graph, i, &toks);
        }
        match &self.cache[i] {
            Some(d) => d,
            None => &EMPTY_DOC,
        }
    }

    fn doc(&self, r: ReviewId) -> &CachedDoc {
        match self.cache.get(r.index()) {
            Some(Some(d)) => d,
            _ => &EMPTY_DOC,
        }
    }

    /// Whether the fast path reproduces rank_bm25 exactly: every length normaliser is then
    /// finite and positive and every idf finite (see `Bm25Okapi::get_scores`).
    fn fast_params(&self) -> bool {
        let Bm25Params { k1, b, epsilon } = self.params;
        k1.is_finite()
            && k1 > 0.0
            && b.is_finite()
            && (0.0..1.0).contains(&b)
            && epsilon.is_finite()
    }

    /// rank_bm25's scores of `cands` for the query tokens `q`, fitted on `cands` alone.
    fn scores_fast(&mut self, cands: &[ReviewId], q: &[String]) -> Vec<f64> {
        let n = cands.len();
        if n == 0 {
            return Vec::new();
        }
        let qids: Vec<u32> = q.iter().filter_map(|t| self.vocab.get(t)).collect();
        if qids.is_empty() {
            // Unknown query tokens add nothing: every score is +0.0 (no fit needed).
            return vec![0.0; n];
        }
        let terms = self.vocab_len();
        let Bm25Params { k1, b, epsilon } = self.params;
        let mut sc = std::mem::take(&mut self.scratch);
        let gen_ = sc.next_list(terms);
        sc.order.clear();
        // _initialize: document frequencies, terms in first-appearance order.
        let mut num_doc: u128 = 0;
        for &r in cands {
            let doc = self.doc(r);
            num_doc += doc.len as u128;
            for &(t, _) in &doc.terms {
                let t = t as usize;
                if sc.seen[t] != gen_ {
                    sc.seen[t] = gen_;
                    sc.df[t] = 0;
                    sc.order.push(t as u32);
                }
                sc.df[t] += 1;
            }
        }
        if sc.order.is_empty() {
            self.scratch = sc;
            return vec![0.0; n]; // rank_bm25 cannot fit; as the retrievers do
        }
        let avgdl = num_doc as f64 / n as f64;
        // _calc_idf in nd's order.
        let mut idf_sum = 0.0f64;
        if sc.ln_half.len() <= n {
            let from = sc.ln_half.len();
            sc.ln_half
                .extend((from..=n.max(2 * from)).map(|i| (i as f64 + 0.5).ln()));
        }
        for &t in &sc.order {
            let t = t as usize;
            let freq = sc.df[t] as usize;
            // ((n - freq) + 0.5).ln() - (freq + 0.5).ln(), from the table.
            let value = sc.ln_half[n - freq] - sc.ln_half[freq];
            sc.idf[t] = value;
            idf_sum += value;
        }
        let eps = epsilon * (idf_sum / sc.order.len() as f64);
        for &t in &sc.order {
            let v = &mut sc.idf[t as usize];
            if *v < 0.0 {
                *v = eps;
            }
        }
        // Query tokens with a non-zero idf, in query order (duplicates count).
        let qs: Vec<(u32, f64)> = qids
            .iter()
            .filter(|&&t| sc.seen[t as usize] == gen_)
            .map(|&t| (t, sc.idf[t as usize]))
            .filter(|&(_, w)| w != 0.0)
            .collect();
        let k1p1 = k1 + 1.0;
        let mut scores = vec![0.0f64; n];
        if !qs.is_empty() {
            for (d, &r) in cands.iter().enumerate() {
                let doc = self.doc(r);
                let dgen = sc.next_doc();
                for &(t, c) in &doc.terms {
                    sc.doc[t as usize] = dgen;
                    sc.tf[t as usize] = c;
                }
                let norm = k1 * ((1.0 - b) + b * doc.len as f64 / avgdl);
                let mut s = 0.0f64;
                for &(t, w) in &qs {
                    if sc.doc[t as usize] == dgen {
                        let f = f64::from(sc.tf[t as usize]);
                        s += w * (f * k1p1 / (f + norm));
                    }
                }
                scores[d] = s;
            }
        }
        self.scratch = sc;
        scores
    }

    fn vocab_len(&self) -> usize {
        self.vocab.len()
    }
}

impl<T: Tokenizer + Sync> CachedBm25<T> {
    /// [`CachedBm25::warm`] with the tokenizing spread over `threads` threads. Token ids are
    /// assigned afterwards in review order, so the cache does not depend on `threads`.
    pub fn warm_parallel(&mut self, graph: &UserItemGraph, threads: usize) {
        let missing: Vec<usize> = (0..graph.num_reviews())
            .filter(|&i| !self.is_fresh(graph, i))
            .collect();
        let threads = threads.clamp(1, missing.len().max(1));
        let per = missing.len().div_ceil(threads).max(1);
        let tokenizer = &self.tokenizer;
        let toks: Vec<Vec<Vec<String>>> = std::thread::scope(|sc| {
            let handles: Vec<_> = missing
                .chunks(per)
                .map(|chunk| {
                    sc.spawn(move || {
                        chunk
                            .iter()
                            .map(|&i| {
                                let e = &graph.review(ReviewId(i as u32)).entry;
                                tokenizer.tokenize(&e.title_text())
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect()
        });
        for (&i, t) in missing.iter().zip(toks.iter().flatten()) {
            self.store(graph, i, t);
        }
    }
}

impl<T: Tokenizer> CandidateRanker for CachedBm25<T> {
    fn rank_reviews(
        &mut self,
        graph: &UserItemGraph,
        query: &str,
        cands: &[ReviewId],
        k: Option<usize>,
    ) -> pgraphrag_core::Result<Vec<Scored<usize>>> {
        for &r in cands {
            self.tokens(graph, r);
        }
        if self.overflow {
            return Err(Error::InvalidInput(
                "BM25 vocabulary exceeds 2^32 - 1 distinct terms".into(),
            )
            .into());
        }
        let q = match self.query.take() {
            Some((s, t)) if s == query => (s, t),
            _ => (query.to_string(), self.tokenizer.tokenize(query)),
        };
        let scores = if self.fast_params() {
            self.scores_fast(cands, &q.1)
        } else {
            // Other parameters: rank_bm25's own arithmetic on the (re-)tokenized documents.
            let docs: Vec<Vec<String>> = cands
                .iter()
                .map(|&r| self.tokenizer.tokenize(&graph.review(r).entry.title_text()))
                .collect();
            match crate::sparse::Bm25Okapi::fit(&docs, self.params) {
                Ok(bm25) => bm25.get_scores(&q.1),
                Err(Error::EmptyCorpus) => Vec::new(),
                Err(Error::EmptyVocabulary { documents }) => vec![0.0; documents],
                Err(e) => return Err(e.into()),
            }
        };
        self.query = Some(q);
        if let Some((index, &score)) = scores.iter().enumerate().find(|(_, s)| !s.is_finite()) {
            return Err(Error::NonFiniteScore {
                index,
                score,
                what: format!("BM25Okapi with {:?}", self.params),
            }
            .into());
        }
        Ok(top_k(&scores, k, self.ties))
    }

    fn is_empty_doc(&mut self, graph: &UserItemGraph, r: ReviewId) -> bool {
        self.tokens(graph, r).len == 0
    }
}

/// Whether two reviews have the same `f"{title} {text}"` document, without building it.
fn same_title_text(a: &pgraphrag_core::Entry, b: &pgraphrag_core::Entry) -> bool {
    fn parts(e: &pgraphrag_core::Entry) -> (&str, &str) {
        (
            e.title.as_deref().unwrap_or("None"),
            e.text.as_deref().unwrap_or("None"),
        )
    }
    let (at, ax) = parts(a);
    let (bt, bx) = parts(b);
    if at.len() + ax.len() != bt.len() + bx.len() {
        return false;
    }
    let ai = at.bytes().chain(std::iter::once(b' ')).chain(ax.bytes());
    let bi = bt.bytes().chain(std::iter::once(b' ')).chain(bx.bytes());
    ai.eq(bi)
}

/// One ranked review: its graph slot and score (`None` when it was not scored, e.g. the
/// notebook's single unranked neighbour).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    /// The review.
    pub review: ReviewId,
    /// Its score, if ranked.
    pub score: Option<f64>,
}

/// The ranked profile of one target.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RankedProfile {
    /// The user's reviews of other items, best first, at most `k`.
    pub user: Vec<Hit>,
    /// Other users' reviews of the target item, best first, at most `k`.
    pub neighbors: Vec<Hit>,
    /// A random review of a random other user.
    pub random: Option<ReviewId>,
}

/// Ranks PGraphRAG profiles; see the [module documentation](self).
#[derive(Debug, Clone)]
pub struct ProfileRanker<R> {
    ranker: R,
    opts: ProfileOptions,
    rng: Option<PyRandom>,
}

impl<R: CandidateRanker> ProfileRanker<R> {
    /// A ranker with `opts`; the random generator is seeded here, once.
    pub fn new(ranker: R, opts: ProfileOptions) -> Self {
        let rng = match opts.random {
            RandomReview::Off => None,
            RandomReview::Python { seed } => Some(PyRandom::new(seed)),
        };
        ProfileRanker { ranker, opts, rng }
    }

    /// The options.
    pub fn options(&self) -> &ProfileOptions {
        &self.opts
    }

    /// The underlying candidate ranker.
    pub fn ranker_mut(&mut self) -> &mut R {
        &mut self.ranker
    }

    /// Ranks `cands` with the configured quirks (empty documents, duplicate texts), keeping
    /// at most `k` (all when `None`).
    pub fn rank_list(
        &mut self,
        graph: &UserItemGraph,
        query: &str,
        cands: &[ReviewId],
        k: Option<usize>,
    ) -> pgraphrag_core::Result<Vec<Hit>> {
        if cands.is_empty() {
            return Ok(Vec::new());
        }
        let kept: Vec<usize> = match self.opts.empty_docs {
            EmptyDocs::Keep => (0..cands.len()).collect(),
            EmptyDocs::Drop | EmptyDocs::DropMisaligned => (0..cands.len())
                .filter(|&i| !self.ranker.is_empty_doc(graph, cands[i]))
                .collect(),
        };
        if kept.is_empty() {
            return Ok(Vec::new());
        }
        let sub: Vec<ReviewId> = kept.iter().map(|&i| cands[i]).collect();
        let ranked = self.ranker.rank_reviews(graph, query, &sub, k)?;
        let mut out = Vec::with_capacity(ranked.len());
        for s in ranked {
            if s.item >= sub.len() {
                return Err(pgraphrag_core::Error::InvalidInput(format!(
                    "the retriever returned index {} for {} documents",
                    s.item,
                    sub.len()
                )));
            }
            let mut pos = match self.opts.empty_docs {
                EmptyDocs::DropMisaligned => s.item,
                _ => kept[s.item],
            };
            if self.opts.duplicate_texts == DuplicateTexts::FirstOccurrence {
                let e = &graph.review(cands[pos]).entry;
                pos = cands[..pos]
                    .iter()
                    .position(|&r| same_title_text(&graph.review(r).entry, e))
                    .unwrap_or(pos);
            }
            out.push(Hit {
                review: cands[pos],
                score: Some(s.score),
            });
        }
        Ok(out)
    }

    /// Ranks the profile of `user` for the target `item` against `query` (see [`Task::query`]).
    pub fn rank(
        &mut self,
        graph: &UserItemGraph,
        user: &str,
        item: &ItemId,
        query: &str,
    ) -> Result<RankedProfile> {
        let k = Some(self.opts.k);
        let wrap = |side: &'static str| {
            move |source| Error::Profile {
                side,
                user: user.to_string(),
                item: item.to_string(),
                source,
            }
        };
        let mine = graph.profile(user, item, Scope::User);
        let user_hits = self
            .rank_list(graph, query, &mine, k)
            .map_err(wrap("user"))?;
        let theirs = graph.profile(user, item, Scope::Neighbors);
        let neighbors =
            if theirs.len() == 1 && self.opts.single_neighbor == SingleNeighbor::Unranked {
                vec![Hit {
                    review: theirs[0],
                    score: None,
                }]
            } else {
                self.rank_list(graph, query, &theirs, k)
                    .map_err(wrap("neighbour"))?
            };
        let random = self.random_review(graph, user).map_err(wrap("random"))?;
        Ok(RankedProfile {
            user: user_hits,
            neighbors,
            random,
        })
    }

    fn random_review(
        &mut self,
        graph: &UserItemGraph,
        user: &str,
    ) -> pgraphrag_core::Result<Option<ReviewId>> {
        if self.rng.is_none() {
            return Ok(None);
        }
        // The notebook's `[uid for uid in user_list if uid != user_id]`, indexed without
        // materialising it.
        let own = graph.user_position(user);
        let n_others = graph.num_users() - usize::from(own.is_some());
        let Some(rng) = self.rng.as_mut() else {
            return Ok(None);
        };
        let Some(i) = rng.choice(n_others) else {
            return Ok(None);
        };
        let i = match own {
            Some(p) if i >= p => i + 1,
            _ => i,
        };
        let Some(other) = graph.user_at(i) else {
            return Ok(None);
        };
        let reviews = graph.user_reviews(other);
        let pool: Vec<ReviewId> = if self.opts.random_via_ranker {
            self.rank_list(graph, "", &reviews, None)?
                .into_iter()
                .map(|h| h.review)
                .collect()
        } else {
            reviews
        };
        let Some(rng) = self.rng.as_mut() else {
            return Ok(None);
        };
        Ok(rng.choice(pool.len()).map(|j| pool[j]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pgraphrag_core::Entry;
    use pgraphrag_graph::GraphOptions;

    /// Scores each document by its length, ties in input order.
    struct ByLen;
    impl Retriever for ByLen {
        fn rank(
            &self,
            _q: &str,
            docs: &[&str],
            k: Option<usize>,
        ) -> pgraphrag_core::Result<Vec<Scored<usize>>> {
            Ok(pgraphrag_core::top_k_scores(
                docs.iter().map(|d| d.len() as f64).collect(),
                k,
            ))
        }
    }

    fn graph(docs: &[(&str, &str, &str, &str)]) -> UserItemGraph {
        let mut g = UserItemGraph::new(GraphOptions::default());
        for (i, (u, it, t, x)) in docs.iter().enumerate() {
            let f = |s: &str| (!s.is_empty()).then(|| s.to_string());
            g.insert(Entry {
                id: i,
                author: u.to_string(),
                item: it.to_string(),
                title: f(t),
                text: f(x),
                ..Default::default()
            });
        }
        g
    }

    #[test]
    fn misalignment_and_first_occurrence() {
        // Neighbours of p for user a: b (blank), c, d (same text as c), e (longest).
        let g = graph(&[
            ("a", "p", "q", "q"),
            ("b", "p", " ", " "),
            ("c", "p", "same", "text"),
            ("d", "p", "same", "text"),
            ("e", "p", "a much longer", "document here"),
        ]);
        let p = ItemId::from("p");
        let mut clean = ProfileRanker::new(
            WithRetriever(ByLen),
            ProfileOptions {
                random: RandomReview::Off,
                ..Default::default()
            },
        );
        let r = clean.rank(&g, "a", &p, "q").unwrap();
        let ids: Vec<usize> = r
            .neighbors
            .iter()
            .map(|h| g.review(h.review).entry.id)
            .collect();
        assert_eq!(ids, vec![4, 2, 3]);
        let mut nb = ProfileRanker::new(
            WithRetriever(ByLen),
            ProfileOptions {
                random: RandomReview::Off,
                ..ProfileOptions::notebook()
            },
        );
        let r = nb.rank(&g, "a", &p, "q").unwrap();
        // filtered docs [c, d, e] rank e(2), c(0), d(1); positions index the unfiltered
        // [b, c, d, e]: 2 -> d -> first occurrence c; 0 -> b; 1 -> c.
        let ids: Vec<usize> = r
            .neighbors
            .iter()
            .map(|h| g.review(h.review).entry.id)
            .collect();
        assert_eq!(ids, vec![2, 1, 2]);
    }

    #[test]
    fn single_neighbor_unranked_and_random_draws() {
        let g = graph(&[
            ("a", "p", "t", "x"),
            ("b", "p", "t2", "x2"),
            ("b", "q", "t3", "x3"),
        ]);
        let mut nb = ProfileRanker::new(WithRetriever(ByLen), ProfileOptions::notebook());
        let r = nb.rank(&g, "a", &ItemId::from("p"), "t").unwrap();
        assert_eq!(r.neighbors.len(), 1);
        assert_eq!(r.neighbors[0].score, None);
        assert!(r.user.is_empty());
        let rr = r.random.unwrap();
        assert_eq!(g.review(rr).entry.author, "b");
    }
}
