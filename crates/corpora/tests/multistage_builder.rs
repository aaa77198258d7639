//! The multistage examples builder: its invariants on generated corpora (no target in its own
//! context, no context document at or after its target's time, no author in two splits, the
//! per-author caps, targets over 300 characters with at least 2 earlier documents, identical
//! documents removed, every document accounted for, the same output for the same seed, the same
//! selection as LaMP-6), hand-made corpora for each rule and each bad input, and the counts on
//! the real data when it is there.
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::PathBuf;

use pgraphrag_corpora::lamp::{self, BuildOptions, SplitName};
use pgraphrag_corpora::multistage::{self, Example, MultistageBuild, build_examples};
use pgraphrag_corpora::{AuthoredDoc, Error, MailOptions, Skip};
use proptest::prelude::*;

/// Bodies around the 300-character rule (`é` is 2 bytes and 1 character), from a small pool
/// (identical documents), some blank (empty documents), some with trailing space (identical
/// after trimming); one author writes about half (the 50 cap); few distinct times (ties).
/// The oracle of a document's text (paper l.68: title and body concatenated; the stage joins
/// them with a newline, a blank title gives the body alone), written independently of the
/// stage the builder calls.
fn document_text(title: Option<&str>, text: &str) -> String {
    match title.map(str::trim).filter(|t| !t.is_empty()) {
        Some(t) => format!("{t}\n{text}"),
        None => text.to_string(),
    }
}

fn docs() -> impl Strategy<Value = Vec<AuthoredDoc>> {
    let body = prop_oneof![
        1 => Just("  ".to_string()),
        12 => (0..40usize, prop::sample::select(vec![50usize, 296, 297, 298, 400]), any::<bool>())
            .prop_map(|(k, n, pad)| format!("w{k} {}{}", "é".repeat(n), if pad { " " } else { "" })),
    ];
    let title = prop_oneof![
        6 => (0..1000u32).prop_map(|t| Some(format!("Subject {t}"))),
        1 => Just(None),
        1 => Just(Some(" ".to_string())),
    ];
    let author = prop_oneof![1 => Just(0usize), 1 => 1..6usize];
    proptest::collection::vec((author, 0..60i64, body, title), 0..300).prop_map(|rows| {
        rows.into_iter()
            .enumerate()
            .map(|(i, (a, t, text, title))| AuthoredDoc {
                author: format!("author{a}"),
                doc_id: format!("d{i:03}"),
                time: t * 3_600,
                title,
                text,
            })
            .collect()
    })
}

/// The documents the rules keep for an author, in time order: non-blank, the first of each
/// trimmed text (an oracle written apart from the engine).
fn kept_docs<'a>(docs: &'a [AuthoredDoc], author: &str) -> Vec<&'a AuthoredDoc> {
    let mut mine: Vec<&AuthoredDoc> = docs
        .iter()
        .filter(|d| d.author == author && !d.text.trim().is_empty())
        .collect();
    mine.sort_by(|a, b| (a.time, &a.doc_id).cmp(&(b.time, &b.doc_id)));
    let mut seen = HashSet::new();
    mine.retain(|d| seen.insert(d.text.trim().to_string()));
    mine
}

fn check(docs: &[AuthoredDoc], b: &MultistageBuild) -> Result<(), TestCaseError> {
    let by_id: HashMap<&str, &AuthoredDoc> = docs.iter().map(|d| (d.doc_id.as_str(), d)).collect();
    let mut part_of: HashMap<&str, SplitName> = HashMap::new();
    let mut per_author: HashMap<&str, Vec<&Example>> = HashMap::new();
    let mut last_part = SplitName::Train;
    for e in &b.examples {
        prop_assert!(e.split >= last_part, "examples not in split order");
        last_part = e.split;
        prop_assert_eq!(
            *part_of.entry(&e.author).or_insert(e.split),
            e.split,
            "author in two splits"
        );
        per_author.entry(&e.author).or_default().push(e);
        let d = by_id[e.id.as_str()];
        prop_assert_eq!(&d.author, &e.author);
        prop_assert_eq!(d.time, e.time);
        prop_assert_eq!(&e.target, &d.text);
        prop_assert!(
            e.target.chars().count() > 300,
            "target of 300 characters or fewer"
        );
        prop_assert!(e.context.len() >= 2, "fewer than 2 earlier documents");
        let full = document_text(d.title.as_deref(), &d.text);
        let want: String = full.chars().take(150).collect();
        prop_assert_eq!(&e.immediate_context, &want);
        // The context: exactly the author's kept documents strictly earlier, oldest first.
        let earlier: Vec<&str> = kept_docs(docs, &e.author)
            .into_iter()
            .filter(|c| c.time < e.time)
            .map(|c| c.doc_id.as_str())
            .collect();
        let got: Vec<&str> = e.context.iter().map(|c| c.doc_id.as_str()).collect();
        prop_assert_eq!(got, earlier);
        for c in &e.context {
            prop_assert!(c.doc_id != e.id, "target in its own context");
            prop_assert!(
                c.time < e.time,
                "context document not earlier than its target"
            );
            let cd = by_id[c.doc_id.as_str()];
            prop_assert_eq!(&cd.author, &e.author);
            prop_assert_eq!(c.time, cd.time);
            prop_assert_eq!(&c.text, &document_text(cd.title.as_deref(), &cd.text));
        }
    }
    for (author, es) in &per_author {
        prop_assert!(
            (5..=50).contains(&es.len()),
            "{author}: {} targets",
            es.len()
        );
        let mut ids = BTreeSet::new();
        let mut texts = HashSet::new();
        for e in es {
            ids.insert(e.id.as_str());
            ids.extend(e.context.iter().map(|c| c.doc_id.as_str()));
        }
        for id in ids {
            prop_assert!(
                texts.insert(by_id[id].text.trim()),
                "{author}: identical documents kept"
            );
        }
        let times: Vec<(i64, &str)> = es.iter().map(|e| (e.time, e.id.as_str())).collect();
        prop_assert!(
            times.windows(2).all(|w| w[0] < w[1]),
            "targets not in time order"
        );
    }
    prop_assert_eq!(b.report.kept, b.examples.len());
    prop_assert_eq!(
        b.report.kept + b.report.skipped_total(),
        docs.len(),
        "a document not accounted for"
    );
    Ok(())
}

proptest! {
    #[test]
    fn examples_keep_the_papers_invariants(docs in docs(), seed in any::<u64>()) {
        let opts = BuildOptions { seed, ..BuildOptions::multistage() };
        let b = build_examples(&docs, &opts).unwrap();
        check(&docs, &b)?;
        prop_assert_eq!(&b, &build_examples(&docs, &opts).unwrap(), "not deterministic");
    }

    #[test]
    fn the_selection_is_lamp6s(docs in docs(), seed in any::<u64>()) {
        // With every document titled and non-blank, LaMP-6 and the examples see the same
        // documents: the same targets, profiles and splits (one engine).
        let docs: Vec<AuthoredDoc> = docs
            .into_iter()
            .filter(|d| !d.text.trim().is_empty())
            .map(|d| AuthoredDoc { title: Some(format!("T {}", d.doc_id)), ..d })
            .collect();
        let opts = BuildOptions { seed, ..BuildOptions::multistage() };
        let b = build_examples(&docs, &opts).unwrap();
        let l = lamp::lamp6(&docs, &opts).unwrap();
        let mut from_lamp = Vec::new();
        for part in SplitName::ALL {
            for q in &l.set(part).questions {
                let profile: Vec<String> = q.profile.iter().map(|p| p.id.clone()).collect();
                from_lamp.push((q.id.clone(), part, profile));
            }
        }
        let from_examples: Vec<(String, SplitName, Vec<String>)> = b
            .examples
            .iter()
            .map(|e| (e.id.clone(), e.split, e.context.iter().map(|c| c.doc_id.clone()).collect()))
            .collect();
        prop_assert_eq!(from_examples, from_lamp);
        prop_assert_eq!(&b.report, &l.report);
    }

    #[test]
    fn examples_files_round_trip(docs in docs()) {
        let b = build_examples(&docs, &BuildOptions::multistage()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let p = b.write(dir.path()).unwrap();
        if b.examples.is_empty() {
            // An examples file without examples is refused as bad input.
            let e = multistage::read_examples(&p).unwrap_err();
            prop_assert!(matches!(e, pgraphrag_corpora::Error::Empty { .. }), "{e}");
        } else {
            prop_assert_eq!(multistage::read_examples(&p).unwrap(), b.examples);
        }
    }
}

fn doc(author: &str, i: i64, time: i64, text: &str) -> AuthoredDoc {
    AuthoredDoc {
        author: author.into(),
        doc_id: format!("{author}/{i}"),
        time,
        title: Some(format!("Title {i}")),
        text: text.into(),
    }
}

fn long(i: i64) -> String {
    format!("{i} ") + &"word ".repeat(70)
}

#[test]
fn a_hand_made_corpus_under_each_rule() {
    let mut docs: Vec<AuthoredDoc> = (0..8).map(|i| doc("kim", i, i * 10, &long(i))).collect();
    docs.push(doc("kim", 8, 80, &"x".repeat(300))); // exactly 300: not over 300, still context
    docs.push(doc("kim", 9, 90, &format!("{}\n", long(3)))); // d3 again (trailing newline)
    docs.push(doc("kim", 10, 100, " \n ")); // empty
    docs.push(doc("kim", 11, 100, &long(11))); // same time as d12: neither is the other's context
    docs.push(doc("kim", 12, 100, &long(12)));
    docs.push(doc("solo", 0, 5, &long(0))); // an author with no earlier documents
    for i in 0..6 {
        // 4 targets only: left out
        docs.push(doc("few", i, i, &long(i)));
    }
    let b = build_examples(&docs, &BuildOptions::multistage()).unwrap();
    let ids: Vec<&str> = b.examples.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "kim/2", "kim/3", "kim/4", "kim/5", "kim/6", "kim/7", "kim/11", "kim/12"
        ]
    );
    let ctx = |id: &str| -> Vec<String> {
        let e = b.examples.iter().find(|e| e.id == id).unwrap();
        e.context.iter().map(|c| c.doc_id.clone()).collect()
    };
    assert_eq!(ctx("kim/2"), ["kim/0", "kim/1"]);
    let before_100: Vec<String> = (0..9).map(|i| format!("kim/{i}")).collect();
    assert_eq!(ctx("kim/11"), before_100);
    assert_eq!(ctx("kim/12"), before_100);
    let r = &b.report;
    assert_eq!(r.count(Skip::EmptyBody), 1);
    assert_eq!(r.count(Skip::Duplicate), 1);
    assert_eq!(r.count(Skip::TooShort), 1);
    assert_eq!(r.count(Skip::TooFewEarlier), 2 + 1 + 2); // kim/0-1, solo/0, few/0-1
    assert_eq!(r.count(Skip::AuthorTooFewTargets), 4);
    assert_eq!(r.kept + r.skipped_total(), docs.len());
    let e = &b.examples[0];
    assert!(e.immediate_context.starts_with("Title 2\n2 word word"));
    assert_eq!(e.target, long(2));
    assert!(
        b.stats_table().contains("| train | 1 | 8 |"),
        "{}",
        b.stats_table()
    );
}

#[test]
fn at_most_50_targets_per_author_drawn_by_the_seed() {
    let docs: Vec<AuthoredDoc> = (0..62).map(|i| doc("busy", i, i, &long(i))).collect();
    let build = |seed| {
        build_examples(
            &docs,
            &BuildOptions {
                seed,
                ..BuildOptions::multistage()
            },
        )
        .unwrap()
    };
    let b = build(42);
    assert_eq!(b.examples.len(), 50);
    assert_eq!(b.report.count(Skip::OverCap), 10);
    assert!(b.examples.windows(2).all(|w| w[0].time < w[1].time));
    // Every earlier document is context, sampled or not: the cap chooses targets only.
    assert!(
        b.examples
            .iter()
            .all(|e| e.context.len() == e.time as usize)
    );
    assert_eq!(b, build(42));
    assert_ne!(b.examples, build(43).examples);
}

#[test]
fn no_author_is_in_two_splits_and_the_split_is_85_5_10() {
    let mut docs = Vec::new();
    for a in 0..40 {
        for i in 0..7 {
            docs.push(doc(&format!("a{a:02}"), i, i, &long(i)));
        }
    }
    let b = build_examples(&docs, &BuildOptions::multistage()).unwrap();
    let users = |p| b.stats(Some(p)).users;
    assert_eq!(
        (
            users(SplitName::Train),
            users(SplitName::Dev),
            users(SplitName::Test)
        ),
        (34, 2, 4)
    );
    let parts = lamp::split_users(
        &(0..40).map(|a| format!("a{a:02}")).collect::<Vec<_>>(),
        Default::default(),
        42,
    );
    assert!(b.examples.iter().all(|e| parts[&e.author] == e.split));
}

#[test]
fn the_jsonl_keys_are_in_the_documented_order() {
    let docs: Vec<AuthoredDoc> = (0..7).map(|i| doc("kim", i, i, &long(i))).collect();
    let dir = tempfile::tempdir().unwrap();
    let p = build_examples(&docs, &BuildOptions::multistage())
        .unwrap()
        .write(dir.path())
        .unwrap();
    let text = std::fs::read_to_string(p).unwrap();
    let first = text.lines().next().unwrap();
    let keys = [
        "\"id\":",
        "\"author\":",
        "\"split\":\"train\"",
        "\"time\":",
        "\"immediate_context\":",
        "\"target\":",
        "\"context\":[{\"doc_id\":\"kim/0\",\"time\":0,\"text\":",
    ];
    let pos: Vec<usize> = keys
        .iter()
        .map(|k| first.find(k).unwrap_or_else(|| panic!("{k} in {first}")))
        .collect();
    assert!(pos.windows(2).all(|w| w[0] < w[1]), "{first}");
    assert_eq!(text.lines().count(), 5);
}

#[test]
fn bad_input_is_a_typed_error_or_a_counted_skip() {
    // Duplicate ids: an error naming the id.
    let d = doc("kim", 1, 0, &long(1));
    let e = build_examples(&[d.clone(), d], &BuildOptions::multistage()).unwrap_err();
    assert!(
        matches!(&e, Error::DuplicateDocId { doc_id } if doc_id == "kim/1"),
        "{e}"
    );
    // Unusable options.
    let opts = BuildOptions {
        max_targets_per_author: Some(0),
        ..BuildOptions::multistage()
    };
    assert!(matches!(build_examples(&[], &opts), Err(Error::Options(_))));
    // Nothing at all: an empty build.
    assert_eq!(
        build_examples(&[], &BuildOptions::multistage()).unwrap(),
        MultistageBuild::default()
    );
    // A corpus line with bytes that are not UTF-8: an error naming the file and the line.
    let mut bytes = b"{\"author\":\"a\",\"doc_id\":\"1\",\"time\":5,\"text\":\"hi\"}\n".to_vec();
    bytes.extend_from_slice(b"{\"author\":\"a\",\"doc_id\":\"2\",\"time\":6,\"text\":\"h\xff\"}\n");
    let e = pgraphrag_corpora::parse_corpus(&bytes[..], "c.jsonl").unwrap_err();
    assert!(matches!(&e, Error::CorpusLine { line: 2, .. }), "{e}");
    assert!(
        e.to_string()
            .starts_with("c.jsonl: line 2: cannot read the line"),
        "{e}"
    );
    // A mail whose declared charset does not decode: a counted skip of the converter.
    let mut raw = b"From: Kim <kim@example.org>\nDate: 1 Aug 2002 10:00:00 +0000\nSubject: Hi\n\
                    Content-Type: text/plain; charset=utf-8\n\nbad "
        .to_vec();
    raw.extend_from_slice(&[0xff, 0xfe, b'\n']);
    let skip = pgraphrag_corpora::parse_mail(&raw, "m/1", &MailOptions::default()).unwrap_err();
    assert_eq!(skip, Skip::Undecodable);
    // An examples line that is no example: an error naming the file, the line and the field.
    let e = multistage::parse_examples(&b"\n{\"id\":\"x\",\"author\":\"a\"}\n"[..], "e.jsonl")
        .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("e.jsonl: line 2: not an example: missing field `split`"),
        "{e}"
    );
}

#[test]
fn pgraphrag_reviews_use_the_profile_order_as_time() {
    let mut profile = Vec::new();
    for i in 0..8 {
        profile.push(format!(
            r#"{{"title": "T{i}", "text": "{} {i}", "rating": 4, "pid": "p{i}"}}"#,
            "good ".repeat(70)
        ));
    }
    let json = format!(
        r#"[{{"id": "u1", "profile": [{}]}}, {{"id": "u1", "profile": [{}]}}]"#,
        profile.join(","),
        profile[0]
    );
    let split = pgraphrag_data::parse_split(json.as_bytes(), "x_dev.json").unwrap();
    let c = pgraphrag_corpora::convert_pgraphrag_split(&split, "x_dev");
    assert_eq!(c.report.count(Skip::DuplicateUser), 1);
    assert_eq!(
        c.docs.iter().map(|d| d.time).collect::<Vec<_>>(),
        (0..8).collect::<Vec<i64>>()
    );
    let b = build_examples(&c.docs, &BuildOptions::multistage()).unwrap();
    assert_eq!(b.examples.len(), 6);
    assert_eq!(b.examples[0].id, "x_dev/u1-2");
    assert_eq!(
        b.examples[0].context[1].text,
        format!("T1\n{} 1", "good ".repeat(70))
    );
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The PGraphRAG dev splits (`../shared/data/pgraphrag` or `$PGRAPHRAG_DATA/pgraphrag`): almost
/// no user has 7 reviews, so few qualify (docs/multistage.md); skipped when absent.
#[test]
fn real_pgraphrag_splits() {
    let data = std::env::var_os("PGRAPHRAG_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("../shared/data"));
    for ds in pgraphrag_data::DATASETS {
        let path = pgraphrag_data::pgraphrag_split_path(&data, ds, "dev");
        if !path.is_file() {
            eprintln!("skipped {ds}: no split at {}", path.display());
            continue;
        }
        let c = pgraphrag_corpora::convert_pgraphrag_split_file(&path).unwrap();
        let b = build_examples(&c.docs, &BuildOptions::multistage()).unwrap();
        check(&c.docs, &b).unwrap();
        eprintln!(
            "{ds}_dev: {}; examples {}\n{}",
            c.report,
            b.report,
            b.stats_table()
        );
        assert!(b.stats(None).users <= 5, "{ds}: {}", b.stats_table());
    }
}

/// The SpamAssassin ham of `scripts/fetch-corpora.sh` (`models/corpora` or
/// `$PGRAPHRAG_CORPORA`); skipped when absent.
#[test]
fn real_spam_assassin_mail() {
    let dir = std::env::var_os("PGRAPHRAG_CORPORA")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("models/corpora"))
        .join("spam-assassin");
    if !dir.is_dir() {
        let msg = format!(
            "no corpus at {} (run scripts/fetch-corpora.sh)",
            dir.display()
        );
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{msg}");
        eprintln!("skipped: {msg}");
        return;
    }
    let c = pgraphrag_corpora::convert_spam_assassin(&dir, &MailOptions::default()).unwrap();
    let b = build_examples(&c.docs, &BuildOptions::multistage()).unwrap();
    check(&c.docs, &b).unwrap();
    eprintln!("{}\n{}", b.report, b.stats_table());
    let all = b.stats(None);
    assert!((50..=120).contains(&all.users), "{} senders", all.users);
    assert!(
        (800..=1600).contains(&all.examples),
        "{} examples",
        all.examples
    );
}
