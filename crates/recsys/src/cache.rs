//! The score cache: every scored prompt in SQLite, so an evaluation resumes where it stopped.
use std::path::Path;

use pgraphrag_store::artifacts::{Artifact, Artifacts};
use pgraphrag_store::sqlite::{Options, Schema};
use rusqlite::{OptionalExtension, params};

use crate::{Error, LetterScorer, Result};

/// The score cache's table, in a SQLite file only (no PostgreSQL table: a K-RagRec evaluation
/// runs on one machine).
const ARTIFACT: Artifact<'static> = Artifact {
    sqlite: Schema {
        kind: "score cache",
        // "PGsc"
        application_id: 0x5047_7363,
        version: 1,
        ddl: "CREATE TABLE IF NOT EXISTS scores (
              model   TEXT NOT NULL,
              letters TEXT NOT NULL,
              prompt  TEXT NOT NULL,
              scores  TEXT NOT NULL,
              created TEXT NOT NULL DEFAULT (datetime('now')),
              PRIMARY KEY (model, letters, prompt)
          );",
    },
    options: Options::DURABLE,
    postgres: None,
};

/// Letter scores by (scorer id, letters, prompt) in a SQLite file (through
/// [`pgraphrag_store::sqlite`]: WAL, `synchronous = FULL`, kind and schema checks). Every
/// [`put`](Self::put) is its own committed transaction, so `kill -9` loses no finished score.
/// Scores are stored as JSON numbers, which round-trip f64 exactly.
///
/// ```
/// use pgraphrag_recsys::ScoreCache;
/// let c = ScoreCache::in_memory().unwrap();
/// assert_eq!(c.get("m", &['A', 'B'], "Pick.").unwrap(), None);
/// c.put("m", &['A', 'B'], "Pick.", &[-0.5, -1.25]).unwrap();
/// assert_eq!(c.get("m", &['A', 'B'], "Pick.").unwrap(), Some(vec![-0.5, -1.25]));
/// assert_eq!(c.get("other model", &['A', 'B'], "Pick.").unwrap(), None);
/// ```
pub struct ScoreCache {
    store: Artifacts,
}

impl ScoreCache {
    /// Opens (creating if needed, with its parent folders) the cache at `path`. A file of
    /// another kind (an embedding cache, say) or schema version is refused with
    /// [`Error::Store`] naming it.
    ///
    /// ```
    /// let dir = tempfile::tempdir().unwrap();
    /// let c = pgraphrag_recsys::ScoreCache::open(&dir.path().join("scores.sqlite")).unwrap();
    /// assert_eq!(c.len().unwrap(), 0);
    /// ```
    pub fn open(path: &Path) -> Result<Self> {
        Ok(ScoreCache {
            store: Artifacts::open(path, &ARTIFACT)?,
        })
    }

    /// A cache in memory only.
    pub fn in_memory() -> Result<Self> {
        Ok(ScoreCache {
            store: Artifacts::in_memory(&ARTIFACT)?,
        })
    }

    /// The file (`:memory:` for [`in_memory`](Self::in_memory)).
    pub fn path(&self) -> &Path {
        self.store.location()
    }

    /// The cached scores of `prompt` for `letters` under scorer `model`, if any. An entry that
    /// cannot be read, or with a score count other than the letters', is an
    /// [`Error::ScoreOutput`] naming the file (never silently scored again).
    pub fn get(&self, model: &str, letters: &[char], prompt: &str) -> Result<Option<Vec<f64>>> {
        let letters: String = letters.iter().collect();
        let json: Option<String> = self
            .store
            .sqlite_conn()?
            .query_row(
                "SELECT scores FROM scores WHERE model = ?1 AND letters = ?2 AND prompt = ?3",
                params![model, letters, prompt],
                |r| r.get(0),
            )
            .optional()
            .map_err(self.store.failed("reading scores"))?;
        let Some(j) = json else { return Ok(None) };
        let scores = serde_json::from_str::<Vec<f64>>(&j).map_err(|e| Error::ScoreOutput {
            problem: format!(
                "an unreadable cached entry in {} ({e})",
                self.path().display()
            ),
        })?;
        if scores.len() != letters.chars().count() {
            return Err(Error::ScoreOutput {
                problem: format!(
                    "a cached entry in {} with {} scores for the {} letters {letters} \
                     (the file is damaged: delete it to score again)",
                    self.path().display(),
                    scores.len(),
                    letters.chars().count()
                ),
            });
        }
        Ok(Some(scores))
    }

    /// Stores `scores` (replacing any entry with the same key).
    pub fn put(&self, model: &str, letters: &[char], prompt: &str, scores: &[f64]) -> Result<()> {
        let letters: String = letters.iter().collect();
        let json = serde_json::to_string(scores).map_err(|e| Error::ScoreOutput {
            problem: format!("scores that cannot be stored ({e})"),
        })?;
        self.store
            .sqlite_conn()?
            .execute(
                "INSERT OR REPLACE INTO scores (model, letters, prompt, scores) VALUES (?1, ?2, ?3, ?4)",
                params![model, letters, prompt, json],
            )
            .map_err(self.store.failed("storing scores"))?;
        Ok(())
    }

    /// The number of cached entries.
    pub fn len(&self) -> Result<usize> {
        let n: i64 = self
            .store
            .sqlite_conn()?
            .query_row("SELECT COUNT(*) FROM scores", [], |r| r.get(0))
            .map_err(self.store.failed("counting scores"))?;
        Ok(n as usize)
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }
}

/// A [`LetterScorer`] that answers from a [`ScoreCache`] and scores (then stores) only what
/// is missing; its id is the inner scorer's. [`CachedScorer::hits`] counts the answers served
/// from the cache.
///
/// ```
/// use pgraphrag_recsys::{CachedScorer, LetterScorer, Result, ScoreCache};
/// struct Count(std::cell::Cell<usize>);
/// impl LetterScorer for Count {
///     fn id(&self) -> String { "count".into() }
///     fn score(&self, _: &str, letters: &[char]) -> Result<Vec<f64>> {
///         self.0.set(self.0.get() + 1);
///         Ok(vec![0.0; letters.len()])
///     }
/// }
/// let cache = ScoreCache::in_memory().unwrap();
/// let s = CachedScorer::new(Count(Default::default()), &cache);
/// s.score("Pick.", &['A', 'B']).unwrap();
/// s.score("Pick.", &['A', 'B']).unwrap();
/// assert_eq!((s.inner().0.get(), s.hits()), (1, 1));
/// ```
pub struct CachedScorer<'c, S> {
    inner: S,
    cache: &'c ScoreCache,
    id: String,
    hits: std::sync::atomic::AtomicUsize,
}

impl<'c, S: LetterScorer> CachedScorer<'c, S> {
    /// `inner`, cached in `cache`.
    pub fn new(inner: S, cache: &'c ScoreCache) -> Self {
        let id = inner.id();
        CachedScorer {
            inner,
            cache,
            id,
            hits: Default::default(),
        }
    }

    /// The scorer inside.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// How many scores came from the cache.
    pub fn hits(&self) -> usize {
        self.hits.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl<S: LetterScorer> LetterScorer for CachedScorer<'_, S> {
    fn id(&self) -> String {
        self.id.clone()
    }

    fn score(&self, prompt: &str, letters: &[char]) -> Result<Vec<f64>> {
        if let Some(s) = self.cache.get(&self.id, letters, prompt)? {
            self.hits.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            return Ok(s);
        }
        let s = self.inner.score(prompt, letters)?;
        if s.len() != letters.len() {
            return Err(Error::ScoreOutput {
                problem: format!("{} scores for {} letters", s.len(), letters.len()),
            });
        }
        self.cache.put(&self.id, letters, prompt, &s)?;
        Ok(s)
    }
}
