//! `pgraphrag multistage build` on a small hand-made corpus: the examples file, the counts
//! table, the seed, and bad input (exit code 2).
use std::path::Path;

use crate::common::{pgraphrag, s};

/// Two authors with 7 mails each (5 targets each) and one with 2 (no target).
fn corpus(path: &Path) {
    let mut lines = String::new();
    for (author, n) in [
        ("kim@example.org", 7),
        ("lee@example.org", 7),
        ("max@example.org", 2),
    ] {
        for i in 0..n {
            let doc = serde_json::json!({
                "author": author,
                "doc_id": format!("{author}/{i}"),
                "time": 1_000_000 + i * 86_400,
                "title": format!("Topic {i}"),
                "text": format!("Mail {i} of {author}. ").repeat(12),
            });
            lines.push_str(&format!("{doc}\n"));
        }
    }
    std::fs::write(path, lines).unwrap();
}

#[test]
fn builds_the_examples_and_prints_the_counts() {
    let d = tempfile::tempdir().unwrap();
    let c = d.path().join("c.jsonl");
    corpus(&c);
    let out = d.path().join("new/out");
    let o = pgraphrag(&["multistage", "build", "--corpus", s(&c), "--out", s(&out)]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        stdout.contains("examples kept 10, skipped 6 (too few earlier documents 6)"),
        "{stdout}"
    );
    assert!(stdout.contains("| all | 2 | 10 | 4.0 | 2–6 |"), "{stdout}");
    let text = std::fs::read_to_string(out.join("examples.jsonl")).unwrap();
    let examples: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(examples.len(), 10);
    let e = &examples[0];
    assert_eq!(e["id"], "kim@example.org/2");
    assert_eq!(e["split"], "train");
    assert_eq!(e["context"].as_array().unwrap().len(), 2);
    assert_eq!(e["context"][0]["doc_id"], "kim@example.org/0");
    let ic = e["immediate_context"].as_str().unwrap();
    assert!(
        ic.starts_with("Topic 2\nMail 2 of kim@example.org."),
        "{ic}"
    );
    assert_eq!(ic.chars().count(), 150);
    // The same seed gives the same file; --quiet prints nothing.
    let again = d.path().join("again");
    let o = pgraphrag(&[
        "multistage",
        "build",
        "--corpus",
        s(&c),
        "--out",
        s(&again),
        "--seed",
        "42",
        "--quiet",
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert!(o.stdout.is_empty());
    assert_eq!(
        std::fs::read_to_string(again.join("examples.jsonl")).unwrap(),
        text
    );
}

#[test]
fn bad_input_is_exit_code_2() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out");
    // No such corpus.
    let o = pgraphrag(&[
        "multistage",
        "build",
        "--corpus",
        "no/such.jsonl",
        "--out",
        s(&out),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("reading the corpus no/such.jsonl"), "{err}");
    // A line that is not a document: the file and the line are named.
    let bad = d.path().join("bad.jsonl");
    std::fs::write(
        &bad,
        "{\"author\":\"a\",\"doc_id\":\"1\",\"time\":0,\"text\":\"x\"}\n{\"author\":\"a\"}\n",
    )
    .unwrap();
    let o = pgraphrag(&["multistage", "build", "--corpus", s(&bad), "--out", s(&out)]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("bad.jsonl: line 2: missing field `doc_id`"),
        "{err}"
    );
    // Two documents with one id.
    let dup = d.path().join("dup.jsonl");
    let line = "{\"author\":\"a\",\"doc_id\":\"same\",\"time\":0,\"text\":\"x\"}\n";
    std::fs::write(&dup, line.repeat(2)).unwrap();
    let o = pgraphrag(&["multistage", "build", "--corpus", s(&dup), "--out", s(&out)]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("doc_id \"same\" appears twice"), "{err}");
    assert!(!out.join("examples.jsonl").exists());
    // A flag value clap rejects.
    let o = pgraphrag(&[
        "multistage",
        "build",
        "--corpus",
        s(&dup),
        "--out",
        s(&out),
        "--seed",
        "x",
    ]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn corpus_convert_reads_pgraphrag_splits() {
    let d = tempfile::tempdir().unwrap();
    let split = d.path().join("x_dev.json");
    let review = |i: usize| {
        format!(
            r#"{{"title": "T{i}", "text": "{}{i}", "rating": 4, "pid": "p{i}"}}"#,
            "good ".repeat(70)
        )
    };
    let reviews: Vec<String> = (0..7).map(review).collect();
    std::fs::write(
        &split,
        format!(r#"[{{"id": "u1", "profile": [{}]}}]"#, reviews.join(",")),
    )
    .unwrap();
    let c = d.path().join("c.jsonl");
    let o = pgraphrag(&[
        "corpus",
        "convert",
        "--source",
        "pgraphrag",
        "--in",
        s(&split),
        "--out",
        s(&c),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("7 documents by 1 authors; kept 7, skipped 0"),
        "{stdout}"
    );
    let first = std::fs::read_to_string(&c).unwrap();
    assert!(
        first.starts_with(r#"{"author":"u1","doc_id":"x_dev/u1-0","time":0,"title":"T0","#),
        "{first}"
    );
    let o = pgraphrag(&[
        "multistage",
        "build",
        "--corpus",
        s(&c),
        "--out",
        s(&d.path().join("m")),
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("| train | 1 | 5 |"));
    // Not a split: exit code 2.
    let o = pgraphrag(&[
        "corpus",
        "convert",
        "--source",
        "pgraphrag",
        "--in",
        s(&c),
        "--out",
        s(&c),
    ]);
    assert_eq!(o.status.code(), Some(2));
}
