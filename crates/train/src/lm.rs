//! LoRA fine-tuning of a llama model on answer tokens.

use candle_core::{Tensor, Var};

use crate::error::{Ctx, Result, TrainError};
use crate::llama::Llama;
use crate::lora::Lora;
use crate::trainer::Objective;

/// A fine-tuning example: the model reads `prompt` then `answer`, and the loss is the
/// cross-entropy of the `answer` tokens (the prompt's tokens are not scored).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnswerExample {
    /// Prompt token ids (at least one, e.g. BOS and the chat-formatted question).
    pub prompt: Vec<u32>,
    /// Answer token ids (at least one), scored.
    pub answer: Vec<u32>,
}

/// Mean cross-entropy of the answer tokens of `batch` (over all answer tokens of the batch),
/// as a scalar tensor. Sequences are padded on the right, which changes nothing for their
/// real positions (causal attention).
pub fn answer_loss(
    model: &Llama,
    lora: Option<&Lora>,
    batch: &[&AnswerExample],
    dropout_seed: Option<u64>,
) -> Result<Tensor> {
    if batch.is_empty() {
        return Err(TrainError::Input("an empty batch".into()));
    }
    let t = batch
        .iter()
        .map(|e| e.prompt.len() + e.answer.len())
        .max()
        .unwrap_or(0);
    let mut ids = Vec::with_capacity(batch.len() * t);
    let (mut rows, mut targets) = (Vec::new(), Vec::new());
    for (i, e) in batch.iter().enumerate() {
        if e.prompt.is_empty() || e.answer.is_empty() {
            return Err(TrainError::Input(format!(
                "example {i} of the batch has an empty prompt or answer"
            )));
        }
        let start = ids.len();
        ids.extend_from_slice(&e.prompt);
        ids.extend_from_slice(&e.answer);
        ids.resize(start + t, e.prompt[0]);
        for (j, &a) in e.answer.iter().enumerate() {
            rows.push((i * t + e.prompt.len() - 1 + j) as u32);
            targets.push(a);
        }
    }
    let d = model.dims().n_embd;
    let emb = model
        .embed(&ids)?
        .reshape((batch.len(), t, d))
        .ctx(|| "batch embeddings".into())?;
    let h = model.hidden(&emb, lora, dropout_seed)?;
    let dev = model.device();
    let rows = Tensor::new(rows.as_slice(), dev).ctx(|| "answer positions".into())?;
    let sel = h
        .reshape((batch.len() * t, d))
        .and_then(|h| h.index_select(&rows, 0))
        .ctx(|| "selecting answer positions".into())?;
    let logits = model.logits(&sel)?;
    let targets = Tensor::new(targets.as_slice(), dev).ctx(|| "answer tokens".into())?;
    candle_nn::loss::cross_entropy(&logits, &targets).ctx(|| "cross-entropy".into())
}

/// LoRA fine-tuning on [`AnswerExample`]s: the [`Objective`] of a frozen [`Llama`] with
/// trainable [`Lora`] adapters, loss [`answer_loss`].
///
/// ```no_run
/// use candle_core::Device;
/// use pgraphrag_train::{AnswerExample, Flow, Llama, Lora, LoraConfig, LoraLm, TrainConfig, Trainer};
/// let model = Llama::from_gguf("models/SmolLM2-135M-Instruct.Q4_1.gguf".as_ref(), &Device::Cpu)?;
/// let lora = Lora::new(&model, LoraConfig::kragrec(), 0)?;
/// let data = vec![AnswerExample { prompt: vec![1, 504, 3458], answer: vec![330] }];
/// let job = LoraLm::new(&model, &lora)?;
/// let trainer = Trainer::new(TrainConfig::default(), Some("runs/ckpt.safetensors".into()))?;
/// trainer.run(&job, &data, &[], &mut |_| Flow::Continue)?;
/// lora.save("runs/adapter.safetensors".as_ref())?;
/// # Ok::<(), pgraphrag_train::TrainError>(())
/// ```
pub struct LoraLm<'a> {
    model: &'a Llama,
    lora: &'a Lora,
}

impl<'a> LoraLm<'a> {
    /// The objective for `lora` on `model` (an adapter made for another model is refused).
    pub fn new(model: &'a Llama, lora: &'a Lora) -> Result<Self> {
        if lora.base_id() != model.base_id() {
            return Err(TrainError::BaseModelMismatch {
                path: "<in memory>".into(),
                expected: model.base_id().to_string(),
                found: lora.base_id().to_string(),
            });
        }
        Ok(LoraLm { model, lora })
    }
}

impl Objective for LoraLm<'_> {
    type Example = AnswerExample;

    fn named_vars(&self) -> Vec<(String, Var)> {
        self.lora.named_vars()
    }

    fn identity(&self) -> String {
        format!("lora-lm|{}|{:?}", self.model.base_id(), self.lora.config())
    }

    fn loss(&self, batch: &[&AnswerExample], dropout_seed: Option<u64>) -> Result<Tensor> {
        answer_loss(self.model, Some(self.lora), batch, dropout_seed)
    }

    fn tokens(&self, batch: &[&AnswerExample]) -> usize {
        batch.iter().map(|e| e.prompt.len() + e.answer.len()).sum()
    }
}
