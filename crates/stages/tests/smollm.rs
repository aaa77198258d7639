//! The summary job with the real SmolLM2-135M-Instruct model: three LaMP-7 users, one of them
//! with a profile too long for a small context, so the fitting rule drops entries and the
//! model (which refuses prompts over its context) still answers every user.
//!
//! Needs `models/SmolLM2-135M-Instruct.Q4_1.gguf` (`scripts/fetch-llms.sh --smollm-only`);
//! without it the test says so and does nothing.
use std::path::{Path, PathBuf};

use pgraphrag_core::{LampProfileItem, LampQuestion, LampTask, NoProgress, Prompt};
use pgraphrag_llm::{GgufModel, GgufOptions};
use pgraphrag_stages::{
    Budget, LlmSummarizer, SummarizeJob, SummaryKey, SummaryPrompt, SummaryStore,
};

fn model_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/SmolLM2-135M-Instruct.Q4_1.gguf")
}

fn tweets(user: &str, n: usize, words: usize) -> LampQuestion {
    let profile = (0..n)
        .map(|i| {
            let text = (0..words)
                .map(|w| format!("word{}", (i * 7 + w) % 13))
                .collect::<Vec<_>>()
                .join(" ");
            LampProfileItem::new(format!("{user}-{i}"))
                .with("text", format!("omg {text}!! #day{i}"))
                .dated(format!("2020-01-{:02}", i + 1))
        })
        .collect();
    LampQuestion::new(
        user,
        "Paraphrase the following tweet without any explanation before or after it: hello",
    )
    .with_profile(profile)
}

#[test]
fn smollm_summarises_three_users_within_the_context() {
    let path = model_path();
    if !path.is_file() {
        let msg = format!(
            "the SmolLM2 model is missing at {} (scripts/fetch-llms.sh --smollm-only)",
            path.display()
        );
        // CI fetches the model (scripts/test.sh): there a missing model is a failure.
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{msg}");
        eprintln!("SKIPPED: {msg}");
        return;
    }
    let model = GgufModel::load(&path, GgufOptions::default()).unwrap();
    // What the chat template adds around the message (SmolLM2's default system prompt too).
    let reserve = model.prompt_tokens(&Prompt::user("")).unwrap().len();
    let budget = Budget {
        context: 320,
        max_new_tokens: 24,
        reserve,
    };
    let prompt = SummaryPrompt::table2(LampTask::Lamp7).unwrap();
    let summarizer = LlmSummarizer::new(&model, prompt, model.tokenizer(), budget);
    let questions = vec![tweets("u1", 3, 6), tweets("u2", 60, 12), tweets("u3", 2, 4)];

    // The long profile is cut to the most recent entries, and the prompt fits exactly.
    let entries = pgraphrag_stages::render_profile(LampTask::Lamp7, &questions[1].profile).unwrap();
    let refs: Vec<&str> = entries.iter().map(String::as_str).collect();
    assert!(refs[0].contains("#day59"), "most recent first: {}", refs[0]);
    let (p, fit) = summarizer.prompt_for(&refs).unwrap();
    let n = model.prompt_tokens(&p).unwrap().len();
    assert!(fit.kept > 0 && fit.dropped > 0, "{fit:?}");
    assert!(
        n + budget.max_new_tokens <= budget.context,
        "{n} prompt tokens"
    );
    assert!(
        n + budget.max_new_tokens + 40 > budget.context,
        "the budget is used: {n}"
    );

    let dir = tempfile::tempdir().unwrap();
    let store = SummaryStore::open(&dir.path().join("s.sqlite")).unwrap();
    let model_id = model.cache_id();
    let version = summarizer.version();
    let report = SummarizeJob::new(LampTask::Lamp7, model_id.as_str(), version.as_str())
        .batch(3)
        .run(&questions, &summarizer, &store, &NoProgress)
        .unwrap();
    assert_eq!(report.failures, Vec::<String>::new());
    assert_eq!((report.users, report.computed), (3, 3));
    assert_eq!(report.entries_kept + report.entries_dropped, 65);
    for q in &questions {
        let hash = pgraphrag_stages::profile_hash(&q.profile);
        let key = SummaryKey {
            user: &q.id,
            profile_hash: &hash,
            model: &model_id,
            version: &version,
        };
        let s = store.get(&key).unwrap().unwrap();
        assert!(!s.summary.trim().is_empty(), "{}: empty summary", q.id);
        eprintln!(
            "{}: kept {} dropped {}: {:?}",
            q.id, s.fit.kept, s.fit.dropped, s.summary
        );
    }
    let again = SummarizeJob::new(LampTask::Lamp7, model_id.as_str(), version.as_str())
        .run(&questions, &summarizer, &store, &NoProgress)
        .unwrap();
    assert_eq!((again.done_before, again.computed), (3, 0));
}
