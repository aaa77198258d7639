//! Issue 39: a damaged WordNet is refused whole, naming the file, rather than lowering METEOR
//! (a `data.noun` cut to 1 MB turned 0.639 into 0.469). Each test damages a copy of the
//! WordNet the golden tests use (`models/wordnet`, `scripts/fetch-wordnet.sh`, or
//! `$WORDNET_DIR`); they fail when it is missing, as the golden tests do.
use std::path::{Path, PathBuf};

use pgraphrag_metrics::Error;
use pgraphrag_metrics::wordnet::{REQUIRED_FILES, WordNet, find, search_paths};

/// The intact WordNet folder.
fn wordnet_dir() -> PathBuf {
    find(&search_paths(
        |k| std::env::var_os(k),
        &[PathBuf::from(env!("CARGO_MANIFEST_DIR"))],
    ))
    .unwrap_or_else(|e| panic!("{e}"))
}

/// A copy of the WordNet folder in which `damage` rewrote `file`.
fn damaged(file: &str, damage: impl FnOnce(Vec<u8>) -> Vec<u8>) -> tempfile::TempDir {
    let dir = wordnet_dir();
    let copy = tempfile::tempdir().unwrap();
    for f in REQUIRED_FILES {
        std::fs::copy(dir.join(f), copy.path().join(f)).unwrap();
    }
    let bytes = std::fs::read(dir.join(file)).unwrap();
    std::fs::write(copy.path().join(file), damage(bytes)).unwrap();
    copy
}

/// Loads `dir`, expecting the format error naming `file` and containing `want`.
fn refused(dir: &Path, file: &str, want: &str) -> usize {
    match WordNet::load(dir) {
        Err(Error::WordNetFormat {
            path,
            line,
            message,
        }) => {
            assert!(path.ends_with(file), "{} is not {file}", path.display());
            assert!(message.contains(want), "{message:?} lacks {want:?}");
            line
        }
        Err(e) => panic!("expected a format error naming {file}, got {e}"),
        Ok(_) => panic!("a damaged {file} was accepted"),
    }
}

#[test]
fn the_intact_copy_loads() {
    let copy = damaged("data.noun", |b| b);
    assert!(WordNet::load(copy.path()).unwrap().len() > 150_000);
}

#[test]
fn data_noun_cut_to_one_megabyte_is_refused() {
    let copy = damaged("data.noun", |mut b| {
        b.truncate(1 << 20);
        b
    });
    let line = refused(copy.path(), "data.noun", "cut short");
    assert!(line > 1, "{line}");
    let e = WordNet::load(copy.path()).unwrap_err().to_string();
    assert!(e.contains("scripts/fetch-wordnet.sh"), "{e}");
}

#[test]
fn data_noun_cut_at_a_line_end_is_refused() {
    let copy = damaged("data.noun", |mut b| {
        let end = b[..1 << 20].iter().rposition(|&c| c == b'\n').unwrap();
        b.truncate(end + 1);
        b
    });
    refused(
        copy.path(),
        "data.noun",
        "beyond it: the file was cut short",
    );
}

#[test]
fn a_corrupted_synset_offset_in_the_index_is_refused() {
    // The first lemma line's last synset offset, one digit changed.
    let copy = damaged("index.noun", |mut b| {
        let start = (0..b.len())
            .find(|&i| (i == 0 || b[i - 1] == b'\n') && b[i] != b' ')
            .unwrap();
        let end = start + b[start..].iter().position(|&c| c == b'\n').unwrap();
        let last_digit = (start..end).rev().find(|&i| b[i].is_ascii_digit()).unwrap();
        b[last_digit] = if b[last_digit] == b'9' {
            b'8'
        } else {
            b[last_digit] + 1
        };
        b
    });
    refused(
        copy.path(),
        "index.noun",
        "which is not the start of a synset line",
    );
}

#[test]
fn a_damaged_data_line_is_refused() {
    // The gloss bar of the first synset of data.verb removed.
    let copy = damaged("data.verb", |b| {
        let text = String::from_utf8(b).unwrap();
        let i = text.find(" | ").unwrap();
        format!("{}  {}", &text[..i], &text[i + 3..]).into_bytes()
    });
    refused(copy.path(), "data.verb", "not a synset line");
}
