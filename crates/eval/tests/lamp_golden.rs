//! The LaMP recipe (`pgraphrag_eval::lamp`) against LaMP's own `create_prompt_generator` on
//! the cases of `crates/prompt/tests/fixtures/lamp_prompts.jsonl`: query, ranked ids and
//! prompt; where LaMP raises (rank_bm25's `ZeroDivisionError`) the recipe returns the input and
//! counts the case. Needs `models/all-MiniLM-L6-v2/tokenizer.json` (skipped, saying so, when
//! absent).

use std::path::PathBuf;

use pgraphrag_core::{LampProfileItem, LampQuestion};
use pgraphrag_eval::lamp::{LampRecipe, Unchanged, lamp_prompts};
use pgraphrag_prompt::lamp::HfTokenizer;
use serde_json::Value;

#[test]
fn recipe_matches_lamp() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let tok_path = root.join("models/all-MiniLM-L6-v2/tokenizer.json");
    if !tok_path.exists() {
        eprintln!(
            "SKIPPED: {} is absent (scripts/fetch_models.sh)",
            tok_path.display()
        );
        return;
    }
    let tok = HfTokenizer::from_file(&tok_path).unwrap();
    let body =
        std::fs::read_to_string(root.join("crates/prompt/tests/fixtures/lamp_prompts.jsonl"))
            .unwrap();
    let mut n = 0;
    let mut raised = 0;
    for (i, line) in body.lines().enumerate() {
        let r: Value = serde_json::from_str(line).unwrap();
        let profile = r["profile"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| {
                let mut item = LampProfileItem::new(o["id"].as_str().unwrap());
                for (k, v) in o.as_object().unwrap() {
                    if k != "id" {
                        let t = v.as_str().map_or_else(|| v.to_string(), str::to_string);
                        item = item.with(k.as_str(), t);
                    }
                }
                item
            })
            .collect();
        let q =
            LampQuestion::new(format!("q{i}"), r["input"].as_str().unwrap()).with_profile(profile);
        let recipe = LampRecipe::new(
            r["task"].as_str().unwrap().parse().unwrap(),
            r["k"].as_u64().unwrap() as usize,
            r["max_length"].as_i64().unwrap(),
        );
        let (recs, summary) = lamp_prompts(&[q], &recipe, &tok, None);
        let got = &recs[0];
        assert_eq!(got.query.as_deref(), r["query"].as_str(), "line {}", i + 1);
        match r["prompt"].as_str() {
            Some(want) => {
                let ids: Vec<&str> = r["ranked_ids"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_str().unwrap())
                    .collect();
                assert_eq!(got.ranked_ids, ids, "line {}", i + 1);
                assert_eq!(got.prompt, want, "line {}", i + 1);
                assert_eq!(summary.built + summary.budget, 1);
            }
            None => {
                raised += 1;
                assert_eq!(got.prompt, r["input"].as_str().unwrap(), "line {}", i + 1);
                assert!(
                    matches!(
                        got.unchanged,
                        Some(Unchanged::EmptyProfile | Unchanged::EmptyDocuments)
                    ),
                    "line {}: {:?}",
                    i + 1,
                    got.unchanged
                );
                assert_eq!(summary.unchanged(), 1);
            }
        }
        n += 1;
    }
    assert!(n >= 200 && raised >= 8, "{n} cases, {raised} raised");
}
