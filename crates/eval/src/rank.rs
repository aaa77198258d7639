//! Ranking a whole split into ranked profiles (what `pgraphrag rank` and `pgraphrag bench`
//! write as `RANKING-*.json`, through `pgraphrag_data::RankingRecord::from_profile`).

use pgraphrag_core::progress::Progress;
use pgraphrag_core::{Entry, RankedProfile};
use pgraphrag_data::{IdPolicy, Split};
use pgraphrag_graph::UserItemGraph;
use pgraphrag_retrieval::profile::{CandidateRanker, ProfileRanker, Task};

use crate::{Error, Result};

/// Ranks every user of `split` (in file order) against `graph` into ranked profiles, reporting
/// users to `progress`. `policy` must be the one `graph` was built with. Each profile's
/// target is the user's `profile[0]` as the split stores it (raw title, text and rating; the
/// item id with its JSON type).
///
/// ```
/// use pgraphrag_core::NoProgress;
/// use pgraphrag_eval::{rank::rank_all, recipe::Recipe};
/// use pgraphrag_retrieval::profile::{ProfileRanker, Task};
/// let split = pgraphrag_data::parse_split(br#"[
///   {"id": "u1", "profile": [{"title": "soap", "text": "a", "rating": 5, "pid": "p1"},
///                            {"title": "old soap", "text": "b", "rating": 4, "pid": "p2"}]},
///   {"id": "u2", "profile": [{"title": "soap", "text": "c", "rating": 2, "pid": "p1"}]}]"#, "x.json").unwrap();
/// let r = Recipe::ReleasedCode;
/// let graph = r.graph(&split);
/// let ranker = ProfileRanker::new(r.bm25(), r.profile_options());
/// let recs = rank_all(&split, &graph, r.id_policy(), Task::Text, ranker, &NoProgress).unwrap();
/// assert_eq!(recs.len(), 2);
/// assert_eq!(recs[0].user[0].entry.text.as_deref(), Some("b"));
/// assert_eq!(recs[0].neighbors[0].entry.text.as_deref(), Some("c"));
/// ```
pub fn rank_all<R: CandidateRanker>(
    split: &Split,
    graph: &UserItemGraph,
    policy: IdPolicy,
    task: Task,
    mut ranker: ProfileRanker<R>,
    progress: &dyn Progress,
) -> Result<Vec<RankedProfile>> {
    progress.start(split.users.len() as u64, "users");
    let out = rank_records(split, graph, policy, task, &mut ranker, progress);
    progress.finish();
    out
}

fn rank_records<R: CandidateRanker>(
    split: &Split,
    graph: &UserItemGraph,
    policy: IdPolicy,
    task: Task,
    ranker: &mut ProfileRanker<R>,
    progress: &dyn Progress,
) -> Result<Vec<RankedProfile>> {
    let mut out = Vec::with_capacity(split.users.len());
    for (i, user) in split.users.iter().enumerate() {
        let Some(target) = user.target() else {
            return Err(Error::EmptyProfile {
                record: i,
                user_id: user.id.clone(),
            });
        };
        let item = policy.apply(&target.pid);
        let query = task.query(target.title.as_deref(), target.text.as_deref());
        let mut p = ranker
            .rank(graph, &user.id, &item, &query)
            .map_err(|source| Error::Ranking {
                record: i,
                user_id: user.id.clone(),
                source: Box::new(source),
            })?;
        p.target = Entry {
            author: user.id.clone(),
            item: target.pid.to_string(),
            title: target.title.clone(),
            text: target.text.clone(),
            rating: target.rating,
            ..Default::default()
        };
        p.target_item = target.pid.clone();
        out.push(p);
        progress.advance(1);
    }
    Ok(out)
}

/// `RANKING-{stem}_{task}_{ranker}.json`, the released notebook's ranking file name, e.g.
/// `stem` = `amazon_dev`, `task` = `reviewText`, `ranker` = `bm25`.
///
/// ```
/// assert_eq!(pgraphrag_eval::rank::ranking_file_name("amazon_dev", "reviewText", "bm25"),
///            "RANKING-amazon_dev_reviewText_bm25.json");
/// ```
pub fn ranking_file_name(stem: &str, task: &str, ranker: &str) -> String {
    format!("RANKING-{stem}_{task}_{ranker}.json")
}

/// Sizes of a set of ranked profiles, for a run's summary line.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RankingSummary {
    /// Records (users).
    pub users: usize,
    /// Mean number of ranked user reviews per record.
    pub mean_user: f64,
    /// Mean number of ranked neighbour reviews per record.
    pub mean_neighbors: f64,
}

impl RankingSummary {
    /// Summarises `profiles` (means are 0 for no profiles).
    pub fn of(profiles: &[RankedProfile]) -> Self {
        let n = profiles.len().max(1) as f64;
        RankingSummary {
            users: profiles.len(),
            mean_user: profiles.iter().map(|p| p.user.len()).sum::<usize>() as f64 / n,
            mean_neighbors: profiles.iter().map(|p| p.neighbors.len()).sum::<usize>() as f64 / n,
        }
    }
}
