//! The generation model's input (paper l.138–148): the sources under their prefixes, after a
//! task instruction; and the author-distinction input (l.146–148).

/// The personalized generation task's instruction (l.148), verbatim.
pub const GENERATION_INSTRUCTION: &str = "Finish the passage in the user voice";
/// The author-distinction task's instruction (l.148), verbatim.
pub const AUTHOR_INSTRUCTION: &str = "Predict whether two passages are from the same author";

/// Prefix of the immediate context (l.140).
pub(crate) const PASSAGE_START: &str = "passage start";
/// Prefix of the summary (l.140).
pub(crate) const SUMMARY: &str = "summary";
/// Prefix of the synthesis (l.140).
pub(crate) const IMPORTANT_WORDS: &str = "important words";
/// Prefix of the ranked entries (l.140).
pub(crate) const PAST_PASSAGES: &str = "past passages";
/// Prefixes of the two passages of an author-distinction pair (ours; the paper gives none).
const PASSAGE_1: &str = "passage 1";
const PASSAGE_2: &str = "passage 2";

/// What separates the instruction and the sections: a blank line (ours; the paper gives only
/// the prefixes, l.140).
pub const SECTION_SEPARATOR: &str = "\n\n";

/// `{prefix}: {text}`.
pub(crate) fn section(prefix: &str, text: &str) -> String {
    format!("{prefix}: {text}")
}

/// The sources of one generation input, each optional: a configuration without a stage leaves
/// its section out (`ImmedCtx` has only `passage_start`, l.192; `RankDocBM25` adds
/// `past_passages`; `SumCtx` adds `summary`; `SynCtx` adds `important_words`, l.200–206).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sections<'a> {
    /// The immediate context `x_t`.
    pub passage_start: Option<&'a str>,
    /// The summary `Su(x_t, E_t)`.
    pub summary: Option<&'a str>,
    /// The synthesis `Sy(x_t, E_t)`, words joined ([`super::join_words`]).
    pub important_words: Option<&'a str>,
    /// The ranked entries `E_t`, joined and cut ([`super::RankedContext::text`]).
    pub past_passages: Option<&'a str>,
}

/// How the model inputs are written.
///
/// Two required methods: the generation input and the author-distinction input. [`PaperFormat`]
/// is the paper's; another format (a chat template's own layout, another language) implements
/// both.
pub trait InputFormat {
    /// The input of the personalized generation task.
    fn generation(&self, sections: &Sections<'_>) -> String;
    /// The input of the author-distinction task for a pair of passages.
    fn author(&self, first: &str, second: &str) -> String;
}

impl<T: InputFormat + ?Sized> InputFormat for &T {
    fn generation(&self, sections: &Sections<'_>) -> String {
        (**self).generation(sections)
    }
    fn author(&self, first: &str, second: &str) -> String {
        (**self).author(first, second)
    }
}

/// The paper's inputs (l.140, 148), with our separators:
///
/// * generation: [`GENERATION_INSTRUCTION`], then each present section as `{prefix}: {text}`
///   in the paper's order — `passage start`, `summary`, `important words`, `past passages` —
///   all separated by a blank line ([`SECTION_SEPARATOR`]). A section that is `None` is left
///   out; one that is `Some("")` is written (`summary: `), since the stage ran. Texts are
///   written as given.
/// * author distinction: [`AUTHOR_INSTRUCTION`], then `passage 1: {first}` and
///   `passage 2: {second}` (our prefixes), separated the same way.
///
/// ```
/// use pgraphrag_stages::multistage::{InputFormat, PaperFormat, Sections};
/// let s = Sections { passage_start: Some("Dear all, the"), important_words: Some("budget, meeting"), ..Sections::default() };
/// assert_eq!(
///     PaperFormat.generation(&s),
///     "Finish the passage in the user voice\n\npassage start: Dear all, the\n\nimportant words: budget, meeting"
/// );
/// assert_eq!(
///     PaperFormat.author("A.", "B."),
///     "Predict whether two passages are from the same author\n\npassage 1: A.\n\npassage 2: B."
/// );
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PaperFormat;

impl InputFormat for PaperFormat {
    fn generation(&self, s: &Sections<'_>) -> String {
        let mut out = GENERATION_INSTRUCTION.to_string();
        for (prefix, text) in [
            (PASSAGE_START, s.passage_start),
            (SUMMARY, s.summary),
            (IMPORTANT_WORDS, s.important_words),
            (PAST_PASSAGES, s.past_passages),
        ] {
            if let Some(t) = text {
                out.push_str(SECTION_SEPARATOR);
                out.push_str(&section(prefix, t));
            }
        }
        out
    }

    fn author(&self, first: &str, second: &str) -> String {
        [
            AUTHOR_INSTRUCTION.to_string(),
            section(PASSAGE_1, first),
            section(PASSAGE_2, second),
        ]
        .join(SECTION_SEPARATOR)
    }
}

/// The author-distinction label as text (l.146): `true` or `false`.
pub fn label_text(same_author: bool) -> &'static str {
    if same_author { "true" } else { "false" }
}
