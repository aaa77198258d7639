//! WordNet 3.0 lookups exactly as nltk 3.9.1's `WordNetCorpusReader` does them for METEOR:
//! `synsets(word)` over all parts of speech (noun, verb, adjective, adverb, in that order), with
//! `_morphy` (the `*.exc` exception lists, one round of detachment rules, and only forms that exist
//! in the index for that part of speech), then each synset's lemma names.
//!
//! The data are the Princeton WordNet 3.0 files Debian ships in `wordnet-base`
//! (`/usr/share/wordnet`): `index.{noun,verb,adj,adv}`, `data.*` and `*.exc`. Set `WORDNET_DIR` to
//! use another folder. They are loaded once, lazily ([`WordNet::global`]); `data.*` files are kept
//! in memory and a synset's line is parsed when it is asked for.
//!
//! ```
//! let wn = pgraphrag_metrics::wordnet::WordNet::global()?;
//! let names = wn.synset_lemma_names("dogs");
//! assert!(names.iter().any(|n| n == "domestic_dog"));
//! # Ok::<(), pgraphrag_metrics::Error>(())
//! ```
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock, RwLock};

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

/// The folder WordNet is read from: `WORDNET_DIR`, else `/usr/share/wordnet`.
pub fn default_dir() -> PathBuf {
    std::env::var_os("WORDNET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/share/wordnet"))
}

/// WordNet 3.0 in memory: the lemma index, the exception lists and the raw data files.
pub struct WordNet {
    /// `index.*` files, searched by binary search (indexed like `POS`).
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
                &self.index.iter().map(|i| i.lines.len()).sum::<usize>(),
            )
            .finish()
    }
}

static GLOBAL: OnceLock<std::result::Result<WordNet, (PathBuf, String)>> = OnceLock::new();

fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|source| Error::WordNetMissing {
        path: path.to_path_buf(),
        source,
    })
}

impl WordNet {
    /// The process-wide WordNet, loaded from [`default_dir`] on first use.
    pub fn global() -> Result<&'static WordNet> {
        match GLOBAL.get_or_init(|| {
            let dir = default_dir();
            WordNet::load(&dir).map_err(|e| (dir, e.to_string()))
        }) {
            Ok(wn) => Ok(wn),
            Err((dir, msg)) => Err(Error::WordNetMissing {
                path: dir.clone(),
                source: std::io::Error::other(msg.clone()),
            }),
        }
    }

    /// Loads WordNet from a folder holding `index.*`, `data.*` and `*.exc`.
    pub fn load(dir: &Path) -> Result<WordNet> {
        let mut index: [IndexFile; 4] = Default::default();
        let mut exceptions: [HashMap<String, Vec<String>>; 4] = Default::default();
        let mut data: [Vec<u8>; 4] = Default::default();
        for (k, (_, name)) in POS.iter().enumerate() {
            let path = dir.join(format!("index.{name}"));
            index[k] = IndexFile::new(read(&path)?);
            if index[k].lines.is_empty() {
                return Err(Error::WordNetFormat {
                    path,
                    line: 1,
                    message: "no lemma lines".into(),
                });
            }
            let path = dir.join(format!("{name}.exc"));
            let bytes = read(&path)?;
            for line in String::from_utf8_lossy(&bytes).lines() {
                let mut it = line.split_whitespace();
                if let Some(form) = it.next() {
                    exceptions[k].insert(form.to_string(), it.map(str::to_string).collect());
                }
            }
            data[k] = read(&dir.join(format!("data.{name}")))?;
        }
        Ok(WordNet {
            index,
            exceptions,
            data,
            cache: RwLock::new(FxMap::default()),
        })
    }

    /// Number of (lemma, part of speech) entries in the index.
    pub fn len(&self) -> usize {
        self.index.iter().map(|i| i.lines.len()).sum()
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
        let line = String::from_utf8_lossy(&data[start..end]);
        let mut it = line.split_whitespace();
        if it.next().and_then(|o| o.parse::<u32>().ok()) != Some(offset) {
            return;
        }
        it.next(); // lex_filenum
        it.next(); // ss_type
        let Some(n) = it.next().and_then(|x| usize::from_str_radix(x, 16).ok()) else {
            return;
        };
        for _ in 0..n {
            let Some(name) = it.next() else { return };
            it.next(); // lex_id
            out.push(strip_marker(name).to_string());
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

/// One `index.<pos>` file: its bytes and the start of every lemma line, sorted by lemma, so a
/// lookup is a binary search (as in WordNet's own C library); nothing is parsed at load time.
#[derive(Default)]
struct IndexFile {
    bytes: Vec<u8>,
    lines: Vec<u32>,
}

impl IndexFile {
    fn new(bytes: Vec<u8>) -> IndexFile {
        let mut lines = Vec::with_capacity(bytes.len() / 30);
        let mut start = 0usize;
        while start < bytes.len() {
            let end = bytes[start..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(bytes.len(), |e| start + e);
            if end > start && bytes[start] != b' ' {
                lines.push(start as u32);
            }
            start = end + 1;
        }
        let mut f = IndexFile { bytes, lines };
        // The files are sorted; sort anyway if one is not (stable: the first of duplicates wins
        // in the search below only by chance, as nltk keeps the last one; none exist in 3.0).
        if !f.lines.windows(2).all(|w| f.lemma(w[0]) <= f.lemma(w[1])) {
            let mut lines = std::mem::take(&mut f.lines);
            lines.sort_by(|&a, &b| f.lemma(a).cmp(f.lemma(b)));
            f.lines = lines;
        }
        f
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
        self.lines
            .binary_search_by(|&s| self.lemma(s).cmp(form.as_bytes()))
            .ok()
            .map(|i| self.lines[i] as usize)
    }

    /// nltk's `_lemma_pos_offset_map[form][pos]` (empty when absent or malformed).
    fn offsets(&self, form: &str) -> Vec<u32> {
        let Some(start) = self.find(form) else {
            return Vec::new();
        };
        let rest = &self.bytes[start..];
        let end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
        let line = String::from_utf8_lossy(&rest[..end]);
        let mut it = line.split_whitespace();
        it.next(); // lemma
        it.next(); // pos
        let num = |s: Option<&str>| s.and_then(|x| x.parse::<usize>().ok());
        let Some(n_synsets) = num(it.next()) else {
            return Vec::new();
        };
        let Some(n_pointers) = num(it.next()) else {
            return Vec::new();
        };
        for _ in 0..n_pointers {
            it.next();
        }
        it.next(); // n_senses
        it.next(); // tagsense_cnt
        (0..n_synsets)
            .filter_map(|_| it.next().and_then(|x| x.parse().ok()))
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
