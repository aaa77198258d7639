//! The offline job: summarise every user of a LaMP questions file that the store lacks.
use std::collections::HashMap;
use std::time::Instant;

use pgraphrag_core::{LampQuestion, LampTask, Progress, SummaryScope};
use serde::Serialize;

use crate::profile::{EntryFormat, profile_hash};
use crate::store::{Staleness, SummaryKey, SummaryStore};
use crate::summarizer::Summarizer;
use crate::{Error, Result};

/// Called with the user key right after each new summary is committed.
type OnStored<'a> = Box<dyn FnMut(&str) + Send + 'a>;

/// The offline summary job over a questions file (`s_u = LLM(P_u)`, once per user).
///
/// [`run`](Self::run): for each distinct user ([`crate::user_key`]) it computes the profile
/// hash; users with an empty profile are skipped (no summary is stored; a prompt builder
/// reads a missing summary as none); users whose summary the store has for this (profile,
/// model, version) are done; the rest (absent, or stored for a profile that has since
/// changed) are rendered ([`EntryFormat::render_profile`]: the task's format, or the one given
/// to [`for_format`](Self::for_format)) and summarised in batches of
/// [`batch`](Self::batch) through [`Summarizer::summarize_batch_each`], and each summary is
/// committed to the store the moment the summarizer hands it over. A rerun after a crash or
/// Ctrl-C computes only what is missing; a user whose profile changed is resummarised and
/// nobody else is.
///
/// A store that holds summaries of other (model, version) pairs only is refused with
/// [`Error::OtherConfig`] unless [`allow_new_config`](Self::allow_new_config) is set.
///
/// ```
/// use pgraphrag_core::{LampProfileItem, LampQuestion, LampTask, NoProgress, Result};
/// use pgraphrag_stages::{FitReport, SummarizeJob, Summarizer, Summary, SummaryStore};
/// struct First;
/// impl Summarizer for First {
///     fn summarize(&self, e: &[&str]) -> Result<Summary> {
///         Ok(Summary { text: e[0].to_string(), fit: FitReport::all(e.len()) })
///     }
/// }
/// let qs = vec![
///     LampQuestion::new("1", "x").with_profile(vec![LampProfileItem::new("a").with("text", "hey")]),
///     LampQuestion::new("2", "x"),
/// ];
/// let store = SummaryStore::in_memory().unwrap();
/// let job = SummarizeJob::new(LampTask::Lamp7, "toy", "v1");
/// let r = job.run(&qs, &First, &store, &NoProgress).unwrap();
/// assert_eq!((r.users, r.computed, r.skipped_empty), (2, 1, 1));
/// let again = SummarizeJob::new(LampTask::Lamp7, "toy", "v1").run(&qs, &First, &store, &NoProgress).unwrap();
/// assert_eq!((again.done_before, again.computed), (1, 0));
/// assert_eq!(store.summaries("toy", "v1").unwrap(), [("1".to_string(), "Tweet: hey".to_string())]);
/// ```
pub struct SummarizeJob<'a> {
    model: String,
    version: String,
    batch: usize,
    limit: Option<usize>,
    allow_new_config: bool,
    scope: SummaryScope,
    format: EntryFormat,
    on_stored: Option<OnStored<'a>>,
}

/// What a [`SummarizeJob`] did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct JobReport {
    /// Distinct users in the input (after any limit).
    pub users: usize,
    /// Users whose summary the store already had for this profile, model and version.
    pub done_before: usize,
    /// Summaries generated and stored by this run (including `resummarised`).
    pub computed: usize,
    /// Of `computed`: users whose stored summary was of an older profile.
    pub resummarised: usize,
    /// Users with an empty profile (nothing stored).
    pub skipped_empty: usize,
    /// Users whose summary failed (see `failures`); nothing stored for them.
    pub failed: usize,
    /// Profile entries the computed summaries read.
    pub entries_kept: usize,
    /// Profile entries the fitting rule left out of the computed summaries.
    pub entries_dropped: usize,
    /// Computed summaries whose one entry was cut to fit.
    pub truncated: usize,
    /// Wall seconds spent summarising.
    pub seconds: f64,
    /// The summary texts' total characters (to estimate generated tokens).
    pub summary_chars: usize,
    /// Each failure, as its error chain.
    pub failures: Vec<String>,
    /// The user keys computed by this run, in the order they were stored.
    #[serde(skip)]
    pub stored: Vec<String>,
}

/// One user to summarise.
struct Todo<'q> {
    user: &'q str,
    hash: String,
    question: &'q LampQuestion,
    staleness: Staleness,
}

impl<'a> SummarizeJob<'a> {
    /// A job for `task`, storing summaries under `model` (e.g. `GgufModel::cache_id()`) and
    /// `version` (e.g. [`LlmSummarizer::version`](crate::LlmSummarizer::version)); batches of 8.
    pub fn new(task: LampTask, model: impl Into<String>, version: impl Into<String>) -> Self {
        Self::for_format(EntryFormat::task(task), model, version)
    }

    /// A job whose profile items are written in `format` (e.g.
    /// [`EntryFormat::PRODUCT_REVIEW`]) rather than a LaMP task's; name the format in the
    /// summarizer's prompt, whose version the store keys summaries by.
    ///
    /// ```
    /// use pgraphrag_core::{LampProfileItem, LampQuestion, NoProgress, Result};
    /// use pgraphrag_stages::{EntryFormat, FitReport, SummarizeJob, Summarizer, Summary, SummaryStore};
    /// struct First;
    /// impl Summarizer for First {
    ///     fn summarize(&self, e: &[&str]) -> Result<Summary> {
    ///         Ok(Summary { text: e[0].to_string(), fit: FitReport::all(e.len()) })
    ///     }
    /// }
    /// let item = LampProfileItem::new("r1").with("title", "Good").with("text", "Fine.").with("score", "4");
    /// let qs = vec![LampQuestion::new("item-1", "").with_profile(vec![item])];
    /// let store = SummaryStore::in_memory().unwrap();
    /// SummarizeJob::for_format(EntryFormat::PRODUCT_REVIEW, "toy", "v1").run(&qs, &First, &store, &NoProgress).unwrap();
    /// assert_eq!(store.summaries("toy", "v1").unwrap()[0].1, "Review title: Good\nReview text: Fine.\nRating: 4");
    /// ```
    pub fn for_format(
        format: EntryFormat,
        model: impl Into<String>,
        version: impl Into<String>,
    ) -> Self {
        SummarizeJob {
            model: model.into(),
            version: version.into(),
            batch: 8,
            limit: None,
            allow_new_config: false,
            scope: SummaryScope::User,
            format,
            on_stored: None,
        }
    }

    /// Users handed to the summarizer per call (at least 1). Each batch's summaries are
    /// stored one by one as they finish.
    pub fn batch(mut self, n: usize) -> Self {
        self.batch = n.max(1);
        self
    }

    /// Only the first `n` distinct users of the input.
    pub fn limit(mut self, n: Option<usize>) -> Self {
        self.limit = n;
        self
    }

    /// Summaries per user (the default) or per question ([`SummaryScope`]); the store's user
    /// key is then the question id.
    pub fn scope(mut self, scope: SummaryScope) -> Self {
        self.scope = scope;
        self
    }

    /// Allow a store that holds other (model, version) pairs only.
    pub fn allow_new_config(mut self, yes: bool) -> Self {
        self.allow_new_config = yes;
        self
    }

    /// Calls `f(user)` right after each new summary is committed (a journal of finished work).
    pub fn on_stored(mut self, f: impl FnMut(&str) + Send + 'a) -> Self {
        self.on_stored = Some(Box::new(f));
        self
    }

    /// Runs the job (see the [type docs](Self)). Per-user summarizer failures are counted
    /// and listed in the report, and the others go on; a missing profile field, two
    /// questions of one user with different profiles, or a store error stop the job with
    /// an error (every summary stored before it stays).
    pub fn run<S: Summarizer + ?Sized>(
        mut self,
        questions: &[LampQuestion],
        summarizer: &S,
        store: &SummaryStore,
        progress: &dyn Progress,
    ) -> Result<JobReport> {
        if !self.allow_new_config {
            store.check_config(&self.model, &self.version)?;
        }
        let mut report = JobReport::default();
        let mut todo = Vec::new();
        let mut seen: HashMap<&str, (String, &str)> = HashMap::new();
        for q in questions {
            let user = q.summary_key(self.scope);
            let hash = profile_hash(&q.profile);
            if let Some((h, first)) = seen.get(user) {
                if *h != hash {
                    return Err(Error::ConflictingProfiles {
                        user: user.to_string(),
                        first: first.to_string(),
                        second: q.id.clone(),
                    });
                }
                continue;
            }
            if self.limit.is_some_and(|n| seen.len() >= n) {
                break;
            }
            seen.insert(user, (hash.clone(), &q.id));
            report.users += 1;
            if q.profile.is_empty() {
                report.skipped_empty += 1;
                continue;
            }
            // Bad input stops the job before any generation.
            for item in &q.profile {
                self.format.render(item).map_err(|e| user_error(user, e))?;
            }
            let key = SummaryKey {
                user,
                profile_hash: &hash,
                model: &self.model,
                version: &self.version,
            };
            match store.status(&key)? {
                None => report.done_before += 1,
                Some(staleness) => todo.push(Todo {
                    user,
                    hash,
                    question: q,
                    staleness,
                }),
            }
        }

        progress.start(todo.len() as u64, "users");
        progress.message(&format!("{} done before", report.done_before));
        let start = Instant::now();
        let result = self.summarise(&todo, summarizer, store, progress, &mut report);
        report.seconds = start.elapsed().as_secs_f64();
        progress.finish();
        result.map(|()| report)
    }

    fn summarise<S: Summarizer + ?Sized>(
        &mut self,
        todo: &[Todo<'_>],
        summarizer: &S,
        store: &SummaryStore,
        progress: &dyn Progress,
        report: &mut JobReport,
    ) -> Result<()> {
        for chunk in todo.chunks(self.batch) {
            let rendered: Vec<Vec<String>> = chunk
                .iter()
                .map(|t| self.format.render_profile(&t.question.profile))
                .collect::<Result<_>>()?;
            let refs: Vec<Vec<&str>> = rendered
                .iter()
                .map(|v| v.iter().map(String::as_str).collect())
                .collect();
            let slices: Vec<&[&str]> = refs.iter().map(Vec::as_slice).collect();
            let mut fatal: Option<Error> = None;
            let mut last = Instant::now();
            let (model, version) = (self.model.as_str(), self.version.as_str());
            let on_stored = &mut self.on_stored;
            summarizer.summarize_batch_each(&slices, &mut |i, r| {
                let Some(t) = chunk.get(i) else { return };
                let secs = last.elapsed().as_secs_f64();
                last = Instant::now();
                let summary = match r {
                    Ok(s) => s,
                    Err(source) => {
                        report.failed += 1;
                        let e = Error::Summarize {
                            user: t.user.to_string(),
                            source,
                        };
                        report.failures.push(pgraphrag_core::error_chain(&e));
                        progress.advance(1);
                        return;
                    }
                };
                if fatal.is_some() {
                    return;
                }
                let key = SummaryKey {
                    user: t.user,
                    profile_hash: &t.hash,
                    model,
                    version,
                };
                if let Err(e) = store.put(&key, &summary, secs) {
                    fatal = Some(e);
                    return;
                }
                if let Some(f) = on_stored.as_mut() {
                    f(t.user);
                }
                report.computed += 1;
                if t.staleness == Staleness::ProfileChanged {
                    report.resummarised += 1;
                }
                report.entries_kept += summary.fit.kept;
                report.entries_dropped += summary.fit.dropped;
                report.truncated += usize::from(summary.fit.truncated);
                report.summary_chars += summary.text.chars().count();
                report.stored.push(t.user.to_string());
                progress.advance(1);
            });
            if let Some(e) = fatal {
                return Err(e);
            }
            progress.message(&format!(
                "{} done before, {} computed, {} failed",
                report.done_before, report.computed, report.failed
            ));
        }
        Ok(())
    }
}

fn user_error(user: &str, e: Error) -> Error {
    Error::User {
        user: user.to_string(),
        source: Box::new(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fit::FitReport;
    use crate::summarizer::Summary;
    use pgraphrag_core::{LampProfileItem, NoProgress};
    use std::sync::Mutex;

    /// A test double: summarises as the joined entries, records every call, fails on entries
    /// containing "FAIL", and reports each batch in reverse order.
    #[derive(Default)]
    struct Double {
        calls: Mutex<Vec<String>>,
    }
    impl Summarizer for Double {
        fn summarize(&self, entries: &[&str]) -> pgraphrag_core::Result<Summary> {
            let text = entries.join(" | ");
            self.calls.lock().unwrap().push(text.clone());
            if text.contains("FAIL") {
                return Err(pgraphrag_core::Error::InvalidInput("asked to fail".into()));
            }
            Ok(Summary {
                text,
                fit: FitReport::all(entries.len()),
            })
        }
        fn summarize_batch_each(
            &self,
            profiles: &[&[&str]],
            done: &mut (dyn FnMut(usize, pgraphrag_core::Result<Summary>) + Send),
        ) {
            for i in (0..profiles.len()).rev() {
                done(i, self.summarize(profiles[i]));
            }
        }
    }

    fn q(id: &str, texts: &[&str]) -> LampQuestion {
        LampQuestion::new(id, "input").with_profile(
            texts
                .iter()
                .enumerate()
                .map(|(i, t)| LampProfileItem::new(format!("{id}-{i}")).with("text", *t))
                .collect(),
        )
    }

    fn users() -> Vec<LampQuestion> {
        vec![
            q("a", &["a1", "a2"]),
            q("b", &["b1"]),
            q("c", &[]),
            q("d", &["d1", "d2", "d3"]),
            q("e", &["e1"]),
        ]
    }

    fn job() -> SummarizeJob<'static> {
        SummarizeJob::new(LampTask::Lamp7, "double", "v1").batch(2)
    }

    #[test]
    fn a_changed_profile_is_resummarised_and_nobody_else() {
        let store = SummaryStore::in_memory().unwrap();
        let mut qs = users();
        let s = Double::default();
        let r = job().run(&qs, &s, &store, &NoProgress).unwrap();
        assert_eq!(
            (r.users, r.computed, r.skipped_empty, r.done_before),
            (5, 4, 1, 0)
        );
        assert_eq!(r.entries_kept, 7);
        assert_eq!(s.calls.lock().unwrap().len(), 4);

        qs[3].profile[1] = LampProfileItem::new("d-1").with("text", "d2 edited");
        let s2 = Double::default();
        let r2 = job().run(&qs, &s2, &store, &NoProgress).unwrap();
        assert_eq!(
            (
                r2.computed,
                r2.resummarised,
                r2.done_before,
                r2.skipped_empty
            ),
            (1, 1, 3, 1)
        );
        assert_eq!(r2.stored, ["d"]);
        assert_eq!(
            *s2.calls.lock().unwrap(),
            ["Tweet: d1 | Tweet: d2 edited | Tweet: d3"]
        );
        assert_eq!(store.len().unwrap(), 4);
        let d = &store.summaries("double", "v1").unwrap()[2];
        assert_eq!(d.0, "d");
        assert!(d.1.contains("d2 edited"));
    }

    #[test]
    fn failures_are_reported_and_the_rerun_computes_only_them() {
        let store = SummaryStore::in_memory().unwrap();
        let mut qs = users();
        qs[1] = q("b", &["FAIL"]);
        let stored = Mutex::new(Vec::new());
        let s = Double::default();
        let r = job()
            .on_stored(|u| stored.lock().unwrap().push(u.to_string()))
            .run(&qs, &s, &store, &NoProgress)
            .unwrap();
        assert_eq!((r.computed, r.failed), (3, 1));
        assert!(
            r.failures[0].contains("summarising user \"b\": invalid input: asked to fail"),
            "{:?}",
            r.failures
        );
        // Reported in reverse within each batch of 2, stored as reported.
        assert_eq!(*stored.lock().unwrap(), ["a", "e", "d"]);
        assert_eq!(r.stored, ["a", "e", "d"]);

        qs[1] = q("b", &["fine"]);
        let s2 = Double::default();
        let r2 = job().run(&qs, &s2, &store, &NoProgress).unwrap();
        assert_eq!((r2.computed, r2.resummarised, r2.done_before), (1, 0, 3));
        assert_eq!(*s2.calls.lock().unwrap(), ["Tweet: fine"]);
    }

    #[test]
    fn limit_and_duplicate_users() {
        let store = SummaryStore::in_memory().unwrap();
        let mut qs = users();
        let mut dup = q("a2", &["a1", "a2"]);
        dup.user_id = Some("x".into());
        let mut dup2 = dup.clone();
        dup2.id = "a3".into();
        qs.insert(0, dup);
        qs.insert(1, dup2);
        let s = Double::default();
        let r = job()
            .limit(Some(2))
            .run(&qs, &s, &store, &NoProgress)
            .unwrap();
        assert_eq!((r.users, r.computed), (2, 2), "x once, then a");
        assert_eq!(store.summaries("double", "v1").unwrap().len(), 2);
        qs[1].profile.pop();
        let e = job().run(&qs, &s, &store, &NoProgress).unwrap_err();
        assert!(
            matches!(&e, Error::ConflictingProfiles { user, first, second } if user == "x" && first == "a2" && second == "a3"),
            "{e}"
        );
    }

    #[test]
    fn bad_input_and_other_models_are_errors_before_any_generation() {
        let store = SummaryStore::in_memory().unwrap();
        let mut qs = users();
        qs[4].profile[0].fields.clear();
        let s = Double::default();
        let e = job().run(&qs, &s, &store, &NoProgress).unwrap_err();
        assert_eq!(
            pgraphrag_core::error_chain(&e),
            "user \"e\": profile item \"e-0\" has no field `text` (a LaMP-7 item has text)"
        );
        assert!(s.calls.lock().unwrap().is_empty());
        assert!(store.is_empty().unwrap());

        job().run(&users(), &s, &store, &NoProgress).unwrap();
        let other = SummarizeJob::new(LampTask::Lamp7, "another-model", "v1");
        let e = other.run(&users(), &s, &store, &NoProgress).unwrap_err();
        assert!(matches!(e, Error::OtherConfig { .. }), "{e}");
        assert!(
            e.to_string()
                .contains("holds 4 of model \"double\" version \"v1\""),
            "{e}"
        );
        let ok = SummarizeJob::new(LampTask::Lamp7, "another-model", "v1")
            .allow_new_config(true)
            .run(&users(), &s, &store, &NoProgress)
            .unwrap();
        assert_eq!(ok.computed, 4);
        assert_eq!(store.configs().unwrap().len(), 2);
    }
}
