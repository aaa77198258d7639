//! The [`Summarizer`] trait and its LLM implementation.
use pgraphrag_core::{Error as CoreError, GenParams, Generator, Prompt, Result, TokenCounter};
use sha2::{Digest, Sha256};

use crate::fit::{Budget, FitReport, fit_entries};
use crate::prompt::SummaryPrompt;

/// One user's summary and what the summarizer read of the profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// The summary text.
    pub text: String,
    /// How many entries it read (see [`crate::fit`]).
    pub fit: FitReport,
}

/// Summarises a user's rendered profile entries (`s_u = LLM(P_u)`).
///
/// Only [`Summarizer::summarize`] is required; [`Summarizer::summarize_batch_each`] (provided:
/// a loop) is overridden by summarizers that serve several users faster together, and hands
/// each summary over the moment it exists so that it can be stored at once.
///
/// ```
/// use pgraphrag_core::Result;
/// use pgraphrag_stages::{FitReport, Summarizer, Summary};
/// /// "N entries": a toy summarizer.
/// struct Count;
/// impl Summarizer for Count {
///     fn summarize(&self, entries: &[&str]) -> Result<Summary> {
///         Ok(Summary { text: format!("{} entries", entries.len()), fit: FitReport::all(entries.len()) })
///     }
/// }
/// let mut out = Vec::new();
/// Count.summarize_batch_each(&[&["a", "b"], &["c"]], &mut |i, s| out.push((i, s.unwrap().text)));
/// assert_eq!(out, [(0, "2 entries".to_string()), (1, "1 entries".to_string())]);
/// ```
pub trait Summarizer {
    /// The summary of one user's entries (rendered, in priority order: most important first).
    fn summarize(&self, entries: &[&str]) -> Result<Summary>;

    /// Summarises several users, handing each result to `done(index, result)` as soon as it is
    /// ready: every index exactly once, in any order. The default calls
    /// [`Summarizer::summarize`] for each, in order.
    fn summarize_batch_each(
        &self,
        profiles: &[&[&str]],
        done: &mut (dyn FnMut(usize, Result<Summary>) + Send),
    ) {
        for (i, entries) in profiles.iter().enumerate() {
            done(i, self.summarize(entries));
        }
    }
}

impl<T: Summarizer + ?Sized> Summarizer for &T {
    fn summarize(&self, entries: &[&str]) -> Result<Summary> {
        (**self).summarize(entries)
    }
    fn summarize_batch_each(
        &self,
        profiles: &[&[&str]],
        done: &mut (dyn FnMut(usize, Result<Summary>) + Send),
    ) {
        (**self).summarize_batch_each(profiles, done)
    }
}

impl<T: Summarizer + ?Sized> Summarizer for Box<T> {
    fn summarize(&self, entries: &[&str]) -> Result<Summary> {
        (**self).summarize(entries)
    }
    fn summarize_batch_each(
        &self,
        profiles: &[&[&str]],
        done: &mut (dyn FnMut(usize, Result<Summary>) + Send),
    ) {
        (**self).summarize_batch_each(profiles, done)
    }
}

/// A [`Summarizer`] over any [`Generator`]: the prompt's instruction and the entries the
/// fitting rule keeps ([`fit_entries`] with the given counter and budget) as one user message,
/// generated with `max_tokens = budget.max_new_tokens` (greedy by default).
///
/// ```
/// use pgraphrag_core::{GenParams, Generator, LampTask, Prompt, Result, TokenCounter};
/// use pgraphrag_stages::{Budget, LlmSummarizer, Summarizer, SummaryPrompt};
/// struct Words;
/// impl TokenCounter for Words {
///     fn count(&self, t: &str) -> Result<usize> { Ok(t.split_whitespace().count()) }
/// }
/// /// Answers with the number of lines it was given.
/// struct Lines;
/// impl Generator for Lines {
///     fn generate(&self, p: &Prompt, _: &GenParams) -> Result<String> {
///         Ok(p.messages()[0].content.lines().count().to_string())
///     }
/// }
/// let s = LlmSummarizer::new(Lines, SummaryPrompt::table2(LampTask::Lamp7).unwrap(), &Words, Budget::paper());
/// let out = s.summarize(&["Tweet: hi", "Tweet: ho"]).unwrap();
/// assert_eq!(out.text, "5"); // instruction, blank, tweet, blank, tweet
/// assert_eq!(out.fit.kept, 2);
/// assert!(s.version().starts_with("table2-LaMP-7@"));
/// ```
pub struct LlmSummarizer<'a, G> {
    generator: G,
    prompt: SummaryPrompt,
    counter: &'a dyn TokenCounter,
    budget: Budget,
    params: GenParams,
}

impl<'a, G: Generator> LlmSummarizer<'a, G> {
    /// A summarizer that generates with `generator` from `prompt`, fitting entries into
    /// `budget` as `counter` counts them (use the model's own tokenizer).
    pub fn new(
        generator: G,
        prompt: SummaryPrompt,
        counter: &'a dyn TokenCounter,
        budget: Budget,
    ) -> Self {
        let params = GenParams {
            max_tokens: budget.max_new_tokens,
            temperature: 0.0,
            ..Default::default()
        };
        LlmSummarizer {
            generator,
            prompt,
            counter,
            budget,
            params,
        }
    }

    /// The summarizer with other generation parameters (`max_tokens` stays the budget's).
    ///
    /// ```
    /// # use pgraphrag_core::{GenParams, Generator, Prompt, Result, TokenCounter};
    /// # use pgraphrag_stages::{Budget, LlmSummarizer, SummaryPrompt};
    /// # struct W; impl TokenCounter for W { fn count(&self, t: &str) -> Result<usize> { Ok(t.len()) } }
    /// # struct G; impl Generator for G { fn generate(&self, _: &Prompt, _: &GenParams) -> Result<String> { Ok(String::new()) } }
    /// let a = LlmSummarizer::new(G, SummaryPrompt::custom("x", "S."), &W, Budget::paper());
    /// let v = a.version();
    /// let b = a.with_params(GenParams { temperature: 0.7, max_tokens: 5, ..Default::default() });
    /// assert_eq!(b.params().max_tokens, 256);
    /// assert_ne!(b.version(), v);
    /// ```
    pub fn with_params(mut self, params: GenParams) -> Self {
        self.params = GenParams {
            max_tokens: self.budget.max_new_tokens,
            ..params
        };
        self
    }

    /// The generation parameters.
    pub fn params(&self) -> &GenParams {
        &self.params
    }

    /// The prompt.
    pub fn prompt(&self) -> &SummaryPrompt {
        &self.prompt
    }

    /// The budget.
    pub fn budget(&self) -> &Budget {
        &self.budget
    }

    /// The generator.
    pub fn generator(&self) -> &G {
        &self.generator
    }

    /// What the store keys its summaries by besides the model:
    /// `{prompt version}+fit-{context}-{max_new_tokens}-{reserve}+gen-{8 hex digits of the
    /// parameters' SHA-256}`. Any change to the prompt, the layout, the rendering, the budget
    /// or the sampling gives another version.
    pub fn version(&self) -> String {
        let params = serde_json::to_string(&self.params).unwrap_or_default();
        let hex: String = Sha256::digest(params.as_bytes())[..4]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let b = &self.budget;
        format!(
            "{}+fit-{}-{}-{}+gen-{hex}",
            self.prompt.version(),
            b.context,
            b.max_new_tokens,
            b.reserve
        )
    }

    /// The prompt for `entries` after the fitting rule, and what it kept.
    ///
    /// Errors: an empty `entries` ([`CoreError::InvalidInput`]: there is nothing to
    /// summarise), or the fitting rule's.
    pub fn prompt_for(&self, entries: &[&str]) -> Result<(Prompt, FitReport)> {
        if entries.is_empty() {
            return Err(CoreError::InvalidInput(
                "an empty profile has nothing to summarise".into(),
            ));
        }
        let f = fit_entries(&self.prompt, entries, self.counter, &self.budget)?;
        Ok((Prompt::user(f.message), f.report))
    }
}

impl<G: Generator> Summarizer for LlmSummarizer<'_, G> {
    fn summarize(&self, entries: &[&str]) -> Result<Summary> {
        let (prompt, fit) = self.prompt_for(entries)?;
        let text = self.generator.generate(&prompt, &self.params)?;
        Ok(Summary {
            text: text.trim().to_string(),
            fit,
        })
    }

    /// Fits every profile, then generates all prompts with one
    /// [`Generator::generate_batch_each`] call, handing each summary over as the generator
    /// reports it.
    fn summarize_batch_each(
        &self,
        profiles: &[&[&str]],
        done: &mut (dyn FnMut(usize, Result<Summary>) + Send),
    ) {
        let mut prompts = Vec::with_capacity(profiles.len());
        let mut slots = Vec::with_capacity(profiles.len());
        for (i, entries) in profiles.iter().enumerate() {
            match self.prompt_for(entries) {
                Ok((p, fit)) => {
                    prompts.push(p);
                    slots.push((i, fit));
                }
                Err(e) => done(i, Err(e)),
            }
        }
        if prompts.is_empty() {
            return;
        }
        self.generator
            .generate_batch_each(&prompts, &self.params, &mut |j, r| {
                let Some(&(i, fit)) = slots.get(j) else {
                    return;
                };
                done(
                    i,
                    r.map(|text| Summary {
                        text: text.trim().to_string(),
                        fit,
                    }),
                );
            });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    struct Chars;
    impl TokenCounter for Chars {
        fn count(&self, t: &str) -> Result<usize> {
            Ok(t.chars().count())
        }
    }

    /// Records the prompts it sees; answers in reverse order of the batch.
    #[derive(Default)]
    struct Recorder(Mutex<Vec<String>>);
    impl Generator for Recorder {
        fn generate(&self, p: &Prompt, params: &GenParams) -> Result<String> {
            let m = p.messages()[0].content.clone();
            self.0.lock().unwrap().push(m.clone());
            Ok(format!(" {} chars, max {} ", m.len(), params.max_tokens))
        }
        fn generate_batch_each(
            &self,
            prompts: &[Prompt],
            params: &GenParams,
            done: &mut (dyn FnMut(usize, Result<String>) + Send),
        ) {
            for i in (0..prompts.len()).rev() {
                done(i, self.generate(&prompts[i], params));
            }
        }
    }

    #[test]
    fn batch_fits_each_profile_and_reports_out_of_order() {
        let budget = Budget {
            context: 40,
            max_new_tokens: 10,
            reserve: 0,
        };
        let g = Recorder::default();
        let s = LlmSummarizer::new(&g, SummaryPrompt::custom("t", "Go."), &Chars, budget);
        let long = "x".repeat(50);
        let profiles: [&[&str]; 3] = [&["aa", "bb"], &[], &[&long, "y"]];
        let mut got = Vec::new();
        s.summarize_batch_each(&profiles, &mut |i, r| got.push((i, r)));
        let order: Vec<usize> = got.iter().map(|(i, _)| *i).collect();
        assert_eq!(
            order,
            [1, 2, 0],
            "the empty one fails first, then the generator's order"
        );
        assert!(got[0].1.as_ref().unwrap_err().to_string().contains("empty"));
        let cut = got[1].1.as_ref().unwrap();
        assert_eq!(
            cut.fit,
            FitReport {
                kept: 1,
                dropped: 1,
                truncated: true
            }
        );
        assert_eq!(
            cut.text, "30 chars, max 10",
            "trimmed; 30 = the 30-char budget"
        );
        let whole = got[2].1.as_ref().unwrap();
        assert_eq!(whole.fit, FitReport::all(2));
        assert_eq!(g.0.lock().unwrap()[1], "Go.\n\naa\n\nbb");
    }
}
