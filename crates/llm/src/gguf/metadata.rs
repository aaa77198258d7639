//! Typed accessors of a GGUF file's metadata: every reader of a metadata key (the model's
//! architecture and context, the tokenizer's vocabulary and special tokens, the llama
//! dimensions) goes through these, so a key's type rules are written once.

use super::file::{GgufFile, Value};

impl GgufFile {
    /// `key` as a `u32` when it is stored as any integer type whose value fits (the tokenizer's
    /// ids and the context length are written as `u32`, `i32` or `u64` by different tools).
    pub(crate) fn md_u32(&self, key: &str) -> Option<u32> {
        self.get(key).and_then(Value::as_u32_lossless)
    }

    /// `key` when it is stored as a `u32` exactly (no other integer type), as a `usize`: the
    /// model's hyper-parameters, which llama.cpp writes as `u32`.
    pub(crate) fn md_u32_exact(&self, key: &str) -> Option<usize> {
        self.get(key)
            .and_then(Value::as_u32_exact)
            .map(|v| v as usize)
    }

    /// `key` when it is stored as an `f32`.
    pub(crate) fn md_f32(&self, key: &str) -> Option<f32> {
        self.get(key).and_then(Value::as_f32)
    }

    /// `key` when it is a string.
    pub(crate) fn md_str(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(Value::as_str)
    }

    /// `key` when it is a bool.
    pub(crate) fn md_bool(&self, key: &str) -> Option<bool> {
        self.get(key).and_then(Value::as_bool)
    }

    /// `key` as an array of strings; the error says what is missing or of the wrong type.
    pub(crate) fn md_strings(&self, key: &str) -> Result<Vec<String>, String> {
        let v = self
            .get(key)
            .ok_or_else(|| format!("GGUF metadata has no `{key}`"))?;
        let arr = v
            .as_array()
            .ok_or_else(|| format!("`{key}` is not an array"))?;
        arr.iter()
            .enumerate()
            .map(|(i, x)| {
                x.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| format!("`{key}`[{i}] is not a string"))
            })
            .collect()
    }
}
