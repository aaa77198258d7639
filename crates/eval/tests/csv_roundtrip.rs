//! Every results CSV in `docs/results` reads back and writes out byte-identically.
use std::path::Path;

use pgraphrag_eval::ResultsTable;

#[test]
fn docs_results_csv_round_trip_byte_identical() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/results");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).expect("docs/results exists") {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "csv") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let t = ResultsTable::from_csv("t", &text)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(t.to_csv(), text, "{}", path.display());
        n += 1;
    }
    assert!(n >= 12, "only {n} CSV files in {}", dir.display());
}

/// Every committed results table written by `ResultsTable` (a `.md` beside its `.csv`: the
/// twelve dev tables, cold start, fine-tuning) and every LaMP grid (`results.md` beside
/// `results.csv`) names the same numbers in its Markdown as in its CSV, digit for digit:
/// each Markdown cell is `markdown_value` of the CSV cell, and the CSV cell is `csv_value` of it.
/// The multistage tables are left out: their Markdown shows percentages to two decimals by
/// design, their CSV three.
#[test]
fn docs_results_markdown_matches_csv() {
    use pgraphrag_eval::{csv_value, markdown_value};
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/results");
    let mut dirs = vec![root.clone()];
    let mut files = 0;
    let mut cells = 0;
    while let Some(dir) = dirs.pop() {
        if dir.ends_with("multistage") {
            continue;
        }
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "csv") {
                continue;
            }
            let md_path = path.with_extension("md");
            let md = std::fs::read_to_string(&md_path)
                .unwrap_or_else(|e| panic!("{}: {e}", md_path.display()));
            let csv = std::fs::read_to_string(&path).unwrap();
            let mut lines = csv.lines();
            let header: Vec<&str> = lines.next().unwrap().split(',').collect();
            // The Markdown's first table: its header names the columns.
            let mut md_header: Vec<String> = Vec::new();
            let mut md_rows: Vec<Vec<String>> = Vec::new();
            for l in md.lines() {
                if !l.starts_with('|') {
                    if !md_rows.is_empty() {
                        break;
                    }
                    continue;
                }
                let c: Vec<String> = l
                    .trim_matches('|')
                    .split('|')
                    .map(|c| c.trim().to_string())
                    .collect();
                if md_header.is_empty() {
                    md_header = c;
                } else if !c[0].starts_with("---") {
                    md_rows.push(c);
                }
            }
            let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
            assert_eq!(md_rows.len(), rows.len(), "{}", md_path.display());
            for (m, r) in md_rows.iter().zip(&rows) {
                assert_eq!(m[0], r[0], "{}", md_path.display());
                for (j, cell) in r.iter().enumerate().skip(1) {
                    let col = md_header
                        .iter()
                        .position(|h| h == header[j])
                        .unwrap_or_else(|| {
                            panic!("{}: no column {}", md_path.display(), header[j])
                        });
                    // A LaMP cell is `mean [lo, hi]`: the mean is the CSV's number.
                    let shown = m[col].split_whitespace().next().unwrap_or("");
                    let v: f64 = cell.parse().unwrap();
                    let at = format!("{} {} {}", path.display(), r[0], header[j]);
                    assert_eq!(
                        shown,
                        markdown_value(v),
                        "{at}: Markdown {shown}, CSV {cell}"
                    );
                    assert_eq!(*cell, csv_value(v), "{at}");
                    cells += 1;
                }
            }
            files += 1;
        }
    }
    assert!(files >= 12 && cells > 100, "{files} tables, {cells} cells");
}
