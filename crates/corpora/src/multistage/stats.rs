//! Counts of a multistage build: per part, and as a row of the paper's Table 1.
use std::collections::BTreeSet;

use super::examples::{Example, MultistageBuild};
use crate::lamp::SplitName;

/// The header of [`MultistageBuild::table1_row`]'s rows: the columns of the paper's Table 1
/// ("Dataset statistics", l.170–176).
///
/// ```
/// assert!(pgraphrag_corpora::multistage::TABLE1_HEADER.starts_with("| corpus | avg chars of target |"));
/// ```
pub const TABLE1_HEADER: &str = "| corpus | avg chars of target | avg past docs per target | users train | users dev | users test | examples train | examples dev | examples test |\n|---|---|---|---|---|---|---|---|---|\n";

/// Counts of a set of examples ([`MultistageBuild::stats`], [`ExampleStats::of`]).
///
/// ```
/// use pgraphrag_corpora::{lamp::SplitName, multistage::{ContextDoc, Example, ExampleStats}};
/// let ex = |author: &str, n: usize| Example { id: format!("{author}{n}"), author: author.into(),
///     split: SplitName::Train, time: 0, immediate_context: String::new(), target: "x".repeat(n),
///     context: vec![ContextDoc { doc_id: "c".into(), time: -1, text: String::new() }; n] };
/// let s = ExampleStats::of(&[ex("a", 2), ex("a", 4), ex("b", 6)]);
/// assert_eq!((s.users, s.examples, s.min_context_docs, s.max_context_docs), (2, 3, 2, 6));
/// assert_eq!((s.avg_context_docs, s.avg_target_chars), (4.0, 4.0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ExampleStats {
    /// Distinct authors.
    pub users: usize,
    /// Examples (targets).
    pub examples: usize,
    /// Mean number of context documents per example (0 when there are none).
    pub avg_context_docs: f64,
    /// Fewest context documents of an example (0 when there are none).
    pub min_context_docs: usize,
    /// Most context documents of an example.
    pub max_context_docs: usize,
    /// Mean length of a target in characters (Unicode scalar values; 0 when there are none).
    pub avg_target_chars: f64,
}

impl ExampleStats {
    /// The counts of `examples`.
    ///
    /// ```
    /// use pgraphrag_corpora::multistage::ExampleStats;
    /// let s = ExampleStats::of([]);
    /// assert_eq!((s.users, s.examples, s.avg_context_docs), (0, 0, 0.0));
    /// ```
    pub fn of<'a>(examples: impl IntoIterator<Item = &'a Example>) -> Self {
        let mut users = BTreeSet::new();
        let (mut n, mut ctx, mut chars) = (0usize, 0usize, 0usize);
        let (mut min, mut max) = (usize::MAX, 0);
        for e in examples {
            users.insert(e.author.as_str());
            n += 1;
            ctx += e.context.len();
            min = min.min(e.context.len());
            max = max.max(e.context.len());
            chars += e.target.chars().count();
        }
        let mean = |total: usize| if n == 0 { 0.0 } else { total as f64 / n as f64 };
        ExampleStats {
            users: users.len(),
            examples: n,
            avg_context_docs: mean(ctx),
            min_context_docs: if n == 0 { 0 } else { min },
            max_context_docs: max,
            avg_target_chars: mean(chars),
        }
    }
}

impl MultistageBuild {
    /// The counts of one part, or of all examples (`None`).
    ///
    /// ```
    /// # use pgraphrag_corpora::{lamp::SplitName, multistage::MultistageBuild};
    /// assert_eq!(MultistageBuild::default().stats(Some(SplitName::Test)).examples, 0);
    /// ```
    pub fn stats(&self, part: Option<SplitName>) -> ExampleStats {
        ExampleStats::of(
            self.examples
                .iter()
                .filter(|e| part.is_none_or(|p| e.split == p)),
        )
    }

    /// The counts as a Markdown table: one row per part and one for all, `| split | users |
    /// examples | avg context docs | min–max context docs | avg target chars |`.
    ///
    /// ```
    /// # use pgraphrag_corpora::multistage::MultistageBuild;
    /// let t = MultistageBuild::default().stats_table();
    /// assert!(t.contains("| dev | 0 | 0 | 0.0 | 0–0 | 0.0 |\n"), "{t}");
    /// assert!(t.ends_with("| all | 0 | 0 | 0.0 | 0–0 | 0.0 |\n"));
    /// ```
    pub fn stats_table(&self) -> String {
        let mut s = String::from(
            "| split | users | examples | avg context docs | min–max context docs | avg target chars |\n|---|---|---|---|---|---|\n",
        );
        let parts = SplitName::ALL.map(Some);
        for part in parts.into_iter().chain([None]) {
            let st = self.stats(part);
            s.push_str(&format!(
                "| {} | {} | {} | {:.1} | {}–{} | {:.1} |\n",
                part.map_or("all", SplitName::as_str),
                st.users,
                st.examples,
                st.avg_context_docs,
                st.min_context_docs,
                st.max_context_docs,
                st.avg_target_chars
            ));
        }
        s
    }

    /// The build as one row of the paper's Table 1 (columns in [`TABLE1_HEADER`]): the mean
    /// target length and context size over all examples, then users and examples per part.
    ///
    /// ```
    /// # use pgraphrag_corpora::multistage::{MultistageBuild, TABLE1_HEADER};
    /// let row = MultistageBuild::default().table1_row("mail");
    /// assert_eq!(row, "| mail | 0.0 | 0.0 | 0 | 0 | 0 | 0 | 0 | 0 |\n");
    /// assert_eq!(TABLE1_HEADER.lines().next().unwrap().matches('|').count(), row.matches('|').count());
    /// ```
    pub fn table1_row(&self, corpus: &str) -> String {
        let all = self.stats(None);
        let per = SplitName::ALL.map(|p| self.stats(Some(p)));
        format!(
            "| {corpus} | {:.1} | {:.1} | {} | {} | {} | {} | {} | {} |\n",
            all.avg_target_chars,
            all.avg_context_docs,
            per[0].users,
            per[1].users,
            per[2].users,
            per[0].examples,
            per[1].examples,
            per[2].examples
        )
    }
}
