//! The K-RagRec prompt and scoring: the released strings byte for byte (golden fixture made
//! from the released code by `scripts/fixtures/kragrec_prompts.py`), and properties of the
//! lettered options, the ranking and the metrics.
use std::collections::BTreeSet;

use pgraphrag_recsys::{
    CandidateSampler, LETTERS, PromptStyle, ScoredRow, instruction, random_scores, ranking,
    summarize,
};
use proptest::prelude::*;
use serde::Deserialize;

#[derive(Deserialize)]
struct Case {
    history: Vec<String>,
    options: Vec<String>,
    released_eval: String,
    released_train: String,
}

#[test]
fn released_prompts_match_the_released_code() {
    let text = include_str!("fixtures/kragrec_prompts.jsonl");
    let mut n = 0;
    for (i, line) in text.lines().enumerate() {
        let c: Case = serde_json::from_str(line).unwrap();
        let h: Vec<&str> = c.history.iter().map(String::as_str).collect();
        let o: Vec<&str> = c.options.iter().map(String::as_str).collect();
        assert_eq!(
            instruction(PromptStyle::ReleasedEval, &h, &o).unwrap(),
            c.released_eval,
            "case {i}"
        );
        assert_eq!(
            instruction(PromptStyle::ReleasedTrain, &h, &o).unwrap(),
            c.released_train,
            "case {i}"
        );
        n += 1;
    }
    assert_eq!(n, 40);
}

#[test]
fn paper_prompt_is_table_11() {
    let p = instruction(
        PromptStyle::Paper,
        &["History of the World: Part I", "Romancing the Stone"],
        &["Whole Nine Yards", "Hearts and Minds"],
    )
    .unwrap();
    assert_eq!(
        p,
        "Below is an instruction that describes a task, paired with an input that provides further context. Write a response that appropriately completes the request. Instruction: Given the user's watching history, select a film that is most likely to interest the user from the options. Watching history: {\"History of the World: Part I\", \"Romancing the Stone\"}. Options: {A: \"Whole Nine Yards\", B: \"Hearts and Minds\"}. Select a movie from options A to B that the user is most likely to be interested in."
    );
}

#[test]
fn bad_option_counts_are_errors() {
    for style in [PromptStyle::Paper, PromptStyle::ReleasedEval] {
        assert!(instruction(style, &["Heat"], &[]).is_err());
        let many = vec!["X"; 27];
        assert!(instruction(style, &["Heat"], &many).is_err());
    }
}

fn title() -> impl Strategy<Value = String> {
    "[A-Za-z][A-Za-z ]{0,12}"
}

proptest! {
    /// Each option letter appears once, in order, with its own title: letters map one-to-one
    /// to candidates.
    #[test]
    fn option_letters_map_one_to_one(
        history in prop::collection::vec(title(), 1..5),
        options in prop::collection::btree_set(title(), 2..=20),
    ) {
        let o: Vec<&str> = options.iter().map(String::as_str).collect();
        let h: Vec<&str> = history.iter().map(String::as_str).collect();
        for style in [PromptStyle::Paper, PromptStyle::ReleasedEval] {
            let p = instruction(style, &h, &o).unwrap();
            let mut at = 0;
            for (t, l) in o.iter().zip(LETTERS) {
                let item = if style == PromptStyle::Paper { format!("{l}: \"{t}\"") } else { format!("{l}: {t}") };
                let found = p[at..].find(&item);
                prop_assert!(found.is_some(), "{item:?} after byte {at} in {p:?}");
                at += found.unwrap() + item.len();
            }
            let last = LETTERS[o.len() - 1];
            let named = format!("options A to {last} ");
            prop_assert!(p.contains(&named));
        }
    }

    /// The ranking is a permutation, sorted by descending score with ties to the earlier
    /// letter.
    #[test]
    fn ranking_is_a_sorted_permutation(scores in prop::collection::vec(-5i32..5, 1..26)) {
        let s: Vec<f64> = scores.iter().map(|&x| f64::from(x)).collect();
        let r = ranking(&s).unwrap();
        prop_assert_eq!(r.iter().copied().collect::<BTreeSet<_>>(), (0..s.len()).collect::<BTreeSet<_>>());
        for w in r.windows(2) {
            prop_assert!(s[w[0]] > s[w[1]] || (s[w[0]] == s[w[1]] && w[0] < w[1]));
        }
    }

    /// ACC and Recall@k from `summarize` equal a direct count over the rows, and the target
    /// is always a candidate and never in the history.
    #[test]
    fn summarize_counts_hits(seed in 0u64..1000, rows in 1usize..40) {
        let sampler = CandidateSampler::new(1..=60, 10, seed).unwrap();
        let mut scored = Vec::new();
        let mut hits = [0usize; 2];
        for i in 0..rows {
            let history: Vec<u32> = (0..5).map(|k| 1 + ((i as u32 * 7 + k * 11) % 60)).collect::<BTreeSet<_>>().into_iter().collect();
            let target = (1..=60).find(|t| !history.contains(t) && (*t as usize + i).is_multiple_of(3)).unwrap();
            let seen: BTreeSet<u32> = history.iter().copied().collect();
            let c = sampler.sample(i as u64, 1, target, &seen).unwrap();
            prop_assert!(c.items.contains(&target) && !history.contains(&target));
            let scores = random_scores(seed, i as u64, 10);
            let r = ranking(&scores).unwrap();
            let pos = r.iter().position(|&j| c.items[j] == target).unwrap();
            hits[0] += usize::from(pos < 1);
            hits[1] += usize::from(pos < 3);
            scored.push(ScoredRow { row: i, user_id: 1, method: "random".into(), history, candidates: c.items, target, scores, retrieved: vec![] });
        }
        let s = summarize(&scored, &[3], 100, 0.95, 0).unwrap();
        prop_assert_eq!(s.len(), 1);
        prop_assert_eq!(s[0].acc, hits[0] as f64 / rows as f64);
        prop_assert_eq!(s[0].recall[0], (3, hits[1] as f64 / rows as f64));
        prop_assert_eq!(s[0].intervals.len(), 2);
        for i in &s[0].intervals {
            prop_assert!(0.0 <= i[0] && i[0] <= i[1] && i[1] <= 1.0);
        }
    }
}
