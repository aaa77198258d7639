//! LaMP's retrieval-augmented prompts end to end, as `LaMP/prompts/prompts.py`'s
//! `create_prompt_generator(k, "bm25", False, max_length, tokenizer)` makes them: for each
//! question, extract the query (φq), rank the user's own profile with BM25Okapi over
//! `str.split()` tokens (`rank_bm25.get_top_n`, whose tie order is numpy's reversed argsort),
//! keep the best k, and build the prompt within the token budget (`pgraphrag_prompt::lamp`),
//! optionally with a user summary (the summary-augmented form).
//!
//! Where LaMP's code raises (an empty profile, or every BM25 document empty, both a
//! `ZeroDivisionError` in rank_bm25; a query that cannot be extracted; a profile item without
//! a corpus field), the prompt is the input unchanged and the case is counted in
//! [`LampRunSummary`], not an error.
//!
//! ```
//! use pgraphrag_core::{LampProfileItem, LampQuestion, LampTask};
//! use pgraphrag_eval::lamp::{LampRecipe, lamp_prompts};
//! use pgraphrag_prompt::lamp::{LampTokenizer, TokenizerError};
//! # struct Chars;
//! # impl LampTokenizer for Chars {
//! #     fn input_ids(&self, t: &str) -> Result<Vec<u32>, TokenizerError> { Ok(t.chars().map(u32::from).collect()) }
//! #     fn truncated_ids(&self, t: &str, m: i64) -> Result<Vec<u32>, TokenizerError> {
//! #         let m = usize::try_from(m).map_err(|_| TokenizerError::NegativeMaxLength { max_length: m })?;
//! #         Ok(self.input_ids(t)?.into_iter().take(m).collect())
//! #     }
//! #     fn decode(&self, ids: &[u32]) -> Result<String, TokenizerError> { Ok(ids.iter().filter_map(|&c| char::from_u32(c)).collect()) }
//! # }
//! let q = LampQuestion::new("1", "Paraphrase the following tweet without any explanation before or after it: rain again")
//!     .with_profile(vec![
//!         LampProfileItem::new("a").with("text", "sunny day"),
//!         LampProfileItem::new("b").with("text", "rain rain go away"),
//!     ]);
//! let empty = LampQuestion::new("2", "Paraphrase the following tweet: hi");
//! let (records, summary) = lamp_prompts(&[q, empty], &LampRecipe::new(LampTask::Lamp7, 1, 512), &Chars, None);
//! assert_eq!(records[0].ranked_ids, vec!["b"]);
//! assert!(records[0].prompt.starts_with("\"rain rain go away\"  are written by a person."));
//! assert_eq!(records[1].prompt, "Paraphrase the following tweet: hi");
//! assert_eq!((summary.questions, summary.built, summary.empty_profile), (2, 1, 1));
//! ```

use std::collections::HashMap;

use pgraphrag_core::{LampProfileItem, LampQuestion, LampTask, SummaryScope};
use pgraphrag_prompt::lamp::{
    BuildError, LampTokenizer, PromptOutcome, QuerySource, Summary, SummaryPlacement, build_prompt,
    corpus_document, extract_query,
};
use pgraphrag_retrieval::sparse::{Bm25Okapi, Bm25Params, python_split};

/// The settings of one LaMP prompt run.
#[derive(Debug, Clone, PartialEq)]
pub struct LampRecipe {
    /// The task.
    pub task: LampTask,
    /// How many profile items to retrieve (`num_retrieve`).
    pub k: usize,
    /// The model's input length in tokens (`max_length`).
    pub max_length: i64,
    /// Which corpus makers the query follows (default: `prompts.py`'s).
    pub query_source: QuerySource,
    /// Where a user summary goes, when one is given.
    pub summary_placement: SummaryPlacement,
    /// Which key a question's summary is looked up by (default: the user).
    pub summary_scope: SummaryScope,
}

impl LampRecipe {
    /// `task`, `k` and `max_length` with `prompts.py`'s queries and the default placement.
    ///
    /// ```
    /// let r = pgraphrag_eval::lamp::LampRecipe::new(pgraphrag_core::LampTask::Lamp4, 4, 512);
    /// assert_eq!(r.query_source, pgraphrag_prompt::lamp::QuerySource::Prompts);
    /// ```
    pub fn new(task: LampTask, k: usize, max_length: i64) -> Self {
        LampRecipe {
            task,
            k,
            max_length,
            query_source: QuerySource::Prompts,
            summary_placement: SummaryPlacement::default(),
            summary_scope: SummaryScope::User,
        }
    }
}

/// Why a prompt is the input unchanged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unchanged {
    /// The profile is empty (rank_bm25: `ZeroDivisionError` computing `avgdl`).
    EmptyProfile,
    /// Every BM25 document is empty (rank_bm25: `ZeroDivisionError` computing `average_idf`).
    EmptyDocuments,
    /// No query could be extracted (LaMP: `IndexError` or `AttributeError`).
    NoQuery(String),
    /// A profile item lacks a corpus field (LaMP: `KeyError`).
    MissingField {
        /// The item's id.
        item: String,
        /// The field.
        field: &'static str,
    },
    /// Every attempt of the budget loop failed (LaMP prints `not possible`).
    Budget(BuildError),
}

impl std::fmt::Display for Unchanged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unchanged::EmptyProfile => f.write_str("empty profile"),
            Unchanged::EmptyDocuments => f.write_str("every BM25 document empty"),
            Unchanged::NoQuery(why) => write!(f, "no query: {why}"),
            Unchanged::MissingField { item, field } => {
                write!(f, "profile item {item:?} has no field {field:?}")
            }
            Unchanged::Budget(e) => write!(f, "no prompt fits the budget: {e}"),
        }
    }
}

/// One question's prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct LampPromptRecord {
    /// The question id.
    pub id: String,
    /// The query (`None` when none could be extracted).
    pub query: Option<String>,
    /// The retrieved profile item ids, best first.
    pub ranked_ids: Vec<String>,
    /// The prompt.
    pub prompt: String,
    /// Why the prompt is the input unchanged, when it is.
    pub unchanged: Option<Unchanged>,
    /// Failed budget attempts before the prompt was built (0 on the first try).
    pub retries: u32,
}

/// Counts over a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LampRunSummary {
    /// Questions seen.
    pub questions: usize,
    /// Prompts built (not the input returned).
    pub built: usize,
    /// Of those, built after at least one failed attempt (a smaller factor).
    pub retried: usize,
    /// Questions with a summary used.
    pub with_summary: usize,
    /// Inputs returned unchanged: empty profile.
    pub empty_profile: usize,
    /// … every BM25 document empty.
    pub empty_documents: usize,
    /// … no query.
    pub no_query: usize,
    /// … a missing corpus field.
    pub missing_field: usize,
    /// … no attempt fitted the budget.
    pub budget: usize,
}

impl LampRunSummary {
    /// How many inputs came back unchanged, for any reason.
    pub fn unchanged(&self) -> usize {
        self.empty_profile + self.empty_documents + self.no_query + self.missing_field + self.budget
    }
}

/// The selected items in rank order, or why LaMP raises first (in its order: LaMP-1's quotes,
/// then the corpus fields, then rank_bm25's divisions, then the missing marker).
fn select<'a>(
    q: &'a LampQuestion,
    r: &LampRecipe,
) -> (Option<String>, Result<Vec<&'a LampProfileItem>, Unchanged>) {
    let query = extract_query(r.task, &q.input, r.query_source);
    if let Err(e) = &query
        && r.task == LampTask::Lamp1
    {
        return (None, Err(Unchanged::NoQuery(e.to_string())));
    }
    let mut docs = Vec::with_capacity(q.profile.len());
    for p in &q.profile {
        match corpus_document(r.task, p) {
            Ok(d) => docs.push(d),
            Err(field) => {
                let item = p.id.clone();
                return (query.ok(), Err(Unchanged::MissingField { item, field }));
            }
        }
    }
    if docs.is_empty() {
        return (query.ok(), Err(Unchanged::EmptyProfile));
    }
    let tokenized: Vec<Vec<&str>> = docs.iter().map(|d| python_split(d).collect()).collect();
    let Ok(bm25) = Bm25Okapi::fit(&tokenized, Bm25Params::default()) else {
        return (query.ok(), Err(Unchanged::EmptyDocuments));
    };
    let query = match query {
        Ok(s) => s,
        Err(e) => return (None, Err(Unchanged::NoQuery(e.to_string()))),
    };
    let qt: Vec<&str> = python_split(&query).collect();
    let top = bm25.get_top_n(&qt, r.k);
    let items = top.into_iter().map(|i| &q.profile[i]).collect();
    (Some(query), Ok(items))
}

/// Builds one question's prompt; `summary` is the user's summary, if any (with a summary, an
/// empty profile or one of empty documents gives `{summary}. {inp}` rather than the input).
///
/// ```
/// use pgraphrag_core::{LampQuestion, LampTask};
/// use pgraphrag_eval::lamp::{LampRecipe, Unchanged, lamp_prompt};
/// # use pgraphrag_prompt::lamp::{LampTokenizer, TokenizerError};
/// # struct Chars;
/// # impl LampTokenizer for Chars {
/// #     fn input_ids(&self, t: &str) -> Result<Vec<u32>, TokenizerError> { Ok(t.chars().map(u32::from).collect()) }
/// #     fn truncated_ids(&self, t: &str, m: i64) -> Result<Vec<u32>, TokenizerError> { Ok(self.input_ids(t)?) }
/// #     fn decode(&self, ids: &[u32]) -> Result<String, TokenizerError> { Ok(ids.iter().filter_map(|&c| char::from_u32(c)).collect()) }
/// # }
/// let q = LampQuestion::new("1", "Generate a headline for the following article: x");
/// let r = lamp_prompt(&q, &LampRecipe::new(LampTask::Lamp4, 1, 512), &Chars, None);
/// assert_eq!(r.unchanged, Some(Unchanged::EmptyProfile));
/// ```
pub fn lamp_prompt<T: LampTokenizer + ?Sized>(
    q: &LampQuestion,
    recipe: &LampRecipe,
    tok: &T,
    summary: Option<&str>,
) -> LampPromptRecord {
    let (query, selected) = select(q, recipe);
    let unchanged = |why| LampPromptRecord {
        id: q.id.clone(),
        query: query.clone(),
        ranked_ids: Vec::new(),
        prompt: q.input.clone(),
        unchanged: Some(why),
        retries: 0,
    };
    let items = match selected {
        Ok(items) => items,
        // The summary-augmented form still has the summary: `{summary}. {inp}`.
        Err(Unchanged::EmptyProfile | Unchanged::EmptyDocuments) if summary.is_some() => Vec::new(),
        Err(why) => return unchanged(why),
    };
    let summary = summary.map(|text| Summary {
        text,
        placement: recipe.summary_placement,
    });
    let out = build_prompt(
        recipe.task,
        &q.input,
        &items,
        recipe.max_length,
        tok,
        summary,
    );
    let ranked_ids = items.iter().map(|p| p.id.clone()).collect();
    match out.outcome {
        PromptOutcome::Built { retries, .. } => LampPromptRecord {
            id: q.id.clone(),
            query,
            ranked_ids,
            prompt: out.text,
            unchanged: None,
            retries,
        },
        PromptOutcome::InputReturned { last_error } => LampPromptRecord {
            ranked_ids,
            ..unchanged(Unchanged::Budget(last_error))
        },
    }
}

/// Builds every question's prompt. `summaries` maps a summary key
/// ([`LampQuestion::summary_key`] under the recipe's `summary_scope`, as `pgraphrag summarize`
/// writes them) to the summary.
pub fn lamp_prompts<T: LampTokenizer + ?Sized>(
    questions: &[LampQuestion],
    recipe: &LampRecipe,
    tok: &T,
    summaries: Option<&HashMap<String, String>>,
) -> (Vec<LampPromptRecord>, LampRunSummary) {
    let mut s = LampRunSummary::default();
    let mut out = Vec::with_capacity(questions.len());
    for q in questions {
        let key = q.summary_key(recipe.summary_scope);
        let summary = summaries.and_then(|m| m.get(key)).map(String::as_str);
        let r = lamp_prompt(q, recipe, tok, summary);
        s.questions += 1;
        match &r.unchanged {
            None => {
                s.built += 1;
                s.retried += usize::from(r.retries > 0);
                s.with_summary += usize::from(summary.is_some());
            }
            Some(Unchanged::EmptyProfile) => s.empty_profile += 1,
            Some(Unchanged::EmptyDocuments) => s.empty_documents += 1,
            Some(Unchanged::NoQuery(_)) => s.no_query += 1,
            Some(Unchanged::MissingField { .. }) => s.missing_field += 1,
            Some(Unchanged::Budget(_)) => s.budget += 1,
        }
        out.push(r);
    }
    (out, s)
}
