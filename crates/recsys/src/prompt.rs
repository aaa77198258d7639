//! K-RagRec's recommendation prompt: the instruction with the watching history and the
//! lettered options, in the paper's wording or the released code's, optionally after a block
//! of knowledge triples.
use pgraphrag_graph::kg::TripleText;
use serde::{Deserialize, Serialize};

use crate::candidates::LETTERS;
use crate::{Error, Result};

/// Which wording of the instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum PromptStyle {
    /// **The paper's text, the default** (Table 11): `Instruction: … Watching history:
    /// {"T1", "T2"}. Options: {A: "T1", B: "T2"}. Select a movie from options A to T that the
    /// user is most likely to be interested in.` No answer-format sentence.
    #[default]
    Paper,
    /// The released `evaluate.py` string, byte for byte: `## Instruction:` after two spaces, a
    /// newline and 24 spaces of source indentation; `### Watching history: "T1", "T2".
    /// ###Options: A: T1, B: T2.`; then `Please answer "A" or "B" … only".` (with its stray
    /// closing quote).
    ReleasedEval,
    /// The released `train.py` string: as [`PromptStyle::ReleasedEval`] but `### Instruction:`
    /// after 28 spaces. The soft-prompt training of the next stage uses it.
    ReleasedTrain,
}

impl PromptStyle {
    /// The style's name on the command line and in the rows file (`paper`, `released-eval`,
    /// `released-train`).
    pub fn name(self) -> &'static str {
        match self {
            PromptStyle::Paper => "paper",
            PromptStyle::ReleasedEval => "released-eval",
            PromptStyle::ReleasedTrain => "released-train",
        }
    }

    /// The style of a [`PromptStyle::name`].
    ///
    /// ```
    /// use pgraphrag_recsys::PromptStyle;
    /// assert_eq!(PromptStyle::parse("released-eval").unwrap(), PromptStyle::ReleasedEval);
    /// assert!(PromptStyle::parse("llama").is_err());
    /// ```
    pub fn parse(s: &str) -> Result<Self> {
        [Self::Paper, Self::ReleasedEval, Self::ReleasedTrain]
            .into_iter()
            .find(|x| x.name() == s)
            .ok_or_else(|| Error::Option {
                name: "prompt style",
                value: s.to_string(),
                expected: "paper, released-eval or released-train",
            })
    }
}

const PREAMBLE: &str = "Below is an instruction that describes a task, paired with an input that provides further context. Write a response that appropriately completes the request.";

/// KAPING's knowledge preamble (Baek et al., 2023), put before the instruction with one
/// triple per line when a method gives the prompt knowledge as text.
pub const FACTS_PREAMBLE: &str =
    "Below are facts in the form of the triple meaningful to answer the question.";

/// The recommendation instruction for one row: `history` titles oldest first, `options` the
/// candidates' titles in letter order (at most 26; the last letter is named in the
/// instruction). The released strings name `A to T` and list the 20 letters whatever the
/// number of options (the released code only has M = 20); here the letters follow the number
/// of options, so the released strings are exact at M = 20.
///
/// Titles are used as given: the released data's are `movies_id_name.txt` names (`Crucible,
/// The`) for ML-1M.
///
/// ```
/// use pgraphrag_recsys::{PromptStyle, instruction};
/// let p = instruction(PromptStyle::Paper, &["Heat", "Se7en"], &["Fargo", "Babe"]).unwrap();
/// assert!(p.ends_with(r#"Watching history: {"Heat", "Se7en"}. Options: {A: "Fargo", B: "Babe"}. Select a movie from options A to B that the user is most likely to be interested in."#));
/// let r = instruction(PromptStyle::ReleasedEval, &["Heat"], &["Fargo", "Babe"]).unwrap();
/// assert!(r.ends_with(r#"### Watching history: "Heat". ###Options: A: Fargo, B: Babe. Select a movie from options A to B that the user is most likely to be interested in. Please answer "A" or "B" only"."#));
/// ```
pub fn instruction(style: PromptStyle, history: &[&str], options: &[&str]) -> Result<String> {
    if options.is_empty() || options.len() > LETTERS.len() {
        return Err(Error::Option {
            name: "number of options",
            value: options.len().to_string(),
            expected: "1 to 26 (the letters A to Z)",
        });
    }
    let m = options.len();
    let last = LETTERS[m - 1];
    let lettered = options.iter().zip(LETTERS);
    Ok(match style {
        PromptStyle::Paper => {
            let history = join(history.iter().map(|t| format!("\"{t}\"")));
            let options = join(lettered.map(|(t, l)| format!("{l}: \"{t}\"")));
            format!(
                "{PREAMBLE} Instruction: Given the user's watching history, select a film that is most likely to interest the user from the options. Watching history: {{{history}}}. Options: {{{options}}}. Select a movie from options A to {last} that the user is most likely to be interested in."
            )
        }
        PromptStyle::ReleasedEval | PromptStyle::ReleasedTrain => {
            let (indent, hashes) = if style == PromptStyle::ReleasedEval {
                (24, "##")
            } else {
                (28, "###")
            };
            let history = crate::history_prompt(history.iter().copied());
            let options = join(lettered.map(|(t, l)| format!("{l}: {t}")));
            let answers = LETTERS[..m]
                .iter()
                .map(|l| format!("\"{l}\""))
                .collect::<Vec<_>>()
                .join(" or ");
            format!(
                "{PREAMBLE}  \n{:indent$}{hashes} Instruction: Given the user's watching history, selecting a film that is most likely to interest the user from the options. ### Watching history: {history}. ###Options: {options}. Select a movie from options A to {last} that the user is most likely to be interested in. Please answer {answers} only\".",
                ""
            )
        }
    })
}

fn join(parts: impl Iterator<Item = String>) -> String {
    parts.collect::<Vec<_>>().join(", ")
}

/// `instruction` after a block of knowledge triples: [`FACTS_PREAMBLE`], one `(head,
/// relation, tail)` per line, a blank line, then the instruction. No triples gives the
/// instruction alone, so a row without knowledge has the same prompt as the no-knowledge
/// method.
///
/// ```
/// use pgraphrag_graph::kg::TripleText;
/// use pgraphrag_recsys::with_facts;
/// let t = TripleText { head: "Heat", relation: "film directed by", tail: "Michael Mann" };
/// assert_eq!(with_facts(&[t], "Pick one."), "Below are facts in the form of the triple meaningful to answer the question.\n(Heat, film directed by, Michael Mann)\n\nPick one.");
/// assert_eq!(with_facts(&[], "Pick one."), "Pick one.");
/// ```
pub fn with_facts(triples: &[TripleText<'_>], instruction: &str) -> String {
    if triples.is_empty() {
        return instruction.to_string();
    }
    let mut out = String::from(FACTS_PREAMBLE);
    for t in triples {
        out.push('\n');
        out.push_str(&triple_line(t));
    }
    out.push_str("\n\n");
    out.push_str(instruction);
    out
}

/// One triple as the prompt and the rows file write it: `(head, relation, tail)`.
///
/// ```
/// use pgraphrag_graph::kg::TripleText;
/// let t = TripleText { head: "Heat", relation: "film language", tail: "language" };
/// assert_eq!(pgraphrag_recsys::triple_line(&t), "(Heat, film language, language)");
/// ```
pub fn triple_line(t: &TripleText<'_>) -> String {
    format!("({}, {}, {})", t.head, t.relation, t.tail)
}
