//! The generation input (Li et al. 2023, l.140, 148) as an exact snapshot, the author-distinction
//! pairs (l.146–150, 182: 1:1, seeded, validation and test authors excluded) and the training
//! records written as JSON lines.
use std::collections::HashSet;

use pgraphrag_stages::multistage::{
    AuthorDoc, InputFormat, PaperFormat, RecordTask, Sections, TrainingInputs, TrainingRecord,
    author_pairs, author_record, training_records, write_jsonl,
};

#[test]
fn generation_input_snapshot() {
    let all = Sections {
        passage_start: Some("Re: offsite Hi all, the offsite is moving to"),
        summary: Some("The user plans team events and books venues early."),
        important_words: Some("offsite, venue, agenda"),
        past_passages: Some("Hi all, the venue is booked.\nAgenda attached."),
    };
    assert_eq!(
        PaperFormat.generation(&all),
        "Finish the passage in the user voice

passage start: Re: offsite Hi all, the offsite is moving to

summary: The user plans team events and books venues early.

important words: offsite, venue, agenda

past passages: Hi all, the venue is booked.
Agenda attached."
    );
    // A configuration without a stage leaves its section out; the order never changes.
    let rank_only = Sections {
        summary: None,
        important_words: None,
        ..all
    };
    assert_eq!(
        PaperFormat.generation(&rank_only),
        "Finish the passage in the user voice\n\npassage start: Re: offsite Hi all, the offsite is moving to\n\npast passages: Hi all, the venue is booked.\nAgenda attached."
    );
    assert_eq!(
        PaperFormat.generation(&Sections::default()),
        "Finish the passage in the user voice"
    );
    let empty_summary = Sections {
        summary: Some(""),
        ..Sections::default()
    };
    assert_eq!(
        PaperFormat.generation(&empty_summary),
        "Finish the passage in the user voice\n\nsummary: "
    );
    assert_eq!(
        PaperFormat.author("First.", "Second."),
        "Predict whether two passages are from the same author\n\npassage 1: First.\n\npassage 2: Second."
    );
}

/// Train authors ann (3 docs), bob (2), cy (1); validation author val (2), test author tst (2).
fn docs() -> Vec<AuthorDoc<'static>> {
    let d = |author, doc_id, text| AuthorDoc {
        author,
        doc_id,
        text,
    };
    vec![
        d("ann", "a1", "Ann one."),
        d("val", "v1", "Val one."),
        d("bob", "b1", "Bob one."),
        d("ann", "a2", "Ann two."),
        d("tst", "t1", "Test one."),
        d("cy", "c1", "Cy one."),
        d("bob", "b2", "Bob two."),
        d("val", "v2", "Val two."),
        d("ann", "a3", "Ann three."),
        d("tst", "t2", "Test two."),
    ]
}

#[test]
fn author_pairs_are_balanced_exclude_splits_and_are_seeded() {
    let docs = docs();
    let excluded = ["val", "tst"];
    for count in [0, 1, 2, 7, 100, 1001] {
        let p = author_pairs(&docs, &excluded, count, 42).unwrap();
        assert_eq!(p.pairs.len(), count);
        let positives = p.pairs.iter().filter(|x| x.same_author).count();
        assert_eq!(positives, count - count / 2, "1:1 (the odd one positive)");
        assert_eq!(
            (p.excluded_docs, p.eligible_docs, p.eligible_authors),
            (4, 6, 3)
        );
        for x in &p.pairs {
            let (a, b) = (&docs[x.first], &docs[x.second]);
            assert!(!excluded.contains(&a.author) && !excluded.contains(&b.author));
            assert_ne!(x.first, x.second);
            assert_eq!(a.author == b.author, x.same_author, "{a:?} {b:?}");
        }
        assert_eq!(
            p,
            author_pairs(&docs, &excluded, count, 42).unwrap(),
            "deterministic"
        );
    }
    let p = author_pairs(&docs, &excluded, 1000, 42).unwrap();
    // cy has one document: never the anchor of a positive pair.
    assert!(
        p.pairs
            .iter()
            .filter(|x| x.same_author)
            .all(|x| docs[x.first].author != "cy")
    );
    // Every eligible document is drawn somewhere in 1,000 pairs.
    let seen: HashSet<usize> = p.pairs.iter().flat_map(|x| [x.first, x.second]).collect();
    assert_eq!(seen.len(), 6);
    // Labels are shuffled, not alternating, and another seed gives other pairs.
    let labels: Vec<bool> = p.pairs.iter().map(|x| x.same_author).collect();
    assert!(labels.windows(2).any(|w| w[0] == w[1]));
    assert_ne!(p, author_pairs(&docs, &excluded, 1000, 43).unwrap());
}

#[test]
fn author_pairs_that_cannot_be_drawn_are_errors() {
    let docs = docs();
    // Only cy (one document) and the excluded authors: no same-author pair exists.
    let only_cy: Vec<AuthorDoc> = docs
        .iter()
        .copied()
        .filter(|d| d.author == "cy" || d.author == "val")
        .collect();
    let e = author_pairs(&only_cy, &["val"], 2, 1).unwrap_err();
    assert!(
        e.to_string()
            .contains("no eligible author has two documents"),
        "{e}"
    );
    // Only ann: no different-author pair exists (but one positive pair is fine).
    let only_ann: Vec<AuthorDoc> = docs.iter().copied().filter(|d| d.author == "ann").collect();
    let e = author_pairs(&only_ann, &[], 2, 1).unwrap_err();
    assert!(
        e.to_string().contains("fewer than two eligible authors"),
        "{e}"
    );
    assert_eq!(author_pairs(&only_ann, &[], 1, 1).unwrap().pairs.len(), 1);
}

#[test]
fn training_records_round_trip_as_jsonl() {
    let x = TrainingInputs {
        id: "mail/42",
        immediate_context: "Re: offsite Hi all,",
        ranked: "Hi all, the venue is booked.",
        target: "Re: offsite Hi all, the offsite moves to May.",
        summary_label: Some("Hi all, the venue is booked."),
        synthesis_label: Some("venue"),
        generation: Some(Sections {
            passage_start: Some("Re: offsite Hi all,"),
            summary: Some("Books venues."),
            important_words: Some("venue"),
            past_passages: Some("Hi all, the venue is booked."),
        }),
    };
    let mut records = training_records(&x, &PaperFormat);
    let tasks: Vec<RecordTask> = records.iter().map(|r| r.task).collect();
    assert_eq!(
        tasks,
        [
            RecordTask::Summary,
            RecordTask::Synthesis,
            RecordTask::Generation
        ]
    );
    assert!(
        records[0]
            .prompt
            .starts_with(pgraphrag_stages::multistage::SUMMARY_DEPENDENT)
    );
    assert!(
        records[1]
            .prompt
            .starts_with(pgraphrag_stages::multistage::SYNTHESIS_DEPENDENT)
    );
    for r in &records[..2] {
        assert!(r.prompt.ends_with(
            "\n\npassage start: Re: offsite Hi all,\n\npast passages: Hi all, the venue is booked."
        ));
    }
    assert_eq!(records[1].target, "venue");
    assert!(
        records[2]
            .prompt
            .starts_with("Finish the passage in the user voice\n\n")
    );
    assert_eq!(records[2].target, x.target);
    let docs = docs();
    for pair in author_pairs(&docs, &["val", "tst"], 4, 7).unwrap().pairs {
        records.push(author_record(&pair, &docs, &PaperFormat).unwrap());
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("train.jsonl");
    write_jsonl(&path, &records).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let back: Vec<TrainingRecord> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(back, records);
    let targets: Vec<&str> = back[3..].iter().map(|r| r.target.as_str()).collect();
    assert_eq!(targets.iter().filter(|t| **t == "true").count(), 2);
    assert!(targets.iter().all(|t| *t == "true" || *t == "false"));
    assert!(
        text.lines().all(|l| l.starts_with("{\"id\":")),
        "one compact object per line"
    );
    // A missing folder is an error naming the file.
    let bad = dir.path().join("no/such/dir/train.jsonl");
    let e = write_jsonl(&bad, &records).unwrap_err();
    let chain = pgraphrag_core::error_chain(&e);
    assert!(chain.contains("train.jsonl"), "{chain}");
}
