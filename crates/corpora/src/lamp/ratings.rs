//! LaMP-3 (rating prediction) from a PGraphRAG split and from MovieLens-100K.
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use pgraphrag_core::{LampGold, LampProfileItem, LampQuestion, LampTask, RATING_SCALE};
use pgraphrag_data::{AtomicFile, Split};

use super::authored::{Timed, build_timed};
use super::{BuildOptions, LampBuild, assemble};
use crate::{Report, Result, Skip};

/// A rating that is an integer from 1 to 5, as its string.
fn score(rating: Option<f64>) -> Option<String> {
    rating
        .filter(|r| r.fract() == 0.0 && RATING_SCALE.contains(r))
        .map(|r| format!("{}", r as i64))
}

/// LaMP-3 from a PGraphRAG split (`[{id, profile: [{title, text, rating, pid}]}]`): one
/// question per user, on the target review `profile[0]` (input: LaMP-3's template with its
/// text, output: its rating); the profile is the user's other reviews as `{id, text, score}`,
/// ids `{user}-{index}`, in file order (capped by `max_profile`). The splits have no dates,
/// so profiles are not time-ordered and carry no `date`. Targets whose rating is not an
/// integer 1–5 or whose text is empty (or shorter than `min_target_chars`) are skipped, as
/// are users with fewer than `min_profile` usable other reviews. Default options:
/// [`BuildOptions::ratings`].
///
/// ```
/// use pgraphrag_corpora::lamp::{lamp3_from_split, BuildOptions};
/// let json = br#"[{"id": "u1", "profile": [{"title": "", "text": "Great", "rating": 5, "pid": "p1"},
///                                          {"title": "", "text": "Bad", "rating": 1, "pid": "p2"}]},
///                 {"id": "u2", "profile": [{"title": "", "text": "Alone", "rating": 3, "pid": "p1"}]}]"#;
/// let split = pgraphrag_data::parse_split(json, "x.json").unwrap();
/// let b = lamp3_from_split(&split, &BuildOptions::ratings()).unwrap();
/// let q = &b.train.questions[0];
/// assert!(q.input.ends_with("review: Great"));
/// assert_eq!((q.profile[0].id.as_str(), q.profile[0].get("score")), ("u1-1", Some("1")));
/// assert_eq!(b.train.golds[0].output, "5");
/// assert_eq!(b.report.to_string(), "kept 1, skipped 1 (too few earlier documents 1)");
/// ```
pub fn lamp3_from_split(split: &Split, opts: &BuildOptions) -> Result<LampBuild> {
    opts.check()?;
    let mut report = Report::default();
    let mut per_user = BTreeMap::new();
    for (user, earlier) in split.users.iter().zip(split.repeated_ids()) {
        if earlier.is_some() {
            report.skip(Skip::DuplicateUser);
            continue;
        }
        let Some(target) = user.target() else {
            report.skip(Skip::TooFewEarlier);
            continue;
        };
        let text = target.text.as_deref().unwrap_or("").trim();
        let Some(label) = score(target.rating) else {
            report.skip(Skip::BadRating);
            continue;
        };
        if text.is_empty() {
            report.skip(Skip::EmptyBody);
            continue;
        }
        if text.chars().count() < opts.min_target_chars {
            report.skip(Skip::TooShort);
            continue;
        }
        let mut profile = Vec::new();
        for (i, r) in user.profile.iter().enumerate().skip(1) {
            let t = r.text.as_deref().unwrap_or("").trim();
            match score(r.rating) {
                Some(s) if !t.is_empty() => profile.push(
                    LampProfileItem::new(format!("{}-{i}", user.id))
                        .with("text", t)
                        .with("score", s),
                ),
                _ => report.skip(Skip::BadProfileItem),
            }
        }
        if profile.len() < opts.min_profile {
            report.skip(Skip::TooFewEarlier);
            continue;
        }
        if let Some(m) = opts.max_profile {
            profile.truncate(m);
        }
        let mut q = LampQuestion::new(
            user.id.clone(),
            super::input(LampTask::Lamp3, text).unwrap_or_default(),
        )
        .with_profile(profile);
        q.user_id = Some(user.id.clone());
        let g = LampGold {
            id: user.id.clone(),
            output: label,
        };
        per_user.insert(user.id.clone(), vec![(q, g)]);
    }
    Ok(assemble(LampTask::Lamp3, per_user, opts, report))
}

/// One MovieLens rating.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MovieRating {
    /// The user id.
    pub user: String,
    /// The item id.
    pub item: String,
    /// The rating, 1 to 5.
    pub rating: u8,
    /// When, in unix seconds.
    pub time: i64,
}

/// MovieLens-100K as recbole ships it (`ml-100k.inter`, `ml-100k.item`), read by
/// [`read_movielens`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MovieLens {
    /// The ratings, in file order.
    pub ratings: Vec<MovieRating>,
    /// What stands in for a review's text, per item id: `{title} ({year}); genres: {a}, {b}`.
    pub descriptions: HashMap<String, String>,
    /// Rows read (kept) and rows skipped, by reason.
    pub report: Report,
}

/// The text that stands in for a movie's review: `"{title} ({year}); genres: {g1}, {g2}"`
/// (the year or the genres left out when missing). MovieLens has no review text.
///
/// ```
/// assert_eq!(pgraphrag_corpora::lamp::movie_description("Toy Story", "1995", "Animation Children's Comedy"),
///            "Toy Story (1995); genres: Animation, Children's, Comedy");
/// assert_eq!(pgraphrag_corpora::lamp::movie_description("X", "", ""), "X");
/// ```
pub fn movie_description(title: &str, year: &str, genres: &str) -> String {
    let mut s = title.trim().to_string();
    if !year.trim().is_empty() {
        s.push_str(&format!(" ({})", year.trim()));
    }
    let g: Vec<&str> = genres.split_whitespace().collect();
    if !g.is_empty() {
        s.push_str(&format!("; genres: {}", g.join(", ")));
    }
    s
}

/// A RecBole atomic file ([`AtomicFile`]) as rows of the named columns; a record with too few
/// fields is a counted [`Skip::BadRow`].
fn atomic_file<const N: usize>(
    path: &Path,
    columns: [&'static str; N],
    report: &mut Report,
) -> Result<Vec<[String; N]>> {
    let file = AtomicFile::read(path)?;
    let mut idx = [0usize; N];
    for (k, c) in columns.iter().enumerate() {
        idx[k] = file.column(c)?;
    }
    let mut rows = Vec::with_capacity(file.rows.len());
    for (_, fields) in &file.rows {
        if idx.iter().any(|&i| i >= fields.len()) {
            report.skip(Skip::BadRow);
            continue;
        }
        rows.push(idx.map(|i| fields[i].clone()));
    }
    Ok(rows)
}

/// Reads `ml-100k.inter` (`user_id`, `item_id`, `rating`, `timestamp`) and `ml-100k.item`
/// (`item_id`, `movie_title`, `release_year`, `class`) from `dir`. Ratings of unknown items or
/// with unreadable values are counted skips.
pub fn read_movielens(dir: &Path) -> Result<MovieLens> {
    let mut report = Report::default();
    let items = atomic_file(
        &dir.join("ml-100k.item"),
        ["item_id", "movie_title", "release_year", "class"],
        &mut report,
    )?;
    let descriptions: HashMap<String, String> = items
        .into_iter()
        .map(|[id, t, y, g]| (id, movie_description(&t, &y, &g)))
        .collect();
    let rows = atomic_file(
        &dir.join("ml-100k.inter"),
        ["user_id", "item_id", "rating", "timestamp"],
        &mut report,
    )?;
    let mut ratings = Vec::with_capacity(rows.len());
    for [user, item, rating, ts] in rows {
        let rating = rating.trim().parse::<f64>().ok();
        let time = ts
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|t| t.is_finite() && *t >= 0.0 && crate::TIMES.contains(&(*t as i64)));
        let (Some(time), Some(r)) = (time, score(rating)) else {
            report.skip(if rating.is_some() {
                Skip::BadValue
            } else {
                Skip::BadRating
            });
            continue;
        };
        if !descriptions.contains_key(&item) || user.trim().is_empty() {
            report.skip(Skip::BadValue);
            continue;
        }
        report.keep();
        ratings.push(MovieRating {
            user,
            item,
            rating: r.parse().unwrap_or(0),
            time: time as i64,
        });
    }
    Ok(MovieLens {
        ratings,
        descriptions,
        report,
    })
}

/// LaMP-3 from MovieLens: one question per target rating (input: LaMP-3's template with the
/// movie's [`movie_description`], output: the rating), its profile the user's strictly earlier
/// ratings as `{id, date, text, score}` (ids `{user}-{item}`). Default options:
/// [`BuildOptions::ratings`] (one target per user, drawn from the ratings with at least one
/// earlier rating).
///
/// ```
/// use pgraphrag_corpora::lamp::{lamp3_from_movielens, movie_description, BuildOptions, MovieLens, MovieRating};
/// let mut ml = MovieLens::default();
/// ml.descriptions.insert("1".into(), movie_description("Toy Story", "1995", "Comedy"));
/// ml.descriptions.insert("2".into(), movie_description("Heat", "1995", "Action"));
/// for (item, rating, time) in [("1", 4, 100), ("2", 2, 200)] {
///     ml.ratings.push(MovieRating { user: "7".into(), item: item.into(), rating, time });
/// }
/// let b = lamp3_from_movielens(&ml, &BuildOptions::ratings()).unwrap();
/// let q = &b.train.questions[0];
/// assert!(q.input.ends_with("review: Heat (1995); genres: Action"));
/// assert_eq!((q.profile[0].get("score"), b.train.golds[0].output.as_str()), (Some("4"), "2"));
/// ```
pub fn lamp3_from_movielens(ml: &MovieLens, opts: &BuildOptions) -> Result<LampBuild> {
    let mut report = Report::default();
    let docs = ml
        .ratings
        .iter()
        .filter_map(|r| match ml.descriptions.get(&r.item) {
            Some(text) => Some(Timed {
                id: format!("{}-{}", r.user, r.item),
                author: r.user.clone(),
                time: r.time,
                text: text.clone(),
                label: r.rating.to_string(),
            }),
            None => {
                report.skip(Skip::BadValue);
                None
            }
        })
        .collect();
    build_timed(LampTask::Lamp3, docs, opts, report)
}
