//! The multistage summarization and synthesis stages zero-shot with the real
//! SmolLM2-135M-Instruct model: ranked entries from real BM25, a context-dependent summary and
//! important words, then the generation input they fill.
//!
//! Needs `models/SmolLM2-135M-Instruct.Q4_1.gguf` (`scripts/fetch-llms.sh --smollm-only`);
//! without it the test says so and does nothing (under `CI=true` it fails).
use std::path::Path;

use pgraphrag_core::Prompt;
use pgraphrag_llm::{GgufModel, GgufOptions};
use pgraphrag_stages::multistage::{
    ContextCut, ContextMode, ContextRanker, ContextSummarizer, FirstKCharacters, ImmediateContext,
    InputFormat, LlmContextStage, LlmSynthesizer, PaperFormat, PastDoc, RankDocBM25, Sections,
    Synthesizer, join_words, stage_prompt, synthesis_prompt,
};
use pgraphrag_stages::{Budget, LlmSummarizer};

#[test]
fn smollm_summarizes_and_synthesizes_ranked_entries() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/SmolLM2-135M-Instruct.Q4_1.gguf");
    if !path.is_file() {
        let msg = format!(
            "the SmolLM2 model is missing at {} (scripts/fetch-llms.sh --smollm-only)",
            path.display()
        );
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{msg}");
        eprintln!("SKIPPED: {msg}");
        return;
    }
    let model = GgufModel::load(&path, GgufOptions::default()).unwrap();
    let reserve = model.prompt_tokens(&Prompt::user("")).unwrap().len();
    let budget = Budget {
        context: 768,
        max_new_tokens: 24,
        reserve,
    };
    let past = vec![
        PastDoc::new(
            "r1",
            1,
            "Loved this mystery novel. The detective is sharp and the twist at the end surprised me.",
        ),
        PastDoc::new(
            "r2",
            2,
            "A slow cookbook with too many photos and too few recipes.",
        ),
        PastDoc::new(
            "r3",
            3,
            "Another great mystery: the detective and her dog solve a murder in a small village.",
        ),
    ];
    let x = FirstKCharacters::paper().context(
        Some("Gripping mystery"),
        "This detective story kept me up all night",
    );
    let ranked = RankDocBM25::bm25()
        .ranked_context(&x, &past, &ContextCut::paper())
        .unwrap();
    assert_ne!(ranked.entries[0].doc, 1, "a mystery review ranks first");

    let summarizer = LlmContextStage::new(
        LlmSummarizer::new(
            &model,
            stage_prompt(ContextMode::Dependent),
            model.tokenizer(),
            budget,
        ),
        ContextMode::Dependent,
    );
    let fitted = summarizer.summary(&x, &ranked.text).unwrap();
    assert_eq!(
        (fitted.fit.kept, fitted.fit.dropped, fitted.fit.truncated),
        (2, 0, false)
    );
    assert!(!fitted.text.is_empty());
    // The batch path answers as the single call (greedy decoding).
    let mut batch = Vec::new();
    summarizer.summarize_batch_each(&[(&x, &ranked.text)], &mut |i, r| {
        batch.push((i, r.unwrap()))
    });
    assert_eq!(batch, [(0, fitted.text.clone())]);

    let synth = LlmSynthesizer::new(LlmSummarizer::new(
        &model,
        synthesis_prompt(),
        model.tokenizer(),
        budget,
    ))
    .max_words(20);
    let words = synth.important_words(&x, &ranked.text, &past).unwrap();
    assert!(!words.is_empty() && words.len() <= 20, "{words:?}");
    let words = join_words(&words);

    let input = PaperFormat.generation(&Sections {
        passage_start: Some(&x),
        summary: Some(&fitted.text),
        important_words: Some(&words),
        past_passages: Some(&ranked.text),
    });
    eprintln!("{input}");
    assert!(input.starts_with(
        "Finish the passage in the user voice\n\npassage start: Gripping mystery\nThis detective"
    ));
}
