//! LoRA fine-tuning of the generator (a llama-architecture GGUF such as SmolLM2) on
//! `{"prompt", "target"}` JSON lines, resumably, into the adapter that generation loads
//! (`pgraphrag train lora`; `docs/train.md`).
use std::path::{Path, PathBuf};

use pgraphrag_core::Progress;
use pgraphrag_llm::{GgufModel, GgufOptions, LoraTarget};
use pgraphrag_train::{
    AnswerExample, Llama, Lora, LoraConfig, LoraLm, check_answer_file, load_answer_examples,
};
use serde::{Deserialize, Serialize};

use crate::{Error, Result, TrainSettings, training};

/// A LoRA fine-tuning run.
///
/// ```
/// use pgraphrag_runs::lora::LoraSpec;
/// let spec = LoraSpec::paper("model.gguf", "train.jsonl", "adapter.safetensors", "lora.ckpt");
/// assert_eq!((spec.rank, spec.alpha, spec.dropout), (8, 16.0, 0.1));
/// let json = serde_json::to_value(&spec)?;
/// assert_eq!(json["targets"], serde_json::json!(["attn_q", "attn_v"]));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoraSpec {
    /// The GGUF model adapted (its tokenizer formats the examples as generation does).
    pub model: PathBuf,
    /// Training examples (JSON lines of `{"prompt", "target"}`).
    pub train: PathBuf,
    /// Validation examples, when any (the best validation's weights are kept).
    pub val: Option<PathBuf>,
    /// Where the adapter is written (safetensors) when the run ends.
    pub out: PathBuf,
    /// Rank of `B A`.
    pub rank: usize,
    /// The update's scale numerator (`alpha / rank`).
    pub alpha: f32,
    /// Dropout on the adapter's input while training.
    pub dropout: f32,
    /// The projections adapted in every block.
    #[serde(with = "crate::names::seq")]
    pub targets: Vec<LoraTarget>,
    /// Examples longer than this many tokens (prompt and target) are left out.
    pub max_tokens: usize,
    /// The training run.
    pub train_settings: TrainSettings,
}

/// What a [`LoraSpec`] run did.
#[derive(Debug, Clone)]
pub struct LoraReport {
    /// Training examples used.
    pub train_examples: usize,
    /// Validation examples used.
    pub val_examples: usize,
    /// `after N steps …` ([`TrainSettings`]' run summary).
    pub summary: String,
}

impl LoraSpec {
    /// The paper setting (K-RagRec's appendix: rank 8, alpha 16, dropout 0.1 on q and v; at
    /// most 2,048 tokens per example) with the default training run.
    pub fn paper(
        model: impl Into<PathBuf>,
        train: impl Into<PathBuf>,
        out: impl Into<PathBuf>,
        checkpoint: impl Into<PathBuf>,
    ) -> LoraSpec {
        let c = LoraConfig::kragrec();
        LoraSpec {
            model: model.into(),
            train: train.into(),
            val: None,
            out: out.into(),
            rank: c.rank,
            alpha: c.alpha,
            dropout: c.dropout,
            targets: c.targets,
            max_tokens: 2048,
            train_settings: TrainSettings::new(checkpoint),
        }
    }

    /// Trains the adapter and writes it to [`LoraSpec::out`]. The examples' shape and the
    /// rank against the model's projections are checked before any weight loads.
    pub fn run(&self, progress: &dyn Progress) -> Result<LoraReport> {
        let config = LoraConfig {
            rank: self.rank,
            alpha: self.alpha,
            dropout: self.dropout,
            targets: self.targets.clone(),
        };
        check_answer_file(&self.train).map_err(Error::invalid)?;
        if let Some(v) = &self.val {
            check_answer_file(v).map_err(Error::invalid)?;
        }
        let model_input = || format!("the model {}", self.model.display());
        let dims =
            pgraphrag_llm::read_llama_dims(&self.model).map_err(Error::input(model_input()))?;
        config
            .check_dims(&dims)
            .map_err(|e| Error::Setting(format!("rank: {e}")))?;
        // Examples are tokenized exactly as generation formats prompts (chat template, BOS).
        let (examples, val) = {
            let tok = GgufModel::load(&self.model, GgufOptions::default())
                .map_err(Error::input(model_input()))?;
            let load = |p: &Path| -> Result<Vec<AnswerExample>> {
                let d =
                    load_answer_examples(p, &tok, Some(self.max_tokens)).map_err(Error::invalid)?;
                progress.note(&format!(
                    "{}: {} examples ({} lines, {} longer than {} tokens left out)",
                    p.display(),
                    d.examples.len(),
                    d.lines,
                    d.too_long,
                    self.max_tokens
                ));
                Ok(d.examples)
            };
            let examples = load(&self.train)?;
            let val = self
                .val
                .as_deref()
                .map(load)
                .transpose()?
                .unwrap_or_default();
            (examples, val)
        };
        let device = pgraphrag_llm::candle_device(self.train_settings.device)
            .map_err(Error::input("the training device"))?;
        let model = Llama::from_gguf(&self.model, &device).map_err(Error::input(model_input()))?;
        let lora = Lora::new(&model, config, self.train_settings.seed).map_err(Error::invalid)?;
        let job = LoraLm::new(&model, &lora)?;
        let (_, summary) = training::train(&self.train_settings, &job, &examples, &val, progress)?;
        lora.save(&self.out).map_err(Error::work(format!(
            "writing the adapter {}",
            self.out.display()
        )))?;
        Ok(LoraReport {
            train_examples: examples.len(),
            val_examples: val.len(),
            summary,
        })
    }
}

/// Applies the LoRA adapter (checked against the GGUF file it must have been trained on) to
/// the model, on either engine.
pub(crate) fn apply_adapter(
    model: &mut GgufModel,
    gguf: &Path,
    adapter: &Path,
    progress: &dyn Progress,
) -> Result<()> {
    let what = || format!("the adapter {}", adapter.display());
    let lora = Lora::load_for_gguf(gguf, adapter).map_err(Error::input(what()))?;
    let ad = lora.to_adapter()?;
    progress.note(&format!(
        "adapter {}: {} ({} updates, rank {}, alpha {})",
        adapter.display(),
        ad.id(),
        ad.len(),
        lora.config().rank,
        lora.config().alpha
    ));
    model.set_adapter(Some(ad)).map_err(Error::input(what()))
}
