//! PGraphRAG's OUTPUT files: `OUTPUT-{ds}_{split}_{task}_{MODEL}_{ranker}-{mode}_k{k}.json`
//! holding `[{"user_id": ..., "output": ...}]`, written as Python's
//! `json.dump(results, f, indent=4)` writes them (4-space indent, non-ASCII escaped as
//! `\uXXXX`), so the released `master_eval.py` reads them unchanged.
use std::path::Path;

use serde::Serialize;

use crate::{Error, Result, RunConfig, UserOutput};

/// What names a run's files: dataset, split, task, model and ranker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunName {
    /// Dataset (`amazon`, `b2w`, `gap`, `hotel`).
    pub dataset: String,
    /// Split (`dev`, `test`).
    pub split: String,
    /// Task as the released code names it (`reviewText`, `reviewTitle`, `reviewRating`).
    pub task: String,
    /// Model label (`GPT`, `LLAMA` in the released runs). `_` is replaced by `-` because
    /// `master_eval.py` finds the model as the fourth `_`-separated field.
    pub model: String,
    /// Ranker (`bm25`, `con`).
    pub ranker: String,
}

impl RunName {
    /// `OUTPUT-{ds}_{split}_{task}_{MODEL}_{ranker}-{mode}_k{k}.json`.
    ///
    /// ```
    /// use pgraphrag_eval::{RunConfig, RunName};
    /// use pgraphrag_prompt::pgraphrag::Mode;
    /// let n = RunName { dataset: "amazon".into(), split: "dev".into(), task: "reviewTitle".into(),
    ///                   model: "SmolLM2_135M".into(), ranker: "bm25".into() };
    /// assert_eq!(n.output_file(RunConfig::new(Mode::Both, 4)),
    ///            "OUTPUT-amazon_dev_reviewTitle_SmolLM2-135M_bm25-both_k4.json");
    /// ```
    pub fn output_file(&self, config: RunConfig) -> String {
        format!(
            "OUTPUT-{}_{}_{}_{}_{}-{}.json",
            self.dataset,
            self.split,
            self.task,
            self.model.replace('_', "-"),
            self.ranker,
            config
        )
    }

    /// `EVAL-{ds}_{split}_{task}_{model}_{ranker}` (the stem of `master_eval.py`'s CSV).
    pub fn eval_stem(&self) -> String {
        format!(
            "EVAL-{}_{}_{}_{}_{}",
            self.dataset,
            self.split,
            self.task,
            self.model.replace('_', "-"),
            self.ranker
        )
    }
}

/// Serializes as Python's `json.dumps(value, indent=4)` (default `ensure_ascii=True`).
///
/// ```
/// let rows = vec![pgraphrag_eval::UserOutput { user_id: "u".into(), output: "é".into() }];
/// let s = pgraphrag_eval::python_json(&rows).unwrap();
/// assert_eq!(s, "[\n    {\n        \"user_id\": \"u\",\n        \"output\": \"\\u00e9\"\n    }\n]");
/// ```
pub fn python_json<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    pgraphrag_text::py::json_dumps(value, &pgraphrag_text::py::DumpOptions::indent(4))
}

/// Writes `contents` to `path` through the one atomic writer
/// ([`pgraphrag_data::output::write_atomic_with`]), creating its folder if needed.
pub(crate) fn write_file(path: &Path, contents: &[u8]) -> Result<()> {
    let options = pgraphrag_data::output::WriteOptions::default().create_dirs();
    pgraphrag_data::output::write_atomic_with(path, options, |w| w.write_all(contents)).map_err(
        |e| match e {
            pgraphrag_data::Error::Io { path, source } => Error::Io { path, source },
            pgraphrag_data::Error::Output(e) => Error::Output(e),
            other => Error::InvalidInput(other.to_string()),
        },
    )
}

/// Writes one OUTPUT file, atomically (its folder created if needed).
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use pgraphrag_eval::{read_output_file, write_output_file, UserOutput};
/// let rows = vec![UserOutput { user_id: "u".into(), output: "ok".into() }];
/// let p = dir.path().join("runs/OUTPUT-x.json");
/// write_output_file(&p, &rows).unwrap();
/// assert_eq!(read_output_file(&p).unwrap(), rows);
/// ```
pub fn write_output_file(path: &Path, outputs: &[UserOutput]) -> Result<()> {
    let s = python_json(outputs).map_err(|e| Error::InvalidInput(e.to_string()))?;
    write_file(path, s.as_bytes())
}

/// Reads an OUTPUT file (ours or the released code's; a Llama output stored as the
/// pipeline's `[{"generated_text": ...}]` list is reduced to its text).
pub fn read_output_file(path: &Path) -> Result<Vec<UserOutput>> {
    let bytes = std::fs::read(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let v: Vec<serde_json::Value> = serde_json::from_slice(&bytes)
        .map_err(|e| Error::InvalidInput(format!("{}: {e}", path.display())))?;
    v.into_iter()
        .enumerate()
        .map(|(i, r)| {
            let bad =
                |what: &str| Error::InvalidInput(format!("{}: record {i}: {what}", path.display()));
            let user_id = match &r["user_id"] {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Null => return Err(bad("no user_id")),
                other => other.to_string(),
            };
            let output = match &r["output"] {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Array(a) => a
                    .first()
                    .and_then(|x| x["generated_text"].as_str())
                    .ok_or_else(|| bad("output list without generated_text"))?
                    .to_string(),
                _ => return Err(bad("output is neither a string nor a pipeline list")),
            };
            Ok(UserOutput { user_id, output })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_and_astral_escape() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("o.json");
        let outs = vec![UserOutput {
            user_id: "u".into(),
            output: "😀\n\"q\"".into(),
        }];
        write_output_file(&p, &outs).unwrap();
        let s = std::fs::read_to_string(&p).unwrap();
        assert!(s.contains("\\ud83d\\ude00\\n\\\"q\\\""), "{s}");
        assert_eq!(read_output_file(&p).unwrap(), outs);
    }
}
