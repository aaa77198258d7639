//! [`ContrieverOptions`] and [`DenseRetriever::contriever`]: PGraphRAG's Contriever recipe
//! in one place, so every program ranks with the same settings.

use std::path::{Path, PathBuf};

use super::encoder::{DenseDevice, EncoderBackend, Pooling};
use super::retriever::{DenseOptions, DenseRetriever, Similarity};
use crate::Result;

/// The settings of PGraphRAG's dense ranking with Contriever (`facebook/contriever`, or any
/// BERT folder), for [`DenseRetriever::contriever`].
///
/// What is fixed by the recipe, in both variants:
///
/// * queries are mean-pooled over the attention mask (Contriever's own pooling);
/// * vectors are never normalised and documents are scored by cosine similarity
///   ([`Similarity::Cosine`], as `torch.nn.functional.cosine_similarity`);
/// * 32 texts per forward pass, truncation at the model's limit (512 tokens).
///
/// What differs, the document pooling:
///
/// * **the paper text** (and Contriever itself) mean-pools documents as it does queries:
///   [`ContrieverOptions::paper`], [`Pooling::Mean`], the default;
/// * **the released notebook** (`notebook/ranking.ipynb`) embeds documents with BERT's
///   `pooler_output`: [`ContrieverOptions::notebook`], [`Pooling::Pooler`] (the checkpoint
///   needs pooler weights).
///
/// The notebook's profile-ranking quirks on the dense path (nothing dropped, a single
/// neighbour unranked) are profile options, not encoder settings (see
/// `pgraphrag_eval::Recipe::dense_profile_options`).
///
/// ```
/// use pgraphrag_retrieval::dense::{ContrieverOptions, Pooling};
/// assert_eq!(ContrieverOptions::paper().doc_pooling, Pooling::Mean);
/// assert_eq!(ContrieverOptions::notebook().doc_pooling, Pooling::Pooler);
/// assert_eq!(ContrieverOptions::default(), ContrieverOptions::paper());
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ContrieverOptions {
    /// Document pooling: [`Pooling::Mean`] (the paper text; default) or [`Pooling::Pooler`]
    /// (the released notebook).
    pub doc_pooling: Pooling,
    /// The CPU forward pass. Default [`EncoderBackend::Native`].
    pub backend: EncoderBackend,
    /// Where to run. Default the CPU.
    pub device: DenseDevice,
    /// Embedding cache file; `None` = no persistent cache.
    pub cache: Option<PathBuf>,
}

impl ContrieverOptions {
    /// Documents mean-pooled, as the PGraphRAG paper text and Contriever describe.
    pub fn paper() -> Self {
        ContrieverOptions::default()
    }

    /// Documents embedded with `pooler_output`, as the released notebook does.
    pub fn notebook() -> Self {
        ContrieverOptions {
            doc_pooling: Pooling::Pooler,
            ..ContrieverOptions::default()
        }
    }

    /// Sets the CPU forward pass.
    pub fn backend(mut self, b: EncoderBackend) -> Self {
        self.backend = b;
        self
    }

    /// Persists embeddings in the SQLite file at `path`.
    pub fn cache(mut self, path: impl Into<PathBuf>) -> Self {
        self.cache = Some(path.into());
        self
    }

    /// The [`DenseOptions`] of the recipe.
    pub fn dense_options(&self) -> DenseOptions {
        DenseOptions {
            similarity: Similarity::Cosine,
            query_pooling: Pooling::Mean,
            doc_pooling: self.doc_pooling,
            batch_size: 32,
            max_length: None,
            cache: self.cache.clone(),
            device: self.device,
            backend: self.backend,
            ..DenseOptions::default()
        }
    }
}

impl DenseRetriever {
    /// Loads the BERT folder `model_dir` (`config.json`, `tokenizer.json`,
    /// `model.safetensors`) with PGraphRAG's Contriever recipe ([`ContrieverOptions`]).
    ///
    /// ```no_run
    /// use pgraphrag_retrieval::dense::{ContrieverOptions, DenseRetriever};
    /// let r = DenseRetriever::contriever(
    ///     std::path::Path::new("models/contriever"),
    ///     ContrieverOptions::notebook().cache("runs/emb.sqlite"),
    /// )
    /// .unwrap();
    /// ```
    pub fn contriever(model_dir: &Path, opts: ContrieverOptions) -> Result<Self> {
        DenseRetriever::builder(model_dir)
            .options(opts.dense_options())
            .build()
    }
}
