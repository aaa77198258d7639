//! The embedding job (feature `dense`): a corpus of texts encoded into the embedding cache, in
//! chunks of texts, as `pgraphrag embed --cache` encodes it.
use std::path::{Path, PathBuf};
use std::sync::Arc;

use pgraphrag_core::NoProgress;
use pgraphrag_retrieval::dense::{
    BertEncoder, EmbeddingCache, EncoderOptions, Pooling, encode_corpus,
};
use serde::{Deserialize, Serialize};

use super::common::{Error, Result, UnitRange};

/// What an embedding job encodes: the texts of a JSON-lines file (`{"id": …, "text": …}`, the
/// input of `pgraphrag embed`) with a BERT model into an embedding cache.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmbedSpec {
    /// The texts file (absolute path).
    pub texts: PathBuf,
    /// The model folder (absolute path).
    pub model: PathBuf,
    /// The pooling: `mean`, `pooler` or `cls`.
    pub pooling: String,
    /// Truncation length in tokens (`None`: the model's limit).
    pub max_length: Option<usize>,
    /// Texts per forward pass.
    pub batch: usize,
    /// The embedding cache the vectors go to (absolute path; `pgraphrag embed --cache` and
    /// `pgraphrag rank --embedding-cache` read it).
    pub cache: PathBuf,
    /// Texts in the file.
    pub texts_count: usize,
}

impl EmbedSpec {
    fn pooling(&self) -> Result<Pooling> {
        self.pooling
            .parse()
            .map_err(|e: pgraphrag_retrieval::Error| Error::InvalidJob(e.to_string()))
    }
}

/// A loaded encoder and its cache, with the file's texts.
struct Loaded {
    key: (PathBuf, String, Option<usize>, usize, PathBuf, PathBuf),
    encoder: BertEncoder,
    cache: EmbeddingCache,
    texts: Arc<Vec<String>>,
}

/// What a worker keeps between embedding units: the last encoder, cache and texts.
#[derive(Default)]
pub(crate) struct EmbedCache {
    loaded: Option<Loaded>,
}

impl EmbedCache {
    fn load(&mut self, spec: &EmbedSpec) -> Result<&Loaded> {
        let key = (
            spec.model.clone(),
            spec.pooling.clone(),
            spec.max_length,
            spec.batch,
            spec.cache.clone(),
            spec.texts.clone(),
        );
        if self.loaded.as_ref().is_some_and(|l| l.key == key) {
            return Ok(self.loaded.as_ref().expect("checked"));
        }
        self.loaded = None;
        let pooling = spec.pooling()?;
        let encoder = BertEncoder::load_with(
            &spec.model,
            EncoderOptions {
                pooling,
                batch_size: spec.batch.max(1),
                max_length: spec.max_length,
                ..Default::default()
            },
        )
        .map_err(|e| {
            Error::InvalidJob(format!(
                "loading the model {}: {}",
                spec.model.display(),
                pgraphrag_core::error_chain(&e)
            ))
        })?;
        let cache = EmbeddingCache::open(&spec.cache)
            .map_err(|e| Error::InvalidJob(pgraphrag_core::error_chain(&e)))?;
        let texts: Vec<String> = pgraphrag_data::jsonl::read_texts(&spec.texts)
            .map_err(|e| Error::Texts(Box::new(e)))?
            .into_iter()
            .map(|t| t.text)
            .collect();
        if texts.len() != spec.texts_count {
            return Err(Error::Input {
                path: spec.texts.clone(),
                reason: format!(
                    "it has {} texts, the job encodes {}: the file changed since the job was submitted",
                    texts.len(),
                    spec.texts_count
                ),
            });
        }
        Ok(self.loaded.insert(Loaded {
            key,
            encoder,
            cache,
            texts: Arc::new(texts),
        }))
    }

    /// Encodes the unit's texts into the cache (texts already there are read, not encoded;
    /// one cache transaction per chunk of texts). Returns the number of texts.
    pub(crate) fn run(&mut self, msg: UnitRange<'_>, spec: &EmbedSpec) -> Result<usize> {
        let pooling = spec.pooling()?;
        let l = self.load(spec)?;
        let refs: Vec<&str> = l.texts[msg.start..msg.end]
            .iter()
            .map(String::as_str)
            .collect();
        encode_corpus(&l.encoder, Some(&l.cache), &refs, pooling, &NoProgress).map_err(|e| {
            Error::InvalidJob(format!(
                "job {} unit {}: encoding: {}",
                msg.job,
                msg.unit,
                pgraphrag_core::error_chain(&e)
            ))
        })?;
        Ok(refs.len())
    }
}

/// Counts the texts of a JSON-lines file (for planning an [`EmbedSpec`]); a file without
/// any text is an [`Error::Input`], one that cannot be read an [`Error::Texts`].
pub fn count_texts(path: &Path) -> Result<usize> {
    let n = pgraphrag_data::jsonl::read_texts(path)
        .map(|t| t.len())
        .map_err(|e| Error::Texts(Box::new(e)))?;
    if n == 0 {
        return Err(Error::Input {
            path: path.to_path_buf(),
            reason: "no texts (the file is empty)".into(),
        });
    }
    Ok(n)
}
