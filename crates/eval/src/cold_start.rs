//! Beyond the papers: summaries from the graph for cold-start users.
//!
//! A user with no history gives PGraphRAG's `user` list nothing; what the graph still has is
//! the other users' reviews of the target item. This recipe summarises those reviews offline
//! (one summary per target item, written by the same local model through
//! `pgraphrag_stages::SummarizeJob` into the same kind of store as the LaMP user summaries)
//! and puts the summary into the PGraphRAG prompt
//! ([`PromptBuilder::build_with_summary`](pgraphrag_prompt::pgraphrag::PromptBuilder::build_with_summary)),
//! in the grid cells labelled `isum_` ([`RunConfig::with_item_summary`]).
//!
//! The summarised reviews are the item's reviews by everyone but the target user
//! ([`Scope::Neighbor`]): the split's graph holds the target review itself (it is the gold),
//! so a summary must never read it. The summary is therefore keyed by the item *and* the user
//! it leaves out ([`item_summary_key`]); two users with the same target item get two summaries.
//!
//! [`cold_start_grid`] is the measured grid: `both_k4` (the warm baseline), `neighbor_k4` (a
//! user without history), `isum_neighbor_k4` (without history, with the item summary) and
//! `isum_both_k4`.

use pgraphrag_core::{LampProfileItem, LampQuestion, RankedProfile};
use pgraphrag_graph::{Scope, UserItemGraph};
use pgraphrag_prompt::pgraphrag::{Mode, py_rating};

use crate::RunConfig;
pub use crate::grid::item_summary_key;

/// One LaMP-shaped question per profile, for `SummarizeJob` with
/// `SummaryScope::Question` and `EntryFormat::PRODUCT_REVIEW`: id [`item_summary_key`], an
/// empty input, and as profile the target item's reviews by every other user of `graph` in the
/// graph's order, each with `title`, `text` (a missing one is `None`, as PGraphRAG's prompts
/// write it) and `score` (the rating as PGraphRAG's prompts write it). Questions whose item has
/// no other reviews have an empty profile (the job skips them; their prompts get no summary).
///
/// ```
/// use pgraphrag_core::{Entry, ItemId, RankedProfile};
/// use pgraphrag_graph::{GraphOptions, UserItemGraph};
/// let review = |id, author: &str, item: &str, title: &str| Entry {
///     id, author: author.into(), item: item.into(), title: Some(title.into()),
///     text: Some("text".into()), rating: Some(5.0), time: None,
/// };
/// let mut g = UserItemGraph::new(GraphOptions::default());
/// g.insert(review(0, "alice", "p", "gold title"));
/// g.insert(review(1, "bob", "p", "Great"));
/// let p = RankedProfile { user_id: "alice".into(), target_item: "p".into(), ..Default::default() };
/// let qs = pgraphrag_eval::cold_start::item_questions(&[p], &g);
/// assert_eq!(qs[0].id, "\"p\"|alice");
/// assert_eq!(qs[0].profile.len(), 1); // alice's own review (the gold) is left out
/// assert_eq!(qs[0].profile[0].get("title"), Some("Great"));
/// assert_eq!(qs[0].profile[0].get("score"), Some("5"));
/// ```
pub fn item_questions(profiles: &[RankedProfile], graph: &UserItemGraph) -> Vec<LampQuestion> {
    profiles
        .iter()
        .map(|p| {
            let items = graph
                .profile(&p.user_id, &p.target_item, Scope::Neighbor)
                .into_iter()
                .map(|r| {
                    let e = &graph.review(r).entry;
                    LampProfileItem::new(e.id.to_string())
                        .with("title", e.title.as_deref().unwrap_or("None"))
                        .with("text", e.text.as_deref().unwrap_or("None"))
                        .with("score", py_rating(e.rating))
                })
                .collect();
            LampQuestion::new(item_summary_key(p), "").with_profile(items)
        })
        .collect()
}

/// The cold-start grid at `k`: `both_k{k}` (the warm baseline), `neighbor_k{k}` (no user
/// history), `isum_neighbor_k{k}` and `isum_both_k{k}`.
///
/// ```
/// let labels: Vec<String> = pgraphrag_eval::cold_start::cold_start_grid(4).iter().map(|c| c.to_string()).collect();
/// assert_eq!(labels, ["both_k4", "neighbor_k4", "isum_neighbor_k4", "isum_both_k4"]);
/// ```
pub fn cold_start_grid(k: usize) -> Vec<RunConfig> {
    vec![
        RunConfig::new(Mode::Both, k),
        RunConfig::new(Mode::Neighbor, k),
        RunConfig::new(Mode::Neighbor, k).with_item_summary(),
        RunConfig::new(Mode::Both, k).with_item_summary(),
    ]
}
