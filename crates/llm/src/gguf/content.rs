//! Opening a GGUF model file: [`read_content`] reads and checks its header (magic, metadata,
//! tensor directory) and that every tensor lies inside the file, before anything above this
//! layer (tokenizer, engines, model) looks at it.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use super::file::GgufFile;
use crate::error::{LlmError, Result, invalid};

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
