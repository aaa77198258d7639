//! Issue 39, "Must show" 1, for the input files of the commands `bad_input.rs` leaves out:
//! each input file of `metrics`, `embed`, `rank`, `bench`, `plot`, `summarize` and `recsys
//! index` given as a careless user might (cut short, empty, a folder, bytes that are not
//! UTF-8, one huge line, a field of the wrong type). Every run must be refused as bad input
//! (exit code 2) before any model loads, name the file (and, where the class has one, the line
//! or field), print a short message (a 20 MB line is not echoed back), and leave the folder's
//! files exactly as they were.
use std::path::Path;

#[path = "support/input_classes.rs"]
mod input_classes;
use input_classes::*;

const PAIRS: &str = "{\"id\": 1, \"prediction\": \"a lovely cat\", \"reference\": \"the lovely cat\"}\n\
                     {\"id\": 2, \"prediction\": \"a dog barks\", \"reference\": \"dogs bark loudly\"}\n";
const TEXTS: &str = "{\"id\": 1, \"text\": \"a lovely soap that smells nice\"}\n\
                     {\"id\": 2, \"text\": \"it broke after a week of use\"}\n";
const SPLIT: &str = r#"[
  {"id": "u1", "profile": [{"title": "Great", "text": "Lovely soap, smells nice", "rating": 5, "pid": "p1"},
                           {"title": "Meh", "text": "Too dry for me", "rating": 2, "pid": "p2"}]},
  {"id": "u2", "profile": [{"title": "Nice", "text": "Good soap overall", "rating": 4, "pid": "p1"},
                           {"title": "Bad", "text": "Broke in a week", "rating": 1, "pid": "p3"}]}
]"#;
const CSV: &str = "mode_k,ROUGE-1,ROUGE-L,METEOR\nnone_k1,0.063,0.058,0.071\nuser_k1,0.069,0.064,0.091\n\
                   neighbor_k1,0.083,0.078,0.089\n";
const QUESTIONS: &str = r#"[
  {"id": "q1", "input": "Generate a headline for this article: rain falls on the city",
   "profile": [{"id": "p1", "title": "Sun returns", "text": "The sun came back today"},
               {"id": "p2", "title": "Storm ahead", "text": "A storm is coming to town"}]}
]"#;
const INTER: &str = "user_id:token\titem_id:token\trating:float\ttimestamp:float\n\
                     7\t1\t4\t881250949\n7\t2\t3\t881250950\n8\t1\t5\t881250951\n";

fn targets() -> Vec<Target> {
    vec![
        Target {
            what: "metrics --pairs",
            file: "pairs.jsonl",
            good: PAIRS,
            wrong_type: "{\"id\": 1, \"prediction\": 2, \"reference\": \"b\"}\n",
            wrong_type_wants: &["line 1", "prediction"],
            args: |i, d| {
                vec![
                    p("metrics"),
                    p("--pairs"),
                    i.into(),
                    p("--out"),
                    d.join("scores.jsonl"),
                ]
            },
        },
        Target {
            what: "embed --texts",
            file: "texts.jsonl",
            good: TEXTS,
            wrong_type: "{\"id\": 1, \"text\": 5}\n",
            wrong_type_wants: &["line 1", "text"],
            args: |i, d| {
                vec![
                    p("embed"),
                    p("--model"),
                    d.join("no-model"),
                    p("--texts"),
                    i.into(),
                    p("--out"),
                    d.join("emb.jsonl"),
                ]
            },
        },
        Target {
            what: "rank --split",
            file: "amazon_dev.json",
            good: SPLIT,
            wrong_type: r#"[{"id": "u1", "profile": [{"title": "T", "text": "x", "rating": "five", "pid": "p1"}]}]"#,
            wrong_type_wants: &["rating"],
            args: |i, d| {
                vec![
                    p("rank"),
                    p("--task"),
                    p("text"),
                    p("--split"),
                    i.into(),
                    p("--out"),
                    d.join("ranking.json"),
                ]
            },
        },
        Target {
            what: "bench --split",
            file: "amazon_dev.json",
            good: SPLIT,
            wrong_type: r#"[{"id": "u1", "profile": [{"title": "T", "text": 7, "rating": 4, "pid": "p1"}]}]"#,
            wrong_type_wants: &["text"],
            args: |i, d| {
                vec![
                    p("bench"),
                    p("--task"),
                    p("text"),
                    p("--model"),
                    d.join("no-model.gguf"),
                    p("--split"),
                    i.into(),
                    p("--out"),
                    d.join("out"),
                ]
            },
        },
        Target {
            what: "plot --csv",
            file: "results.csv",
            good: CSV,
            wrong_type: "mode_k,ROUGE-1\nnone_k1,high\n",
            wrong_type_wants: &["high"],
            args: |i, d| {
                vec![
                    p("plot"),
                    p("--csv"),
                    i.into(),
                    p("--out"),
                    d.join("chart.svg"),
                ]
            },
        },
        Target {
            what: "summarize --input",
            file: "dev_questions.json",
            good: QUESTIONS,
            wrong_type: r#"[{"id": "q1", "input": 5, "profile": []}]"#,
            wrong_type_wants: &["input"],
            args: |i, d| {
                vec![
                    p("summarize"),
                    p("--task"),
                    p("LaMP-4"),
                    p("--model"),
                    d.join("no-model.gguf"),
                    p("--input"),
                    i.into(),
                    p("--store"),
                    d.join("summaries.sqlite"),
                ]
            },
        },
        Target {
            what: "recsys index --ml100k",
            file: "ml-100k.inter",
            good: INTER,
            wrong_type: "user_id:token\titem_id:token\trating:float\ttimestamp:float\n7\t1\tfour\t881250949\n",
            wrong_type_wants: &["ml-100k.inter:2", "rating", "four"],
            args: |i, d| {
                vec![
                    p("recsys"),
                    p("index"),
                    p("--ml100k"),
                    i.parent().unwrap().into(),
                    p("--encoder"),
                    d.join("no-encoder"),
                    p("--out"),
                    d.join("index.bin"),
                ]
            },
        },
    ]
}

/// The other files of an ML-100K folder (the `.inter` file is the one under test).
fn ml100k_rest(dir: &Path) {
    for (name, text) in [
        (
            "ml-100k.item",
            "item_id:token\tmovie_title:token_seq\trelease_year:token\tclass:token_seq\n\
             1\tToy Story\t1995\tAnimation\n2\tHeat\t1995\tAction\n",
        ),
        (
            "ml-100k.kg",
            "head_id:token\trelation_id:token\ttail_id:token\nm.1\tfilm.film.genre\tm.2\n",
        ),
        ("ml-100k.link", "item_id:token\tentity_id:token\n1\tm.1\n"),
    ] {
        std::fs::write(dir.join(name), text).unwrap();
    }
}

#[test]
fn every_class_of_bad_input_file_is_refused_naming_the_file() {
    refuse_every_class(targets(), |t, d| {
        if t.file.starts_with("ml-100k") {
            let ml = d.join("ml");
            std::fs::create_dir(&ml).unwrap();
            ml100k_rest(&ml);
            ml.join(t.file)
        } else {
            d.join(t.file)
        }
    });
}
