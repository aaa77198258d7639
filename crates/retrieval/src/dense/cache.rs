//! [`EmbeddingCache`]: embeddings persisted in SQLite, keyed by model and text, so a corpus
//! is encoded once; and [`encode_corpus`], whole-corpus encoding through the cache, reporting
//! to a [`Progress`].

// Without the feature `postgres` the connection has one kind, and a `match` on it one arm.
#![cfg_attr(
    not(feature = "postgres"),
    allow(clippy::infallible_destructuring_match)
)]
use std::path::Path;

use pgraphrag_core::Encoder;
use pgraphrag_core::progress::Progress;
use pgraphrag_store::artifacts::{Artifact, Artifacts, Conn};
use pgraphrag_store::sqlite::{Options, Schema, Synchronous};
use rusqlite::{OptionalExtension, params};
use sha2::{Digest, Sha256};

use super::encoder::{BertEncoder, Pooling};
use crate::{Error, Result};

/// Embeddings on disk (SQLite in WAL mode: every batch is one transaction, so a crash loses
/// at most the batch in flight and a rerun resumes where it stopped).
///
/// Rows are keyed by a *model key* (see [`EmbeddingCache::model_key`]: the encoder's
/// fingerprint plus the pooling) and the sha256 of the text; vectors are stored raw
/// (never normalised) as little-endian `f32`.
///
/// ```
/// use pgraphrag_retrieval::dense::EmbeddingCache;
/// let c = EmbeddingCache::in_memory().unwrap();
/// c.put_many("m", &[("hello", &[1.0f32, 2.0][..])]).unwrap();
/// assert_eq!(c.get_many("m", &["hello", "bye"]).unwrap(), vec![Some(vec![1.0, 2.0]), None]);
/// assert_eq!(c.len().unwrap(), 1);
/// ```
#[derive(Debug)]
pub struct EmbeddingCache {
    store: Artifacts,
}

/// The embedding cache's tables: `embeddings` keyed by (model key, sha256 of the text) in a
/// SQLite file (unchanged since the first version, so files written before the stamps are
/// read), `pgraphrag_embeddings` with the same columns in PostgreSQL. Every batch is one
/// transaction; `NORMAL` in WAL mode loses at most the last batches on a power cut, never the
/// file.
const ARTIFACT: Artifact<'static> = Artifact {
    sqlite: Schema {
        kind: "embedding cache",
        // "PGec"
        application_id: 0x5047_6563,
        version: 1,
        ddl: "CREATE TABLE IF NOT EXISTS embeddings (
              model TEXT NOT NULL,
              text_sha256 BLOB NOT NULL,
              dim INTEGER NOT NULL,
              vec BLOB NOT NULL,
              PRIMARY KEY (model, text_sha256)
          ) WITHOUT ROWID;",
    },
    options: Options {
        synchronous: Synchronous::Normal,
        ..Options::DURABLE
    },
    postgres: Some(
        "CREATE TABLE IF NOT EXISTS pgraphrag_embeddings (
              model text NOT NULL,
              text_sha256 bytea NOT NULL,
              dim integer NOT NULL,
              vec bytea NOT NULL,
              PRIMARY KEY (model, text_sha256)
          )",
    ),
};

/// The sha256 of a text, the text part of a cache key.
pub fn text_key(text: &str) -> [u8; 32] {
    Sha256::digest(text.as_bytes()).into()
}

impl EmbeddingCache {
    /// Opens (creating if needed, with its parent folders) the cache file at `path`
    /// (through [`pgraphrag_store::Artifacts`]: WAL, `synchronous = NORMAL`, busy timeout; a
    /// file of another kind or schema version is refused with an error naming it).
    pub fn open(path: &Path) -> Result<Self> {
        Ok(EmbeddingCache {
            store: Artifacts::open(path, &ARTIFACT)?,
        })
    }

    /// Opens the cache in the PostgreSQL database at `url` (feature `postgres`): table
    /// `pgraphrag_embeddings` with the SQLite file's keys and rows, every batch one
    /// transaction of idempotent upserts, shared by any number of processes and machines.
    ///
    /// ```no_run
    /// let c = pgraphrag_retrieval::dense::EmbeddingCache::open_postgres("postgres://postgres@127.0.0.1:55432/pgraphrag_single").unwrap();
    /// println!("{} vectors", c.len().unwrap());
    /// ```
    #[cfg(feature = "postgres")]
    pub fn open_postgres(url: &str) -> Result<Self> {
        Ok(EmbeddingCache {
            store: Artifacts::open_postgres(url, &ARTIFACT)?,
        })
    }

    /// Opens `location`: a PostgreSQL URL (feature `postgres`) or a SQLite file path
    /// ([`Artifacts::open_location`]).
    pub fn open_location(location: &Path) -> Result<Self> {
        Ok(EmbeddingCache {
            store: Artifacts::open_location(location, &ARTIFACT)?,
        })
    }

    /// A cache in memory only (for tests and one-off runs).
    pub fn in_memory() -> Result<Self> {
        Ok(EmbeddingCache {
            store: Artifacts::in_memory(&ARTIFACT)?,
        })
    }

    /// The file behind the cache (`:memory:` for [`EmbeddingCache::in_memory`], the URL without
    /// its password for a PostgreSQL cache).
    pub fn path(&self) -> &Path {
        self.store.location()
    }

    /// The model key of `encoder` with `pooling`: `"{fingerprint}/{pooling}"`.
    pub fn model_key(encoder: &BertEncoder, pooling: Pooling) -> Result<String> {
        Ok(format!("{}/{}", encoder.fingerprint()?, pooling.name()))
    }

    /// A row this model cannot use.
    fn err(&self, e: impl std::fmt::Display) -> Error {
        Error::Cache {
            path: self.path().to_path_buf(),
            message: e.to_string(),
        }
    }

    /// A stored vector: `dim` little-endian `f32`s.
    fn decode(&self, model: &str, dim: i64, bytes: &[u8]) -> Result<Vec<f32>> {
        if bytes.len() != dim.max(0) as usize * 4 {
            return Err(self.err(format!(
                "corrupt row for model {model}: {} bytes for dimension {dim}; delete the file to rebuild it",
                bytes.len()
            )));
        }
        Ok(bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect())
    }

    /// Looks up `texts` under `model`; `None` for each text not cached.
    pub fn get_many(&self, model: &str, texts: &[&str]) -> Result<Vec<Option<Vec<f32>>>> {
        let conn = match self.store.conn() {
            Conn::Sqlite(conn) => conn,
            #[cfg(not(feature = "postgres"))]
            #[allow(unreachable_patterns)]
            _ => return Err(self.store.no_postgres().into()),
            #[cfg(feature = "postgres")]
            Conn::Postgres(t) => {
                let keys: Vec<Vec<u8>> = texts.iter().map(|t| text_key(t).to_vec()).collect();
                let rows = t
                    .run("reading embeddings", |c| {
                        c.query(
                            "SELECT text_sha256, dim, vec FROM pgraphrag_embeddings \
                             WHERE model = $1 AND text_sha256 = ANY($2)",
                            &[&model, &keys],
                        )
                    })
                    .map_err(pgraphrag_store::Error::from)?;
                let mut found = std::collections::HashMap::with_capacity(rows.len());
                for r in rows {
                    let key: Vec<u8> = r.get(0);
                    let dim: i32 = r.get(1);
                    let bytes: Vec<u8> = r.get(2);
                    found.insert(key, self.decode(model, dim.into(), &bytes)?);
                }
                return Ok(keys.iter().map(|k| found.get(k).cloned()).collect());
            }
        };
        let failed = || self.store.failed("reading embeddings");
        let mut stmt = conn
            .prepare_cached("SELECT dim, vec FROM embeddings WHERE model = ?1 AND text_sha256 = ?2")
            .map_err(failed())?;
        let mut out = Vec::with_capacity(texts.len());
        for t in texts {
            let row: Option<(i64, Vec<u8>)> = stmt
                .query_row(params![model, &text_key(t)[..]], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })
                .optional()
                .map_err(failed())?;
            out.push(match row {
                None => None,
                Some((dim, bytes)) => Some(self.decode(model, dim, &bytes)?),
            });
        }
        Ok(out)
    }

    /// Stores `(text, vector)` pairs under `model`, in one transaction (replacing old rows).
    pub fn put_many(&self, model: &str, items: &[(&str, &[f32])]) -> Result<()> {
        let mut conn = match self.store.conn() {
            Conn::Sqlite(conn) => conn,
            #[cfg(not(feature = "postgres"))]
            #[allow(unreachable_patterns)]
            _ => return Err(self.store.no_postgres().into()),
            #[cfg(feature = "postgres")]
            Conn::Postgres(t) => {
                return t
                    .run("storing embeddings", |c| {
                        let mut tx = c.transaction()?;
                        let st = tx.prepare(
                            "INSERT INTO pgraphrag_embeddings (model, text_sha256, dim, vec) \
                             VALUES ($1, $2, $3, $4) ON CONFLICT (model, text_sha256) \
                             DO UPDATE SET dim = EXCLUDED.dim, vec = EXCLUDED.vec",
                        )?;
                        for (t, v) in items {
                            let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
                            let key = text_key(t).to_vec();
                            tx.execute(&st, &[&model, &key, &(v.len() as i32), &bytes])?;
                        }
                        tx.commit()
                    })
                    .map_err(|e| pgraphrag_store::Error::from(e).into());
            }
        };
        let failed = || self.store.failed("storing embeddings");
        let tx = conn.transaction().map_err(failed())?;
        {
            let mut stmt = tx
                .prepare_cached(
                    "INSERT OR REPLACE INTO embeddings (model, text_sha256, dim, vec) VALUES (?1, ?2, ?3, ?4)",
                )
                .map_err(failed())?;
            for (t, v) in items {
                let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
                stmt.execute(params![model, &text_key(t)[..], v.len() as i64, bytes])
                    .map_err(failed())?;
            }
        }
        Ok(tx.commit().map_err(failed())?)
    }

    /// How many vectors the cache holds (all models).
    pub fn len(&self) -> Result<usize> {
        let conn = match self.store.conn() {
            Conn::Sqlite(conn) => conn,
            #[cfg(not(feature = "postgres"))]
            #[allow(unreachable_patterns)]
            _ => return Err(self.store.no_postgres().into()),
            #[cfg(feature = "postgres")]
            Conn::Postgres(t) => {
                return t
                    .run("counting embeddings", |c| {
                        c.query_one("SELECT count(*) FROM pgraphrag_embeddings", &[])
                    })
                    .map(|r| r.get::<_, i64>(0).max(0) as usize)
                    .map_err(|e| pgraphrag_store::Error::from(e).into());
            }
        };
        Ok(conn
            .query_row("SELECT COUNT(*) FROM embeddings", [], |r| {
                r.get::<_, i64>(0)
            })
            .map(|n| n as usize)
            .map_err(self.store.failed("counting embeddings"))?)
    }

    /// Whether the cache holds no vector.
    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }
}

/// Encodes `texts` with `pooling` (raw, never normalised), reading what `cache` already
/// holds and writing what it lacks, `chunk` texts per cache transaction, reporting the texts
/// encoded to `progress` (pass `&()` for none). Duplicate texts are encoded once. Returns one row per
/// text, in order.
///
/// This is the whole-split entry point: interrupting it loses at most one chunk. Cache rows
/// are keyed by [`EmbeddingCache::model_key`]; a chunk is `8 × batch_size` texts. For any
/// other [`Encoder`], use [`encode_corpus_with`].
pub fn encode_corpus(
    encoder: &BertEncoder,
    cache: Option<&EmbeddingCache>,
    texts: &[&str],
    pooling: Pooling,
    progress: &dyn Progress,
) -> Result<pgraphrag_core::Embeddings> {
    let key = match cache {
        Some(_) => Some(EmbeddingCache::model_key(encoder, pooling)?),
        None => None,
    };
    let chunk = (encoder.options().batch_size * 8).max(1);
    encode_cached(
        Some(encoder.dim()),
        cache.zip(key.as_deref()),
        texts,
        chunk,
        progress,
        &|batch| encoder.embed(batch, pooling),
    )
}

/// Texts per cache transaction of [`encode_corpus_with`] (8 batches of 32, as
/// [`encode_corpus`] with the default batch size).
pub const CORPUS_CHUNK: usize = 256;

/// [`encode_corpus`] for any [`Encoder`]: its vectors ([`Encoder::encode`]) through `cache`,
/// whose rows are keyed by `model_id` (a name for the encoder and its settings: vectors of
/// different encoders must never share an id), [`CORPUS_CHUNK`] texts per cache
/// transaction. One row per text, in order; duplicate texts are encoded once.
///
/// ```
/// use pgraphrag_core::{Embeddings, Encoder, Result};
/// use pgraphrag_retrieval::dense::{EmbeddingCache, encode_corpus_with};
/// /// Two features: length and number of spaces.
/// struct Counts;
/// impl Encoder for Counts {
///     fn encode(&self, texts: &[&str]) -> Result<Embeddings> {
///         let v = texts.iter().flat_map(|t| [t.len() as f32, t.matches(' ').count() as f32]).collect();
///         Embeddings::new(2, v)
///     }
/// }
/// let cache = EmbeddingCache::in_memory().unwrap();
/// let e = encode_corpus_with(&Counts, "counts-v1", Some(&cache), &["a b", "cd"], &()).unwrap();
/// assert_eq!(e.row(0), &[3.0, 1.0]);
/// assert_eq!(cache.get_many("counts-v1", &["cd"]).unwrap(), vec![Some(vec![2.0, 0.0])]);
/// ```
pub fn encode_corpus_with<E: Encoder + ?Sized>(
    encoder: &E,
    model_id: &str,
    cache: Option<&EmbeddingCache>,
    texts: &[&str],
    progress: &dyn Progress,
) -> Result<pgraphrag_core::Embeddings> {
    encode_cached(
        encoder.dim(),
        cache.map(|c| (c, model_id)),
        texts,
        CORPUS_CHUNK,
        progress,
        &|batch| encode_err(encoder.encode(batch)),
    )
}

/// An [`Encoder`]'s error as this crate's.
pub(crate) fn encode_err<T>(r: pgraphrag_core::Result<T>) -> Result<T> {
    r.map_err(|e| Error::Compute(format!("encoder: {e}")))
}

/// The one implementation behind [`encode_corpus`] and [`encode_corpus_with`]: `embed`
/// encodes one chunk; `dim` is the encoder's dimension when known up front.
pub(crate) fn encode_cached(
    dim: Option<usize>,
    cache: Option<(&EmbeddingCache, &str)>,
    texts: &[&str],
    chunk: usize,
    progress: &dyn Progress,
    embed: &dyn Fn(&[&str]) -> Result<pgraphrag_core::Embeddings>,
) -> Result<pgraphrag_core::Embeddings> {
    // Unique texts, first occurrence order.
    let mut index: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let mut uniq: Vec<&str> = Vec::new();
    let slot: Vec<usize> = texts
        .iter()
        .map(|&t| {
            *index.entry(t).or_insert_with(|| {
                uniq.push(t);
                uniq.len() - 1
            })
        })
        .collect();
    let mut vecs: Vec<Option<Vec<f32>>> = match cache {
        Some((c, key)) => c.get_many(key, &uniq)?,
        None => vec![None; uniq.len()],
    };
    let mut dim = dim;
    let mut check = |n: usize, what: &str| -> Result<()> {
        match dim {
            Some(d) if d != n => Err(match cache {
                Some((c, _)) => c.err(format!(
                    "{what} vectors have dimension {n} but the model has {d}"
                )),
                None => Error::Compute(format!(
                    "{what} vectors have dimension {n} but the model has {d}"
                )),
            }),
            Some(_) => Ok(()),
            None => {
                dim = Some(n);
                Ok(())
            }
        }
    };
    for v in vecs.iter().flatten() {
        check(v.len(), "cached")?;
    }
    let mut missing: Vec<usize> = (0..uniq.len()).filter(|&i| vecs[i].is_none()).collect();
    // Longest first, so each chunk (and each batch within it, which the encoder sorts by
    // token count) holds texts of similar length and padding stays minimal.
    missing.sort_by_key(|&i| std::cmp::Reverse(uniq[i].len()));
    if !missing.is_empty() {
        progress.start(missing.len() as u64, "texts");
    }
    for ids in missing.chunks(chunk.max(1)) {
        let batch: Vec<&str> = ids.iter().map(|&i| uniq[i]).collect();
        let e = embed(&batch)?;
        if e.rows() != batch.len() {
            return Err(Error::Compute(format!(
                "the encoder returned {} vectors for {} texts",
                e.rows(),
                batch.len()
            )));
        }
        check(e.dim(), "encoded")?;
        if let Some((c, k)) = cache {
            let items: Vec<(&str, &[f32])> = batch
                .iter()
                .enumerate()
                .map(|(r, t)| (*t, e.row(r)))
                .collect();
            c.put_many(k, &items)?;
        }
        for (r, &i) in ids.iter().enumerate() {
            vecs[i] = Some(e.row(r).to_vec());
        }
        progress.advance(ids.len() as u64);
    }
    if !missing.is_empty() {
        progress.finish();
    }
    let dim = match dim {
        Some(d) => d,
        // Nothing to encode and no dimension known: ask the encoder for an empty batch.
        None => embed(&[])?.dim(),
    };
    let mut out = vec![0f32; texts.len() * dim];
    for (i, s) in slot.iter().enumerate() {
        if let Some(v) = &vecs[*s] {
            out[i * dim..(i + 1) * dim].copy_from_slice(v);
        }
    }
    pgraphrag_core::Embeddings::new(dim, out).map_err(|e| Error::Compute(e.to_string()))
}
