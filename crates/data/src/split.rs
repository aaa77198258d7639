use std::path::{Path, PathBuf};

use pgraphrag_core::Entry;
use pgraphrag_graph::{GraphOptions, ItemId, UserItemGraph};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

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
}

/// Reads a split file. Errors name the file, the record, the review and the field.
///
/// ```no_run
/// let split = pgraphrag_data::load_split(&pgraphrag_data::pgraphrag_split_path("amazon", "dev")).unwrap();
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

struct Ctx<'a> {
    path: &'a Path,
    record: Option<usize>,
    review: Option<usize>,
}

impl Ctx<'_> {
    fn err(&self, field: &str, message: impl Into<String>) -> Error {
        Error::Schema {
            path: self.path.to_path_buf(),
            record: self.record,
            review: self.review,
            field: field.to_string(),
            message: message.into(),
        }
    }
    fn opt_str(&self, o: &Map<String, Value>, field: &str) -> Result<Option<String>> {
        match o.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(v) => Err(self.err(
                field,
                format!("expected a string or null, found {}", type_name(v)),
            )),
        }
    }
}

/// Parses the bytes of a split file; `path` is only used in error messages.
pub fn parse_split(bytes: &[u8], path: impl AsRef<Path>) -> Result<Split> {
    let path: PathBuf = path.as_ref().to_path_buf();
    let v = parse_json(bytes, &path)?;
    let mut ctx = Ctx {
        path: &path,
        record: None,
        review: None,
    };
    let Value::Array(records) = v else {
        return Err(ctx.err(
            "",
            format!("expected a list of users, found {}", type_name(&v)),
        ));
    };
    let mut users = Vec::with_capacity(records.len());
    for (ri, rec) in records.iter().enumerate() {
        ctx.record = Some(ri);
        ctx.review = None;
        let Value::Object(o) = rec else {
            return Err(ctx.err(
                "",
                format!("expected a user object, found {}", type_name(rec)),
            ));
        };
        let id = match o.get("id") {
            Some(Value::String(s)) => s.clone(),
            Some(v) => {
                return Err(ctx.err("id", format!("expected a string, found {}", type_name(v))));
            }
            None => return Err(ctx.err("id", "missing")),
        };
        let profile = match o.get("profile") {
            Some(Value::Array(p)) => p,
            Some(v) => {
                return Err(ctx.err(
                    "profile",
                    format!("expected a list of reviews, found {}", type_name(v)),
                ));
            }
            None => return Err(ctx.err("profile", "missing")),
        };
        if profile.is_empty() {
            return Err(Error::EmptyProfile {
                path: path.clone(),
                record: ri,
                user: id,
            });
        }
        let mut reviews = Vec::with_capacity(profile.len());
        for (vi, r) in profile.iter().enumerate() {
            ctx.review = Some(vi);
            let Value::Object(r) = r else {
                return Err(ctx.err(
                    "",
                    format!("expected a review object, found {}", type_name(r)),
                ));
            };
            let title = ctx.opt_str(r, "title")?;
            let text = ctx.opt_str(r, "text")?;
            let rating = match r.get("rating") {
                None | Some(Value::Null) => None,
                Some(Value::Number(n)) => match n.as_f64() {
                    Some(x) if x.is_finite() => Some(x),
                    _ => return Err(ctx.err("rating", format!("not a finite number: {n}"))),
                },
                Some(v) => {
                    return Err(ctx.err(
                        "rating",
                        format!("expected a number or null, found {}", type_name(v)),
                    ));
                }
            };
            let (name, raw) = match (r.get("pid"), r.get("productAsin")) {
                (Some(p), _) => ("pid", p),
                (None, Some(p)) => ("productAsin", p),
                (None, None) => {
                    return Err(ctx.err(
                        "pid",
                        "missing (neither \"pid\" nor \"productAsin\" is present)",
                    ));
                }
            };
            let pid = match raw {
                Value::String(s) => ItemId::Str(s.clone()),
                Value::Number(n) => match n.as_i64() {
                    Some(i) => ItemId::Int(i),
                    None => {
                        return Err(ctx.err(
                            name,
                            format!("expected a string or an integer, found the number {n}"),
                        ));
                    }
                },
                v => {
                    return Err(ctx.err(
                        name,
                        format!("expected a string or an integer, found {}", type_name(v)),
                    ));
                }
            };
            reviews.push(SplitReview {
                title,
                text,
                rating,
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
