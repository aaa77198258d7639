//! A reader for the GGUF container (versions 1 to 3): the metadata, the tensor directory and
//! the raw bytes of one tensor. The native engine and the tokenizer use it; candle's engine
//! reads the file again with candle's own reader. Typed metadata accessors are in
//! [`super::metadata`], opening and checking a model file in [`super::content`].
//!
//! Every length read from the file is checked against the bytes left before anything is
//! allocated, so a corrupt header is an error, never a huge allocation or a panic.

use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom};

use crate::error::{LlmError, Result};

/// One metadata value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    U8(u8),
    I8(i8),
    U16(u16),
    I16(i16),
    U32(u32),
    I32(i32),
    F32(f32),
    Bool(bool),
    String(String),
    Array(Vec<Value>),
    U64(u64),
    I64(i64),
    F64(f64),
}

impl Value {
    /// The value if it is stored as a `u32` (no conversion from other integer types).
    pub(crate) fn as_u32_exact(&self) -> Option<u32> {
        match self {
            Value::U32(v) => Some(*v),
            _ => None,
        }
    }
    /// Any integer type that fits a `u32`.
    pub(crate) fn as_u32_lossless(&self) -> Option<u32> {
        match self {
            Value::U8(x) => Some(*x as u32),
            Value::I8(x) => u32::try_from(*x).ok(),
            Value::U16(x) => Some(*x as u32),
            Value::I16(x) => u32::try_from(*x).ok(),
            Value::U32(x) => Some(*x),
            Value::I32(x) => u32::try_from(*x).ok(),
            Value::U64(x) => u32::try_from(*x).ok(),
            Value::I64(x) => u32::try_from(*x).ok(),
            _ => None,
        }
    }
    /// The value if it is stored as an `f32`.
    pub(crate) fn as_f32(&self) -> Option<f32> {
        match self {
            Value::F32(v) => Some(*v),
            _ => None,
        }
    }
    /// The value if it is a bool.
    pub(crate) fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(v) => Some(*v),
            _ => None,
        }
    }
    /// The value if it is a string.
    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(v) => Some(v),
            _ => None,
        }
    }
    /// The value if it is an array.
    pub(crate) fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(v) => Some(v),
            _ => None,
        }
    }
}

/// The ggml tensor types a GGUF file may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GgmlType {
    F32,
    F16,
    BF16,
    Q4_0,
    Q4_1,
    Q5_0,
    Q5_1,
    Q8_0,
    Q8_1,
    Q2K,
    Q3K,
    Q4K,
    Q5K,
    Q6K,
    Q8K,
}

impl GgmlType {
    fn from_id(id: u32) -> Option<Self> {
        Some(match id {
            0 => GgmlType::F32,
            1 => GgmlType::F16,
            2 => GgmlType::Q4_0,
            3 => GgmlType::Q4_1,
            6 => GgmlType::Q5_0,
            7 => GgmlType::Q5_1,
            8 => GgmlType::Q8_0,
            9 => GgmlType::Q8_1,
            10 => GgmlType::Q2K,
            11 => GgmlType::Q3K,
            12 => GgmlType::Q4K,
            13 => GgmlType::Q5K,
            14 => GgmlType::Q6K,
            15 => GgmlType::Q8K,
            30 => GgmlType::BF16,
            _ => return None,
        })
    }
    /// Values per block.
    pub(crate) fn block_size(self) -> usize {
        match self {
            GgmlType::F32 | GgmlType::F16 | GgmlType::BF16 => 1,
            GgmlType::Q4_0
            | GgmlType::Q4_1
            | GgmlType::Q5_0
            | GgmlType::Q5_1
            | GgmlType::Q8_0
            | GgmlType::Q8_1 => 32,
            _ => 256,
        }
    }
    /// Bytes per block.
    pub(crate) fn type_size(self) -> usize {
        match self {
            GgmlType::F32 => 4,
            GgmlType::F16 | GgmlType::BF16 => 2,
            GgmlType::Q4_0 => 18,
            GgmlType::Q4_1 => 20,
            GgmlType::Q5_0 => 22,
            GgmlType::Q5_1 => 24,
            GgmlType::Q8_0 => 34,
            GgmlType::Q8_1 => 36,
            GgmlType::Q2K => 84,
            GgmlType::Q3K => 110,
            GgmlType::Q4K => 144,
            GgmlType::Q5K => 176,
            GgmlType::Q6K => 210,
            GgmlType::Q8K => 292,
        }
    }
}

/// Where one tensor lies and what it holds.
#[derive(Debug, Clone)]
pub(crate) struct TensorInfo {
    pub(crate) dtype: GgmlType,
    /// Row-major dimensions, outermost first (the file stores them innermost first).
    pub(crate) dims: Vec<usize>,
    /// Offset of the data from [`GgufFile::data_offset`].
    pub(crate) offset: u64,
}

impl TensorInfo {
    /// Values in the tensor.
    pub(crate) fn elem_count(&self) -> usize {
        self.dims.iter().product()
    }
    /// Bytes of data.
    pub(crate) fn byte_size(&self) -> usize {
        self.elem_count() / self.dtype.block_size() * self.dtype.type_size()
    }
}

/// A GGUF header.
#[derive(Debug, Clone)]
pub(crate) struct GgufFile {
    pub(crate) metadata: HashMap<String, Value>,
    pub(crate) tensors: HashMap<String, TensorInfo>,
    /// Where the tensor data starts (aligned to `general.alignment`, default 32).
    pub(crate) data_offset: u64,
}

struct Reader<'a, R> {
    r: &'a mut R,
    pos: u64,
    len: u64,
    /// Version 1 stores lengths as `u32`, later versions as `u64`.
    v1: bool,
}

const MAX_DEPTH: usize = 8;

impl<R: Read> Reader<'_, R> {
    fn bytes<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let mut b = [0u8; N];
        self.r
            .read_exact(&mut b)
            .map_err(|e| format!("reading {N} bytes at offset {}: {e}", self.pos))?;
        self.pos += N as u64;
        Ok(b)
    }
    fn u32(&mut self) -> Result<u32, String> {
        self.bytes::<4>().map(u32::from_le_bytes)
    }
    fn u64(&mut self) -> Result<u64, String> {
        self.bytes::<8>().map(u64::from_le_bytes)
    }
    fn length(&mut self) -> Result<u64, String> {
        if self.v1 {
            self.u32().map(u64::from)
        } else {
            self.u64()
        }
    }
    fn left(&self) -> u64 {
        self.len.saturating_sub(self.pos)
    }
    fn string(&mut self) -> Result<String, String> {
        let n = self.length()?;
        if n > self.left() {
            return Err(format!(
                "string of {n} bytes at offset {} runs past the end of the file",
                self.pos
            ));
        }
        let mut v = vec![0u8; n as usize];
        self.r
            .read_exact(&mut v)
            .map_err(|e| format!("reading a string at offset {}: {e}", self.pos))?;
        self.pos += n;
        // Strings should not be NUL-terminated, but some writers do it.
        while v.last() == Some(&0) {
            v.pop();
        }
        Ok(String::from_utf8_lossy(&v).into_owned())
    }
    /// The fewest bytes a value of type `ty` takes (1 for an unknown type, which fails anyway).
    fn min_size(&self, ty: u32) -> u64 {
        let len = if self.v1 { 4 } else { 8 };
        match ty {
            2 | 3 => 2,
            4..=6 => 4,
            8 => len,
            9 => 4 + len,
            10..=12 => 8,
            _ => 1,
        }
    }
    fn value(&mut self, ty: u32, depth: usize) -> Result<Value, String> {
        Ok(match ty {
            0 => Value::U8(self.bytes::<1>()?[0]),
            1 => Value::I8(self.bytes::<1>()?[0] as i8),
            2 => Value::U16(self.bytes::<2>().map(u16::from_le_bytes)?),
            3 => Value::I16(self.bytes::<2>().map(i16::from_le_bytes)?),
            4 => Value::U32(self.u32()?),
            5 => Value::I32(self.bytes::<4>().map(i32::from_le_bytes)?),
            6 => Value::F32(self.bytes::<4>().map(f32::from_le_bytes)?),
            7 => Value::Bool(self.bytes::<1>()?[0] != 0),
            8 => Value::String(self.string()?),
            9 => {
                if depth >= MAX_DEPTH {
                    return Err(format!("arrays nested deeper than {MAX_DEPTH}"));
                }
                let elem = self.u32()?;
                let n = self.length()?;
                // Every element takes at least `min_size(elem)` bytes.
                if n.saturating_mul(self.min_size(elem)) > self.left() {
                    return Err(format!(
                        "array of {n} elements at offset {} runs past the end of the file",
                        self.pos
                    ));
                }
                // The bytes-left bound keeps this below the file's size in elements; cap it
                // further so a small element type cannot reserve 32 times the file.
                let mut v = Vec::with_capacity((n as usize).min(1 << 16));
                for _ in 0..n {
                    v.push(self.value(elem, depth + 1)?);
                }
                Value::Array(v)
            }
            10 => Value::U64(self.u64()?),
            11 => Value::I64(self.bytes::<8>().map(i64::from_le_bytes)?),
            12 => Value::F64(self.bytes::<8>().map(f64::from_le_bytes)?),
            t => return Err(format!("unknown metadata value type {t}")),
        })
    }
}

impl GgufFile {
    /// Reads the header from the start of `r`, a file of `file_len` bytes. Errors say what is
    /// wrong and where.
    pub(crate) fn read<R: Read + Seek>(r: &mut R, file_len: u64) -> Result<Self, String> {
        r.seek(SeekFrom::Start(0))
            .map_err(|e| format!("seeking to the start: {e}"))?;
        let mut rd = Reader {
            r,
            pos: 0,
            len: file_len,
            v1: false,
        };
        if &rd.bytes::<4>()? != b"GGUF" {
            return Err("wrong magic".into());
        }
        let version = rd.u32()?;
        rd.v1 = match version {
            1 => true,
            2 | 3 => false,
            v => return Err(format!("unsupported GGUF version {v}")),
        };
        let n_tensors = rd.length()?;
        let n_kv = rd.length()?;
        // A key-value pair takes at least 13 bytes, a tensor entry at least 24.
        if n_kv
            .saturating_mul(13)
            .saturating_add(n_tensors.saturating_mul(24))
            > rd.left()
        {
            return Err(format!(
                "{n_kv} metadata entries and {n_tensors} tensors cannot fit in {file_len} bytes"
            ));
        }
        let mut metadata = HashMap::new();
        for _ in 0..n_kv {
            let key = rd.string()?;
            let ty = rd.u32()?;
            let v = rd
                .value(ty, 0)
                .map_err(|e| format!("metadata `{key}`: {e}"))?;
            if metadata.contains_key(&key) {
                return Err(format!("metadata key `{key}` appears twice"));
            }
            metadata.insert(key, v);
        }
        let mut tensors = HashMap::new();
        for _ in 0..n_tensors {
            let name = rd.string()?;
            let nd = rd.u32()?;
            if nd > 8 {
                return Err(format!("tensor `{name}` has {nd} dimensions"));
            }
            let mut dims = Vec::with_capacity(nd as usize);
            for _ in 0..nd {
                let d = rd.length()?;
                dims.push(
                    usize::try_from(d).map_err(|_| format!("tensor `{name}`: dimension {d}"))?,
                );
            }
            dims.reverse();
            let id = rd.u32()?;
            let dtype = GgmlType::from_id(id)
                .ok_or_else(|| format!("tensor `{name}` has unknown ggml type {id}"))?;
            let offset = rd.u64()?;
            let elems = dims
                .iter()
                .try_fold(1usize, |a, &d| a.checked_mul(d))
                .ok_or_else(|| format!("tensor `{name}`: {dims:?} overflows"))?;
            if !elems.is_multiple_of(dtype.block_size()) {
                return Err(format!(
                    "tensor `{name}`: {elems} values is not a whole number of {dtype:?} blocks"
                ));
            }
            // So that `TensorInfo::byte_size` cannot overflow.
            if (elems / dtype.block_size())
                .checked_mul(dtype.type_size())
                .is_none()
            {
                return Err(format!(
                    "tensor `{name}`: {dims:?} {dtype:?} values take more bytes than a usize holds"
                ));
            }
            if tensors.contains_key(&name) {
                return Err(format!(
                    "tensor `{name}` appears twice in the tensor directory"
                ));
            }
            tensors.insert(
                name,
                TensorInfo {
                    dtype,
                    dims,
                    offset,
                },
            );
        }
        let alignment = read_alignment(&metadata)?;
        check_layout(&tensors, alignment)?;
        Ok(GgufFile {
            metadata,
            tensors,
            data_offset: rd.pos.div_ceil(alignment) * alignment,
        })
    }

    /// The raw bytes of tensor `name`.
    pub(crate) fn tensor_bytes<R: Read + Seek>(
        &self,
        r: &mut R,
        name: &str,
    ) -> Result<(TensorInfo, Vec<u8>), String> {
        let info = self
            .tensors
            .get(name)
            .ok_or_else(|| format!("no tensor `{name}`"))?;
        let start = self.data_offset.saturating_add(info.offset);
        r.seek(SeekFrom::Start(start))
            .map_err(|e| format!("seeking to tensor `{name}`: {e}"))?;
        let mut buf = vec![0u8; info.byte_size()];
        r.read_exact(&mut buf)
            .map_err(|e| format!("reading tensor `{name}`: {e}"))?;
        Ok((info.clone(), buf))
    }

    /// Metadata value `key`.
    pub(crate) fn get(&self, key: &str) -> Option<&Value> {
        self.metadata.get(key)
    }
}

/// `general.alignment` (32 when absent): a power of two, as GGUF requires.
fn read_alignment(metadata: &HashMap<String, Value>) -> Result<u64, String> {
    let Some(v) = metadata.get("general.alignment") else {
        return Ok(32);
    };
    match v.as_u32_lossless() {
        Some(a) if a.is_power_of_two() => Ok(u64::from(a)),
        _ => Err(format!("`general.alignment` is {v:?}, not a power of two")),
    }
}

/// Every tensor's data starts on an `alignment` boundary (from the start of the data
/// section) and no two tensors' bytes overlap. Whether they lie inside the file is checked
/// against its length by the loader.
fn check_layout(tensors: &HashMap<String, TensorInfo>, alignment: u64) -> Result<(), String> {
    let mut spans: Vec<(u64, u64, &str)> = Vec::with_capacity(tensors.len());
    for (name, t) in tensors {
        if !t.offset.is_multiple_of(alignment) {
            return Err(format!(
                "tensor `{name}` starts at data offset {}, not a multiple of the alignment {alignment}",
                t.offset
            ));
        }
        let end = t
            .offset
            .checked_add(t.byte_size() as u64)
            .ok_or_else(|| format!("tensor `{name}`: offset {} overflows", t.offset))?;
        spans.push((t.offset, end, name));
    }
    spans.sort_unstable();
    for w in spans.windows(2) {
        let ((_, end, a), (start, _, b)) = (w[0], w[1]);
        if start < end {
            return Err(format!(
                "tensors `{a}` and `{b}` overlap (`{a}` ends at data offset {end}, `{b}` starts at {start})"
            ));
        }
    }
    Ok(())
}

/// What [`read_gguf_header`] found in a GGUF header: the metadata keys and the tensor
/// directory's names (both sorted), and where the tensor data starts.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct GgufHeader {
    /// Metadata keys, sorted.
    pub metadata_keys: Vec<String>,
    /// Tensor names, sorted.
    pub tensor_names: Vec<String>,
    /// Byte offset of the tensor data (aligned to `general.alignment`, default 32).
    pub data_offset: u64,
}

/// Reads and checks the header (magic, version, metadata, tensor directory) of the GGUF data
/// in `r`, from its start to its end (its length comes from seeking to the end). `source`
/// names it in errors. It does not check that the tensors' data lies inside `r`:
/// [`crate::GgufModel::load`] does that.
///
/// Every count and length is checked against the bytes left before anything is allocated, so
/// corrupt input is an [`LlmError::InvalidGguf`] (or [`LlmError::Io`] if `r` fails to seek),
/// never a panic or a huge allocation.
///
/// ```
/// use std::io::Cursor;
/// let mut b = b"GGUF".to_vec();
/// b.extend(3u32.to_le_bytes()); // version
/// b.extend(0u64.to_le_bytes()); // tensors
/// b.extend(0u64.to_le_bytes()); // metadata entries
/// let h = pgraphrag_llm::read_gguf_header(&mut Cursor::new(&b), "x.gguf".as_ref()).unwrap();
/// assert_eq!((h.tensor_names.len(), h.data_offset), (0, 32));
///
/// b[8] = 0xff; // 255 tensors cannot fit
/// assert!(pgraphrag_llm::read_gguf_header(&mut Cursor::new(&b), "x.gguf".as_ref()).is_err());
/// ```
pub fn read_gguf_header<R: Read + Seek>(r: &mut R, source: &std::path::Path) -> Result<GgufHeader> {
    let len = r.seek(SeekFrom::End(0)).map_err(|e| LlmError::Io {
        path: source.to_path_buf(),
        source: e,
    })?;
    let f = GgufFile::read(r, len).map_err(|reason| LlmError::InvalidGguf {
        path: source.to_path_buf(),
        reason: format!("bad header: {reason}"),
    })?;
    let mut metadata_keys: Vec<String> = f.metadata.into_keys().collect();
    metadata_keys.sort_unstable();
    let mut tensor_names: Vec<String> = f.tensors.into_keys().collect();
    tensor_names.sort_unstable();
    Ok(GgufHeader {
        metadata_keys,
        tensor_names,
        data_offset: f.data_offset,
    })
}
