//! `pgraphrag lamp baselines`: answers without an LLM on the questions `pgraphrag lamp grid`
//! scores (the same questions file, order and `--limit`, golds from the same outputs file),
//! read and scored with the grid's own reading and metrics, and, given the grid's folder, the
//! strongest of them against the grid's best cell, paired per question (issue 36). The work is
//! the library's (`pgraphrag_eval::baselines`, `pgraphrag_eval::lamp_grid`); this module reads
//! the flags and files and writes the results.
//!
//! Writes into `--out`: `predictions.jsonl` (one line per question: every baseline's answer
//! and its scores alone), `results.md` (with `--grid`, first the comparison; then the table and
//! its notes), `results.csv`, and with `--grid` `comparison.md` (the comparison as one row of a
//! Markdown table, for a README that lists several grids).
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::ValueEnum;
use pgraphrag_core::{LampQuestion, LampTask};
use pgraphrag_eval::baselines::{
    AnswerKind, BaselineVsCell, CellRows, lamp_baselines, lamp_example, lamp_golds,
    lamp_validation_golds, run_baselines, strongest_vs_best,
};
use pgraphrag_eval::lamp_grid::{LampCellRun, LampConfig, LampGrid, table3_configs};
use pgraphrag_eval::markdown_value;

use crate::common::lamp::ReadingArg;
use crate::error::{OrUsage, usage};

/// The files written into `--out` (`comparison.md` only with `--grid`).
const FILES: [&str; 4] = [
    "predictions.jsonl",
    "results.md",
    "results.csv",
    "comparison.md",
];

/// Arguments of `pgraphrag lamp baselines`.
#[derive(clap::Args, Debug)]
pub struct BaselinesArgs {
    /// The grid's LaMP questions file (`corpus lamp`'s `train_questions.json`).
    #[arg(long)]
    questions: PathBuf,
    /// Its outputs file (the golds).
    #[arg(long)]
    outputs: PathBuf,
    /// The task: LaMP-3, 4, 5, 6 or 7.
    #[arg(long, value_parser = crate::args::lamp_task)]
    task: LampTask,
    /// Only the first N questions, as `pgraphrag lamp grid --limit N`.
    #[arg(long, value_parser = crate::args::at_least_one)]
    limit: Option<usize>,
    /// Questions of other users (`corpus lamp`'s `dev_questions.json`): the constant answer
    /// (`const_val`) is chosen on their golds, never on the evaluated users'.
    #[arg(long)]
    validation_questions: PathBuf,
    /// The outputs file of --validation-questions.
    #[arg(long)]
    validation_outputs: PathBuf,
    /// How answers are read before scoring (the grid's --reading).
    #[arg(long, value_enum, default_value = "strict")]
    reading: ReadingArg,
    /// k of the first-k-words baseline.
    #[arg(long, default_value_t = 10, value_parser = crate::args::at_least_one)]
    words: usize,
    /// The grid's output folder (`<cell>-seed<s>_outputs.json` per cell and seed): compare the
    /// strongest baseline with its best cell, per question.
    #[arg(long)]
    grid: Option<PathBuf>,
    /// The grid's cells (default: the paper's Table 3).
    #[arg(long, value_delimiter = ',')]
    configs: Option<Vec<String>>,
    /// The grid's seeds (a cell's per-question score is the mean over them, as in its table).
    #[arg(long, value_delimiter = ',', default_value = "0")]
    seeds: Vec<u64>,
    /// Output folder (the table is printed either way).
    #[arg(long)]
    out: Option<PathBuf>,
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn read_questions(path: &Path, task: LampTask) -> anyhow::Result<Vec<LampQuestion>> {
    let q = pgraphrag_data::lamp::read_questions_for(path, task)
        .with_context(|| format!("reading the {task} questions file"))
        .or_usage()?;
    if q.is_empty() {
        return Err(usage(format!(
            "{}: no questions (an empty list)",
            path.display()
        )));
    }
    Ok(q)
}

/// The grid's answers, one run per cell and seed, checked to answer `questions` in order.
fn grid_runs(
    dir: &Path,
    task: LampTask,
    configs: &[LampConfig],
    seeds: &[u64],
    questions: &[LampQuestion],
) -> anyhow::Result<Vec<LampCellRun>> {
    let mut runs = Vec::new();
    for &config in configs {
        for &seed in seeds {
            let path = dir.join(format!("{config}-seed{seed}_outputs.json"));
            // Answers, not golds: any text (read as the grid reads it), but the task's file.
            let (name, answers) = pgraphrag_data::lamp::read_outputs(&path)
                .with_context(|| format!("reading the grid's answers {}", path.display()))
                .or_usage()?;
            if name != task.outputs_name() {
                return Err(usage(format!(
                    "{}: the answers of {name:?}, not of {task} ({:?})",
                    path.display(),
                    task.outputs_name()
                )));
            }
            let same = answers.len() == questions.len()
                && answers.iter().zip(questions).all(|(a, q)| a.id == q.id);
            if !same {
                return Err(usage(format!(
                    "{} answers other questions than the first {} of --questions (check --limit)",
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

/// Runs `pgraphrag lamp baselines`.
pub fn run(a: BaselinesArgs) -> anyhow::Result<()> {
    let configs: Vec<LampConfig> = match &a.configs {
        None => table3_configs(),
        Some(names) => names
            .iter()
            .map(|n| n.parse::<LampConfig>())
            .collect::<Result<_, _>>()
            .or_usage()?,
    };
    if let Some(out) = &a.out {
        let mut inputs = vec![
            ("--questions", a.questions.as_path()),
            ("--outputs", &a.outputs),
            ("--validation-questions", &a.validation_questions),
            ("--validation-outputs", &a.validation_outputs),
        ];
        if let Some(g) = &a.grid {
            inputs.push(("--grid", g));
        }
        crate::output::folder("--out", out, &FILES, &inputs)?;
    }
    let task = a.task;
    let mut questions = read_questions(&a.questions, task)?;
    if let Some(n) = a.limit {
        questions.truncate(n);
    }
    let all_golds = pgraphrag_data::lamp::read_outputs_for(&a.outputs, task)
        .context("reading the outputs file")
        .or_usage()?;
    let golds = lamp_golds(&questions, &all_golds).or_usage()?;
    let validation = read_questions(&a.validation_questions, task)?;
    let validation_golds = pgraphrag_data::lamp::read_outputs_for(&a.validation_outputs, task)
        .context("reading the validation outputs file")
        .or_usage()?;
    let validation_golds =
        lamp_validation_golds(&questions, &validation, &validation_golds).or_usage()?;
    let baselines = lamp_baselines(task, a.words, &validation_golds).or_usage()?;
    let examples = questions
        .iter()
        .map(|q| lamp_example(task, q))
        .collect::<Result<Vec<_>, _>>()
        .or_usage()?;

    let mut grid = LampGrid::new(task, configs);
    grid.reading = a.reading.into();
    let scorer = grid.scorer(&all_golds);
    let kind = match task {
        LampTask::Lamp3 => AnswerKind::Rating,
        _ => AnswerKind::Text,
    };
    let stem = a
        .questions
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let n = questions.len();
    let title = format!("{task} {stem} ({n} questions): trivial baselines");
    let report = run_baselines(title, kind, &examples, &golds, &baselines, &scorer)?;

    let comparison = match &a.grid {
        Some(dir) => {
            let runs = grid_runs(dir, task, &grid.configs, &a.seeds, &questions)?;
            let ids: Vec<String> = questions.iter().map(|q| q.id.clone()).collect();
            let cells: Vec<CellRows> = grid
                .cell_scores(&ids, &runs, &all_golds)?
                .into_iter()
                .map(|c| CellRows {
                    name: c.config.to_string(),
                    scores: c.scores.into_iter().next().unwrap_or_default(),
                })
                .collect();
            let column = report.table.columns[0].clone();
            let c = strongest_vs_best(&report, &column, column == "MAE", &cells)?;
            Some((file_name(dir), c))
        }
        None => None,
    };

    let mut md = String::new();
    if let Some((name, c)) = &comparison {
        md.push_str(&headline(name, c, &a.seeds));
    }
    md.push_str(&report.to_markdown());
    let reading = a
        .reading
        .to_possible_value()
        .map(|v| v.get_name().to_string())
        .unwrap_or_default();
    md.push_str(&format!(
        "\nRows: the first {n} questions of `{}` in file order, as `pgraphrag lamp grid --limit \
         {n}` scores them, golds from `{}`; answers read with `--reading {reading}` and scored \
         as the grid scores its cells. `const_val` is chosen on the golds of the {} questions \
         of `{}` (other users: none of them has an evaluated question).\n",
        file_name(&a.questions),
        file_name(&a.outputs),
        validation.len(),
        file_name(&a.validation_questions),
    ));
    if let Some((name, c)) = &comparison {
        md.push('\n');
        md.push_str(BaselineVsCell::markdown_header());
        md.push_str(&c.to_markdown_row(name));
    }
    if let Some(out) = &a.out {
        std::fs::create_dir_all(out)
            .with_context(|| format!("creating the output folder {}", out.display()))?;
        crate::output::write(&out.join(FILES[0]), report.to_jsonl()?.as_bytes())?;
        crate::output::write(&out.join(FILES[1]), md.as_bytes())?;
        crate::output::write(&out.join(FILES[2]), report.table.to_csv().as_bytes())?;
        if let Some((name, c)) = &comparison {
            let row = format!(
                "{}{}",
                BaselineVsCell::markdown_header(),
                c.to_markdown_row(name)
            );
            crate::output::write(&out.join(FILES[3]), row.as_bytes())?;
        }
        eprintln!("wrote {}", out.display());
    }
    println!("{md}");
    Ok(())
}

/// The first line of `results.md` with `--grid`: the comparison and what it means.
fn headline(grid: &str, c: &BaselineVsCell, seeds: &[u64]) -> String {
    let seeds = match seeds {
        [s] => format!("seed {s}"),
        more => format!(
            "mean over seeds {}",
            more.iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    format!(
        "Against the zero-shot grid `{grid}` ({seeds}): strongest trivial baseline `{}` ({} {}), \
         best cell `{}` ({}); baseline − cell {} [{}, {}] (95% paired bootstrap over {} \
         questions), paired t-test p {}. {}\n\n",
        c.baseline,
        c.column,
        markdown_value(c.baseline_score),
        c.cell,
        markdown_value(c.cell_score),
        markdown_value(c.delta),
        markdown_value(c.interval.0),
        markdown_value(c.interval.1),
        c.n,
        {
            let p = pgraphrag_eval::markdown_p(c.p_value);
            p.strip_prefix('<')
                .map_or_else(|| format!("= {p}"), |rest| format!("< {rest}"))
        },
        c.sentence()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use pgraphrag_core::LampGold;

    #[test]
    fn grid_answers_must_be_for_the_same_questions() {
        let dir = tempfile::tempdir().unwrap();
        let cell = LampConfig {
            k: 0,
            summary: false,
        };
        let qs = [LampQuestion::new("a", "x"), LampQuestion::new("b", "y")];
        let write = |task, ids: &[&str]| {
            let answers: Vec<LampGold> = ids
                .iter()
                .map(|id| LampGold {
                    id: id.to_string(),
                    output: "4".into(),
                })
                .collect();
            let p = dir.path().join("base_k0-seed0_outputs.json");
            pgraphrag_data::lamp::write_outputs(&p, task, &answers).unwrap();
        };
        write(LampTask::Lamp3, &["a", "b"]);
        let runs = grid_runs(dir.path(), LampTask::Lamp3, &[cell], &[0], &qs).unwrap();
        assert_eq!(runs[0].outputs, ["4", "4"]);
        write(LampTask::Lamp3, &["b", "a"]);
        let e = grid_runs(dir.path(), LampTask::Lamp3, &[cell], &[0], &qs).unwrap_err();
        assert!(e.to_string().contains("answers other questions"), "{e}");
        write(LampTask::Lamp4, &["a", "b"]);
        let e = grid_runs(dir.path(), LampTask::Lamp3, &[cell], &[0], &qs).unwrap_err();
        assert!(e.to_string().contains("not of LaMP-3"), "{e}");
        let e = grid_runs(dir.path(), LampTask::Lamp3, &[cell], &[1], &qs).unwrap_err();
        assert!(format!("{e:#}").contains("seed1"), "{e:#}");
    }
}
