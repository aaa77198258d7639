//! The multistage paper's examples: their type, the builder and its files.
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use pgraphrag_stages::multistage::{FirstKCharacters, ImmediateContext};

use crate::lamp::{self, BuildOptions, SplitName};
use crate::{AuthoredDoc, Report, Result, Skip};

/// The file [`MultistageBuild::write`] writes into its folder.
///
/// ```
/// assert_eq!(pgraphrag_corpora::multistage::EXAMPLES_FILE, "examples.jsonl");
/// ```
pub const EXAMPLES_FILE: &str = "examples.jsonl";

/// A document of an example's personal context.
///
/// ```
/// use pgraphrag_corpora::multistage::ContextDoc;
/// let c = ContextDoc { doc_id: "m1".into(), time: 3, text: "Lunch?\nAt noon.".into() };
/// assert_eq!(serde_json::to_string(&c).unwrap(), r#"{"doc_id":"m1","time":3,"text":"Lunch?\nAt noon."}"#);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextDoc {
    /// The document's id in the corpus.
    pub doc_id: String,
    /// When it was written (the corpus's `time`).
    pub time: i64,
    /// Its title and body (`FirstKCharacters::full_text`).
    pub text: String,
}

/// One example: a current document to write, given its immediate context and the author's
/// earlier documents. One JSON object per line of `examples.jsonl`, keys in this order:
/// `{"id", "author", "split", "time", "immediate_context", "target", "context": [{"doc_id",
/// "time", "text"}]}`.
///
/// ```
/// use pgraphrag_corpora::{lamp::SplitName, multistage::{ContextDoc, Example}};
/// let e = Example { id: "m2".into(), author: "kim".into(), split: SplitName::Dev, time: 9,
///     immediate_context: "Hi\nBody".into(), target: "Body".into(),
///     context: vec![ContextDoc { doc_id: "m1".into(), time: 3, text: "Old".into() }] };
/// assert_eq!(serde_json::to_string(&e).unwrap(),
///     r#"{"id":"m2","author":"kim","split":"dev","time":9,"immediate_context":"Hi\nBody","target":"Body","context":[{"doc_id":"m1","time":3,"text":"Old"}]}"#);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Example {
    /// The current document's id in the corpus.
    pub id: String,
    /// Its author.
    pub author: String,
    /// The author's part of the user split.
    pub split: SplitName,
    /// When the current document was written.
    pub time: i64,
    /// `x_t`: the first 150 characters of title and body (`FirstKCharacters::paper()`).
    pub immediate_context: String,
    /// `d_t`: the current document's body, whole (its start included).
    pub target: String,
    /// `D_t`: the author's strictly earlier documents, oldest first.
    pub context: Vec<ContextDoc>,
}

/// The examples of a corpus and what became of every document.
///
/// ```
/// use pgraphrag_corpora::{AuthoredDoc, lamp::{BuildOptions, SplitName}, multistage::build_examples};
/// let docs: Vec<AuthoredDoc> = (0..7).map(|i| AuthoredDoc { author: "a".into(), doc_id: i.to_string(),
///     time: i, title: None, text: format!("{i} {}", "x".repeat(300)) }).collect();
/// let b = build_examples(&docs, &BuildOptions::multistage()).unwrap();
/// assert_eq!((b.part(SplitName::Train).count(), b.report.kept), (5, 5));
/// assert_eq!(b.report.kept + b.report.skipped_total(), docs.len()); // every document counted
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MultistageBuild {
    /// The examples: train, then dev, then test; within a part by author, then by time.
    pub examples: Vec<Example>,
    /// Examples made (kept) and documents that are no target, by reason (a document that is
    /// no target still serves as context of later targets, unless it is empty or a duplicate).
    pub report: Report,
}

/// Builds the examples of a corpus under `opts` (the paper's rules:
/// [`BuildOptions::multistage`]). Documents with an empty (blank) body are left out
/// ([`Skip::EmptyBody`]) and count as no one's earlier document. Errors: two documents with
/// the same id ([`Error::DuplicateDocId`](crate::Error::DuplicateDocId)), unusable options.
///
/// ```
/// use pgraphrag_corpora::{AuthoredDoc, lamp::BuildOptions, multistage::build_examples, Skip};
/// let doc = |i: i64, text: &str| AuthoredDoc { author: "a".into(), doc_id: format!("d{i}"),
///     time: i, title: None, text: text.into() };
/// let long = |i: i64| "x".repeat(301) + &i.to_string();
/// let mut docs: Vec<AuthoredDoc> = (0..7).map(|i| doc(i, &long(i))).collect();
/// docs.push(doc(7, "   "));      // empty
/// docs.push(doc(8, &long(0)));   // the same text as d0
/// let b = build_examples(&docs, &BuildOptions::multistage()).unwrap();
/// assert_eq!(b.examples.len(), 5);
/// assert_eq!((b.report.count(Skip::EmptyBody), b.report.count(Skip::Duplicate)), (1, 1));
/// assert_eq!(b.report.count(Skip::TooFewEarlier), 2);
/// assert!(build_examples(&[doc(1, "a"), doc(1, "b")], &BuildOptions::multistage()).is_err());
/// ```
pub fn build_examples(docs: &[AuthoredDoc], opts: &BuildOptions) -> Result<MultistageBuild> {
    let mut report = Report::default();
    let usable: Vec<&AuthoredDoc> = docs
        .iter()
        .filter(|d| {
            let empty = d.text.trim().is_empty();
            if empty {
                report.skip(Skip::EmptyBody);
            }
            !empty
        })
        .collect();
    let selected = lamp::select(usable, opts, &mut report)?;
    let mut parts: [Vec<Example>; 3] = Default::default();
    let first_k = FirstKCharacters::paper();
    for s in selected {
        let part = &mut parts[match s.part {
            SplitName::Train => 0,
            SplitName::Dev => 1,
            SplitName::Test => 2,
        }];
        for t in &s.targets {
            let d = s.docs[t.index];
            let context = s.docs[t.profile.clone()]
                .iter()
                .map(|p| ContextDoc {
                    doc_id: p.doc_id.clone(),
                    time: p.time,
                    text: first_k.full_text(p.title.as_deref(), &p.text),
                })
                .collect();
            part.push(Example {
                id: d.doc_id.clone(),
                author: s.author.clone(),
                split: s.part,
                time: d.time,
                immediate_context: first_k.context(d.title.as_deref(), &d.text),
                target: d.text.clone(),
                context,
            });
        }
        report.kept += s.targets.len();
    }
    Ok(MultistageBuild {
        examples: parts.into_iter().flatten().collect(),
        report,
    })
}

impl MultistageBuild {
    /// The examples of one part, in file order.
    ///
    /// ```
    /// # use pgraphrag_corpora::{lamp::SplitName, multistage::MultistageBuild};
    /// assert_eq!(MultistageBuild::default().part(SplitName::Dev).count(), 0);
    /// ```
    pub fn part(&self, part: SplitName) -> impl Iterator<Item = &Example> {
        self.examples.iter().filter(move |e| e.split == part)
    }

    /// Writes `dir/examples.jsonl` ([`EXAMPLES_FILE`]) atomically (the whole file or
    /// nothing) into the existing folder `dir`; returns its path.
    ///
    /// ```
    /// # use pgraphrag_corpora::multistage::*;
    /// let dir = tempfile::tempdir().unwrap();
    /// let p = MultistageBuild::default().write(dir.path()).unwrap();
    /// assert_eq!(p, dir.path().join("examples.jsonl"));
    /// // A file without examples is written, but refused when read.
    /// let e = read_examples(&p).unwrap_err();
    /// assert!(matches!(e, pgraphrag_corpora::Error::Empty { .. }), "{e}");
    /// ```
    pub fn write(&self, dir: &Path) -> Result<PathBuf> {
        let path = dir.join(EXAMPLES_FILE);
        write_examples(&path, &self.examples)?;
        Ok(path)
    }
}

/// Writes examples as JSON Lines, atomically (the whole file or nothing).
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// # let p = dir.path().join("e.jsonl");
/// pgraphrag_corpora::multistage::write_examples(&p, &[]).unwrap();
/// assert_eq!(std::fs::read_to_string(&p).unwrap(), "");
/// ```
pub fn write_examples(path: impl AsRef<Path>, examples: &[Example]) -> Result<()> {
    pgraphrag_data::write_atomic(path.as_ref(), |w| {
        for e in examples {
            serde_json::to_writer(&mut *w, e)?;
            w.write_all(b"\n")?;
        }
        Ok(())
    })?;
    Ok(())
}

/// Reads examples from JSON Lines (blank lines skipped). Errors name the file, the line and
/// (in serde_json's message) the field.
///
/// ```
/// use pgraphrag_corpora::multistage::parse_examples;
/// let line = r#"{"id":"m2","author":"kim","split":"test","time":9,"immediate_context":"x","target":"x y","context":[]}"#;
/// assert_eq!(parse_examples(line.as_bytes(), "e.jsonl").unwrap()[0].target, "x y");
/// let e = parse_examples(&br#"{"id":"m2"}"#[..], "e.jsonl").unwrap_err();
/// assert!(e.to_string().starts_with("e.jsonl: line 1: not an example: missing field `author`"), "{e}");
/// ```
pub fn parse_examples(r: impl std::io::BufRead, path: impl AsRef<Path>) -> Result<Vec<Example>> {
    let path = path.as_ref();
    let bad = |line: usize, message: String| crate::Error::ExampleLine {
        path: path.to_path_buf(),
        line,
        message,
    };
    let mut out = Vec::new();
    for (i, line) in r.lines().enumerate() {
        let line = line.map_err(|e| bad(i + 1, format!("cannot read the line ({e})")))?;
        if line.trim().is_empty() {
            continue;
        }
        out.push(serde_json::from_str(&line).map_err(|e| bad(i + 1, e.to_string()))?);
    }
    Ok(out)
}

/// [`parse_examples`] of the file at `path`; a file without any example is
/// [`Error::Empty`](crate::Error::Empty).
///
/// ```
/// let e = pgraphrag_corpora::multistage::read_examples("no/such/examples.jsonl").unwrap_err();
/// assert_eq!(e.to_string(), "cannot read no/such/examples.jsonl");
/// ```
pub fn read_examples(path: impl AsRef<Path>) -> Result<Vec<Example>> {
    let path = path.as_ref();
    let f = std::fs::File::open(path).map_err(|source| crate::Error::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let examples = parse_examples(std::io::BufReader::new(f), path)?;
    if examples.is_empty() {
        return Err(crate::Error::Empty {
            path: path.to_path_buf(),
            what: "examples",
            hint: "write them with `pgraphrag multistage build`",
        });
    }
    Ok(examples)
}
