//! Real authored-text corpora to `AuthoredDoc` JSON Lines ([`ConvertSpec`], `pgraphrag corpus
//! convert`), LaMP-format tasks built from them ([`LampBuildSpec`], `pgraphrag corpus lamp`)
//! and the multistage paper's examples ([`ExamplesSpec`], `pgraphrag multistage build`). The
//! readers and builders are `pgraphrag_corpora`; a spec reads, builds, refuses an empty
//! result and writes. See `docs/corpora.md` and `docs/multistage.md`.
use std::path::{Path, PathBuf};

use pgraphrag_core::LampTask;
use pgraphrag_corpora::lamp::{self, BuildOptions, LampBuild};
use pgraphrag_corpora::multistage::{self, MultistageBuild};
use pgraphrag_corpora::{AuthoredDoc, MailOptions, Report};
use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// A corpus's source format.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Source {
    /// The SpamAssassin public mail corpus (a folder of mail files): senders' subjects.
    SpamAssassin {
        /// Which mails are kept.
        options: MailOptions,
    },
    /// News by outlet (`NewsArticles.csv`, or its folder).
    News,
    /// Health tweets by account (`healthtweets.csv`, or its folder).
    Tweets,
    /// A PGraphRAG review split.
    Pgraphrag,
}

/// Converts a corpus to `AuthoredDoc` JSON Lines.
///
/// ```
/// use pgraphrag_runs::corpus::{ConvertSpec, Source};
/// let spec = ConvertSpec { source: Source::News, input: "corpora/news".into(), out: "runs/news.jsonl".into() };
/// assert_eq!(spec.input_file(), std::path::Path::new("corpora/news")); // not a folder here
/// assert!(spec.run().is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConvertSpec {
    /// The source format.
    pub source: Source,
    /// The input file or folder.
    pub input: PathBuf,
    /// The JSON Lines file written (atomically).
    pub out: PathBuf,
}

/// What a [`ConvertSpec`] run wrote.
#[derive(Debug, Clone)]
pub struct ConvertReport {
    /// Documents written.
    pub docs: usize,
    /// Their distinct authors.
    pub authors: usize,
    /// What was read and skipped, and why.
    pub report: Report,
}

impl ConvertSpec {
    /// The file read: a news or tweets CSV given as its folder is the CSV inside it.
    pub fn input_file(&self) -> PathBuf {
        let in_dir = |file: &str| {
            if self.input.is_dir() {
                self.input.join(file)
            } else {
                self.input.clone()
            }
        };
        match self.source {
            Source::News => in_dir("NewsArticles.csv"),
            Source::Tweets => in_dir("healthtweets.csv"),
            _ => self.input.clone(),
        }
    }

    /// Reads, converts and writes the corpus; a corpus with no document is refused.
    pub fn run(&self) -> Result<ConvertReport> {
        if let Some(dir) = self.out.parent().filter(|d| !d.as_os_str().is_empty())
            && !dir.is_dir()
        {
            return Err(Error::Setting(format!(
                "the folder of the output does not exist: {} (create it first)",
                dir.display()
            )));
        }
        let hint = match self.source {
            Source::Pgraphrag => {
                "pass a PGraphRAG split such as $PGRAPHRAG_DATA/pgraphrag/amazon_dev.json"
            }
            _ => "run scripts/fetch-corpora.sh, then pass its folder",
        };
        let input = self.input_file();
        let converted = match &self.source {
            Source::SpamAssassin { options } => {
                pgraphrag_corpora::convert_spam_assassin(&self.input, options)
            }
            Source::News | Source::Tweets => match self.source {
                Source::News => pgraphrag_corpora::convert_news_file(&input),
                _ => pgraphrag_corpora::convert_tweets_file(&input),
            },
            Source::Pgraphrag => pgraphrag_corpora::convert_pgraphrag_split_file(&self.input),
        }
        .map_err(Error::input(format!(
            "converting {} ({hint})",
            self.input.display()
        )))?;
        if converted.docs.is_empty() {
            return Err(Error::invalid(format!(
                "{}: no documents to convert ({}); {hint}",
                input.display(),
                converted.report
            )));
        }
        pgraphrag_corpora::write_corpus(&self.out, &converted.docs)?;
        let authors: std::collections::BTreeSet<&str> =
            converted.docs.iter().map(|d| d.author.as_str()).collect();
        Ok(ConvertReport {
            docs: converted.docs.len(),
            authors: authors.len(),
            report: converted.report,
        })
    }
}

/// Builds a LaMP-format task (LaMP-3 from MovieLens-100K or a PGraphRAG split, LaMP-4 from
/// news, LaMP-6 from mail): `{train,dev,test}_{questions,outputs}.json` in a folder.
///
/// ```
/// use pgraphrag_core::LampTask;
/// use pgraphrag_runs::corpus::LampBuildSpec;
/// let spec = LampBuildSpec::new(LampTask::Lamp6, "runs/mail.jsonl", "runs/lamp6");
/// assert_eq!(spec.output_files().len(), 6);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LampBuildSpec {
    /// LaMP-3, LaMP-4 or LaMP-6.
    pub task: LampTask,
    /// The input: a corpus file (LaMP-4, 6), a MovieLens-100K folder or a PGraphRAG split
    /// (LaMP-3).
    pub from: PathBuf,
    /// The output folder.
    pub out: PathBuf,
    /// The builder's rules (targets, profiles, caps, user split, seed).
    pub options: BuildOptions,
}

/// What a [`LampBuildSpec`] run built (its files are in [`LampBuildSpec::out`]).
#[derive(Debug, Clone)]
pub struct LampBuildReport {
    /// The ratings read and skipped (MovieLens input).
    pub input: Option<Report>,
    /// The build: questions kept and skipped, per split.
    pub build: LampBuild,
}

impl LampBuildSpec {
    /// The task's default rules ([`BuildOptions::for_task`]).
    pub fn new(task: LampTask, from: impl Into<PathBuf>, out: impl Into<PathBuf>) -> Self {
        LampBuildSpec {
            task,
            from: from.into(),
            out: out.into(),
            options: BuildOptions::for_task(task),
        }
    }

    /// The files written into [`LampBuildSpec::out`].
    pub fn output_files(&self) -> Vec<String> {
        ["train", "dev", "test"]
            .iter()
            .flat_map(|part| {
                [
                    format!("{part}_questions.json"),
                    format!("{part}_outputs.json"),
                ]
            })
            .collect()
    }

    /// Reads, builds and writes the task; a build with no question is refused.
    pub fn run(&self) -> Result<LampBuildReport> {
        let opts = &self.options;
        let from = self.from.display().to_string();
        let (built, input) = match self.task {
            LampTask::Lamp4 | LampTask::Lamp6 => {
                let docs = read_corpus(&self.from)?;
                let b = if self.task == LampTask::Lamp4 {
                    lamp::lamp4(&docs, opts)
                } else {
                    lamp::lamp6(&docs, opts)
                };
                (b.map_err(Error::invalid)?, None)
            }
            LampTask::Lamp3 if self.from.is_dir() => {
                let ml = lamp::read_movielens(&self.from)
                    .map_err(Error::input(format!("reading MovieLens-100K from {from}")))?;
                let b = lamp::lamp3_from_movielens(&ml, opts).map_err(Error::invalid)?;
                (b, Some(ml.report))
            }
            LampTask::Lamp3 => {
                let split = pgraphrag_data::load_split(&self.from).map_err(Error::input(format!(
                    "loading the split {} (pass a PGraphRAG split such as $PGRAPHRAG_DATA/pgraphrag/amazon_dev.json)",
                    self.from.display()
                )))?;
                (
                    lamp::lamp3_from_split(&split, opts).map_err(Error::invalid)?,
                    None,
                )
            }
            other => {
                return Err(Error::Setting(format!(
                    "{other}: the builders make LaMP-3, LaMP-4 and LaMP-6"
                )));
            }
        };
        if built.report.kept == 0 {
            return Err(nothing_built(&self.from, "question", &built.report, opts));
        }
        std::fs::create_dir_all(&self.out).map_err(Error::work(format!(
            "creating the output folder {}",
            self.out.display()
        )))?;
        built.write(&self.out)?;
        Ok(LampBuildReport {
            input,
            build: built,
        })
    }
}

/// Builds the multistage paper's examples from a corpus: `examples.jsonl` in a folder.
///
/// ```
/// use pgraphrag_runs::corpus::ExamplesSpec;
/// let spec = ExamplesSpec::paper("runs/mail.jsonl", "runs/mail");
/// assert_eq!(spec.options.seed, 42);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExamplesSpec {
    /// The corpus file (`AuthoredDoc` JSON Lines).
    pub corpus: PathBuf,
    /// The output folder.
    pub out: PathBuf,
    /// The builder's rules ([`BuildOptions::multistage`]: the paper's).
    pub options: BuildOptions,
}

impl ExamplesSpec {
    /// The paper's rules.
    pub fn paper(corpus: impl Into<PathBuf>, out: impl Into<PathBuf>) -> Self {
        ExamplesSpec {
            corpus: corpus.into(),
            out: out.into(),
            options: BuildOptions::multistage(),
        }
    }

    /// Reads, builds and writes the examples; returns the build and the file written. A
    /// build with no example is refused.
    pub fn run(&self) -> Result<(MultistageBuild, PathBuf)> {
        let docs = read_corpus(&self.corpus)?;
        let built =
            multistage::build_examples(&docs, &self.options).map_err(Error::input(format!(
                "building the multistage examples of {}",
                self.corpus.display()
            )))?;
        if built.examples.is_empty() {
            return Err(nothing_built(
                &self.corpus,
                "example",
                &built.report,
                &self.options,
            ));
        }
        std::fs::create_dir_all(&self.out).map_err(Error::work(format!(
            "creating the output folder {}",
            self.out.display()
        )))?;
        let path = built.write(&self.out)?;
        Ok((built, path))
    }
}

fn read_corpus(path: &Path) -> Result<Vec<AuthoredDoc>> {
    pgraphrag_corpora::read_corpus(path).map_err(Error::input(format!(
        "reading the corpus {} (write one with `pgraphrag corpus convert`)",
        path.display()
    )))
}

/// The error of a build from `input` that made no `what` (every candidate skipped, for the
/// reasons `report` counts), with the rules of `opts` a candidate must meet.
fn nothing_built(input: &Path, what: &str, report: &Report, opts: &BuildOptions) -> Error {
    Error::invalid(format!(
        "{}: no {what} could be made ({report}); a target needs at least {} characters and {} \
         earlier documents by its author, and an author at least {} targets",
        input.display(),
        opts.min_target_chars,
        opts.min_profile,
        opts.min_targets_per_author
    ))
}
