//! The crate's internal maps of short keys (token ids, n-grams, words) use the rustc "Fx"
//! hash of the `rustc-hash` crate. Not exposed; inputs never choose the table size, and no
//! output depends on iteration order (every map is read by key or summed over).

pub(crate) type FxMap<K, V> = rustc_hash::FxHashMap<K, V>;
