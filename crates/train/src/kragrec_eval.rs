//! A trained K-RagRec encoder at work: the option letters' scores with the soft tokens
//! through the frozen model (forward only, so every row gets a full ranking as
//! `pgraphrag_recsys::LetterScorer` gives one), the rows file's [`ScoredRow`]s, and the
//! encoder and projector saved as safetensors naming their settings and base model.

use std::collections::HashMap;
use std::path::Path;

use candle_core::{Device, Tensor};
use pgraphrag_recsys::{CandidateSet, Row, ScoredRow};

use crate::error::{Ctx, Result, TrainError};
use crate::gnn::{GnnConfig, GraphEncoder, SoftTokens};
use crate::kragrec::{KragrecExample, answer_logits};
use crate::llama::Llama;
use crate::lora::Lora;

/// The method name of trained K-RagRec rows in the rows file and the result tables.
pub const KRAGREC_METHOD: &str = "k-ragrec";

/// The log-probability (softmax over the whole vocabulary, as the released code reads the
/// first generated token) of each of `letters` (token ids) as the next token after
/// `example`'s prompt with its soft tokens, in evaluation mode (no dropout, BatchNorm's
/// running statistics). Higher is better; `pgraphrag_recsys::ranking` orders them.
///
/// ```no_run
/// # fn f(m: &pgraphrag_train::Llama, e: &pgraphrag_train::GraphEncoder,
/// #      x: &pgraphrag_train::KragrecExample) -> pgraphrag_train::Result<()> {
/// let s = pgraphrag_train::kragrec_letter_scores(m, e, None, x, &[330, 331])?;
/// assert!(s.iter().all(|v| *v <= 0.0));
/// # Ok(()) }
/// ```
pub fn kragrec_letter_scores(
    model: &Llama,
    encoder: &dyn crate::GraphTokens,
    lora: Option<&Lora>,
    example: &KragrecExample,
    letters: &[u32],
) -> Result<Vec<f64>> {
    let logits = answer_logits(model, encoder, lora, &[example], None)?
        .squeeze(0)
        .and_then(|t| t.to_vec1::<f32>())
        .ctx(|| "the answer logits".into())?;
    letter_log_probs(&logits, letters)
}

/// The log-softmax (in f64, over all of `logits`) at each of `letters`: how
/// [`kragrec_letter_scores`] reads next-token logits, for any engine that gives them (e.g.
/// `pgraphrag_llm::GgufModel::next_token_logits` for a row without soft tokens). A letter
/// outside the logits is [`TrainError::Input`].
///
/// ```
/// let s = pgraphrag_train::letter_log_probs(&[0.0, 0.0, 2f32.ln()], &[2, 0])?;
/// assert!((s[0] - 0.5f64.ln()).abs() < 1e-6 && (s[1] - 0.25f64.ln()).abs() < 1e-6);
/// assert!(pgraphrag_train::letter_log_probs(&[0.0], &[3]).is_err());
/// # Ok::<(), pgraphrag_train::TrainError>(())
/// ```
pub fn letter_log_probs(logits: &[f32], letters: &[u32]) -> Result<Vec<f64>> {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
    let lse = max
        + logits
            .iter()
            .map(|&x| (f64::from(x) - max).exp())
            .sum::<f64>()
            .ln();
    letters
        .iter()
        .map(|&id| {
            logits
                .get(id as usize)
                .map(|&x| f64::from(x) - lse)
                .ok_or_else(|| {
                    TrainError::Input(format!(
                        "letter token {id} is outside the vocabulary of {}",
                        logits.len()
                    ))
                })
        })
        .collect()
}

/// Row `index`'s [`ScoredRow`] for method [`KRAGREC_METHOD`]: what
/// `pgraphrag_recsys::summarize` computes ACC and Recall@k from, with `triples` as the row's
/// recorded knowledge.
///
/// ```
/// use pgraphrag_recsys::{CandidateSet, Row, summarize};
/// let row = Row { user: 1, history: vec![5], target: 3 };
/// let c = CandidateSet { items: vec![2, 3], target_index: 1 };
/// let r = pgraphrag_train::kragrec_scored_row(0, &row, &c, vec![-2.0, -0.5], vec![]);
/// let s = summarize(&[r], &[1], 10, 0.95, 0).unwrap();
/// assert_eq!((s[0].method.as_str(), s[0].acc), ("k-ragrec", 1.0));
/// ```
pub fn kragrec_scored_row(
    index: usize,
    row: &Row,
    candidates: &CandidateSet,
    scores: Vec<f64>,
    triples: Vec<[String; 3]>,
) -> ScoredRow {
    ScoredRow {
        row: index,
        user_id: row.user,
        method: KRAGREC_METHOD.to_string(),
        history: row.history.clone(),
        candidates: candidates.items.clone(),
        target: row.target,
        scores,
        retrieved: triples,
    }
}

const FORMAT: &str = "pgraphrag-kragrec-encoder";
const VERSION: &str = "1";

fn tokens_name(t: SoftTokens) -> &'static str {
    match t {
        SoftTokens::Mean => "mean",
        SoftTokens::PerSubgraph => "per-subgraph",
    }
}

impl GraphEncoder {
    /// Writes the encoder and projector (every [`GraphEncoder::named_vars`] tensor, f32) to
    /// `path` as safetensors, atomically, with metadata: `format`
    /// (`pgraphrag-kragrec-encoder`), `format_version`, `base_model` (the LLM's
    /// [`Llama::base_id`]), `features` (what the node and edge features were made with, e.g.
    /// the sentence encoder's id) and the [`GnnConfig`] (`in_dim`, `layers`, `hidden`,
    /// `heads`, `dropout`, `projector_hidden`, `llm_dim`, `tokens`).
    ///
    /// ```
    /// use pgraphrag_train::{GnnConfig, GraphEncoder, TrainError};
    /// let dev = candle_core::Device::Cpu;
    /// let enc = GraphEncoder::new(GnnConfig::small(8, 16), 1, &dev)?;
    /// let dir = tempfile::tempdir().unwrap();
    /// let p = dir.path().join("encoder.safetensors");
    /// enc.save(&p, "llama:test", "minilm")?;
    /// let back = GraphEncoder::load(&p, "llama:test", "minilm", &dev)?;
    /// assert_eq!(back.config(), enc.config());
    /// assert!(matches!(GraphEncoder::load(&p, "llama:other", "minilm", &dev),
    ///                  Err(TrainError::BaseModelMismatch { .. })));
    /// # Ok::<(), TrainError>(())
    /// ```
    pub fn save(&self, path: &Path, base_model: &str, features: &str) -> Result<()> {
        let c = self.config();
        let md: HashMap<String, String> = [
            ("format", FORMAT.to_string()),
            ("format_version", VERSION.to_string()),
            ("base_model", base_model.to_string()),
            ("features", features.to_string()),
            ("in_dim", c.in_dim.to_string()),
            ("layers", c.layers.to_string()),
            ("hidden", c.hidden.to_string()),
            ("heads", c.heads.to_string()),
            ("dropout", c.dropout.to_string()),
            ("projector_hidden", c.projector_hidden.to_string()),
            ("llm_dim", c.llm_dim.to_string()),
            ("tokens", tokens_name(c.tokens).to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        let tensors: Vec<(String, Tensor)> = self
            .named_vars()
            .into_iter()
            .map(|(n, v)| (n, v.as_tensor().clone()))
            .collect();
        let named: Vec<(&str, &Tensor)> = tensors.iter().map(|(n, t)| (n.as_str(), t)).collect();
        crate::checkpoint::write_encoder_file(path, &named, md)
    }

    /// Reads an encoder written by [`GraphEncoder::save`], its [`GnnConfig`] from the file.
    /// Refuses a file trained on another base model than `base_model`
    /// ([`TrainError::BaseModelMismatch`], naming both), and with [`TrainError::EncoderFile`]
    /// one made over other features than `features`, one that is not an encoder file, or
    /// has settings out of range, missing, extra, mis-shaped or non-finite tensors.
    pub fn load(path: &Path, base_model: &str, features: &str, device: &Device) -> Result<Self> {
        let bad = |reason: String| TrainError::EncoderFile {
            path: path.to_path_buf(),
            reason,
        };
        let (bytes, md) = crate::checkpoint::read_for_features(
            path,
            &bad,
            (FORMAT, VERSION),
            base_model,
            features,
        )?;
        let get = |k: &str| crate::checkpoint::meta_value(&md, k, &bad);
        let num = |k: &str| -> Result<usize> {
            get(k)?
                .parse::<usize>()
                .map_err(|_| bad(format!("metadata `{k}` is not a whole number")))
        };
        let cfg = GnnConfig {
            in_dim: num("in_dim")?,
            layers: num("layers")?,
            hidden: num("hidden")?,
            heads: num("heads")?,
            dropout: get("dropout")?
                .parse::<f32>()
                .map_err(|_| bad("metadata `dropout` is not a number".into()))?,
            projector_hidden: num("projector_hidden")?,
            llm_dim: num("llm_dim")?,
            tokens: match get("tokens")?.as_str() {
                "mean" => SoftTokens::Mean,
                "per-subgraph" => SoftTokens::PerSubgraph,
                t => return Err(bad(format!("unknown soft-token mode `{t}`"))),
            },
        };
        let enc = GraphEncoder::new(cfg, 0, device).map_err(|e| bad(e.to_string()))?;
        let mut tensors = candle_core::safetensors::load_buffer(&bytes, device)
            .map_err(|e| bad(format!("reading tensors: {e}")))?;
        for (name, var) in enc.named_vars() {
            let t = crate::checkpoint::take_tensor(&mut tensors, &name, var.dims(), &bad)?;
            var.set(&t).ctx(|| name.clone())?;
        }
        if let Some(extra) = tensors.keys().next() {
            return Err(bad(format!("unexpected tensor `{extra}`")));
        }
        Ok(enc)
    }
}
