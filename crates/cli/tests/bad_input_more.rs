//! Issue 39, "Must show" 1, continued from `bad_input_files.rs` for the commands it leaves
//! out: the input files of `lamp prompts`, `lamp grid`, `corpus convert`, `corpus lamp`,
//! `multistage build`, `run` and `export`, `train lora` and `queue submit` given as a careless
//! user might (cut short, empty, a folder, bytes that are not UTF-8, one huge line, a field of
//! the wrong type). Every run must be refused as bad input (exit code 2) before any model,
//! tokenizer or queue is reached, name the file (and, for a wrong field, the record or the
//! field), print a short message, and leave the folder's files exactly as they were.
use std::path::{Path, PathBuf};

#[path = "support/input_classes.rs"]
mod input_classes;
use input_classes::*;

/// Writes `text` to `dir/name` and gives its path (the other, valid inputs of a command).
fn put(dir: &Path, name: &str, text: &str) -> PathBuf {
    let f = dir.join(name);
    std::fs::write(&f, text).unwrap();
    f
}

const QUESTIONS: &str = r#"[
  {"id": "q1", "input": "Generate a headline for this article: rain falls on the city",
   "profile": [{"id": "p1", "title": "Sun returns", "text": "The sun came back today"},
               {"id": "p2", "title": "Storm ahead", "text": "A storm is coming to town"}]}
]"#;
const OUTPUTS: &str = r#"{"task": "LaMP_4", "golds": [{"id": "q1", "output": "Rain here"}]}"#;
const SUMMARIES: &str = "{\"id\": \"q1\", \"summary\": \"writes about the weather\"}\n";
const SPLIT: &str = r#"[
  {"id": "u1", "profile": [{"title": "Great", "text": "Lovely soap, smells nice", "rating": 5, "pid": "p1"},
                           {"title": "Meh", "text": "Too dry for me", "rating": 2, "pid": "p2"}]},
  {"id": "u2", "profile": [{"title": "Nice", "text": "Good soap overall", "rating": 4, "pid": "p1"},
                           {"title": "Bad", "text": "Broke in a week", "rating": 1, "pid": "p3"}]}
]"#;
const SPLIT_WRONG: &str =
    r#"[{"id": "u1", "profile": [{"title": "T", "text": 7, "rating": 4, "pid": "p1"}]}]"#;
const CORPUS: &str = "\
{\"author\": \"a.com\", \"doc_id\": \"n/1\", \"time\": 1486425600, \"title\": \"One\", \"text\": \"The first text here\"}\n\
{\"author\": \"a.com\", \"doc_id\": \"n/2\", \"time\": 1486512000, \"title\": \"Two\", \"text\": \"The second text here\"}\n\
{\"author\": \"b.com\", \"doc_id\": \"n/3\", \"time\": 1486598400, \"title\": \"Three\", \"text\": \"The third text here\"}\n";
const EXAMPLES: &str = "\
{\"id\": \"n/3\", \"author\": \"a.com\", \"split\": \"test\", \"time\": 1486598400, \
\"immediate_context\": \"Three\\nThe third\", \"target\": \"The third text here\", \
\"context\": [{\"doc_id\": \"n/1\", \"time\": 1486425600, \"text\": \"One\\nThe first text here\"}, \
{\"doc_id\": \"n/2\", \"time\": 1486512000, \"text\": \"Two\\nThe second text here\"}]}\n";
const TRAIN: &str = "{\"prompt\": \"Rate: lovely soap\", \"target\": \"5\"}\n\
                     {\"prompt\": \"Rate: broke in a week\", \"target\": \"1\"}\n";
const TEXTS: &str = "{\"id\": 1, \"text\": \"a lovely soap that smells nice\"}\n\
                     {\"id\": 2, \"text\": \"it broke after a week of use\"}\n";
const NEWS: &str = "article_id,publish_date,article_source_link,title,subtitle,text\n\
                    1,2017/2/7,http://abcnews.go.com/x,One,,\"The first article, here.\"\n\
                    2,2017/2/8,http://abcnews.go.com/y,Two,,\"The second article, here.\"\n";
const TWEETS: &str = "source_id,text\n\
                      goodhealth-577117109701967872,\"Get some cardio in, here.\"\n\
                      goodhealth-577083140977651712,\"Beauty comes from within, here.\"\n";
/// A queue no server listens on: `queue submit` must refuse bad input before connecting.
const NATS: &str = "nats://127.0.0.1:1";

/// `lamp prompts` with a tokenizer that does not exist: the inputs are read first.
fn lamp_prompts(questions: PathBuf, summaries: Option<PathBuf>, d: &Path) -> Vec<PathBuf> {
    let mut v = vec![p("lamp"), p("prompts"), p("--task"), p("LaMP-4"), p("--k")];
    v.extend([p("1"), p("--max-length"), p("512"), p("--tokenizer")]);
    v.extend([d.join("no-tokenizer.json"), p("--questions"), questions]);
    if let Some(s) = summaries {
        v.extend([p("--summaries"), s]);
    }
    v.extend([p("--out"), d.join("prompts.jsonl")]);
    v
}

/// `lamp grid` with a model that does not exist.
fn lamp_grid(q: PathBuf, o: PathBuf, summaries: Option<PathBuf>, d: &Path) -> Vec<PathBuf> {
    let mut v = vec![p("lamp"), p("grid"), p("--task"), p("LaMP-4"), p("--model")];
    v.extend([
        d.join("no-model.gguf"),
        p("--questions"),
        q,
        p("--outputs"),
        o,
    ]);
    if let Some(s) = summaries {
        v.extend([p("--summaries"), s]);
    }
    v.extend([
        p("--cache"),
        d.join("cache.sqlite"),
        p("--out"),
        d.join("grid"),
    ]);
    v
}

/// `train lora` with a model that does not exist.
fn lora(train: PathBuf, val: Option<PathBuf>, d: &Path) -> Vec<PathBuf> {
    let mut v = vec![p("train"), p("lora"), p("--model"), d.join("no-model.gguf")];
    v.extend([p("--train"), train]);
    if let Some(val) = val {
        v.extend([p("--val"), val]);
    }
    v.extend([p("--out"), d.join("adapter.safetensors")]);
    v.extend([p("--checkpoint"), d.join("ckpt.safetensors")]);
    v
}

fn targets() -> Vec<Target> {
    let mut v = vec![
        Target {
            what: "lamp prompts --questions",
            file: "dev_questions.json",
            good: QUESTIONS,
            wrong_type: r#"[{"id": "q1", "input": 5, "profile": []}]"#,
            wrong_type_wants: &["record 0", "input"],
            args: |i, d| lamp_prompts(i.into(), None, d),
        },
        Target {
            what: "lamp prompts --summaries",
            file: "summaries.jsonl",
            good: SUMMARIES,
            wrong_type: "{\"id\": \"q1\", \"summary\": 5}\n",
            wrong_type_wants: &["line 1", "summary"],
            args: |i, d| lamp_prompts(put(d, "q.json", QUESTIONS), Some(i.into()), d),
        },
        Target {
            what: "lamp grid --questions",
            file: "dev_questions.json",
            good: QUESTIONS,
            wrong_type: r#"[{"id": "q1", "input": 5, "profile": []}]"#,
            wrong_type_wants: &["record 0", "input"],
            args: |i, d| lamp_grid(i.into(), put(d, "o.json", OUTPUTS), None, d),
        },
        Target {
            what: "lamp grid --outputs",
            file: "dev_outputs.json",
            good: OUTPUTS,
            wrong_type: r#"{"task": "LaMP_4", "golds": [{"id": "q1", "output": ["Rain"]}]}"#,
            wrong_type_wants: &["record 0", "output"],
            args: |i, d| lamp_grid(put(d, "q.json", QUESTIONS), i.into(), None, d),
        },
        Target {
            what: "lamp grid --summaries",
            file: "summaries.jsonl",
            good: SUMMARIES,
            wrong_type: "{\"id\": 1, \"summary\": \"s\"}\n",
            wrong_type_wants: &["line 1", "summary"],
            args: |i, d| {
                let (q, o) = (put(d, "q.json", QUESTIONS), put(d, "o.json", OUTPUTS));
                lamp_grid(q, o, Some(i.into()), d)
            },
        },
        Target {
            what: "corpus convert --in",
            file: "amazon_dev.json",
            good: SPLIT,
            wrong_type: SPLIT_WRONG,
            wrong_type_wants: &["text"],
            args: |i, d| {
                let v = [p("corpus"), p("convert"), p("--source"), p("pgraphrag")];
                [
                    &v[..],
                    &[p("--in"), i.into(), p("--out"), d.join("c.jsonl")],
                ]
                .concat()
            },
        },
        Target {
            what: "corpus convert --source news --in",
            file: "NewsArticles.csv",
            good: NEWS,
            wrong_type: "id,date,link,title,text\n1,2017/2/7,http://a.com/x,T,x\n",
            wrong_type_wants: &["no column \"article_id\""],
            args: |i, d| {
                let v = [p("corpus"), p("convert"), p("--source"), p("news")];
                [
                    &v[..],
                    &[p("--in"), i.into(), p("--out"), d.join("c.jsonl")],
                ]
                .concat()
            },
        },
        Target {
            what: "corpus convert --source tweets --in",
            file: "healthtweets.csv",
            good: TWEETS,
            wrong_type: "account,tweet\ngoodhealth,x\n",
            wrong_type_wants: &["no column \"source_id\""],
            args: |i, d| {
                let v = [p("corpus"), p("convert"), p("--source"), p("tweets")];
                [
                    &v[..],
                    &[p("--in"), i.into(), p("--out"), d.join("c.jsonl")],
                ]
                .concat()
            },
        },
        Target {
            what: "corpus lamp --from (a corpus)",
            file: "news.jsonl",
            good: CORPUS,
            wrong_type: "{\"author\": \"a\", \"doc_id\": \"n/1\", \"time\": \"yesterday\", \"text\": \"x\"}\n",
            wrong_type_wants: &["line 1", "yesterday"],
            args: |i, d| {
                let v = [
                    p("corpus"),
                    p("lamp"),
                    p("--task"),
                    p("LaMP-4"),
                    p("--from"),
                ];
                [&v[..], &[i.into(), p("--out"), d.join("lamp4")]].concat()
            },
        },
        Target {
            what: "corpus lamp --from (a split)",
            file: "amazon_dev.json",
            good: SPLIT,
            wrong_type: SPLIT_WRONG,
            wrong_type_wants: &["text"],
            args: |i, d| {
                let v = [
                    p("corpus"),
                    p("lamp"),
                    p("--task"),
                    p("LaMP-3"),
                    p("--from"),
                ];
                [&v[..], &[i.into(), p("--out"), d.join("lamp3")]].concat()
            },
        },
        Target {
            what: "multistage build --corpus",
            file: "corpus.jsonl",
            good: CORPUS,
            wrong_type: "{\"author\": \"a\", \"doc_id\": \"n/1\", \"time\": 1486425600, \"text\": 5}\n",
            wrong_type_wants: &["line 1"],
            args: |i, d| {
                let v = [p("multistage"), p("build"), p("--corpus"), i.into()];
                [&v[..], &[p("--out"), d.join("ms")]].concat()
            },
        },
        Target {
            what: "multistage run --examples",
            file: "examples.jsonl",
            good: EXAMPLES,
            wrong_type: "{\"id\": 5}\n",
            wrong_type_wants: &["line 1"],
            args: |i, d| {
                let v = [p("multistage"), p("run"), p("--examples"), i.into()];
                let m = [p("--model"), d.join("no-model.gguf")];
                [&v[..], &m, &[p("--out"), d.join("run")]].concat()
            },
        },
        Target {
            what: "multistage export --examples",
            file: "examples.jsonl",
            good: EXAMPLES,
            wrong_type: "{\"id\": 5}\n",
            wrong_type_wants: &["line 1"],
            args: |i, d| {
                let v = [p("multistage"), p("export"), p("--examples"), i.into()];
                let e = [p("--encoder"), d.join("no-encoder")];
                [&v[..], &e, &[p("--out"), d.join("records.jsonl")]].concat()
            },
        },
        Target {
            what: "train lora --train",
            file: "train.jsonl",
            good: TRAIN,
            wrong_type: "{\"prompt\": 5, \"target\": \"1\"}\n",
            wrong_type_wants: &["train.jsonl:1", "prompt"],
            args: |i, d| lora(i.into(), None, d),
        },
        Target {
            what: "train lora --val",
            file: "val.jsonl",
            good: TRAIN,
            wrong_type: "{\"prompt\": \"p\", \"target\": [1]}\n",
            wrong_type_wants: &["val.jsonl:1"],
            args: |i, d| lora(put(d, "t.jsonl", TRAIN), Some(i.into()), d),
        },
    ];
    if !cfg!(feature = "jetstream") {
        return v;
    }
    v.extend([
        Target {
            what: "queue submit rank --split",
            file: "amazon_dev.json",
            good: SPLIT,
            wrong_type: SPLIT_WRONG,
            wrong_type_wants: &["text"],
            args: |i, d| {
                let v = [p("queue"), p("submit"), p("rank"), p("--nats"), p(NATS)];
                let s = [p("--task"), p("text"), p("--split"), i.into()];
                [&v[..], &s, &[p("--store"), d.join("jobs.sqlite")]].concat()
            },
        },
        Target {
            what: "queue submit embed --texts",
            file: "texts.jsonl",
            good: TEXTS,
            wrong_type: "{\"id\": 1, \"text\": 5}\n",
            wrong_type_wants: &["line 1", "text"],
            args: |i, d| {
                let model = d.join("encoder");
                std::fs::create_dir(&model).unwrap();
                let v = [p("queue"), p("submit"), p("embed"), p("--nats"), p(NATS)];
                let s = [p("--texts"), i.into(), p("--model"), model];
                let c = [p("--cache"), d.join("emb.sqlite")];
                [&v[..], &s, &c, &[p("--store"), d.join("jobs.sqlite")]].concat()
            },
        },
        Target {
            what: "queue submit summarize --input",
            file: "dev_questions.json",
            good: QUESTIONS,
            wrong_type: r#"[{"id": "q1", "input": 5, "profile": []}]"#,
            wrong_type_wants: &["record 0", "input"],
            args: |i, d| {
                let v = [
                    p("queue"),
                    p("submit"),
                    p("summarize"),
                    p("--nats"),
                    p(NATS),
                ];
                let s = [p("--task"), p("LaMP-4"), p("--input"), i.into()];
                let m = [p("--model"), d.join("no-model.gguf")];
                let st = [p("--summaries"), d.join("s.sqlite")];
                [&v[..], &s, &m, &st, &[p("--store"), d.join("jobs.sqlite")]].concat()
            },
        },
        Target {
            what: "queue submit bench --split",
            file: "amazon_dev.json",
            good: SPLIT,
            wrong_type: SPLIT_WRONG,
            wrong_type_wants: &["text"],
            args: |i, d| {
                let v = [p("queue"), p("submit"), p("bench"), p("--nats"), p(NATS)];
                let s = [p("--task"), p("text"), p("--split"), i.into()];
                let m = [p("--model"), d.join("no-model.gguf")];
                let j = [p("--jobs"), d.join("jobs.sqlite")];
                [&v[..], &s, &m, &j, &[p("--out"), d.join("out")]].concat()
            },
        },
    ]);
    v
}

#[test]
fn every_class_of_bad_input_file_is_refused_naming_the_file() {
    refuse_every_class(targets(), |t, d| d.join(t.file));
}

/// A second summary for the same user once silently replaced the first: which one a prompt
/// got depended on the file's order.
#[test]
fn a_second_summary_for_a_user_is_refused_naming_the_line() {
    let d = tempfile::tempdir().unwrap();
    let text = format!("{SUMMARIES}{{\"id\": \"q1\", \"summary\": \"writes about sport\"}}\n");
    let s = put(d.path(), "summaries.jsonl", &text);
    let q = put(d.path(), "q.json", QUESTIONS);
    let o = put(d.path(), "o.json", OUTPUTS);
    for args in [
        lamp_prompts(q.clone(), Some(s.clone()), d.path()),
        lamp_grid(q, o, Some(s), d.path()),
    ] {
        let before = snapshot(d.path());
        let out = pgraphrag(&args);
        let wants = ["summaries.jsonl: line 2", "\"q1\"", "second summary"];
        if let Some(problem) = problem(&out, &wants, d.path(), &before) {
            panic!("{}: {problem}", args[1].display());
        }
    }
}

/// Files that parse but hold no record once gave exit code 0 and an empty output (or went on
/// to load a model): a questions list `[]`, a CSV with a header only.
#[test]
fn files_without_records_are_refused_naming_the_file() {
    let d = tempfile::tempdir().unwrap();
    let q = put(d.path(), "dev_questions.json", "[]");
    let o = put(
        d.path(),
        "dev_outputs.json",
        r#"{"task": "LaMP_4", "golds": []}"#,
    );
    let news = put(
        d.path(),
        "NewsArticles.csv",
        &format!("{}\n", NEWS.lines().next().unwrap()),
    );
    let convert = |source: &str, input: &Path| {
        let v = [
            p("corpus"),
            p("convert"),
            p("--source"),
            p(source),
            p("--in"),
        ];
        [
            &v[..],
            &[input.into(), p("--out"), d.path().join("c.jsonl")],
        ]
        .concat()
    };
    let runs = [
        (
            lamp_prompts(q.clone(), None, d.path()),
            "dev_questions.json: no questions",
        ),
        (
            lamp_grid(q, o, None, d.path()),
            "dev_questions.json: no questions",
        ),
        (convert("news", &news), "NewsArticles.csv: no documents"),
    ];
    for (args, want) in runs {
        let before = snapshot(d.path());
        let out = pgraphrag(&args);
        if let Some(problem) = problem(&out, &[want], d.path(), &before) {
            panic!(
                "{}: {problem}",
                args[..2]
                    .iter()
                    .map(|a| a.display().to_string())
                    .collect::<Vec<_>>()
                    .join(" ")
            );
        }
    }
}

/// A corpus whose documents are all too short or too few per author once gave exit code 0 and
/// an empty examples file (`multistage build`) or six empty LaMP files (`corpus lamp`): both
/// are refused before anything is written, naming the corpus and why nothing was made.
#[test]
fn a_corpus_that_yields_nothing_is_refused_naming_it_and_why() {
    let d = tempfile::tempdir().unwrap();
    let c = put(d.path(), "news.jsonl", CORPUS);
    let build = [p("multistage"), p("build"), p("--corpus"), c.clone()];
    let lamp = [
        p("corpus"),
        p("lamp"),
        p("--task"),
        p("LaMP-4"),
        p("--from"),
    ];
    for args in [
        [&build[..], &[p("--out"), d.path().join("ms")]].concat(),
        [&lamp[..], &[c.clone(), p("--out"), d.path().join("lamp4")]].concat(),
    ] {
        let before = snapshot(d.path());
        let o = pgraphrag(&args);
        let wants = [
            "news.jsonl: no ",
            "could be made",
            "too short",
            "301 characters",
        ];
        if let Some(problem) = problem(&o, &wants, d.path(), &before) {
            panic!("{} {}: {problem}", args[0].display(), args[1].display());
        }
    }
}

/// Two questions (or two golds) with one id: a gold or a summary found by id could be attached
/// to the wrong question. Refused by the one LaMP reader, naming the file, the record and the
/// id, before any model or tokenizer is read.
#[test]
fn a_repeated_question_or_gold_id_is_refused_naming_the_record() {
    let d = tempfile::tempdir().unwrap();
    let twice = QUESTIONS.replacen("\n]", ",\n {\"id\": \"q1\", \"input\": \"Generate a headline for this article: x\", \"profile\": []}\n]", 1);
    let q2 = put(d.path(), "dev_questions.json", &twice);
    let o2 = put(
        d.path(),
        "dev_outputs.json",
        r#"{"task": "LaMP_4", "golds": [{"id": "q1", "output": "A"}, {"id": "q1", "output": "B"}]}"#,
    );
    let (q, o) = (
        put(d.path(), "q.json", QUESTIONS),
        put(d.path(), "o.json", OUTPUTS),
    );
    let runs = [
        (
            lamp_prompts(q2.clone(), None, d.path()),
            "dev_questions.json",
        ),
        (
            lamp_grid(q2, o.clone(), None, d.path()),
            "dev_questions.json",
        ),
        (lamp_grid(q, o2, None, d.path()), "dev_outputs.json"),
    ];
    for (args, file) in runs {
        let before = snapshot(d.path());
        let out = pgraphrag(&args);
        let want = format!("{file}: record 1: id \"q1\" is already record 0's");
        if let Some(problem) = problem(&out, &[&want], d.path(), &before) {
            panic!("{} / {file}: {problem}", args[1].display());
        }
    }
}

/// `queue submit embed` and `summarize` once named the input file twice in one message
/// (`texts.jsonl: texts.jsonl: line 1: …`), and the reason a file could not be opened twice:
/// each fact is said once.
#[test]
#[cfg(feature = "jetstream")]
fn queue_submit_names_the_input_once() {
    let d = tempfile::tempdir().unwrap();
    let model = d.path().join("encoder");
    std::fs::create_dir(&model).unwrap();
    let embed = |texts: PathBuf| {
        let v = [p("queue"), p("submit"), p("embed"), p("--nats"), p(NATS)];
        let s = [p("--texts"), texts, p("--model"), model.clone()];
        let c = [p("--cache"), d.path().join("emb.sqlite")];
        [
            &v[..],
            &s,
            &c,
            &[p("--store"), d.path().join("jobs.sqlite")],
        ]
        .concat()
    };
    let summarize = |input: PathBuf| {
        let v = [
            p("queue"),
            p("submit"),
            p("summarize"),
            p("--nats"),
            p(NATS),
        ];
        let s = [p("--task"), p("LaMP-4"), p("--input"), input];
        let m = [p("--model"), d.path().join("no-model.gguf")];
        let st = [p("--summaries"), d.path().join("s.sqlite")];
        [
            &v[..],
            &s,
            &m,
            &st,
            &[p("--store"), d.path().join("jobs.sqlite")],
        ]
        .concat()
    };
    let texts = put(d.path(), "texts.jsonl", "{\"id\": 1, \"text\": 5}\n");
    let questions = put(
        d.path(),
        "dev_questions.json",
        r#"[{"id": "q1", "input": 5, "profile": []}]"#,
    );
    let runs = [
        (embed(texts), "texts.jsonl", "line 1"),
        (
            embed(d.path().join("none.jsonl")),
            "none.jsonl",
            "os error 2",
        ),
        (summarize(questions), "dev_questions.json", "record 0"),
        (
            summarize(d.path().join("none.json")),
            "none.json",
            "os error 2",
        ),
    ];
    for (args, file, fact) in runs {
        let before = snapshot(d.path());
        let o = pgraphrag(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        if let Some(problem) = problem(&o, &[file, fact], d.path(), &before) {
            panic!("queue submit {}: {problem}", args[2].display());
        }
        for said in [file, fact] {
            assert_eq!(
                err.matches(said).count(),
                1,
                "{said:?} said more than once: {err}"
            );
        }
    }
}
