//! [`DenseRetriever`]: the Contriever recipe as a [`pgraphrag_core::Retriever`].

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::RwLock;

use pgraphrag_core::Encoder;
use pgraphrag_core::progress::Progress;

use super::cache::{EmbeddingCache, encode_cached, encode_err, text_key};
use super::encoder::{BertEncoder, DenseDevice, EncoderBackend, EncoderOptions, Pooling};
use super::quant::Precision;
pub use crate::scoring::Similarity;
use crate::scoring::similarity as score;
use crate::{Error, Result};

/// Options of a [`DenseRetriever`]; build one with [`DenseRetriever::builder`].
#[derive(Debug, Clone, PartialEq)]
pub struct DenseOptions {
    /// Scoring. Default [`Similarity::Cosine`].
    pub similarity: Similarity,
    /// Pooling of the query. Default [`Pooling::Mean`].
    pub query_pooling: Pooling,
    /// Pooling of the documents. Default [`Pooling::Mean`] (the PGraphRAG paper text and
    /// Contriever); [`Pooling::Pooler`] reproduces PGraphRAG's released notebook.
    pub doc_pooling: Pooling,
    /// Texts per forward pass. Default 32.
    pub batch_size: usize,
    /// Truncation in tokens; `None` = the model's limit (512 for BERT).
    pub max_length: Option<usize>,
    /// Embedding cache file; `None` = no persistent cache.
    pub cache: Option<PathBuf>,
    /// Where to run. Default the CPU.
    pub device: DenseDevice,
    /// The CPU forward pass. Default [`EncoderBackend::Native`].
    pub backend: EncoderBackend,
    /// The native forward pass's number format. Default [`Precision::F32`].
    pub precision: Precision,
}

impl Default for DenseOptions {
    fn default() -> Self {
        DenseOptions {
            similarity: Similarity::Cosine,
            query_pooling: Pooling::Mean,
            doc_pooling: Pooling::Mean,
            batch_size: 32,
            max_length: None,
            cache: None,
            device: DenseDevice::Cpu,
            backend: EncoderBackend::Native,
            precision: Precision::F32,
        }
    }
}

/// Builder of a [`DenseRetriever`].
///
/// ```no_run
/// use pgraphrag_retrieval::dense::{DenseRetriever, Pooling, Similarity};
/// let r = DenseRetriever::builder("models/all-MiniLM-L6-v2")
///     .similarity(Similarity::Cosine)
///     .doc_pooling(Pooling::Pooler) // PGraphRAG's released notebook
///     .cache("runs/emb.sqlite")
///     .build()
///     .unwrap();
/// ```
#[derive(Debug, Clone)]
pub struct DenseRetrieverBuilder {
    dir: PathBuf,
    opts: DenseOptions,
}

impl DenseRetrieverBuilder {
    /// Sets the scoring.
    pub fn similarity(mut self, s: Similarity) -> Self {
        self.opts.similarity = s;
        self
    }
    /// Sets the query pooling.
    pub fn query_pooling(mut self, p: Pooling) -> Self {
        self.opts.query_pooling = p;
        self
    }
    /// Sets the document pooling.
    pub fn doc_pooling(mut self, p: Pooling) -> Self {
        self.opts.doc_pooling = p;
        self
    }
    /// Sets the batch size.
    pub fn batch_size(mut self, n: usize) -> Self {
        self.opts.batch_size = n;
        self
    }
    /// Sets the truncation length in tokens.
    pub fn max_length(mut self, n: usize) -> Self {
        self.opts.max_length = Some(n);
        self
    }
    /// Persists embeddings in the SQLite file at `path`.
    pub fn cache(mut self, path: impl Into<PathBuf>) -> Self {
        self.opts.cache = Some(path.into());
        self
    }
    /// Sets the device.
    pub fn device(mut self, d: DenseDevice) -> Self {
        self.opts.device = d;
        self
    }
    /// Sets the CPU forward pass.
    pub fn backend(mut self, b: EncoderBackend) -> Self {
        self.opts.backend = b;
        self
    }
    /// Sets the native forward pass's number format ([`Precision::Int8`]: int8 linear
    /// layers, faster, embeddings within the fidelity measured in `docs/dense.md`).
    ///
    /// ```
    /// use pgraphrag_retrieval::dense::{DenseOptions, DenseRetriever, Precision};
    /// let b = DenseRetriever::builder("models/all-MiniLM-L6-v2").precision(Precision::Int8);
    /// assert!(format!("{b:?}").contains("Int8")); // `.build()` loads the model
    /// assert_eq!(DenseOptions::default().precision, Precision::F32);
    /// ```
    pub fn precision(mut self, p: Precision) -> Self {
        self.opts.precision = p;
        self
    }
    /// Replaces all options at once.
    pub fn options(mut self, o: DenseOptions) -> Self {
        self.opts = o;
        self
    }
    /// Loads the model (and opens the cache).
    pub fn build(self) -> Result<DenseRetriever> {
        let enc = BertEncoder::load_with(
            &self.dir,
            EncoderOptions {
                pooling: self.opts.doc_pooling,
                normalize: false,
                batch_size: self.opts.batch_size,
                max_length: self.opts.max_length,
                device: self.opts.device,
                backend: self.opts.backend,
                precision: self.opts.precision,
                ..Default::default()
            },
        )?;
        let cache = match &self.opts.cache {
            Some(p) => Some(EmbeddingCache::open(p)?),
            None => None,
        };
        DenseRetriever::from_encoder(enc, self.opts, cache)
    }
}

/// Vectors kept in memory by [`DenseRetriever::warm`] and [`DenseRetriever::warm_queries`],
/// keyed by pooling and the text's sha256.
type Memo = RwLock<HashMap<(Pooling, [u8; 32]), Box<[f32]>>>;
type MemoGuard<'a> = std::sync::RwLockReadGuard<'a, HashMap<(Pooling, [u8; 32]), Box<[f32]>>>;

/// How a [`DenseRetriever`] encodes one side (queries or documents) of a given pooling.
struct Sides<E> {
    /// Encodes one chunk.
    embed: fn(&E, &[&str], Pooling) -> Result<pgraphrag_core::Embeddings>,
    /// The cache key (only computed when there is a cache).
    key: fn(&E, Pooling, &str) -> Result<String>,
    /// Texts per cache transaction.
    chunk: usize,
    /// The id of a generic encoder (empty for BERT, whose key is its fingerprint).
    id: String,
}

fn bert_embed(e: &BertEncoder, t: &[&str], p: Pooling) -> Result<pgraphrag_core::Embeddings> {
    e.embed(t, p)
}
fn bert_key(e: &BertEncoder, p: Pooling, _: &str) -> Result<String> {
    EmbeddingCache::model_key(e, p)
}
fn plain_embed<E: Encoder>(e: &E, t: &[&str], _: Pooling) -> Result<pgraphrag_core::Embeddings> {
    encode_err(e.encode(t))
}
fn plain_key<E>(_: &E, _: Pooling, id: &str) -> Result<String> {
    Ok(id.to_string())
}

/// Dense retrieval with an [`Encoder`] — by default a BERT encoder (the Contriever recipe):
/// queries and documents are embedded (through the cache when there is one) and documents
/// are ranked by [`Similarity`], best first; equal scores keep their input order.
///
/// With the BERT encoder ([`DenseRetriever::load`], [`DenseRetriever::builder`],
/// [`DenseRetriever::from_encoder`]) queries and documents are pooled as
/// [`DenseOptions::query_pooling`] and [`DenseOptions::doc_pooling`] say; any other encoder
/// ([`DenseRetriever::with_encoder`]) embeds both with [`Encoder::encode`] and ignores the
/// pooling options.
///
/// For a whole split, call [`DenseRetriever::warm`] on every document and
/// [`DenseRetriever::warm_queries`] on every query first: both encode in length-sorted
/// batches (through the on-disk cache) and keep the vectors in memory, so each later
/// [`rank`](pgraphrag_core::Retriever::rank) is a few hash look-ups and dot products.
/// Texts that were not warmed are encoded on demand (and read from / written to the on-disk
/// cache), but not kept in memory.
///
/// ```no_run
/// use pgraphrag_core::Retriever;
/// use pgraphrag_retrieval::dense::DenseRetriever;
/// let r = DenseRetriever::load(std::path::Path::new("models/all-MiniLM-L6-v2")).unwrap();
/// let top = r.rank("battery life", &["great battery", "nice colour"], Some(1)).unwrap();
/// assert_eq!(top[0].item, 0);
/// ```
pub struct DenseRetriever<E: Encoder = BertEncoder> {
    encoder: E,
    opts: DenseOptions,
    cache: Option<EmbeddingCache>,
    memo: Memo,
    sides: Sides<E>,
}

impl<E: Encoder + std::fmt::Debug> std::fmt::Debug for DenseRetriever<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DenseRetriever")
            .field("encoder", &self.encoder)
            .field("opts", &self.opts)
            .field("cache", &self.cache)
            .field("warmed", &self.warmed())
            .finish()
    }
}

impl DenseRetriever {
    /// Loads `model_dir` with the default options (mean pooling on both sides, cosine, CPU,
    /// no persistent cache).
    pub fn load(model_dir: &Path) -> Result<Self> {
        Self::builder(model_dir).build()
    }

    /// A builder starting from the default options.
    pub fn builder(model_dir: impl Into<PathBuf>) -> DenseRetrieverBuilder {
        DenseRetrieverBuilder {
            dir: model_dir.into(),
            opts: DenseOptions::default(),
        }
    }

    /// Wraps an already loaded encoder. `opts.batch_size`, `max_length` and `device` are
    /// the encoder's own; `opts.cache` is ignored in favour of `cache`.
    pub fn from_encoder(
        encoder: BertEncoder,
        opts: DenseOptions,
        cache: Option<EmbeddingCache>,
    ) -> Result<Self> {
        for p in [opts.query_pooling, opts.doc_pooling] {
            if p == Pooling::Pooler && !encoder.has_pooler() {
                return Err(Error::MissingPooler {
                    path: encoder.dir().to_path_buf(),
                });
            }
        }
        let chunk = (encoder.options().batch_size * 8).max(1);
        Ok(DenseRetriever {
            encoder,
            opts,
            cache,
            memo: RwLock::new(HashMap::new()),
            sides: Sides {
                embed: bert_embed,
                key: bert_key,
                chunk,
                id: String::new(),
            },
        })
    }
}

impl<E: Encoder> DenseRetriever<E> {
    /// Wraps any [`Encoder`]: queries and documents are both embedded with
    /// [`Encoder::encode`], scored by `similarity`, and cached in `cache` under `model_id` (a
    /// name for the encoder and its settings; vectors of different encoders must never share
    /// an id). The pooling, batch, device and cache fields of the options are unused.
    ///
    /// ```
    /// use pgraphrag_core::{Embeddings, Encoder, Result, Retriever};
    /// use pgraphrag_retrieval::dense::{DenseRetriever, Similarity};
    /// /// One feature: how often the text says "battery".
    /// struct Battery;
    /// impl Encoder for Battery {
    ///     fn encode(&self, texts: &[&str]) -> Result<Embeddings> {
    ///         Embeddings::new(1, texts.iter().map(|t| t.matches("battery").count() as f32).collect())
    ///     }
    /// }
    /// let r = DenseRetriever::with_encoder(Battery, "battery-v1", Similarity::Dot, None);
    /// let top = r.rank("battery", &["nice colour", "battery battery", "battery"], None).unwrap();
    /// assert_eq!(top.iter().map(|s| s.item).collect::<Vec<_>>(), vec![1, 2, 0]);
    /// ```
    pub fn with_encoder(
        encoder: E,
        model_id: impl Into<String>,
        similarity: Similarity,
        cache: Option<EmbeddingCache>,
    ) -> Self {
        DenseRetriever {
            encoder,
            opts: DenseOptions {
                similarity,
                ..DenseOptions::default()
            },
            cache,
            memo: RwLock::new(HashMap::new()),
            sides: Sides {
                embed: plain_embed::<E>,
                key: plain_key::<E>,
                chunk: super::cache::CORPUS_CHUNK,
                id: model_id.into(),
            },
        }
    }

    /// The encoder.
    pub fn encoder(&self) -> &E {
        &self.encoder
    }
    /// The options.
    pub fn options(&self) -> &DenseOptions {
        &self.opts
    }
    /// The cache, if any.
    pub fn cache(&self) -> Option<&EmbeddingCache> {
        self.cache.as_ref()
    }

    /// Embeds documents (document pooling, through the cache) in length-sorted batches and
    /// keeps their vectors in memory, reporting to `progress` (`&()` for none): call it
    /// once on a whole split so later [`rank`] calls only encode their query (or nothing,
    /// after [`DenseRetriever::warm_queries`]).
    ///
    /// [`rank`]: pgraphrag_core::Retriever::rank
    pub fn warm(&self, docs: &[&str], progress: &dyn Progress) -> Result<()> {
        self.warm_with(docs, self.opts.doc_pooling, progress)
    }

    /// Embeds queries (query pooling, through the cache) in length-sorted batches and keeps
    /// their vectors in memory, like [`DenseRetriever::warm`] does for documents. Batching
    /// the queries of a whole split is several times faster than encoding them one by one.
    pub fn warm_queries(&self, queries: &[&str], progress: &dyn Progress) -> Result<()> {
        self.warm_with(queries, self.opts.query_pooling, progress)
    }

    /// How many vectors [`DenseRetriever::warm`] and [`DenseRetriever::warm_queries`] keep in
    /// memory.
    pub fn warmed(&self) -> usize {
        self.memo.read().map(|m| m.len()).unwrap_or(0)
    }

    /// Drops the vectors kept in memory (the on-disk cache is untouched).
    pub fn clear_warmed(&self) {
        if let Ok(mut m) = self.memo.write() {
            m.clear();
        }
    }

    fn warm_with(&self, texts: &[&str], pooling: Pooling, progress: &dyn Progress) -> Result<()> {
        let todo: Vec<&str> = {
            let memo = self.memo_read()?;
            texts
                .iter()
                .copied()
                .filter(|t| !memo.contains_key(&(pooling, text_key(t))))
                .collect()
        };
        if todo.is_empty() {
            return Ok(());
        }
        let e = self.encode(&todo, pooling, progress)?;
        let mut memo = self
            .memo
            .write()
            .map_err(|_| Error::Compute("the in-memory embedding table is poisoned".into()))?;
        for (i, t) in todo.iter().enumerate() {
            memo.insert((pooling, text_key(t)), e.row(i).into());
        }
        Ok(())
    }

    /// Encodes `texts` on the `pooling` side through the cache ([`super::encode_corpus`]
    /// for BERT, [`super::encode_corpus_with`] otherwise).
    fn encode(
        &self,
        texts: &[&str],
        pooling: Pooling,
        progress: &dyn Progress,
    ) -> Result<pgraphrag_core::Embeddings> {
        let key = match &self.cache {
            Some(_) => Some((self.sides.key)(&self.encoder, pooling, &self.sides.id)?),
            None => None,
        };
        encode_cached(
            self.encoder.dim(),
            self.cache.as_ref().zip(key.as_deref()),
            texts,
            self.sides.chunk,
            progress,
            &|batch| (self.sides.embed)(&self.encoder, batch, pooling),
        )
    }

    fn memo_read(&self) -> Result<MemoGuard<'_>> {
        self.memo
            .read()
            .map_err(|_| Error::Compute("the in-memory embedding table is poisoned".into()))
    }

    /// Embeds `texts` with `pooling`: warmed vectors from memory, the rest through the cache
    /// and the encoder (one batch). One row per text, in order.
    fn embed_with(&self, texts: &[&str], pooling: Pooling) -> Result<pgraphrag_core::Embeddings> {
        let dim = match self.encoder.dim() {
            Some(d) => d,
            None => {
                let memo = self.memo_read()?;
                let warmed = texts
                    .iter()
                    .find_map(|t| memo.get(&(pooling, text_key(t))).map(|v| v.len()));
                match warmed {
                    Some(d) => d,
                    // Nothing warmed: every text goes through the cache and the encoder.
                    None => {
                        drop(memo);
                        return self.encode(texts, pooling, &());
                    }
                }
            }
        };
        let mut out = vec![0f32; texts.len() * dim];
        let mut missing: Vec<usize> = Vec::new();
        {
            let memo = self.memo_read()?;
            for (i, t) in texts.iter().enumerate() {
                match memo.get(&(pooling, text_key(t))) {
                    Some(v) => out[i * dim..(i + 1) * dim].copy_from_slice(v),
                    None => missing.push(i),
                }
            }
        }
        if !missing.is_empty() {
            let todo: Vec<&str> = missing.iter().map(|&i| texts[i]).collect();
            let e = self.encode(&todo, pooling, &())?;
            for (r, &i) in missing.iter().enumerate() {
                out[i * dim..(i + 1) * dim].copy_from_slice(e.row(r));
            }
        }
        pgraphrag_core::Embeddings::new(dim, out).map_err(|e| Error::Compute(e.to_string()))
    }

    /// Query embedding (query pooling; from memory when warmed, else through the cache).
    pub fn embed_query(&self, query: &str) -> Result<Vec<f32>> {
        Ok(self
            .embed_with(&[query], self.opts.query_pooling)?
            .into_vec())
    }

    /// Document embeddings (document pooling; from memory when warmed, else through the
    /// cache).
    pub fn embed_docs(&self, docs: &[&str]) -> Result<pgraphrag_core::Embeddings> {
        self.embed_with(docs, self.opts.doc_pooling)
    }

    /// Scores every document against the query, in document order.
    pub fn scores(&self, query: &str, docs: &[&str]) -> Result<Vec<f64>> {
        if docs.is_empty() {
            return Ok(Vec::new());
        }
        let q = self.embed_query(query)?;
        let d = self.embed_docs(docs)?;
        Ok((0..d.rows())
            .map(|i| score(self.opts.similarity, &q, d.row(i)))
            .collect())
    }
}

impl<E: Encoder> DenseRetriever<E> {
    /// Scores every document against every query: one row per query, in document order.
    /// Each text is embedded once (the queries with query pooling in one batch, the documents
    /// with document pooling), so row `i` equals [`scores`](Self::scores)`(queries[i], docs)`
    /// (a text's vector does not depend on its batch) without embedding the documents once
    /// per query.
    pub fn score_matrix(&self, queries: &[&str], docs: &[&str]) -> Result<Vec<Vec<f64>>> {
        if queries.is_empty() {
            return Ok(Vec::new());
        }
        if docs.is_empty() {
            return Ok(vec![Vec::new(); queries.len()]);
        }
        let q = self.embed_with(queries, self.opts.query_pooling)?;
        let d = self.embed_docs(docs)?;
        Ok((0..q.rows())
            .map(|i| {
                (0..d.rows())
                    .map(|j| score(self.opts.similarity, q.row(i), d.row(j)))
                    .collect()
            })
            .collect())
    }
}

/// `scores` when every one is finite (what [`pgraphrag_core::Retriever::scores`] promises).
pub(crate) fn finite(scores: Vec<f64>) -> pgraphrag_core::Result<Vec<f64>> {
    if let Some(i) = scores.iter().position(|s| !s.is_finite()) {
        return Err(Error::Compute(format!("document {i} got a non-finite score")).into());
    }
    Ok(scores)
}

/// Ranks with ties in input order (the trait's default).
impl<E: Encoder> pgraphrag_core::Retriever for DenseRetriever<E> {
    /// [`DenseRetriever::scores`], refusing a non-finite score.
    fn scores(&self, query: &str, docs: &[&str]) -> pgraphrag_core::Result<Vec<f64>> {
        finite(DenseRetriever::scores(self, query, docs)?)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use pgraphrag_core::{Embeddings, Encoder, Retriever};

    use super::*;

    /// A test double: two features (count of "good", count of "bad"), counting the texts it
    /// encodes; `dim` known or not.
    struct Words {
        encoded: AtomicUsize,
        dim_known: bool,
    }

    impl Words {
        fn new(dim_known: bool) -> Self {
            Words {
                encoded: AtomicUsize::new(0),
                dim_known,
            }
        }
    }

    impl Encoder for Words {
        fn encode(&self, texts: &[&str]) -> pgraphrag_core::Result<Embeddings> {
            self.encoded.fetch_add(texts.len(), Ordering::SeqCst);
            let v = texts
                .iter()
                .flat_map(|t| {
                    [
                        t.matches("good").count() as f32,
                        t.matches("bad").count() as f32,
                    ]
                })
                .collect();
            Embeddings::new(2, v)
        }
        fn dim(&self) -> Option<usize> {
            self.dim_known.then_some(2)
        }
    }

    #[test]
    fn a_custom_encoder_ranks_warms_and_caches() {
        for dim_known in [true, false] {
            let docs = ["bad bad", "good", "good good bad", "nothing"];
            let cache = EmbeddingCache::in_memory().unwrap();
            let r = DenseRetriever::with_encoder(
                Words::new(dim_known),
                "words-v1",
                Similarity::Dot,
                Some(cache),
            );
            let top = r.rank("good", &docs, None).unwrap();
            let order: Vec<usize> = top.iter().map(|s| s.item).collect();
            // Dot products with (1, 0): 0, 1, 2, 0; ties keep input order.
            assert_eq!(order, vec![2, 1, 0, 3]);
            assert_eq!(top[0].score, 2.0);
            // Query and documents went through the cache under the given id.
            let c = r.cache().unwrap();
            assert_eq!(
                c.get_many("words-v1", &["good", "bad bad"]).unwrap(),
                vec![Some(vec![1.0, 0.0]), Some(vec![0.0, 2.0])]
            );
            assert_eq!(c.len().unwrap(), 4); // "good" is both a query and a document
            let before = r.encoder().encoded.load(Ordering::SeqCst);
            // Warmed texts come from memory; cached ones are not encoded again.
            r.warm(&docs, &()).unwrap();
            assert_eq!(r.warmed(), 4);
            assert_eq!(r.rank("bad", &docs, Some(1)).unwrap()[0].item, 0);
            assert_eq!(r.encoder().encoded.load(Ordering::SeqCst), before + 1);
        }
    }

    #[test]
    fn encode_corpus_with_a_custom_encoder_dedups_and_reuses_the_cache() {
        let cache = EmbeddingCache::in_memory().unwrap();
        let enc = Words::new(false);
        let texts = ["good", "bad", "good"];
        let a = super::super::encode_corpus_with(&enc, "w", Some(&cache), &texts, &()).unwrap();
        assert_eq!(a.rows(), 3);
        assert_eq!(a.row(0), a.row(2));
        assert_eq!(enc.encoded.load(Ordering::SeqCst), 2);
        let b = super::super::encode_corpus_with(&enc, "w", Some(&cache), &texts, &()).unwrap();
        assert_eq!(a, b);
        assert_eq!(enc.encoded.load(Ordering::SeqCst), 2);
        // Nothing to encode and no dimension known: the encoder tells it.
        let e = super::super::encode_corpus_with(&enc, "w", None, &[], &()).unwrap();
        assert_eq!((e.rows(), e.dim()), (0, 2));
    }
}
