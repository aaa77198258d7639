//! The loaded network (the native engine or, with the `candle` feature, one of candle's
//! quantized models) and reading and validating the GGUF file.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use super::file::GgufFile;
use crate::error::{LlmError, Result};
use crate::native::NativeLlama;

/// An error of a forward pass, before it gets its context.
pub(super) type ForwardError = Box<dyn std::error::Error + Send + Sync>;

pub(super) enum Weights {
    Native(Box<NativeLlama>),
    #[cfg(feature = "candle")]
    Candle(Box<super::candle::CandleWeights>),
}

impl Weights {
    /// Logits (f32, one per vocabulary entry) of the last of `ids`, fed at positions `pos..`.
    pub(super) fn forward(
        &mut self,
        ids: &[u32],
        #[allow(unused_variables)] pos: usize,
    ) -> std::result::Result<Vec<f32>, ForwardError> {
        match self {
            Weights::Native(m) => m.forward(ids).map_err(Into::into),
            #[cfg(feature = "candle")]
            Weights::Candle(m) => m.forward(ids, pos).map_err(Into::into),
        }
    }
    /// The native engine, when it is the one running.
    pub(super) fn native_mut(&mut self) -> Option<&mut NativeLlama> {
        match self {
            Weights::Native(m) => Some(m),
            #[cfg(feature = "candle")]
            Weights::Candle(_) => None,
        }
    }
    pub(super) fn reset(&mut self) {
        match self {
            Weights::Native(m) => m.reset(),
            #[cfg(feature = "candle")]
            Weights::Candle(m) => m.reset(),
        }
    }
}

pub(super) fn invalid(path: &Path, reason: impl Into<String>) -> LlmError {
    LlmError::InvalidGguf {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

/// Reads and validates a GGUF header: magic, metadata, and that every tensor lies inside the file.
/// Also returns the file's size in bytes.
pub(crate) fn read_content(path: &Path) -> Result<(GgufFile, BufReader<File>, u64)> {
    if !path.exists() {
        return Err(LlmError::ModelNotFound {
            path: path.to_path_buf(),
        });
    }
    let io = |source| LlmError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = File::open(path).map_err(io)?;
    let file_len = file.metadata().map_err(io)?.len();
    let mut r = BufReader::new(file);
    let mut magic = [0u8; 4];
    if let Err(e) = r.read_exact(&mut magic) {
        return Err(invalid(
            path,
            format!("cannot read the 4-byte magic ({e}); the file has {file_len} bytes"),
        ));
    }
    if &magic != b"GGUF" {
        return Err(invalid(
            path,
            format!("wrong magic {magic:02x?} (expected the bytes of \"GGUF\")"),
        ));
    }
    let ct =
        GgufFile::read(&mut r, file_len).map_err(|e| invalid(path, format!("bad header: {e}")))?;
    for (name, info) in &ct.tensors {
        let end = ct
            .data_offset
            .saturating_add(info.offset)
            .saturating_add(info.byte_size() as u64);
        if end > file_len {
            return Err(invalid(
                path,
                format!(
                    "truncated: tensor `{name}` ends at byte {end} but the file has {file_len} bytes"
                ),
            ));
        }
    }
    Ok((ct, r, file_len))
}
