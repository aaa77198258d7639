//! The documents of a [`super::ProfileIndex`]: what a caller writes ([`Document`]) and what
//! the index keeps with everything derived from it ([`StoredDoc`]).

use std::sync::Arc;

use pgraphrag_core::{DocText, Entry, ItemId, RankedEntry};

use super::options::IndexOptions;
use crate::{Error, Result};

/// A document to create or replace: one review, post or message by `user`, identified by
/// `id` within that user's documents.
///
/// ```
/// use pgraphrag_retrieval::live::Document;
/// let d = Document {
///     user: "ann".into(),
///     id: "r1".into(),
///     item: Some("soap".into()),
///     text: "Smells of lavender".into(),
///     rating: Some(5.0),
///     ..Default::default()
/// };
/// assert_eq!(d.title, None);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Document {
    /// The author.
    pub user: String,
    /// The document's id among the user's documents.
    pub id: String,
    /// What it is about (a product, a hotel); `None` for documents about no item (a user's
    /// own posts), which are never anyone's neighbours.
    pub item: Option<String>,
    /// A title, if any.
    pub title: Option<String>,
    /// The body.
    pub text: String,
    /// A rating, if any: a finite number in the index's range ([`IndexOptions::ratings`]).
    pub rating: Option<f64>,
    /// Seconds since the Unix epoch, if known.
    pub time: Option<i64>,
}

impl Document {
    /// Who and which, for error messages.
    pub(crate) fn describe(&self) -> String {
        format!("document {:?} of user {:?}", self.id, self.user)
    }

    /// Checks every field; the first problem found is the error.
    pub(crate) fn validate(&self, opts: &IndexOptions) -> Result<()> {
        let empty = |field| Error::EmptyField {
            field,
            what: self.describe(),
        };
        if self.user.trim().is_empty() {
            return Err(empty("user"));
        }
        if self.id.trim().is_empty() {
            return Err(empty("id"));
        }
        if self.item.as_deref().is_some_and(|i| i.trim().is_empty()) {
            return Err(empty("item"));
        }
        if self.document().trim().is_empty() {
            return Err(empty("text"));
        }
        if let Some(value) = self.rating {
            let (min, max) = opts.ratings.unwrap_or((f64::NEG_INFINITY, f64::INFINITY));
            if !(value.is_finite() && value >= min && value <= max) {
                return Err(Error::BadRating {
                    user: self.user.clone(),
                    doc: self.id.clone(),
                    value,
                    min,
                    max,
                });
            }
        }
        Ok(())
    }

    /// The text retrievers see: title and text, missing parts left out ([`DocText::Clean`]).
    pub(crate) fn document(&self) -> String {
        DocText::Clean.render(self.title.as_deref(), Some(&self.text))
    }
}

/// A document as the index keeps it: the caller's fields, its place in the index's order, and
/// what was derived from exactly this content (its BM25 tokens, its embedding). An update
/// replaces the whole value, so nothing derived from superseded text survives it.
#[derive(Debug)]
pub struct StoredDoc {
    pub(crate) user: Arc<str>,
    pub(crate) id: Arc<str>,
    pub(crate) item: Option<Arc<str>>,
    pub(crate) title: Option<String>,
    pub(crate) text: String,
    pub(crate) rating: Option<f64>,
    pub(crate) time: Option<i64>,
    /// Position in the index's order: set when the document is first created and kept by
    /// updates (profiles list documents in this order, as the graph lists reviews by slot).
    pub(crate) seq: u64,
    /// Token count.
    pub(crate) len: usize,
    /// (token id, count), in order of first appearance.
    pub(crate) terms: Box<[(u32, u32)]>,
    /// The document's embedding, when the index has an encoder.
    pub(crate) embedding: Option<Box<[f32]>>,
}

impl StoredDoc {
    /// The author.
    pub fn user(&self) -> &str {
        &self.user
    }
    /// The document id.
    pub fn id(&self) -> &str {
        &self.id
    }
    /// The item, if any.
    pub fn item(&self) -> Option<&str> {
        self.item.as_deref()
    }
    /// The title, if any.
    pub fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }
    /// The body.
    pub fn text(&self) -> &str {
        &self.text
    }
    /// The rating, if any.
    pub fn rating(&self) -> Option<f64> {
        self.rating
    }
    /// The time, if any.
    pub fn time(&self) -> Option<i64> {
        self.time
    }
    /// The position in the index's order (creation order; updates keep it).
    pub fn seq(&self) -> u64 {
        self.seq
    }
    /// How many BM25 tokens the document has.
    pub fn token_count(&self) -> usize {
        self.len
    }
    /// The embedding, when the index has an encoder.
    pub fn embedding(&self) -> Option<&[f32]> {
        self.embedding.as_deref()
    }

    /// The document as an [`Entry`] (for prompts): `id` is its [`StoredDoc::seq`], `item` the
    /// item or the empty string.
    pub fn to_entry(&self) -> Entry {
        Entry {
            id: self.seq as usize,
            author: self.user.to_string(),
            item: self.item.as_deref().unwrap_or_default().to_string(),
            title: self.title.clone(),
            text: Some(self.text.clone()),
            rating: self.rating,
            time: self.time,
        }
    }

    /// The document as a scored [`RankedEntry`].
    pub fn to_ranked(&self, score: f64) -> RankedEntry {
        let entry = self.to_entry();
        let item = ItemId::Str(entry.item.clone());
        RankedEntry {
            entry,
            item,
            score: Some(score),
        }
    }
}

/// A validated document with its tokens (and embedding), made before the writer's lock is
/// taken so that the slow work runs outside it.
#[derive(Debug)]
pub(crate) struct Prepared {
    pub(crate) doc: Document,
    pub(crate) tokens: Vec<String>,
    pub(crate) embedding: Option<Box<[f32]>>,
}
