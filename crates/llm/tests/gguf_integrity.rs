//! Issue 39, item 3: a damaged GGUF file is refused whole at load with
//! [`LlmError::InvalidGguf`] naming the file and what is wrong, never a panic or a wrong
//! answer. Each test damages a copy of the real SmolLM2 model (`models/`, see
//! `support/model.rs`) the way a disk, a download or an editor might: a tensor offset moved off
//! its alignment or onto another tensor, a metadata key written twice, a scale flipped to
//! infinity, the file cut short by one byte.
use std::path::{Path, PathBuf};

use pgraphrag_llm::{GgufModel, GgufOptions, LlmError, LlmTokenizer};

#[path = "support/model.rs"]
mod model;

/// Where a tensor's directory entry and data lie in the file.
struct Tensor {
    name: String,
    /// The ggml type id.
    ty: u32,
    /// Byte position of the entry's 8-byte offset field.
    offset_field: usize,
    /// The offset it holds (from the start of the data section).
    offset: u64,
}

/// The parts of a GGUF v2/v3 header these tests edit.
struct Layout {
    /// (key, byte position of the key's length field).
    keys: Vec<(String, usize)>,
    tensors: Vec<Tensor>,
    data_offset: usize,
}

struct Cursor<'a> {
    b: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn u32(&mut self) -> u32 {
        let v = u32::from_le_bytes(self.b[self.at..self.at + 4].try_into().unwrap());
        self.at += 4;
        v
    }
    fn u64(&mut self) -> u64 {
        let v = u64::from_le_bytes(self.b[self.at..self.at + 8].try_into().unwrap());
        self.at += 8;
        v
    }
    fn string(&mut self) -> String {
        let n = self.u64() as usize;
        let s = String::from_utf8_lossy(&self.b[self.at..self.at + n]).into_owned();
        self.at += n;
        s
    }
    fn skip_value(&mut self, ty: u32) {
        match ty {
            0 | 1 | 7 => self.at += 1,
            2 | 3 => self.at += 2,
            4..=6 => self.at += 4,
            10..=12 => self.at += 8,
            8 => {
                self.string();
            }
            9 => {
                let elem = self.u32();
                for _ in 0..self.u64() {
                    self.skip_value(elem);
                }
            }
            t => panic!("unknown metadata type {t}"),
        }
    }
}

fn layout(b: &[u8]) -> Layout {
    let mut c = Cursor { b, at: 4 };
    assert!(c.u32() >= 2, "the test reads GGUF v2/v3 files");
    let (n_tensors, n_kv) = (c.u64(), c.u64());
    let mut keys = Vec::new();
    for _ in 0..n_kv {
        let at = c.at;
        let key = c.string();
        let ty = c.u32();
        c.skip_value(ty);
        keys.push((key, at));
    }
    let mut tensors = Vec::new();
    for _ in 0..n_tensors {
        let name = c.string();
        let nd = c.u32();
        c.at += 8 * nd as usize;
        let ty = c.u32();
        let offset_field = c.at;
        let offset = c.u64();
        tensors.push(Tensor {
            name,
            ty,
            offset_field,
            offset,
        });
    }
    Layout {
        keys,
        tensors,
        data_offset: c.at.div_ceil(32) * 32,
    }
}

fn real_model() -> (PathBuf, Vec<u8>) {
    let p = model::model_path();
    let bytes = std::fs::read(&p).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run scripts/fetch-llms.sh --smollm-only",
            p.display()
        )
    });
    (p, bytes)
}

/// Writes `bytes` to `dir/name`, loads it, and returns the reason of the `InvalidGguf` error
/// (which must name the file).
fn refused(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    let e = GgufModel::load(&p, GgufOptions::default()).expect_err("a damaged model must fail");
    assert!(e.to_string().contains(name), "{e}");
    match e {
        LlmError::InvalidGguf { path, reason } => {
            assert_eq!(path, p);
            // Every way in reads the same checks.
            let e = LlmTokenizer::from_gguf(&p).expect_err("the tokenizer reads the header too");
            assert!(e.to_string().contains(name), "{e}");
            reason
        }
        other => panic!("{name}: expected InvalidGguf, got {other:?}"),
    }
}

#[test]
fn a_tensor_offset_off_its_alignment_or_onto_another_tensor_is_refused() {
    let (_, bytes) = real_model();
    let l = layout(&bytes);
    let dir = tempfile::tempdir().unwrap();
    // One byte past where it should start.
    let t = &l.tensors[l.tensors.len() / 2];
    let mut b = bytes.clone();
    b[t.offset_field..t.offset_field + 8].copy_from_slice(&(t.offset + 1).to_le_bytes());
    let r = refused(dir.path(), "misaligned.gguf", &b);
    assert!(
        r.contains(&t.name) && r.contains("not a multiple of the alignment"),
        "{r}"
    );
    // Onto the start of another tensor (aligned, inside the file: only the overlap tells).
    let (a, other) = (&l.tensors[1], &l.tensors[2]);
    let mut b = bytes.clone();
    b[a.offset_field..a.offset_field + 8].copy_from_slice(&other.offset.to_le_bytes());
    let r = refused(dir.path(), "overlap.gguf", &b);
    assert!(r.contains("overlap") && r.contains(&other.name), "{r}");
}

#[test]
fn a_metadata_key_written_twice_is_refused() {
    let (_, bytes) = real_model();
    let l = layout(&bytes);
    // Two keys of the same length: the second is overwritten with the first's name.
    let (first, second_at) = l
        .keys
        .iter()
        .enumerate()
        .find_map(|(i, (k, _))| {
            l.keys[i + 1..]
                .iter()
                .find(|(k2, _)| k2.len() == k.len())
                .map(|(_, at)| (k.clone(), *at))
        })
        .expect("two metadata keys of the same length");
    let mut b = bytes.clone();
    let at = second_at + 8;
    b[at..at + first.len()].copy_from_slice(first.as_bytes());
    let dir = tempfile::tempdir().unwrap();
    let r = refused(dir.path(), "twice.gguf", &b);
    assert!(r.contains(&first) && r.contains("appears twice"), "{r}");
}

#[test]
fn an_infinite_scale_in_the_weights_is_refused() {
    let (_, bytes) = real_model();
    let l = layout(&bytes);
    // The first block of a Q4_1 matrix (type 3): its scale `d` becomes +inf (f16 0x7c00).
    let t = l
        .tensors
        .iter()
        .find(|t| t.ty == 3)
        .expect("a Q4_1 tensor in the Q4_1 model");
    let at = l.data_offset + t.offset as usize;
    let mut b = bytes.clone();
    b[at..at + 2].copy_from_slice(&0x7c00u16.to_le_bytes());
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("inf.gguf");
    std::fs::write(&p, &b).unwrap();
    let e = GgufModel::load(&p, GgufOptions::default()).expect_err("an inf scale must fail");
    match &e {
        LlmError::InvalidGguf { path, reason } => {
            assert_eq!(path, &p);
            assert!(
                reason.contains(&t.name) && reason.contains("not a finite number"),
                "{reason}"
            );
        }
        other => panic!("expected InvalidGguf, got {other:?}"),
    }
    // The f32 reader of the training crate refuses it too.
    let e = pgraphrag_llm::load_llama_f32(&p).expect_err("an inf scale must fail");
    assert!(e.to_string().contains("not a finite number"), "{e}");
}

#[test]
fn a_file_one_byte_short_is_refused_naming_the_last_tensor() {
    let (_, bytes) = real_model();
    let l = layout(&bytes);
    let last = l.tensors.iter().max_by_key(|t| t.offset).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let r = refused(dir.path(), "short.gguf", &bytes[..bytes.len() - 1]);
    assert!(r.contains("truncated") && r.contains(&last.name), "{r}");
}

#[test]
fn tokenizer_files_that_do_not_parse_are_refused_naming_them() {
    let (model, _) = real_model();
    let dir = tempfile::tempdir().unwrap();
    let load = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        let opts = GgufOptions {
            tokenizer_json: Some(p.clone()),
            ..Default::default()
        };
        let e = GgufModel::load(&model, opts).expect_err("a bad tokenizer.json must fail");
        assert!(
            matches!(&e, LlmError::Tokenizer { path, .. } if path == &p),
            "{name}: {e:?}"
        );
        assert!(e.to_string().contains(name), "{e}");
        e.to_string()
    };
    load("garbage.tokenizer.json", "{\"model\": [1, 2");
    load("empty.tokenizer.json", "");
    let e = load(
        "novocab.tokenizer.json",
        r#"{"version": "1.0", "truncation": null, "padding": null, "added_tokens": [],
            "normalizer": null, "pre_tokenizer": null, "post_processor": null, "decoder": null,
            "model": {"type": "WordLevel", "vocab": {}, "unk_token": "[UNK]"}}"#,
    );
    assert!(e.contains("empty vocabulary"), "{e}");
}
