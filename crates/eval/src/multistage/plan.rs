//! The grid's plan: its cells and settings, what they need from the earlier stages, and how
//! the best ranker and summary are chosen.
use pgraphrag_core::GenParams;
use pgraphrag_corpora::multistage::Example;
use pgraphrag_stages::multistage::ContextMode;
use serde::Serialize;

use super::{Cell, CellKind, Prepared, RankerName};
use crate::{Error, Result, Wrapper};

/// How a best configuration was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BestChoice {
    /// Given by the caller ([`MultistageGrid::best_ranker`], [`MultistageGrid::best_summary`]).
    Given,
    /// The highest mean ROUGE-1 of the grid's cells of that kind on the evaluated examples
    /// (ties: the first in grid order).
    ByRouge1 {
        /// That mean ROUGE-1 F-measure (0–1).
        rouge1: f64,
    },
    /// No cell of that kind was run: the paper's best (`RankDocBM25`, `SumCtx`; Table 2).
    PaperDefault,
}

/// The grid: its cells and how they are generated.
#[derive(Debug, Clone, PartialEq)]
pub struct MultistageGrid {
    /// The cells, in table order.
    pub cells: Vec<Cell>,
    /// Generation parameters ([`MultistageGrid::default_params`]).
    pub params: GenParams,
    /// How a prompt is handed to the model (default: one user message).
    pub wrapper: Wrapper,
    /// Distinct prompts (or stage inputs) per model call.
    pub batch: usize,
    /// The ranker under the summary and synthesis cells; `None`: the best retrieval cell by
    /// ROUGE-1 ([`BestChoice`]).
    pub best_ranker: Option<RankerName>,
    /// The summary under the synthesis cells; `None`: the best summary cell by ROUGE-1.
    pub best_summary: Option<ContextMode>,
    /// At most this many words of the LLM synthesis (`None`: all, as the paper).
    pub synthesis_max_words: Option<usize>,
}

impl MultistageGrid {
    /// A grid over `cells`: [`MultistageGrid::default_params`], one user message, batches of 8,
    /// best ranker and summary by ROUGE-1.
    pub fn new(cells: Vec<Cell>) -> Self {
        MultistageGrid {
            cells,
            params: Self::default_params(),
            wrapper: Wrapper::UserOnly,
            batch: 8,
            best_ranker: None,
            best_summary: None,
            synthesis_max_words: None,
        }
    }

    /// Greedy decoding (temperature 0) with at most 256 new tokens (ours; the paper decodes
    /// with beam search, l.180, and states no length).
    ///
    /// ```
    /// let p = pgraphrag_eval::multistage::MultistageGrid::default_params();
    /// assert_eq!((p.max_tokens, p.temperature), (256, 0.0));
    /// ```
    pub fn default_params() -> GenParams {
        GenParams {
            max_tokens: 256,
            temperature: 0.0,
            ..GenParams::default()
        }
    }

    pub(super) fn has_stage_cells(&self) -> bool {
        self.cells
            .iter()
            .any(|c| c.kind.summary().is_some() || c.kind.is_synthesis())
    }

    pub(super) fn has_synthesis_cells(&self) -> bool {
        self.cells.iter().any(|c| c.kind.is_synthesis())
    }

    /// The rankers the run reads from [`Prepared`]: each retrieval cell's, and, under stage
    /// cells, the given best ranker (or `RankDocBM25` when no retrieval cell can be best).
    ///
    /// ```
    /// use pgraphrag_eval::multistage::{Cell, CellKind, MultistageGrid, RankerName};
    /// let g = MultistageGrid::new(vec![Cell::paper(CellKind::ImmedCtx), Cell::paper(CellKind::SumCtx)]);
    /// assert_eq!(g.rankers_needed(), [RankerName::RankDocBM25]);
    /// ```
    pub fn rankers_needed(&self) -> Vec<RankerName> {
        let mut out: Vec<RankerName> = Vec::new();
        for r in self.cells.iter().filter_map(|c| c.kind.ranker()) {
            if !out.contains(&r) {
                out.push(r);
            }
        }
        if self.has_stage_cells() {
            let base = self
                .best_ranker
                .or(out.is_empty().then_some(RankerName::RankDocBM25));
            if let Some(r) = base.filter(|r| !out.contains(r)) {
                out.push(r);
            }
        }
        out
    }

    /// The summaries the run computes (the [`LlmStages`](super::LlmStages) it needs): each summary cell's, and,
    /// under synthesis cells, the given best summary (or `SumCtx` when no summary cell can be
    /// best).
    ///
    /// ```
    /// use pgraphrag_stages::multistage::ContextMode;
    /// use pgraphrag_eval::multistage::{Cell, CellKind, MultistageGrid};
    /// let g = MultistageGrid::new(vec![Cell::paper(CellKind::SynCtxInd)]);
    /// assert_eq!(g.summaries_needed(), [ContextMode::Dependent]);
    /// assert!(!g.needs_synthesis() && g.needs_keywords());
    /// ```
    pub fn summaries_needed(&self) -> Vec<ContextMode> {
        let mut out: Vec<ContextMode> = Vec::new();
        for m in self.cells.iter().filter_map(|c| c.kind.summary()) {
            if !out.contains(&m) {
                out.push(m);
            }
        }
        if self.has_synthesis_cells() {
            let base = self
                .best_summary
                .or(out.is_empty().then_some(ContextMode::Dependent));
            if let Some(m) = base.filter(|m| !out.contains(m)) {
                out.push(m);
            }
        }
        out
    }

    /// Whether the LLM synthesis runs (`SynCtx`, `LLMZeroShot`).
    pub fn needs_synthesis(&self) -> bool {
        self.cells
            .iter()
            .any(|c| matches!(c.kind, CellKind::SynCtx | CellKind::LlmZeroShot))
    }

    /// Whether the keywords are read ([`Prepared::keywords`], `SynCtxInd`).
    pub fn needs_keywords(&self) -> bool {
        self.cells.iter().any(|c| c.kind == CellKind::SynCtxInd)
    }

    pub(super) fn check(&self, examples: &[Example], prepared: &[Prepared]) -> Result<()> {
        if self.cells.is_empty() {
            return Err(Error::InvalidInput(
                "a multistage grid without cells".into(),
            ));
        }
        for (i, c) in self.cells.iter().enumerate() {
            if self.cells[..i].contains(c) {
                return Err(Error::InvalidInput(format!("cell {c} is given twice")));
            }
        }
        if examples.is_empty() {
            return Err(Error::InvalidInput("no examples to run the grid on".into()));
        }
        if examples.len() != prepared.len() {
            return Err(Error::InvalidInput(format!(
                "{} examples but {} prepared",
                examples.len(),
                prepared.len()
            )));
        }
        let rankers = self.rankers_needed();
        for (e, p) in examples.iter().zip(prepared) {
            if e.id != p.id {
                return Err(Error::InvalidInput(format!(
                    "example {:?} was prepared as {:?}",
                    e.id, p.id
                )));
            }
            for &r in &rankers {
                if p.ranked(r).is_none() {
                    return Err(Error::InvalidInput(format!(
                        "example {:?} has no {r} ranking (prepare it with that ranker)",
                        e.id
                    )));
                }
            }
            if self.needs_keywords() && p.keywords.is_none() {
                return Err(Error::InvalidInput(format!(
                    "example {:?} has no keywords (SynCtxInd needs Preparer::with_keywords)",
                    e.id
                )));
            }
        }
        Ok(())
    }
}
