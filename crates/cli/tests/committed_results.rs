//! Every committed table whose raw inputs are committed or public is recomputed by this build
//! and must equal the committed bytes: the trivial baselines of `docs/results/baselines/`
//! (tables and per-user predictions, from the PGraphRAG dev splits, as
//! `scripts/run_baselines.sh` makes them). A difference fails the test command, naming the
//! file: either a change of the code moved a committed number, or the files were edited by
//! hand.
use std::path::Path;
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
