//! LaMP-3 (rating prediction) from a PGraphRAG split and from MovieLens-100K.
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use pgraphrag_core::{LampGold, LampProfileItem, LampQuestion, LampTask, RATING_SCALE};
use pgraphrag_data::{AtomicFile, Split};

use super::authored::{Timed, build_timed};
use super::build::{BuildOptions, LampBuild, assemble};
use crate::{Error, Report, Result, Skip};

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
    /// Rows read (all kept: [`read_movielens`] refuses a bad row rather than skip it).
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

/// A RecBole atomic file ([`AtomicFile`]) as its records' lines and the named columns; a
/// record with another number of fields than the header is an error naming its line.
fn atomic_file<const N: usize>(
    path: &Path,
    columns: [&'static str; N],
) -> Result<Vec<(usize, [String; N])>> {
    let file = AtomicFile::read(path)?.exact()?;
    let mut idx = [0usize; N];
    for (k, c) in columns.iter().enumerate() {
        idx[k] = file.column(c)?;
    }
    Ok(file
        .rows
        .iter()
        .map(|(line, fields)| (*line, idx.map(|i| fields[i].clone())))
        .collect())
}

/// Reads `ml-100k.inter` (`user_id`, `item_id`, `rating`, `timestamp`) and `ml-100k.item`
/// (`item_id`, `movie_title`, `release_year`, `class`) from `dir`. Every line must be whole
/// and right: errors name the file, the line and the field of a record with another number of
/// fields than the header, an empty id, a rating that is not a whole 1 to 5, a time that is
/// not whole unix seconds from 1900 to 2200 ([`TIMES`](crate::TIMES)), a rating of an item
/// `ml-100k.item` does not list ([`Error::UnknownItem`](crate::Error::UnknownItem)), an item
/// listed twice or a user rating an item twice
/// ([`Error::Repeated`](crate::Error::Repeated)).
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let w = |n: &str, s: &str| std::fs::write(dir.path().join(n), s).unwrap();
/// w("ml-100k.item", "item_id:token\tmovie_title:token_seq\trelease_year:token\tclass:token_seq\n1\tToy Story\t1995\tComedy\n");
/// w("ml-100k.inter", "user_id:token\titem_id:token\trating:float\ttimestamp:float\n7\t1\t4\t881250949\n");
/// let ml = pgraphrag_corpora::lamp::read_movielens(dir.path()).unwrap();
/// assert_eq!((ml.ratings[0].rating, ml.report.kept), (4, 1));
/// w("ml-100k.inter", "user_id:token\titem_id:token\trating:float\ttimestamp:float\n7\t1\t99\t881250949\n");
/// let e = pgraphrag_corpora::lamp::read_movielens(dir.path()).unwrap_err().to_string();
/// assert!(e.contains("ml-100k.inter:2: field \"rating\": \"99\" is not a whole rating from 1 to 5"), "{e}");
/// ```
pub fn read_movielens(dir: &Path) -> Result<MovieLens> {
    let item_path = dir.join("ml-100k.item");
    let items = atomic_file(
        &item_path,
        ["item_id", "movie_title", "release_year", "class"],
    )?;
    let mut descriptions = HashMap::with_capacity(items.len());
    let mut item_lines: HashMap<String, usize> = HashMap::with_capacity(items.len());
    for (line, [id, t, y, g]) in items {
        if id.is_empty() {
            return Err(value(&item_path, line, "item_id", &id, "an item id"));
        }
        if let Some(&first) = item_lines.get(&id) {
            return Err(Error::Repeated {
                path: item_path,
                line,
                first,
                what: "item_id",
                key: format!("{id:?}"),
            });
        }
        item_lines.insert(id.clone(), line);
        descriptions.insert(id, movie_description(&t, &y, &g));
    }
    let path = dir.join("ml-100k.inter");
    let rows = atomic_file(&path, ["user_id", "item_id", "rating", "timestamp"])?;
    let mut report = Report::default();
    let mut ratings = Vec::with_capacity(rows.len());
    let mut seen: HashMap<(String, String), usize> = HashMap::with_capacity(rows.len());
    for (line, [user, item, rating, ts]) in rows {
        if user.is_empty() {
            return Err(value(&path, line, "user_id", &user, "a user id"));
        }
        if !descriptions.contains_key(&item) {
            return Err(Error::UnknownItem {
                path,
                line,
                item: pgraphrag_data::shown(&item),
                catalogue: item_path,
            });
        }
        let Some(r) = score(rating.parse::<f64>().ok()) else {
            return Err(value(
                &path,
                line,
                "rating",
                &rating,
                "a whole rating from 1 to 5",
            ));
        };
        let Some(time) = ts
            .parse::<f64>()
            .ok()
            .filter(|t| t.fract() == 0.0 && crate::TIMES.contains(&(*t as i64)))
        else {
            return Err(value(
                &path,
                line,
                "timestamp",
                &ts,
                "whole unix seconds from 1900 to 2200",
            ));
        };
        if let Some(&first) = seen.get(&(user.clone(), item.clone())) {
            return Err(Error::Repeated {
                path,
                line,
                first,
                what: "rating of (user_id, item_id)",
                key: format!("({user:?}, {item:?})"),
            });
        }
        seen.insert((user.clone(), item.clone()), line);
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

/// [`Error::Value`] at `path`'s `line`.
fn value(
    path: &Path,
    line: usize,
    field: &'static str,
    found: &str,
    expected: &'static str,
) -> Error {
    Error::Value {
        path: path.to_path_buf(),
        line,
        field,
        value: pgraphrag_data::shown(found),
        expected,
    }
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
