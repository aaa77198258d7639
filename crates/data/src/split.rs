use std::path::{Path, PathBuf};

use pgraphrag_core::{Entry, RATING_SCALE};
use pgraphrag_graph::{GraphOptions, ItemId, UserItemGraph};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::OutOfRange;
use crate::{Error, Result};

/// One review of a PGraphRAG split, as stored in the file (raw: an empty title stays
/// `Some("")`; the graph turns missing or empty fields into `None`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SplitReview {
    /// Review title (`null` or missing: `None`).
    pub title: Option<String>,
    /// Review text (`null` or missing: `None`).
    pub text: Option<String>,
    /// Star rating (`null` or missing: `None`).
    pub rating: Option<f64>,
    /// Product id, with its JSON type. Read from `pid`, or `productAsin` (the name the
    /// notebooks use) when `pid` is absent.
    #[serde(alias = "productAsin")]
    pub pid: ItemId,
}

/// One user of a split: `profile[0]` is the target review, the rest is the user's history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SplitUser {
    /// User id.
    pub id: String,
    /// The user's reviews; the first is the target.
    pub profile: Vec<SplitReview>,
}

impl SplitUser {
    /// The target review (`profile[0]`); `None` only for a hand-built empty profile (the
    /// loaders reject those).
    pub fn target(&self) -> Option<&SplitReview> {
        self.profile.first()
    }
}

/// A whole PGraphRAG split file.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Split {
    /// The users, in file order.
    pub users: Vec<SplitUser>,
}

/// What a split's rating must be ([`RATING_SCALE`]), in [`Error::OutOfRange`]'s words.
const STAR_RATING: &str = "a star rating from 1 to 5 (or null)";

/// How product ids become graph item ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IdPolicy {
    /// Keep the JSON type: `123` and `"123"` are different items (the released code; the
    /// `pgraphrag rank` default).
    #[default]
    KeepJsonType,
    /// Turn every id into a string: `123` and `"123"` are the same item (the clean choice).
    Normalize,
}

impl IdPolicy {
    /// Applies the policy to an id.
    pub fn apply(self, id: &ItemId) -> ItemId {
        match self {
            IdPolicy::KeepJsonType => id.clone(),
            IdPolicy::Normalize => id.normalized(),
        }
    }
}

fn non_empty(s: &Option<String>) -> Option<String> {
    s.as_ref().filter(|s| !s.is_empty()).cloned()
}

impl Split {
    /// Every review as a graph [`Entry`] with its item id under `policy`, in file order.
    /// `doc_id` (`Entry::id`) counts every review of the file from 0, exactly as the
    /// notebook's `create_user_product_matrix`; missing or empty titles and texts become
    /// `None` (the notebook's `'None'`).
    pub fn entries(&self, policy: IdPolicy) -> impl Iterator<Item = (Entry, ItemId)> + '_ {
        self.users
            .iter()
            .flat_map(|u| u.profile.iter().map(move |r| (u, r)))
            .enumerate()
            .map(move |(doc_id, (u, r))| {
                let item = policy.apply(&r.pid);
                let e = Entry {
                    id: doc_id,
                    author: u.id.clone(),
                    item: item.to_string(),
                    title: non_empty(&r.title),
                    text: non_empty(&r.text),
                    rating: r.rating,
                    time: None,
                };
                (e, item)
            })
    }

    /// The user-item graph of this split (neighbours come from this split only, as in the
    /// notebook). Use `GraphOptions::notebook()` with [`IdPolicy::KeepJsonType`] for the
    /// released code's semantics.
    pub fn to_graph(&self, opts: GraphOptions, policy: IdPolicy) -> UserItemGraph {
        let mut g = UserItemGraph::new(opts);
        for (e, item) in self.entries(policy) {
            // A split file cannot hold u32::MAX reviews within the memory it would need.
            if g.insert_keyed(e, item).is_err() {
                break;
            }
        }
        g
    }

    /// How many reviews in all profiles.
    pub fn num_reviews(&self) -> usize {
        self.users.iter().map(|u| u.profile.len()).sum()
    }

    /// For each record, in file order, the earlier record with the same user id (`None` for
    /// the first record of each id): the one test for repeated users, which
    /// [`Split::check_unique_ids`] refuses and converters that drop repeats skip by.
    ///
    /// ```
    /// let s = pgraphrag_data::parse_split(br#"[{"id": "a", "profile": [{"pid": "p"}]},
    ///     {"id": "b", "profile": [{"pid": "p"}]}, {"id": "a", "profile": [{"pid": "q"}]}]"#, "s.json").unwrap();
    /// assert_eq!(s.repeated_ids(), [None, None, Some(0)]);
    /// ```
    pub fn repeated_ids(&self) -> Vec<Option<usize>> {
        let mut first = std::collections::HashMap::with_capacity(self.users.len());
        self.users
            .iter()
            .enumerate()
            .map(|(i, u)| match first.entry(u.id.as_str()) {
                std::collections::hash_map::Entry::Occupied(e) => Some(*e.get()),
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(i);
                    None
                }
            })
            .collect()
    }

    /// Refuses a split in which two records share a user id ([`Error::DuplicateUser`],
    /// naming `path`, both records and the id): the graph would merge their reviews under one
    /// user, so one record's held-out target would sit in the other's profile. Every command
    /// that ranks, generates or scores a split calls it after loading.
    ///
    /// ```
    /// let s = pgraphrag_data::parse_split(br#"[{"id": "a", "profile": [{"pid": "p"}]},
    ///     {"id": "a", "profile": [{"pid": "q"}]}]"#, "s.json").unwrap();
    /// let e = s.check_unique_ids("s.json").unwrap_err().to_string();
    /// assert!(e.starts_with("s.json: record 1: user id \"a\" is already record 0's"), "{e}");
    /// ```
    pub fn check_unique_ids(&self, path: impl AsRef<Path>) -> Result<()> {
        match self
            .repeated_ids()
            .into_iter()
            .enumerate()
            .find_map(|(record, first)| first.map(|first| (record, first)))
        {
            None => Ok(()),
            Some((record, first)) => Err(Error::DuplicateUser {
                path: path.as_ref().to_path_buf(),
                record,
                first,
                user: self.users[record].id.clone(),
            }),
        }
    }
}

/// Reads a split file. Errors name the file, the record, the review and the field; a rating
/// outside [`RATING_SCALE`] is an error ([`Error::OutOfRange`]). Repeated user ids are not
/// refused here (a converter may skip them): call [`Split::check_unique_ids`] before ranking.
///
/// ```no_run
/// let data = std::path::Path::new("../shared/data");
/// let split = pgraphrag_data::load_split(&pgraphrag_data::pgraphrag_split_path(data, "amazon", "dev")).unwrap();
/// assert_eq!(split.users.len(), 2500);
/// ```
pub fn load_split(path: &Path) -> Result<Split> {
    let bytes = std::fs::read(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse_split(&bytes, path)
}

pub(crate) fn parse_json(bytes: &[u8], path: &Path) -> Result<Value> {
    let text = std::str::from_utf8(bytes).map_err(|e| Error::NotUtf8 {
        path: path.to_path_buf(),
        offset: e.valid_up_to(),
    })?;
    serde_json::from_str(text).map_err(|e| Error::Json {
        path: path.to_path_buf(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })
}

pub(crate) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// A user record as the file holds it; every check that serde cannot express (missing
/// fields, empty profiles, `pid` vs `productAsin`) is made afterwards, naming the field.
#[derive(Deserialize)]
#[serde(expecting = "a user object")]
struct RawUser {
    #[serde(default)]
    id: RawId,
    #[serde(default)]
    profile: Option<RawProfile>,
}

/// `id`: `None` when missing, else a string or the JSON type found instead (so `null`
/// reads as present but wrong).
#[derive(Default)]
struct RawId(Option<Result<String, &'static str>>);

impl<'de> Deserialize<'de> for RawId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        Ok(RawId(Some(match Value::deserialize(d)? {
            Value::String(s) => Ok(s),
            v => Err(type_name(&v)),
        })))
    }
}

#[derive(Deserialize)]
#[serde(transparent)]
struct RawProfile(Vec<RawReview>);

#[derive(Deserialize)]
#[serde(expecting = "a review object")]
struct RawReview {
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    rating: Option<f64>,
    #[serde(default)]
    pid: Option<RawPid>,
    #[serde(default, rename = "productAsin")]
    product_asin: Option<RawPid>,
}

/// A product id: a string or an integer, with its JSON type (`null` counts as absent).
struct RawPid(ItemId);

impl<'de> Deserialize<'de> for RawPid {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = RawPid;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string or an integer")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> std::result::Result<RawPid, E> {
                Ok(RawPid(ItemId::Str(v.to_string())))
            }
            fn visit_string<E: serde::de::Error>(
                self,
                v: String,
            ) -> std::result::Result<RawPid, E> {
                Ok(RawPid(ItemId::Str(v)))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> std::result::Result<RawPid, E> {
                Ok(RawPid(ItemId::Int(v)))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> std::result::Result<RawPid, E> {
                i64::try_from(v)
                    .map(|i| RawPid(ItemId::Int(i)))
                    .map_err(|_| {
                        E::custom(format!(
                            "expected a string or an integer, found the number {v}"
                        ))
                    })
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> std::result::Result<RawPid, E> {
                Err(E::custom(format!(
                    "expected a string or an integer, found the number {v:?}"
                )))
            }
        }
        d.deserialize_any(V)
    }
}

/// Where a serde error happened, as (record, review, field).
fn locate(path: &serde_path_to_error::Path) -> (Option<usize>, Option<usize>, String) {
    let segs: Vec<&serde_path_to_error::Segment> = path.iter().collect();
    locate_segments(&segs)
}

/// Where an error at `segs` sits in a list of `{…, "profile": [{…}]}` records (PGraphRAG splits,
/// LaMP questions): (record, profile item, field).
pub(crate) fn locate_segments(
    segs: &[&serde_path_to_error::Segment],
) -> (Option<usize>, Option<usize>, String) {
    use serde_path_to_error::Segment;
    let record = match segs.first() {
        Some(Segment::Seq { index }) => Some(*index),
        _ => None,
    };
    let key = |i: usize| match segs.get(i) {
        Some(Segment::Map { key }) => Some(key.as_str()),
        _ => None,
    };
    match key(1) {
        Some("profile") => match segs.get(2) {
            Some(Segment::Seq { index }) => (record, Some(*index), key(3).unwrap_or("").into()),
            _ => (record, None, "profile".into()),
        },
        Some(k) => (record, None, k.into()),
        None => (record, None, String::new()),
    }
}

/// Parses the bytes of a split file; `path` is only used in error messages.
pub fn parse_split(bytes: &[u8], path: impl AsRef<Path>) -> Result<Split> {
    let path: PathBuf = path.as_ref().to_path_buf();
    let text = std::str::from_utf8(bytes).map_err(|e| Error::NotUtf8 {
        path: path.clone(),
        offset: e.valid_up_to(),
    })?;
    let json_err = |e: &serde_json::Error| Error::Json {
        path: path.clone(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    };
    let mut de = serde_json::Deserializer::from_str(text);
    let records: Vec<RawUser> = match serde_path_to_error::deserialize(&mut de) {
        Ok(r) => r,
        Err(e) => {
            let inner = e.inner();
            if !inner.is_data() {
                return Err(json_err(inner));
            }
            let (record, review, field) = locate(e.path());
            let mut message = inner.to_string();
            if record.is_none() && field.is_empty() && message.contains("expected a sequence") {
                message = format!("expected a list of users ({message})");
            }
            return Err(Error::Schema {
                path,
                record,
                review,
                field,
                message,
            });
        }
    };
    de.end().map_err(|e| json_err(&e))?;
    let schema =
        |record: usize, review: Option<usize>, field: &str, message: String| Error::Schema {
            path: path.clone(),
            record: Some(record),
            review,
            field: field.to_string(),
            message,
        };
    let mut users = Vec::with_capacity(records.len());
    for (ri, rec) in records.into_iter().enumerate() {
        let id = match rec.id {
            RawId(Some(Ok(s))) => s,
            RawId(Some(Err(found))) => {
                return Err(schema(
                    ri,
                    None,
                    "id",
                    format!("expected a string, found {found}"),
                ));
            }
            RawId(None) => return Err(schema(ri, None, "id", "missing".into())),
        };
        let Some(RawProfile(profile)) = rec.profile else {
            return Err(schema(ri, None, "profile", "missing".into()));
        };
        if profile.is_empty() {
            return Err(Error::EmptyProfile {
                path: path.clone(),
                record: ri,
                user: id,
            });
        }
        let mut reviews = Vec::with_capacity(profile.len());
        for (vi, r) in profile.into_iter().enumerate() {
            if let Some(x) = r.rating
                && !RATING_SCALE.contains(&x)
            {
                return Err(OutOfRange {
                    path: path.clone(),
                    record: ri,
                    review: Some(vi),
                    field: "rating",
                    id: id.clone(),
                    value: x.to_string(),
                    expected: STAR_RATING.into(),
                }
                .into());
            }
            let Some(RawPid(pid)) = r.pid.or(r.product_asin) else {
                return Err(schema(
                    ri,
                    Some(vi),
                    "pid",
                    "missing (neither \"pid\" nor \"productAsin\" is present)".into(),
                ));
            };
            reviews.push(SplitReview {
                title: r.title,
                text: r.text,
                rating: r.rating,
                pid,
            });
        }
        users.push(SplitUser {
            id,
            profile: reviews,
        });
    }
    Ok(Split { users })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_record_review_field() {
        let e = parse_split(br#"[{"id":"a","profile":[{"pid":"x"}]},{"id":"b","profile":[{"pid":"x"},{"title":3,"pid":"y"}]}]"#, "f.json")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("f.json")
                && e.contains("record 1")
                && e.contains("profile[1]")
                && e.contains("\"title\""),
            "{e}"
        );
        let e = parse_split(br#"[{"id":"a","profile":[]}]"#, "f.json").unwrap_err();
        assert!(matches!(e, Error::EmptyProfile { record: 0, .. }), "{e}");
        let e = parse_split(b"[{\"id\":\"a\xff\"}]", "f.json").unwrap_err();
        assert!(matches!(e, Error::NotUtf8 { offset: 9, .. }), "{e}");
        let e = parse_split(b"[{\"id\":", "f.json").unwrap_err();
        assert!(matches!(e, Error::Json { line: 1, .. }), "{e}");
        let e = parse_split(br#"[{"id":"a","profile":[{"pid":1.5}]}]"#, "f.json")
            .unwrap_err()
            .to_string();
        assert!(e.contains("\"pid\""), "{e}");
        let e = parse_split(br#"[{"profile":[]}]"#, "f.json")
            .unwrap_err()
            .to_string();
        assert!(e.contains("\"id\"") && e.contains("missing"), "{e}");
    }

    #[test]
    fn shape_errors_say_where_and_what() {
        let cases: [(&[u8], &[&str]); 6] = [
            (br#"{"id":"a"}"#, &["top level", "list of users"]),
            (
                br#"[{"id":"a","profile":[{"pid":"x"}]}, 3]"#,
                &["record 1", "user object"],
            ),
            (
                br#"[{"id":"a","profile":"x"}]"#,
                &["record 0", "\"profile\""],
            ),
            (
                br#"[{"id":"a","profile":[{"pid":"x","rating":"5"}]}]"#,
                &["profile[0]", "\"rating\""],
            ),
            (
                br#"[{"id":7,"profile":[{"pid":"x"}]}]"#,
                &["\"id\"", "expected a string, found a number"],
            ),
            (
                br#"[{"id":"a","profile":[{"title":"t"}]}]"#,
                &["profile[0]", "\"pid\"", "productAsin"],
            ),
        ];
        for (json, want) in cases {
            let e = parse_split(json, "f.json").unwrap_err().to_string();
            assert!(e.starts_with("f.json: "), "{e}");
            for w in want {
                assert!(e.contains(w), "{e} lacks {w}");
            }
        }
    }

    #[test]
    fn ratings_off_the_scale_are_refused_naming_the_record() {
        for bad in ["99999", "0", "-1", "5.5", "1e308"] {
            let json = format!(
                r#"[{{"id":"a","profile":[{{"pid":"x","rating":4}}]}},{{"id":"b","profile":[{{"pid":"x"}},{{"pid":"y","rating":{bad}}}]}}]"#
            );
            let e = parse_split(json.as_bytes(), "f.json").unwrap_err();
            assert!(
                matches!(&e, Error::OutOfRange(o) if (o.record, o.review, o.field, o.id.as_str()) == (1, Some(1), "rating", "b")),
                "{e:?}"
            );
            let m = e.to_string();
            assert!(
                m.starts_with("f.json: record 1 (id \"b\"), profile[1], field \"rating\": ")
                    && m.contains("not a star rating from 1 to 5"),
                "{m}"
            );
        }
        let ok = br#"[{"id":"a","profile":[{"pid":"x","rating":1},{"pid":"y","rating":4.5},{"pid":"z","rating":5.0},{"pid":"w","rating":null}]}]"#;
        assert_eq!(parse_split(ok, "f.json").unwrap().num_reviews(), 4);
    }

    #[test]
    fn repeated_user_ids_are_found_and_refused() {
        let s = parse_split(
            br#"[{"id":"a","profile":[{"pid":"x"}]},{"id":"b","profile":[{"pid":"x"}]},{"id":"b","profile":[{"pid":"y"}]},{"id":"a","profile":[{"pid":"z"}]}]"#,
            "f.json",
        )
        .unwrap();
        assert_eq!(s.repeated_ids(), [None, None, Some(1), Some(0)]);
        let e = s.check_unique_ids("f.json").unwrap_err();
        assert!(
            matches!(&e, Error::DuplicateUser { record: 2, first: 1, user, .. } if user == "b"),
            "{e:?}"
        );
        assert!(e.to_string().contains("leaks"), "{e}");
        assert!(Split::default().check_unique_ids("f.json").is_ok());
    }

    #[test]
    fn accepts_product_asin_and_int_ids() {
        let s = parse_split(
            br#"[{"id":"a","profile":[{"productAsin":"x","rating":4.0},{"pid":12,"title":null}]}]"#,
            "f",
        )
        .unwrap();
        assert_eq!(s.users[0].profile[0].pid, ItemId::from("x"));
        assert_eq!(s.users[0].profile[1].pid, ItemId::Int(12));
        assert_eq!(s.users[0].profile[0].rating, Some(4.0));
    }
}
