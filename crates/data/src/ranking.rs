use std::io::Write;
use std::path::Path;

use pgraphrag_core::{Entry, ItemId, RankedEntry, RankedProfile};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::split::{parse_json, type_name};
use crate::{Error, Result};
// Python's `int(x)` of a rating (truncation toward zero), `None` when non-finite.
use pgraphrag_text::py::int as py_int;

/// Accepts an integer, a float (truncated like Python's `int`), `null`, or the string
/// `"None"` that the notebook writes for a missing rating.
fn de_rating<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Option<i64>, D::Error> {
    let v = Value::deserialize(d)?;
    match &v {
        Value::Null => Ok(None),
        Value::Number(n) => match n.as_i64() {
            Some(i) => Ok(Some(i)),
            None => Ok(n.as_f64().and_then(py_int)),
        },
        Value::String(s) if s == "None" => Ok(None),
        other => Err(serde::de::Error::custom(format!(
            "rating: expected an integer, null or \"None\", found {}",
            type_name(other)
        ))),
    }
}

/// One entry of `user_ratings` (and the `random_review`): a review by the target user of
/// another item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserRating {
    /// The item reviewed (JSON-typed).
    pub product_id: ItemId,
    /// Rating (`int()` of the stored value).
    #[serde(rename = "reviewRating", deserialize_with = "de_rating", default)]
    pub review_rating: Option<i64>,
    /// Title (`"None"` when missing or empty, as the notebook stores it).
    #[serde(rename = "reviewTitle")]
    pub review_title: String,
    /// Text (`"None"` when missing or empty).
    #[serde(rename = "reviewText")]
    pub review_text: String,
    /// The review's `doc_id` (position in the split file, counting every review from 0).
    pub doc_id: usize,
    /// The retriever's score (absent for unscored entries, e.g. the random review).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
}

/// One entry of `neighbor_ratings`: another user's review of the target item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NeighborRating {
    /// Who wrote it.
    pub user_id: String,
    /// Rating (`int()` of the stored value).
    #[serde(rename = "reviewRating", deserialize_with = "de_rating", default)]
    pub review_rating: Option<i64>,
    /// Title (`"None"` when missing or empty).
    #[serde(rename = "reviewTitle")]
    pub review_title: String,
    /// Text (`"None"` when missing or empty).
    #[serde(rename = "reviewText")]
    pub review_text: String,
    /// The review's `doc_id`.
    pub doc_id: usize,
    /// The retriever's score (absent when the notebook returns a single neighbour unranked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
}

fn none_str(s: Option<String>) -> String {
    s.unwrap_or_else(|| "None".to_string())
}

impl UserRating {
    fn from_ranked(r: RankedEntry) -> Self {
        UserRating {
            product_id: r.item,
            review_rating: r.entry.rating.and_then(py_int),
            review_title: none_str(r.entry.title),
            review_text: none_str(r.entry.text),
            doc_id: r.entry.id,
            score: r.score,
        }
    }

    fn to_ranked(&self, author: &str) -> RankedEntry {
        ranked(
            author,
            &self.product_id,
            &self.review_title,
            &self.review_text,
            self.review_rating,
            self.doc_id,
            self.score,
        )
    }
}

impl NeighborRating {
    fn from_ranked(r: RankedEntry) -> Self {
        NeighborRating {
            user_id: r.entry.author,
            review_rating: r.entry.rating.and_then(py_int),
            review_title: none_str(r.entry.title),
            review_text: none_str(r.entry.text),
            doc_id: r.entry.id,
            score: r.score,
        }
    }
}

/// A ranking-file entry as `UserProfile.__init__` reads it: the stored title and text as
/// they are (`"None"` stays the string `"None"`) and the integer rating.
fn ranked(
    author: &str,
    item: &ItemId,
    title: &str,
    text: &str,
    rating: Option<i64>,
    doc_id: usize,
    score: Option<f64>,
) -> RankedEntry {
    RankedEntry {
        entry: Entry {
            id: doc_id,
            author: author.to_string(),
            item: item.to_string(),
            title: Some(title.to_string()),
            text: Some(text.to_string()),
            rating: rating.map(|r| r as f64),
            time: None,
        },
        item: item.clone(),
        score,
    }
}

/// One record of a PGraphRAG ranking file: the target review and its ranked profile.
/// Field names and order are those of the notebook's `process_item`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankingRecord {
    /// The target user.
    pub user_id: String,
    /// The target item (`profile[0]`'s id, JSON-typed).
    pub product_id: ItemId,
    /// The target review's text, raw (the gold for text generation).
    pub user_review_text: Option<String>,
    /// The target review's title, raw (the gold for title generation).
    pub user_review_title: Option<String>,
    /// The target rating (`int()`; the gold for rating prediction).
    #[serde(deserialize_with = "de_rating", default)]
    pub user_review_rating: Option<i64>,
    /// The user's own reviews of other items, best first (top-k).
    pub user_ratings: Vec<UserRating>,
    /// Other users' reviews of the target item, best first (top-k).
    pub neighbor_ratings: Vec<NeighborRating>,
    /// A random review by a random other user (`null` when there is none).
    #[serde(default)]
    pub random_review: Option<UserRating>,
}

impl From<RankedProfile> for RankingRecord {
    /// [`RankingRecord::from_profile`] without copying: the profile's strings move into
    /// the record (what `pgraphrag rank` uses on its hot path).
    fn from(p: RankedProfile) -> Self {
        RankingRecord {
            user_id: p.user_id,
            product_id: p.target_item,
            user_review_text: p.target.text,
            user_review_title: p.target.title,
            user_review_rating: p.target.rating.and_then(py_int),
            user_ratings: p.user.into_iter().map(UserRating::from_ranked).collect(),
            neighbor_ratings: p
                .neighbors
                .into_iter()
                .map(NeighborRating::from_ranked)
                .collect(),
            random_review: p.random.map(UserRating::from_ranked),
        }
    }
}

impl RankingRecord {
    /// The file form of a ranked profile, as the notebook's `process_item` writes it: the
    /// target's raw title and text, `int()` of every rating, `"None"` for a missing title or
    /// text of a ranked review, and each ranked review's score.
    ///
    /// ```
    /// use pgraphrag_core::{Entry, ItemId, RankedEntry, RankedProfile};
    /// use pgraphrag_data::RankingRecord;
    /// let n = Entry { id: 3, author: "v".into(), item: "7".into(), text: Some("y".into()), rating: Some(4.5), ..Default::default() };
    /// let p = RankedProfile {
    ///     user_id: "u".into(),
    ///     target: Entry { title: Some("t".into()), rating: Some(5.0), ..Default::default() },
    ///     target_item: ItemId::Int(7),
    ///     neighbors: vec![RankedEntry { entry: n, item: ItemId::Int(7), score: Some(0.5) }],
    ///     ..Default::default()
    /// };
    /// let r = RankingRecord::from_profile(&p);
    /// assert_eq!(r.neighbor_ratings[0].review_title, "None");
    /// assert_eq!((r.neighbor_ratings[0].review_rating, r.neighbor_ratings[0].score), (Some(4), Some(0.5)));
    /// assert_eq!(r.to_profile().neighbors[0].entry.title.as_deref(), Some("None"));
    /// assert_eq!(RankingRecord::from_profile(&r.to_profile()), r);
    /// ```
    pub fn from_profile(p: &RankedProfile) -> Self {
        RankingRecord::from(p.clone())
    }

    /// The ranked profile this record stores, as the prompt code reads a ranking file
    /// (`UserProfile.__init__`): the target's raw title, text and rating, and the stored
    /// title, text (`"None"` stays the string `"None"`) and integer rating of each ranked
    /// review. `RankingRecord::from_profile(&r.to_profile())` is `r`.
    pub fn to_profile(&self) -> RankedProfile {
        RankedProfile {
            user_id: self.user_id.clone(),
            target: Entry {
                author: self.user_id.clone(),
                item: self.product_id.to_string(),
                title: self.user_review_title.clone(),
                text: self.user_review_text.clone(),
                rating: self.user_review_rating.map(|r| r as f64),
                ..Default::default()
            },
            target_item: self.product_id.clone(),
            user: self
                .user_ratings
                .iter()
                .map(|r| r.to_ranked(&self.user_id))
                .collect(),
            neighbors: self
                .neighbor_ratings
                .iter()
                .map(|r| {
                    ranked(
                        &r.user_id,
                        &self.product_id,
                        &r.review_title,
                        &r.review_text,
                        r.review_rating,
                        r.doc_id,
                        r.score,
                    )
                })
                .collect(),
            random: self.random_review.as_ref().map(|r| r.to_ranked("")),
        }
    }
}

/// Reads a ranking file (a JSON list of [`RankingRecord`]). Files written by the released
/// notebook (no `score`) load too.
pub fn load_rankings(path: &Path) -> Result<Vec<RankingRecord>> {
    let bytes = std::fs::read(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse_rankings(&bytes, path)
}

/// Parses the bytes of a ranking file; `path` is only used in error messages.
pub fn parse_rankings(bytes: &[u8], path: impl AsRef<Path>) -> Result<Vec<RankingRecord>> {
    let path = path.as_ref();
    let v = parse_json(bytes, path)?;
    let Value::Array(items) = v else {
        return Err(Error::Schema {
            path: path.to_path_buf(),
            record: None,
            review: None,
            field: String::new(),
            message: format!(
                "expected a list of ranking records, found {}",
                type_name(&v)
            ),
        });
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, rec)| {
            serde_json::from_value(rec).map_err(|e| Error::Schema {
                path: path.to_path_buf(),
                record: Some(i),
                review: None,
                field: String::new(),
                message: e.to_string(),
            })
        })
        .collect()
}

/// Writes records as a JSON list (4-space indent, like the notebook's `json.dump(..., indent=4)`).
pub fn write_rankings_to<W: Write>(w: W, records: &[RankingRecord]) -> std::io::Result<()> {
    let mut w = std::io::BufWriter::new(w);
    let fmt = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut ser = serde_json::Serializer::with_formatter(&mut w, fmt);
    records.serialize(&mut ser).map_err(std::io::Error::other)?;
    w.write_all(b"\n")?;
    w.flush()
}

/// Writes a ranking file atomically ([`crate::write_atomic`]: a temporary file in the same
/// folder, fsynced, then renamed), so an interrupted run never leaves a truncated file behind.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use pgraphrag_data::{load_rankings, write_rankings, RankingRecord, ItemId};
/// let r = RankingRecord { user_id: "u".into(), product_id: ItemId::Int(7), user_review_text: Some("t".into()),
///     user_review_title: None, user_review_rating: Some(5), user_ratings: vec![], neighbor_ratings: vec![], random_review: None };
/// let p = dir.path().join("r.json");
/// write_rankings(&p, &[r.clone()]).unwrap();
/// assert_eq!(load_rankings(&p).unwrap(), vec![r]);
/// ```
pub fn write_rankings(path: &Path, records: &[RankingRecord]) -> Result<()> {
    crate::write_atomic(path, |w| write_rankings_to(w, records))
}
