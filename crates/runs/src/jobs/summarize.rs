//! The summary job: every user of a LaMP questions file summarised into a summary store, in
//! chunks of users, as `pgraphrag summarize` summarises them (the offline stage of
//! summary-augmented LaMP; `pgraphrag_stages::SummarizeJob`).
//!
//! A unit is a range of distinct users (in file order, by the job's summary scope); it runs a
//! `SummarizeJob` over those users' questions with the job's model, prompt and budget, so its
//! summaries are stored under the keys, model id and prompt version `pgraphrag summarize`
//! uses, and are byte-identical to its (the native engine decodes bit-identically for any
//! batch). Each summary is committed to the summary store as it finishes; a unit delivered
//! again after a crash finds those users done and summarises only the rest.
use std::path::{Path, PathBuf};
use std::sync::Arc;

use pgraphrag_core::{LampQuestion, LampTask, NoProgress, SummaryScope};
use pgraphrag_llm::{GgufModel, GgufOptions};
use pgraphrag_stages::{Budget, LlmSummarizer, SummarizeJob, SummaryPrompt, SummaryStore};
use serde::{Deserialize, Serialize};

use super::common::{Error, Result, UnitRange};

/// What a summary job summarises: the users of a LaMP questions file (`*_questions.json`, the
/// input of `pgraphrag summarize`) with a GGUF model into a summary store.
///
/// [`SummarizeSpec::new`] takes `pgraphrag summarize`'s defaults (batch 8, 128 new tokens, a
/// context of 2,048, one summary per user); set the fields to change them.
///
/// ```
/// use pgraphrag_core::LampTask;
/// use pgraphrag_runs::jobs::{JobSpec, SummarizeSpec, count_users, plan};
/// let dir = tempfile::tempdir().unwrap();
/// let input = dir.path().join("q.json");
/// std::fs::write(&input, r#"[
///   {"id": "q1", "input": "x", "profile": [{"id": "p1", "text": "hi"}]},
///   {"id": "q2", "input": "x", "profile": [{"id": "p2", "text": "ho"}]},
///   {"id": "q3", "input": "x", "profile": []}]"#).unwrap();
/// let users = count_users(&input, LampTask::Lamp7, Default::default()).unwrap();
/// let mut spec = SummarizeSpec::new(&input, LampTask::Lamp7, "model.gguf", "summaries.sqlite", users);
/// spec.max_new_tokens = 24;
/// let planned = plan(&JobSpec::Summarize(spec), "jobs.sqlite", 2).unwrap();
/// assert_eq!((planned.job.items, planned.units.len()), (3, 2));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SummarizeSpec {
    /// The LaMP questions file (absolute path).
    pub input: PathBuf,
    /// The LaMP task (its Table 2 prompt and profile fields).
    pub task: LampTask,
    /// The GGUF model file (absolute path).
    pub model: PathBuf,
    /// The summary store: a SQLite file (absolute path) or a PostgreSQL URL (workers built
    /// with the feature `postgres`).
    pub summaries: String,
    /// Users handed to the model per call.
    pub batch: usize,
    /// Most tokens per summary.
    pub max_new_tokens: usize,
    /// The summarizer's context in tokens (prompt and summary together).
    pub context: usize,
    /// Accept a summary store that holds summaries of other models or prompt versions only.
    pub new_config: bool,
    /// One summary per user or per question.
    pub scope: SummaryScope,
    /// Distinct users summarised: the first `users` of the file ([`count_users`], or fewer).
    pub users: usize,
}

impl SummarizeSpec {
    /// A job summarising the first `users` distinct users of `input` for `task` with the model
    /// file `model` into the summary store `summaries`, with `pgraphrag summarize`'s defaults.
    pub fn new(
        input: impl Into<PathBuf>,
        task: LampTask,
        model: impl Into<PathBuf>,
        summaries: impl Into<String>,
        users: usize,
    ) -> Self {
        SummarizeSpec {
            input: input.into(),
            task,
            model: model.into(),
            summaries: summaries.into(),
            batch: 8,
            max_new_tokens: 128,
            context: 2048,
            new_config: false,
            scope: SummaryScope::User,
            users,
        }
    }

    /// Loads the model and opens the summary store as a worker would, and checks that the
    /// store accepts this job's model and prompt version (unless [`new_config`](Self::new_config)).
    /// Returns the (model id, prompt version) the summaries are stored under.
    ///
    /// Errors: no prompt for the task, a missing or unloadable model, a context the model
    /// lacks, an unopenable store or one holding other configurations only.
    ///
    /// ```no_run
    /// use pgraphrag_core::LampTask;
    /// use pgraphrag_runs::jobs::SummarizeSpec;
    /// let spec = SummarizeSpec::new("q.json", LampTask::Lamp7,
    ///     "models/SmolLM2-135M-Instruct.Q4_1.gguf", "summaries.sqlite", 3);
    /// let (model, version) = spec.check().unwrap();
    /// assert!(version.starts_with("table2-LaMP-7@"));
    /// ```
    pub fn check(&self) -> Result<(String, String)> {
        let model = load_model(self)?;
        let store = open_store(&self.summaries)?;
        let (id, version) = (model.model.cache_id(), model.version(self)?);
        if !self.new_config {
            store
                .check_config(&id, &version)
                .map_err(|e| Error::InvalidJob(pgraphrag_core::error_chain(&e)))?;
        }
        Ok((id, version))
    }
}

/// The distinct users of a LaMP questions file for `task` under `scope` (the items of a
/// [`SummarizeSpec`]); the file is checked for the task's profile fields.
///
/// ```
/// use pgraphrag_core::{LampTask, SummaryScope};
/// let dir = tempfile::tempdir().unwrap();
/// let p = dir.path().join("q.json");
/// std::fs::write(&p, r#"[{"id": "q1", "user_id": "u", "input": "x", "profile": []},
///                        {"id": "q2", "user_id": "u", "input": "y", "profile": []}]"#).unwrap();
/// assert_eq!(pgraphrag_runs::jobs::count_users(&p, LampTask::Lamp7, SummaryScope::User).unwrap(), 1);
/// assert_eq!(pgraphrag_runs::jobs::count_users(&p, LampTask::Lamp7, SummaryScope::Question).unwrap(), 2);
/// ```
pub fn count_users(input: &Path, task: LampTask, scope: SummaryScope) -> Result<usize> {
    let questions = read_questions(input, task)?;
    Ok(user_index(&questions, scope, usize::MAX).1)
}

pub(super) fn read_questions(input: &Path, task: LampTask) -> Result<Vec<LampQuestion>> {
    pgraphrag_data::lamp::read_questions_for(input, task).map_err(|e| Error::Data(Box::new(e)))
}

/// Each question's distinct-user index under `scope` (first occurrence order, as
/// `SummarizeJob` walks them), `usize::MAX` from the first question of a user past the first
/// `cap` on (where `SummarizeJob` with a limit stops reading); and the users counted.
pub(super) fn user_index(
    questions: &[LampQuestion],
    scope: SummaryScope,
    cap: usize,
) -> (Vec<usize>, usize) {
    let mut seen = std::collections::HashMap::new();
    let mut past = false;
    let index = questions
        .iter()
        .map(|q| {
            let key = q.summary_key(scope);
            if past {
                return usize::MAX;
            }
            if let Some(&i) = seen.get(key) {
                return i;
            }
            if seen.len() >= cap {
                past = true;
                return usize::MAX;
            }
            let i = seen.len();
            seen.insert(key, i);
            i
        })
        .collect();
    (index, seen.len())
}

/// Opens the summary store at `location`: a SQLite file, or a PostgreSQL URL (feature
/// `postgres`).
fn open_store(location: &str) -> Result<SummaryStore> {
    super::common::open_artifact(location, "summary store", SummaryStore::open_location)
}

/// A loaded model and its fitting budget.
pub(super) struct Model {
    pub(super) model: GgufModel,
    budget: Budget,
}

impl Model {
    fn prompt(spec: &SummarizeSpec) -> Result<SummaryPrompt> {
        SummaryPrompt::table2(spec.task).ok_or_else(|| {
            Error::InvalidJob(format!(
                "no summary prompt for {}; pick LaMP-1, 2, 2-old, 3, 4, 5, 6 or 7",
                spec.task
            ))
        })
    }

    pub(super) fn summarizer(&self, spec: &SummarizeSpec) -> Result<LlmSummarizer<'_, &GgufModel>> {
        Ok(LlmSummarizer::new(
            &self.model,
            Self::prompt(spec)?,
            self.model.tokenizer(),
            self.budget,
        ))
    }

    fn version(&self, spec: &SummarizeSpec) -> Result<String> {
        Ok(self.summarizer(spec)?.version())
    }
}

/// Loads the spec's model and its budget, as `pgraphrag summarize` does.
pub(super) fn load_model(spec: &SummarizeSpec) -> Result<Model> {
    Model::prompt(spec)?;
    let model = super::common::load_gguf(&spec.model, GgufOptions::default())?;
    // The one fitting budget of every summarizing run (`crate::summary_budget`).
    let budget = crate::summary_budget(&model, spec.context, spec.max_new_tokens).map_err(|e| {
        Error::InvalidJob(format!(
            "the model {}: {}",
            spec.model.display(),
            pgraphrag_core::error_chain(&e)
        ))
    })?;
    Ok(Model { model, budget })
}

/// Everything a worker loads for a summary job.
struct Loaded {
    spec: SummarizeSpec,
    model: Model,
    store: SummaryStore,
    questions: Arc<Vec<LampQuestion>>,
    /// Each question's distinct-user index (`usize::MAX`: past the job's users).
    user_of: Vec<usize>,
}

/// What a worker keeps between summary units: the last job's model, store and questions.
#[derive(Default)]
pub(crate) struct SummarizeCache {
    loaded: Option<Loaded>,
}

impl SummarizeCache {
    fn load(&mut self, spec: &SummarizeSpec) -> Result<&Loaded> {
        if self.loaded.as_ref().is_some_and(|l| l.spec == *spec) {
            return Ok(self.loaded.as_ref().expect("checked"));
        }
        self.loaded = None;
        let questions = read_questions(&spec.input, spec.task)?;
        let (user_of, users) = user_index(&questions, spec.scope, spec.users);
        if users != spec.users {
            return Err(Error::Input {
                path: spec.input.clone(),
                reason: format!(
                    "it has {users} users, the job summarises {}: the file changed since the job was submitted",
                    spec.users
                ),
            });
        }
        let model = load_model(spec)?;
        let store = open_store(&spec.summaries)?;
        Ok(self.loaded.insert(Loaded {
            spec: spec.clone(),
            model,
            store,
            questions: Arc::new(questions),
            user_of,
        }))
    }

    /// Summarises the unit's users the store lacks (each committed as it finishes). Returns
    /// the number of users of the unit; an error when any of them failed (the next delivery
    /// summarises only those).
    pub(crate) fn run(&mut self, msg: UnitRange<'_>, spec: &SummarizeSpec) -> Result<usize> {
        let unit_error = |reason: String| Error::Summarize {
            job: msg.job.to_string(),
            unit: msg.unit,
            reason,
        };
        let l = self.load(spec)?;
        let range = msg.start..msg.end;
        let questions: Vec<LampQuestion> = l
            .questions
            .iter()
            .zip(&l.user_of)
            .filter(|(_, u)| range.contains(u))
            .map(|(q, _)| q.clone())
            .collect();
        let summarizer = l.model.summarizer(spec)?;
        let report = SummarizeJob::new(spec.task, l.model.model.cache_id(), summarizer.version())
            .batch(spec.batch)
            .scope(spec.scope)
            .allow_new_config(spec.new_config)
            .run(&questions, &summarizer, &l.store, &NoProgress)
            .map_err(|e| unit_error(pgraphrag_core::error_chain(&e)))?;
        if report.failed > 0 {
            return Err(unit_error(format!(
                "{} of {} summaries failed (a retry summarises only those): {}",
                report.failed,
                report.users,
                report.failures.join("; ")
            )));
        }
        Ok(report.users)
    }
}
