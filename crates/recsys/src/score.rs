//! Scoring the options: the next-token probability of each option letter, as the released
//! code reads it off the first generated token, and the rankings the metrics read.
use pgraphrag_core::Prompt;
use pgraphrag_llm::GgufModel;
use rand::{RngExt, SeedableRng};
use serde::{Deserialize, Serialize};

use crate::{CandidateSet, Error, LETTERS, Result};

/// Scores option letters as the answer to a prompt. One required method; higher is better.
///
/// ```
/// use pgraphrag_recsys::{LetterScorer, Result, ranking};
/// /// Prefers later letters: a test double.
/// struct Late;
/// impl LetterScorer for Late {
///     fn id(&self) -> String { "late".into() }
///     fn score(&self, _prompt: &str, letters: &[char]) -> Result<Vec<f64>> {
///         Ok(letters.iter().map(|&l| l as u32 as f64).collect())
///     }
/// }
/// let s = Late.score("Pick one.", &['A', 'B', 'C']).unwrap();
/// assert_eq!(ranking(&s).unwrap(), [2, 1, 0]);
/// ```
pub trait LetterScorer {
    /// A stable id of the model and its setting (what a score cache is keyed by).
    fn id(&self) -> String;
    /// One score per letter of `letters` as the answer to `prompt`.
    fn score(&self, prompt: &str, letters: &[char]) -> Result<Vec<f64>>;
}

/// How the instruction is given to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Wrap {
    /// One user message in the model's chat template, the assistant turn opened (SmolLM2's
    /// `<|im_start|>user\n…<|im_end|>\n<|im_start|>assistant\n`): the variant for chat models,
    /// the default.
    #[default]
    Chat,
    /// The released code's Llama-2 wrapping, `[INST]` + prompt + `[/INST]` as raw text after
    /// the model's BOS (when its tokenizer adds one; the released `<s>` is Llama-2's BOS). The
    /// released code puts the graph soft token between `[INST]` and the prompt; without a graph
    /// there is nothing there.
    Llama2Inst,
}

impl Wrap {
    /// The wrap's name on the command line (`chat`, `llama2-inst`).
    pub fn name(self) -> &'static str {
        match self {
            Wrap::Chat => "chat",
            Wrap::Llama2Inst => "llama2-inst",
        }
    }

    /// The wrap of a [`Wrap::name`].
    ///
    /// ```
    /// assert_eq!(pgraphrag_recsys::Wrap::parse("chat").unwrap(), pgraphrag_recsys::Wrap::Chat);
    /// ```
    pub fn parse(s: &str) -> Result<Self> {
        [Wrap::Chat, Wrap::Llama2Inst]
            .into_iter()
            .find(|w| w.name() == s)
            .ok_or_else(|| Error::Option {
                name: "wrap",
                value: s.to_string(),
                expected: "chat or llama2-inst",
            })
    }

    /// The prompt the model is given for the instruction `text`.
    ///
    /// ```
    /// use pgraphrag_core::Prompt;
    /// use pgraphrag_recsys::Wrap;
    /// assert_eq!(Wrap::Llama2Inst.prompt("Pick."), Prompt::Raw("[INST]Pick.[/INST]".into()));
    /// assert_eq!(Wrap::Chat.prompt("Pick."), Prompt::user("Pick."));
    /// ```
    pub fn prompt(self, text: &str) -> Prompt {
        match self {
            Wrap::Chat => Prompt::user(text),
            Wrap::Llama2Inst => Prompt::Raw(format!("[INST]{text}[/INST]")),
        }
    }
}

/// [`LetterScorer`] over a local GGUF model: the log-probability of each letter's token as
/// the next token after the wrapped prompt, the softmax taken over the whole vocabulary (the
/// released code's `scores[0].softmax(-1)` at the option token ids; restricting the softmax
/// to the letters would give the same ranking). A letter's token is what the tokenizer gives
/// for the bare letter (the released `tokenizer.encode('A', add_special_tokens=False)`); a
/// letter that is not exactly one token is [`Error::LetterToken`].
pub struct GgufLetterScorer {
    model: GgufModel,
    wrap: Wrap,
}

impl GgufLetterScorer {
    /// Scores with `model`, the instruction given as `wrap` says.
    ///
    /// ```no_run
    /// use pgraphrag_recsys::{GgufLetterScorer, LetterScorer, Wrap};
    /// let m = pgraphrag_llm::GgufModel::load("models/SmolLM2-135M-Instruct.Q4_1.gguf".as_ref(), Default::default()).unwrap();
    /// let s = GgufLetterScorer::new(m, Wrap::Chat);
    /// let scores = s.score("Answer A or B.", &['A', 'B']).unwrap();
    /// assert!(scores.iter().all(|x| *x <= 0.0));
    /// ```
    pub fn new(model: GgufModel, wrap: Wrap) -> Self {
        GgufLetterScorer { model, wrap }
    }

    /// The model.
    pub fn model(&self) -> &GgufModel {
        &self.model
    }

    /// The token id of each letter.
    pub fn letter_tokens(&self, letters: &[char]) -> Result<Vec<u32>> {
        letters
            .iter()
            .map(|l| {
                let text = l.to_string();
                let ids = self
                    .model
                    .tokenizer()
                    .encode(&text)
                    .map_err(|source| Error::Model {
                        what: "the letter tokens".into(),
                        source,
                    })?;
                match ids[..] {
                    [id] => Ok(id),
                    _ => Err(Error::LetterToken {
                        letter: text,
                        tokens: ids.len(),
                    }),
                }
            })
            .collect()
    }
}

impl LetterScorer for GgufLetterScorer {
    fn id(&self) -> String {
        format!("{}:{}", self.model.cache_id(), self.wrap.name())
    }

    fn score(&self, prompt: &str, letters: &[char]) -> Result<Vec<f64>> {
        let ids = self.letter_tokens(letters)?;
        let model_err = |source| Error::Model {
            what: format!("a {}-character prompt", prompt.chars().count()),
            source,
        };
        let tokens = self
            .model
            .prompt_tokens(&self.wrap.prompt(prompt))
            .map_err(model_err)?;
        let logits = self.model.next_token_logits(&tokens).map_err(model_err)?;
        let lse = log_sum_exp(&logits);
        ids.iter()
            .map(|&id| match logits.get(id as usize) {
                Some(&x) => Ok(f64::from(x) - lse),
                None => Err(Error::ScoreOutput {
                    problem: format!("{} logits, fewer than letter token id {id}", logits.len()),
                }),
            })
            .collect()
    }
}

/// `ln Σ exp(x)` in f64, stable for large logits.
fn log_sum_exp(xs: &[f32]) -> f64 {
    let max = xs.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
    if !max.is_finite() {
        return max;
    }
    max + xs
        .iter()
        .map(|&x| (f64::from(x) - max).exp())
        .sum::<f64>()
        .ln()
}

/// The options best first: indices into `scores` by descending score, ties to the lower
/// index (the earlier letter). A NaN score is [`Error::ScoreOutput`].
///
/// ```
/// assert_eq!(pgraphrag_recsys::ranking(&[0.1, 0.7, 0.1, 0.5]).unwrap(), [1, 3, 0, 2]);
/// assert!(pgraphrag_recsys::ranking(&[0.1, f64::NAN]).is_err());
/// ```
pub fn ranking(scores: &[f64]) -> Result<Vec<usize>> {
    if scores.iter().any(|s| s.is_nan()) {
        return Err(Error::ScoreOutput {
            problem: "a NaN score".into(),
        });
    }
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
    Ok(order)
}

/// The random-ranking baseline's scores for row `row` with `m` options: uniform in [0, 1)
/// from a ChaCha8 generator seeded with `seed` on stream `row`, so a row's ranking depends
/// only on the seed and its index.
///
/// ```
/// use pgraphrag_recsys::random_scores;
/// assert_eq!(random_scores(7, 3, 20), random_scores(7, 3, 20));
/// assert_ne!(random_scores(7, 3, 20), random_scores(7, 4, 20));
/// ```
pub fn random_scores(seed: u64, row: u64, m: usize) -> Vec<f64> {
    let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(row);
    (0..m).map(|_| rng.random::<f64>()).collect()
}

/// A no-LLM baseline's recorded scores: `primary` with ties broken by the random ranking of
/// `seed` and `row` ([`random_scores`]): `primary[i] + u[i] · g / 2`, `g` the smallest gap
/// between distinct primaries (1 when there is none), so distinct primaries keep their order.
pub(crate) fn break_ties(primary: &[f64], seed: u64, row: usize) -> Vec<f64> {
    let mut sorted = primary.to_vec();
    sorted.sort_by(f64::total_cmp);
    let gap = sorted
        .windows(2)
        .map(|w| w[1] - w[0])
        .filter(|d| *d > 0.0)
        .fold(f64::INFINITY, f64::min);
    let half = if gap.is_finite() { gap / 2.0 } else { 0.5 };
    primary
        .iter()
        .zip(random_scores(seed, row as u64, primary.len()))
        .map(|(p, u)| p + u * half)
        .collect()
}

/// Position-debiased letter scores ([`crate::Method::NoKnowledgeCyclic`]): `prompt` of each of
/// the M cyclic rotations of `candidates` (rotation `r` puts candidate `(j + r) mod M` at
/// letter `j`) scored by `scorer`, and each candidate's mean over its M letters, in the
/// original letter order.
pub(crate) fn cyclic_scores(
    scorer: &dyn LetterScorer,
    candidates: &CandidateSet,
    prompt: impl Fn(&CandidateSet) -> Result<String>,
) -> Result<Vec<f64>> {
    let m = candidates.items.len();
    let letters = LETTERS.get(..m).ok_or_else(|| Error::Option {
        name: "M",
        value: m.to_string(),
        expected: "at most 26 candidates",
    })?;
    let mut sums = vec![0.0; m];
    for r in 0..m {
        let rotated = CandidateSet {
            items: (0..m).map(|j| candidates.items[(j + r) % m]).collect(),
            target_index: (candidates.target_index + m - r) % m,
        };
        let s = scorer.score(&prompt(&rotated)?, letters)?;
        if s.len() != m {
            return Err(Error::ScoreOutput {
                problem: format!("{} scores for {m} options", s.len()),
            });
        }
        for (j, x) in s.into_iter().enumerate() {
            sums[(j + r) % m] += x;
        }
    }
    Ok(sums.into_iter().map(|x| x / m as f64).collect())
}

#[cfg(test)]
mod tests;
