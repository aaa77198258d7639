//! The offline user summaries of summary-augmented LaMP (Richardson et al.) for one LaMP
//! questions file, with a local GGUF model, into a resumable summary store (`pgraphrag
//! summarize`): the task's Table 2 prompt, the fitting budget, every user the store lacks
//! summarised and committed as it finishes. The recipe is `pgraphrag_stages::SummarizeJob`;
//! the queue's unit form is [`crate::jobs::SummarizeSpec`]. See `docs/stages.md`.
use std::collections::HashSet;
use std::path::PathBuf;

use pgraphrag_core::{LampTask, Progress, SummaryScope, TokenCounter};
use pgraphrag_eval::Journal;
use pgraphrag_llm::{GgufModel, GgufOptions};
use pgraphrag_stages::{JobReport, LlmSummarizer, SummarizeJob, SummaryPrompt, SummaryStore};
use serde::{Deserialize, Serialize};

use crate::location::{describe_location, open_location};
use crate::{Error, Result, summary_budget};

/// Summarises every user of a LaMP questions file.
///
/// ```
/// use pgraphrag_core::LampTask;
/// use pgraphrag_runs::lamp::SummarizeSpec;
/// let spec = SummarizeSpec::paper(LampTask::Lamp3, "dev_questions.json", "models/llm.gguf", "runs/summaries.sqlite");
/// assert_eq!((spec.context, spec.max_new_tokens, spec.batch), (2048, 128, 8));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SummarizeSpec {
    /// The LaMP questions file.
    pub input: PathBuf,
    /// Its task (the Table 2 prompt).
    pub task: LampTask,
    /// The GGUF model that writes the summaries.
    pub model: PathBuf,
    /// The summary store (a SQLite file, or a PostgreSQL URL with feature `postgres`).
    pub store: PathBuf,
    /// Also export the store's summaries of this model and prompt as JSON lines here.
    pub export: Option<PathBuf>,
    /// Only the first N distinct users.
    pub limit: Option<usize>,
    /// Users handed to the model per call.
    pub batch: usize,
    /// Most tokens per summary.
    pub max_new_tokens: usize,
    /// The summarizer's context in tokens: prompt and summary together (the paper's Vicuna
    /// had 2,048); profile entries beyond it are dropped, most recent kept.
    pub context: usize,
    /// Accept a store that holds summaries of other models or prompt versions only.
    pub new_config: bool,
    /// Summaries per user or per question.
    pub scope: SummaryScope,
    /// Append `stored <key>` to this file right after each summary is committed.
    pub journal: Option<PathBuf>,
}

/// What a [`SummarizeSpec`] run did.
#[derive(Debug, Clone, Serialize)]
pub struct SummarizeReport {
    /// The job's counts and seconds.
    #[serde(flatten)]
    pub report: JobReport,
    /// The model's cache id.
    pub model: String,
    /// The prompt version.
    pub version: String,
    /// Tokens of the summaries computed by this run.
    pub generated_tokens: usize,
    /// Summaries computed per second.
    pub summaries_per_s: f64,
    /// Their tokens per second.
    pub generated_tokens_per_s: f64,
    /// Summaries exported, when asked for.
    #[serde(skip)]
    pub exported: Option<usize>,
}

impl SummarizeReport {
    /// An error when some summaries failed (a rerun retries only those).
    pub fn complete(&self) -> Result<()> {
        if self.report.failures.is_empty() {
            return Ok(());
        }
        Err(Error::work(format!(
            "{} of {} summaries failed; a rerun retries only those",
            self.report.failed, self.report.users
        ))(std::io::Error::other(
            "each failure is listed above (`failed: …`)",
        )))
    }
}

impl SummarizeSpec {
    /// The paper's setting: a 2,048-token context, 128 new tokens, one summary per user, 8
    /// users per call, every user.
    pub fn paper(
        task: LampTask,
        input: impl Into<PathBuf>,
        model: impl Into<PathBuf>,
        store: impl Into<PathBuf>,
    ) -> SummarizeSpec {
        SummarizeSpec {
            input: input.into(),
            task,
            model: model.into(),
            store: store.into(),
            export: None,
            limit: None,
            batch: 8,
            max_new_tokens: 128,
            context: 2048,
            new_config: false,
            scope: SummaryScope::User,
            journal: None,
        }
    }

    /// Summarises every user the store lacks. Summaries that failed are listed in the
    /// report (the rest are stored and exported; [`SummarizeReport::complete`] says whether
    /// any failed, and a rerun retries only those).
    pub fn run(&self, progress: &dyn Progress) -> Result<SummarizeReport> {
        let Some(prompt) = SummaryPrompt::table2(self.task) else {
            return Err(Error::Setting(format!(
                "no summary prompt for {}; pick LaMP-1, 2, 2-old, 3, 4, 5, 6 or 7",
                self.task
            )));
        };
        let questions = pgraphrag_data::lamp::read_questions_for(&self.input, self.task).map_err(
            Error::input(format!("reading the {} questions file", self.task)),
        )?;
        if !self.model.is_file() {
            return Err(Error::Setting(format!(
                "model file {} not found (scripts/fetch-llms.sh --smollm-only fetches SmolLM2)",
                self.model.display()
            )));
        }
        let model = GgufModel::load(&self.model, GgufOptions::default()).map_err(Error::work(
            format!("loading the GGUF model {}", self.model.display()),
        ))?;
        let budget = summary_budget(&model, self.context, self.max_new_tokens)?;
        let summarizer = LlmSummarizer::new(&model, prompt, model.tokenizer(), budget);
        let (model_id, version) = (model.cache_id(), summarizer.version());
        let store = open_location(
            &self.store,
            "the summary store",
            SummaryStore::open_location,
        )?;
        let mut job = SummarizeJob::new(self.task, model_id.as_str(), version.as_str())
            .batch(self.batch)
            .limit(self.limit)
            .allow_new_config(self.new_config)
            .scope(self.scope);
        if let Some(path) = &self.journal {
            job = job.on_stored(Journal::open(path)?.into_hook());
        }
        progress.note(&format!(
            "summarize: {} questions of {}, task {}, model {model_id}, version {version}, store {}",
            questions.len(),
            self.input.display(),
            self.task,
            describe_location(&self.store)
        ));
        let report = job.run(&questions, &summarizer, &store, progress)?;
        let computed: HashSet<&str> = report.stored.iter().map(String::as_str).collect();
        let mut generated_tokens = 0;
        for (user, summary) in store.summaries(&model_id, &version)? {
            if computed.contains(user.as_str()) {
                generated_tokens += model.tokenizer().count(&summary)?;
            }
        }
        progress.note(&format!(
            "{} users: {} done before, {} computed ({} because the profile changed) in {:.1}s, {} with an empty profile skipped, {} failed",
            report.users,
            report.done_before,
            report.computed,
            report.resummarised,
            report.seconds,
            report.skipped_empty,
            report.failed
        ));
        let exported = match &self.export {
            Some(path) => {
                let n = store.export_jsonl(path, &model_id, &version)?;
                progress.note(&format!("wrote {n} summaries to {}", path.display()));
                Some(n)
            }
            None => None,
        };
        for f in &report.failures {
            progress.note(&format!("failed: {f}"));
        }
        let secs = report.seconds.max(1e-9);
        Ok(SummarizeReport {
            summaries_per_s: report.computed as f64 / secs,
            generated_tokens_per_s: generated_tokens as f64 / secs,
            report,
            model: model_id,
            version,
            generated_tokens,
            exported,
        })
    }
}
