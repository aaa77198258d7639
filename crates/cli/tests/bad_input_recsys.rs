//! Issue 39, "Must show" 1, for the MovieLens and mail inputs: the data, KG and index files of
//! `train kragrec` and `recsys eval`, the SpamAssassin records of `corpus convert --source
//! spam-assassin` and the MovieLens-100K files of `corpus lamp`, given as a careless user might
//! (cut short, empty, a folder, bytes that are not UTF-8, one huge line, a field of the wrong
//! type, a missing column, ratings off the 1-5 scale, repeated ids, an output over an input, a
//! damaged index). Every run must be refused as bad input (exit code 2) before any model loads,
//! name the file (and the line and field where there is one), print a short message, and leave
//! the folder's files exactly as they were.
//!
//! The damaged-index test needs `models/all-MiniLM-L6-v2` (`scripts/fetch-minilm.sh`) to build
//! the index it damages; the others need no model.
mod support;

use std::path::{Path, PathBuf};

#[path = "support/input_classes.rs"]
mod input_classes;
use input_classes::*;

const ITEM: &str = "item_id:token\tmovie_title:token_seq\trelease_year:token\tclass:token_seq\n\
                    1\tToy Story\t1995\tAnimation Comedy\n2\tHeat\t1995\tAction\n\
                    3\tFargo\t1996\tCrime Drama\n";
const INTER: &str = "user_id:token\titem_id:token\trating:float\ttimestamp:float\n\
                     7\t1\t4\t881250949\n7\t2\t3\t881250950\n8\t1\t5\t881250951\n\
                     8\t3\t2\t881250952\n";
const KG: &str = "head_id:token\trelation_id:token\ttail_id:token\n\
                  m.1\tfilm.film.genre\tm.g1\nm.2\tfilm.film.genre\tm.g1\n";
const LINK: &str = "item_id:token\tentity_id:token\n1\tm.1\n2\tm.2\n";
const MOVIES: &str = "1::Toy Story (1995)::Animation|Comedy\n2::Heat (1995)::Action\n\
                      3::Fargo (1996)::Crime|Drama\n";
const ROWS: &str = "user_id,history_movie_id,history_rating,movie_id,rating,timestamp\n\
                    5,\"['1', '2']\",\"[1, 0]\",3,1,958742610\n\
                    6,\"['2', '3']\",\"[1, 1]\",1,0,958742611\n";
const NAMES: &str = "1\tToy Story\n2\tHeat\n3\tFargo\n";
/// A SpamAssassin record: the raw mail in `text`.
const RECORD: &str = r#"{"id": "00001", "group": "easy-ham-1", "checksum": {}, "text": "From: kre@munnari.OZ.AU\nDate: Thu, 22 Aug 2002 18:26:25 +0700\nSubject: Sequences\n\nThe sequences work here."}"#;
const RECORD2: &str = r#"{"id": "00002", "group": "easy-ham-1", "checksum": {}, "text": "From: kre@munnari.OZ.AU\nDate: Fri, 23 Aug 2002 18:26:25 +0700\nSubject: More\n\nThe other mail text."}"#;

/// The ML-100K files, by name.
const ML100K: [(&str, &str); 4] = [
    ("ml-100k.item", ITEM),
    ("ml-100k.inter", INTER),
    ("ml-100k.kg", KG),
    ("ml-100k.link", LINK),
];
/// The ML-1M slice's files, by name.
const ML1M: [(&str, &str); 3] = [
    ("movies.dat", MOVIES),
    ("test_filtered.csv", ROWS),
    ("movies_id_name.txt", NAMES),
];

/// Writes the files of `set` into `dir` (created), but for `but`.
fn write_but(dir: &Path, set: &[(&str, &str)], but: &str) {
    std::fs::create_dir_all(dir).unwrap();
    for (name, text) in set {
        if *name != but {
            std::fs::write(dir.join(name), text).unwrap();
        }
    }
}

/// `train kragrec` on the rows of `dataset`, with an encoder and a model that do not exist:
/// the data is read first.
fn kragrec(dataset: &str, d: &Path) -> Vec<PathBuf> {
    let mut v = vec![p("train"), p("kragrec"), p("--dataset"), p(dataset)];
    v.extend([p("--ml100k"), d.join("ml"), p("--ml1m"), d.join("ml1m")]);
    v.extend([p("--encoder"), d.join("no-encoder"), p("--index")]);
    v.extend([d.join("index.bin"), p("--model"), d.join("no-model.gguf")]);
    v.extend([p("--out"), d.join("encoder.safetensors"), p("--checkpoint")]);
    v.extend([d.join("ckpt.safetensors"), p("--quiet")]);
    v
}

/// `corpus lamp --task LaMP-3` from the MovieLens-100K folder `d/ml`.
fn lamp3(d: &Path) -> Vec<PathBuf> {
    let v = [
        p("corpus"),
        p("lamp"),
        p("--task"),
        p("LaMP-3"),
        p("--from"),
    ];
    [&v[..], &[d.join("ml"), p("--out"), d.join("lamp3")]].concat()
}

/// `corpus convert --source spam-assassin` of the folder `d/sa`.
fn spam(d: &Path, out: PathBuf) -> Vec<PathBuf> {
    let v = [p("corpus"), p("convert"), p("--source"), p("spam-assassin")];
    [&v[..], &[p("--in"), d.join("sa"), p("--out"), out]].concat()
}

fn kragrec_target(
    file: &'static str,
    wrong_type: &'static str,
    wants: &'static [&'static str],
) -> Target {
    Target {
        what: "train kragrec --ml100k",
        file,
        good: ML100K.iter().find(|(n, _)| *n == file).unwrap().1,
        wrong_type,
        wrong_type_wants: wants,
        args: |_, d| kragrec("ml100k", d),
    }
}

fn targets() -> Vec<Target> {
    vec![
        kragrec_target(
            "ml-100k.inter",
            "user_id:token\titem_id:token\trating:float\ttimestamp:float\n7\t1\tfour\t881250949\n",
            &["ml-100k.inter:2", "rating", "four"],
        ),
        kragrec_target(
            "ml-100k.item",
            "item_id:token\tmovie_title:token_seq\trelease_year:token\tclass:token_seq\n\
             one\tToy Story\t1995\tAnimation\n",
            &["ml-100k.item:2", "item_id", "one"],
        ),
        kragrec_target(
            "ml-100k.kg",
            "head_id:token\trelation_id:token\ttail_id:token\nm.1\tfilm.film.genre\t\n",
            &["ml-100k.kg:2", "tail_id"],
        ),
        kragrec_target(
            "ml-100k.link",
            "item_id:token\tentity_id:token\nx\tm.1\n",
            &["ml-100k.link:2", "item_id"],
        ),
        Target {
            what: "train kragrec --ml1m",
            file: "movies.dat",
            good: MOVIES,
            wrong_type: "one::Toy Story (1995)::Animation\n",
            wrong_type_wants: &["movies.dat:1", "MovieID", "one"],
            args: |_, d| kragrec("ml1m", d),
        },
        Target {
            what: "train kragrec --ml1m",
            file: "test_filtered.csv",
            good: ROWS,
            wrong_type: "user_id,history_movie_id,history_rating,movie_id,rating,timestamp\n\
                         5,\"['1', '2']\",\"[1, 0]\",3,yes,958742610\n",
            wrong_type_wants: &["test_filtered.csv:2", "rating", "yes"],
            args: |_, d| kragrec("ml1m", d),
        },
        Target {
            what: "train kragrec --ml1m",
            file: "movies_id_name.txt",
            good: NAMES,
            wrong_type: "x\tToy Story\n",
            wrong_type_wants: &["movies_id_name.txt:1", "x"],
            args: |_, d| kragrec("ml1m", d),
        },
        Target {
            what: "corpus lamp --from (MovieLens-100K)",
            file: "ml-100k.inter",
            good: INTER,
            wrong_type: "user_id:token\titem_id:token\trating:float\ttimestamp:float\n7\t1\tfour\t881250949\n",
            wrong_type_wants: &["ml-100k.inter:2", "rating", "four"],
            args: |_, d| lamp3(d),
        },
        Target {
            what: "corpus lamp --from (MovieLens-100K)",
            file: "ml-100k.item",
            good: ITEM,
            wrong_type: "item_id:token\tmovie_title:token_seq\trelease_year:token\tclass:token_seq\n\
                         1\tToy Story\n",
            wrong_type_wants: &["ml-100k.item:2", "2 fields"],
            args: |_, d| lamp3(d),
        },
        Target {
            what: "corpus convert --source spam-assassin",
            file: "00001.json",
            good: RECORD,
            wrong_type: r#"{"id": 1, "group": "easy-ham-1", "text": "From: a@b.org"}"#,
            wrong_type_wants: &["easy-ham-1/00001.json", "id"],
            args: |_, d| spam(d, d.join("mail.jsonl")),
        },
    ]
}

/// Places a target's input in `d` with the other files of its set beside it: ML-100K in
/// `d/ml`, the ML-1M slice in `d/ml1m` (with ML-100K, whose KG it uses), a second good mail
/// record in `d/sa/easy-ham-1`.
fn place(t: &Target, d: &Path) -> PathBuf {
    let ml = d.join("ml");
    if t.what.contains("ml1m") {
        write_but(&ml, &ML100K, "");
        write_but(&d.join("ml1m"), &ML1M, t.file);
        return d.join("ml1m").join(t.file);
    }
    if t.file.starts_with("ml-100k") {
        write_but(&ml, &ML100K, t.file);
        return ml.join(t.file);
    }
    let ham = d.join("sa/easy-ham-1");
    write_but(&ham, &[("00002.json", RECORD2)], "");
    ham.join(t.file)
}

#[test]
fn every_class_of_bad_input_file_is_refused_naming_the_file() {
    // ML-1M's movies.dat is latin-1 as released: bytes that are not UTF-8 are its letters.
    let latin1 = [("train kragrec --ml1m", "not UTF-8")];
    refuse_classes_except(targets(), &latin1, place);
}

/// Runs `args` in `d` (refused naming all of `wants`, `d` unchanged), or the failure.
fn refused_in(d: &Path, args: &[PathBuf], wants: &[&str]) -> Option<String> {
    let before = snapshot(d);
    let o = pgraphrag(args);
    problem(&o, wants, d, &before)
}

/// `corpus lamp` (LaMP-3 from MovieLens-100K) on a copy of `INTER` with one line added.
const LAMP3: &str = "corpus lamp";
/// `train kragrec` on the same.
const KRAGREC: &str = "train kragrec";

/// One MovieLens-100K folder per case and command, `ml-100k.inter` given `text`: refused
/// naming the line and the field. `train kragrec` takes half stars (RecBole's ratings are
/// floats) and a repeated rating (its leave-one-out rows keep a user's first rating of an item
/// and count the repeats), so those cases are `corpus lamp`'s, whose questions are whole-star
/// ratings with one id per user and item.
#[test]
fn movielens_values_off_the_scale_repeated_or_unknown_are_refused_naming_the_line() {
    let cases: [(&str, &[&str], String, &[&str]); 7] = [
        (
            "a rating of 99",
            &[LAMP3, KRAGREC],
            format!("{INTER}8\t2\t99\t881250953\n"),
            &["ml-100k.inter:6", "rating", "99"],
        ),
        (
            "a rating of 0",
            &[LAMP3, KRAGREC],
            format!("{INTER}8\t2\t0\t881250953\n"),
            &["ml-100k.inter:6", "rating"],
        ),
        (
            "a rating of 3.5",
            &[LAMP3],
            format!("{INTER}8\t2\t3.5\t881250953\n"),
            &["ml-100k.inter:6", "rating", "3.5"],
        ),
        (
            "a time of -99999999999",
            &[LAMP3],
            format!("{INTER}8\t2\t3\t-99999999999\n"),
            &["ml-100k.inter:6", "timestamp", "-99999999999"],
        ),
        (
            "a user rating an item twice",
            &[LAMP3],
            format!("{INTER}7\t1\t2\t881250960\n"),
            &["ml-100k.inter:6", "\"7\"", "\"1\"", "line 2"],
        ),
        (
            "an item that is not in ml-100k.item",
            &[LAMP3, KRAGREC],
            format!("{INTER}8\t9\t3\t881250953\n"),
            &["ml-100k.inter:6", "9", "ml-100k.item"],
        ),
        (
            "no rating column",
            &[LAMP3, KRAGREC],
            "user_id:token\titem_id:token\ttimestamp:float\n7\t1\t881250949\n".into(),
            &["ml-100k.inter", "rating"],
        ),
    ];
    let mut failures = Vec::new();
    for (case, commands, text, wants) in &cases {
        for what in *commands {
            let d = tempfile::tempdir().unwrap();
            write_but(&d.path().join("ml"), &ML100K, "ml-100k.inter");
            std::fs::write(d.path().join("ml/ml-100k.inter"), text).unwrap();
            let args = match *what {
                LAMP3 => lamp3(d.path()),
                _ => kragrec("ml100k", d.path()),
            };
            if let Some(problem) = refused_in(d.path(), &args, wants) {
                failures.push(format!("{what} / {case}: {problem}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// An item listed twice in `ml-100k.item` (its description would depend on the line order).
#[test]
fn an_item_listed_twice_is_refused_naming_both_lines() {
    let d = tempfile::tempdir().unwrap();
    write_but(&d.path().join("ml"), &ML100K, "ml-100k.item");
    let item = format!("{ITEM}2\tHeat Again\t1996\tDrama\n");
    std::fs::write(d.path().join("ml/ml-100k.item"), item).unwrap();
    for (what, args) in [
        (LAMP3, lamp3(d.path())),
        (KRAGREC, kragrec("ml100k", d.path())),
    ] {
        let wants = ["ml-100k.item:5", "2", "line 3"];
        if let Some(problem) = refused_in(d.path(), &args, &wants) {
            panic!("{what}: {problem}");
        }
    }
}

/// The ML-1M slice's files: a movie or a name given twice (the second once replaced the first).
#[test]
fn repeated_ml1m_ids_are_refused_naming_the_line() {
    let cases: [(&str, String, &[&str]); 2] = [
        (
            "movies.dat",
            format!("{MOVIES}2::Heat Again (1995)::Action\n"),
            &["movies.dat:4", "2", "line 2"],
        ),
        (
            "movies_id_name.txt",
            format!("{NAMES}2\tHeat Again\n"),
            &["movies_id_name.txt:4", "2", "line 2"],
        ),
    ];
    for (file, text, wants) in &cases {
        let d = tempfile::tempdir().unwrap();
        write_but(&d.path().join("ml"), &ML100K, "");
        write_but(&d.path().join("ml1m"), &ML1M, file);
        std::fs::write(d.path().join("ml1m").join(file), text).unwrap();
        if let Some(problem) = refused_in(d.path(), &kragrec("ml1m", d.path()), wants) {
            panic!("{file}: {problem}");
        }
    }
}

/// SpamAssassin: two records with one id, and an --out that is one of the records read.
#[test]
fn repeated_mail_ids_and_an_output_over_a_record_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let ham = d.path().join("sa/easy-ham-1");
    write_but(&ham, &[("00001.json", RECORD), ("00002.json", RECORD2)], "");
    let out = ham.join("00002.json");
    let wants = ["--out and --in", "00002.json"];
    if let Some(problem) = refused_in(d.path(), &spam(d.path(), out), &wants) {
        panic!("--out over a record: {problem}");
    }
    std::fs::write(ham.join("00003.json"), RECORD.replace("Sequences", "Again")).unwrap();
    let wants = ["00003.json", "easy-ham-1/00001", "00001.json"];
    if let Some(problem) = refused_in(d.path(), &spam(d.path(), d.path().join("o.jsonl")), &wants) {
        panic!("a repeated id: {problem}");
    }
}

fn minilm() -> PathBuf {
    let p = support::root().join("models/all-MiniLM-L6-v2");
    assert!(
        p.join("model.safetensors").is_file(),
        "all-MiniLM-L6-v2 is missing at {}: run scripts/fetch-minilm.sh",
        p.display()
    );
    p
}

/// A K-RagRec index damaged after it was built (cut short, emptied, a byte flipped in its
/// header or in its vectors, a folder in its place) is refused by `recsys eval` and `train
/// kragrec`, naming the file, before any model loads; the index and every other file stay as
/// they were and no output is written.
#[test]
fn a_damaged_kragrec_index_is_refused_naming_it() {
    let d = tempfile::tempdir().unwrap();
    let ml = d.path().join("ml");
    std::fs::create_dir(&ml).unwrap();
    support::toy_ml100k(&ml, 200);
    let good = d.path().join("good.idx");
    let o = pgraphrag(&[
        p("recsys"),
        p("index"),
        p("--quiet"),
        p("--ml100k"),
        ml.clone(),
        p("--encoder"),
        minilm(),
        p("--out"),
        good.clone(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let bytes = std::fs::read(&good).unwrap();
    std::fs::remove_file(&good).unwrap();
    let flip = |at: usize| {
        let mut b = bytes.clone();
        b[at] ^= 0x40;
        b
    };
    let cases: [(&str, Option<Vec<u8>>); 6] = [
        ("cut in half", Some(bytes[..bytes.len() / 2].to_vec())),
        ("one byte short", Some(bytes[..bytes.len() - 1].to_vec())),
        ("empty", Some(Vec::new())),
        ("a byte of the magic flipped", Some(flip(0))),
        (
            "a byte of the vectors flipped",
            Some(flip(bytes.len() * 3 / 4)),
        ),
        ("a folder", None),
    ];
    let mut failures = Vec::new();
    for (case, damaged) in cases {
        let index = d.path().join("index.bin");
        match damaged {
            Some(b) => std::fs::write(&index, b).unwrap(),
            None => std::fs::create_dir(&index).unwrap(),
        }
        let eval = [
            [p("recsys"), p("eval"), p("--dataset"), p("ml100k")].to_vec(),
            [p("--rows"), p("2"), p("--quiet"), p("--ml100k"), ml.clone()].to_vec(),
            [p("--encoder"), minilm(), p("--index"), index.clone()].to_vec(),
            [p("--model"), d.path().join("no-model.gguf"), p("--out")].to_vec(),
            [d.path().join("rows.jsonl")].to_vec(),
        ]
        .concat();
        let train = [
            [p("train"), p("kragrec"), p("--dataset"), p("ml100k")].to_vec(),
            [p("--ml100k"), ml.clone(), p("--encoder"), minilm()].to_vec(),
            [p("--index"), index.clone(), p("--model")].to_vec(),
            [d.path().join("no-model.gguf"), p("--out")].to_vec(),
            [d.path().join("enc.safetensors"), p("--checkpoint")].to_vec(),
            [d.path().join("ckpt.safetensors"), p("--quiet")].to_vec(),
        ]
        .concat();
        for (what, args) in [("recsys eval", eval), ("train kragrec", train)] {
            if let Some(problem) = refused_in(d.path(), &args, &["index.bin"]) {
                failures.push(format!("{what} / {case}: {problem}"));
            }
        }
        if index.is_dir() {
            std::fs::remove_dir(&index).unwrap();
        } else {
            std::fs::remove_file(&index).unwrap();
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
