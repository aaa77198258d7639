//! The examples of the multistage writing paper (Li et al. 2023, "Teach LLMs to Personalize",
//! arXiv 2308.07968): one [`Example`] per current document `d_t` of an author, with its
//! immediate context `x_t` and its personal context `D_t` (the author's earlier documents).
//!
//! The rules (paper l.166–168) are [`crate::lamp::BuildOptions::multistage`], applied by the same selection
//! engine as the LaMP builders ([`crate::lamp`]): identical documents of an author removed
//! (the earliest kept), a target over 300 characters with at least 2 earlier documents,
//! authors with at least 5 targets, at most 50 per author (drawn by
//! `random.Random(seed + 1).sample`), authors split 85/5/10 by `random.Random(seed).shuffle`.
//!
//! What the fields hold (the choices, with the paper's lines):
//!
//! * `target` is the document's body, whole: the text the model must write. It includes the
//!   start that is also in the immediate context, as in the paper's main setting ("this short
//!   start is still present in the ground-truth label", l.312; RemoveDocStart is an ablation).
//!   The title is not part of it: the title is given with the start (l.45, l.192). The length
//!   rule (over 300 characters) and the de-duplication read the body too, exactly as LaMP-6
//!   on the same corpus does.
//! * `immediate_context` is `FirstKCharacters(title + body)` with K = 150 (l.67–68), counted in
//!   Unicode scalar values: the stage itself, `pgraphrag_stages::multistage::FirstKCharacters::paper()`.
//!   The paper concatenates the title and the body without naming a separator; the stage joins
//!   them with one newline so that the title's last word and the body's first word stay two
//!   words for a retriever. A document without a title (or with a blank one) contributes its
//!   body alone.
//! * `context` is the author's documents strictly earlier in time than the target (l.45: "in
//!   the past at the time of writing"; a document at the same time is never context), oldest
//!   first, each as `FirstKCharacters::full_text` (title and body, l.68).
//!
//! ```
//! use pgraphrag_corpora::{AuthoredDoc, lamp::BuildOptions, multistage};
//! let docs: Vec<AuthoredDoc> = (0..8).map(|i| AuthoredDoc {
//!     author: "kim@example.org".into(), doc_id: format!("m{i}"), time: i,
//!     title: Some(format!("Topic {i}")), text: format!("Words of mail {i}. ").repeat(20) }).collect();
//! let b = multistage::build_examples(&docs, &BuildOptions::multistage()).unwrap();
//! assert_eq!(b.examples.len(), 6); // m0 and m1 have fewer than 2 earlier documents
//! let e = &b.examples[0];
//! assert_eq!((e.id.as_str(), e.context.len()), ("m2", 2));
//! assert!(e.immediate_context.starts_with("Topic 2\nWords of mail 2."));
//! assert_eq!(e.immediate_context.chars().count(), 150);
//! assert_eq!(e.target, docs[2].text);
//! assert_eq!(e.context[0].text, format!("Topic 0\n{}", docs[0].text));
//! ```

mod examples;
mod stats;

pub use examples::{
    ContextDoc, EXAMPLES_FILE, Example, MultistageBuild, build_examples, parse_examples,
    read_examples, write_examples,
};
pub use stats::{ExampleStats, TABLE1_HEADER};
