//! Fuzz target: the GGUF header reader ([`read_gguf_header`]) on arbitrary bytes, on
//! mutations of the first 64 KB of the real SmolLM2 model file (read from `models/`, never
//! committed) and of a small synthetic file with every metadata type and a tensor directory,
//! and on huge counts and lengths written over every length field.
//!
//! Bad input must give a typed [`LlmError`], never a panic, and a length of 2^60 must not
//! allocate 2^60 bytes (an allocation failure aborts the whole test binary).
//! Budget and `PGRAPHRAG_FUZZ_CASES`: see `crates/data/tests/support/fuzz.rs`.

use std::io::Cursor;
use std::path::Path;
use std::sync::OnceLock;

use pgraphrag_llm::{LlmError, read_gguf_header};
use proptest::prelude::*;

#[path = "../../data/tests/support/fuzz.rs"]
mod fuzz;
#[path = "support/model.rs"]
mod model;

const NAME: &str = "fuzz.gguf";

/// Little-endian integers that make lengths, counts, types and dimensions interesting.
fn tokens() -> &'static [Vec<u8>] {
    static T: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    T.get_or_init(|| {
        let mut t: Vec<Vec<u8>> = Vec::new();
        for v in [
            0u64,
            1,
            2,
            7,
            8,
            9,
            255,
            1 << 31,
            1 << 32,
            1 << 60,
            1 << 63,
            u64::MAX,
            u64::MAX - 1,
        ] {
            t.push(v.to_le_bytes().to_vec());
        }
        for v in [0u32, 1, 3, 8, 9, 12, 13, 30, 31, 0xffff, u32::MAX] {
            t.push(v.to_le_bytes().to_vec());
        }
        t.push(b"GGUF".to_vec());
        t.push(vec![0xff; 3]);
        t.push(vec![0; 5]);
        t
    })
}

fn dict() -> Vec<&'static [u8]> {
    tokens().iter().map(Vec::as_slice).collect()
}

struct Builder(Vec<u8>);

impl Builder {
    fn new(n_tensors: u64, n_kv: u64) -> Self {
        let mut b = b"GGUF".to_vec();
        b.extend(3u32.to_le_bytes());
        b.extend(n_tensors.to_le_bytes());
        b.extend(n_kv.to_le_bytes());
        Builder(b)
    }
    fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend(v.to_le_bytes());
        self
    }
    fn u64(&mut self, v: u64) -> &mut Self {
        self.0.extend(v.to_le_bytes());
        self
    }
    fn str(&mut self, s: &str) -> &mut Self {
        self.u64(s.len() as u64);
        self.0.extend(s.as_bytes());
        self
    }
    fn key(&mut self, k: &str, ty: u32) -> &mut Self {
        self.str(k).u32(ty)
    }
    fn tensor(&mut self, name: &str, dims: &[u64], ty: u32, offset: u64) -> &mut Self {
        self.str(name).u32(dims.len() as u32);
        for &d in dims {
            self.u64(d);
        }
        self.u32(ty).u64(offset)
    }
}

/// A small valid file: every metadata type, nested arrays, three tensors.
fn synthetic() -> &'static [u8] {
    static S: OnceLock<Vec<u8>> = OnceLock::new();
    S.get_or_init(|| {
        let mut b = Builder::new(3, 9);
        b.key("general.architecture", 8).str("llama");
        b.key("general.alignment", 4).u32(64);
        b.key("a.u8", 0).0.push(7);
        b.key("a.f32", 6).u32(1.5f32.to_bits());
        b.key("a.bool", 7).0.push(1);
        b.key("a.u64", 10).u64(1 << 40);
        b.key("a.f64", 12).u64(2.5f64.to_bits());
        b.key("tokenizer.ggml.tokens", 9)
            .u32(8)
            .u64(3)
            .str("a")
            .str("b")
            .str("ab");
        b.key("nested", 9).u32(9).u64(2);
        b.u32(4).u64(2).u32(1).u32(2);
        b.u32(8).u64(1).str("x");
        b.tensor("token_embd.weight", &[64, 3], 0, 0);
        b.tensor("blk.0.attn_q.weight", &[32, 2], 3, 768);
        b.tensor("output_norm.weight", &[64], 1, 832); // the next 64-byte boundary
        let mut v = b.0;
        v.resize(v.len().div_ceil(64) * 64 + 1024, 0);
        v
    })
}

/// The first 64 KB of the real model file (its metadata starts there; the vocabulary runs on).
fn real_prefix() -> &'static [u8] {
    static S: OnceLock<Vec<u8>> = OnceLock::new();
    S.get_or_init(|| {
        let p = model::model_path();
        match std::fs::read(&p) {
            Ok(mut b) => {
                b.truncate(1 << 16);
                b
            }
            Err(e) => {
                eprintln!(
                    "fuzz_gguf: {} unreadable ({e}); mutating the synthetic file only",
                    p.display()
                );
                synthetic().to_vec()
            }
        }
    })
}

/// The real prefix made complete: no tensors and as many of its metadata entries as are
/// whole within 64 KB (found with the reader itself), so mutations of it can still parse.
fn real_complete() -> &'static [u8] {
    static S: OnceLock<Vec<u8>> = OnceLock::new();
    S.get_or_init(|| {
        let mut b = real_prefix().to_vec();
        b[8..16].copy_from_slice(&0u64.to_le_bytes());
        let n_kv = u64::from_le_bytes(b[16..24].try_into().unwrap());
        for k in (1..=n_kv.min(64)).rev() {
            b[16..24].copy_from_slice(&k.to_le_bytes());
            if read_gguf_header(&mut Cursor::new(&b), NAME.as_ref()).is_ok() {
                return b;
            }
        }
        synthetic().to_vec()
    })
}

fn parse(bytes: &[u8]) -> Result<(), TestCaseError> {
    let r = fuzz::no_panic(bytes, |b| {
        read_gguf_header(&mut Cursor::new(b), Path::new(NAME))
    })?;
    match r {
        Ok(h) => prop_assert!(h.data_offset <= bytes.len() as u64 + u32::MAX as u64),
        Err(LlmError::InvalidGguf { path, reason }) => {
            prop_assert_eq!(path, Path::new(NAME));
            prop_assert!(!reason.is_empty());
        }
        Err(e) => return Err(TestCaseError::fail(format!("unexpected error kind: {e:?}"))),
    }
    Ok(())
}

/// Overwrites 8 bytes at `at` with a huge or odd little-endian number (a length, a count).
fn with_number(seed: &[u8], at: usize, v: u64) -> Vec<u8> {
    let mut b = seed.to_vec();
    let at = at.min(b.len().saturating_sub(8));
    let end = (at + 8).min(b.len());
    b[at..end].copy_from_slice(&v.to_le_bytes()[..end - at]);
    b
}

proptest! {
    #![proptest_config(fuzz::config("gguf/bytes", 600_000))]
    #[test]
    fn gguf_arbitrary_bytes(tail in proptest::collection::vec(any::<u8>(), 0..512), magic in any::<bool>(), v in 1u32..4) {
        // Half the inputs get a valid magic and version so the reader goes past them.
        let mut b = if magic { Builder::new(0, 0).0[..8].to_vec() } else { Vec::new() };
        if magic {
            b[4..8].copy_from_slice(&v.to_le_bytes());
        }
        b.extend(tail);
        parse(&b)?;
    }
}

proptest! {
    #![proptest_config(fuzz::config("gguf/mutations", 75_000))]
    #[test]
    fn gguf_mutations(which in 0u8..3, edits in fuzz::edits(8)) {
        let seed = match which {
            0 => real_prefix(),
            1 => real_complete(),
            _ => synthetic(),
        };
        parse(&fuzz::apply(seed, &edits, &dict()))?;
    }
}

proptest! {
    #![proptest_config(fuzz::config("gguf/huge-lengths", 120_000))]
    /// A huge number over any 8 bytes of the small files (every count, length, dimension and
    /// offset among them), version 1 (32-bit lengths) too.
    #[test]
    fn gguf_huge_lengths(
        which in any::<bool>(),
        at in any::<proptest::sample::Index>(),
        shift in 20u32..64,
        low in any::<u16>(),
        v1 in any::<bool>(),
    ) {
        let seed = if which { synthetic() } else { real_complete() };
        let len = if which { seed.len() } else { 4096 };
        let mut b = with_number(seed, at.index(len), (1u64 << shift) | low as u64);
        if v1 {
            b[4..8].copy_from_slice(&1u32.to_le_bytes());
        }
        parse(&b)?;
    }
}

proptest! {
    #![proptest_config(fuzz::config("gguf/load", 3_600))]
    /// The whole loader ([`GgufModel::load`](pgraphrag_llm::GgufModel::load): header, tensor
    /// bounds, model hyperparameters) on mutations of the synthetic file.
    #[test]
    fn gguf_load_mutations(edits in fuzz::edits(6)) {
        let b = fuzz::apply(synthetic(), &edits, &dict());
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(NAME);
        std::fs::write(&p, &b).unwrap();
        let r = fuzz::no_panic(&b, |_| pgraphrag_llm::GgufModel::load(&p, Default::default()))?;
        if let Err(e) = r {
            prop_assert!(e.to_string().contains(NAME), "{e}");
        }
    }
}

#[test]
fn the_seeds_parse() {
    let h = read_gguf_header(&mut Cursor::new(synthetic()), NAME.as_ref()).unwrap();
    assert_eq!(h.tensor_names.len(), 3);
    assert_eq!(h.metadata_keys.len(), 9);
    assert_eq!(h.data_offset % 64, 0);
    let h = read_gguf_header(&mut Cursor::new(real_complete()), NAME.as_ref()).unwrap();
    assert!(
        h.metadata_keys.iter().any(|k| k == "general.architecture"),
        "{h:?}"
    );
    assert!(read_gguf_header(&mut Cursor::new(real_prefix()), NAME.as_ref()).is_err());
}

/// The whole real header parses through the public entry point too.
#[test]
fn the_real_file_parses() {
    let p = model::model_path();
    let mut f = std::fs::File::open(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let h = read_gguf_header(&mut f, &p).unwrap();
    assert_eq!(h.tensor_names.len(), 272);
    assert_eq!(h.metadata_keys.len(), 33);
}

// Regression tests: each input below crashed, or would allocate without bound, before the
// reader checked it.

fn invalid(b: &[u8]) -> String {
    match read_gguf_header(&mut Cursor::new(b), NAME.as_ref()) {
        Err(LlmError::InvalidGguf { reason, .. }) => reason,
        other => panic!("expected InvalidGguf, got {other:?}"),
    }
}

#[test]
fn huge_lengths_are_errors_not_allocations() {
    // A string of 2^60 bytes.
    let mut b = Builder::new(0, 1);
    b.u64(1 << 60);
    b.0.resize(b.0.len() + 64, b'a');
    assert!(invalid(&b.0).contains("runs past the end"));
    // 2^60 metadata entries, 2^60 tensors.
    assert!(invalid(&Builder::new(0, 1 << 60).0).contains("cannot fit"));
    assert!(invalid(&Builder::new(1 << 60, 0).0).contains("cannot fit"));
    // An array of 2^60 strings.
    let mut b = Builder::new(0, 1);
    b.key("k", 9).u32(8).u64(1 << 60);
    b.0.resize(b.0.len() + 64, 0);
    assert!(invalid(&b.0).contains("runs past the end"));
}

#[test]
fn array_counts_are_checked_against_the_element_size() {
    // 4,000 u64 elements need 32,000 bytes; the file has about 4,000 left. (The reader used
    // to check the count against one byte per element only, and reserve room for that many
    // values first: up to 32 times the file's size.)
    let mut b = Builder::new(0, 1);
    b.key("k", 9).u32(10).u64(4000);
    b.0.resize(b.0.len() + 4000, 0);
    assert!(invalid(&b.0).contains("array of 4000 elements"));
}

#[test]
fn deeply_nested_arrays_are_an_error() {
    let mut b = Builder::new(0, 1);
    b.key("k", 9);
    for _ in 0..20 {
        b.u32(9).u64(1);
    }
    b.0.resize(b.0.len() + 64, 0);
    assert!(invalid(&b.0).contains("nested deeper"));
}

#[test]
fn a_tensor_too_big_for_usize_is_an_error() {
    // 2^62 f32 values: their byte size (2^64) overflowed `TensorInfo::byte_size` when the
    // loader checked that the tensor lies inside the file (a panic in debug builds).
    let mut b = Builder::new(1, 0);
    b.tensor("t", &[1 << 31, 1 << 31], 0, 0);
    b.0.resize(b.0.len() + 256, 0);
    assert!(
        invalid(&b.0).contains("more bytes than a usize holds"),
        "{}",
        invalid(&b.0)
    );
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("huge-tensor.gguf");
    std::fs::write(&p, &b.0).unwrap();
    let e = pgraphrag_llm::GgufModel::load(&p, Default::default()).unwrap_err();
    assert!(matches!(e, LlmError::InvalidGguf { .. }), "{e:?}");
}
