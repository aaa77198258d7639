//! The index file: a small versioned little-endian binary (layout in `docs/kragrec.md`).
use std::fs::File;
use std::io::{BufReader, Read, Write};
use std::path::Path;

use pgraphrag_graph::kg::KnowledgeGraph;

use super::Aggregation;
use super::vectors::{Fnv, HopVectors, kg_fingerprint};
use crate::{Error, Result};

/// The index file's magic bytes.
const MAGIC: &[u8; 8] = b"PGKRHOP\0";

/// The format version [`HopVectors::save`] writes and [`HopVectors::load`] reads.
pub const INDEX_FORMAT_VERSION: u32 = 1;

/// Longest model id stored (bytes).
const MAX_MODEL_LEN: u32 = 1 << 16;

/// A writer that hashes what it writes.
struct Hashed<W> {
    inner: W,
    hash: Fnv,
}

impl<W: Write> Hashed<W> {
    fn put(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.hash.update(bytes);
        self.inner.write_all(bytes)
    }
}

/// A reader that hashes what it reads.
struct Hashing<R> {
    inner: R,
    hash: Fnv,
}

impl<R: Read> Hashing<R> {
    fn take(&mut self, buf: &mut [u8]) -> std::io::Result<()> {
        self.inner.read_exact(buf)?;
        self.hash.update(buf);
        Ok(())
    }
    fn u8(&mut self) -> std::io::Result<u8> {
        let mut b = [0u8; 1];
        self.take(&mut b)?;
        Ok(b[0])
    }
    fn u32(&mut self) -> std::io::Result<u32> {
        let mut b = [0u8; 4];
        self.take(&mut b)?;
        Ok(u32::from_le_bytes(b))
    }
    fn u64(&mut self) -> std::io::Result<u64> {
        let mut b = [0u8; 8];
        self.take(&mut b)?;
        Ok(u64::from_le_bytes(b))
    }
}

impl HopVectors {
    /// Writes the vectors to `path` (created or replaced, atomically through
    /// [`pgraphrag_data::write_atomic`]: an interrupted save leaves the old file or none, never
    /// part of one; a link, a folder or a device at `path` is refused): the header (magic,
    /// version, model id, message passing, dimension, hops, entities, KG fingerprint), the
    /// `f32` matrices and a checksum. `docs/kragrec.md` gives the layout.
    ///
    /// ```
    /// # use pgraphrag_recsys::HopVectors;
    /// # fn f(v: &HopVectors) -> pgraphrag_recsys::Result<()> {
    /// v.save(std::path::Path::new("runs/kragrec/index.bin"))?;
    /// # Ok(()) }
    /// ```
    pub fn save(&self, path: &Path) -> Result<()> {
        let io = |source| Error::IndexIo {
            path: path.to_path_buf(),
            source,
        };
        let (tag, seed) = match self.aggregation {
            Aggregation::Mean => (0u8, 0u64),
            Aggregation::ReleasedGcn { seed } => (1, seed),
        };
        let too_big = |what: &str| Error::IndexFormat {
            path: path.to_path_buf(),
            problem: format!("{what} does not fit the format's u32 field"),
        };
        let model_len = u32::try_from(self.model.len())
            .ok()
            .filter(|&l| l <= MAX_MODEL_LEN)
            .ok_or_else(|| too_big("the model id's length"))?;
        let dim = u32::try_from(self.dim).map_err(|_| too_big("the dimension"))?;
        let hops = u32::try_from(self.hops.len()).map_err(|_| too_big("the hop count"))?;
        let entities = u32::try_from(self.entities).map_err(|_| too_big("the entity count"))?;
        let write = |inner: &mut dyn Write| {
            let mut w = Hashed {
                inner,
                hash: Fnv::new(),
            };
            w.put(MAGIC)?;
            w.put(&INDEX_FORMAT_VERSION.to_le_bytes())?;
            w.put(&model_len.to_le_bytes())?;
            w.put(self.model.as_bytes())?;
            w.put(&[tag])?;
            w.put(&seed.to_le_bytes())?;
            w.put(&dim.to_le_bytes())?;
            w.put(&hops.to_le_bytes())?;
            w.put(&entities.to_le_bytes())?;
            w.put(&self.kg.to_le_bytes())?;
            let mut buf = Vec::with_capacity(4 * 4096);
            for m in &self.hops {
                for chunk in m.chunks(4096) {
                    buf.clear();
                    buf.extend(chunk.iter().flat_map(|x| x.to_le_bytes()));
                    w.put(&buf)?;
                }
            }
            let sum = w.hash.finish();
            w.inner.write_all(&sum.to_le_bytes())?;
            w.inner.flush()
        };
        pgraphrag_data::write_atomic(path, write).map_err(|e| match e {
            pgraphrag_data::Error::Io { source, .. } => io(source),
            other => io(std::io::Error::other(other.to_string())),
        })
    }

    /// Reads vectors written by [`HopVectors::save`] and checks that they fit: built with
    /// the model `model`, for `kg` (its [`kg_fingerprint`] and entity count) and, when `dim`
    /// is given (the encoder's [`pgraphrag_core::Encoder::dim`]), of that dimension.
    ///
    /// Errors: [`Error::IndexIo`] (unreadable), [`Error::IndexFormat`] (not an index file,
    /// truncated, a bad checksum, an unknown message passing), [`Error::IndexVersion`],
    /// [`Error::IndexModel`], [`Error::IndexDim`], [`Error::IndexKg`].
    ///
    /// ```
    /// use pgraphrag_core::{Embeddings, Encoder, NoProgress, Result};
    /// use pgraphrag_graph::kg::KnowledgeGraph;
    /// use pgraphrag_recsys::{Error, HopVectors, IndexOptions};
    ///
    /// struct Len;
    /// impl Encoder for Len {
    ///     fn encode(&self, texts: &[&str]) -> Result<Embeddings> {
    ///         Embeddings::new(2, texts.iter().flat_map(|t| [t.len() as f32, 1.0]).collect())
    ///     }
    /// }
    /// let mut kg = KnowledgeGraph::new();
    /// kg.add_triple("m.1", "film.film.genre", "m.2").unwrap();
    /// let v = HopVectors::build(&kg, &Len, "len-v1", &IndexOptions::default(), &NoProgress).unwrap();
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("index.bin");
    /// v.save(&path).unwrap();
    /// assert_eq!(HopVectors::load(&path, "len-v1", &kg, Some(2)).unwrap(), v);
    /// assert!(matches!(HopVectors::load(&path, "len-v2", &kg, None), Err(Error::IndexModel { .. })));
    /// kg.add_triple("m.2", "film.film_genre.films_in_this_genre", "m.1").unwrap();
    /// assert!(matches!(HopVectors::load(&path, "len-v1", &kg, None), Err(Error::IndexKg { .. })));
    /// ```
    pub fn load(
        path: &Path,
        model: &str,
        kg: &KnowledgeGraph,
        dim: Option<usize>,
    ) -> Result<HopVectors> {
        let v = read(path)?;
        if v.model != model {
            return Err(Error::IndexModel {
                path: path.to_path_buf(),
                expected: model.to_string(),
                found: v.model,
            });
        }
        if let Some(d) = dim
            && d != v.dim
        {
            return Err(Error::IndexDim {
                path: path.to_path_buf(),
                expected: d,
                found: v.dim,
            });
        }
        let expected = kg_fingerprint(kg);
        if expected != v.kg || kg.entity_count() != v.entities {
            return Err(Error::IndexKg {
                path: path.to_path_buf(),
                expected,
                found: v.kg,
                expected_entities: kg.entity_count(),
                found_entities: v.entities,
            });
        }
        Ok(v)
    }
}

/// Reads and checks the file's structure (magic, version, sizes, checksum).
fn read(path: &Path) -> Result<HopVectors> {
    let io = |source| Error::IndexIo {
        path: path.to_path_buf(),
        source,
    };
    let format = |problem: String| Error::IndexFormat {
        path: path.to_path_buf(),
        problem,
    };
    let truncated = |e: std::io::Error| {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            format("truncated (the file ends inside the header or the vectors)".into())
        } else {
            io(e)
        }
    };
    let file = File::open(path).map_err(io)?;
    let file_len = file.metadata().map_err(io)?.len();
    let mut r = Hashing {
        inner: BufReader::new(file),
        hash: Fnv::new(),
    };
    let mut magic = [0u8; 8];
    r.take(&mut magic).map_err(truncated)?;
    if &magic != MAGIC {
        return Err(format(format!(
            "not a K-RagRec index file (magic {magic:02x?}, expected {:02x?})",
            MAGIC
        )));
    }
    let version = r.u32().map_err(truncated)?;
    if version != INDEX_FORMAT_VERSION {
        return Err(Error::IndexVersion {
            path: path.to_path_buf(),
            found: version,
            supported: INDEX_FORMAT_VERSION,
        });
    }
    let model_len = r.u32().map_err(truncated)?;
    if model_len > MAX_MODEL_LEN || u64::from(model_len) > file_len {
        return Err(format(format!(
            "model id length {model_len} is implausible"
        )));
    }
    let mut model = vec![0u8; model_len as usize];
    r.take(&mut model).map_err(truncated)?;
    let model = String::from_utf8(model).map_err(|_| format("the model id is not UTF-8".into()))?;
    let tag = r.u8().map_err(truncated)?;
    let seed = r.u64().map_err(truncated)?;
    let aggregation = match tag {
        0 => Aggregation::Mean,
        1 => Aggregation::ReleasedGcn { seed },
        t => return Err(format(format!("unknown message passing tag {t}"))),
    };
    let dim = r.u32().map_err(truncated)? as usize;
    let hops = r.u32().map_err(truncated)? as usize;
    let entities = r.u32().map_err(truncated)? as usize;
    let kg = r.u64().map_err(truncated)?;
    if dim == 0 || hops == 0 {
        return Err(format(format!(
            "dimension {dim} and hop count {hops} must be at least 1"
        )));
    }
    let header = 8 + 4 + 4 + u64::from(model_len) + 1 + 8 + 4 + 4 + 4 + 8;
    let data = (hops as u64)
        .checked_mul(entities as u64)
        .and_then(|x| x.checked_mul(dim as u64))
        .and_then(|x| x.checked_mul(4));
    let expected_len = data.and_then(|d| d.checked_add(header + 8));
    if expected_len != Some(file_len) {
        return Err(format(format!(
            "{file_len} bytes, but its header ({hops} hops × {entities} entities × {dim} floats) needs {}",
            expected_len.map_or("more than u64 holds".to_string(), |l| l.to_string())
        )));
    }
    let mut matrices = Vec::with_capacity(hops);
    let mut buf = vec![0u8; 4 * dim];
    for _ in 0..hops {
        let mut m = Vec::with_capacity(entities * dim);
        for _ in 0..entities {
            r.take(&mut buf).map_err(truncated)?;
            m.extend(
                buf.chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            );
        }
        matrices.push(m);
    }
    let computed = r.hash.finish();
    let mut sum = [0u8; 8];
    r.inner.read_exact(&mut sum).map_err(truncated)?;
    if u64::from_le_bytes(sum) != computed {
        return Err(format(format!(
            "checksum mismatch (stored {:016x}, computed {computed:016x}): the file is damaged",
            u64::from_le_bytes(sum)
        )));
    }
    Ok(HopVectors {
        model,
        aggregation,
        dim,
        entities,
        kg,
        hops: matrices,
    })
}
