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
