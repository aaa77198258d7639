//! Answers without an LLM on the examples the multistage grid scores (the same split, order
//! and limit), scored with the grid's own BLEU and ROUGE, and, given the grid's folder, the
//! strongest of them against the grid's best cell by ROUGE-1: paired per example when the
//! folder has the grid's `predictions/`, else the grid's committed means (unpaired).
use std::path::{Path, PathBuf};

use pgraphrag_corpora::lamp::SplitName;
use pgraphrag_corpora::multistage::Example;
use pgraphrag_eval::baselines::{
    AnswerKind, BaselineReport, BaselineVsCell, CellRows, MultistageScorer, multistage_baselines,
    multistage_example, run_baselines, strongest_vs_best,
};
use serde::{Deserialize, Serialize};

use super::setup::{load_examples, split_examples};
pub use crate::BaselinesReport;
use crate::{Error, Result};

/// The compared column: the grid picks its best ranker and summary by it.
const COLUMN: &str = "ROUGE-1";

/// The trivial baselines of a multistage grid (`pgraphrag multistage baselines`).
///
/// ```
/// use pgraphrag_corpora::lamp::SplitName;
/// use pgraphrag_runs::multistage::BaselinesSpec;
/// let spec = BaselinesSpec::new("runs/mail/examples.jsonl");
/// assert_eq!((spec.split, spec.limit), (SplitName::Test, None));
/// assert!(spec.run().is_err()); // no such file
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BaselinesSpec {
    /// The examples file of `pgraphrag multistage build`.
    pub examples: PathBuf,
    /// The part of the user split, as the grid's.
    pub split: SplitName,
    /// Only the first N examples of the split, as the grid's limit.
    pub limit: Option<usize>,
    /// The grid's output folder (`pgraphrag multistage run --out`): compare the strongest
    /// baseline with its best cell.
    pub grid: Option<PathBuf>,
}

impl BaselinesSpec {
    /// The paper's test split, every example, no grid.
    pub fn new(examples: impl Into<PathBuf>) -> BaselinesSpec {
        BaselinesSpec {
            examples: examples.into(),
            split: SplitName::Test,
            limit: None,
            grid: None,
        }
    }

    /// Answers, scores and (with a grid) compares.
    pub fn run(&self) -> Result<BaselinesReport> {
        let all = load_examples(&self.examples)?;
        let examples = split_examples(&all, &self.examples, self.split, self.limit)?;
        let rows: Vec<_> = examples.iter().map(multistage_example).collect();
        let golds: Vec<String> = examples.iter().map(|e| e.target.clone()).collect();
        let n = examples.len();
        let title = format!(
            "{} {} ({n} examples): trivial baselines",
            dir_name(&self.examples),
            self.split.as_str()
        );
        let report = run_baselines(
            title,
            AnswerKind::Text,
            &rows,
            &golds,
            &multistage_baselines(),
            &MultistageScorer,
        )?;
        let mut md = match &self.grid {
            Some(dir) => compare(dir, &examples, &report)?,
            None => String::new(),
        };
        md.push_str(&report.to_markdown());
        md.push_str(&format!(
            "\nRows: the {n} {} examples of `{}/{}` in file order, as `pgraphrag multistage run` \
             scores them; scores in % (BLEU: sacreBLEU's corpus BLEU; ROUGE: the mean rouge-score \
             F-measure), as the grid's table.\n",
            self.split.as_str(),
            dir_name(&self.examples),
            self.examples
                .file_name()
                .map_or_else(String::new, |s| s.to_string_lossy().into_owned())
        ));
        Ok(BaselinesReport {
            markdown: md,
            predictions: report.to_jsonl()?,
            csv: report.table.to_csv(),
            comparison: None,
        })
    }
}

/// The name of the folder holding `path` (the corpus the examples were built from).
fn dir_name(path: &Path) -> String {
    path.parent().and_then(|p| p.file_name()).map_or_else(
        || "examples".to_string(),
        |s| s.to_string_lossy().into_owned(),
    )
}

/// One line of a grid's `predictions/<cell>.jsonl`.
#[derive(Deserialize)]
struct Predicted {
    id: String,
    rouge1: f64,
}

/// The comparison paragraph: paired over the grid's predictions files when its folder has them,
/// else from its `results.json` means (unpaired).
fn compare(dir: &Path, examples: &[Example], report: &BaselineReport) -> Result<String> {
    let grid = dir
        .file_name()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    let results = dir.join("results.json");
    let text = std::fs::read_to_string(&results).map_err(Error::input(format!(
        "reading the grid's {} (write it with `pgraphrag multistage run`)",
        results.display()
    )))?;
    let json: serde_json::Value = serde_json::from_str(&text).map_err(Error::input(format!(
        "parsing the grid's {}",
        results.display()
    )))?;
    let cells: Vec<String> = json["table"]["rows"]
        .as_array()
        .map(|rows| {
            rows.iter()
                .filter_map(|r| r["cell"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    if cells.is_empty() {
        return Err(Error::invalid(format!(
            "{} lists no cells (table.rows[].cell)",
            results.display()
        )));
    }
    let predictions = dir.join("predictions");
    if predictions.is_dir() {
        let rows = cells
            .iter()
            .map(|c| cell_rows(&predictions, c, examples))
            .collect::<Result<Vec<_>>>()?;
        let c = strongest_vs_best(report, COLUMN, false, &rows)?;
        return Ok(format!(
            "{}{}{}\n",
            c.headline(&grid, None, "examples"),
            BaselineVsCell::markdown_header(),
            c.to_markdown_row(&grid)
        ));
    }
    // Unpaired: the grid's own means and intervals, the baseline's mean over the same rows.
    let column = json["table"]["columns"]
        .as_array()
        .and_then(|c| c.iter().position(|v| v == COLUMN))
        .ok_or_else(|| Error::invalid(format!("{} has no {COLUMN} column", results.display())))?;
    let n_grid = json["stats"]["examples"].as_u64().unwrap_or(0) as usize;
    if n_grid != examples.len() {
        return Err(Error::invalid(format!(
            "the grid {} scored {n_grid} examples, these are {}",
            dir.display(),
            examples.len()
        )));
    }
    let mut best: Option<(&str, f64, f64, f64)> = None;
    for r in json["table"]["rows"].as_array().into_iter().flatten() {
        let (Some(cell), Some(mean)) = (r["cell"].as_str(), r["mean"][column].as_f64()) else {
            continue;
        };
        let lo = r["interval"][column][0].as_f64().unwrap_or(f64::NAN);
        let hi = r["interval"][column][1].as_f64().unwrap_or(f64::NAN);
        if best.is_none_or(|b| mean > b.1) {
            best = Some((cell, mean, lo, hi));
        }
    }
    let (cell, mean, lo, hi) =
        best.ok_or_else(|| Error::invalid(format!("{} has no {COLUMN} means", results.display())))?;
    let col = report
        .table
        .columns
        .iter()
        .position(|c| c == COLUMN)
        .ok_or_else(|| Error::invalid(format!("the baselines' table has no {COLUMN}")))?;
    let (name, value) = report
        .table
        .rows
        .iter()
        .map(|r| (r.config.as_str(), r.values[col]))
        .fold(None::<(&str, f64)>, |b, (n, v)| match b {
            Some((_, bv)) if bv >= v => b,
            _ => Some((n, v)),
        })
        .ok_or_else(|| Error::invalid("no baseline"))?;
    Ok(format!(
        "Against the zero-shot grid `{grid}` (unpaired: the grid's folder has no per-example \
         predictions, only its means): strongest trivial baseline `{name}` ({COLUMN} {}), best \
         cell `{cell}` ({} [{}, {}], 95% bootstrap over the same {} examples); baseline − cell \
         {}. {}\n\n",
        fixed2(value),
        fixed2(mean),
        fixed2(lo),
        fixed2(hi),
        examples.len(),
        fixed2(value - mean),
        if value > hi {
            "The baseline lies above the cell's whole interval."
        } else if value < lo {
            "The baseline lies below the cell's whole interval."
        } else {
            "The baseline lies inside the cell's interval: no difference is shown."
        }
    ))
}

/// A score in % with the grid table's two decimals.
fn fixed2(v: f64) -> String {
    format!("{v:.2}")
}

/// One cell's ROUGE-1 (in %) per example from `predictions/<cell>.jsonl`, in the examples'
/// order.
fn cell_rows(dir: &Path, cell: &str, examples: &[Example]) -> Result<CellRows> {
    let path = dir.join(format!("{cell}.jsonl"));
    let text = std::fs::read_to_string(&path).map_err(Error::input(format!(
        "reading the grid's predictions {}",
        path.display()
    )))?;
    let mut scores = Vec::with_capacity(examples.len());
    for (i, line) in text.lines().filter(|l| !l.trim().is_empty()).enumerate() {
        let p: Predicted = serde_json::from_str(line).map_err(Error::input(format!(
            "{} line {}",
            path.display(),
            i + 1
        )))?;
        if examples.get(i).is_none_or(|e| e.id != p.id) {
            return Err(Error::invalid(format!(
                "{} line {} answers example {:?}, not the grid's examples in order",
                path.display(),
                i + 1,
                p.id
            )));
        }
        scores.push(100.0 * p.rouge1);
    }
    if scores.len() != examples.len() {
        return Err(Error::invalid(format!(
            "{} has {} answers for {} examples",
            path.display(),
            scores.len(),
            examples.len()
        )));
    }
    Ok(CellRows {
        name: cell.to_string(),
        scores,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pgraphrag_corpora::multistage::ContextDoc;

    fn example(id: &str, start: &str, target: &str) -> Example {
        let doc = |d: &str, time, text: &str| ContextDoc {
            doc_id: d.into(),
            time,
            text: text.into(),
        };
        Example {
            id: id.into(),
            author: "kim".into(),
            split: SplitName::Test,
            time: 9,
            immediate_context: format!("Subject\n{start}"),
            target: target.into(),
            context: vec![
                doc("o1", 1, "Re\nthe lunch is on friday"),
                doc("o2", 2, "Re\nbudget numbers attached"),
            ],
        }
    }

    /// A grid folder with one cell's means, and optionally its per-example predictions.
    fn grid(dir: &Path, examples: &[Example], predictions: Option<&[f64]>) {
        let json = serde_json::json!({
            "table": {"columns": ["BLEU", "ROUGE-1", "ROUGE-2", "ROUGE-L"],
                      "rows": [{"cell": "ImmedCtx", "mean": [1.0, 5.0, 1.0, 4.0],
                                "interval": [[0.0, 2.0], [4.0, 6.0], [0.0, 2.0], [3.0, 5.0]]}]},
            "stats": {"examples": examples.len()}
        });
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("results.json"), json.to_string()).unwrap();
        if let Some(scores) = predictions {
            let lines: String = examples
                .iter()
                .zip(scores)
                .map(|(e, s)| format!("{{\"id\":\"{}\",\"rouge1\":{s}}}\n", e.id))
                .collect();
            std::fs::create_dir_all(dir.join("predictions")).unwrap();
            std::fs::write(dir.join("predictions/ImmedCtx.jsonl"), lines).unwrap();
        }
    }

    #[test]
    fn the_strongest_baseline_is_compared_paired_when_the_grid_kept_its_predictions() {
        let dir = tempfile::tempdir().unwrap();
        let examples = [
            example("a", "the lunch", "the lunch moves to friday at noon"),
            example("b", "budget", "budget numbers for the next quarter"),
            example("c", "hello all", "hello all the meeting is cancelled"),
        ];
        let file = dir.path().join("mail/examples.jsonl");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        let lines: String = examples
            .iter()
            .map(|e| serde_json::to_string(e).unwrap() + "\n")
            .collect();
        std::fs::write(&file, lines).unwrap();
        let mut spec = BaselinesSpec::new(&file);
        spec.grid = Some(dir.path().join("grid"));

        grid(&dir.path().join("grid"), &examples, None);
        let md = spec.run().unwrap().markdown;
        assert!(
            md.starts_with("Against the zero-shot grid `grid` (unpaired"),
            "{md}"
        );
        assert!(
            md.contains("best cell `ImmedCtx` (5.00 [4.00, 6.00]"),
            "{md}"
        );
        assert!(md.contains("| passage_start | 3 |"), "{md}");
        assert!(md.contains("of `mail/examples.jsonl`"), "{md}");

        grid(
            &dir.path().join("grid"),
            &examples,
            Some(&[0.05, 0.04, 0.06]),
        );
        let md = spec.run().unwrap().markdown;
        assert!(
            md.contains("(95% paired bootstrap over 3 examples)"),
            "{md}"
        );
        assert!(md.contains("| grid | 3 | ROUGE-1 |"), "{md}");

        // Predictions of other examples are refused, naming the file and line.
        std::fs::write(
            dir.path().join("grid/predictions/ImmedCtx.jsonl"),
            "{\"id\":\"z\",\"rouge1\":0.1}\n",
        )
        .unwrap();
        let e = spec.run().unwrap_err().to_string();
        assert!(
            e.contains("ImmedCtx.jsonl line 1 answers example \"z\""),
            "{e}"
        );
        spec.split = SplitName::Dev;
        assert!(
            spec.run()
                .unwrap_err()
                .to_string()
                .contains("has no dev examples")
        );
    }
}
