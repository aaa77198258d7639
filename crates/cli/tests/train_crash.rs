//! `pgraphrag train lora` killed with `kill -9` mid-run, then run again with the same command:
//! it resumes from its last checkpoint, repeats no finished step, and ends with the adapter an
//! uninterrupted run with the same seed writes, tensor for tensor, bit for bit. Real SmolLM2.
//!
//! Needs `models/SmolLM2-135M-Instruct.Q4_1.gguf` (`scripts/fetch-llms.sh --smollm-only`);
//! fails loudly without it.
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod support;
use support::model;

/// The command: one epoch of 4 steps (one example each), a checkpoint after every step.
fn train(data: &Path, out: &Path, ckpt: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pgraphrag"));
    c.args([
        "train",
        "lora",
        "--batch-size",
        "1",
        "--lr",
        "1e-2",
        "--checkpoint-every",
        "1",
        "--seed",
        "7",
    ])
    .arg("--model")
    .arg(model())
    .arg("--train")
    .arg(data)
    .arg("--out")
    .arg(out)
    .arg("--checkpoint")
    .arg(ckpt)
    .env("RAYON_NUM_THREADS", "2");
    c
}

fn finish(c: &mut Command) -> String {
    let o = c.output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "train lora failed: {}\n{err}", o.status);
    err
}

/// Every tensor of a safetensors file as f32 bits, by name.
fn tensors(path: &Path) -> Vec<(String, Vec<u32>)> {
    let mut v: Vec<(String, Vec<u32>)> =
        candle_core::safetensors::load(path, &candle_core::Device::Cpu)
            .unwrap()
            .into_iter()
            .map(|(n, t)| {
                let vals = t.flatten_all().unwrap().to_vec1::<f32>().unwrap();
                (n, vals.iter().map(|x| x.to_bits()).collect())
            })
            .collect();
    v.sort();
    v
}

#[test]
fn killed_with_sigkill_it_resumes_and_ends_bit_identical() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("train.jsonl");
    std::fs::write(
        &data,
        [
            r#"{"prompt":"Rate this review: great kettle, boils fast.","target":"Rating: 5"}"#,
            r#"{"prompt":"Rate this review: it broke after a week.","target":"Rating: 1"}"#,
            r#"{"prompt":"Rate this review: fine for the price.","target":"Rating: 4"}"#,
            r#"{"prompt":"Rate this review: arrived late and dented.","target":"Rating: 2"}"#,
        ]
        .join("\n"),
    )
    .unwrap();
    let (whole, whole_ckpt) = (dir.path().join("whole.st"), dir.path().join("whole.ckpt"));
    finish(&mut train(&data, &whole, &whole_ckpt));

    let (killed, ckpt) = (dir.path().join("killed.st"), dir.path().join("killed.ckpt"));
    let mut child = train(&data, &killed, &ckpt)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while !ckpt.exists() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before its first checkpoint"
        );
        assert!(t.elapsed() < Duration::from_secs(300), "no checkpoint");
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert!(
        !killed.exists(),
        "the run finished before the kill; the test needs more steps"
    );
    let err = finish(&mut train(&data, &killed, &ckpt));
    assert!(err.contains("resumed from step"), "no resumption:\n{err}");
    assert!(
        !err.lines().any(|l| l.starts_with("step 1 (epoch")),
        "step 1 ran again:\n{err}"
    );
    assert_eq!(tensors(&killed), tensors(&whole));
}
