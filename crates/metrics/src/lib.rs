#![cfg_attr(docsrs, feature(doc_cfg))]
//! # pgraphrag-metrics
//!
//! Metrics identical to the Python references the personalised-generation papers report with:
//!
//! | metric | module | reference | parity |
//! |---|---|---|---|
//! | ROUGE-1/2/L/Lsum (P, R, F) | [`rouge`] | `rouge-score` 0.1.2 (HF `evaluate`'s `rouge`) | 1e-9 on 1,181 golden pairs |
//! | METEOR | [`meteor`] | `nltk.translate.meteor_score.single_meteor_score` 3.9.1 (HF `evaluate`'s `meteor`) | 1e-9 |
//! | BLEU (sentence, corpus) | [`bleu`] | sacreBLEU 2.x, `13a` tokenizer | 1e-9 |
//! | MAE / RMSE | [`rating`] | LaMP-3 (`float()` or the farther of 1 and 5) | exact |
//! | accuracy, macro-F1 | [`classify`] | LaMP-1/2 (HF `evaluate`, sklearn) | exact |
//! | ACC, Recall@k | [`classify`] | K-RagRec candidate-set evaluation | exact |
//! | bootstrap CIs, paired tests | [`stats`] | rouge-score `BootstrapAggregator` (numpy `RandomState` ported) | 1e-9 |
//!
//! ```
//! use pgraphrag_metrics::rouge::Rouge;
//! let s = Rouge::default().score("The quick brown dog jumps on the log.",
//!                                "The quick brown fox jumps over the lazy dog");
//! assert!((s.rouge1.fmeasure - 0.7058823529411765).abs() < 1e-12); // P = 6/8, R = 6/9
//! ```
#![deny(missing_docs)]

pub mod bleu;
pub mod classify;
mod error;
mod fxhash;
pub mod meteor;
pub mod rating;
pub mod rouge;
pub mod stats;
mod stem_cache;
pub mod wordnet;

pub use bleu::{SentenceBleu, corpus_bleu, sentence_bleu};
pub use error::{Error, Result};
pub use meteor::{Meteor, meteor_tokens};
pub use rouge::{Rouge, RougeOptions, RougeScores, RougeTokenizer, Score};

/// The README's examples, run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
