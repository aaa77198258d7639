//! The summarize job's tests, which drive the whole [`super::JobRunner`] (beside the handler, not
//! inside it: the handler does not import the runner that calls it).
use std::path::{Path, PathBuf};

use pgraphrag_core::{LampProfileItem, LampQuestion, LampTask, NoProgress, SummaryScope};
use pgraphrag_stages::{SummarizeJob, SummaryStore};

use super::summarize::*;
use super::{Error, JobRunner, JobSpec, JobStore, ResultSink, UnitOutcome, plan};

/// A LaMP-7 questions file: `n` users with three tweets each, one with two questions
/// (same profile) and one with an empty profile.
fn questions_file(dir: &Path, n: usize) -> PathBuf {
    let mut qs: Vec<LampQuestion> = (0..n)
        .map(|i| {
            let profile = [
                format!("just got coffee #{i} lol"),
                "why is monday SO long".to_string(),
                format!("can't wait for the weekend!!! ({i})"),
            ]
            .iter()
            .enumerate()
            .map(|(k, t)| {
                LampProfileItem::new(format!("u{i}-{k}"))
                    .with("text", t.as_str())
                    .dated(format!("2021-03-{:02}", k + 1))
            })
            .collect();
            LampQuestion::new(format!("u{i}"), "Paraphrase the following tweet: nice day")
                .with_profile(profile)
        })
        .collect();
    let mut again = qs[0].clone();
    again.id = "u0-again".into();
    again.user_id = Some("u0".into());
    qs[0].user_id = Some("u0".into());
    qs.insert(2, again);
    qs.push(LampQuestion::new("empty", "x"));
    let p = dir.join("q.json");
    std::fs::write(&p, serde_json::to_vec(&qs).unwrap()).unwrap();
    p
}

#[test]
fn summary_units_out_of_order_equal_one_summarize_run() {
    let Some(model) = super::test_model() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let input = questions_file(dir.path(), 3);
    let users = count_users(&input, LampTask::Lamp7, SummaryScope::User).unwrap();
    assert_eq!(users, 4);
    let queued = dir.path().join("queued.sqlite");
    let mut spec = SummarizeSpec::new(
        &input,
        LampTask::Lamp7,
        &model,
        queued.display().to_string(),
        users,
    );
    (spec.max_new_tokens, spec.context, spec.batch) = (12, 256, 2);
    let (model_id, version) = spec.check().unwrap();
    let store = dir.path().join("jobs.sqlite").display().to_string();
    let planned = plan(&JobSpec::Summarize(spec.clone()), &store, 2).unwrap();
    assert_eq!(planned.units.len(), 2);
    let mut runner = JobRunner::sqlite("w");
    for u in [1, 0] {
        let out = runner.run(&planned.units[u].payload).unwrap();
        assert!(
            matches!(out, UnitOutcome::Stored { items: 2, .. }),
            "{out:?}"
        );
    }
    // Redelivered: found done, nothing computed (a fresh runner, as after a crash).
    let mut again = JobRunner::sqlite("w2");
    assert_eq!(
        again.run(&planned.units[0].payload).unwrap(),
        UnitOutcome::AlreadyDone
    );
    let jobs = JobStore::open(Path::new(&store)).unwrap().jobs().unwrap();
    assert_eq!((jobs[0].units_done, jobs[0].stores), (2, 2));

    // One in-process run, as `pgraphrag summarize` does it.
    let direct = SummaryStore::in_memory().unwrap();
    let m = load_model(&spec).unwrap();
    let summarizer = m.summarizer(&spec).unwrap();
    assert_eq!(
        (m.model.cache_id(), summarizer.version()),
        (model_id.clone(), version.clone())
    );
    let qs = read_questions(&input, LampTask::Lamp7).unwrap();
    let r = SummarizeJob::new(LampTask::Lamp7, &model_id, &version)
        .run(&qs, &summarizer, &direct, &NoProgress)
        .unwrap();
    assert_eq!((r.computed, r.skipped_empty), (3, 1));
    let queued_store = SummaryStore::open(&queued).unwrap();
    let got = queued_store.summaries(&model_id, &version).unwrap();
    assert_eq!(got.len(), 3);
    assert_eq!(got, direct.summaries(&model_id, &version).unwrap());

    // A unit whose done mark was lost finds every summary in the store: nothing computed.
    let r = SummarizeJob::new(LampTask::Lamp7, &model_id, &version)
        .run(&qs, &summarizer, &queued_store, &NoProgress)
        .unwrap();
    assert_eq!((r.done_before, r.computed), (3, 0));
}

#[test]
fn a_limit_stops_where_summarize_job_stops_reading() {
    let qs: Vec<LampQuestion> = ["a", "b", "a", "c", "a"]
        .iter()
        .enumerate()
        .map(|(i, u)| {
            let mut q = LampQuestion::new(format!("q{i}"), "x");
            q.user_id = Some(u.to_string());
            q
        })
        .collect();
    let m = usize::MAX;
    assert_eq!(
        user_index(&qs, SummaryScope::User, m),
        (vec![0, 1, 0, 2, 0], 3)
    );
    assert_eq!(
        user_index(&qs, SummaryScope::User, 2),
        (vec![0, 1, 0, m, m], 2)
    );
    assert_eq!(
        user_index(&qs, SummaryScope::Question, 2).0,
        [0, 1, m, m, m]
    );
}

#[test]
fn a_missing_model_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let input = questions_file(dir.path(), 2);
    let missing = dir.path().join("no-such-model.gguf");
    let spec = SummarizeSpec::new(
        &input,
        LampTask::Lamp7,
        &missing,
        dir.path().join("s.sqlite").display().to_string(),
        3,
    );
    let e = spec.check().unwrap_err();
    assert!(matches!(e, Error::Input { .. }), "{e}");
    let store = dir.path().join("jobs.sqlite").display().to_string();
    let planned = plan(&JobSpec::Summarize(spec), &store, 2).unwrap();
    let e = JobRunner::sqlite("w")
        .run(&planned.units[0].payload)
        .unwrap_err();
    assert!(e.to_string().contains("model file not found"), "{e}");
    // A file that lost users since submission.
    let mut spec = SummarizeSpec::new(&input, LampTask::Lamp7, &missing, "s.sqlite", 9);
    spec.users = 9;
    let planned = plan(&JobSpec::Summarize(spec), &store, 9).unwrap();
    let e = JobRunner::sqlite("w")
        .run(&planned.units[0].payload)
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("changed since the job was submitted"),
        "{e}"
    );
}
