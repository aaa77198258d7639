//! [`ProfileIndex`]: the shareable index, its options and its writes.

use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;
use pgraphrag_core::Encoder;

use super::doc::{Document, Prepared};
use super::options::IndexOptions;
use super::snapshot::{Counts, Snapshot};
use crate::sparse::fit::fast_params;
use crate::sparse::{PgraphragTokenizer, Tokenizer};
use crate::{Error, Result};

/// Documents validated, tokenized and embedded by [`ProfileIndex::stage`], ready for
/// [`ProfileIndex::commit`].
#[derive(Debug)]
pub struct Staged(Vec<Prepared>);

impl Staged {
    /// How many documents.
    pub fn len(&self) -> usize {
        self.0.len()
    }
    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// What a write did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    /// The generation that holds the write: a read at this generation or later sees it.
    pub generation: u64,
    /// Documents created.
    pub created: usize,
    /// Documents replaced.
    pub replaced: usize,
}

/// What [`ProfileIndex::remove_user`] erased.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UserRemoval {
    /// The generation without the user.
    pub generation: u64,
    /// Documents erased.
    pub documents: usize,
    /// Token lists erased (one per document; tokens no other document has leave the
    /// vocabulary).
    pub token_lists: usize,
    /// Embeddings erased.
    pub embeddings: usize,
}

/// A live, shareable index of user profiles: PGraphRAG's user and neighbour scopes over
/// documents that can be created, replaced and deleted while any number of threads read.
///
/// * Reads ([`ProfileIndex::context`], [`ProfileIndex::snapshot`]) take `&self`, never wait
///   for a writer, and see one consistent [`Snapshot`]: the last one published.
/// * Writes take `&self` too and are serialised among themselves. A write tokenizes and embeds
///   its documents before it takes the writer's lock, then builds the next snapshot beside
///   the published one (persistent maps: only the changed paths are copied) and publishes
///   it with one atomic pointer swap. The write is visible to every read that starts after
///   the write returns.
/// * Everything derived from a document (tokens, embedding) lives in the stored document, so
///   an update or delete can never leave a stale derivative behind.
///
/// See `docs/online.md` for the design and its measurements.
///
/// ```
/// use pgraphrag_retrieval::live::{ContextRequest, Document, ProfileIndex};
/// use pgraphrag_graph::Scope;
/// let index = ProfileIndex::default();
/// let doc = |user: &str, id: &str, item: &str, text: &str| Document {
///     user: user.into(), id: id.into(), item: Some(item.into()), text: text.into(), ..Default::default()
/// };
/// index.upsert_batch(vec![
///     doc("ann", "1", "soap", "Smells of lavender"),
///     doc("ann", "2", "shampoo", "Lavender scent, soft hair"),
///     doc("bob", "1", "soap", "Lavender soap, lasts long"),
///     doc("cat", "1", "soap", "Left my skin dry"),
///     doc("dan", "1", "soap", "It does the job"),
///     doc("eve", "1", "soap", "Too small"),
///     doc("fay", "1", "soap", "Nice box"),
/// ]).unwrap();
/// let req = ContextRequest { user: "ann".into(), item: Some("soap".into()), query: "lavender".into(), k: 1, ..Default::default() };
/// let ctx = index.context(&req).unwrap();
/// assert_eq!(ctx.user[0].doc.id(), "2");
/// assert_eq!(ctx.neighbors[0].doc.user(), "bob");
/// // An edit is answered at once, from the new text.
/// index.upsert(doc("cat", "1", "soap", "Lavender lavender lavender")).unwrap();
/// assert_eq!(index.context(&req).unwrap().neighbors[0].doc.user(), "cat");
/// ```
pub struct ProfileIndex<T = PgraphragTokenizer> {
    pub(crate) opts: IndexOptions,
    pub(crate) tokenizer: T,
    pub(crate) encoder: Option<Arc<dyn Encoder + Send + Sync>>,
    published: ArcSwap<Snapshot>,
    /// Serialises writers, and holds what only the writer needs.
    writer: Mutex<Counts>,
}

impl<T> std::fmt::Debug for ProfileIndex<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.published.load();
        f.debug_struct("ProfileIndex")
            .field("opts", &self.opts)
            .field("encoder", &self.encoder.is_some())
            .field("generation", &s.generation())
            .field("documents", &s.num_documents())
            .finish()
    }
}

impl Default for ProfileIndex<PgraphragTokenizer> {
    /// An empty index with [`IndexOptions::default`], PGraphRAG's BM25 tokenizer
    /// (`nltk.word_tokenize(text.lower())`) and no encoder.
    fn default() -> Self {
        ProfileIndex::with_tokenizer(PgraphragTokenizer, IndexOptions::default())
            .expect("the default options are valid")
    }
}

impl ProfileIndex<PgraphragTokenizer> {
    /// An empty index with PGraphRAG's BM25 tokenizer; errors on unusable options.
    pub fn new(opts: IndexOptions) -> Result<Self> {
        ProfileIndex::with_tokenizer(PgraphragTokenizer, opts)
    }
}

impl<T: Tokenizer> ProfileIndex<T> {
    /// An empty index over any BM25 tokenizer; errors on unusable options.
    pub fn with_tokenizer(tokenizer: T, opts: IndexOptions) -> Result<Self> {
        if !fast_params(opts.bm25) {
            return Err(Error::InvalidInput(format!(
                "the live index needs BM25 parameters with k1 > 0, 0 <= b < 1 and a finite \
                 epsilon; got {:?}",
                opts.bm25
            )));
        }
        if let Some((min, max)) = opts.ratings
            && !(min.is_finite() && max.is_finite() && min <= max)
        {
            return Err(Error::InvalidInput(format!(
                "the rating range [{min}, {max}] must be finite and not empty"
            )));
        }
        if !(opts.rrf_k.is_finite() && opts.rrf_k >= 0.0) {
            return Err(Error::InvalidInput(format!(
                "RRF k must be finite and non-negative, got {}",
                opts.rrf_k
            )));
        }
        Ok(ProfileIndex {
            opts,
            tokenizer,
            encoder: None,
            published: ArcSwap::from_pointee(Snapshot::default()),
            writer: Mutex::new(Counts::default()),
        })
    }

    /// Adds a dense encoder: every document written from now on is embedded, and the dense
    /// and hybrid retrievers work. Only on an empty index (documents written before would
    /// have no embedding).
    pub fn with_encoder(self, encoder: Arc<dyn Encoder + Send + Sync>) -> Result<Self> {
        if self.published.load().num_documents() > 0 {
            return Err(Error::InvalidInput(
                "an encoder can only be added to an empty index".into(),
            ));
        }
        Ok(ProfileIndex {
            encoder: Some(encoder),
            ..self
        })
    }

    /// The options.
    pub fn options(&self) -> &IndexOptions {
        &self.opts
    }

    /// Whether dense and hybrid retrieval are available.
    pub fn has_encoder(&self) -> bool {
        self.encoder.is_some()
    }

    /// The snapshot every read now starts from (cheap: one reference count).
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.published.load_full()
    }

    /// Creates `doc`, or replaces the user's document with the same id (same position in
    /// the index's order, new content). Idempotent: writing the same document twice leaves
    /// the same index (one more generation).
    pub fn upsert(&self, doc: Document) -> Result<Written> {
        self.upsert_batch(vec![doc])
    }

    /// Creates or replaces every document of `docs` in one generation: all of them or, on
    /// any invalid document, none. The same as [`ProfileIndex::commit`] of
    /// [`ProfileIndex::stage`].
    pub fn upsert_batch(&self, docs: Vec<Document>) -> Result<Written> {
        self.commit(self.stage(docs)?)
    }

    /// Checks one document as a write would, changing nothing.
    pub fn check(&self, doc: &Document) -> Result<()> {
        doc.validate(&self.opts)
    }

    /// The first half of a write: validates `docs`, tokenizes and embeds them, and changes
    /// nothing. A caller that must make the write durable elsewhere first (a database) stages,
    /// stores, then [`commit`](ProfileIndex::commit)s, so that an invalid document or a
    /// failing encoder is refused before anything is stored.
    pub fn stage(&self, docs: Vec<Document>) -> Result<Staged> {
        let mut seen = std::collections::HashSet::new();
        for d in &docs {
            d.validate(&self.opts)?;
            if !seen.insert((d.user.as_str(), d.id.as_str())) {
                return Err(Error::DuplicateDocument {
                    user: d.user.clone(),
                    doc: d.id.clone(),
                });
            }
        }
        drop(seen);
        Ok(Staged(self.prepare(docs)?))
    }

    /// The second half of a write: publishes the staged documents in one generation. Fails
    /// only when the encoder returned vectors of another dimension than the index holds (an
    /// encoder that declares its dimension, as `BertEncoder` does, is checked when staging)
    /// or a writer panicked earlier.
    pub fn commit(&self, staged: Staged) -> Result<Written> {
        let prepared = staged.0;
        let mut counts = self.lock()?;
        let mut next = Snapshot::clone(&self.published.load());
        for p in &prepared {
            if let Some(e) = &p.embedding {
                match next.dim {
                    Some(d) if d != e.len() => {
                        return Err(Error::Encode {
                            what: p.doc.describe(),
                            message: format!(
                                "the encoder returned a {}-dimensional vector; the index holds \
                                 {d}-dimensional ones",
                                e.len()
                            ),
                        });
                    }
                    Some(_) => {}
                    None => next.dim = Some(e.len()),
                }
            }
        }
        let (mut created, mut replaced) = (0, 0);
        for p in prepared {
            if next.upsert(&mut counts, p) {
                created += 1;
            } else {
                replaced += 1;
            }
        }
        let touched = next.bump();
        let generation = next.generation;
        self.publish(next, &touched);
        Ok(Written {
            generation,
            created,
            replaced,
        })
    }

    /// Deletes the document `id` of `user`; its tokens and embedding go with it.
    pub fn remove(&self, user: &str, id: &str) -> Result<u64> {
        let mut counts = self.lock()?;
        let mut next = Snapshot::clone(&self.published.load());
        let doc = next
            .document(user, id)
            .cloned()
            .ok_or_else(|| Error::UnknownDocument {
                user: user.to_string(),
                doc: id.to_string(),
            })?;
        next.remove(&mut counts, &doc);
        let touched = next.bump();
        let generation = next.generation;
        self.publish(next, &touched);
        Ok(generation)
    }

    /// Deletes every document of `user` and everything derived from them (tokens,
    /// embeddings; tokens no other document has leave the vocabulary).
    pub fn remove_user(&self, user: &str) -> Result<UserRemoval> {
        let mut counts = self.lock()?;
        let mut next = Snapshot::clone(&self.published.load());
        let docs = next.user_documents(user).to_vec();
        if docs.is_empty() {
            return Err(Error::UnknownUser {
                user: user.to_string(),
            });
        }
        let embeddings = docs.iter().filter(|d| d.embedding.is_some()).count();
        for d in &docs {
            next.remove(&mut counts, d);
        }
        let touched = next.bump();
        let generation = next.generation;
        self.publish(next, &touched);
        Ok(UserRemoval {
            generation,
            documents: docs.len(),
            token_lists: docs.len(),
            embeddings,
        })
    }

    /// Publishes `next` (readers see it from now on), then makes the fits of the long lists
    /// the write changed, off the read path (the writer's lock is still held).
    fn publish(&self, next: Snapshot, touched: &[(bool, Arc<str>)]) {
        let next = Arc::new(next);
        self.published.store(Arc::clone(&next));
        next.refit(touched, self.opts.fit_min_docs);
    }

    /// The writer's lock.
    ///
    /// A writer that panicked mid-write published nothing (publishing is a write's last
    /// step), but may have left the token counts half-updated, so a poisoned lock is an
    /// error for every later write rather than silently wrong counts.
    fn lock(&self) -> Result<std::sync::MutexGuard<'_, Counts>> {
        self.writer.lock().map_err(|_| {
            Error::InvalidInput(
                "a writer of this index panicked; its token counts may be inconsistent, so \
                 it takes no more writes: rebuild the index"
                    .into(),
            )
        })
    }

    /// Tokenizes and embeds `docs` (outside the writer's lock).
    fn prepare(&self, docs: Vec<Document>) -> Result<Vec<Prepared>> {
        let texts: Vec<String> = docs.iter().map(Document::document).collect();
        let mut embeddings: Vec<Option<Box<[f32]>>> = vec![None; docs.len()];
        if let Some(enc) = &self.encoder {
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let what = || match docs.as_slice() {
                [one] => one.describe(),
                many => format!("{} documents", many.len()),
            };
            let e = enc.encode(&refs).map_err(|e| Error::Encode {
                what: what(),
                message: e.to_string(),
            })?;
            check_rows(&e, refs.len(), self.dim(), what)?;
            for (i, slot) in embeddings.iter_mut().enumerate() {
                *slot = Some(e.row(i).into());
            }
        }
        Ok(docs
            .into_iter()
            .zip(texts)
            .zip(embeddings)
            .map(|((doc, text), embedding)| Prepared {
                tokens: self.tokenizer.tokenize(&text),
                doc,
                embedding,
            })
            .collect())
    }

    /// The embedding dimension the encoder declares, if it does.
    pub(crate) fn dim(&self) -> Option<usize> {
        self.encoder.as_ref().and_then(|e| e.dim())
    }
}

/// Checks that the encoder returned `rows` finite vectors of the index's dimension.
pub(crate) fn check_rows(
    e: &pgraphrag_core::Embeddings,
    rows: usize,
    dim: Option<usize>,
    what: impl Fn() -> String,
) -> Result<()> {
    let bad = |message: String| Error::Encode {
        what: what(),
        message,
    };
    if e.rows() != rows {
        return Err(bad(format!(
            "the encoder returned {} vectors for {rows} texts",
            e.rows()
        )));
    }
    if let Some(d) = dim
        && e.dim() != d
    {
        return Err(bad(format!(
            "the encoder returned {}-dimensional vectors; it declares {d}",
            e.dim()
        )));
    }
    if e.as_slice().iter().any(|x| !x.is_finite()) {
        return Err(bad("the encoder returned a non-finite value".into()));
    }
    Ok(())
}
