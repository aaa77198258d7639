//! PGraphRAG's prompts, exact to `master_generation.py` (class `UserProfile`,
//! `PGraphRAG-benchmark/PGraphRAG@722a71e`).
//!
//! A prompt is three parts, concatenated without separators:
//!
//! 1. the **intro line** chosen by the [`Mode`] (ends in `\n`);
//! 2. the **retrieved block**: a header (`User's Own Reviews:\n`, `Other Users' Reviews:\n`
//!    or `Random Review:\n`) followed by one line per retrieved review,
//!    `Review title: "{t}", Review text: "{x}"` (plus `, Review rating: {r}` for the rating
//!    task), each ending in `\n`. [`Mode::Both`] is the user block, one `\n`, then the
//!    neighbour block. [`Mode::None`] has no block;
//! 3. the **direction**, which starts with `\n` and quotes the target review's fields in
//!    single quotes.
//!
//! So a `neighbor`, k = 1 title prompt reads (`⏎` is a newline):
//!
//! ```text
//! Given the following reviews from other users on the same product:⏎
//! Other Users' Reviews:⏎
//! Review title: "Fine", Review text: "Does the job"⏎
//! ⏎
//! Generate a title for the following product review from this user without any explanation: Review text: 'Works well.'⏎
//! Generate the review title in 10 words or less using the format: 'Review title:'.
//! ```
//!
//! Values are formatted as Python's f-strings format them: a missing title, text or
//! rating prints as `None`; integral ratings print without a decimal point (`5`, as the
//! JSON ints of the released files do); other ratings print with Rust's shortest float
//! formatting, which agrees with Python's `repr` for ordinary values like `4.5`.
use std::fmt;
use std::str::FromStr;

use pgraphrag_core::{Entry, Prompt};
use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// The system message `master_generation.py` sends to GPT (`gpt_call`).
pub const GPT_SYSTEM_MESSAGE: &str = "You are a personalized assistant, with the goal of providing users the best content using their preferences and the preferences of similar users.";

/// The temperature `master_generation.py` uses with GPT.
pub const GPT_TEMPERATURE: f64 = 0.4;

/// The `max_new_tokens` `master_generation.py` uses with Llama-3.1-8B-Instruct (all tasks).
pub const LLAMA_MAX_NEW_TOKENS: usize = 256;

/// Which reviews a prompt shows the model.
///
/// ```
/// use pgraphrag_prompt::pgraphrag::Mode;
/// assert_eq!("both".parse::<Mode>().unwrap(), Mode::Both);
/// assert_eq!(Mode::Neighbor.to_string(), "neighbor");
/// assert!(Mode::None.k1_only() && !Mode::User.k1_only());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// No retrieval: only the target review's own field.
    None,
    /// One random review of another user on any product.
    Random,
    /// The user's own other reviews (the LaMP baseline).
    User,
    /// Other users' reviews of the same product.
    Neighbor,
    /// User and neighbour reviews together: PGraphRAG.
    Both,
}

impl Mode {
    /// All five modes in the order of `master_generation.py`'s `partial_generate`
    /// (`none, user, neighbor, both, random`).
    pub const ALL: [Mode; 5] = [
        Mode::None,
        Mode::User,
        Mode::Neighbor,
        Mode::Both,
        Mode::Random,
    ];

    /// The name used in PGraphRAG's file names (`none`, `random`, `user`, `neighbor`, `both`).
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::None => "none",
            Mode::Random => "random",
            Mode::User => "user",
            Mode::Neighbor => "neighbor",
            Mode::Both => "both",
        }
    }

    /// `true` for the modes the released code runs only with k = 1 (`none`, `random`).
    pub fn k1_only(self) -> bool {
        matches!(self, Mode::None | Mode::Random)
    }

    /// The intro line of the prompt (ends in `\n`).
    pub fn intro(self) -> &'static str {
        match self {
            Mode::Both => {
                "Given the following reviews from the same user and other users on the same product:\n"
            }
            Mode::Random => "Given a random review from any user on any product:\n",
            Mode::User => "Given the following reviews from the user on different products:\n",
            Mode::Neighbor => "Given the following reviews from other users on the same product:\n",
            Mode::None => "Given only information on this review:\n",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Mode {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "none" => Ok(Mode::None),
            "random" => Ok(Mode::Random),
            "user" => Ok(Mode::User),
            "neighbor" | "neighbour" => Ok(Mode::Neighbor),
            "both" => Ok(Mode::Both),
            _ => Err(Error::UnknownMode(s.to_string())),
        }
    }
}

/// What the model generates, and the language the direction asks for: the workspace's one
/// [`Task`] and [`Language`] (from `pgraphrag-core`). The released code inserts
/// `in Portuguese ` for the B2W dataset into the title and text directions; the rating
/// direction has no Portuguese variant, so [`Language::Portuguese`] leaves rating prompts
/// unchanged.
///
/// ```
/// use pgraphrag_prompt::pgraphrag::{Language, Task};
/// assert_eq!("reviewTitle".parse::<Task>().unwrap(), Task::Title);
/// assert_eq!(Language::for_dataset("b2w"), Language::Portuguese);
/// ```
pub use pgraphrag_core::{Language, Task};

/// The words the direction of the title and text tasks inserts for `language`.
fn language_insert(language: Language) -> &'static str {
    match language {
        Language::English => "",
        Language::Portuguese => "in Portuguese ",
    }
}

/// One user's ranked retrieval results, the prompt's input: `pgraphrag-core`'s, re-exported.
/// A prompt with `k` uses the first `k` of `user` and of `neighbors`; only `title`, `text`
/// and `rating` of each entry are read.
pub use pgraphrag_core::{RankedEntry, RankedProfile};

/// The block [`PromptBuilder::build_with_summary`] puts before the item summary: a blank
/// line (as between PGraphRAG's two review blocks), then this label.
pub const ITEM_SUMMARY_HEADER: &str = "\nSummary of other users' reviews of this product:\n";

/// Builds PGraphRAG prompts for one task and language.
///
/// ```
/// use pgraphrag_core::Entry;
/// use pgraphrag_prompt::pgraphrag::{Mode, PromptBuilder, RankedProfile, Task};
///
/// let target = Entry { title: Some("Nice".into()), text: Some("I like it".into()), ..Default::default() };
/// let profile = RankedProfile { target, ..Default::default() };
/// let p = PromptBuilder::new(Task::Rating).build(&profile, Mode::None, 1);
/// assert_eq!(p, "Given only information on this review:\n\nGenerate an integer rating from 1-5 for the \
/// following product from this user given the review title and text, without any explanation: Review title: \
/// 'Nice', Review text: 'I like it'\nGenerate the integer review rating using the format: 'Rating:'.");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PromptBuilder {
    task: Task,
    language: Language,
}

impl PromptBuilder {
    /// A builder for `task` in English.
    pub fn new(task: Task) -> Self {
        PromptBuilder {
            task,
            language: Language::English,
        }
    }

    /// Sets the language of the direction (see [`Language`]).
    pub fn language(mut self, language: Language) -> Self {
        self.language = language;
        self
    }

    /// The task.
    pub fn task(&self) -> Task {
        self.task
    }

    /// The prompt text for `profile` in `mode` with the top `k` reviews of each list
    /// (`create_prompt(mode, k)`). `k` is ignored by `none` and `random`.
    ///
    /// `random` mode with no random review (`random_review: null`) makes the released
    /// code crash; here it yields the `Random Review:\n` header with no review line.
    pub fn build(&self, profile: &RankedProfile, mode: Mode, k: usize) -> String {
        self.build_with_summary(profile, mode, k, None)
    }

    /// [`build`](Self::build) with a summary of other users' reviews of the target item
    /// (beyond the paper: the cold-start item summaries of `pgraphrag_eval::cold_start`). The
    /// summary goes after the retrieved reviews and before the direction, as its own block
    /// [`ITEM_SUMMARY_HEADER`]`{summary}\n` (trimmed); `None` or an empty summary gives
    /// exactly [`build`](Self::build)'s prompt.
    ///
    /// ```
    /// use pgraphrag_prompt::pgraphrag::{Mode, PromptBuilder, RankedProfile, Task};
    /// let b = PromptBuilder::new(Task::Title);
    /// let p = RankedProfile::default();
    /// let with = b.build_with_summary(&p, Mode::Neighbor, 4, Some(" Sturdy, cheap. "));
    /// assert!(with.contains("Other Users' Reviews:\n\nSummary of other users' reviews of this product:\nSturdy, cheap.\n\nGenerate a title"));
    /// assert_eq!(b.build_with_summary(&p, Mode::Neighbor, 4, None), b.build(&p, Mode::Neighbor, 4));
    /// ```
    pub fn build_with_summary(
        &self,
        profile: &RankedProfile,
        mode: Mode,
        k: usize,
        summary: Option<&str>,
    ) -> String {
        let mut out = String::with_capacity(512);
        out.push_str(mode.intro());
        match mode {
            Mode::None => {}
            Mode::User => self.block(&mut out, "User's Own Reviews:\n", top(&profile.user, k)),
            Mode::Neighbor => self.block(
                &mut out,
                "Other Users' Reviews:\n",
                top(&profile.neighbors, k),
            ),
            Mode::Random => self.block(&mut out, "Random Review:\n", profile.random.as_slice()),
            Mode::Both => {
                self.block(&mut out, "User's Own Reviews:\n", top(&profile.user, k));
                out.push('\n');
                self.block(
                    &mut out,
                    "Other Users' Reviews:\n",
                    top(&profile.neighbors, k),
                );
            }
        }
        if let Some(summary) = summary.map(str::trim).filter(|s| !s.is_empty()) {
            out.push_str(ITEM_SUMMARY_HEADER);
            out.push_str(summary);
            out.push('\n');
        }
        self.direction(&mut out, &profile.target);
        out
    }

    fn block(&self, out: &mut String, header: &str, reviews: &[RankedEntry]) {
        out.push_str(header);
        for r in reviews.iter().map(|r| &r.entry) {
            out.push_str("Review title: \"");
            out.push_str(&py_opt(&r.title));
            out.push_str("\", Review text: \"");
            out.push_str(&py_opt(&r.text));
            out.push('"');
            if self.task == Task::Rating {
                out.push_str(", Review rating: ");
                out.push_str(&py_rating(r.rating));
            }
            out.push('\n');
        }
    }

    fn direction(&self, out: &mut String, target: &Entry) {
        let pt = language_insert(self.language);
        match self.task {
            Task::Title => {
                out.push_str("\nGenerate a title ");
                out.push_str(pt);
                out.push_str(
                    "for the following product review from this user without any explanation: ",
                );
                out.push_str("Review text: '");
                out.push_str(&py_opt(&target.text));
                out.push_str("'\n");
                out.push_str(
                    "Generate the review title in 10 words or less using the format: 'Review title:'.",
                );
            }
            Task::Text => {
                out.push_str("\nGenerate a review ");
                out.push_str(pt);
                out.push_str("for the following product from this user given the review title, without any explanation: ");
                out.push_str("Review title: '");
                out.push_str(&py_opt(&target.title));
                out.push_str("'\n");
                out.push_str("Generate the review text using the format: 'Review text:'.");
            }
            Task::Rating => {
                out.push_str("\nGenerate an integer rating from 1-5 for the following product from this user given the review title and text, without any explanation: ");
                out.push_str("Review title: '");
                out.push_str(&py_opt(&target.title));
                out.push_str("', Review text: '");
                out.push_str(&py_opt(&target.text));
                out.push_str("'\n");
                out.push_str("Generate the integer review rating using the format: 'Rating:'.");
            }
        }
    }

    /// The prompt as `gpt_call` sends it: [`GPT_SYSTEM_MESSAGE`] then the prompt as the
    /// user message. Local models format it with their own chat template.
    pub fn chat(&self, profile: &RankedProfile, mode: Mode, k: usize) -> Prompt {
        gpt_chat(self.build(profile, mode, k))
    }
}

fn top(v: &[RankedEntry], k: usize) -> &[RankedEntry] {
    &v[..k.min(v.len())]
}

fn py_opt(s: &Option<String>) -> std::borrow::Cow<'_, str> {
    match s {
        Some(s) => std::borrow::Cow::Borrowed(s.as_str()),
        None => std::borrow::Cow::Borrowed("None"),
    }
}

/// Formats a rating as Python's f-string formats the released files' values: integral
/// values without a decimal point (they are JSON ints there), others as floats, missing
/// as `None`.
///
/// ```
/// use pgraphrag_prompt::pgraphrag::py_rating;
/// assert_eq!(py_rating(Some(5.0)), "5");
/// assert_eq!(py_rating(Some(4.5)), "4.5");
/// assert_eq!(py_rating(None), "None");
/// ```
pub fn py_rating(r: Option<f64>) -> String {
    match r {
        None => "None".to_string(),
        Some(x) if x.is_finite() && x.fract() == 0.0 && x.abs() < 1e15 => {
            format!("{}", x as i64)
        }
        Some(x) => format!("{x}"),
    }
}

/// Wraps a PGraphRAG prompt as `gpt_call` does: system message [`GPT_SYSTEM_MESSAGE`],
/// then the prompt as the user message.
///
/// ```
/// use pgraphrag_core::Role;
/// let p = pgraphrag_prompt::pgraphrag::gpt_chat("Hello");
/// assert_eq!(p.messages()[0].role, Role::System);
/// assert_eq!(p.messages()[1].content, "Hello");
/// ```
pub fn gpt_chat(prompt: impl Into<String>) -> Prompt {
    Prompt::user(prompt).with_system(GPT_SYSTEM_MESSAGE)
}

/// The raw string `generate_llama` sends to Llama-3.1-8B-Instruct, as released: no
/// `<|begin_of_text|>`, and the stray `<<|eot_id|>` typo kept.
///
/// ```
/// let s = pgraphrag_prompt::pgraphrag::llama3_raw_text("P");
/// assert_eq!(s, "<|start_header_id|>user<|end_header_id|>\nP\nDo NOT generate anything else!.\n<<|eot_id|><|start_header_id|>assistant<|end_header_id|>");
/// ```
pub fn llama3_raw_text(prompt: &str) -> String {
    format!(
        "<|start_header_id|>user<|end_header_id|>\n{prompt}\nDo NOT generate anything else!.\n<<|eot_id|><|start_header_id|>assistant<|end_header_id|>"
    )
}

/// [`llama3_raw_text`] as a [`Prompt::Raw`], to be sent to a Llama-3 model verbatim.
pub fn llama3_raw(prompt: &str) -> Prompt {
    Prompt::Raw(llama3_raw_text(prompt))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(t: &str, x: &str, r: f64) -> Entry {
        Entry {
            title: Some(t.into()),
            text: Some(x.into()),
            rating: Some(r),
            ..Default::default()
        }
    }

    #[test]
    fn both_joins_blocks_with_one_newline() {
        let p = RankedProfile {
            target: e("T", "X", 5.0),
            user: vec![e("u1", "ux1", 3.0).into(), e("u2", "ux2", 4.0).into()],
            neighbors: vec![e("n1", "nx1", 1.0).into()],
            ..Default::default()
        };
        let s = PromptBuilder::new(Task::Rating).build(&p, Mode::Both, 1);
        assert_eq!(
            s,
            "Given the following reviews from the same user and other users on the same product:\n\
             User's Own Reviews:\nReview title: \"u1\", Review text: \"ux1\", Review rating: 3\n\n\
             Other Users' Reviews:\nReview title: \"n1\", Review text: \"nx1\", Review rating: 1\n\n\
             Generate an integer rating from 1-5 for the following product from this user given the review title and text, without any explanation: \
             Review title: 'T', Review text: 'X'\nGenerate the integer review rating using the format: 'Rating:'."
        );
    }

    #[test]
    fn k_larger_than_list_uses_all_and_empty_user_keeps_header() {
        let p = RankedProfile {
            target: e("T", "X", 5.0),
            ..Default::default()
        };
        let s = PromptBuilder::new(Task::Title).build(&p, Mode::User, 4);
        assert!(s.starts_with(
            "Given the following reviews from the user on different products:\nUser's Own Reviews:\n\nGenerate a title for"
        ));
    }

    #[test]
    fn portuguese_only_changes_title_and_text() {
        let p = RankedProfile {
            target: e("T", "X", 5.0),
            ..Default::default()
        };
        for t in Task::ALL {
            let en = PromptBuilder::new(t).build(&p, Mode::None, 1);
            let pt = PromptBuilder::new(t)
                .language(Language::Portuguese)
                .build(&p, Mode::None, 1);
            assert_eq!(en == pt, t == Task::Rating, "{t}");
        }
    }

    #[test]
    fn missing_fields_print_none() {
        let p = RankedProfile {
            target: Entry::default(),
            random: Some(Entry::default().into()),
            ..Default::default()
        };
        let s = PromptBuilder::new(Task::Rating).build(&p, Mode::Random, 1);
        assert!(s.contains(
            "Random Review:\nReview title: \"None\", Review text: \"None\", Review rating: None\n"
        ));
        assert!(s.contains("Review title: 'None', Review text: 'None'\n"));
    }

    #[test]
    fn parse_errors_name_the_input() {
        let err = "bogus".parse::<Mode>().unwrap_err().to_string();
        assert!(err.contains("bogus") && err.contains("neighbor"));
        assert!("x".parse::<Task>().is_err());
    }
}
