//! The generation cache, (model id, prompt, generation parameters) → output, in one of the
//! [`Artifacts`] backends (a SQLite file, or PostgreSQL with the feature `postgres`), and
//! [`CachedGenerator`], the [`Generator`] layer that consults it.
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use pgraphrag_core::{GenParams, Generator, Prompt};
use rusqlite::{OptionalExtension, params};
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::artifacts::{Artifact, Artifacts, Conn};
use crate::sqlite::{Options, Schema};
use crate::{Error, Result};

/// Why a [`CachedGenerator`] call failed: the cache, or the wrapped generator.
#[derive(Debug, thiserror::Error)]
pub enum CachedError {
    /// Reading or storing in the cache failed.
    #[error(transparent)]
    Cache(#[from] Error),
    /// The wrapped generator failed on the prompt.
    #[error("generation failed")]
    Generator(#[source] pgraphrag_core::Error),
}

impl From<CachedError> for pgraphrag_core::Error {
    /// A generator's own error as it was; a cache failure as a backend error.
    fn from(e: CachedError) -> Self {
        match e {
            CachedError::Generator(e) => e,
            CachedError::Cache(e) => pgraphrag_core::Error::backend(e),
        }
    }
}

/// A SQLite file mapping (model id, prompt, generation parameters) to the generated text.
///
/// Every [`put`](Self::put) is its own committed transaction in WAL mode with
/// `synchronous = FULL`, so a crash, a `kill -9` or Ctrl-C loses no finished generation;
/// a rerun finds them all. Several processes may share the file (SQLite's locking, with a
/// 30 s busy timeout). The file is opened through [`crate::sqlite`].
///
/// ```
/// use pgraphrag_core::{GenParams, Prompt};
/// let cache = pgraphrag_store::GenerationCache::in_memory().unwrap();
/// let (p, params) = (Prompt::user("Hi"), GenParams::default());
/// assert_eq!(cache.get("m", &p, &params).unwrap(), None);
/// cache.put("m", &p, &params, "Hello!", 0.1).unwrap();
/// assert_eq!(cache.get("m", &p, &params).unwrap().as_deref(), Some("Hello!"));
/// assert_eq!(cache.get("other-model", &p, &params).unwrap(), None);
/// assert_eq!(cache.len().unwrap(), 1);
/// ```
pub struct GenerationCache {
    store: Artifacts,
}

/// The generation cache's tables: `generations` keyed by [`GenerationCache::key`] in a SQLite
/// file (unchanged since the first version, so files written before the stamps are read), and
/// `pgraphrag_generations` with the same columns in PostgreSQL.
const ARTIFACT: Artifact<'static> = Artifact {
    sqlite: Schema {
        kind: "generation cache",
        // "PGgc"
        application_id: 0x5047_6763,
        version: 1,
        ddl: "CREATE TABLE IF NOT EXISTS generations (
              key      TEXT PRIMARY KEY,
              model    TEXT NOT NULL,
              prompt   TEXT NOT NULL,
              params   TEXT NOT NULL,
              output   TEXT NOT NULL,
              seconds  REAL NOT NULL,
              created  TEXT NOT NULL DEFAULT (datetime('now'))
          );",
    },
    options: Options::DURABLE,
    postgres: Some(
        "CREATE TABLE IF NOT EXISTS pgraphrag_generations (
              key      text PRIMARY KEY,
              model    text NOT NULL,
              prompt   text NOT NULL,
              params   text NOT NULL,
              output   text NOT NULL,
              seconds  double precision NOT NULL,
              created  timestamptz NOT NULL DEFAULT now()
          )",
    ),
};

#[derive(Serialize)]
struct KeyParts<'a> {
    model: &'a str,
    prompt: &'a Prompt,
    params: &'a GenParams,
}

impl GenerationCache {
    /// Opens (creating if needed, with its parent folders) the cache at `path`.
    ///
    /// A file of another kind (e.g. an embedding cache) or written by another schema
    /// version is refused with the [`Error`] naming it.
    pub fn open(path: &Path) -> Result<Self> {
        Artifacts::open(path, &ARTIFACT).map(|store| GenerationCache { store })
    }

    /// Opens the cache in the PostgreSQL database at `url` (feature `postgres`): table
    /// `pgraphrag_generations`, the same keys and rows as the SQLite file, every
    /// [`put`](Self::put) an idempotent upsert committed before it returns, shared by any
    /// number of processes on any number of machines. A database holding another version of
    /// the table is refused with the [`Error`] naming it.
    ///
    /// ```no_run
    /// let cache = pgraphrag_store::GenerationCache::open_postgres("postgres://postgres@127.0.0.1:55432/pgraphrag_single").unwrap();
    /// println!("{} generations", cache.len().unwrap());
    /// ```
    #[cfg(feature = "postgres")]
    pub fn open_postgres(url: &str) -> Result<Self> {
        Artifacts::open_postgres(url, &ARTIFACT).map(|store| GenerationCache { store })
    }

    /// Opens `location`: a PostgreSQL URL (feature `postgres`) or a SQLite file path
    /// ([`Artifacts::open_location`]).
    pub fn open_location(location: &Path) -> Result<Self> {
        Artifacts::open_location(location, &ARTIFACT).map(|store| GenerationCache { store })
    }

    /// A cache that lives in memory only (for tests and one-off runs).
    pub fn in_memory() -> Result<Self> {
        Artifacts::in_memory(&ARTIFACT).map(|store| GenerationCache { store })
    }

    /// The file this cache lives in (`:memory:` for [`in_memory`](Self::in_memory), the URL
    /// without its password for `open_postgres` (feature `postgres`)).
    pub fn path(&self) -> &Path {
        self.store.location()
    }

    /// The cache key: the SHA-256 (hex) of the canonical JSON of model id, prompt and
    /// parameters. Any change to any of them (even the seed) is a different key.
    ///
    /// ```
    /// use pgraphrag_core::{GenParams, Prompt};
    /// use pgraphrag_store::GenerationCache;
    /// let p = Prompt::user("Hi");
    /// let a = GenerationCache::key("m", &p, &GenParams::default());
    /// let b = GenerationCache::key("m", &p, &GenParams { seed: 7, ..Default::default() });
    /// assert_eq!(a.len(), 64);
    /// assert_ne!(a, b);
    /// ```
    pub fn key(model: &str, prompt: &Prompt, params: &GenParams) -> String {
        let json = serde_json::to_string(&KeyParts {
            model,
            prompt,
            params,
        })
        .expect("prompt and params serialize");
        let digest = Sha256::digest(json.as_bytes());
        digest.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The cached output for this (model, prompt, params), if any.
    pub fn get(&self, model: &str, prompt: &Prompt, params: &GenParams) -> Result<Option<String>> {
        let key = Self::key(model, prompt, params);
        match self.store.conn() {
            Conn::Sqlite(c) => c
                .query_row(
                    "SELECT output FROM generations WHERE key = ?1",
                    params![key],
                    |r| r.get(0),
                )
                .optional()
                .map_err(self.store.failed("reading a generation")),
            #[cfg(feature = "postgres")]
            Conn::Postgres(t) => Ok(t
                .run("reading a generation", |c| {
                    c.query_opt(
                        "SELECT output FROM pgraphrag_generations WHERE key = $1",
                        &[&key],
                    )
                })?
                .map(|r| r.get(0))),
        }
    }

    /// Stores an output (committed before returning). `seconds` is how long it took.
    pub fn put(
        &self,
        model: &str,
        prompt: &Prompt,
        params: &GenParams,
        output: &str,
        seconds: f64,
    ) -> Result<()> {
        let key = Self::key(model, prompt, params);
        let prompt_json = serde_json::to_string(prompt).expect("prompt serializes");
        let params_json = serde_json::to_string(params).expect("params serialize");
        match self.store.conn() {
            Conn::Sqlite(c) => {
                c.execute(
                        "INSERT OR REPLACE INTO generations (key, model, prompt, params, output, seconds)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    params![key, model, prompt_json, params_json, output, seconds],
                )
                .map_err(self.store.failed("storing a generation"))?;
            }
            #[cfg(feature = "postgres")]
            Conn::Postgres(t) => {
                t.run("storing a generation", |c| {
                    c.execute(
                        "INSERT INTO pgraphrag_generations (key, model, prompt, params, output, seconds) \
                         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (key) DO UPDATE SET \
                         model = EXCLUDED.model, prompt = EXCLUDED.prompt, params = EXCLUDED.params, \
                         output = EXCLUDED.output, seconds = EXCLUDED.seconds, created = now()",
                        &[&key, &model, &prompt_json, &params_json, &output, &seconds],
                    )
                })?;
            }
        }
        Ok(())
    }

    /// How many generations the cache holds.
    pub fn len(&self) -> Result<usize> {
        let n: i64 = match self.store.conn() {
            Conn::Sqlite(c) => c
                .query_row("SELECT COUNT(*) FROM generations", [], |r| r.get(0))
                .map_err(self.store.failed("counting generations"))?,
            #[cfg(feature = "postgres")]
            Conn::Postgres(t) => t
                .run("counting generations", |c| {
                    c.query_one("SELECT count(*) FROM pgraphrag_generations", &[])
                })?
                .get(0),
        };
        Ok(n.max(0) as usize)
    }

    /// `true` when the cache holds nothing.
    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }
}

/// Counters of a [`CachedGenerator`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CacheStats {
    /// Calls answered from the cache.
    pub hits: usize,
    /// Calls that ran the model (and were then stored).
    pub generated: usize,
}

/// A [`Generator`] that answers from a [`GenerationCache`] when it can and stores every
/// new generation before returning it.
///
/// ```
/// use pgraphrag_core::{GenParams, Generator, Prompt, Result};
/// use pgraphrag_store::{CachedGenerator, GenerationCache};
///
/// struct Echo;
/// impl Generator for Echo {
///     fn generate(&self, p: &Prompt, _: &GenParams) -> Result<String> { Ok(p.messages()[0].content.clone()) }
/// }
/// let g = CachedGenerator::new(Echo, "echo", GenerationCache::in_memory().unwrap());
/// let params = GenParams::default();
/// assert_eq!(g.generate(&Prompt::user("a"), &params).unwrap(), "a");
/// assert_eq!(g.generate(&Prompt::user("a"), &params).unwrap(), "a");
/// assert_eq!((g.stats().hits, g.stats().generated), (1, 1));
/// ```
pub struct CachedGenerator<G> {
    inner: G,
    model_id: String,
    cache: GenerationCache,
    hits: AtomicUsize,
    generated: AtomicUsize,
    on_stored: Option<OnStored>,
}

/// Called with the cache key of each answer right after it is committed.
type OnStored = Box<dyn Fn(&str) + Send + Sync>;

impl<G: Generator> CachedGenerator<G> {
    /// Wraps `inner`, identified in the cache as `model_id` (use something that changes
    /// when the weights change, e.g. the file name and size, or the server's model name).
    pub fn new(inner: G, model_id: impl Into<String>, cache: GenerationCache) -> Self {
        CachedGenerator {
            inner,
            model_id: model_id.into(),
            cache,
            hits: AtomicUsize::new(0),
            generated: AtomicUsize::new(0),
            on_stored: None,
        }
    }

    /// Calls `f(cache key)` right after each newly generated answer is committed to the cache
    /// (a journal of finished work: the CLI's `bench --journal` appends one line per answer).
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use pgraphrag_core::{GenParams, Generator, Prompt, Result};
    /// use pgraphrag_store::{CachedGenerator, GenerationCache};
    /// struct Echo;
    /// impl Generator for Echo {
    ///     fn generate(&self, p: &Prompt, _: &GenParams) -> Result<String> { Ok(p.messages()[0].content.clone()) }
    /// }
    /// let keys = Arc::new(Mutex::new(Vec::new()));
    /// let k2 = keys.clone();
    /// let g = CachedGenerator::new(Echo, "echo", GenerationCache::in_memory().unwrap())
    ///     .with_on_stored(move |k| k2.lock().unwrap().push(k.to_string()));
    /// let prompts = [Prompt::user("a"), Prompt::user("b")];
    /// g.generate_batch(&prompts, &GenParams::default());
    /// g.generate_batch(&prompts, &GenParams::default()); // from the cache: nothing stored
    /// assert_eq!(keys.lock().unwrap().len(), 2);
    /// ```
    pub fn with_on_stored(mut self, f: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.on_stored = Some(Box::new(f));
        self
    }

    fn stored(&self, prompt: &Prompt, params: &GenParams) {
        stored(
            &self.generated,
            &self.on_stored,
            &self.model_id,
            prompt,
            params,
        );
    }

    /// The model id used in cache keys.
    pub fn model_id(&self) -> &str {
        &self.model_id
    }

    /// The cache.
    pub fn cache(&self) -> &GenerationCache {
        &self.cache
    }

    /// The wrapped generator.
    pub fn inner(&self) -> &G {
        &self.inner
    }

    /// Hits and generations so far.
    pub fn stats(&self) -> CacheStats {
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            generated: self.generated.load(Ordering::Relaxed),
        }
    }

    /// Like [`Generator::generate`], also saying whether the answer came from the cache.
    pub fn generate_cached(
        &self,
        prompt: &Prompt,
        params: &GenParams,
    ) -> Result<(String, bool), CachedError> {
        if let Some(out) = self.cache.get(&self.model_id, prompt, params)? {
            self.hits.fetch_add(1, Ordering::Relaxed);
            return Ok((out, true));
        }
        let start = Instant::now();
        let out = self
            .inner
            .generate(prompt, params)
            .map_err(CachedError::Generator)?;
        self.cache.put(
            &self.model_id,
            prompt,
            params,
            &out,
            start.elapsed().as_secs_f64(),
        )?;
        self.stored(prompt, params);
        Ok((out, false))
    }

    /// [`Self::generate_cached`] for several prompts: cached answers are returned as they are,
    /// the others are generated with one [`Generator::generate_batch_each`] call and each is
    /// stored (committed) the moment the generator reports it finished, not at the end of the
    /// batch: a process killed mid-batch keeps every answer that had finished. One result per
    /// prompt, in order; a failed prompt does not lose the others.
    pub fn generate_cached_batch(
        &self,
        prompts: &[Prompt],
        params: &GenParams,
    ) -> Vec<Result<(String, bool), CachedError>> {
        let mut out: Vec<Option<Result<(String, bool), CachedError>>> =
            Vec::with_capacity(prompts.len());
        let mut todo = Vec::new();
        for (i, p) in prompts.iter().enumerate() {
            match self.cache.get(&self.model_id, p, params) {
                Ok(Some(s)) => {
                    self.hits.fetch_add(1, Ordering::Relaxed);
                    out.push(Some(Ok((s, true))));
                }
                Ok(None) => {
                    todo.push(i);
                    out.push(None);
                }
                Err(e) => out.push(Some(Err(e.into()))),
            }
        }
        if !todo.is_empty() {
            // Each answer is stored (its own committed transaction) the moment the generator
            // reports it, so a crash mid-batch loses none that had finished. Its recorded time
            // is the wall time since the previous answer of the batch finished, so the times of
            // a batch add up to its wall time.
            let batch: Vec<Prompt> = todo.iter().map(|&i| prompts[i].clone()).collect();
            let mut last = Instant::now();
            let (cache, model_id) = (&self.cache, &self.model_id);
            let (generated, on_stored) = (&self.generated, &self.on_stored);
            let out_ref = &mut out;
            self.inner.generate_batch_each(&batch, params, &mut |j, r| {
                let Some(&i) = todo.get(j) else { return };
                let secs = last.elapsed().as_secs_f64();
                last = Instant::now();
                out_ref[i] = Some(match r {
                    Ok(s) => cache
                        .put(model_id, &prompts[i], params, &s, secs)
                        .map(|_| {
                            stored(generated, on_stored, model_id, &prompts[i], params);
                            (s, false)
                        })
                        .map_err(CachedError::Cache),
                    Err(e) => Err(CachedError::Generator(e)),
                });
            });
        }
        out.into_iter()
            .map(|r| {
                r.unwrap_or_else(|| {
                    Err(CachedError::Generator(pgraphrag_core::Error::InvalidInput(
                        "the generator returned fewer results than prompts".into(),
                    )))
                })
            })
            .collect()
    }
}

/// Counts a newly stored answer and tells the observer.
fn stored(
    generated: &AtomicUsize,
    on_stored: &Option<OnStored>,
    model_id: &str,
    prompt: &Prompt,
    params: &GenParams,
) {
    generated.fetch_add(1, Ordering::Relaxed);
    if let Some(f) = on_stored {
        f(&GenerationCache::key(model_id, prompt, params));
    }
}

impl<G: Generator> Generator for CachedGenerator<G> {
    fn generate(&self, prompt: &Prompt, params: &GenParams) -> pgraphrag_core::Result<String> {
        Ok(self.generate_cached(prompt, params)?.0)
    }
    fn generate_batch(
        &self,
        prompts: &[Prompt],
        params: &GenParams,
    ) -> Vec<pgraphrag_core::Result<String>> {
        self.generate_cached_batch(prompts, params)
            .into_iter()
            .map(|r| Ok(r?.0))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn survives_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/cache.sqlite");
        let p = Prompt::user("x");
        let params = GenParams::default();
        {
            let c = GenerationCache::open(&path).unwrap();
            c.put("m", &p, &params, "y", 1.0).unwrap();
        }
        let c = GenerationCache::open(&path).unwrap();
        assert_eq!(c.get("m", &p, &params).unwrap().as_deref(), Some("y"));
        assert_eq!(c.len().unwrap(), 1);
    }
}
