//! The grid's planning with test doubles: which sections each cell's prompt has, the
//! passage-start option, the choice of the best ranker and summary, the paired tests'
//! baselines, and a rerun that computes nothing.
use pgraphrag_core::{GenParams, Generator, Prompt};
use pgraphrag_corpora::lamp::SplitName;
use pgraphrag_corpora::multistage::{ContextDoc, Example};
use pgraphrag_stages::multistage::{
    ContextMode, ContextRanker, ContextSummarizer, Idf, Keywords, RankDocBM25, RecentDoc,
    WordFilter,
};

use super::*;
use crate::{CachedGenerator, GenerationCache};

/// Writes the lunch sentence when the prompt's past passages start with the lunch mail, else
/// the prompt's length.
struct Rule;
impl Generator for Rule {
    fn generate(&self, p: &Prompt, _: &GenParams) -> pgraphrag_core::Result<String> {
        let m = &p.messages()[0].content;
        Ok(if m.contains("past passages: Lunch") {
            "to Friday at noon, as always.".to_string()
        } else {
            format!("{} characters", m.chars().count())
        })
    }
}

/// A stage answering `{tag}: {first line of the ranked entries}`.
struct Tagged(&'static str);
impl ContextSummarizer for Tagged {
    fn summarize(&self, _c: &str, ranked: &str) -> pgraphrag_stages::Result<String> {
        Ok(format!(
            "{}: {}",
            self.0,
            ranked.lines().next().unwrap_or("")
        ))
    }
}

/// Answers a word list.
struct Words;
impl ContextSummarizer for Words {
    fn summarize(&self, _c: &str, _r: &str) -> pgraphrag_stages::Result<String> {
        Ok("1. lunch, friday\n- noon".into())
    }
}

fn examples() -> Vec<Example> {
    let doc = |id: &str, time, text: &str| ContextDoc {
        doc_id: id.into(),
        time,
        text: text.into(),
    };
    ["to Friday at noon.", "to Monday.", "again, sorry all."]
        .iter()
        .enumerate()
        .map(|(i, end)| Example {
            id: format!("m{i}"),
            author: "kim".into(),
            split: SplitName::Test,
            time: 10 + i as i64,
            immediate_context: "Lunch\nThe team lunch moves".into(),
            target: format!("The team lunch moves {end}"),
            context: vec![
                doc(
                    "a",
                    0,
                    "Lunch\nTeam lunch on Friday at noon. Lunch is on me.",
                ),
                doc("b", 1, "Rain\nIt rained all day, lunch or not."),
                doc("c", 2, "Budget\nThe budget is due on Friday."),
            ],
        })
        .collect()
}

fn prepared(ex: &[Example]) -> Vec<Prepared> {
    let (bm25, recent) = (RankDocBM25::bm25(), RecentDoc);
    let idf = Idf::from_documents(["lunch", "a", "b", "c", "d", "e", "f", "g"]).unwrap();
    Preparer::new(vec![
        (RankerName::RankDocBM25, &bm25 as &dyn ContextRanker),
        (RankerName::RecentDoc, &recent),
    ])
    .with_keywords(Keywords::new(WordFilter::paper(&idf)))
    .prepare_all(ex, &())
    .unwrap()
    .0
}

fn cached() -> CachedGenerator<Rule> {
    CachedGenerator::new(Rule, "rule", GenerationCache::in_memory().unwrap())
}

fn grid(names: &[&str]) -> MultistageGrid {
    MultistageGrid::new(parse_cells(names, PrependStart::Paper).unwrap())
}

#[test]
fn each_cell_has_its_sections_and_llmzeroshot_prepends() {
    let ex = examples();
    let p = prepared(&ex);
    let g = grid(&[
        "ImmedCtx",
        "RecentDoc",
        "RankDocBM25",
        "SumCtxInd",
        "SumCtx",
        "SynCtxInd",
        "SynCtx",
        "LLMZeroShot",
    ]);
    let stages = LlmStages {
        summary_independent: Some(&Tagged("IND")),
        summary_dependent: Some(&Tagged("DEP")),
        synthesis: Some(&Words),
    };
    let run = g.run(&ex, &p, &cached(), &stages, &()).unwrap();
    let prompt = |name: &str| run.cell(name).unwrap().prompts[0].clone();
    assert_eq!(
        prompt("ImmedCtx"),
        "Finish the passage in the user voice\n\npassage start: Lunch\nThe team lunch moves"
    );
    assert!(prompt("RecentDoc").contains("\n\npast passages: Budget\n"));
    assert!(prompt("RankDocBM25").contains("\n\npast passages: Lunch\n"));
    // BM25 is the best ranker (the lunch sentence), so the stages read its entries.
    assert_eq!(
        run.best_ranker.map(|(r, _)| r),
        Some(RankerName::RankDocBM25)
    );
    let sum = prompt("SumCtx");
    assert!(
        sum.contains("\n\nsummary: DEP: Lunch\n\npast passages: Lunch\n"),
        "{sum}"
    );
    assert!(!sum.contains("important words"));
    assert!(prompt("SumCtxInd").contains("summary: IND: Lunch"));
    // Both summaries tie (the rule answers the same): the first in grid order wins.
    assert_eq!(
        run.best_summary.map(|(m, _)| m),
        Some(ContextMode::Independent)
    );
    let syn = prompt("SynCtx");
    assert!(
        syn.contains(
            "summary: IND: Lunch\n\nimportant words: lunch, friday, noon\n\npast passages: Lunch"
        ),
        "{syn}"
    );
    let ind = prompt("SynCtxInd");
    assert!(
        ind.contains("important words: lunch, friday, budget\n\n"),
        "{ind}"
    );
    // LLMZeroShot: SynCtx's input (generated once), the start prepended to the answer.
    let (zs, sc) = (
        run.cell("LLMZeroShot").unwrap(),
        run.cell("SynCtx").unwrap(),
    );
    assert_eq!(zs.prompts, sc.prompts);
    assert_eq!(zs.outputs, sc.outputs);
    assert_eq!(
        zs.predictions[0],
        format!("The team lunch moves {}", sc.outputs[0])
    );
    assert_eq!(sc.predictions, sc.outputs);
    // ImmedCtx's prompt is the same for all three examples: one distinct prompt.
    assert_eq!(run.summaries.len(), 2);
    assert_eq!(
        run.syntheses.as_ref().unwrap()[0].as_ref().unwrap().len(),
        3
    );
    assert!(run.stats.distinct_prompts < 8 * 3);
}

#[test]
fn the_prepend_option_applies_to_any_cell() {
    let ex = examples();
    let p = prepared(&ex);
    let g = grid(&["RankDocBM25", "RankDocBM25+start"]);
    let run = g
        .run(&ex, &p, &cached(), &LlmStages::default(), &())
        .unwrap();
    let (plain, start) = (&run.cells[0], &run.cells[1]);
    assert_eq!(plain.outputs, start.outputs);
    assert_eq!(plain.predictions[0], "to Friday at noon, as always.");
    assert_eq!(
        start.predictions[0],
        "The team lunch moves to Friday at noon, as always."
    );
    let t = g.results("t", &ex, &run).unwrap();
    assert!(t.rows[1].mean[1] > t.rows[0].mean[1]);
    assert_eq!(
        run.stats.distinct_prompts, 1,
        "the same prompt for every example"
    );
}

#[test]
fn best_cells_by_rouge1_given_or_the_papers() {
    let ex = examples();
    let p = prepared(&ex);
    let stages = LlmStages {
        summary_dependent: Some(&Tagged("DEP")),
        ..LlmStages::default()
    };
    let run = grid(&["RecentDoc", "RankDocBM25", "SumCtx"])
        .run(&ex, &p, &cached(), &stages, &())
        .unwrap();
    let (r, how) = run.best_ranker.unwrap();
    assert_eq!(r, RankerName::RankDocBM25);
    assert!(matches!(how, BestChoice::ByRouge1 { rouge1 } if rouge1 > 0.2));
    assert!(run.best_summary.is_none(), "no synthesis cell");

    let mut g = grid(&["RecentDoc", "RankDocBM25", "SumCtx"]);
    g.best_ranker = Some(RankerName::RecentDoc);
    let run = g.run(&ex, &p, &cached(), &stages, &()).unwrap();
    assert_eq!(
        run.best_ranker,
        Some((RankerName::RecentDoc, BestChoice::Given))
    );
    assert!(run.cells[2].prompts[0].contains("summary: DEP: Budget"));

    // No retrieval cell: the paper's best ranker; no summary cell: the paper's best summary.
    let g = grid(&["SynCtxInd"]);
    assert_eq!(g.rankers_needed(), [RankerName::RankDocBM25]);
    assert_eq!(g.summaries_needed(), [ContextMode::Dependent]);
    let run = g.run(&ex, &p, &cached(), &stages, &()).unwrap();
    assert_eq!(
        run.best_ranker,
        Some((RankerName::RankDocBM25, BestChoice::PaperDefault))
    );
    assert_eq!(
        run.best_summary,
        Some((ContextMode::Dependent, BestChoice::PaperDefault))
    );
}

#[test]
fn paired_tests_compare_with_immedctx_and_rankdocbm25() {
    let ex = examples();
    let p = prepared(&ex);
    let g = grid(&["ImmedCtx", "RecentDoc", "RankDocBM25"]);
    let run = g
        .run(&ex, &p, &cached(), &LlmStages::default(), &())
        .unwrap();
    let t = g.results("t", &ex, &run).unwrap();
    assert_eq!(t.immed_ctx.as_deref(), Some("ImmedCtx"));
    assert_eq!(t.rank_doc_bm25.as_deref(), Some("RankDocBM25"));
    assert!(
        t.rows[0].p_vs_immed_ctx.iter().all(|p| p.is_nan()),
        "itself"
    );
    assert!(
        t.rows[2].p_vs_rank_doc_bm25.iter().all(|p| p.is_nan()),
        "itself"
    );
    assert!(t.rows[2].p_vs_immed_ctx[1].is_finite());
    assert!(t.rows[1].p_vs_rank_doc_bm25[1].is_finite());
    assert!(t.rows[0].p_vs_rank_doc_bm25[1].is_finite());
    // Per example scores in %, corpus BLEU as the headline.
    let s = score_cell(
        &run.cells[2].predictions,
        &["The team lunch moves to Friday at noon."; 3],
    );
    assert!(s.corpus_bleu >= 0.0);
    let md = t.to_markdown();
    assert!(
        md.contains("| cell | n | BLEU | ROUGE-1 | ROUGE-2 | ROUGE-L |"),
        "{md}"
    );
    assert!(md.contains("Best ranker") == run.best_ranker.is_some());

    // Without the baselines the columns are NaN and the table says so.
    let g = grid(&["RecentDoc"]);
    let run = g
        .run(&ex, &p, &cached(), &LlmStages::default(), &())
        .unwrap();
    let t = g.results("t", &ex, &run).unwrap();
    assert!(t.immed_ctx.is_none() && t.rows[0].p_vs_immed_ctx[0].is_nan());
    assert!(t.to_markdown().contains("(not in the grid)"));
}

#[test]
fn missing_inputs_are_errors_and_a_rerun_computes_nothing() {
    let ex = examples();
    let p = prepared(&ex);
    let e = grid(&["SumCtx"])
        .run(&ex, &p, &cached(), &LlmStages::default(), &())
        .unwrap_err();
    assert!(e.to_string().contains("SumCtx summary stage"), "{e}");
    let e = grid(&["RankDocDense"])
        .run(&ex, &p, &cached(), &LlmStages::default(), &())
        .unwrap_err();
    assert!(e.to_string().contains("no RankDocDense ranking"), "{e}");
    let e = grid(&["ImmedCtx"])
        .run(&ex[..1], &p, &cached(), &LlmStages::default(), &())
        .unwrap_err();
    assert!(e.to_string().contains("1 examples but 3 prepared"), "{e}");

    let g = grid(&["ImmedCtx", "RankDocBM25", "SumCtx"]);
    let stages = LlmStages {
        summary_dependent: Some(&Tagged("DEP")),
        ..LlmStages::default()
    };
    let gen_ = cached();
    let first = g.run(&ex, &p, &gen_, &stages, &()).unwrap();
    assert_eq!(first.stats.cached, 0);
    let again = g.run(&ex, &p, &gen_, &stages, &()).unwrap();
    assert_eq!(again.stats.generated, 0);
    assert_eq!(again.stats.cached, first.stats.distinct_prompts);
    assert_eq!(again.cells, first.cells);
    let records = again.predictions(&ex).unwrap();
    assert_eq!(records.len(), 3);
    assert_eq!(records[1].1[0].target, ex[0].target);
}
