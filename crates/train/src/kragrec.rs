//! K-RagRec's training objective: graph soft tokens after BOS, the frozen LLM (optionally with
//! LoRA), the cross-entropy of the answer letter.

use candle_core::{DType, Tensor, Var};

use crate::error::{Ctx, Result, TrainError};
use crate::gnn::Subgraph;
use crate::llama::Llama;
use crate::lora::Lora;
use crate::soft_prompt::GraphTokens;
use crate::trainer::Objective;

/// One K-RagRec training row: `prefix` tokens (BOS and whatever precedes the graph tokens,
/// e.g. `<s>[INST]`), the soft tokens of `graphs`, the `rest` of the prompt (instruction,
/// history, options, the opened answer turn), and the answer letter's token id.
#[derive(Debug, Clone, PartialEq)]
pub struct KragrecExample {
    /// Tokens before the soft tokens (at least BOS in K-RagRec).
    pub prefix: Vec<u32>,
    /// The row's retrieved sub-graphs (none when the popularity gate selected no history
    /// item: the row then has no soft tokens).
    pub graphs: Vec<Subgraph>,
    /// Tokens after the soft tokens (at least one: the answer is predicted after the last).
    pub rest: Vec<u32>,
    /// The answer letter's token id.
    pub answer: u32,
}

/// Mean cross-entropy of the answer letters of `batch` (each predicted after its last prompt
/// token), with the soft tokens of each row's sub-graphs from `encoder` (the graph encoder,
/// or any [`GraphTokens`]) placed between
/// `prefix` and `rest`, through `model` (with `lora` when given). A row without sub-graphs
/// (its popularity gate selected no history item) has no soft tokens: `prefix` then `rest`.
pub fn kragrec_loss(
    model: &Llama,
    encoder: &dyn GraphTokens,
    lora: Option<&Lora>,
    batch: &[&KragrecExample],
    dropout_seed: Option<u64>,
) -> Result<Tensor> {
    let logits = answer_logits(model, encoder, lora, batch, dropout_seed)?;
    let answers: Vec<u32> = batch.iter().map(|e| e.answer).collect();
    let answers =
        Tensor::new(answers.as_slice(), model.device()).ctx(|| "answer letters".into())?;
    candle_nn::loss::cross_entropy(&logits, &answers).ctx(|| "cross-entropy".into())
}

/// The next-token logits after each row's last prompt token, `[batch.len(), vocab]`: the
/// forward pass [`kragrec_loss`] trains and the evaluation scores letters with.
pub(crate) fn answer_logits(
    model: &Llama,
    encoder: &dyn GraphTokens,
    lora: Option<&Lora>,
    batch: &[&KragrecExample],
    dropout_seed: Option<u64>,
) -> Result<Tensor> {
    if batch.is_empty() {
        return Err(TrainError::Input("an empty batch".into()));
    }
    // Only rows with sub-graphs are encoded (together, so BatchNorm sees them as one batch).
    let rows: Vec<&[Subgraph]> = batch
        .iter()
        .filter(|e| !e.graphs.is_empty())
        .map(|e| e.graphs.as_slice())
        .collect();
    let soft = if rows.is_empty() {
        Vec::new()
    } else {
        encoder.soft_tokens_batch(&rows, dropout_seed)?
    };
    let d = model.dims().n_embd;
    if let Some(w) = soft
        .iter()
        .map(|s| s.dims())
        .find(|s| s.len() != 2 || s[1] != d)
    {
        return Err(TrainError::Config(format!(
            "the soft tokens are {w:?}, the model's hidden size is {d}"
        )));
    }
    let mut soft = soft.into_iter();
    let mut seqs = Vec::with_capacity(batch.len());
    for (i, e) in batch.iter().enumerate() {
        if e.rest.is_empty() {
            return Err(TrainError::Input(format!(
                "example {i} of the batch has no prompt after the soft tokens"
            )));
        }
        seqs.push(if e.graphs.is_empty() {
            let ids: Vec<u32> = e.prefix.iter().chain(&e.rest).copied().collect();
            model.embed(&ids)?
        } else {
            let s = soft
                .next()
                .ok_or_else(|| TrainError::Input("fewer soft tokens than rows".into()))?;
            model.embed_with_soft_tokens(&e.prefix, &s, &e.rest)?
        });
    }
    let t = seqs
        .iter()
        .map(|s| s.dim(0).unwrap_or(0))
        .max()
        .unwrap_or(0);
    let dev = model.device();
    let mut padded = Vec::with_capacity(seqs.len());
    let mut last = Vec::with_capacity(seqs.len());
    for (i, s) in seqs.into_iter().enumerate() {
        let len = s.dim(0).ctx(|| "sequence length".into())?;
        last.push((i * t + len - 1) as u32);
        padded.push(if len < t {
            Tensor::zeros((t - len, d), DType::F32, dev)
                .and_then(|z| Tensor::cat(&[s, z], 0))
                .ctx(|| "padding".into())?
        } else {
            s
        });
    }
    let x = Tensor::stack(&padded, 0).ctx(|| "batching".into())?;
    let h = model.hidden(&x, lora, dropout_seed)?;
    let last = Tensor::new(last.as_slice(), dev).ctx(|| "answer positions".into())?;
    let sel = h
        .reshape((batch.len() * t, d))
        .and_then(|h| h.index_select(&last, 0))
        .ctx(|| "selecting answer positions".into())?;
    model.logits(&sel)
}

/// K-RagRec's training job ([`Objective`]): the graph encoder and projector trained (or
/// another [`GraphTokens`], e.g. the "-Encoding" ablation's [`crate::SoftPrompt`]), the LLM
/// frozen, or with LoRA adapters trained too (the paper's "LoRA w/ K-RagRec").
pub struct Kragrec<'a> {
    model: &'a Llama,
    encoder: &'a dyn GraphTokens,
    lora: Option<&'a Lora>,
}

impl<'a> Kragrec<'a> {
    /// The job for `encoder` (and `lora`, if given) on `model`.
    pub fn new(
        model: &'a Llama,
        encoder: &'a dyn GraphTokens,
        lora: Option<&'a Lora>,
    ) -> Result<Self> {
        if let Some(l) = lora
            && l.base_id() != model.base_id()
        {
            return Err(TrainError::BaseModelMismatch {
                path: "<in memory>".into(),
                expected: model.base_id().to_string(),
                found: l.base_id().to_string(),
            });
        }
        Ok(Kragrec {
            model,
            encoder,
            lora,
        })
    }
}

impl Objective for Kragrec<'_> {
    type Example = KragrecExample;

    fn named_vars(&self) -> Vec<(String, Var)> {
        let mut v = self.encoder.named_vars();
        if let Some(l) = self.lora {
            v.extend(l.named_vars());
        }
        v
    }

    fn identity(&self) -> String {
        format!(
            "kragrec|{}|{}|{:?}",
            self.model.base_id(),
            self.encoder.identity(),
            self.lora.map(|l| l.config())
        )
    }

    fn loss(&self, batch: &[&KragrecExample], dropout_seed: Option<u64>) -> Result<Tensor> {
        kragrec_loss(self.model, self.encoder, self.lora, batch, dropout_seed)
    }

    fn tokens(&self, batch: &[&KragrecExample]) -> usize {
        batch
            .iter()
            .map(|e| e.prefix.len() + e.rest.len() + e.graphs.len())
            .sum()
    }
}
