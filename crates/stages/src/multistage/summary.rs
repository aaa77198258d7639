//! Summarization (paper l.92–110) as a zero-shot LLM stage over any [`Summarizer`] (e.g.
//! [`crate::LlmSummarizer`] over any [`pgraphrag_core::Generator`]), and the prompts of the
//! LLM stages (the context-dependent synthesis, [`super::LlmSynthesizer`], reuses this stage).
//!
//! The paper fine-tunes T5-11B for both (on CNN/DM, ForumSum and Reddit TIFU for the
//! context-independent summary, l.98; on the weak labels for the context-dependent ones,
//! l.106, 132). We run a local instruction model zero-shot instead, so the instructions below
//! are **ours**, not the paper's; the weak labels ([`super::summary_weak_label`],
//! [`super::synthesis_weak_label`]) and [`super::training_records`] are what a fine-tuning run
//! would use instead.
use super::generation::{PASSAGE_START, PAST_PASSAGES, section};
use crate::prompt::SummaryPrompt;
use crate::{Error, Result, Summarizer, Summary};

/// **Ours.** The context-independent summary `Su(E_t)` (l.98): what to keep follows l.94 ("key
/// points, topics, or useful phrases").
pub const SUMMARY_INDEPENDENT: &str = "Summarize the following past passages written by one user: their key points, topics and useful phrases. Only give the summary, nothing else.";

/// **Ours.** The context-dependent summary `Su(x_t, E_t)` (l.100): the parts of the past
/// passages likely to be used in the new passage.
pub const SUMMARY_DEPENDENT: &str = "A user has started writing a new passage (passage start). Summarize the user's past passages below, keeping only the key points, topics and phrases the user is likely to use to finish the new passage. Only give the summary, nothing else.";

/// **Ours.** The context-dependent synthesis `Sy(x_t, E_t)` (l.120): important words of the past
/// passages likely to be used in the new passage, comma-separated like
/// [`super::join_words`].
pub const SYNTHESIS_DEPENDENT: &str = "A user has started writing a new passage (passage start). List the important words from the user's past passages below that the user is likely to use to finish the new passage, separated by commas. Only give the words, nothing else.";

/// Whether a stage sees the immediate context (l.96: "conditioned on the immediate context").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContextMode {
    /// The ranked entries alone (`SumCtxInd`, l.204).
    Independent,
    /// The immediate context and the ranked entries (`SumCtx`, `SynCtx`).
    Dependent,
}

/// The summary prompt of `mode` ([`SUMMARY_INDEPENDENT`] named `multistage-summary-ctx-ind`,
/// [`SUMMARY_DEPENDENT`] named `multistage-summary-ctx-dep`), for [`crate::LlmSummarizer`].
pub fn stage_prompt(mode: ContextMode) -> SummaryPrompt {
    match mode {
        ContextMode::Independent => {
            SummaryPrompt::custom("multistage-summary-ctx-ind", SUMMARY_INDEPENDENT)
        }
        ContextMode::Dependent => {
            SummaryPrompt::custom("multistage-summary-ctx-dep", SUMMARY_DEPENDENT)
        }
    }
}

/// The synthesis prompt ([`SYNTHESIS_DEPENDENT`], named `multistage-synthesis-ctx-dep`).
pub fn synthesis_prompt() -> SummaryPrompt {
    SummaryPrompt::custom("multistage-synthesis-ctx-dep", SYNTHESIS_DEPENDENT)
}

/// The entries an LLM stage is given, in the generation input's prefixes
/// ([`super::PaperFormat`]): `passage start: {context}` (dependent mode only), then
/// `past passages: {ranked}`. [`crate::LlmSummarizer`] lays them under the instruction
/// separated by blank lines, so the prompt reads like the generation input.
///
/// ```
/// use pgraphrag_stages::multistage::{ContextMode, stage_entries, stage_prompt};
/// let e = stage_entries(ContextMode::Dependent, "I went", "Past one.\nPast two.");
/// assert_eq!(e, ["passage start: I went", "past passages: Past one.\nPast two."]);
/// let refs: Vec<&str> = e.iter().map(String::as_str).collect();
/// let message = stage_prompt(ContextMode::Dependent).message(&refs);
/// assert!(message.ends_with("finish the new passage. Only give the summary, nothing else.\n\npassage start: I went\n\npast passages: Past one.\nPast two."));
/// ```
pub fn stage_entries(mode: ContextMode, context: &str, ranked: &str) -> Vec<String> {
    let past = section(PAST_PASSAGES, ranked);
    match mode {
        ContextMode::Independent => vec![past],
        ContextMode::Dependent => vec![section(PASSAGE_START, context), past],
    }
}

/// Summarization `Su(x_t, E_t)`: a summary of the ranked entries, given the immediate context.
///
/// One required method; [`ContextSummarizer::summarize_batch_each`] (provided: a loop) hands
/// each summary over as it finishes, and is overridden by [`LlmContextStage`] to batch the
/// model.
///
/// ```
/// use pgraphrag_stages::Result;
/// use pgraphrag_stages::multistage::ContextSummarizer;
/// /// The first sentence of the ranked entries: a toy extractive summarizer.
/// struct Lead;
/// impl ContextSummarizer for Lead {
///     fn summarize(&self, _context: &str, ranked: &str) -> Result<String> {
///         Ok(ranked.split_inclusive('.').next().unwrap_or("").to_string())
///     }
/// }
/// assert_eq!(Lead.summarize("x", "One. Two.").unwrap(), "One.");
/// ```
pub trait ContextSummarizer {
    /// The summary of `ranked` (the joined ranked entries) for the immediate `context`.
    fn summarize(&self, context: &str, ranked: &str) -> Result<String>;

    /// Summarizes each `(context, ranked)`, handing every result to `done(index, result)` as
    /// soon as it is ready: each index once, in any order. The default calls
    /// [`ContextSummarizer::summarize`] in order.
    fn summarize_batch_each(
        &self,
        inputs: &[(&str, &str)],
        done: &mut (dyn FnMut(usize, Result<String>) + Send),
    ) {
        for (i, (c, r)) in inputs.iter().enumerate() {
            done(i, self.summarize(c, r));
        }
    }
}

/// A zero-shot LLM stage over any [`Summarizer`]: the summarizer's instruction over
/// [`stage_entries`]. With [`stage_prompt`] it is summarization; with [`synthesis_prompt`],
/// wrapped in [`super::LlmSynthesizer`], the context-dependent synthesis.
///
/// Empty ranked entries (nothing but Python whitespace) are an [`Error::InvalidInput`]: there
/// is nothing to summarize, and a prompt builder should leave the `summary` section out. The
/// summarizer's fitting rule applies ([`crate::fit`]): in dependent mode, past passages that do
/// not fit whole after the passage start are dropped (the rule only ever cuts the first entry,
/// which in independent mode is the past passages); [`LlmContextStage::summary`] returns its
/// report, so a caller can see it happen.
///
/// ```
/// use pgraphrag_core::{GenParams, Generator, Prompt, Result as CoreResult, TokenCounter};
/// use pgraphrag_stages::{Budget, LlmSummarizer};
/// use pgraphrag_stages::multistage::{ContextMode, ContextSummarizer, LlmContextStage, stage_prompt};
/// struct Chars;
/// impl TokenCounter for Chars { fn count(&self, t: &str) -> CoreResult<usize> { Ok(t.chars().count()) } }
/// /// Answers with the last line of the prompt.
/// struct Last;
/// impl Generator for Last {
///     fn generate(&self, p: &Prompt, _: &GenParams) -> CoreResult<String> {
///         Ok(p.messages()[0].content.lines().last().unwrap_or("").to_string())
///     }
/// }
/// let llm = LlmSummarizer::new(Last, stage_prompt(ContextMode::Dependent), &Chars, Budget::paper());
/// let stage = LlmContextStage::new(llm, ContextMode::Dependent);
/// assert_eq!(stage.summarize("I went", "We hiked.\nWe swam.").unwrap(), "We swam.");
/// assert!(stage.summarize("I went", "  ").is_err());
/// ```
#[derive(Debug, Clone)]
pub struct LlmContextStage<S> {
    inner: S,
    mode: ContextMode,
}

impl<S: Summarizer> LlmContextStage<S> {
    /// The stage over `inner` (whose prompt should match `mode`: [`stage_prompt`]).
    pub fn new(inner: S, mode: ContextMode) -> LlmContextStage<S> {
        LlmContextStage { inner, mode }
    }

    /// The summarizer.
    pub fn summarizer(&self) -> &S {
        &self.inner
    }

    /// Whether the stage sees the immediate context.
    pub fn mode(&self) -> ContextMode {
        self.mode
    }

    /// The summary with the fitting report of the summarizer.
    pub fn summary(&self, context: &str, ranked: &str) -> Result<Summary> {
        let entries = self.entries(context, ranked)?;
        let refs: Vec<&str> = entries.iter().map(String::as_str).collect();
        self.inner.summarize(&refs).map_err(|source| Error::Stage {
            stage: "summarization",
            source,
        })
    }

    fn entries(&self, context: &str, ranked: &str) -> Result<Vec<String>> {
        if pgraphrag_text::py::strip(ranked).is_empty() {
            return Err(Error::InvalidInput(
                "the ranked entries are empty: there is nothing to summarize".into(),
            ));
        }
        Ok(stage_entries(self.mode, context, ranked))
    }
}

impl<S: Summarizer> ContextSummarizer for LlmContextStage<S> {
    fn summarize(&self, context: &str, ranked: &str) -> Result<String> {
        self.summary(context, ranked).map(|s| s.text)
    }

    /// All prompts through one [`Summarizer::summarize_batch_each`] call.
    fn summarize_batch_each(
        &self,
        inputs: &[(&str, &str)],
        done: &mut (dyn FnMut(usize, Result<String>) + Send),
    ) {
        let mut entries = Vec::with_capacity(inputs.len());
        let mut slots = Vec::with_capacity(inputs.len());
        for (i, (c, r)) in inputs.iter().enumerate() {
            match self.entries(c, r) {
                Ok(e) => {
                    entries.push(e);
                    slots.push(i);
                }
                Err(e) => done(i, Err(e)),
            }
        }
        let refs: Vec<Vec<&str>> = entries
            .iter()
            .map(|e| e.iter().map(String::as_str).collect())
            .collect();
        let profiles: Vec<&[&str]> = refs.iter().map(Vec::as_slice).collect();
        if profiles.is_empty() {
            return;
        }
        self.inner.summarize_batch_each(&profiles, &mut |j, r| {
            if let Some(&i) = slots.get(j) {
                done(
                    i,
                    r.map(|s| s.text).map_err(|source| Error::Stage {
                        stage: "summarization",
                        source,
                    }),
                );
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use pgraphrag_core::{GenParams, Generator, Prompt, Result as CoreResult, TokenCounter};

    use super::*;
    use crate::{Budget, LlmSummarizer};

    struct Chars;
    impl TokenCounter for Chars {
        fn count(&self, t: &str) -> CoreResult<usize> {
            Ok(t.chars().count())
        }
    }

    /// Records the prompts; answers `n chars` in reverse order of the batch; fails on "boom".
    #[derive(Default)]
    struct Recorder(Mutex<Vec<String>>);
    impl Generator for Recorder {
        fn generate(&self, p: &Prompt, _: &GenParams) -> CoreResult<String> {
            let m = p.messages()[0].content.clone();
            self.0.lock().unwrap().push(m.clone());
            if m.contains("boom") {
                return Err(pgraphrag_core::Error::InvalidInput("model broke".into()));
            }
            Ok(format!(" {} chars ", m.chars().count()))
        }
        fn generate_batch_each(
            &self,
            prompts: &[Prompt],
            params: &GenParams,
            done: &mut (dyn FnMut(usize, CoreResult<String>) + Send),
        ) {
            for i in (0..prompts.len()).rev() {
                done(i, self.generate(&prompts[i], params));
            }
        }
    }

    fn stage(
        g: &Recorder,
        mode: ContextMode,
    ) -> LlmContextStage<LlmSummarizer<'static, &Recorder>> {
        LlmContextStage::new(
            LlmSummarizer::new(g, stage_prompt(mode), &Chars, Budget::paper()),
            mode,
        )
    }

    #[test]
    fn the_modes_see_what_they_should() {
        let g = Recorder::default();
        stage(&g, ContextMode::Independent)
            .summarize("START", "Past.")
            .unwrap();
        stage(&g, ContextMode::Dependent)
            .summarize("START", "Past.")
            .unwrap();
        let seen = g.0.lock().unwrap();
        assert_eq!(
            seen[0],
            format!("{SUMMARY_INDEPENDENT}\n\npast passages: Past.")
        );
        assert_eq!(
            seen[1],
            format!("{SUMMARY_DEPENDENT}\n\npassage start: START\n\npast passages: Past.")
        );
    }

    #[test]
    fn batch_reports_every_index_with_its_own_error() {
        let g = Recorder::default();
        let s = stage(&g, ContextMode::Dependent);
        let inputs = [("a", "one"), ("b", " "), ("c", "boom"), ("d", "four")];
        let mut got: Vec<(usize, Result<String>)> = Vec::new();
        s.summarize_batch_each(&inputs, &mut |i, r| got.push((i, r)));
        let order: Vec<usize> = got.iter().map(|(i, _)| *i).collect();
        assert_eq!(
            order,
            [1, 3, 2, 0],
            "the empty one first, then the model's order"
        );
        assert!(matches!(got[0].1, Err(Error::InvalidInput(_))));
        let Err(Error::Stage { stage, source }) = &got[2].1 else {
            panic!("{:?}", got[2].1)
        };
        assert_eq!(
            (*stage, source.to_string().contains("model broke")),
            ("summarization", true)
        );
        let one = got
            .iter()
            .find(|(i, _)| *i == 0)
            .unwrap()
            .1
            .as_ref()
            .unwrap();
        let want = s.summarize("a", "one").unwrap();
        assert_eq!(one, &want, "the batch answers as the single call does");
        assert!(!want.starts_with(' '), "trimmed");
    }
}
