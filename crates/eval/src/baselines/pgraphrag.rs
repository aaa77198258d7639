//! PGraphRAG's rows: the users `pgraphrag bench` evaluates and their gold answers, each user's
//! two candidate pools (the ones the grid's profile ranker chooses from), and the baselines of
//! each task.
use std::ops::Range;

use pgraphrag_core::{DocText, Entry, Language, RankedProfile, Task};
use pgraphrag_data::{IdPolicy, RankingRecord, Split, SplitUser};
use pgraphrag_graph::{Scope, UserItemGraph};
use pgraphrag_prompt::pgraphrag::py_rating;

use super::predict::{
    Bm25Rule, Earlier, Example, MatchOn, NamedBaseline, Pool, Predictor, best_constant_answer,
    constant_candidates,
};
use crate::{Error, Result};

/// The users (indices in file order) that `pgraphrag bench --skip skip --limit limit` runs on a
/// split of `users` users: it drops the first `skip`, then keeps the first `limit` of the rest.
///
/// ```
/// use pgraphrag_eval::baselines::bench_rows;
/// assert_eq!(bench_rows(2500, 0, Some(200)), 0..200);
/// assert_eq!(bench_rows(2500, 200, Some(200)), 200..400);
/// assert_eq!(bench_rows(10, 8, Some(5)), 8..10);
/// assert_eq!(bench_rows(10, 0, None), 0..10);
/// assert!(bench_rows(10, 20, Some(5)).is_empty());
/// ```
pub fn bench_rows(users: usize, skip: usize, limit: Option<usize>) -> Range<usize> {
    let start = skip.min(users);
    let end = match limit {
        Some(n) => start.saturating_add(n).min(users),
        None => users,
    };
    start..end
}

/// The validation rows of `evaluated`: the next `n` users of the split after them (fewer at
/// the end of the split). The constant baselines are chosen on these users' golds, never on
/// the evaluated ones.
///
/// ```
/// use pgraphrag_eval::baselines::validation_rows;
/// assert_eq!(validation_rows(2500, &(0..200), 200), 200..400);
/// assert_eq!(validation_rows(250, &(0..200), 200), 200..250);
/// assert!(validation_rows(200, &(0..200), 200).is_empty());
/// ```
pub fn validation_rows(users: usize, evaluated: &Range<usize>, n: usize) -> Range<usize> {
    let start = evaluated.end.min(users);
    start..start.saturating_add(n).min(users)
}

fn target(split: &Split, i: usize) -> Result<(&SplitUser, Entry)> {
    let user = &split.users[i];
    let t = user.target().ok_or_else(|| Error::EmptyProfile {
        record: i,
        user_id: user.id.clone(),
    })?;
    let e = Entry {
        author: user.id.clone(),
        item: t.pid.to_string(),
        title: t.title.clone(),
        text: t.text.clone(),
        rating: t.rating,
        ..Default::default()
    };
    Ok((user, e))
}

/// The gold answers of the users `rows` of `split`, exactly as `pgraphrag bench` scores them:
/// the target review through its ranking-file record ([`RankingRecord`]: `int()` of the
/// rating), then [`crate::gold`]. A user without a target review is an error.
///
/// ```
/// use pgraphrag_core::Task;
/// use pgraphrag_eval::baselines::split_golds;
/// let split = pgraphrag_data::parse_split(br#"[
///   {"id": "u", "profile": [{"title": " Good ", "text": "x", "rating": 4.0, "pid": "p"}]}]"#, "s.json").unwrap();
/// assert_eq!(split_golds(&split, Task::Title, 0..1).unwrap(), ["Good"]);
/// assert_eq!(split_golds(&split, Task::Rating, 0..1).unwrap(), ["4"]);
/// ```
pub fn split_golds(split: &Split, task: Task, rows: Range<usize>) -> Result<Vec<String>> {
    rows.map(|i| {
        let (user, t) = target(split, i)?;
        let p = RankedProfile {
            user_id: user.id.clone(),
            target: t,
            ..Default::default()
        };
        Ok(crate::gold(&RankingRecord::from(p).to_profile(), task))
    })
    .collect()
}

/// One review of a pool as the baselines of `task` see it.
fn earlier(e: &Entry, task: Task) -> Earlier {
    let output = match task {
        Task::Title => e.title.clone(),
        Task::Text => e.text.clone(),
        Task::Rating => e.rating.map(|r| py_rating(Some(r))),
    };
    Earlier {
        input: task.query(e.title.as_deref(), e.text.as_deref()),
        output: output.filter(|o| !o.trim().is_empty()),
        document: e.document(DocText::Clean),
        time: e.time,
    }
}

/// The [`Example`]s of the users `rows` of `split` for `task`: the target's input (the review
/// text for titles, the title for review text, `"{title} {text}"` for ratings, as the grid's
/// ranking query), the user's other reviews and the other users' reviews of the target item,
/// each in `graph`'s order (the split's). These are the whole pools the grid's profile ranker
/// picks its top k from, in `graph` (build it with the grid's recipe, e.g.
/// [`crate::Recipe::graph`], and pass its id policy).
///
/// ```
/// use pgraphrag_core::Task;
/// use pgraphrag_eval::{Recipe, baselines::split_examples};
/// let split = pgraphrag_data::parse_split(br#"[
///   {"id": "a", "profile": [{"title": "Great", "text": "works", "rating": 5, "pid": "p"},
///                           {"title": "Meh", "text": "broke", "rating": 2, "pid": "q"}]},
///   {"id": "b", "profile": [{"title": "Fine", "text": "ok", "rating": 4, "pid": "p"}]}]"#, "s.json").unwrap();
/// let r = Recipe::ReleasedCode;
/// let ex = split_examples(&split, &r.graph(&split), r.id_policy(), Task::Title, 0..1).unwrap();
/// assert_eq!(ex[0].input, "works");
/// assert_eq!(ex[0].history[0].output.as_deref(), Some("Meh"));
/// assert_eq!(ex[0].neighbors[0].output.as_deref(), Some("Fine"));
/// ```
pub fn split_examples(
    split: &Split,
    graph: &UserItemGraph,
    policy: IdPolicy,
    task: Task,
    rows: Range<usize>,
) -> Result<Vec<Example>> {
    rows.map(|i| {
        let (user, t) = target(split, i)?;
        let item = policy.apply(&split.users[i].profile[0].pid);
        let pool = |scope| -> Vec<Earlier> {
            graph
                .profile(&user.id, &item, scope)
                .into_iter()
                .map(|r| earlier(&graph.review(r).entry, task))
                .collect()
        };
        Ok(Example {
            id: user.id.clone(),
            input: task.query(t.title.as_deref(), t.text.as_deref()),
            history: pool(Scope::User),
            neighbors: pool(Scope::Neighbor),
        })
    })
    .collect()
}

/// Settings of [`pgraphrag_baselines`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BaselineOptions {
    /// `k` of the first-k-words baseline (10: the title prompt asks for "10 words or less").
    pub words: usize,
    /// The language of the first-sentence baseline's sentence splitter.
    pub language: Language,
}

impl Default for BaselineOptions {
    fn default() -> Self {
        BaselineOptions {
            words: 10,
            language: Language::English,
        }
    }
}

/// ROUGE-1 F-measure, the first column of the text tables: what the constant title or review
/// is chosen by.
pub(crate) fn rouge1(prediction: &str, reference: &str) -> f64 {
    thread_local! {
        static ROUGE: pgraphrag_metrics::Rouge = pgraphrag_metrics::Rouge::default();
    }
    ROUGE.with(|r| r.rouge_n(prediction, reference, 1).fmeasure)
}

/// The constant text answer with the best mean ROUGE-1 on `validation_golds`, among those
/// golds themselves ([`constant_candidates`]); an error without any.
pub(crate) fn validation_text_constant(validation_golds: &[String]) -> Result<Predictor> {
    let candidates = constant_candidates(validation_golds);
    let (best, _) =
        best_constant_answer(&candidates, validation_golds, rouge1).ok_or_else(|| {
            Error::InvalidInput(
                "the constant baseline needs validation users with a non-empty gold answer".into(),
            )
        })?;
    Ok(Predictor::Constant(best))
}

/// The constant rating with the lowest MAE on `validation_golds` ([`crate::best_constant`]).
pub(crate) fn validation_rating_constant(validation_golds: &[String]) -> Result<Predictor> {
    if validation_golds.is_empty() {
        return Err(Error::InvalidInput(
            "the constant baseline needs validation users".into(),
        ));
    }
    let best = crate::best_constant(validation_golds)?;
    Ok(Predictor::Constant(best.rating.to_string()))
}

/// The baselines of a PGraphRAG task, in table order. `validation_golds` are the gold answers of
/// users other than the evaluated ones ([`validation_rows`]): the `const_val` row answers the
/// constant chosen on them (the validation gold with the best mean ROUGE-1 for titles and
/// review text, the rating 1–5 with the lowest MAE for ratings), which is also the rating
/// baselines' fallback.
///
/// * Titles: `first_{k}_words` and `first_sentence` of the review text, `const_val`,
///   `user_latest` (the user's first other review in file order: the splits store no dates),
///   `user_bm25` (the title of the user's review whose text is closest to the target's by BM25),
///   `neighbor_bm25` (the title of the other users' review of the item closest to the text).
/// * Review text: `title` (the title alone), `title_neighbor_bm25` (the title plus the other
///   users' review closest to it by BM25; the title alone without one), `neighbor_bm25` (that
///   review alone), `user_latest`, `user_bm25` (by title), `const_val`.
/// * Ratings: `always_1` … `always_5`, `const_val`, `user_mean`, `user_mode`, `item_mean` (the
///   other users' mean rating of the item) and `neighbor_bm25` (the rating of the other users'
///   review closest to the target's title and text), each falling back to `const_val`.
///
/// ```
/// use pgraphrag_core::Task;
/// use pgraphrag_eval::baselines::{BaselineOptions, Predictor, pgraphrag_baselines};
/// let val = ["5".to_string(), "4".to_string(), "4".to_string()];
/// let b = pgraphrag_baselines(Task::Rating, BaselineOptions::default(), &val).unwrap();
/// let c = b.iter().find(|b| b.name == "const_val").unwrap();
/// assert_eq!(c.predictor, Predictor::Constant("4".into()));
/// ```
pub fn pgraphrag_baselines(
    task: Task,
    options: BaselineOptions,
    validation_golds: &[String],
) -> Result<Vec<NamedBaseline>> {
    use NamedBaseline as B;
    let sim = |pool, on| Predictor::MostSimilar {
        pool,
        on,
        rule: Bm25Rule::Pgraphrag,
    };
    Ok(match task {
        Task::Title => vec![
            B::new(
                format!("first_{}_words", options.words),
                Predictor::FirstWords(options.words),
            ),
            B::new("first_sentence", Predictor::FirstSentence(options.language)),
            B::new("const_val", validation_text_constant(validation_golds)?),
            B::new("user_latest", Predictor::Latest),
            B::new("user_bm25", sim(Pool::User, MatchOn::Input)),
            B::new("neighbor_bm25", sim(Pool::Neighbors, MatchOn::Document)),
        ],
        Task::Text => vec![
            B::new("title", Predictor::Input),
            B::new(
                "title_neighbor_bm25",
                Predictor::InputPlus {
                    pool: Pool::Neighbors,
                    on: MatchOn::Document,
                    rule: Bm25Rule::Pgraphrag,
                },
            )
            .or(Predictor::Input),
            B::new("neighbor_bm25", sim(Pool::Neighbors, MatchOn::Document)),
            B::new("user_latest", Predictor::Latest),
            B::new("user_bm25", sim(Pool::User, MatchOn::Input)),
            B::new("const_val", validation_text_constant(validation_golds)?),
        ],
        Task::Rating => {
            let constant = validation_rating_constant(validation_golds)?;
            let mut v: Vec<B> = (1..=5)
                .map(|r| B::new(format!("always_{r}"), Predictor::Constant(r.to_string())))
                .collect();
            v.push(B::new("const_val", constant.clone()));
            for (name, p) in [
                ("user_mean", Predictor::MeanRating(Pool::User)),
                ("user_mode", Predictor::ModeRating(Pool::User)),
                ("item_mean", Predictor::MeanRating(Pool::Neighbors)),
                ("neighbor_bm25", sim(Pool::Neighbors, MatchOn::Document)),
            ] {
                v.push(B::new(name, p).or(constant.clone()));
            }
            v
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Recipe;
    use pgraphrag_core::NoProgress;
    use pgraphrag_retrieval::profile::ProfileRanker;

    const SPLIT: &[u8] = br#"[
      {"id": "a", "profile": [{"title": "Great soap", "text": "Smells nice. Lasts long.", "rating": 5, "pid": "p"},
                              {"title": "", "text": "too small", "rating": 2, "pid": "q"},
                              {"title": "Cheap", "text": "cheap and cheerful", "rating": 4, "pid": "r"}]},
      {"id": "b", "profile": [{"title": "Nice", "text": "smells nice", "rating": 4.7, "pid": "p"}]},
      {"id": "c", "profile": [{"title": null, "text": "", "rating": 3, "pid": 7}]},
      {"id": "d", "profile": [{"title": "Ok", "text": "fine", "rating": 1, "pid": "p"}]}
    ]"#;

    #[test]
    fn pools_golds_and_edge_cases() {
        let split = pgraphrag_data::parse_split(SPLIT, "s.json").unwrap();
        let r = Recipe::ReleasedCode;
        let g = r.graph(&split);
        let ex = split_examples(&split, &g, r.id_policy(), Task::Title, 0..3).unwrap();
        // A missing title is no output; the pool keeps the review's order.
        let outs: Vec<_> = ex[0].history.iter().map(|e| e.output.clone()).collect();
        assert_eq!(outs, vec![None, Some("Cheap".to_string())]);
        let who: Vec<_> = ex[0].neighbors.iter().map(|e| e.input.as_str()).collect();
        assert_eq!(who, vec!["smells nice", "fine"]);
        // An empty profile and no neighbours (user c): empty pools, empty input.
        assert!(ex[2].history.is_empty() && ex[2].neighbors.is_empty());
        assert_eq!(ex[2].input, "");
        let golds = split_golds(&split, Task::Rating, 0..4).unwrap();
        assert_eq!(golds, vec!["5", "4", "3", "1"]); // int(4.7) = 4, as the ranking file
        let titles = split_golds(&split, Task::Title, 0..4).unwrap();
        assert_eq!(titles, vec!["Great soap", "Nice", "", "Ok"]);
    }

    /// The golds are those of bench's own path (rank, ranking-file record, profile, gold).
    #[test]
    fn golds_match_the_bench_path() {
        let split = pgraphrag_data::parse_split(SPLIT, "s.json").unwrap();
        let r = Recipe::ReleasedCode;
        let g = r.graph(&split);
        for task in [Task::Title, Task::Text, Task::Rating] {
            let ranker = ProfileRanker::new(r.bm25(), r.profile_options());
            let ranked =
                crate::rank_all(&split, &g, r.id_policy(), task, ranker, &NoProgress).unwrap();
            let bench: Vec<String> = ranked
                .iter()
                .map(|p| crate::gold(&RankingRecord::from_profile(p).to_profile(), task))
                .collect();
            assert_eq!(split_golds(&split, task, 0..4).unwrap(), bench, "{task}");
        }
    }

    #[test]
    fn baselines_per_task_and_their_constants() {
        let val: Vec<String> = ["Great", "Great product", "Bad"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let t = pgraphrag_baselines(Task::Title, BaselineOptions::default(), &val).unwrap();
        let names: Vec<_> = t.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "first_10_words",
                "first_sentence",
                "const_val",
                "user_latest",
                "user_bm25",
                "neighbor_bm25"
            ]
        );
        // "Great" and "Great product" tie on mean ROUGE-1 (5/9): the first.
        assert_eq!(t[2].predictor, Predictor::Constant("Great".into()));
        assert!(pgraphrag_baselines(Task::Text, BaselineOptions::default(), &[]).is_err());
        let ratings = ["1".to_string(), "5".to_string()];
        let r = pgraphrag_baselines(Task::Rating, BaselineOptions::default(), &ratings).unwrap();
        assert_eq!(r.len(), 10);
        // MAE 2 for every constant: the lowest rating wins the tie.
        assert_eq!(r[5].predictor, Predictor::Constant("1".into()));
        assert_eq!(r[6].fallback, Some(Predictor::Constant("1".into())));
    }
}
