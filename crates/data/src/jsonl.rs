//! JSON Lines inputs of the `pgraphrag` tool: prediction/reference pairs (`pgraphrag metrics`)
//! and texts to embed (`pgraphrag embed`).
//!
//! One JSON object per line; blank lines (only whitespace) are skipped. `id` may be any JSON
//! value and is copied through; the other fields must be strings; unknown fields are ignored.
//! Errors ([`JsonlError`]) name the file, the 1-based line and the field.
//!
//! ```
//! use pgraphrag_data::jsonl::{parse_pairs, JsonlError};
//!
//! let text = "{\"id\": 1, \"prediction\": \"a cat\", \"reference\": \"the cat\"}\n\n";
//! let pairs = parse_pairs(text.as_bytes(), "pairs.jsonl").unwrap();
//! assert_eq!(pairs[0].prediction, "a cat");
//!
//! let bad = "{\"id\": 1, \"prediction\": 2, \"reference\": \"b\"}\n";
//! let e = parse_pairs(bad.as_bytes(), "pairs.jsonl").unwrap_err();
//! assert!(matches!(e, JsonlError::NotAString { line: 1, field: "prediction", .. }));
//! ```
use std::io::BufRead;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// What can go wrong reading a JSON Lines input. Every variant names the file; all but
/// [`JsonlError::Open`] name the 1-based line.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JsonlError {
    /// The file could not be opened.
    #[error("cannot open {path}")]
    Open {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A line could not be read (an I/O error, or bytes that are not UTF-8).
    #[error("{path}: line {line}: cannot read")]
    Read {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A line is not valid JSON.
    #[error("{path}: line {line}: not JSON: {message}")]
    NotJson {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What serde_json said.
        message: String,
    },
    /// A line is JSON but not an object.
    #[error("{path}: line {line}: not a JSON object")]
    NotAnObject {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
    },
    /// A required field is missing.
    #[error("{path}: line {line}: missing \"{field}\"")]
    Missing {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// The field.
        field: &'static str,
    },
    /// A field that must be a string is not.
    #[error("{path}: line {line}: \"{field}\" must be a string, found {found}")]
    NotAString {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// The field.
        field: &'static str,
        /// The value found, as JSON.
        found: String,
    },
}

/// One line of a pairs file: `{"id": .., "prediction": "..", "reference": ".."}`.
#[derive(Debug, Clone, PartialEq)]
pub struct Pair {
    /// Any JSON value, copied through to the output.
    pub id: Value,
    /// The generated text.
    pub prediction: String,
    /// The reference text.
    pub reference: String,
}

/// One line of a texts file: `{"id": .., "text": ".."}`.
#[derive(Debug, Clone, PartialEq)]
pub struct IdText {
    /// Any JSON value, copied through to the output.
    pub id: Value,
    /// The text.
    pub text: String,
}

/// Calls `record(line, object)` for every non-blank line of `r`, which must be a JSON object.
fn for_each_object(
    r: impl BufRead,
    path: &Path,
    mut record: impl FnMut(usize, Map<String, Value>) -> Result<(), JsonlError>,
) -> Result<(), JsonlError> {
    for (i, line) in r.lines().enumerate() {
        let n = i + 1;
        let line = line.map_err(|source| JsonlError::Read {
            path: path.to_path_buf(),
            line: n,
            source,
        })?;
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(&line).map_err(|e| JsonlError::NotJson {
            path: path.to_path_buf(),
            line: n,
            message: e.to_string(),
        })?;
        let Value::Object(obj) = v else {
            return Err(JsonlError::NotAnObject {
                path: path.to_path_buf(),
                line: n,
            });
        };
        record(n, obj)?;
    }
    Ok(())
}

fn take(
    obj: &mut Map<String, Value>,
    field: &'static str,
    path: &Path,
    line: usize,
) -> Result<Value, JsonlError> {
    obj.remove(field).ok_or_else(|| JsonlError::Missing {
        path: path.to_path_buf(),
        line,
        field,
    })
}

fn take_string(
    obj: &mut Map<String, Value>,
    field: &'static str,
    path: &Path,
    line: usize,
) -> Result<String, JsonlError> {
    match take(obj, field, path, line)? {
        Value::String(s) => Ok(s),
        other => Err(JsonlError::NotAString {
            path: path.to_path_buf(),
            line,
            field,
            found: other.to_string(),
        }),
    }
}

/// Reads a pairs file from `r`; `path` names it in errors. Fields are checked in the order
/// `prediction`, `reference`, `id`.
pub fn parse_pairs(r: impl BufRead, path: impl AsRef<Path>) -> Result<Vec<Pair>, JsonlError> {
    let path = path.as_ref();
    let mut out = Vec::new();
    for_each_object(r, path, |n, mut obj| {
        let prediction = take_string(&mut obj, "prediction", path, n)?;
        let reference = take_string(&mut obj, "reference", path, n)?;
        let id = take(&mut obj, "id", path, n)?;
        out.push(Pair {
            id,
            prediction,
            reference,
        });
        Ok(())
    })?;
    Ok(out)
}

/// Reads a texts file from `r`; `path` names it in errors. Fields are checked in the order
/// `text`, `id`.
///
/// ```
/// let t = pgraphrag_data::jsonl::parse_texts(&b"{\"id\": [1], \"text\": \"hi\"}"[..], "t.jsonl").unwrap();
/// assert_eq!((t[0].id.clone(), t[0].text.as_str()), (serde_json::json!([1]), "hi"));
/// ```
pub fn parse_texts(r: impl BufRead, path: impl AsRef<Path>) -> Result<Vec<IdText>, JsonlError> {
    let path = path.as_ref();
    let mut out = Vec::new();
    for_each_object(r, path, |n, mut obj| {
        let text = take_string(&mut obj, "text", path, n)?;
        let id = take(&mut obj, "id", path, n)?;
        out.push(IdText { id, text });
        Ok(())
    })?;
    Ok(out)
}

fn open(path: &Path) -> Result<std::io::BufReader<std::fs::File>, JsonlError> {
    std::fs::File::open(path)
        .map(std::io::BufReader::new)
        .map_err(|source| JsonlError::Open {
            path: path.to_path_buf(),
            source,
        })
}

/// [`parse_pairs`] of the file at `path`.
pub fn read_pairs(path: impl AsRef<Path>) -> Result<Vec<Pair>, JsonlError> {
    let path = path.as_ref();
    parse_pairs(open(path)?, path)
}

/// [`parse_texts`] of the file at `path`.
pub fn read_texts(path: impl AsRef<Path>) -> Result<Vec<IdText>, JsonlError> {
    let path = path.as_ref();
    parse_texts(open(path)?, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs_err(text: &str) -> JsonlError {
        parse_pairs(text.as_bytes(), "bad.jsonl").expect_err("an error")
    }

    #[test]
    fn bad_pair_lines_are_named() {
        for (text, want) in [
            (
                "{\"id\":1,\"prediction\":\"a\",\"reference\":\"b\"}\n[1]\n",
                "bad.jsonl: line 2: not a JSON object",
            ),
            (
                "{\"id\":1,\"prediction\":2,\"reference\":\"b\"}\n",
                "\"prediction\" must be a string, found 2",
            ),
            (
                "\n{\"prediction\":\"a\",\"reference\":\"b\"}\n",
                "line 2: missing \"id\"",
            ),
            ("{\"id\":1,\"prediction\":\"a\"}\n", "missing \"reference\""),
            ("{\"id\":1,\"prediction\":\"a\"\n", "line 1: not JSON"),
        ] {
            let e = pairs_err(text).to_string();
            assert!(e.contains(want), "{e:?} lacks {want:?}");
        }
        assert!(matches!(
            pairs_err("  \n{\"id\":1,\"reference\":\"b\",\"prediction\":null}"),
            JsonlError::NotAString {
                line: 2,
                field: "prediction",
                ..
            }
        ));
        assert!(matches!(
            parse_pairs(&b"\xff\n"[..], "x").unwrap_err(),
            JsonlError::Read { line: 1, .. }
        ));
    }

    #[test]
    fn pairs_and_texts_parse() {
        let p = parse_pairs(
            "{\"id\":\"a\",\"prediction\":\"p\",\"reference\":\"r\",\"extra\":3}\n \n{\"id\":null,\"prediction\":\"\",\"reference\":\"\"}"
                .as_bytes(),
            "x",
        )
        .unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].id, Value::from("a"));
        assert_eq!(p[1].id, Value::Null);
        let t = parse_texts("{\"text\":\"t\",\"id\":{\"k\":1}}\r\n".as_bytes(), "x").unwrap();
        assert_eq!(t[0].text, "t");
        assert_eq!(t[0].id, serde_json::json!({"k": 1}));
    }

    #[test]
    fn bad_text_lines_are_named() {
        let err = |s: &str| parse_texts(s.as_bytes(), "t.jsonl").unwrap_err();
        assert!(matches!(
            err("{\"id\":1}"),
            JsonlError::Missing { field: "text", .. }
        ));
        assert!(matches!(
            err("{\"text\":\"a\"}"),
            JsonlError::Missing { field: "id", .. }
        ));
        assert!(matches!(
            err("{\"id\":1,\"text\":[]}"),
            JsonlError::NotAString { field: "text", .. }
        ));
        assert!(matches!(
            err("\"a\""),
            JsonlError::NotAnObject { line: 1, .. }
        ));
        assert!(matches!(err("\n\n{"), JsonlError::NotJson { line: 3, .. }));
        let e = read_texts("/nonexistent/t.jsonl").unwrap_err();
        assert!(matches!(e, JsonlError::Open { .. }));
        assert!(e.to_string().contains("/nonexistent/t.jsonl"));
    }
}
