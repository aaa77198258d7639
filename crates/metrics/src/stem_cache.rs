//! A process-wide cache in front of NLTK's Porter stemmer (stemming is pure, so the cache only
//! saves time; words repeat a lot across pairs).
use crate::fxhash::FxMap;
use std::sync::{OnceLock, RwLock};

const LIMIT: usize = 1 << 20;

static CACHE: OnceLock<RwLock<FxMap<String, String>>> = OnceLock::new();

/// `pgraphrag_text::porter::stem(word)`, memoised.
pub(crate) fn stem(word: &str) -> String {
    let cache = CACHE.get_or_init(|| RwLock::new(FxMap::default()));
    if let Ok(c) = cache.read()
        && let Some(s) = c.get(word)
    {
        return s.clone();
    }
    let s = pgraphrag_text::porter::stem(word);
    if let Ok(mut c) = cache.write()
        && c.len() < LIMIT
    {
        c.insert(word.to_string(), s.clone());
    }
    s
}
