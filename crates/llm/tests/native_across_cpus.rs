//! The native engine's row-wise path (the default) computes the same logits, bit for bit, on
//! every CPU and kernel set: x86 with AVX-512 VNNI, AVX-512, AVX2 and portable kernels,
//! AArch64 with NEON (with and without the dot-product extension) and portable kernels. The
//! logits of real prompts on the real SmolLM2 file are checked against one committed fixture,
//! `tests/fixtures/native_logits.json`, which every architecture must reproduce (CI runs this
//! test natively on x86-64 and under `qemu-aarch64`, see `scripts/test_aarch64.sh`).
//!
//! `PGRAPHRAG_BLESS_LOGITS=1` rewrites the fixture from this machine's logits (after a change
//! that is meant to change results; say so in the commit).

use std::path::PathBuf;

use pgraphrag_core::Prompt;
use pgraphrag_core::simd::CpuFeatures;
use pgraphrag_llm::{Activations, Engine, GgufModel, GgufOptions, Kernels, Prefill};
use serde_json::{Value, json};

#[path = "support/model.rs"]
mod model;

fn fixture_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/native_logits.json")
}

fn prompts() -> Vec<Prompt> {
    vec![
        Prompt::user("What is the capital of France? Answer in one word."),
        Prompt::Raw("The quick brown fox".into()),
    ]
}

/// FNV-1a over the little-endian bytes of the logits.
fn fnv64(v: &[f32]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for x in v {
        for b in x.to_le_bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

fn argmax(v: &[f32]) -> usize {
    v.iter()
        .enumerate()
        .fold(
            (0, f32::NEG_INFINITY),
            |b, (i, &x)| if x > b.1 { (i, x) } else { b },
        )
        .0
}

fn load(activations: Activations, kernels: Kernels) -> GgufModel {
    let p = model::model_path();
    assert!(
        p.exists(),
        "SmolLM2 model {} is missing: run scripts/fetch-llms.sh --smollm-only (or set PGRAPHRAG_MODEL)",
        p.display()
    );
    GgufModel::load(
        &p,
        GgufOptions {
            engine: Engine::Native,
            activations,
            prefill: Prefill::Rowwise,
            kernels,
            ..Default::default()
        },
    )
    .unwrap()
}

/// One case per (activations, prompt): the prompt's ids, the logits' hash, argmax and first
/// values (bits), from every kernel set this CPU runs, which must all agree.
/// The activation types, as the fixture names them.
const ACTIVATIONS: [(&str, Activations); 2] = [("q8", Activations::Q8), ("f32", Activations::F32)];

/// The fixture's cases of the activation types `which` (all of them, in fixture order, for
/// [`ACTIVATIONS`]).
fn cases(which: &[(&str, Activations)]) -> Vec<Value> {
    let mut out = Vec::new();
    for &(act_name, act) in which {
        let mut seen: Vec<String> = Vec::new();
        let mut first: Option<Vec<Value>> = None;
        // The CPU features each choice leaves the dispatchers, to skip (before loading, which
        // is slow under emulation) a choice that means the same set as an earlier one here.
        let cpu = CpuFeatures::detect();
        let mut tried: Vec<CpuFeatures> = Vec::new();
        for (kernels, features) in [
            (Kernels::Auto, cpu),
            (Kernels::Avx2, cpu.without_avx512()),
            (Kernels::NeonWithoutDotprod, cpu.without_dotprod()),
            (Kernels::Portable, CpuFeatures::portable()),
        ] {
            if tried.contains(&features) {
                continue;
            }
            tried.push(features);
            if kernels == Kernels::Portable && std::env::var_os("PGRAPHRAG_SKIP_PORTABLE").is_some()
            {
                // Under emulation (scripts/test_aarch64.sh) the portable kernels cost a third of
                // the run and prove nothing new: they are plain Rust (no fused multiply-add unless
                // written), so their bits are the same on every architecture, and the native x86
                // run checks them against this fixture.
                eprintln!(
                    "{act_name} activations: portable kernels skipped (PGRAPHRAG_SKIP_PORTABLE)"
                );
                continue;
            }
            let m = load(act, kernels);
            let used = m.kernels_used().expect("native engine").to_string();
            if seen.contains(&used) {
                continue;
            }
            eprintln!("{act_name} activations, kernels {used}");
            let mine: Vec<Value> = prompts()
                .iter()
                .map(|p| {
                    let mut ids = m.prompt_tokens(p).unwrap();
                    let logits = m.next_token_logits(&ids).unwrap();
                    // One decoding step (the prompt's KV cache is reused, so the new token
                    // goes through the single-token kernels).
                    ids.push(argmax(&logits) as u32);
                    let next = m.next_token_logits(&ids).unwrap();
                    ids.pop();
                    json!({
                        "activations": act_name,
                        "prompt": format!("{p:?}"),
                        "ids": ids,
                        "vocab": logits.len(),
                        "argmax": argmax(&logits),
                        "fnv64": fnv64(&logits),
                        "head_bits": logits[..8].iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                        "next_argmax": argmax(&next),
                        "next_fnv64": fnv64(&next),
                    })
                })
                .collect();
            match &first {
                None => first = Some(mine),
                Some(f) => assert_eq!(
                    f, &mine,
                    "kernels {used} differ from {} on this CPU",
                    seen[0]
                ),
            }
            seen.push(used);
        }
        out.extend(first.expect("at least one kernel set"));
    }
    out
}

/// The committed fixture, or this machine's logits written over it with
/// `PGRAPHRAG_BLESS_LOGITS=1` (then `None`).
fn fixture() -> Option<Value> {
    let path = fixture_path();
    if std::env::var_os("PGRAPHRAG_BLESS_LOGITS").is_some() {
        let got = json!({
            "model_file": pgraphrag_llm::DEFAULT_MODEL_FILE,
            "model_bytes": std::fs::metadata(model::model_path()).map(|m| m.len()).unwrap_or(0),
            "cases": cases(&ACTIVATIONS),
        });
        let text = serde_json::to_string_pretty(&got).unwrap() + "\n";
        std::fs::write(&path, text).unwrap();
        eprintln!("wrote {}", path.display());
        return None;
    }
    let want: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (PGRAPHRAG_BLESS_LOGITS=1 writes it)",
            path.display()
        )
    }))
    .unwrap();
    let bytes = std::fs::metadata(model::model_path())
        .map(|m| m.len())
        .unwrap_or(0);
    assert_eq!(
        json!(bytes),
        want["model_bytes"],
        "the fixture was made with another model file"
    );
    Some(want)
}

/// This machine's logits with activations `act_name` against the fixture's. One test per
/// activation type, so the two run side by side (the emulated aarch64 run takes half the time).
fn check(act_name: &str) {
    // Blessing writes both activation types' cases from the q8 test.
    let Some(want) = fixture() else { return };
    let act = ACTIVATIONS.iter().find(|a| a.0 == act_name).unwrap();
    let got = cases(std::slice::from_ref(act));
    let w: Vec<&Value> = want["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["activations"] == act_name)
        .collect();
    assert_eq!(got.len(), w.len());
    for (g, w) in got.iter().zip(w) {
        assert_eq!(g["ids"], w["ids"], "tokenizer: {}", w["prompt"]);
        assert_eq!(
            g,
            w,
            "logits of {} with {} activations on {} ({:?})",
            w["prompt"],
            w["activations"],
            std::env::consts::ARCH,
            pgraphrag_core::simd::CpuFeatures::detect()
        );
    }
}

#[test]
fn q8_logits_are_the_committed_ones_on_every_cpu_and_kernel_set() {
    check("q8");
}

#[test]
fn f32_logits_are_the_committed_ones_on_every_cpu_and_kernel_set() {
    if std::env::var_os("PGRAPHRAG_BLESS_LOGITS").is_none() {
        check("f32");
    }
}
