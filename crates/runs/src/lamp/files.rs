//! The files the LaMP runs read: questions and summaries.
use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;

use pgraphrag_core::{LampQuestion, LampTask};
use pgraphrag_eval::lamp_grid::{LampCellRun, LampConfig};
use serde::Deserialize;

use crate::{Error, Result};

/// Reads a summaries file (JSON lines `{"id", "summary"}`, `pgraphrag summarize --export`):
/// an unreadable file, a line of another shape, an id given twice or no summary at all is
/// the caller's input at fault.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// let p = dir.path().join("summaries.jsonl");
/// std::fs::write(&p, "{\"id\": \"u1\", \"summary\": \"likes noir\"}\n").unwrap();
/// let s = pgraphrag_runs::lamp::read_summaries(&p)?;
/// assert_eq!(s["u1"], "likes noir");
/// std::fs::write(&p, "").unwrap();
/// assert!(pgraphrag_runs::lamp::read_summaries(&p).unwrap_err().is_bad_input());
/// # Ok::<(), pgraphrag_runs::Error>(())
/// ```
pub fn read_summaries(path: &Path) -> Result<HashMap<String, String>> {
    #[derive(Deserialize)]
    struct S {
        id: String,
        summary: String,
    }
    let f = std::fs::File::open(path)
        .map_err(Error::input(format!("cannot open {}", path.display())))?;
    let mut out = HashMap::new();
    for (i, line) in std::io::BufReader::new(f).lines().enumerate() {
        let line = line.map_err(Error::input(format!(
            "{}: line {}: cannot read",
            path.display(),
            i + 1
        )))?;
        if line.trim().is_empty() {
            continue;
        }
        let s: S = serde_json::from_str(&line).map_err(Error::input(format!(
            "{}: line {}: expected {{\"id\", \"summary\"}} strings",
            path.display(),
            i + 1
        )))?;
        if out.contains_key(&s.id) {
            return Err(Error::invalid(format!(
                "{}: line {}: user {:?} has a second summary; each id must appear once",
                path.display(),
                i + 1,
                s.id
            )));
        }
        out.insert(s.id, s.summary);
    }
    if out.is_empty() {
        return Err(Error::invalid(format!(
            "{}: no summaries in the file (it is empty); write them with `pgraphrag summarize --export`",
            path.display()
        )));
    }
    Ok(out)
}

/// The questions of `task` in `path`; none is the caller's input at fault.
pub(super) fn read_questions(path: &Path, task: LampTask, none: &str) -> Result<Vec<LampQuestion>> {
    let q = pgraphrag_data::lamp::read_questions_for(path, task)
        .map_err(Error::input(format!("reading the {task} questions file")))?;
    if q.is_empty() {
        return Err(Error::invalid(format!(
            "{}: no questions (an empty list){none}",
            path.display()
        )));
    }
    Ok(q)
}

/// A file's name, for tables and titles.
pub(super) fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The grid's answers, one run per cell and seed, checked to answer `questions` in order.
pub(super) fn grid_runs(
    dir: &Path,
    task: LampTask,
    configs: &[LampConfig],
    seeds: &[u64],
    questions: &[LampQuestion],
) -> Result<Vec<LampCellRun>> {
    let mut runs = Vec::new();
    for &config in configs {
        for &seed in seeds {
            let path = dir.join(format!("{config}-seed{seed}_outputs.json"));
            // Answers, not golds: any text (read as the grid reads it), but the task's file.
            let (name, answers) = pgraphrag_data::lamp::read_outputs(&path).map_err(
                Error::input(format!("reading the grid's answers {}", path.display())),
            )?;
            if name != task.outputs_name() {
                return Err(Error::invalid(format!(
                    "{}: the answers of {name:?}, not of {task} ({:?})",
                    path.display(),
                    task.outputs_name()
                )));
            }
            let same = answers.len() == questions.len()
                && answers.iter().zip(questions).all(|(a, q)| a.id == q.id);
            if !same {
                return Err(Error::invalid(format!(
                    "{} answers other questions than the first {} of the questions file (check the limit)",
                    path.display(),
                    questions.len()
                )));
            }
            runs.push(LampCellRun {
                config,
                seed,
                outputs: answers.into_iter().map(|a| a.output).collect(),
            });
        }
    }
    Ok(runs)
}
