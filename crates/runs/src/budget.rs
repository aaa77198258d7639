//! The fitting budget of a summarizer on a local model, which every summarizing run shares.
use pgraphrag_core::Prompt;
use pgraphrag_llm::GgufModel;
use pgraphrag_stages::Budget;

use crate::{Error, Result};

/// The fitting budget of a summarizer on `model`: `context` tokens for prompt and summary,
/// `max_new_tokens` of summary, and the chat template's own tokens measured on the model. A
/// context beyond the model's, or one that leaves no room for a prompt, is a setting error.
///
/// ```no_run
/// use pgraphrag_llm::{GgufModel, GgufOptions};
/// let model = GgufModel::load("models/SmolLM2-135M-Instruct.Q4_1.gguf".as_ref(), GgufOptions::default())?;
/// let budget = pgraphrag_runs::summary_budget(&model, 2048, 128)?;
/// assert!(budget.input_tokens().is_some());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn summary_budget(model: &GgufModel, context: usize, max_new_tokens: usize) -> Result<Budget> {
    if context > model.context_length() {
        return Err(Error::Setting(format!(
            "a context of {context} tokens exceeds the model's context of {} tokens",
            model.context_length()
        )));
    }
    // The tokens the chat template adds around the message (SmolLM2: its default system prompt).
    let reserve = model.prompt_tokens(&Prompt::user(""))?.len();
    let budget = Budget {
        context,
        max_new_tokens,
        reserve,
    };
    if budget.input_tokens().is_none() {
        return Err(Error::Setting(format!(
            "a context of {context} tokens leaves no room for a prompt after {max_new_tokens} new tokens and the chat template's {reserve} tokens"
        )));
    }
    Ok(budget)
}
