//! What the commands that summarise with a local model share (`summarize`, `queue submit
//! summarize`): the summarizer's flags. The fitting budget on the model is
//! `pgraphrag_runs::summary_budget`.
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
