//! The papers' pipelines as library values (`pgraphrag-runs`): each a serde spec whose `run`
//! does what the matching `pgraphrag` command does, so a program chains runs without the binary.
//! Here three of them on a real PGraphRAG split: the reviews converted to authored documents
//! (`corpus convert`), the multistage writing paper's examples built from them under its rules
//! (`multistage build`), and the multistage grid's answers without a model, scored as the grid
//! scores its cells (`multistage baselines`).
//!
//! ```sh
//! cargo run -p pgraphrag-examples --example paper_runs -- [SPLIT.json]
//! ```
//! The split defaults to `$PGRAPHRAG_DATA/pgraphrag/gap_dev.json` (`PGRAPHRAG_DATA` defaults to
//! `../shared/data`); its one reviewer with enough reviews gives 23 training examples.
use std::path::PathBuf;

use pgraphrag_corpora::lamp::SplitName;
use pgraphrag_data::pgraphrag_split_path;
use pgraphrag_runs::corpus::{ConvertSpec, ExamplesSpec, Source};
use pgraphrag_runs::multistage::BaselinesSpec;

fn main() -> anyhow::Result<()> {
    let data = std::env::var_os("PGRAPHRAG_DATA").map_or("../shared/data".into(), PathBuf::from);
    let split = std::env::args_os()
        .nth(1)
        .map_or_else(|| pgraphrag_split_path(&data, "gap", "dev"), PathBuf::from);
    let dir = std::env::temp_dir().join(format!("pgraphrag-paper-runs-{}", std::process::id()));
    let result = runs(split, &dir);
    // The folder is scratch: removed whether the runs worked or not.
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn runs(split: PathBuf, dir: &std::path::Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)?;
    let convert = ConvertSpec {
        source: Source::Pgraphrag,
        input: split,
        out: dir.join("reviews.jsonl"),
    };
    let converted = convert.run()?;
    println!(
        "{} documents by {} authors",
        converted.docs, converted.authors
    );
    let (built, examples) = ExamplesSpec::paper(&convert.out, dir.join("reviews")).run()?;
    println!("{} multistage examples", built.examples.len());
    let spec = BaselinesSpec {
        examples,
        split: SplitName::Train,
        limit: None,
        grid: None,
    };
    // A spec is a value: written, read back, run.
    let text = serde_json::to_string(&spec)?;
    let spec: BaselinesSpec = serde_json::from_str(&text)?;
    println!("{}", spec.run()?.markdown);
    Ok(())
}
