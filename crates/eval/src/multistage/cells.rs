//! The cells of Table 2 (l.192–206): rankers, configurations, the passage-start option, and
//! which sections each cell's generation input has.
use std::fmt;
use std::str::FromStr;

use pgraphrag_stages::multistage::{ContextMode, Sections};
use serde::{Serialize, Serializer};

use crate::{Error, Result};

/// The ranking strategies of Table 2 (l.80–88, 200).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RankerName {
    /// The most recent past documents (l.200).
    RecentDoc,
    /// Documents by BM25 (l.80).
    RankDocBM25,
    /// Documents by embedding similarity (l.82).
    RankDocDense,
    /// Snippets by embedding similarity (l.84).
    RankSnippet,
    /// Documents by their best snippet (l.88).
    RankDocBySnpt,
}

impl RankerName {
    /// All five, in Table 2's order.
    pub const ALL: [RankerName; 5] = [
        RankerName::RecentDoc,
        RankerName::RankDocBM25,
        RankerName::RankDocDense,
        RankerName::RankSnippet,
        RankerName::RankDocBySnpt,
    ];

    /// The paper's name.
    ///
    /// ```
    /// use pgraphrag_eval::multistage::RankerName;
    /// assert_eq!(RankerName::RankDocBySnpt.name(), "RankDocBySnpt");
    /// assert_eq!("rankdocbm25".parse::<RankerName>().unwrap(), RankerName::RankDocBM25);
    /// assert!(RankerName::RankSnippet.is_dense() && !RankerName::RecentDoc.is_dense());
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            RankerName::RecentDoc => "RecentDoc",
            RankerName::RankDocBM25 => "RankDocBM25",
            RankerName::RankDocDense => "RankDocDense",
            RankerName::RankSnippet => "RankSnippet",
            RankerName::RankDocBySnpt => "RankDocBySnpt",
        }
    }

    /// Whether the ranker needs the dense encoder.
    pub fn is_dense(self) -> bool {
        matches!(
            self,
            RankerName::RankDocDense | RankerName::RankSnippet | RankerName::RankDocBySnpt
        )
    }
}

impl fmt::Display for RankerName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for RankerName {
    type Err = Error;
    /// The paper's name, case-insensitive.
    fn from_str(s: &str) -> Result<Self> {
        RankerName::ALL
            .into_iter()
            .find(|r| r.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| {
                let names: Vec<&str> = RankerName::ALL.iter().map(|r| r.name()).collect();
                Error::InvalidInput(format!(
                    "ranker {s:?}: expected one of {}",
                    names.join(", ")
                ))
            })
    }
}

impl Serialize for RankerName {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// A configuration of Table 2 (l.192–206), in table order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CellKind {
    /// The immediate context alone (l.192).
    ImmedCtx,
    /// The `SynCtx` input, the passage start prepended to the output (l.198; see
    /// [`Cell::paper`]).
    LlmZeroShot,
    /// Passage start + the most recent past documents (l.200).
    RecentDoc,
    /// Passage start + BM25-ranked documents.
    RankDocBM25,
    /// Passage start + dense-ranked documents.
    RankDocDense,
    /// Passage start + dense-ranked snippets.
    RankSnippet,
    /// Passage start + documents ranked by their best snippet.
    RankDocBySnpt,
    /// + the context-independent summary of the best ranker's entries (l.204).
    SumCtxInd,
    /// + the context-dependent summary of the best ranker's entries (l.204).
    SumCtx,
    /// + the context-independent keywords, on the best summary (l.206).
    SynCtxInd,
    /// + the context-dependent synthesis, on the best summary (l.206).
    SynCtx,
}

impl CellKind {
    /// All eleven, in Table 2's order (baselines, retrieval, summarization, synthesis).
    pub const ALL: [CellKind; 11] = [
        CellKind::ImmedCtx,
        CellKind::LlmZeroShot,
        CellKind::RecentDoc,
        CellKind::RankDocBM25,
        CellKind::RankDocDense,
        CellKind::RankSnippet,
        CellKind::RankDocBySnpt,
        CellKind::SumCtxInd,
        CellKind::SumCtx,
        CellKind::SynCtxInd,
        CellKind::SynCtx,
    ];

    /// The paper's name (`LLMZeroShot`, `SumCtx`, …).
    ///
    /// ```
    /// use pgraphrag_eval::multistage::{CellKind, RankerName};
    /// assert_eq!(CellKind::LlmZeroShot.name(), "LLMZeroShot");
    /// assert_eq!(CellKind::RankSnippet.ranker(), Some(RankerName::RankSnippet));
    /// assert_eq!(CellKind::SumCtx.ranker(), None);
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            CellKind::ImmedCtx => "ImmedCtx",
            CellKind::LlmZeroShot => "LLMZeroShot",
            CellKind::RecentDoc => "RecentDoc",
            CellKind::RankDocBM25 => "RankDocBM25",
            CellKind::RankDocDense => "RankDocDense",
            CellKind::RankSnippet => "RankSnippet",
            CellKind::RankDocBySnpt => "RankDocBySnpt",
            CellKind::SumCtxInd => "SumCtxInd",
            CellKind::SumCtx => "SumCtx",
            CellKind::SynCtxInd => "SynCtxInd",
            CellKind::SynCtx => "SynCtx",
        }
    }

    /// The ranker of a retrieval cell (`RecentDoc` … `RankDocBySnpt`).
    pub fn ranker(self) -> Option<RankerName> {
        Some(match self {
            CellKind::RecentDoc => RankerName::RecentDoc,
            CellKind::RankDocBM25 => RankerName::RankDocBM25,
            CellKind::RankDocDense => RankerName::RankDocDense,
            CellKind::RankSnippet => RankerName::RankSnippet,
            CellKind::RankDocBySnpt => RankerName::RankDocBySnpt,
            _ => return None,
        })
    }

    /// The summary of a summarization cell.
    pub fn summary(self) -> Option<ContextMode> {
        match self {
            CellKind::SumCtxInd => Some(ContextMode::Independent),
            CellKind::SumCtx => Some(ContextMode::Dependent),
            _ => None,
        }
    }

    /// Whether the cell's input has the best summary and a synthesis (`SynCtxInd`, `SynCtx`,
    /// `LLMZeroShot`).
    pub fn is_synthesis(self) -> bool {
        matches!(
            self,
            CellKind::SynCtxInd | CellKind::SynCtx | CellKind::LlmZeroShot
        )
    }

    /// Whether the paper prepends the passage start to this cell's output: only `UserID` and
    /// `LLMZeroShot` (l.196, 198); `UserID` is no cell here.
    pub fn paper_prepends(self) -> bool {
        self == CellKind::LlmZeroShot
    }
}

/// One cell of the grid: a configuration and whether the passage start (the start of the
/// current document in the immediate context, [`document_start`](super::document_start)) is prepended to the model's
/// output before scoring ([`prepend_start`](super::prepend_start)).
///
/// Named as the paper names the configuration when `prepend_start` is the paper's choice
/// ([`CellKind::paper_prepends`]), else with `+start` (prepended) or `-start` (not) appended:
/// `RankDocBM25+start`, `LLMZeroShot-start`. Two cells that differ only in the prepend share
/// their prompts (generated once).
///
/// ```
/// use pgraphrag_eval::multistage::{Cell, CellKind};
/// let c: Cell = "RankDocBM25+start".parse().unwrap();
/// assert_eq!(c, Cell { kind: CellKind::RankDocBM25, prepend_start: true });
/// assert_eq!(Cell::paper(CellKind::LlmZeroShot).to_string(), "LLMZeroShot");
/// assert!(Cell::paper(CellKind::LlmZeroShot).prepend_start);
/// assert_eq!("llmzeroshot-start".parse::<Cell>().unwrap().to_string(), "LLMZeroShot-start");
/// assert!("UserID".parse::<Cell>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cell {
    /// The configuration.
    pub kind: CellKind,
    /// Whether the passage start is prepended to the output.
    pub prepend_start: bool,
}

impl Cell {
    /// The cell as the paper runs it (the start prepended for `LLMZeroShot` only).
    pub fn paper(kind: CellKind) -> Cell {
        Cell {
            kind,
            prepend_start: kind.paper_prepends(),
        }
    }
}

impl fmt::Display for Cell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.kind.name())?;
        match (self.prepend_start, self.kind.paper_prepends()) {
            (true, false) => f.write_str("+start"),
            (false, true) => f.write_str("-start"),
            _ => Ok(()),
        }
    }
}

impl FromStr for Cell {
    type Err = Error;
    /// A cell name (case-insensitive), optionally with `+start` or `-start`.
    fn from_str(s: &str) -> Result<Self> {
        let s = s.trim();
        let (base, prepend) = if let Some(b) = s.strip_suffix("+start") {
            (b, Some(true))
        } else if let Some(b) = s.strip_suffix("-start") {
            (b, Some(false))
        } else {
            (s, None)
        };
        let kind = CellKind::ALL
            .into_iter()
            .find(|k| k.name().eq_ignore_ascii_case(base))
            .ok_or_else(|| {
                let names: Vec<&str> = CellKind::ALL.iter().map(|k| k.name()).collect();
                Error::InvalidInput(format!(
                    "cell {s:?}: expected one of {} (optionally with +start or -start)",
                    names.join(", ")
                ))
            })?;
        Ok(Cell {
            kind,
            prepend_start: prepend.unwrap_or(kind.paper_prepends()),
        })
    }
}

/// Which cells get the passage start prepended when a cell name does not say (`+start`,
/// `-start`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum PrependStart {
    /// As the paper: `LLMZeroShot` only (l.196–198).
    #[default]
    Paper,
    /// Every cell (fair to zero-shot models, which do not copy the start as fine-tuned ones
    /// learn to, l.196).
    All,
    /// No cell.
    None,
}

/// Cells from their names; a name without `+start`/`-start` follows `default`. Repeated cells
/// are an error.
///
/// ```
/// use pgraphrag_eval::multistage::{PrependStart, parse_cells};
/// let cells = parse_cells(&["ImmedCtx", "RankDocBM25-start"], PrependStart::All).unwrap();
/// let names: Vec<String> = cells.iter().map(|c| c.to_string()).collect();
/// assert_eq!(names, ["ImmedCtx+start", "RankDocBM25"]);
/// assert!(parse_cells(&["SumCtx", "sumctx"], PrependStart::Paper).is_err());
/// ```
pub fn parse_cells<S: AsRef<str>>(names: &[S], default: PrependStart) -> Result<Vec<Cell>> {
    let mut out: Vec<Cell> = Vec::with_capacity(names.len());
    for n in names {
        let n = n.as_ref();
        let mut cell: Cell = n.parse()?;
        let explicit = n.trim().ends_with("+start") || n.trim().ends_with("-start");
        if !explicit {
            cell.prepend_start = match default {
                PrependStart::Paper => cell.kind.paper_prepends(),
                PrependStart::All => true,
                PrependStart::None => false,
            };
        }
        if out.contains(&cell) {
            return Err(Error::InvalidInput(format!("cell {cell} is given twice")));
        }
        out.push(cell);
    }
    Ok(out)
}

/// Table 2's cells as the paper runs them, in its order (without `UserID` and `AuthorPred`,
/// which need training).
///
/// ```
/// let names: Vec<String> = pgraphrag_eval::multistage::table2_cells().iter().map(|c| c.to_string()).collect();
/// assert_eq!(names[..3], ["ImmedCtx", "LLMZeroShot", "RecentDoc"]);
/// assert_eq!(names.len(), 11);
/// ```
pub fn table2_cells() -> Vec<Cell> {
    CellKind::ALL.into_iter().map(Cell::paper).collect()
}

/// The paper's name of a summary: `SumCtxInd` or `SumCtx`.
///
/// ```
/// use pgraphrag_stages::multistage::ContextMode;
/// use pgraphrag_eval::multistage::{parse_summary, summary_name};
/// assert_eq!(summary_name(ContextMode::Dependent), "SumCtx");
/// assert_eq!(parse_summary("sumctxind").unwrap(), ContextMode::Independent);
/// ```
pub fn summary_name(mode: ContextMode) -> &'static str {
    match mode {
        ContextMode::Independent => "SumCtxInd",
        ContextMode::Dependent => "SumCtx",
    }
}

/// A summary from its name (`SumCtxInd`, `SumCtx`; case-insensitive).
pub fn parse_summary(s: &str) -> Result<ContextMode> {
    [ContextMode::Independent, ContextMode::Dependent]
        .into_iter()
        .find(|m| summary_name(*m).eq_ignore_ascii_case(s.trim()))
        .ok_or_else(|| Error::InvalidInput(format!("summary {s:?}: expected SumCtxInd or SumCtx")))
}

/// The texts a cell's input may draw on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SectionInputs<'s> {
    /// The immediate context `x_t`.
    pub passage_start: &'s str,
    /// The ranked entries: the cell's own ranker's (retrieval cells) or the best ranker's.
    pub ranked: Option<&'s str>,
    /// The summary: the cell's own (summary cells) or the best one (synthesis cells).
    pub summary: Option<&'s str>,
    /// The synthesis: keywords (`SynCtxInd`) or the LLM's words, joined.
    pub words: Option<&'s str>,
}

impl CellKind {
    /// The sections of this cell's generation input (l.192, 200–206): `ImmedCtx` the passage
    /// start only; retrieval cells + past passages; summary cells + summary; synthesis cells
    /// (and `LLMZeroShot`, l.198) + summary + important words. What a cell does not read is
    /// left out even when given.
    ///
    /// ```
    /// use pgraphrag_eval::multistage::{CellKind, SectionInputs};
    /// let x = SectionInputs { passage_start: "Hi", ranked: Some("Past."), summary: Some("S."), words: Some("w") };
    /// let s = CellKind::ImmedCtx.sections(&x);
    /// assert_eq!((s.passage_start, s.past_passages, s.summary), (Some("Hi"), None, None));
    /// let s = CellKind::SumCtx.sections(&x);
    /// assert_eq!((s.summary, s.important_words, s.past_passages), (Some("S."), None, Some("Past.")));
    /// assert_eq!(CellKind::LlmZeroShot.sections(&x), CellKind::SynCtx.sections(&x));
    /// ```
    pub fn sections<'s>(self, x: &SectionInputs<'s>) -> Sections<'s> {
        let mut s = Sections {
            passage_start: Some(x.passage_start),
            ..Sections::default()
        };
        if self == CellKind::ImmedCtx {
            return s;
        }
        s.past_passages = x.ranked;
        if self.summary().is_some() || self.is_synthesis() {
            s.summary = x.summary;
        }
        if self.is_synthesis() {
            s.important_words = x.words;
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for c in table2_cells() {
            assert_eq!(c.to_string().parse::<Cell>().unwrap(), c);
            for prepend in [true, false] {
                let c = Cell {
                    kind: c.kind,
                    prepend_start: prepend,
                };
                assert_eq!(c.to_string().parse::<Cell>().unwrap(), c, "{c}");
            }
        }
        for r in RankerName::ALL {
            assert_eq!(r.name().parse::<RankerName>().unwrap(), r);
            assert_eq!(
                CellKind::ALL
                    .iter()
                    .filter(|k| k.ranker() == Some(r))
                    .count(),
                1
            );
        }
        assert!("RankDocBM25+end".parse::<Cell>().is_err());
        assert!("".parse::<RankerName>().is_err());
    }

    #[test]
    fn only_llmzeroshot_prepends_by_default() {
        let prepending: Vec<String> = table2_cells()
            .into_iter()
            .filter(|c| c.prepend_start)
            .map(|c| c.to_string())
            .collect();
        assert_eq!(prepending, ["LLMZeroShot"]);
        let none = parse_cells(&["LLMZeroShot", "SynCtx"], PrependStart::None).unwrap();
        assert!(none.iter().all(|c| !c.prepend_start));
        assert_eq!(none[0].to_string(), "LLMZeroShot-start");
    }
}
