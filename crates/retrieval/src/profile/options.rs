//! The notebook's quirks as options of a [`super::ProfileRanker`].

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

/// Options of a [`ProfileRanker`](super::ProfileRanker).
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
