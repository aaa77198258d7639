//! Generation: one prompt at a time, or continuously batched on the native engine.

use pgraphrag_core::{GenParams, Generator, Prompt};

use super::GgufModel;
use super::options::Generation;
use super::sampler::{SeqGen, validate_params};
use super::weights::Weights;
use crate::error::{LlmError, Result};
use crate::gguf::options::{ContextOverflow, Engine};
use crate::native::Seq;

impl GgufModel {
    /// Generates like [`Generator::generate`], returning token counts and timings too.
    pub fn generate_full(&self, prompt: &Prompt, params: &GenParams) -> Result<Generation> {
        self.generate_tokens(self.prompt_tokens(prompt)?, params)
    }

    /// Generates from prompt token ids (as [`Self::prompt_tokens`] returns them), applying the
    /// context-overflow policy, stop tokens, stop strings and `max_tokens`.
    pub fn generate_tokens(&self, ids: Vec<u32>, params: &GenParams) -> Result<Generation> {
        if matches!(self.engine, Engine::Native) {
            let mut out = None;
            self.generate_batch_tokens(vec![ids], params, &mut |_, r| out = Some(r));
            return out.unwrap_or_else(|| Err(LlmError::InvalidParams("no prompt".into())));
        }
        validate_params(params)?;
        let ids = self.fit_context(ids, params.max_tokens)?;
        let mut weights = self.lock()?;
        weights.reset();
        let mut st = SeqGen::new(ids.len(), params);
        if params.max_tokens == 0 {
            return Ok(st.out);
        }
        let mut logits = weights.forward(&ids, 0).map_err(|e| {
            LlmError::model(format!("processing the {}-token prompt", ids.len()), e)
        })?;
        while let Some(next) = st.push(self, &logits)? {
            logits = weights
                .forward(&[next], st.pos)
                .map_err(|e| LlmError::model(format!("decoding at position {}", st.pos), e))?;
            st.pos += 1;
        }
        Ok(st.out)
    }

    /// Generates a completion for each prompt, as [`Self::generate_full`] would one at a time
    /// (the same tokens for the same seed), but faster on the native engine: up to 8 sequences
    /// decode together, each step reading the weights once for all of them, and when one
    /// finishes the next prompt is processed and takes its place (continuous batching). The result for each prompt is independent (one bad prompt does not fail
    /// the others). On the candle engine this is a loop over [`Self::generate_full`].
    ///
    /// ```no_run
    /// use pgraphrag_core::{GenParams, Prompt};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let m = pgraphrag_llm::GgufModel::load("models/SmolLM2-135M-Instruct.Q4_1.gguf".as_ref(), Default::default())?;
    /// let prompts = [Prompt::user("Name a colour."), Prompt::user("Name a fruit.")];
    /// for g in m.generate_batch_full(&prompts, &GenParams { max_tokens: 8, ..Default::default() }) {
    ///     println!("{}", g?.text);
    /// }
    /// # Ok(()) }
    /// ```
    pub fn generate_batch_full(
        &self,
        prompts: &[Prompt],
        params: &GenParams,
    ) -> Vec<Result<Generation>> {
        let mut results: Vec<Option<Result<Generation>>> =
            (0..prompts.len()).map(|_| None).collect();
        self.generate_batch_full_each(prompts, params, &mut |i, r| results[i] = Some(r));
        collect_results(results)
    }

    /// [`Self::generate_batch_full`], handing each prompt's result to `done(index, result)` the
    /// moment it is finished (the native engine finishes sequences one by one, in any order), so
    /// a caller can store it before the rest of the batch is done. Every index is reported
    /// exactly once; the results are those of [`Self::generate_batch_full`].
    pub fn generate_batch_full_each(
        &self,
        prompts: &[Prompt],
        params: &GenParams,
        done: &mut (dyn FnMut(usize, Result<Generation>) + Send),
    ) {
        let ids: Vec<Result<Vec<u32>>> = prompts.iter().map(|p| self.prompt_tokens(p)).collect();
        if !matches!(self.engine, Engine::Native) {
            for (i, ids) in ids.into_iter().enumerate() {
                done(i, ids.and_then(|ids| self.generate_tokens(ids, params)));
            }
            return;
        }
        let mut slots = Vec::new();
        let mut lists = Vec::new();
        for (i, ids) in ids.into_iter().enumerate() {
            match ids {
                Ok(v) => {
                    slots.push(i);
                    lists.push(v);
                }
                Err(e) => done(i, Err(e)),
            }
        }
        self.generate_batch_tokens(lists, params, &mut |j, r| done(slots[j], r));
    }

    /// The native engine's batched generation from token ids.
    /// Each result goes to `done(index into lists, result)` as soon as it is finished.
    fn generate_batch_tokens(
        &self,
        lists: Vec<Vec<u32>>,
        params: &GenParams,
        done: &mut (dyn FnMut(usize, Result<Generation>) + Send),
    ) {
        let n = lists.len();
        let fail_all = |done: &mut (dyn FnMut(usize, Result<Generation>) + Send), msg: String| {
            for i in 0..n {
                done(i, Err(LlmError::InvalidParams(msg.clone())));
            }
        };
        if let Err(e) = validate_params(params) {
            return fail_all(done, e.to_string());
        }
        let mut weights = match self.lock() {
            Ok(w) => w,
            Err(e) => return fail_all(done, e.to_string()),
        };
        let Some(model) = weights.native_mut() else {
            return fail_all(done, "not the native engine".into());
        };
        let pool = model.pool();
        pool.install(move || {
            // Continuous batching: up to DECODE_BATCH sequences decode together; whenever one
            // finishes, the next prompt is processed and joins. Every sequence's tokens are
            // independent of its companions, so this only changes the speed.
            let mut queue = lists.into_iter().enumerate();
            let mut live: Vec<(usize, Seq, SeqGen, u32)> = Vec::new();
            loop {
                while live.len() < DECODE_BATCH {
                    let Some((i, ids)) = queue.next() else { break };
                    let ids = match self.fit_context(ids, params.max_tokens) {
                        Ok(v) => v,
                        Err(e) => {
                            done(i, Err(e));
                            continue;
                        }
                    };
                    let mut st = SeqGen::new(ids.len(), params);
                    if params.max_tokens == 0 {
                        done(i, Ok(st.out));
                        continue;
                    }
                    model.reserve(ids.len() + params.max_tokens + 1);
                    // Under Prefill::Rowwise the KV cache of a prefix shared with a recent
                    // prompt is reused (bit-identical to computing it); otherwise this is empty.
                    let mut seq = model.cached_prefix(&ids);
                    let kept = seq.len();
                    let step = model
                        .step(&mut [&mut seq], &[&ids[kept..]], true)
                        .map_err(|e| {
                            LlmError::model(format!("processing the {}-token prompt", ids.len()), e)
                        })
                        .map(|mut l| l.pop().unwrap_or_default());
                    if step.is_ok() {
                        model.remember(&ids, &seq);
                    }
                    match step.and_then(|l| st.push(self, &l)) {
                        Ok(Some(next)) => live.push((i, seq, st, next)),
                        Ok(None) => done(i, Ok(st.out)),
                        Err(e) => done(i, Err(e)),
                    }
                }
                if live.is_empty() {
                    break;
                }
                let toks: Vec<[u32; 1]> = live.iter().map(|l| [l.3]).collect();
                let tok_refs: Vec<&[u32]> = toks.iter().map(|t| t.as_slice()).collect();
                let mut seqs: Vec<&mut Seq> = live.iter_mut().map(|l| &mut l.1).collect();
                let step = model.step(&mut seqs, &tok_refs, false);
                drop(seqs);
                let logits = match step {
                    Ok(l) => l,
                    Err(e) => {
                        for (i, _, st, _) in live.drain(..) {
                            done(
                                i,
                                Err(LlmError::model(
                                    format!("decoding at position {}", st.pos),
                                    e.clone(),
                                )),
                            );
                        }
                        continue;
                    }
                };
                let mut next_live = Vec::with_capacity(live.len());
                for ((i, seq, mut st, _), l) in live.drain(..).zip(logits) {
                    st.pos += 1;
                    match st.push(self, &l) {
                        Ok(Some(next)) => next_live.push((i, seq, st, next)),
                        Ok(None) => done(i, Ok(st.out)),
                        Err(e) => done(i, Err(e)),
                    }
                }
                live = next_live;
            }
        })
    }

    pub(super) fn lock(&self) -> Result<std::sync::MutexGuard<'_, Weights>> {
        self.weights.lock().map_err(|_| {
            LlmError::InvalidParams(
                "the model mutex is poisoned (an earlier generation panicked)".into(),
            )
        })
    }

    /// Applies the context-overflow policy to a prompt.
    fn fit_context(&self, mut ids: Vec<u32>, max_tokens: usize) -> Result<Vec<u32>> {
        if ids.is_empty() {
            return Err(LlmError::InvalidParams(
                "the prompt encodes to no tokens".into(),
            ));
        }
        if ids.len() + max_tokens > self.context {
            match self.overflow {
                ContextOverflow::Error => {
                    return Err(LlmError::PromptTooLong {
                        prompt_tokens: ids.len(),
                        max_tokens,
                        context: self.context,
                    });
                }
                ContextOverflow::TruncateLeft => {
                    let keep_bos = self.tokenizer.bos().is_some()
                        && ids.first() == self.tokenizer.bos().as_ref()
                        && self.tokenizer.add_bos();
                    let room = self.context.saturating_sub(max_tokens);
                    if room <= usize::from(keep_bos) {
                        return Err(LlmError::PromptTooLong {
                            prompt_tokens: ids.len(),
                            max_tokens,
                            context: self.context,
                        });
                    }
                    let cut = ids.len() - room;
                    if keep_bos {
                        ids.drain(1..=cut);
                    } else {
                        ids.drain(..cut);
                    }
                }
            }
        }
        Ok(ids)
    }
}

/// Sequences the native engine decodes together in [`GgufModel::generate_batch_full`] (its
/// row kernels share one pass over the weights among up to 8 vectors).
const DECODE_BATCH: usize = 8;

/// Per-prompt results of a batch; a slot never filled is an error, not a panic.
fn collect_results(results: Vec<Option<Result<Generation>>>) -> Vec<Result<Generation>> {
    results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(LlmError::InvalidParams("no result".into()))))
        .collect()
}

impl Generator for GgufModel {
    fn generate(&self, prompt: &Prompt, params: &GenParams) -> pgraphrag_core::Result<String> {
        Ok(self.generate_full(prompt, params)?.text)
    }
    fn generate_batch(
        &self,
        prompts: &[Prompt],
        params: &GenParams,
    ) -> Vec<pgraphrag_core::Result<String>> {
        self.generate_batch_full(prompts, params)
            .into_iter()
            .map(|r| r.map(|g| g.text).map_err(Into::into))
            .collect()
    }
    fn generate_batch_each(
        &self,
        prompts: &[Prompt],
        params: &GenParams,
        done: &mut (dyn FnMut(usize, pgraphrag_core::Result<String>) + Send),
    ) {
        self.generate_batch_full_each(prompts, params, &mut |i, r| {
            done(i, r.map(|g| g.text).map_err(Into::into))
        });
    }
}
