//! What the commands that summarise with a local model share (`summarize`, `queue submit
//! summarize`, `bench --item-summaries`, `multistage run`): the summarizer's flags and the
//! fitting budget on the model.
use pgraphrag_core::Prompt;
use pgraphrag_llm::GgufModel;
use pgraphrag_stages::Budget;

use crate::error::usage;

/// The summarizer's options, shared by `pgraphrag summarize` and `pgraphrag queue submit
/// summarize`.
#[derive(clap::Args, Debug)]
pub struct SummarizerArgs {
    /// Only the first N distinct users of the input.
    #[arg(long)]
    pub limit: Option<usize>,
    /// Users handed to the model per call (the native engine decodes up to 8 at a time).
    #[arg(long, default_value_t = 8, value_parser = crate::args::at_least_one)]
    pub batch: usize,
    /// Most tokens per summary.
    #[arg(long, default_value_t = 128, value_parser = crate::args::at_least_one)]
    pub max_new_tokens: usize,
    /// The summarizer's context in tokens: prompt and summary together (the paper's Vicuna had
    /// 2,048); profile entries beyond it are dropped, most recent kept.
    #[arg(long, default_value_t = 2048, value_parser = crate::args::at_least_one)]
    pub context: usize,
    /// Accept a store that holds summaries of other models or prompt versions only.
    #[arg(long)]
    pub new_config: bool,
    /// Summaries per `user` (`user_id`, else the question id; LaMP's one question per user) or
    /// per `question` (several questions per user, each with its own time-ordered profile).
    #[arg(long, default_value = "user", value_parser = crate::args::summary_scope)]
    pub summary_scope: pgraphrag_core::SummaryScope,
}

/// The fitting budget of a summarizer on `model`: `context` tokens for prompt and summary,
/// `max_new_tokens` of summary, and the chat template's own tokens measured on the model.
pub(crate) fn summary_budget(
    model: &GgufModel,
    context: usize,
    max_new_tokens: usize,
) -> anyhow::Result<Budget> {
    if context > model.context_length() {
        return Err(usage(format!(
            "--context {context} exceeds the model's context of {} tokens",
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
        return Err(usage(format!(
            "--context {context} leaves no room for a prompt after {max_new_tokens} new tokens and the chat template's {reserve} tokens"
        )));
    }
    Ok(budget)
}
