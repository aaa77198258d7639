//! Ranking a whole split into ranked profiles (what `pgraphrag rank` and `pgraphrag bench`
//! write as `RANKING-*.json`, through `pgraphrag_data::RankingRecord::from_profile`).

use std::ops::Range;

use pgraphrag_core::progress::Progress;
use pgraphrag_core::{Entry, RankedProfile};
use pgraphrag_data::{IdPolicy, Split, SplitUser};
use pgraphrag_graph::{ItemId, ProfileRequest, ProfileSource, Scope, UserDirectory, UserItemGraph};
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
    whole(split, progress, |users| {
        rank_users(split, graph, policy, task, &mut ranker, users, progress)
    })
}

/// [`rank_all`] for the users `users` of `split` (indices in file order), with a ranker the
/// caller keeps: its seeded random stream continues where the previous call left it, so
/// ranking `0..a` then `a..n` with one ranker gives what [`rank_all`] gives for `0..n` (the
/// work-queue jobs rank a split in chunks this way, `pgraphrag_runs::jobs`). Reports one advance per
/// user to `progress` (no start or finish). A range past the end is cut to the split.
///
/// ```
/// use pgraphrag_core::NoProgress;
/// use pgraphrag_eval::{rank::{rank_all, rank_users}, recipe::Recipe};
/// use pgraphrag_retrieval::profile::{ProfileRanker, Task};
/// let split = pgraphrag_data::parse_split(br#"[
///   {"id": "u1", "profile": [{"title": "soap", "text": "a", "rating": 5, "pid": "p1"}]},
///   {"id": "u2", "profile": [{"title": "soap", "text": "c", "rating": 2, "pid": "p1"}]}]"#, "x.json").unwrap();
/// let r = Recipe::ReleasedCode;
/// let graph = r.graph(&split);
/// let new = || ProfileRanker::new(r.bm25(), r.profile_options());
/// let all = rank_all(&split, &graph, r.id_policy(), Task::Text, new(), &NoProgress).unwrap();
/// let mut ranker = new();
/// let mut parts = rank_users(&split, &graph, r.id_policy(), Task::Text, &mut ranker, 0..1, &NoProgress).unwrap();
/// parts.extend(rank_users(&split, &graph, r.id_policy(), Task::Text, &mut ranker, 1..2, &NoProgress).unwrap());
/// assert_eq!(parts, all);
/// ```
pub fn rank_users<R: CandidateRanker>(
    split: &Split,
    graph: &UserItemGraph,
    policy: IdPolicy,
    task: Task,
    ranker: &mut ProfileRanker<R>,
    users: Range<usize>,
    progress: &dyn Progress,
) -> Result<Vec<RankedProfile>> {
    // One user at a time: the ranker reads the graph in place (its token cache by slot).
    rank_range(split, policy, task, users, 1, progress, |chunk, emit| {
        for (j, user) in chunk.users.iter().enumerate() {
            let p = ranker
                .rank(graph, &user.id, &chunk.items[j], &chunk.queries[j])
                .map_err(|e| ranking_error(chunk.first + j, user, e))?;
            emit(j, p);
        }
        Ok(())
    })
}

/// The whole of `split` ranked by `rank` (given every user's range), reported to `progress`
/// as one run over its users.
fn whole(
    split: &Split,
    progress: &dyn Progress,
    rank: impl FnOnce(Range<usize>) -> Result<Vec<RankedProfile>>,
) -> Result<Vec<RankedProfile>> {
    progress.start(split.users.len() as u64, "users");
    let out = rank(0..split.users.len());
    progress.finish();
    out
}

/// One chunk of targets of [`rank_range`]: the record index of the first, the users, and
/// their target items and queries.
struct Chunk<'a> {
    first: usize,
    users: &'a [SplitUser],
    items: Vec<ItemId>,
    queries: Vec<String>,
}

/// The one ranking loop of this module: the users `users` of `split` (cut to the split),
/// `batch` at a time. Each chunk's targets are checked (a user without a review is an
/// [`Error::EmptyProfile`]), then `rank_chunk` ranks it, handing each profile to `emit`
/// with its index in the chunk; the profile gets its target and one advance of `progress`.
fn rank_range(
    split: &Split,
    policy: IdPolicy,
    task: Task,
    users: Range<usize>,
    batch: usize,
    progress: &dyn Progress,
    mut rank_chunk: impl FnMut(&Chunk<'_>, &mut dyn FnMut(usize, RankedProfile)) -> Result<()>,
) -> Result<Vec<RankedProfile>> {
    let end = users.end.min(split.users.len());
    let mut first = users.start.min(end);
    let mut out = Vec::with_capacity(end - first);
    for users in split.users[first..end].chunks(batch.max(1)) {
        let mut items = Vec::with_capacity(users.len());
        let mut queries = Vec::with_capacity(users.len());
        for (j, user) in users.iter().enumerate() {
            let Some(target) = user.target() else {
                return Err(Error::EmptyProfile {
                    record: first + j,
                    user_id: user.id.clone(),
                });
            };
            items.push(policy.apply(&target.pid));
            queries.push(task.query(target.title.as_deref(), target.text.as_deref()));
        }
        let chunk = Chunk {
            first,
            users,
            items,
            queries,
        };
        rank_chunk(&chunk, &mut |j, p| {
            out.push(with_target(p, &users[j]));
            progress.advance(1);
        })?;
        first += users.len();
    }
    Ok(out)
}

/// Ranking record `record` (of `user`) failed.
fn ranking_error(record: usize, user: &SplitUser, source: pgraphrag_retrieval::Error) -> Error {
    Error::Ranking {
        record,
        user_id: user.id.clone(),
        source: Box::new(source),
    }
}

/// Advances `ranker`'s random-review stream past the users `users` of `split` (the draws
/// ranking them would make, without ranking them: [`ProfileRanker::skip`]), so that ranking the
/// users after them gives each the random review a whole-split run gives it. `directory` is the
/// graph or any profile store of the split.
///
/// ```
/// use pgraphrag_core::{NoProgress, Task};
/// use pgraphrag_eval::rank::rank_users;
/// use pgraphrag_eval::{Recipe, rank_all, skip_users};
/// use pgraphrag_retrieval::profile::ProfileRanker;
/// let dir = tempfile::tempdir().unwrap();
/// let p = dir.path().join("s.json");
/// std::fs::write(&p, r#"[
///   {"id": "a", "profile": [{"title": "soap", "text": "x", "rating": 5, "pid": "p"}]},
///   {"id": "b", "profile": [{"title": "soap", "text": "y", "rating": 3, "pid": "q"}]},
///   {"id": "c", "profile": [{"title": "soap", "text": "z", "rating": 4, "pid": "p"}]}]"#).unwrap();
/// let split = pgraphrag_data::load_split(&p).unwrap();
/// let r = Recipe::ReleasedCode;
/// let graph = r.graph(&split);
/// let ranker = || ProfileRanker::new(r.bm25(), r.profile_options());
/// let whole = rank_all(&split, &graph, r.id_policy(), Task::Title, ranker(), &NoProgress).unwrap();
/// let mut tail = ranker();
/// skip_users(&split, &graph, r.id_policy(), &mut tail, 0..2).unwrap();
/// let last = rank_users(&split, &graph, r.id_policy(), Task::Title, &mut tail, 2..3, &NoProgress).unwrap();
/// assert_eq!(last[0], whole[2]);
/// ```
pub fn skip_users<D, R>(
    split: &Split,
    directory: &D,
    policy: IdPolicy,
    ranker: &mut ProfileRanker<R>,
    users: Range<usize>,
) -> Result<()>
where
    D: UserDirectory + ?Sized,
    R: CandidateRanker,
{
    let end = users.end.min(split.users.len());
    let start = users.start.min(end);
    for (record, user) in split.users.iter().enumerate().take(end).skip(start) {
        let Some(target) = user.target() else {
            return Err(Error::EmptyProfile {
                record,
                user_id: user.id.clone(),
            });
        };
        ranker
            .skip(directory, &user.id, &policy.apply(&target.pid))
            .map_err(|source| Error::Ranking {
                record,
                user_id: user.id.clone(),
                source: Box::new(source),
            })?;
    }
    Ok(())
}

/// Sets the profile's target to the user's `profile[0]` as the split stores it.
fn with_target(mut p: RankedProfile, user: &SplitUser) -> RankedProfile {
    if let Some(target) = user.target() {
        p.target = Entry {
            author: user.id.clone(),
            item: target.pid.to_string(),
            title: target.title.clone(),
            text: target.text.clone(),
            rating: target.rating,
            ..Default::default()
        };
        p.target_item = target.pid.clone();
    }
    p
}

/// [`rank_all`] over any profile source (a PostgreSQL store, or the in-memory graph itself):
/// the same ranked profiles, byte for byte once written. `split` lists the targets (each
/// user's `profile[0]`; the rest of each profile is not read: the candidates come from
/// `source`, which must hold the graph built with `policy`). Candidate lists are fetched
/// `batch` users at a time with [`ProfileSource::profiles`].
///
/// ```
/// use pgraphrag_core::NoProgress;
/// use pgraphrag_eval::{rank::{rank_all, rank_all_from}, recipe::Recipe};
/// use pgraphrag_retrieval::profile::{ProfileRanker, Task};
/// let split = pgraphrag_data::parse_split(br#"[
///   {"id": "u1", "profile": [{"title": "soap", "text": "a", "rating": 5, "pid": "p1"},
///                            {"title": "old soap", "text": "b", "rating": 4, "pid": "p2"}]},
///   {"id": "u2", "profile": [{"title": "soap", "text": "c", "rating": 2, "pid": "p1"}]}]"#, "x.json").unwrap();
/// let r = Recipe::ReleasedCode;
/// let graph = r.graph(&split);
/// let ranker = || ProfileRanker::new(r.bm25(), r.profile_options());
/// let a = rank_all(&split, &graph, r.id_policy(), Task::Text, ranker(), &NoProgress).unwrap();
/// let b = rank_all_from(&split, &graph, r.id_policy(), Task::Text, ranker(), &NoProgress, 64).unwrap();
/// assert_eq!(a, b);
/// ```
pub fn rank_all_from<S, R>(
    split: &Split,
    source: &S,
    policy: IdPolicy,
    task: Task,
    mut ranker: ProfileRanker<R>,
    progress: &dyn Progress,
    batch: usize,
) -> Result<Vec<RankedProfile>>
where
    S: ProfileSource + UserDirectory + ?Sized,
    R: CandidateRanker,
{
    whole(split, progress, |users| {
        rank_users_from(
            split,
            source,
            policy,
            task,
            &mut ranker,
            users,
            progress,
            batch,
        )
    })
}

/// [`rank_users`] over any profile source: the users `users` of `split` (a range of its
/// records) ranked with `ranker`, whose random stream must have reached `users.start` (as
/// [`rank_all_from`] needs; see [`ProfileRanker::skip`]). Candidate lists are fetched `batch`
/// users at a time.
///
/// ```
/// use pgraphrag_core::NoProgress;
/// use pgraphrag_eval::{rank::{rank_all, rank_users_from}, recipe::Recipe};
/// use pgraphrag_retrieval::profile::{ProfileRanker, Task};
/// let split = pgraphrag_data::parse_split(br#"[
///   {"id": "u1", "profile": [{"title": "soap", "text": "a", "rating": 5, "pid": "p1"}]},
///   {"id": "u2", "profile": [{"title": "soap", "text": "c", "rating": 2, "pid": "p1"}]}]"#, "x.json").unwrap();
/// let r = Recipe::ReleasedCode;
/// let graph = r.graph(&split);
/// let all = rank_all(&split, &graph, r.id_policy(), Task::Text, ProfileRanker::new(r.bm25(), r.profile_options()), &NoProgress).unwrap();
/// let mut ranker = ProfileRanker::new(r.bm25(), r.profile_options());
/// ranker.skip(&graph, "u1", &r.id_policy().apply(&split.users[0].profile[0].pid)).unwrap();
/// let second = rank_users_from(&split, &graph, r.id_policy(), Task::Text, &mut ranker, 1..2, &NoProgress, 64).unwrap();
/// assert_eq!(second[0], all[1]);
/// ```
#[allow(clippy::too_many_arguments)]
pub fn rank_users_from<S, R>(
    split: &Split,
    source: &S,
    policy: IdPolicy,
    task: Task,
    ranker: &mut ProfileRanker<R>,
    users: Range<usize>,
    progress: &dyn Progress,
    batch: usize,
) -> Result<Vec<RankedProfile>>
where
    S: ProfileSource + UserDirectory + ?Sized,
    R: CandidateRanker,
{
    rank_range(
        split,
        policy,
        task,
        users,
        batch,
        progress,
        |chunk, emit| {
            let requests: Vec<ProfileRequest<'_>> = chunk
                .users
                .iter()
                .zip(&chunk.items)
                .flat_map(|(u, item)| {
                    [Scope::User, Scope::Neighbor].map(|scope| ProfileRequest {
                        user: &u.id,
                        item,
                        scope,
                    })
                })
                .collect();
            let first_user = &chunk.users[0];
            let fetched = source.profiles(&requests).map_err(|e| {
                let err = pgraphrag_retrieval::Error::Profile {
                    side: "user and neighbour",
                    user: first_user.id.clone(),
                    item: chunk.items[0].to_string(),
                    source: pgraphrag_core::Error::backend(e),
                };
                ranking_error(chunk.first, first_user, err)
            })?;
            let mut fetched = fetched.into_iter();
            for (j, user) in chunk.users.iter().enumerate() {
                let (Some(mine), Some(theirs)) = (fetched.next(), fetched.next()) else {
                    let short = format!(
                        "the profile source returned fewer profiles than the {} requested",
                        requests.len()
                    );
                    let err = pgraphrag_retrieval::Error::InvalidInput(short);
                    return Err(ranking_error(chunk.first + j, user, err));
                };
                let (item, query) = (&chunk.items[j], &chunk.queries[j]);
                let p = ranker
                    .rank_fetched(source, &user.id, item, query, mine, theirs)
                    .map_err(|e| ranking_error(chunk.first + j, user, e))?;
                emit(j, p);
            }
            Ok(())
        },
    )
}

/// How many users' candidate lists [`Candidates`] fetches at a time from the store.
pub const FETCH_BATCH: usize = 256;

/// Where a ranking run reads the candidate lists from: the split's in-memory graph
/// ([`rank_users`]) or a dataset of the PostgreSQL profile store ([`rank_users_from`],
/// [`FETCH_BATCH`] users at a time). Both give the same ranked profiles, byte for byte once
/// written.
///
/// ```
/// use pgraphrag_core::NoProgress;
/// use pgraphrag_eval::{rank::Candidates, recipe::Recipe};
/// use pgraphrag_retrieval::profile::{ProfileRanker, Task};
/// let split = pgraphrag_data::parse_split(br#"[
///   {"id": "u1", "profile": [{"title": "soap", "text": "a", "rating": 5, "pid": "p1"}]},
///   {"id": "u2", "profile": [{"title": "soap", "text": "c", "rating": 2, "pid": "p1"}]}]"#, "x.json").unwrap();
/// let r = Recipe::ReleasedCode;
/// let source = Candidates::Graph(Box::new(r.graph(&split)));
/// let ranker = ProfileRanker::new(r.bm25(), r.profile_options());
/// let recs = source.rank_all(&split, r.id_policy(), Task::Text, ranker, &NoProgress).unwrap();
/// assert_eq!(recs[1].neighbors[0].entry.text.as_deref(), Some("a"));
/// assert!(source.graph().is_some());
/// ```
pub enum Candidates {
    /// The graph of the split, in memory.
    Graph(Box<UserItemGraph>),
    /// A dataset of the PostgreSQL profile store.
    #[cfg(feature = "postgres")]
    Store(Box<pgraphrag_store::postgres::PgProfiles>),
}

impl Candidates {
    /// [`rank_users`] on the graph, [`rank_users_from`] on the store.
    pub fn rank_users<R: CandidateRanker>(
        &self,
        split: &Split,
        policy: IdPolicy,
        task: Task,
        ranker: &mut ProfileRanker<R>,
        users: Range<usize>,
        progress: &dyn Progress,
    ) -> Result<Vec<RankedProfile>> {
        match self {
            Candidates::Graph(g) => rank_users(split, g, policy, task, ranker, users, progress),
            #[cfg(feature = "postgres")]
            Candidates::Store(p) => rank_users_from(
                split,
                &**p,
                policy,
                task,
                ranker,
                users,
                progress,
                FETCH_BATCH,
            ),
        }
    }

    /// Every user of `split` (the targets) ranked with `ranker`: [`rank_all`] on the graph,
    /// [`rank_all_from`] on the store.
    pub fn rank_all<R: CandidateRanker>(
        &self,
        split: &Split,
        policy: IdPolicy,
        task: Task,
        mut ranker: ProfileRanker<R>,
        progress: &dyn Progress,
    ) -> Result<Vec<RankedProfile>> {
        whole(split, progress, |users| {
            self.rank_users(split, policy, task, &mut ranker, users, progress)
        })
    }

    /// The in-memory graph, if that is the source.
    pub fn graph(&self) -> Option<&UserItemGraph> {
        match self {
            Candidates::Graph(g) => Some(g),
            #[cfg(feature = "postgres")]
            Candidates::Store(_) => None,
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Recipe;
    use pgraphrag_core::NoProgress;

    fn split() -> Split {
        pgraphrag_data::parse_split(
            br#"[
  {"id": "u1", "profile": [{"title": "soap", "text": "a", "rating": 5, "pid": "p1"},
                           {"title": "old soap", "text": "b", "rating": 4, "pid": "p2"}]},
  {"id": "u2", "profile": [{"title": "soap bar", "text": "c", "rating": 2, "pid": "p1"}]},
  {"id": "u3", "profile": [{"title": "shampoo", "text": "d", "rating": 3, "pid": "p2"},
                           {"title": "soap", "text": "e", "rating": 1, "pid": "p1"}]},
  {"id": "u4", "profile": [{"title": "towel", "text": "f", "rating": 5, "pid": "p2"}]},
  {"id": "u5", "profile": [{"title": "soap", "text": "g", "rating": 4, "pid": "p1"}]}]"#,
            "x.json",
        )
        .unwrap()
    }

    /// The graph path and the fetching path, in any batch size and over any sub-range, give
    /// the same profiles and fail on the same record.
    #[test]
    fn graph_and_fetched_paths_agree_in_every_batch_size() {
        let r = Recipe::ReleasedCode;
        let split = split();
        let graph = r.graph(&split);
        let ranker = || ProfileRanker::new(r.bm25(), r.profile_options());
        let (policy, task) = (r.id_policy(), Task::Text);
        let all = rank_all(&split, &graph, policy, task, ranker(), &NoProgress).unwrap();
        assert_eq!(all.len(), 5);
        for batch in 1..=6 {
            let from = rank_all_from(&split, &graph, policy, task, ranker(), &NoProgress, batch);
            assert_eq!(from.unwrap(), all, "batch {batch}");
            let mut tail = ranker();
            skip_users(&split, &graph, policy, &mut tail, 0..2).unwrap();
            let part = rank_users_from(
                &split,
                &graph,
                policy,
                task,
                &mut tail,
                2..9,
                &NoProgress,
                batch,
            );
            assert_eq!(part.unwrap(), all[2..], "batch {batch}");
        }
        let mut broken = split.clone();
        broken.users[3].profile.clear();
        let want = |e: Error| match e {
            Error::EmptyProfile { record, user_id } => (record, user_id),
            other => panic!("{other}"),
        };
        let e = rank_all(&broken, &graph, policy, task, ranker(), &NoProgress).unwrap_err();
        assert_eq!(want(e), (3, "u4".to_string()));
        for batch in 1..=6 {
            let e = rank_all_from(&broken, &graph, policy, task, ranker(), &NoProgress, batch);
            assert_eq!(want(e.unwrap_err()), (3, "u4".to_string()), "batch {batch}");
        }
    }
}
