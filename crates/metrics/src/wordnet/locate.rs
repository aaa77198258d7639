//! Where WordNet 3.0 is looked for. The library reads no environment variable and no process
//! state itself: the caller passes a lookup for variables (a binary passes
//! `|k| std::env::var_os(k)`, a test a map) and the folders to search from.
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The files a WordNet folder must hold (the lexicographer file names are built in).
pub const REQUIRED_FILES: [&str; 12] = [
    "index.noun",
    "index.verb",
    "index.adj",
    "index.adv",
    "data.noun",
    "data.verb",
    "data.adj",
    "data.adv",
    "noun.exc",
    "verb.exc",
    "adj.exc",
    "adv.exc",
];

/// NLTK's own default data folders on Unix (after `~/nltk_data`), as `nltk.data.path` lists them.
const NLTK_SYSTEM_DIRS: [&str; 4] = [
    "/usr/share/nltk_data",
    "/usr/local/share/nltk_data",
    "/usr/lib/nltk_data",
    "/usr/local/lib/nltk_data",
];

/// The folders searched for WordNet 3.0, in order:
/// 1. `$WORDNET_DIR`, when set and not empty;
/// 2. `models/wordnet` in each of `roots` and their ancestors (where `scripts/fetch-wordnet.sh`
///    puts it; a binary passes its working directory and its executable's folder);
/// 3. NLTK's data folders, which Python users already have: every entry of `$NLTK_DATA`, then
///    `$HOME/nltk_data`, then NLTK's system folders (`/usr/share/nltk_data`, …), each as
///    `<folder>/corpora/wordnet` (unzipped);
/// 4. `/usr/share/wordnet` (Debian's `wordnet-base`).
///
/// Duplicates are kept once, at their first place.
///
/// ```
/// use std::ffi::OsString;
/// use pgraphrag_metrics::wordnet::search_paths;
/// let env = |k: &str| (k == "NLTK_DATA").then(|| OsString::from("/opt/nltk"));
/// let paths = search_paths(env, &[]);
/// assert_eq!(paths[0], std::path::Path::new("/opt/nltk/corpora/wordnet"));
/// assert_eq!(paths.last().unwrap(), std::path::Path::new("/usr/share/wordnet"));
/// ```
pub fn search_paths(lookup: impl Fn(&str) -> Option<OsString>, roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    let mut push = |p: PathBuf| {
        if !out.contains(&p) {
            out.push(p);
        }
    };
    if let Some(d) = lookup("WORDNET_DIR").filter(|d| !d.is_empty()) {
        push(PathBuf::from(d));
    }
    for root in roots {
        for dir in root.ancestors() {
            push(dir.join("models").join("wordnet"));
        }
    }
    let corpora = |base: &Path| base.join("corpora").join("wordnet");
    if let Some(list) = lookup("NLTK_DATA") {
        for base in std::env::split_paths(&list).filter(|p| !p.as_os_str().is_empty()) {
            push(corpora(&base));
        }
    }
    if let Some(home) = lookup("HOME").filter(|h| !h.is_empty()) {
        push(corpora(&Path::new(&home).join("nltk_data")));
    }
    for base in NLTK_SYSTEM_DIRS {
        push(corpora(Path::new(base)));
    }
    push(PathBuf::from("/usr/share/wordnet"));
    out
}

/// Whether `dir` holds every file of [`REQUIRED_FILES`].
pub fn is_wordnet_dir(dir: &Path) -> bool {
    REQUIRED_FILES.iter().all(|f| dir.join(f).is_file())
}

/// The first folder of `paths` that holds WordNet 3.0 ([`is_wordnet_dir`]).
///
/// # Errors
/// [`Error::WordNetNotFound`] listing every folder tried, and what to do.
///
/// ```
/// use pgraphrag_metrics::{Error, wordnet::find};
/// let err = find(&["/nonexistent/wordnet".into()]).unwrap_err();
/// assert!(matches!(err, Error::WordNetNotFound { .. }));
/// assert!(err.to_string().contains("/nonexistent/wordnet"));
/// ```
pub fn find(paths: &[PathBuf]) -> Result<PathBuf> {
    paths
        .iter()
        .find(|p| is_wordnet_dir(p))
        .cloned()
        .ok_or_else(|| Error::WordNetNotFound {
            tried: paths.to_vec(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_and_dedup() {
        let env = |k: &str| match k {
            "WORDNET_DIR" => Some(OsString::from("/wn")),
            "NLTK_DATA" => Some(OsString::from("/a:/b")),
            "HOME" => Some(OsString::from("/home/u")),
            _ => None,
        };
        let p = search_paths(env, &[PathBuf::from("/repo/x"), PathBuf::from("/repo")]);
        let s: Vec<String> = p.iter().map(|p| p.display().to_string()).collect();
        assert_eq!(
            &s[..6],
            [
                "/wn",
                "/repo/x/models/wordnet",
                "/repo/models/wordnet",
                "/models/wordnet",
                "/a/corpora/wordnet",
                "/b/corpora/wordnet"
            ]
        );
        assert_eq!(s[6], "/home/u/nltk_data/corpora/wordnet");
        assert_eq!(s.last().unwrap(), "/usr/share/wordnet");
        assert_eq!(s.iter().filter(|x| *x == "/models/wordnet").count(), 1);
    }

    #[test]
    fn empty_variables_are_ignored() {
        let env = |k: &str| (k == "WORDNET_DIR" || k == "HOME").then(OsString::new);
        let p = search_paths(env, &[]);
        assert_eq!(p[0], Path::new("/usr/share/nltk_data/corpora/wordnet"));
    }

    #[test]
    fn finds_a_complete_folder_only() {
        let d = tempfile::tempdir().unwrap();
        let part = d.path().join("part");
        let full = d.path().join("full");
        std::fs::create_dir_all(&part).unwrap();
        std::fs::create_dir_all(&full).unwrap();
        for f in REQUIRED_FILES {
            std::fs::write(full.join(f), "x").unwrap();
        }
        std::fs::write(part.join("index.noun"), "x").unwrap();
        assert_eq!(find(&[part.clone(), full.clone()]).unwrap(), full);
        let e = find(&[part]).unwrap_err().to_string();
        assert!(e.contains("fetch-wordnet"), "{e}");
    }
}
