//! Named recipes: every preset a run needs, chosen together.
//!
//! Reproducing the released PGraphRAG code takes five presets in five crates (the graph's
//! duplicate handling, the product-id policy, the profile ranker's quirks, numpy's tie order,
//! and `master_eval.py`'s extraction). A [`Recipe`] hands out all of them, so a caller says
//! once which semantics it wants. The quirks are described in `docs/ranking.md` ("The
//! notebook's quirks") and `docs/bench.md`.

use pgraphrag_core::DocText;
use pgraphrag_data::{IdPolicy, Split};
use pgraphrag_graph::{Duplicates, GraphOptions, UserItemGraph};
use pgraphrag_prompt::extract::ExtractOptions;
use pgraphrag_retrieval::profile::{
    CachedBm25, DuplicateTexts, EmptyDocs, ProfileOptions, SingleNeighbor,
};
use pgraphrag_retrieval::sparse::{Bm25Builder, TieOrder};

/// Which semantics a run follows.
///
/// ```
/// use pgraphrag_eval::recipe::Recipe;
/// use pgraphrag_data::IdPolicy;
/// use pgraphrag_retrieval::sparse::TieOrder;
/// let r = Recipe::ReleasedCode;
/// assert_eq!(r.id_policy(), IdPolicy::KeepJsonType);
/// assert_eq!(r.tie_order(), TieOrder::NumpyReversedArgsort);
/// assert!(r.extract_options().reference_typo);
/// assert_eq!(Recipe::Clean.tie_order(), TieOrder::InputOrder);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Recipe {
    /// The released notebook and scripts, quirks included, so files are drop-in comparable
    /// with the released ones (`pgraphrag rank` and `pgraphrag bench` by default):
    ///
    /// * graph: a user's repeated review of one product overwrites the earlier one in place
    ///   (the notebook's dict), [`GraphOptions::notebook`];
    /// * product ids keep their JSON type (`123` ≠ `"123"`), [`IdPolicy::KeepJsonType`];
    /// * profile ranking, [`ProfileOptions::notebook`]: documents that tokenize to nothing are
    ///   dropped with the notebook's index misalignment, duplicate texts map to their first
    ///   occurrence, a single neighbour is returned unranked, the random review's candidates
    ///   are ranked against the empty query first;
    /// * ties: `np.argsort(scores)[::-1]` (numpy's portable introsort, ported exactly),
    ///   [`TieOrder::NumpyReversedArgsort`];
    /// * extraction: `master_eval.py`'s never-matching `'**Review title:** ""'` check,
    ///   [`ExtractOptions::reference`];
    /// * documents: `f"{title} {text}"` with `None` for a missing field, [`DocText::Notebook`].
    #[default]
    ReleasedCode,
    /// The library's clean choices (`pgraphrag rank --clean`): every review kept, ids as
    /// strings, empty documents dropped without misalignment, duplicate texts distinct, a single
    /// neighbour ranked, ties in input order, the fixed extraction, documents without `None`
    /// placeholders ([`DocText::Clean`]).
    Clean,
}

impl Recipe {
    /// The recipe of a `clean` flag (`--clean`, a spec's `clean` field): [`Recipe::Clean`]
    /// when set, the released code's otherwise.
    ///
    /// ```
    /// use pgraphrag_eval::Recipe;
    /// assert_eq!(Recipe::from_clean(true), Recipe::Clean);
    /// assert_eq!(Recipe::from_clean(false), Recipe::ReleasedCode);
    /// ```
    pub fn from_clean(clean: bool) -> Recipe {
        if clean {
            Recipe::Clean
        } else {
            Recipe::ReleasedCode
        }
    }

    /// The user-item graph's options.
    pub fn graph_options(self) -> GraphOptions {
        match self {
            Recipe::ReleasedCode => GraphOptions::notebook(),
            Recipe::Clean => GraphOptions {
                duplicates: Duplicates::KeepAll,
            },
        }
    }

    /// How product ids are compared.
    pub fn id_policy(self) -> IdPolicy {
        match self {
            Recipe::ReleasedCode => IdPolicy::KeepJsonType,
            Recipe::Clean => IdPolicy::Normalize,
        }
    }

    /// The profile ranker's options for BM25 (and the other sparse rankers), `k = 5`.
    pub fn profile_options(self) -> ProfileOptions {
        match self {
            Recipe::ReleasedCode => ProfileOptions::notebook(),
            Recipe::Clean => ProfileOptions::default(),
        }
    }

    /// The profile ranker's options for dense retrieval (Contriever): the notebook's dense
    /// path neither drops empty documents nor maps duplicates, and returns a single neighbour
    /// unranked; the clean recipe drops empty documents and ranks a single neighbour.
    pub fn dense_profile_options(self) -> ProfileOptions {
        let mut o = self.profile_options();
        o.duplicate_texts = DuplicateTexts::Distinct;
        match self {
            Recipe::ReleasedCode => {
                o.empty_docs = EmptyDocs::Keep;
                o.single_neighbor = SingleNeighbor::Unranked;
            }
            Recipe::Clean => {
                o.empty_docs = EmptyDocs::Drop;
                o.single_neighbor = SingleNeighbor::Rank;
            }
        }
        o
    }

    /// The order among equal retrieval scores.
    pub fn tie_order(self) -> TieOrder {
        match self {
            Recipe::ReleasedCode => TieOrder::NumpyReversedArgsort,
            Recipe::Clean => TieOrder::InputOrder,
        }
    }

    /// How answers are extracted from raw generations.
    pub fn extract_options(self) -> ExtractOptions {
        match self {
            Recipe::ReleasedCode => ExtractOptions::reference(),
            Recipe::Clean => ExtractOptions::default(),
        }
    }

    /// How a review's title and text make its document: the notebook's `f"{title} {text}"`
    /// (a missing field is the token `None`) or the clean join without placeholders.
    pub fn doc_text(self) -> DocText {
        match self {
            Recipe::ReleasedCode => DocText::Notebook,
            Recipe::Clean => DocText::Clean,
        }
    }

    /// PGraphRAG's BM25Okapi (nltk tokens, per-list fit) with this recipe's tie order and
    /// document text.
    pub fn bm25(self) -> CachedBm25 {
        CachedBm25::pgraphrag()
            .with_tie_order(self.tie_order())
            .with_doc_text(self.doc_text())
    }

    /// The user-item graph of a whole split under this recipe.
    pub fn graph(self, split: &Split) -> UserItemGraph {
        split.to_graph(self.graph_options(), self.id_policy())
    }
}
