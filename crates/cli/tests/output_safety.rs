//! Issue 39: no command writes over its own input, through a link, into a FIFO, a device or a
//! folder. Every refusal is a usage error (exit code 2) that comes before any model loads or
//! any input is read, so these runs are fast and need no model or data.
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// What an input holds before the run; it must hold exactly this after.
const PRECIOUS: &[u8] = b"precious input \xe2\x80\x94 not to be replaced\n";

fn pgraphrag(args: &[String]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_pgraphrag"))
        .args(args)
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the pgraphrag binary runs");
    // A refusal is immediate; a run that opened a FIFO would block for good.
    let t = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("pgraphrag {args:?} did not return within 60 s (blocked on a FIFO?)");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn s(p: &Path) -> String {
    p.to_str().unwrap().to_string()
}

/// A file holding [`PRECIOUS`].
fn precious(path: &Path) -> PathBuf {
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(path, PRECIOUS).unwrap();
    path.to_path_buf()
}

/// Runs `args`, expecting a usage error whose message contains each of `wants`.
fn refused(args: &[String], wants: &[&str]) -> String {
    let t = Instant::now();
    let o = pgraphrag(args);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "pgraphrag {args:?}: {err}");
    for w in wants {
        assert!(err.contains(w), "pgraphrag {args:?}: {err:?} lacks {w:?}");
    }
    assert!(
        t.elapsed() < Duration::from_secs(30),
        "pgraphrag {args:?} took {:?}: the refusal must come first",
        t.elapsed()
    );
    err
}

/// One output = input case: the arguments, the input that must survive, the two flags named.
struct Case {
    args: Vec<String>,
    input: PathBuf,
    output_flag: &'static str,
    input_flag: &'static str,
}

/// Every command that writes a file, each run with an output that is one of its inputs.
fn cases(d: &Path) -> Vec<Case> {
    let a = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let missing = s(&d.join("no-such-model"));
    let mut out = Vec::new();
    let mut case = |args: Vec<String>, input: PathBuf, output_flag, input_flag| {
        out.push(Case {
            args,
            input,
            output_flag,
            input_flag,
        })
    };
    let f = precious(&d.join("rank/split.json"));
    let args = [a(&["rank", "--task", "text", "--split"]), a(&[&s(&f)])];
    // The same file through another name.
    let other = s(&d.join("rank/./split.json"));
    case(
        [args.concat(), a(&["--out", &other])].concat(),
        f,
        "--out",
        "--split",
    );

    let f = precious(&d.join("metrics/pairs.jsonl"));
    let args = a(&["metrics", "--pairs", &s(&f), "--out", &s(&f)]);
    case(args, f, "--out", "--pairs");

    let f = precious(&d.join("embed/texts.jsonl"));
    let args = a(&[
        "embed",
        "--model",
        &missing,
        "--texts",
        &s(&f),
        "--out",
        &s(&f),
    ]);
    case(args, f, "--out", "--texts");

    let f = precious(&d.join("summarize/q.json"));
    let store = s(&d.join("summarize/store.sqlite"));
    let base = a(&[
        "summarize",
        "--task",
        "LaMP-4",
        "--model",
        &missing,
        "--store",
        &store,
    ]);
    let args = [base.clone(), a(&["--input", &s(&f), "--export", &s(&f)])].concat();
    case(args, f.clone(), "--export", "--input");
    let args = [base, a(&["--input", &s(&f), "--journal", &s(&f)])].concat();
    case(args, f, "--journal", "--input");

    let f = precious(&d.join("bench/amazon_dev.json"));
    let base = a(&[
        "bench",
        "--task",
        "rating",
        "--model",
        &missing,
        "--split",
        &s(&f),
    ]);
    let out_dir = s(&d.join("bench/out"));
    let args = [base.clone(), a(&["--out", &out_dir, "--journal", &s(&f)])].concat();
    case(args, f.clone(), "--journal", "--split");
    let args = [base, a(&["--out", &out_dir, "--export-prompts", &s(&f)])].concat();
    case(args, f, "--export-prompts", "--split");

    // `multistage build --out DIR` writes DIR/examples.jsonl: here, its corpus.
    let f = precious(&d.join("ms/examples.jsonl"));
    let args = a(&[
        "multistage",
        "build",
        "--corpus",
        &s(&f),
        "--out",
        &s(&d.join("ms")),
    ]);
    case(args, f, "--out", "--corpus");

    let f = precious(&d.join("ml-100k/ml-100k.kg"));
    let ml = s(&d.join("ml-100k"));
    let args = a(&[
        "recsys",
        "index",
        "--ml100k",
        &ml,
        "--encoder",
        &missing,
        "--out",
        &s(&f),
    ]);
    case(args, f.clone(), "--out", "--ml100k");
    let args = a(&[
        "recsys",
        "eval",
        "--dataset",
        "ml100k",
        "--rows",
        "1",
        "--ml100k",
        &ml,
        "--encoder",
        &missing,
        "--model",
        &missing,
        "--index",
        &s(&d.join("recsys/index.bin")),
        "--out",
        &s(&f),
    ]);
    case(args, f.clone(), "--out", "--ml100k");
    let ckpt = s(&d.join("kragrec/ckpt.safetensors"));
    let args = a(&[
        "train",
        "kragrec",
        "--ml100k",
        &ml,
        "--encoder",
        &missing,
        "--model",
        &missing,
        "--index",
        &s(&d.join("kragrec/index.bin")),
        "--checkpoint",
        &ckpt,
        "--out",
        &s(&f),
    ]);
    case(args, f, "--out", "--ml100k");

    let f = precious(&d.join("recsys/index.bin"));
    let args = a(&[
        "recsys",
        "eval",
        "--dataset",
        "ml100k",
        "--rows",
        "1",
        "--ml100k",
        &ml,
        "--encoder",
        &missing,
        "--model",
        &missing,
        "--index",
        &s(&f),
        "--out",
        &s(&f),
    ]);
    case(args, f, "--out", "--index");

    let f = precious(&d.join("lora/train.jsonl"));
    let ckpt = s(&d.join("lora/ckpt.safetensors"));
    let base = a(&["train", "lora", "--model", &missing, "--train", &s(&f)]);
    let args = [base.clone(), a(&["--checkpoint", &ckpt, "--out", &s(&f)])].concat();
    case(args, f.clone(), "--out", "--train");
    let args = [base, a(&["--out", &ckpt, "--checkpoint", &s(&f)])].concat();
    case(args, f, "--checkpoint", "--train");

    let f = precious(&d.join("plot/results.csv"));
    case(
        a(&["plot", "--csv", &s(&f), "--out", &s(&f)]),
        f,
        "--out",
        "--csv",
    );

    let f = precious(&d.join("lamp/q.json"));
    let args = a(&[
        "lamp",
        "prompts",
        "--task",
        "LaMP-4",
        "--k",
        "1",
        "--max-length",
        "512",
        "--tokenizer",
        &missing,
        "--questions",
        &s(&f),
        "--out",
        &s(&f),
    ]);
    case(args, f, "--out", "--questions");

    // `lamp grid --out DIR` writes DIR/results.md: here, its questions.
    let f = precious(&d.join("grid/results.md"));
    let args = a(&[
        "lamp",
        "grid",
        "--task",
        "LaMP-4",
        "--model",
        &missing,
        "--outputs",
        &missing,
        "--questions",
        &s(&f),
        "--out",
        &s(&d.join("grid")),
    ]);
    case(args, f, "--out", "--questions");

    let f = precious(&d.join("corpus/split.json"));
    let args = a(&[
        "corpus",
        "convert",
        "--source",
        "pgraphrag",
        "--in",
        &s(&f),
        "--out",
        &s(&f),
    ]);
    case(args, f, "--out", "--in");

    // `corpus lamp --out DIR` writes DIR/train_questions.json: here, its input split.
    let f = precious(&d.join("clamp/train_questions.json"));
    let args = a(&[
        "corpus",
        "lamp",
        "--task",
        "LaMP-3",
        "--from",
        &s(&f),
        "--out",
        &s(&d.join("clamp")),
    ]);
    case(args, f, "--out", "--from");

    let f = precious(&d.join("msx/examples.jsonl"));
    let args = a(&[
        "multistage",
        "export",
        "--examples",
        &s(&f),
        "--out",
        &s(&f),
    ]);
    case(args, f, "--out", "--examples");

    let f = precious(&d.join("msr/examples.jsonl"));
    let args = a(&[
        "multistage",
        "run",
        "--model",
        &missing,
        "--examples",
        &s(&f),
        "--out",
        &s(&d.join("msr/out")),
        "--journal",
        &s(&f),
    ]);
    case(args, f, "--journal", "--examples");

    let f = precious(&d.join("queue/jobs.sqlite"));
    let args = a(&[
        "queue",
        "export",
        "--job",
        "j",
        "--store",
        &s(&f),
        "--out",
        &s(&f),
    ]);
    case(args, f, "--out", "--store");
    out
}

#[test]
fn an_output_that_is_an_input_is_refused_and_the_input_kept() {
    let d = tempfile::tempdir().unwrap();
    let cases = cases(d.path());
    assert!(cases.len() >= 14);
    for c in &cases {
        let want = format!("{} and {} are the same file", c.output_flag, c.input_flag);
        let err = refused(
            &c.args,
            &[&want, &format!("choose another {}", c.output_flag)],
        );
        assert_eq!(
            std::fs::read(&c.input).unwrap(),
            PRECIOUS,
            "pgraphrag {:?} changed its input ({err})",
            c.args
        );
        // Nothing written beside it either (no temporary file, no sidecar).
        let dir = c.input.parent().unwrap();
        for e in std::fs::read_dir(dir).unwrap() {
            let n = e.unwrap().file_name().to_string_lossy().into_owned();
            assert!(!n.ends_with(".tmp"), "{n} left in {}", dir.display());
        }
    }
}

#[cfg(unix)]
#[test]
fn a_linked_output_is_refused_and_link_and_target_kept() {
    let d = tempfile::tempdir().unwrap();
    let csv = d.path().join("r.csv");
    std::fs::write(&csv, "mode_k,MAE\nnone_k1,1.5\n").unwrap();
    let real = precious(&d.path().join("real.svg"));
    let link = d.path().join("link.svg");
    std::os::unix::fs::symlink("real.svg", &link).unwrap();
    let pairs = d.path().join("pairs.jsonl");
    std::fs::write(
        &pairs,
        "{\"id\":1,\"prediction\":\"a\",\"reference\":\"a\"}\n",
    )
    .unwrap();
    let split = precious(&d.path().join("amazon_dev.json"));
    let missing = s(&d.path().join("no-such-model"));
    for args in [
        vec!["plot", "--csv", &s(&csv), "--out", &s(&link)],
        vec!["metrics", "--pairs", &s(&pairs), "--out", &s(&link)],
        vec![
            "bench",
            "--task",
            "rating",
            "--model",
            &missing,
            "--split",
            &s(&split),
            "--out",
            &s(&d.path().join("out")),
            "--journal",
            &s(&link),
        ],
    ] {
        let args: Vec<String> = args.into_iter().map(String::from).collect();
        refused(
            &args,
            &["is a symbolic link", "write to the target path instead"],
        );
        assert_eq!(std::fs::read(&real).unwrap(), PRECIOUS);
        assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
        assert_eq!(std::fs::read_link(&link).unwrap(), Path::new("real.svg"));
    }
    assert_eq!(std::fs::read(&split).unwrap(), PRECIOUS);
}

#[cfg(unix)]
#[test]
fn a_fifo_output_is_refused_without_blocking() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("pipe");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let csv = d.path().join("r.csv");
    std::fs::write(&csv, "mode_k,MAE\nnone_k1,1.5\n").unwrap();
    let input = precious(&d.path().join("q.json"));
    let missing = s(&d.path().join("no-such-model"));
    let store = s(&d.path().join("store.sqlite"));
    for args in [
        vec!["plot", "--csv", &s(&csv), "--out", &s(&fifo)],
        vec!["metrics", "--pairs", &s(&csv), "--out", &s(&fifo)],
        vec![
            "summarize",
            "--task",
            "LaMP-4",
            "--model",
            &missing,
            "--store",
            &store,
            "--input",
            &s(&input),
            "--journal",
            &s(&fifo),
        ],
    ] {
        let args: Vec<String> = args.into_iter().map(String::from).collect();
        refused(&args, &["named pipe (FIFO)"]);
    }
    assert!(!Path::new(&store).exists(), "nothing was opened");
}

#[test]
fn a_folder_or_a_device_as_output_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let csv = d.path().join("r.csv");
    std::fs::write(&csv, "mode_k,MAE\nnone_k1,1.5\n").unwrap();
    let split = precious(&d.path().join("split.json"));
    let dir = s(d.path());
    for args in [
        vec!["plot", "--csv", &s(&csv), "--out", &dir],
        vec!["metrics", "--pairs", &s(&csv), "--out", &dir],
        vec![
            "rank",
            "--task",
            "text",
            "--split",
            &s(&split),
            "--out",
            &dir,
        ],
    ] {
        let args: Vec<String> = args.into_iter().map(String::from).collect();
        refused(&args, &["is a folder"]);
    }
    // An output folder that is a file.
    let args: Vec<String> = [
        "multistage",
        "build",
        "--corpus",
        &s(&csv),
        "--out",
        &s(&split),
    ]
    .map(String::from)
    .to_vec();
    refused(&args, &["is not a folder"]);
    assert_eq!(std::fs::read(&split).unwrap(), PRECIOUS);
    #[cfg(unix)]
    {
        let args: Vec<String> = ["plot", "--csv", &s(&csv), "--out", "/dev/null"]
            .map(String::from)
            .to_vec();
        refused(&args, &["character device"]);
    }
}

#[test]
fn metrics_replaces_its_output_whole() {
    let d = tempfile::tempdir().unwrap();
    let pairs = d.path().join("pairs.jsonl");
    let lines: String = (0..50)
        .map(|i| format!("{{\"id\":{i},\"prediction\":\"a b c\",\"reference\":\"a b d\"}}\n"))
        .collect();
    std::fs::write(&pairs, lines).unwrap();
    let out = precious(&d.path().join("scores.jsonl"));
    let args: Vec<String> = [
        "metrics",
        "--quiet",
        "--pairs",
        &s(&pairs),
        "--out",
        &s(&out),
    ]
    .map(String::from)
    .to_vec();
    let o = pgraphrag(&args);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(text.lines().count(), 50);
    assert!(text.lines().all(|l| l.starts_with("{\"id\":")));
    let names: Vec<String> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
}
