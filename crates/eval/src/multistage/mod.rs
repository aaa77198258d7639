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

use crate::Error;

mod cells;
mod export;
mod grid;
#[cfg(test)]
mod grid_tests;
mod plan;
mod prepare;
mod results;

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
pub use results::{
    CellScores, MultistageRow, MultistageTable, PredictionRecord, SIGNIFICANCE, score_cell,
};

/// The start of the current document inside its immediate context: the longest tail of
/// `immediate_context` that `target` begins with, starting at the beginning or right after a
/// newline. The builder writes `FirstKCharacters(title + "\n" + body)` and `target` = body
/// (`docs/multistage.md`), so this is the body's start without the title ("the start of the
/// current document included in the immediate context", l.196); empty when the title fills
/// all 150 characters.
///
/// ```
/// use pgraphrag_eval::multistage::document_start;
/// assert_eq!(document_start("Lunch\nThe team lunch mo", "The team lunch moves."), "The team lunch mo");
/// assert_eq!(document_start("No title here", "No title here, really."), "No title here");
/// assert_eq!(document_start("A very long title", "Body."), "");
/// ```
pub fn document_start<'a>(immediate_context: &'a str, target: &str) -> &'a str {
    let starts =
        std::iter::once(0).chain(immediate_context.match_indices('\n').map(|(i, _)| i + 1));
    for i in starts {
        let tail = &immediate_context[i..];
        if target.starts_with(tail) {
            return tail;
        }
    }
    ""
}

/// `output` with `start` prepended (l.196): joined by one space when neither has whitespace at
/// the joint (ours; the paper says only "prepend"), as is otherwise.
///
/// ```
/// use pgraphrag_eval::multistage::prepend_start;
/// assert_eq!(prepend_start("Hi all, the", "venue is booked."), "Hi all, the venue is booked.");
/// assert_eq!(prepend_start("Hi all,\n", "Bye"), "Hi all,\nBye");
/// assert_eq!(prepend_start("", "Bye"), "Bye");
/// ```
pub fn prepend_start(start: &str, output: &str) -> String {
    if start.is_empty() {
        return output.to_string();
    }
    let joint = start.ends_with(char::is_whitespace)
        || output.starts_with(char::is_whitespace)
        || output.is_empty();
    if joint {
        format!("{start}{output}")
    } else {
        format!("{start} {output}")
    }
}

/// An example's id and error, as one of this module's errors: a failed stage of a model is
/// [`Error::Generation`] (its source the stage's error); anything else (a ranker's or a weak
/// label's bad input) is [`Error::InvalidInput`] with the whole error chain.
pub(crate) fn stage_error(id: &str, what: &str, e: pgraphrag_stages::Error) -> Error {
    match e {
        pgraphrag_stages::Error::Stage { stage, .. }
            if stage == "summarization" || stage == "synthesis" =>
        {
            Error::Generation {
                user_id: id.to_string(),
                config: what.to_string(),
                source: pgraphrag_core::Error::backend(e),
            }
        }
        e => Error::InvalidInput(format!(
            "example {id:?} ({what}): {}",
            pgraphrag_core::error_chain(&e)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_document_start_skips_the_title_only() {
        // A title with a newline of its own: the body starts after the last one that matches.
        assert_eq!(document_start("A\nB\nbody st", "body start"), "body st");
        // The whole context when there is no title.
        assert_eq!(
            document_start("line one\nline", "line one\nline two"),
            "line one\nline"
        );
        assert_eq!(document_start("", "x"), "");
        assert_eq!(prepend_start("a", ""), "a");
        assert_eq!(prepend_start("a", " b"), "a b");
    }
}
