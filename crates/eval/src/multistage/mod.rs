//! The multistage writing paper's experiments (Li et al. 2023, "Teach LLMs to Personalize",
//! arXiv 2308.07968, §6–7; cited as l.N of `shared/papers/multistage-writing.txt`): the cells
//! of its Table 2 as zero-shot configurations of a local model, and the training data a
//! fine-tuning run would use instead.
//!
//! * prepare: the non-generation pipeline of one example ([`Preparer`]): its past
//!   documents, the ranked entries of every ranker (cut at 2,500 characters), the
//!   context-independent keywords, the summary and synthesis weak labels, each optional, with
//!   the seconds spent per stage ([`StageTimes`]); [`train_idf`] builds the IDF table once
//!   over the training split.
//! * [`MultistageGrid`]: the cells ([`table2_cells`]), each distinct prompt generated once
//!   through the [`CachedGenerator`](crate::CachedGenerator) (resumable: every answer is
//!   committed as it finishes), the LLM summaries and syntheses through the same cache, the
//!   best ranker and summary picked by ROUGE-1 unless given.
//! * [`MultistageGrid::results`]: corpus BLEU (sacreBLEU), ROUGE-1/2/L F-measures (rouge-score),
//!   95% bootstrap intervals over examples and paired two-sided t-tests against `ImmedCtx` and
//!   against `RankDocBM25`, as Table 2 ([`MultistageTable`]: Markdown, CSV, SVG).
//! * [`export_records`]: `{prompt, target}` records of every training example (summary and
//!   synthesis weak labels, generation, author-distinction pairs 1:1).
//!
//! ```
//! use pgraphrag_core::{GenParams, Generator, NoProgress, Prompt, Result};
//! use pgraphrag_corpora::{lamp::SplitName, multistage::{ContextDoc, Example}};
//! use pgraphrag_eval::multistage::{Cell, CellKind, LlmStages, MultistageGrid, Preparer, RankerName};
//! use pgraphrag_eval::{CachedGenerator, GenerationCache};
//! use pgraphrag_stages::multistage::{ContextRanker, RankDocBM25};
//! /// Copies the first past passage's second line (its body's first line): a test double.
//! struct Copy;
//! impl Generator for Copy {
//!     fn generate(&self, p: &Prompt, _: &GenParams) -> Result<String> {
//!         let m = &p.messages()[0].content;
//!         Ok(m.split("past passages: ").nth(1).and_then(|s| s.lines().nth(1)).unwrap_or("").to_string())
//!     }
//! }
//! let doc = |id: &str, time, text: &str| ContextDoc { doc_id: id.into(), time, text: text.into() };
//! let ex = Example { id: "m3".into(), author: "kim".into(), split: SplitName::Test, time: 3,
//!     immediate_context: "Lunch\nThe team lunch moves".into(),
//!     target: "The team lunch moves to Friday at noon.".into(),
//!     context: vec![doc("m0", 0, "Rain\nIt rained."), doc("m1", 1, "Budget\nThe budget is due."),
//!                   doc("m2", 2, "Lunch\nTeam lunch on Friday at noon.")] };
//! let bm25 = RankDocBM25::bm25();
//! let preparer = Preparer::new(vec![(RankerName::RankDocBM25, &bm25 as &dyn ContextRanker)]);
//! let (prepared, _times) = preparer.prepare_all(std::slice::from_ref(&ex), &NoProgress).unwrap();
//! let grid = MultistageGrid::new(vec![Cell::paper(CellKind::ImmedCtx), Cell::paper(CellKind::RankDocBM25)]);
//! let cached = CachedGenerator::new(Copy, "copy", GenerationCache::in_memory().unwrap());
//! let run = grid.run(&[ex.clone()], &prepared, &cached, &LlmStages::default(), &NoProgress).unwrap();
//! assert_eq!(run.cells[0].outputs[0], ""); // ImmedCtx has no past passages
//! assert_eq!(run.cells[1].outputs[0], "Team lunch on Friday at noon."); // BM25's best entry
//! let table = grid.results("toy", &[ex], &run).unwrap();
//! assert_eq!(table.rows[1].cell, "RankDocBM25");
//! assert!(table.rows[1].mean[1] > table.rows[0].mean[1]); // ROUGE-1
//! ```
//!
//! Choices (the paper's lines): every cell is zero-shot with one model (the paper fine-tunes
//! T5-11B, l.180, and runs PaLM 2 zero-shot for `LLMZeroShot` only, l.198); `UserID` (a model
//! trained with user ids, l.194) and `AuthorPred` (multitask training, l.208) need training and
//! are not cells. See `docs/multistage.md`, "Grid" and "Export".

mod cells;
mod export;
mod grid;
#[cfg(test)]
mod grid_tests;
mod plan;
mod prepare;
mod results;
mod score;
mod start;

pub use cells::{
    Cell, CellKind, PrependStart, RankerName, SectionInputs, parse_cells, parse_summary,
    summary_name, table2_cells,
};
pub use export::{Export, ExportOptions, ExportStats, export_records};
pub use grid::{CellRun, GridRun, GridStats, LlmStages};
pub use plan::{BestChoice, MultistageGrid};
pub use prepare::{
    Prepared, Preparer, StageTimes, SummaryLabeler, SynthesisLabeler, past_docs, train_documents,
    train_idf,
};
pub use results::{MultistageRow, MultistageTable, PredictionRecord, SIGNIFICANCE};
pub use score::{CellScores, score_cell};
pub use start::{document_start, prepend_start};
