//! The PGraphRAG pipeline across crates on all four real dev splits, without an LLM: load →
//! graph → BM25 profile ranking → prompts for every mode → ROUGE of the gold against itself.
use pgraphrag_core::Entry;
use pgraphrag_data::{IdPolicy, load_split};
use pgraphrag_graph::GraphOptions;
use pgraphrag_metrics::rouge::{Rouge, RougeOptions};
use pgraphrag_prompt::pgraphrag::{Mode, PromptBuilder, Task as PromptTask};
use pgraphrag_retrieval::profile::{CachedBm25, ProfileOptions, ProfileRanker, Task};

#[test]
fn every_mode_prompt_quotes_what_was_retrieved_on_all_four_splits() {
    let data = pgraphrag_tests::data_dir();
    let rouge = Rouge::new(RougeOptions::default());
    for ds in ["amazon", "b2w", "gap", "hotel"] {
        let split = load_split(&data.join(format!("pgraphrag/{ds}_dev.json"))).unwrap();
        let graph = split.to_graph(GraphOptions::default(), IdPolicy::Normalize);
        let mut ranker = ProfileRanker::new(CachedBm25::pgraphrag(), ProfileOptions::default());
        let builder = PromptBuilder::new(PromptTask::Text);
        let mut with_neighbours = 0;
        for user in split.users.iter().take(200) {
            let t = user.target().unwrap();
            let item = IdPolicy::Normalize.apply(&t.pid);
            let query = Task::Text.query(t.title.as_deref(), t.text.as_deref());
            let mut profile = ranker.rank(&graph, &user.id, &item, &query).unwrap();
            assert!(profile.user.len() <= 5 && profile.neighbors.len() <= 5);
            profile.target = Entry {
                title: t.title.clone(),
                text: t.text.clone(),
                rating: t.rating,
                ..Default::default()
            };
            for mode in [
                Mode::None,
                Mode::Random,
                Mode::User,
                Mode::Neighbor,
                Mode::Both,
            ] {
                let p = builder.build(&profile, mode, 2);
                if matches!(mode, Mode::Neighbor | Mode::Both) {
                    for n in profile.neighbors.iter().take(2) {
                        let text = n.entry.text.as_deref().unwrap_or("None");
                        assert!(
                            p.contains(text),
                            "{ds}/{}: {mode:?} prompt lacks a retrieved text",
                            user.id
                        );
                    }
                }
                if mode == Mode::None {
                    assert!(
                        !p.contains("Other Users' Reviews"),
                        "{ds}: no-retrieval prompt has reviews"
                    );
                }
            }
            with_neighbours += usize::from(!profile.neighbors.is_empty());
            let gold = t.text.as_deref().unwrap_or("").trim();
            if gold.chars().any(|c| c.is_ascii_alphanumeric()) {
                assert_eq!(
                    rouge.score(gold, gold).rouge1.fmeasure,
                    1.0,
                    "{ds}/{}",
                    user.id
                );
            }
        }
        // Every PGraphRAG target has at least one neighbour (anchors §1.2).
        assert_eq!(with_neighbours, 200, "{ds}: users without neighbours");
    }
}
