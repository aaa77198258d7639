//! Parsing of LaMP's questions and outputs files, with errors naming the file, the record,
//! the profile item, the field and (once known) the question id.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use pgraphrag_core::{LampGold, LampProfileItem, LampQuestion};
use pgraphrag_text::py::python_float_repr;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Number, Value};

use crate::split::type_name;
use crate::{Error, Result};

/// A question as the file holds it; the checks serde cannot express are made afterwards.
#[derive(Deserialize)]
#[serde(expecting = "a question object")]
struct RawQuestion {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    input: Option<Value>,
    #[serde(default)]
    profile: Option<Vec<RawItem>>,
    #[serde(default)]
    user_id: Option<Value>,
}

#[derive(Deserialize)]
#[serde(transparent)]
struct RawItem(Map<String, Value>);

#[derive(Deserialize)]
#[serde(expecting = "an object {\"task\", \"golds\": [...]}")]
struct Wrapped<T> {
    #[serde(default)]
    task: Option<Value>,
    golds: Vec<T>,
}

#[derive(Deserialize)]
#[serde(expecting = "a gold object {\"id\", \"output\"}")]
struct RawGold {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    output: Option<Value>,
}

/// The text Python's `str()` gives for a JSON number after `json.load`.
fn py_str_number(n: &Number) -> String {
    if let Some(i) = n.as_i64() {
        i.to_string()
    } else if let Some(u) = n.as_u64() {
        u.to_string()
    } else {
        python_float_repr(n.as_f64().unwrap_or(f64::NAN))
    }
}

/// A string, or a number as Python's `str()` writes it; otherwise the JSON type found.
fn text_of(v: Value) -> std::result::Result<String, &'static str> {
    match v {
        Value::String(s) => Ok(s),
        Value::Number(n) => Ok(py_str_number(&n)),
        other => Err(type_name(&other)),
    }
}

struct Ctx<'a> {
    path: &'a Path,
    /// Whether the records sit under `"golds"` (the wrapped shape).
    wrapped: bool,
}

impl Ctx<'_> {
    fn schema(
        &self,
        record: Option<usize>,
        item: Option<usize>,
        field: &str,
        message: String,
    ) -> Error {
        Error::Schema {
            path: self.path.to_path_buf(),
            record,
            review: item,
            field: field.to_string(),
            message,
        }
    }

    fn json(&self, e: &serde_json::Error) -> Error {
        Error::Json {
            path: self.path.to_path_buf(),
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        }
    }

    /// Where a serde error happened, as (record, profile item, field).
    fn locate(&self, path: &serde_path_to_error::Path) -> (Option<usize>, Option<usize>, String) {
        use serde_path_to_error::Segment;
        let mut segs: Vec<&Segment> = path.iter().collect();
        if self.wrapped {
            match segs.first() {
                Some(Segment::Map { key }) if key == "golds" => {
                    segs.remove(0);
                }
                Some(Segment::Map { key }) => return (None, None, key.clone()),
                _ => return (None, None, String::new()),
            }
        }
        crate::split::locate_segments(&segs)
    }

    /// Deserializes the records, a list or (when `wrapped`) `{"task", "golds": [...]}`.
    fn records<T: DeserializeOwned>(
        &self,
        text: &str,
        what: &str,
    ) -> Result<(Option<Value>, Vec<T>)> {
        let mut de = serde_json::Deserializer::from_str(text);
        let res = if self.wrapped {
            serde_path_to_error::deserialize::<_, Wrapped<T>>(&mut de).map(|w| (w.task, w.golds))
        } else {
            serde_path_to_error::deserialize::<_, Vec<T>>(&mut de).map(|v| (None, v))
        };
        let out = res.map_err(|e| {
            let inner = e.inner();
            if !inner.is_data() {
                return self.json(inner);
            }
            let (record, item, field) = self.locate(e.path());
            let mut message = inner.to_string();
            if record.is_none() && field.is_empty() {
                message = format!("expected {what} ({message})");
            }
            self.schema(record, item, &field, message)
        })?;
        de.end().map_err(|e| self.json(&e))?;
        Ok(out)
    }
}

fn utf8<'a>(bytes: &'a [u8], path: &Path) -> Result<&'a str> {
    std::str::from_utf8(bytes).map_err(|e| Error::NotUtf8 {
        path: path.to_path_buf(),
        offset: e.valid_up_to(),
    })
}

/// Whether the first non-whitespace byte opens an object.
fn starts_with_object(text: &str) -> bool {
    text.trim_start_matches([' ', '\t', '\n', '\r'])
        .starts_with('{')
}

/// Parses the bytes of a questions file; `path` is only used in error messages.
///
/// ```
/// let qs = pgraphrag_data::lamp::parse_questions(
///     br#"[{"id": 7, "input": "x", "profile": [{"id": "p", "score": 4, "text": "ok"}], "user_id": "u"}]"#,
///     "q.json").unwrap();
/// assert_eq!((qs[0].id.as_str(), qs[0].user_id.as_deref()), ("7", Some("u")));
/// let e = pgraphrag_data::lamp::parse_questions(br#"[{"id": "a", "input": 3}]"#, "q.json").unwrap_err();
/// assert!(e.to_string().contains("record 0, field \"input\""), "{e}");
/// ```
pub fn parse_questions(bytes: &[u8], path: impl AsRef<Path>) -> Result<Vec<LampQuestion>> {
    let path: PathBuf = path.as_ref().to_path_buf();
    let text = utf8(bytes, &path)?;
    let ctx = Ctx {
        path: &path,
        wrapped: starts_with_object(text),
    };
    let what = if ctx.wrapped {
        "{\"task\", \"golds\": [questions]}"
    } else {
        "a list of questions"
    };
    let (_, raw): (_, Vec<RawQuestion>) = ctx.records(text, what)?;
    let mut out = Vec::with_capacity(raw.len());
    for (ri, q) in raw.into_iter().enumerate() {
        out.push(question(&ctx, ri, q)?);
    }
    let why = "a held-out gold (or a summary) found by id could be attached to the wrong question";
    unique_ids(&path, out.iter().map(|q| q.id.as_str()), why)?;
    Ok(out)
}

/// Refuses ([`Error::DuplicateId`]) a second record with an id already seen in `path`.
fn unique_ids<'a>(
    path: &Path,
    ids: impl Iterator<Item = &'a str>,
    why: &'static str,
) -> Result<()> {
    let mut first: HashMap<&str, usize> = HashMap::new();
    for (ri, id) in ids.enumerate() {
        if let Some(&f) = first.get(id) {
            return Err(Error::DuplicateId {
                path: path.to_path_buf(),
                record: ri,
                first: f,
                id: crate::shown(id),
                why,
            });
        }
        first.insert(id, ri);
    }
    Ok(())
}

fn question(ctx: &Ctx<'_>, ri: usize, q: RawQuestion) -> Result<LampQuestion> {
    let wrong = |field: &str, found: &str, expected: &str, id: Option<&str>| {
        let of = id
            .map(|i| format!(" (question id {i:?})"))
            .unwrap_or_default();
        ctx.schema(
            Some(ri),
            None,
            field,
            format!("expected {expected}, found {found}{of}"),
        )
    };
    let id = match q.id {
        None => return Err(ctx.schema(Some(ri), None, "id", "missing".into())),
        Some(v) => text_of(v).map_err(|t| wrong("id", t, "a string or a number", None))?,
    };
    let input = match q.input {
        None => {
            let m = format!("missing (question id {id:?})");
            return Err(ctx.schema(Some(ri), None, "input", m));
        }
        Some(Value::String(s)) => s,
        Some(v) => return Err(wrong("input", type_name(&v), "a string", Some(&id))),
    };
    let Some(items) = q.profile else {
        let m = format!("missing (question id {id:?})");
        return Err(ctx.schema(Some(ri), None, "profile", m));
    };
    let user_id = q
        .user_id
        .map(text_of)
        .transpose()
        .map_err(|t| wrong("user_id", t, "a string or a number", Some(&id)))?;
    let mut profile = Vec::with_capacity(items.len());
    for (pi, RawItem(map)) in items.into_iter().enumerate() {
        let item_err = |field: &str, message: String| {
            ctx.schema(
                Some(ri),
                Some(pi),
                field,
                format!("{message} (question id {id:?})"),
            )
        };
        let mut item_id = None;
        let mut date = None;
        let mut fields = BTreeMap::new();
        for (k, v) in map {
            let t = text_of(v).map_err(|found| {
                item_err(&k, format!("expected a string or a number, found {found}"))
            })?;
            match k.as_str() {
                "id" => item_id = Some(t),
                "date" => date = Some(t),
                _ => {
                    fields.insert(k, t);
                }
            }
        }
        let Some(item_id) = item_id else {
            return Err(item_err("id", "missing".into()));
        };
        profile.push(LampProfileItem {
            id: item_id,
            date,
            fields,
        });
    }
    Ok(LampQuestion {
        id,
        input,
        profile,
        user_id,
    })
}

/// Parses the bytes of an outputs file `{"task": "LaMP_N", "golds": [...]}`; `path` is only
/// used in error messages.
///
/// ```
/// let (task, golds) = pgraphrag_data::lamp::parse_outputs(
///     br#"{"task": "LaMP_3", "golds": [{"id": "1", "output": 4}]}"#, "o.json").unwrap();
/// assert_eq!((task.as_str(), golds[0].output.as_str()), ("LaMP_3", "4"));
/// let e = pgraphrag_data::lamp::parse_outputs(br#"{"task": "LaMP_3", "golds": [{"id": "1"}]}"#, "o.json").unwrap_err();
/// assert!(e.to_string().contains("record 0, field \"output\": missing"), "{e}");
/// ```
pub fn parse_outputs(bytes: &[u8], path: impl AsRef<Path>) -> Result<(String, Vec<LampGold>)> {
    let path: PathBuf = path.as_ref().to_path_buf();
    let text = utf8(bytes, &path)?;
    let ctx = Ctx {
        path: &path,
        wrapped: true,
    };
    let (task, raw): (_, Vec<RawGold>) = ctx.records(text, "{\"task\", \"golds\": [...]}")?;
    let task = match task {
        None => return Err(ctx.schema(None, None, "task", "missing".into())),
        Some(Value::String(s)) => s,
        Some(v) => {
            let m = format!("expected a string, found {}", type_name(&v));
            return Err(ctx.schema(None, None, "task", m));
        }
    };
    let mut golds = Vec::with_capacity(raw.len());
    for (ri, g) in raw.into_iter().enumerate() {
        let field = |name: &str, v: Option<Value>, id: Option<&str>| {
            let of = id
                .map(|i| format!(" (question id {i:?})"))
                .unwrap_or_default();
            match v {
                None => Err(ctx.schema(Some(ri), None, name, format!("missing{of}"))),
                Some(v) => text_of(v).map_err(|t| {
                    let m = format!("expected a string or a number, found {t}{of}");
                    ctx.schema(Some(ri), None, name, m)
                }),
            }
        };
        let id = field("id", g.id, None)?;
        let output = field("output", g.output, Some(&id))?;
        golds.push(LampGold { id, output });
    }
    let why = "which output a question is scored against is undefined";
    unique_ids(&path, golds.iter().map(|g| g.id.as_str()), why)?;
    Ok((task, golds))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(json: &str) -> String {
        parse_questions(json.as_bytes(), "f.json")
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn numbers_become_python_str() {
        let qs = parse_questions(
            br#"[{"id":"q","input":"i","profile":[{"id":1,"score":5,"x":4.0,"y":-7,"z":1e2,"date":"2020-01-01"}]}]"#,
            "f",
        )
        .unwrap();
        let p = &qs[0].profile[0];
        assert_eq!(p.id, "1");
        assert_eq!(p.get("score"), Some("5"));
        assert_eq!(p.get("x"), Some("4.0"));
        assert_eq!(p.get("y"), Some("-7"));
        assert_eq!(p.get("z"), Some("100.0"));
        assert_eq!(p.date.as_deref(), Some("2020-01-01"));
    }

    #[test]
    fn errors_name_record_item_field_and_id() {
        let cases: [(&str, &[&str]); 9] = [
            (r#"{"id":"a"}"#, &["top level", "golds"]),
            (r#"3"#, &["top level", "list of questions"]),
            (
                r#"[{"input":"x","profile":[]}]"#,
                &["record 0", "\"id\"", "missing"],
            ),
            (
                r#"[{"id":"a","input":"x","profile":[]},{"id":"b","input":"x"}]"#,
                &["record 1", "\"profile\"", "\"b\""],
            ),
            (
                r#"[{"id":"a","input":"x","profile":[{"id":"p"},{"id":"q","text":null}]}]"#,
                &["record 0", "profile[1]", "\"text\"", "found null", "\"a\""],
            ),
            (
                r#"[{"id":"a","input":"x","profile":[{"text":"t"}]}]"#,
                &["profile[0]", "\"id\"", "missing"],
            ),
            (
                r#"[{"id":"a","input":"x","profile":[3]}]"#,
                &["record 0", "profile[0]"],
            ),
            (
                r#"{"task":"LaMP_6","golds":[{"id":"a","input":"x","profile":{}}]}"#,
                &["record 0", "\"profile\""],
            ),
            (
                r#"[{"id":[1],"input":"x","profile":[]}]"#,
                &["\"id\"", "a list"],
            ),
        ];
        for (json, want) in cases {
            let e = err(json);
            assert!(e.starts_with("f.json: "), "{e}");
            for w in want {
                assert!(e.contains(w), "{e} lacks {w}");
            }
        }
        assert!(matches!(
            parse_questions(b"[{\"id\":\"a\xff\"}]", "f").unwrap_err(),
            Error::NotUtf8 { offset: 9, .. }
        ));
        assert!(matches!(
            parse_questions(b"[{\"id\":", "f").unwrap_err(),
            Error::Json { line: 1, .. }
        ));
        assert!(matches!(
            parse_questions(b"[] x", "f").unwrap_err(),
            Error::Json { .. }
        ));
    }

    #[test]
    fn outputs_errors() {
        let e = parse_outputs(br#"[{"id":"1","output":"x"}]"#, "o.json")
            .unwrap_err()
            .to_string();
        assert!(e.contains("top level") && e.contains("golds"), "{e}");
        let e = parse_outputs(br#"{"golds":[]}"#, "o.json")
            .unwrap_err()
            .to_string();
        assert!(e.contains("\"task\"") && e.contains("missing"), "{e}");
        let e = parse_outputs(
            br#"{"task":"LaMP_1","golds":[{"id":"1","output":[]}]}"#,
            "o.json",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("record 0") && e.contains("\"output\"") && e.contains("\"1\""),
            "{e}"
        );
    }
}
