//! Training data out: every stage's input and (weak) label as a `{prompt, target}` record, as
//! JSON lines for any trainer (the paper fine-tunes T5-11B on each, l.106, 132, 138, 180).
use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::author::{AuthorDoc, AuthorPair};
use super::generation::{InputFormat, Sections, label_text};
use super::summary::{ContextMode, stage_entries, stage_prompt, synthesis_prompt};
use crate::{Error, Result};

/// Which model a record trains.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordTask {
    /// The context-dependent summarization model `Su(x_t, E_t)` (l.106).
    Summary,
    /// The context-dependent synthesis model `Sy(x_t, E_t)` (l.132).
    Synthesis,
    /// The personalized generation model `G` (l.138).
    Generation,
    /// The author-distinction task of `G` (l.146).
    AuthorDistinction,
}

/// One training example: `{"id", "task", "prompt", "target"}`.
///
/// ```
/// use pgraphrag_stages::multistage::{RecordTask, TrainingRecord};
/// let r = TrainingRecord { id: "e1".into(), task: RecordTask::AuthorDistinction, prompt: "p".into(), target: "true".into() };
/// assert_eq!(serde_json::to_string(&r).unwrap(), r#"{"id":"e1","task":"author_distinction","prompt":"p","target":"true"}"#);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrainingRecord {
    /// The example's id (an author pair: `{first doc_id}|{second doc_id}`).
    pub id: String,
    /// Which model it trains.
    pub task: RecordTask,
    /// The model input.
    pub prompt: String,
    /// The expected output.
    pub target: String,
}

/// What one generation example contributes; a `None` writes no record of that kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TrainingInputs<'a> {
    /// The example's id.
    pub id: &'a str,
    /// The immediate context `x_t`.
    pub immediate_context: &'a str,
    /// The ranked entries `E_t`, joined and cut ([`super::RankedContext::text`]).
    pub ranked: &'a str,
    /// The gold current document `d_t`: the generation target.
    pub target: &'a str,
    /// The summary weak label `Join(L_t)` ([`super::summary_weak_label`]).
    pub summary_label: Option<&'a str>,
    /// The synthesis weak label `Join(T_t)` ([`super::synthesis_weak_label`]).
    pub synthesis_label: Option<&'a str>,
    /// The generation input's sections (with the summary and synthesis the stages produced,
    /// not the weak labels: the paper trains `G` on the models' outputs, l.108).
    pub generation: Option<Sections<'a>>,
}

/// The records of one generation example, in this order:
///
/// * summary: prompt = the context-dependent summary stage's message ([`stage_prompt`] in
///   dependent mode over [`stage_entries`]: instruction, `passage start: x_t`,
///   `past passages: E_t`), target = `summary_label`;
/// * synthesis: the same with [`synthesis_prompt`], target = `synthesis_label`;
/// * generation: prompt = `format.generation(sections)`, target = `target`.
///
/// The zero-shot stages see exactly these prompts (unless their fitting rule has to shorten
/// them), so a model fine-tuned on the records can replace them. Labels are written as given,
/// even when empty (a weak label that matched nothing); pass `None` to leave one out. Which
/// examples train which model (the paper: half of the generation training data for the
/// summarization and synthesis models, none of validation or test, l.108–110, 134) is the
/// caller's choice.
///
/// ```
/// use pgraphrag_stages::multistage::{PaperFormat, RecordTask, Sections, TrainingInputs, training_records};
/// let x = TrainingInputs {
///     id: "m/7",
///     immediate_context: "Hi all,",
///     ranked: "Hi team, lunch is at noon.",
///     target: "Hi all, lunch moves to one.",
///     summary_label: Some("Hi team, lunch is at noon."),
///     synthesis_label: None,
///     generation: Some(Sections { passage_start: Some("Hi all,"), ..Sections::default() }),
/// };
/// let r = training_records(&x, &PaperFormat);
/// assert_eq!(r.iter().map(|r| r.task).collect::<Vec<_>>(), [RecordTask::Summary, RecordTask::Generation]);
/// assert!(r[0].prompt.ends_with("\n\npassage start: Hi all,\n\npast passages: Hi team, lunch is at noon."));
/// assert_eq!(r[1].prompt, "Finish the passage in the user voice\n\npassage start: Hi all,");
/// assert_eq!(r[1].target, "Hi all, lunch moves to one.");
/// ```
pub fn training_records(x: &TrainingInputs<'_>, format: &dyn InputFormat) -> Vec<TrainingRecord> {
    let entries = stage_entries(ContextMode::Dependent, x.immediate_context, x.ranked);
    let entries: Vec<&str> = entries.iter().map(String::as_str).collect();
    let mut out = Vec::new();
    let mut push = |task, prompt, target: &str| {
        out.push(TrainingRecord {
            id: x.id.to_string(),
            task,
            prompt,
            target: target.to_string(),
        })
    };
    if let Some(label) = x.summary_label {
        let prompt = stage_prompt(ContextMode::Dependent).message(&entries);
        push(RecordTask::Summary, prompt, label);
    }
    if let Some(label) = x.synthesis_label {
        push(
            RecordTask::Synthesis,
            synthesis_prompt().message(&entries),
            label,
        );
    }
    if let Some(sections) = &x.generation {
        push(
            RecordTask::Generation,
            format.generation(sections),
            x.target,
        );
    }
    out
}

/// The record of one author-distinction pair ([`super::author_pairs`] over `docs`): prompt =
/// `format.author(first text, second text)`, target = `true` / `false`, id =
/// `{first doc_id}|{second doc_id}`. A pair that points outside `docs` is an
/// [`Error::InvalidInput`].
///
/// ```
/// use pgraphrag_stages::multistage::{AuthorDoc, AuthorPair, PaperFormat, author_record};
/// let docs = [AuthorDoc { author: "a", doc_id: "1", text: "Hi." }, AuthorDoc { author: "b", doc_id: "2", text: "Yo." }];
/// let r = author_record(&AuthorPair { first: 0, second: 1, same_author: false }, &docs, &PaperFormat).unwrap();
/// assert_eq!((r.id.as_str(), r.target.as_str()), ("1|2", "false"));
/// assert!(r.prompt.ends_with("passage 1: Hi.\n\npassage 2: Yo."));
/// ```
pub fn author_record(
    pair: &AuthorPair,
    docs: &[AuthorDoc<'_>],
    format: &dyn InputFormat,
) -> Result<TrainingRecord> {
    let get = |i: usize| {
        docs.get(i).ok_or_else(|| {
            Error::InvalidInput(format!(
                "author pair points at document {i}, but there are {}",
                docs.len()
            ))
        })
    };
    let (a, b) = (get(pair.first)?, get(pair.second)?);
    Ok(TrainingRecord {
        id: format!("{}|{}", a.doc_id, b.doc_id),
        task: RecordTask::AuthorDistinction,
        prompt: format.author(a.text, b.text),
        target: label_text(pair.same_author).to_string(),
    })
}

/// Writes `records` as JSON lines (one compact object and `\n` each) to `w`.
pub fn write_jsonl_to(w: &mut dyn Write, records: &[TrainingRecord]) -> std::io::Result<()> {
    for r in records {
        serde_json::to_writer(&mut *w, r)?;
        w.write_all(b"\n")?;
    }
    Ok(())
}

/// Writes `records` as JSON lines to `path`, atomically (a temporary file renamed over it,
/// [`pgraphrag_data::write_atomic`]): a crash leaves the old file or the new one. Errors
/// ([`Error::WriteRecords`]) name the file.
///
/// ```
/// use pgraphrag_stages::multistage::{RecordTask, TrainingRecord, write_jsonl};
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("train.jsonl");
/// let r = TrainingRecord { id: "1".into(), task: RecordTask::Generation, prompt: "p\n".into(), target: "t".into() };
/// write_jsonl(&path, &[r.clone(), r]).unwrap();
/// let text = std::fs::read_to_string(&path).unwrap();
/// assert_eq!(text.lines().count(), 2);
/// assert!(text.starts_with(r#"{"id":"1","task":"generation","prompt":"p\n","target":"t"}"#));
/// ```
pub fn write_jsonl(path: &Path, records: &[TrainingRecord]) -> Result<()> {
    pgraphrag_data::write_atomic(path, |w| write_jsonl_to(w, records))
        .map_err(|source| Error::WriteRecords { source })
}
