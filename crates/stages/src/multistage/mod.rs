//! The stages of the multistage personalized writing pipeline (Li et al., 2023, "Teach LLMs to
//! Personalize", arXiv 2308.07968; `shared/papers/multistage-writing.txt`, cited by line):
//! immediate context → ranking of the author's past documents → summarization → synthesis →
//! generation input, plus the multitask author-distinction pairs and the weak labels that train
//! the summarization and synthesis models, written out as `{prompt, target}` records.
//!
//! | stage | trait | implementations |
//! |---|---|---|
//! | immediate context `x_t` (l.67–68) | [`ImmediateContext`] | [`FirstKCharacters`] (K = 150 over title + body) |
//! | ranking `E_t` (l.78–90, 200) | [`ContextRanker`] (+ [`ContextCut`]: joined, cut at 2,500 characters) | [`RankDocBM25`], [`RecentDoc`], any [`RankDocs`]; with the default feature `dense`: `RankDocDense`, `RankSnippet`, `RankDocBySnpt` |
//! | summarization (l.96–106) | [`ContextSummarizer`] | [`LlmContextStage`] over any [`Summarizer`](crate::Summarizer) (e.g. [`LlmSummarizer`](crate::LlmSummarizer)); weak label [`summary_weak_label`] over any [`SnippetSimilarity`] |
//! | synthesis (l.116–130) | [`Synthesizer`] | [`Keywords`] (context independent), [`LlmSynthesizer`]; weak label [`synthesis_weak_label`] with [`Synonyms`] (WordNet) and [`WordVectors`] |
//! | generation input (l.138–148) | [`InputFormat`] | [`PaperFormat`] |
//! | author distinction (l.144–150, 182) | — | [`author_pairs`] |
//! | training data | — | [`TrainingRecord`], [`write_jsonl`] |
//!
//! Every stage works on plain strings and [`PastDoc`]s (`{doc_id, time, text}`, the shape of the
//! `context` entries of the corpus builder's multistage JSON lines), so each one composes without
//! the others. Every choice the paper leaves open is documented on the item that makes it and in
//! `docs/multistage_stages.md`.
//!
//! ```
//! use pgraphrag_stages::multistage::{
//!     ContextCut, ContextRanker, FirstKCharacters, ImmediateContext, InputFormat, PaperFormat,
//!     PastDoc, RecentDoc, Sections,
//! };
//! let past = vec![
//!     PastDoc::new("d1", 10, "Older post about tea."),
//!     PastDoc::new("d2", 20, "Newer post about coffee."),
//! ];
//! let x = FirstKCharacters::paper().context(Some("Morning"), "I had coffee again today and ...");
//! let ranked = RecentDoc.ranked_context(&x, &past, &ContextCut::paper()).unwrap();
//! assert_eq!(ranked.text, "Newer post about coffee.\n\nOlder post about tea.");
//! let input = PaperFormat.generation(&Sections {
//!     passage_start: Some(&x),
//!     past_passages: Some(&ranked.text),
//!     ..Sections::default()
//! });
//! assert!(input.starts_with("Finish the passage in the user voice\n\npassage start: Morning\nI had coffee"));
//! ```

mod author;
mod context;
mod doc;
mod entries;
mod generation;
mod ranking;
mod recent;
mod stopwords;
mod summary;
mod summary_label;
mod synthesis;
mod synthesis_label;
mod tokens;
mod training;
mod words;

pub use author::{AuthorDoc, AuthorPair, AuthorPairs, author_pairs};
pub use context::{FirstKCharacters, ImmediateContext, PAPER_K};
pub use doc::{PastDoc, SNIPPET_MIN_CHARS, recency_order};
pub use entries::{ContextCut, LastEntry, PAPER_MAX_CHARS, PastEntry, RankedContext};
pub use generation::{
    AUTHOR_INSTRUCTION, GENERATION_INSTRUCTION, InputFormat, PaperFormat, SECTION_SEPARATOR,
    Sections, label_text,
};
pub use ranking::{ContextRanker, RankDocBM25, RankDocs};
#[cfg(feature = "dense")]
#[cfg_attr(docsrs, doc(cfg(feature = "dense")))]
pub use ranking::{RankDocBySnpt, RankDocDense, RankSnippet};
pub use recent::RecentDoc;
pub use stopwords::{NLTK_ENGLISH_STOPWORDS, Stopwords, TREEBANK_STOPWORDS};
pub use summary::{
    ContextMode, ContextSummarizer, LlmContextStage, SUMMARY_DEPENDENT, SUMMARY_INDEPENDENT,
    SYNTHESIS_DEPENDENT, stage_entries, stage_prompt, synthesis_prompt,
};
#[cfg(feature = "dense")]
pub use summary_label::DenseSimilarity;
pub use summary_label::{
    RetrieverSimilarity, SnippetSimilarity, SummaryWeakLabel, gold_snippets, summary_weak_label,
};
pub use synthesis::{Keywords, LlmSynthesizer, Synthesizer, WORD_JOINER, join_words, parse_words};
pub use synthesis_label::{
    GLOVE_MAX_DISTANCE, NoSynonyms, NoVectors, Synonyms, SynthesisWeakLabel, WordMatcher,
    WordVectors, synthesis_weak_label,
};
pub use tokens::words;
pub use training::{
    RecordTask, TrainingInputs, TrainingRecord, author_record, training_records, write_jsonl,
    write_jsonl_to,
};
pub use words::{Idf, IdfFormula, IdfScope, PAPER_MIN_IDF, ResolvedFilter, WordFilter};

impl PastDoc {
    /// A past document.
    pub fn new(doc_id: impl Into<String>, time: i64, text: impl Into<String>) -> PastDoc {
        PastDoc {
            doc_id: doc_id.into(),
            time,
            text: text.into(),
        }
    }
}
