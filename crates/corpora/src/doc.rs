//! The authored-document record and its JSON Lines files.
use std::io::BufRead;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// One document written by one author at one time: a mail, a news article, a tweet. The
/// corpus files hold one per line (JSON Lines, [`write_corpus`], [`read_corpus`]).
///
/// ```
/// use pgraphrag_corpora::AuthoredDoc;
/// let d = AuthoredDoc {
///     author: "kre@munnari.oz.au".into(),
///     doc_id: "easy-ham-1/00001".into(),
///     time: 1_030_015_585,
///     title: Some("New Sequences Window".into()),
///     text: "I have a patch.".into(),
/// };
/// let line = serde_json::to_string(&d).unwrap();
/// assert!(line.starts_with(r#"{"author":"kre@munnari.oz.au","doc_id":"easy-ham-1/00001","time":1030015585"#));
/// assert_eq!(d.date(), "2002-08-22");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct AuthoredDoc {
    /// Who wrote it: a normalised mail address, a news outlet's host name, a Twitter account.
    pub author: String,
    /// Unique within the corpus; prefixed by the source's part (`easy-ham-1/00001`,
    /// `news/17`, `tweets/goodhealth-577117109701967872`).
    pub doc_id: String,
    /// When: unix seconds, UTC (day-granular sources use midnight).
    pub time: i64,
    /// The title: a mail's subject, an article's headline; `None` for tweets.
    #[serde(default)]
    pub title: Option<String>,
    /// The text the author wrote (a mail's body without quotes and signatures).
    pub text: String,
}

impl AuthoredDoc {
    /// The day of [`AuthoredDoc::time`] as `YYYY-MM-DD` (UTC).
    pub fn date(&self) -> String {
        crate::ymd(self.time)
    }
}

/// Reads a corpus file: one [`AuthoredDoc`] per line; blank lines are skipped. Errors name
/// the file, the line and (in serde_json's message) the field; a time outside
/// [`TIMES`](crate::TIMES) is [`Error::BadTime`].
///
/// ```
/// let text = "{\"author\":\"a\",\"doc_id\":\"1\",\"time\":5,\"text\":\"hi\"}\n\n";
/// let docs = pgraphrag_corpora::parse_corpus(text.as_bytes(), "c.jsonl").unwrap();
/// assert_eq!((docs.len(), docs[0].title.clone()), (1, None));
/// let e = pgraphrag_corpora::parse_corpus(&b"{\"author\":\"a\"}"[..], "c.jsonl").unwrap_err();
/// assert!(e.to_string().starts_with("c.jsonl: line 1: missing field `doc_id`"), "{e}");
/// let far = "{\"author\":\"a\",\"doc_id\":\"7\",\"time\":-9223372036854775808,\"text\":\"hi\"}";
/// let e = pgraphrag_corpora::parse_corpus(far.as_bytes(), "c.jsonl").unwrap_err();
/// assert!(e.to_string().starts_with("c.jsonl: line 1 (doc_id \"7\"): field \"time\""), "{e}");
/// ```
pub fn parse_corpus(r: impl BufRead, path: impl AsRef<Path>) -> Result<Vec<AuthoredDoc>> {
    let path = path.as_ref();
    let mut out = Vec::new();
    for (i, line) in r.lines().enumerate() {
        let line = line.map_err(|e| Error::CorpusLine {
            path: path.to_path_buf(),
            line: i + 1,
            message: format!("cannot read the line ({e})"),
        })?;
        if line.trim().is_empty() {
            continue;
        }
        let doc: AuthoredDoc = serde_json::from_str(&line).map_err(|e| Error::CorpusLine {
            path: path.to_path_buf(),
            line: i + 1,
            message: e.to_string(),
        })?;
        if !crate::TIMES.contains(&doc.time) {
            return Err(Error::BadTime {
                path: path.to_path_buf(),
                line: i + 1,
                doc_id: doc.doc_id,
                time: doc.time,
            });
        }
        out.push(doc);
    }
    Ok(out)
}

/// [`parse_corpus`] of the file at `path`; a file without any document is
/// [`Error::Empty`].
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// # let p = dir.path().join("c.jsonl");
/// let d = pgraphrag_corpora::AuthoredDoc { author: "a".into(), doc_id: "1".into(), time: 0, title: None, text: "t".into() };
/// pgraphrag_corpora::write_corpus(&p, &[d.clone()]).unwrap();
/// assert_eq!(pgraphrag_corpora::read_corpus(&p).unwrap(), vec![d]);
/// ```
pub fn read_corpus(path: impl AsRef<Path>) -> Result<Vec<AuthoredDoc>> {
    let path = path.as_ref();
    let f = std::fs::File::open(path).map_err(|source| Error::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let docs = parse_corpus(std::io::BufReader::new(f), path)?;
    if docs.is_empty() {
        return Err(Error::Empty {
            path: path.to_path_buf(),
            what: "documents",
            hint: "write a corpus with `pgraphrag corpus convert`",
        });
    }
    Ok(docs)
}

/// Writes a corpus file atomically (the whole file or nothing): one JSON object per line.
pub fn write_corpus(path: impl AsRef<Path>, docs: &[AuthoredDoc]) -> Result<()> {
    pgraphrag_data::write_atomic(path.as_ref(), |w| {
        for d in docs {
            serde_json::to_writer(&mut *w, d)?;
            w.write_all(b"\n")?;
        }
        Ok(())
    })?;
    Ok(())
}
