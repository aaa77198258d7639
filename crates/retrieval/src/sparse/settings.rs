//! [`Bm25Settings`] and [`Bm25Builder`]: the parameters and tie order every BM25 ranker of this
//! crate is configured by, and their builder methods, written once.

use pgraphrag_core::TieOrder;

/// What a BM25 ranker is configured by: its parameters `P` (`Bm25Params` for BM25Okapi,
/// [`LuceneParams`] for Lucene's BM25) and the order among equal scores.
///
/// ```
/// use pgraphrag_retrieval::sparse::{Bm25Params, Bm25Settings, TieOrder};
/// let s = Bm25Settings::<Bm25Params>::default();
/// assert_eq!((s.params.k1, s.ties), (1.5, TieOrder::NumpyReversedArgsort));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Bm25Settings<P> {
    /// The BM25 parameters.
    pub params: P,
    /// The order among equal scores.
    pub ties: TieOrder,
}

/// Lucene BM25's parameters (`BM25Similarity`): `k1 = 1.2`, `b = 0.75` by default.
///
/// ```
/// let p = pgraphrag_retrieval::sparse::LuceneParams::default();
/// assert_eq!((p.k1, p.b), (1.2, 0.75));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LuceneParams {
    /// Term-frequency saturation.
    pub k1: f32,
    /// Length normalisation.
    pub b: f32,
}

impl Default for LuceneParams {
    fn default() -> Self {
        LuceneParams { k1: 1.2, b: 0.75 }
    }
}

/// The builder methods of the BM25 rankers (`Bm25Retriever`, `Bm25Lucene`,
/// `profile::CachedBm25`): each gives access to its [`Bm25Settings`], the trait provides the
/// rest.
///
/// ```
/// use pgraphrag_retrieval::sparse::{Bm25Builder, Bm25Params, Bm25Retriever, TieOrder};
/// let p = Bm25Params { k1: 1.2, ..Bm25Params::default() };
/// let r = Bm25Retriever::lamp().with_params(p).with_tie_order(TieOrder::InputOrder);
/// assert_eq!(r.params(), p);
/// assert_eq!(r.settings().ties, TieOrder::InputOrder);
/// ```
pub trait Bm25Builder: Sized {
    /// The parameters' type.
    type Params: Copy;

    /// The settings.
    fn settings(&self) -> &Bm25Settings<Self::Params>;

    /// The settings, to change.
    fn settings_mut(&mut self) -> &mut Bm25Settings<Self::Params>;

    /// Replaces the BM25 parameters.
    fn with_params(mut self, params: Self::Params) -> Self {
        self.settings_mut().params = params;
        self
    }

    /// Replaces the order among equal scores.
    fn with_tie_order(mut self, ties: TieOrder) -> Self {
        self.settings_mut().ties = ties;
        self
    }

    /// The BM25 parameters.
    fn params(&self) -> Self::Params {
        self.settings().params
    }
}
