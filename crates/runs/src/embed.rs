//! Texts encoded with a BERT encoder into JSON lines (`pgraphrag embed`): input
//! `{"id": ..., "text": "..."}` (any JSON id, copied through), output `{"id": ...,
//! "embedding": [floats]}`, one per input line, in order, through an optional embedding cache.
use std::path::PathBuf;

use pgraphrag_core::Progress;
use pgraphrag_data::output::{WriteOptions, write_atomic_with};
use pgraphrag_retrieval::dense::{
    BertEncoder, EmbeddingCache, EncoderBackend, EncoderOptions, Pooling, Precision, encode_corpus,
    l2_normalize,
};
use serde::{Deserialize, Serialize};

use crate::location::open_location;
use crate::{Error, Result};

/// Encodes a texts file.
///
/// ```
/// use pgraphrag_runs::embed::EmbedSpec;
/// let spec = EmbedSpec::new("models/all-MiniLM-L6-v2", "texts.jsonl", "vectors.jsonl");
/// assert_eq!((spec.batch, spec.normalize), (32, false));
/// assert!(spec.run(&()).is_err()); // no such texts file
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EmbedSpec {
    /// The BERT encoder folder.
    pub model: PathBuf,
    /// The texts (JSON lines `{"id", "text"}`).
    pub texts: PathBuf,
    /// The vectors written (JSON lines, atomically).
    pub out: PathBuf,
    /// L2-normalise every vector.
    pub normalize: bool,
    /// Texts per forward pass.
    pub batch: usize,
    /// How token vectors become one text vector.
    #[serde(with = "crate::names")]
    pub pooling: Pooling,
    /// The forward pass.
    #[serde(with = "crate::names")]
    pub backend: EncoderBackend,
    /// Tokens kept per text (`None`: the model's limit).
    pub max_length: Option<usize>,
    /// The linear layers' precision.
    #[serde(with = "crate::names")]
    pub precision: Precision,
    /// An embedding cache (a SQLite file, or a PostgreSQL URL with feature `postgres`): a
    /// rerun encodes nothing twice.
    pub cache: Option<PathBuf>,
}

/// What an [`EmbedSpec`] run wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EmbedReport {
    /// Vectors written.
    pub rows: usize,
    /// Their dimension.
    pub dim: usize,
}

impl EmbedSpec {
    /// Mean pooling, batches of 32, the native f32 pass, no cache, no normalisation.
    pub fn new(
        model: impl Into<PathBuf>,
        texts: impl Into<PathBuf>,
        out: impl Into<PathBuf>,
    ) -> EmbedSpec {
        EmbedSpec {
            model: model.into(),
            texts: texts.into(),
            out: out.into(),
            normalize: false,
            batch: 32,
            pooling: Pooling::Mean,
            backend: EncoderBackend::Native,
            max_length: None,
            precision: Precision::F32,
            cache: None,
        }
    }

    /// Encodes every text and writes the vectors.
    pub fn run(&self, progress: &dyn Progress) -> Result<EmbedReport> {
        let (ids, texts): (Vec<_>, Vec<_>) = pgraphrag_data::jsonl::read_texts(&self.texts)
            .map_err(Error::invalid)?
            .into_iter()
            .map(|t| (t.id, t.text))
            .unzip();
        if texts.is_empty() {
            return Err(Error::Setting(format!(
                "{}: no texts (the file is empty or holds only blank lines); nothing to embed",
                self.texts.display()
            )));
        }
        let encoder = BertEncoder::load_with(
            &self.model,
            EncoderOptions {
                pooling: self.pooling,
                normalize: self.normalize,
                batch_size: self.batch,
                max_length: self.max_length,
                backend: self.backend,
                precision: self.precision,
                ..Default::default()
            },
        )?;
        let cache = match &self.cache {
            Some(p) => Some(open_location(
                p,
                "the embedding cache",
                EmbeddingCache::open_location,
            )?),
            None => None,
        };
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let emb = encode_corpus(&encoder, cache.as_ref(), &refs, self.pooling, progress)?;
        write_atomic_with(&self.out, WriteOptions::default().create_dirs(), |w| {
            for (i, id) in ids.into_iter().enumerate() {
                let mut row = emb.row(i).to_vec();
                if self.normalize {
                    l2_normalize(&mut row);
                }
                let line = serde_json::json!({ "id": id, "embedding": row });
                writeln!(w, "{line}")?;
            }
            Ok(())
        })?;
        Ok(EmbedReport {
            rows: emb.rows(),
            dim: emb.dim(),
        })
    }
}
