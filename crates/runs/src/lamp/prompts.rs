//! LaMP's retrieval-augmented prompts (BM25 top-k within a token budget) for every question of
//! a questions file, exact to LaMP's code (`pgraphrag lamp prompts`), one JSON line each:
//! `{"task", "id", "k", "max_length", "query", "ranked_ids", "prompt"}`.
use std::path::PathBuf;

use pgraphrag_core::{LampTask, SummaryScope};
use pgraphrag_data::output::{WriteOptions, write_atomic_with};
use pgraphrag_eval::lamp::{LampRecipe, LampRunSummary, lamp_prompts};
use pgraphrag_prompt::lamp::{HfTokenizer, SummaryPlacement};
use serde::{Deserialize, Serialize};

use super::files::read_summaries;
use crate::{Error, Result};

/// Builds the prompts of a questions file.
///
/// ```
/// use pgraphrag_core::LampTask;
/// use pgraphrag_runs::lamp::PromptsSpec;
/// let spec = PromptsSpec::new(LampTask::Lamp4, "dev_questions.json", "tokenizer.json", 4, "prompts.jsonl");
/// assert_eq!(spec.max_length, 512);
/// assert!(spec.run().is_err()); // no such questions file
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PromptsSpec {
    /// A LaMP questions file.
    pub questions: PathBuf,
    /// The task.
    pub task: LampTask,
    /// The `tokenizer.json` the token budget counts in.
    pub tokenizer: PathBuf,
    /// transformers' `clean_up_tokenization_spaces` when decoding a cut profile item.
    pub clean_up_tokenization_spaces: bool,
    /// Profile items retrieved.
    pub k: usize,
    /// The prompt's budget in tokens.
    pub max_length: i64,
    /// User summaries as JSON lines `{"id", "summary"}`.
    pub summaries: Option<PathBuf>,
    /// Where a summary goes.
    #[serde(with = "crate::names")]
    pub summary_placement: SummaryPlacement,
    /// Summaries per user or per question.
    pub summary_scope: SummaryScope,
    /// The prompts written (JSON lines, atomically).
    pub out: PathBuf,
}

#[derive(Serialize)]
struct Line<'a> {
    task: &'a str,
    id: &'a str,
    k: usize,
    max_length: i64,
    query: Option<&'a str>,
    ranked_ids: &'a [String],
    prompt: &'a str,
}

impl PromptsSpec {
    /// LaMP's defaults: a 512-token budget, the tokenizer's clean-up on, no summaries.
    pub fn new(
        task: LampTask,
        questions: impl Into<PathBuf>,
        tokenizer: impl Into<PathBuf>,
        k: usize,
        out: impl Into<PathBuf>,
    ) -> PromptsSpec {
        PromptsSpec {
            questions: questions.into(),
            task,
            tokenizer: tokenizer.into(),
            clean_up_tokenization_spaces: true,
            k,
            max_length: 512,
            summaries: None,
            summary_placement: SummaryPlacement::Prefix,
            summary_scope: SummaryScope::User,
            out: out.into(),
        }
    }

    /// Builds and writes every question's prompt; returns the counts.
    pub fn run(&self) -> Result<LampRunSummary> {
        if self.k == 0 && self.summaries.is_none() {
            return Err(Error::Setting(
                "k = 0 without summaries gives every input unchanged (LaMP divides by zero items)"
                    .into(),
            ));
        }
        let questions = pgraphrag_data::lamp::read_questions_for(&self.questions, self.task)
            .map_err(Error::invalid)?;
        if questions.is_empty() {
            return Err(Error::invalid(format!(
                "{}: no questions (an empty list); there are no prompts to build",
                self.questions.display()
            )));
        }
        let summaries = self.summaries.as_deref().map(read_summaries).transpose()?;
        let tok = HfTokenizer::from_file(&self.tokenizer)
            .map_err(Error::invalid)?
            .with_clean_up_tokenization_spaces(self.clean_up_tokenization_spaces);
        let mut recipe = LampRecipe::new(self.task, self.k, self.max_length);
        recipe.summary_placement = self.summary_placement;
        recipe.summary_scope = self.summary_scope;
        let (records, stats) = lamp_prompts(&questions, &recipe, &tok, summaries.as_ref());
        let task = self.task.as_str();
        write_atomic_with(&self.out, WriteOptions::default().create_dirs(), |w| {
            for r in &records {
                let line = Line {
                    task,
                    id: &r.id,
                    k: self.k,
                    max_length: self.max_length,
                    query: r.query.as_deref(),
                    ranked_ids: &r.ranked_ids,
                    prompt: &r.prompt,
                };
                serde_json::to_writer(&mut *w, &line)?;
                w.write_all(b"\n")?;
            }
            Ok(())
        })?;
        Ok(stats)
    }
}
