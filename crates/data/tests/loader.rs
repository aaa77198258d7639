//! Loader robustness (fuzz-style proptests over random and mutated bytes) and the real dev
//! splits (which must be present: set PGRAPHRAG_DATA).

use std::path::PathBuf;

use pgraphrag_data::{
    DATASETS, Error, IdPolicy, ItemId, load_split, parse_rankings, parse_split,
    pgraphrag_split_path,
};
use pgraphrag_graph::{GraphOptions, Scope};
use proptest::prelude::*;

const VALID: &str = r#"[{"id":"u1","profile":[{"title":"T","text":"X","rating":5,"pid":"p1"},{"title":"","text":"Y","rating":4.0,"pid":7}]},
{"id":"u2","profile":[{"title":"A","text":"B","rating":1,"productAsin":"p1"}]}]"#;

/// The shared data folder: `$PGRAPHRAG_DATA`, else `../shared/data` beside the checkout.
fn data_dir() -> PathBuf {
    match std::env::var_os("PGRAPHRAG_DATA") {
        Some(v) if !v.is_empty() => PathBuf::from(v),
        _ => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data"),
    }
}

fn split_or_fail(ds: &str) -> pgraphrag_data::Split {
    let p = pgraphrag_split_path(&data_dir(), ds, "dev");
    match load_split(&p) {
        Ok(s) => s,
        Err(e) => panic!(
            "the PGraphRAG dev split {ds} is required by this test and could not be loaded from {} \
             (data_dir = {}): {e}. Set PGRAPHRAG_DATA to the shared data folder.",
            p.display(),
            data_dir().display()
        ),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Arbitrary bytes never panic; they either parse or give a typed error naming the file.
    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        match parse_split(&bytes, "fuzz.json") {
            Ok(s) => prop_assert!(s.users.iter().all(|u| !u.profile.is_empty())),
            Err(e) => prop_assert!(e.to_string().contains("fuzz.json")),
        }
        if let Err(e) = parse_rankings(&bytes, "fuzz.json") {
            prop_assert!(e.to_string().contains("fuzz.json"));
        }
    }

    /// A valid file with one byte replaced, inserted or removed never panics, and a schema
    /// error names a record when the top level is still a list.
    #[test]
    fn mutated_valid_file_never_panics(pos in 0usize..VALID.len(), byte in any::<u8>(), op in 0u8..3) {
        let mut b = VALID.as_bytes().to_vec();
        match op {
            0 => b[pos] = byte,
            1 => b.insert(pos, byte),
            _ => { b.remove(pos); }
        }
        match parse_split(&b, "mut.json") {
            Ok(s) => {
                let g = s.to_graph(GraphOptions::notebook(), IdPolicy::KeepJsonType);
                prop_assert_eq!(g.num_reviews() + g.num_overwritten(), s.num_reviews());
            }
            Err(Error::Schema { record, path, .. }) => {
                prop_assert_eq!(path.to_str(), Some("mut.json"));
                let _ = record;
            }
            Err(Error::Json { line, .. }) => prop_assert!(line >= 1),
            Err(e) => prop_assert!(e.to_string().contains("mut.json")),
        }
    }
}

#[test]
fn valid_sample_parses_with_json_typed_ids() {
    let s = parse_split(VALID.as_bytes(), "v.json").unwrap();
    assert_eq!(s.users[0].profile[1].pid, ItemId::Int(7));
    assert_eq!(s.users[1].profile[0].pid, ItemId::from("p1"));
    let g = s.to_graph(GraphOptions::default(), IdPolicy::KeepJsonType);
    let n = g.profile("u1", &ItemId::from("p1"), Scope::Neighbor);
    assert_eq!(n.len(), 1);
    assert_eq!(g.review(n[0]).entry.id, 2); // doc_id counts every review in file order
}

#[test]
fn missing_file_says_what_to_do() {
    let e = load_split(std::path::Path::new("/nonexistent/x.json"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("/nonexistent/x.json") && e.contains("check the path"),
        "{e}"
    );
}

/// Counts measured on the released dev splits (also in docs/graph.md): reviews, reviews left
/// after the notebook's (user, product) overwrite, distinct items with JSON-typed and with
/// string ids.
#[test]
fn dev_split_counts() {
    let want = [
        ("amazon", 2706, 2680, 542, 542),
        ("b2w", 2666, 2634, 370, 355),
        ("gap", 4356, 3858, 200, 200),
        ("hotel", 2875, 2826, 479, 479),
    ];
    assert_eq!(DATASETS.len(), want.len());
    for (ds, reviews, kept, items_typed, items_str) in want {
        let s = split_or_fail(ds);
        assert_eq!(s.users.len(), 2500, "{ds}");
        assert_eq!(s.num_reviews(), reviews, "{ds}");
        let g = s.to_graph(GraphOptions::notebook(), IdPolicy::KeepJsonType);
        assert_eq!(g.num_reviews(), kept, "{ds}");
        assert_eq!(g.num_overwritten(), reviews - kept, "{ds}");
        assert_eq!(g.num_items(), items_typed, "{ds}");
        assert_eq!(g.num_users(), 2500, "{ds}");
        let gn = s.to_graph(GraphOptions::default(), IdPolicy::Normalize);
        assert_eq!(gn.num_reviews(), reviews, "{ds}");
        assert_eq!(gn.num_items(), items_str, "{ds}");
        // Every target has at least one neighbour (anchors §1.2).
        for u in &s.users {
            let t = u.target().unwrap();
            assert!(
                !g.profile(&u.id, &t.pid, Scope::Neighbor).is_empty(),
                "{ds} {}",
                u.id
            );
        }
    }
}
