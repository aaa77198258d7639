//! Field parsers with errors naming file and line; the line and RecBole atomic-file readers are
//! `pgraphrag_data::recbole`'s.
use std::path::Path;

use crate::{Error, Result};

use pgraphrag_data::recbole::AtomicFile;
pub(crate) use pgraphrag_data::recbole::{Decode, lines, read};

/// A RecBole atomic file whose every record has as many fields as its header.
pub(crate) fn read_atomic(path: &Path) -> Result<AtomicFile> {
    Ok(AtomicFile::read(path)?.exact()?)
}

fn value_error(path: &Path, line: usize, field: &str, value: &str, expected: &str) -> Error {
    Error::Value {
        path: path.to_path_buf(),
        line,
        field: field.to_string(),
        value: pgraphrag_data::shown(value),
        expected: expected.to_string(),
    }
}

/// A non-negative integer id.
pub(crate) fn parse_id(path: &Path, line: usize, field: &str, value: &str) -> Result<u32> {
    value
        .trim()
        .parse::<u32>()
        .map_err(|_| value_error(path, line, field, value, "a non-negative integer id"))
}

/// A finite number.
pub(crate) fn parse_f32(path: &Path, line: usize, field: &str, value: &str) -> Result<f32> {
    value
        .trim()
        .parse::<f32>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| value_error(path, line, field, value, "a finite number"))
}

/// Unix seconds, written as an integer or a float with no fractional part (`881250949.0`).
pub(crate) fn parse_time(path: &Path, line: usize, field: &str, value: &str) -> Result<i64> {
    let v = value.trim();
    if let Ok(t) = v.parse::<i64>() {
        return Ok(t);
    }
    v.parse::<f64>()
        .ok()
        .filter(|t| t.is_finite() && t.fract() == 0.0 && t.abs() < 9.0e15)
        .map(|t| t as i64)
        .ok_or_else(|| value_error(path, line, field, value, "a whole number of unix seconds"))
}

/// A 0/1 flag.
pub(crate) fn parse_flag(path: &Path, line: usize, field: &str, value: &str) -> Result<bool> {
    match value.trim() {
        "1" => Ok(true),
        "0" => Ok(false),
        _ => Err(value_error(path, line, field, value, "0 or 1")),
    }
}

/// A Python list literal as `str(list)` writes it: `['2640', '2178']` or `[1, 0]`. Returns the
/// elements with their quotes removed.
pub(crate) fn parse_py_list<'a>(
    path: &Path,
    line: usize,
    field: &str,
    value: &'a str,
) -> Result<Vec<&'a str>> {
    let inner = value
        .trim()
        .strip_prefix('[')
        .and_then(|v| v.strip_suffix(']'))
        .ok_or_else(|| value_error(path, line, field, value, "a list like ['1', '2']"))?;
    if inner.trim().is_empty() {
        return Ok(Vec::new());
    }
    inner
        .split(',')
        .map(|e| {
            let e = e.trim();
            let unq = e
                .strip_prefix('\'')
                .and_then(|x| x.strip_suffix('\''))
                .or_else(|| e.strip_prefix('"').and_then(|x| x.strip_suffix('"')))
                .unwrap_or(e);
            if unq.is_empty() {
                Err(value_error(
                    path,
                    line,
                    field,
                    value,
                    "a list without empty elements",
                ))
            } else {
                Ok(unq)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn py_lists() {
        let p = Path::new("x");
        assert_eq!(
            parse_py_list(p, 1, "f", "['1', '22']").unwrap(),
            ["1", "22"]
        );
        assert_eq!(parse_py_list(p, 1, "f", "[1, 0]").unwrap(), ["1", "0"]);
        assert!(parse_py_list(p, 1, "f", "[]").unwrap().is_empty());
        assert!(parse_py_list(p, 1, "f", "1, 2").is_err());
        assert!(parse_py_list(p, 1, "f", "[1,,2]").is_err());
        assert_eq!(parse_time(p, 1, "t", "881250949.0").unwrap(), 881250949);
        assert!(parse_time(p, 1, "t", "1.5").is_err());
    }
}
