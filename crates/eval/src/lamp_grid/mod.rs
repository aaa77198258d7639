//! The summary-augmented LaMP paper's experiment grid (its Table 3): baselines with k ∈ {0, 1, 4}
//! retrieved profile items and the user summary with k ∈ {0, 1}, each a [`LampConfig`], run
//! through the resumable [`CachedGenerator`](crate::CachedGenerator) (one committed row per answer: a rerun computes
//! nothing twice), scored as `LaMP/eval/evaluation.py` scores each task, and summarised per
//! configuration with bootstrap intervals and paired tests against a baseline.
//!
//! ```
//! use std::collections::HashMap;
//! use pgraphrag_core::{GenParams, Generator, LampGold, LampProfileItem, LampQuestion, LampTask, NoProgress, Prompt, Result};
//! use pgraphrag_eval::lamp_grid::{LampGrid, table3_configs};
//! use pgraphrag_eval::{CachedGenerator, GenerationCache};
//! # use pgraphrag_prompt::lamp::{LampTokenizer, TokenizerError};
//! # struct Chars;
//! # impl LampTokenizer for Chars {
//! #     fn input_ids(&self, t: &str) -> std::result::Result<Vec<u32>, TokenizerError> { Ok(t.chars().map(u32::from).collect()) }
//! #     fn truncated_ids(&self, t: &str, m: i64) -> std::result::Result<Vec<u32>, TokenizerError> {
//! #         let m = usize::try_from(m).map_err(|_| TokenizerError::NegativeMaxLength { max_length: m })?;
//! #         Ok(self.input_ids(t)?.into_iter().take(m).collect())
//! #     }
//! #     fn decode(&self, ids: &[u32]) -> std::result::Result<String, TokenizerError> { Ok(ids.iter().filter_map(|&c| char::from_u32(c)).collect()) }
//! # }
//! /// Answers "4" when the prompt shows a profile item scored 4, else "2": a test double.
//! struct Fours;
//! impl Generator for Fours {
//!     fn generate(&self, p: &Prompt, _: &GenParams) -> Result<String> {
//!         Ok(if p.messages()[0].content.contains("4 is the score") { "4".into() } else { "2".into() })
//!     }
//! }
//! let input = "What is the score of the following review on a scale of 1 to 5? just answer with 1, 2, 3, 4, or 5 without further explanation. review: good";
//! let qs = vec![LampQuestion::new("q1", input)
//!     .with_profile(vec![LampProfileItem::new("p").with("text", "good").with("score", "4")])];
//! let golds = vec![LampGold { id: "q1".into(), output: "4".into() }];
//! let summaries = HashMap::from([("q1".to_string(), "most common positive score: 4".to_string())]);
//! let grid = LampGrid::new(LampTask::Lamp3, table3_configs());
//! let plan = grid.plan(&qs, &Chars, Some(&summaries)).unwrap();
//! let cached = CachedGenerator::new(Fours, "fours", GenerationCache::in_memory().unwrap());
//! let runs = grid.run(&plan, &cached, &[0], &NoProgress).unwrap();
//! let table = grid.results("toy", &plan, &runs, &golds).unwrap();
//! assert_eq!(table.rows.len(), 5);
//! assert_eq!(table.rows[0].config, "base_k0"); // the input alone
//! assert_eq!(table.rows[0].mean[0], 2.0);       // MAE |2 - 4|
//! assert_eq!(table.rows[1].mean[0], 0.0);       // base_k1 shows the profile's item
//! assert!(table.rows[4].config == "sum_k1" && table.rows[4].mean[0] == 0.0);
//! ```

mod grid;
mod results;

pub use grid::{AnswerReading, LampCellRun, LampConfig, LampGrid, LampPlan, table3_configs};
pub use results::{LampCellScores, LampRow, LampScorer, LampTable};
