//! Summary-augmented LaMP as runs: the paper's Table 3 grid on a LaMP questions file with a
//! local GGUF model ([`GridSpec`]), the offline user summaries it reads
//! ([`SummarizeSpec`]), and the answers without an LLM on the same questions,
//! compared with the grid's best cell ([`BaselinesSpec`]). The prompts are
//! `pgraphrag_prompt::lamp`, the grid and its scores `pgraphrag_eval::lamp_grid`, the baselines
//! `pgraphrag_eval::baselines`. See `docs/lamp.md`.

mod baselines;
mod files;
mod grid;
mod prompts;
mod rescore;
mod summarize;

pub use baselines::{BaselinesReport, BaselinesSpec};
pub use files::read_summaries;
pub use grid::{GridReport, GridSpec};
pub use prompts::PromptsSpec;
pub use rescore::RescoreSpec;
pub use summarize::{SummarizeReport, SummarizeSpec};
