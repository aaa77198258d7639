//! The summary prompts: the six instructions of the paper's Table 2 and custom ones, with the
//! layout of the profile entries under the instruction.
use pgraphrag_core::LampTask;
use sha2::{Digest, Sha256};

use crate::profile::RENDER_VERSION;

/// How the entries sit under the instruction (not given in the paper; our choice): the
/// instruction, a blank line, then the entries in fitting order (most recent first when dated,
/// see [`crate::profile::priority_order`]), separated by blank lines. Part of every
/// [`SummaryPrompt::version`]; bump it when [`SummaryPrompt::message`] changes.
pub const LAYOUT_VERSION: &str = "layout-1";

/// Separator between the instruction and the first entry, and between entries.
pub(crate) const SEPARATOR: &str = "\n\n";

/// The instruction of a summary prompt and its name.
///
/// [`SummaryPrompt::table2`] gives the paper's prompt for LaMP-1, 2 (news, `LaMP-2-old`), 3,
/// 4, 5 and 7, verbatim (apostrophes straightened, `¡…¿` read as `<…>`); today's LaMP-2
/// (movie tagging), which the paper did not have, gets its news prompt adapted to tags; LaMP-6
/// (email subjects, which the paper excluded because Avocado is private) gets the LaMP-4
/// headline prompt adapted to subjects. [`SummaryPrompt::custom`] takes any instruction.
///
/// ```
/// use pgraphrag_core::LampTask;
/// use pgraphrag_stages::SummaryPrompt;
/// let p = SummaryPrompt::table2(LampTask::Lamp4).unwrap();
/// assert!(p.instruction().starts_with("Given this author's previous articles"));
/// assert_eq!(p.message(&["Headline: A\nArticle: B"]), format!("{}\n\nHeadline: A\nArticle: B", p.instruction()));
/// assert!(p.version().starts_with("table2-LaMP-4@"));
/// assert_eq!(SummaryPrompt::table2(LampTask::Lamp6).unwrap().name(), "adapted-LaMP-6");
/// let mine = SummaryPrompt::custom("mine", "Summarise this user's style.");
/// assert_ne!(mine.version(), SummaryPrompt::custom("mine", "Summarise this user's tone.").version());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummaryPrompt {
    name: String,
    instruction: String,
}

/// Table 2 of Richardson et al. (2023), LaMP-1.
pub const LAMP1: &str = "Write a summary, in English, of the research interests and topics of a researcher who has published the following papers. Only generate the summary, no other text.";
/// Table 2, LaMP-2 (the original news categorisation, `LaMP-2-old`).
pub const LAMP2_NEWS: &str = "Look at the following past articles this journalist has written and determine the most popular category they write in. Answer in the following form: most popular category: <category>";
/// Our adaptation of [`LAMP2_NEWS`] to today's LaMP-2 (movie tagging), which the paper did not
/// have: the same question and answer form, about tags of movies.
pub const LAMP2_MOVIES: &str = "Look at the following past movies this user has tagged and determine the most popular tag they use. Answer in the following form: most popular tag: <tag>";
/// Table 2, LaMP-3.
pub const LAMP3: &str = "Based on this user's past reviews, what are the most common scores they give for positive and negative reviews? Answer in the following form: most common positive score: <most common positive score>, most common negative score: <most common negative score>";
/// Table 2, LaMP-4.
pub const LAMP4: &str = "Given this author's previous articles, try to describe a template for their headlines. I want to be able to accurately predict the headline gives one of their articles. Be specific about their style and wording, don't tell me anything generic.";
/// Our adaptation of [`LAMP4`] to LaMP-6 (email subject generation), which the paper excluded:
/// the same request about emails and their subjects (and without LAMP4's typo "gives").
pub const LAMP6_EMAIL: &str = "Given this author's previous emails, try to describe a template for their email subjects. I want to be able to accurately predict the subject of one of their emails from its body. Be specific about their style and wording, don't tell me anything generic.";
/// Table 2, LaMP-5.
pub const LAMP5: &str = "Given this author's previous publications, try to describe a template for their titles. I want to be able to accurately predict the title of one of the papers from the abstract. Only generate the template description, nothing else.";
/// Table 2, LaMP-7.
pub const LAMP7: &str = "Given this person's previous tweets, try to describe a template for their tweets. I want to take a generic sentence and rephrase it to sound like one of their tweets, with the same style/punctuation/capitalization/wording/tone/etc. as them. Only give me the template description, nothing else.";

/// Beyond the paper: the cold-start item summary (`pgraphrag_eval::cold_start`), in the style of
/// [`LAMP4`] and [`LAMP5`], over other users' reviews of one product
/// ([`EntryFormat::PRODUCT_REVIEW`](crate::EntryFormat::PRODUCT_REVIEW) entries).
pub const ITEM_REVIEWS: &str = "Given other users' reviews of this product, describe what they say about it and how they title their reviews. I want to be able to accurately predict the title of a new review of this product from its text. Be specific about the product and the wording, don't tell me anything generic.";

impl SummaryPrompt {
    /// The paper's prompt for `task` (named `table2-LaMP-N`), the adapted one for today's
    /// LaMP-2 and for LaMP-6 (named `adapted-LaMP-2`, `adapted-LaMP-6`). Every task has one
    /// today; the `Option` is kept for tasks to come.
    ///
    /// ```
    /// use pgraphrag_core::LampTask;
    /// let p = pgraphrag_stages::SummaryPrompt::table2(LampTask::Lamp2Old).unwrap();
    /// assert!(p.instruction().ends_with("most popular category: <category>"));
    /// assert_eq!(pgraphrag_stages::SummaryPrompt::table2(LampTask::Lamp2).unwrap().name(), "adapted-LaMP-2");
    /// ```
    pub fn table2(task: LampTask) -> Option<SummaryPrompt> {
        let instruction = match task {
            LampTask::Lamp1 => LAMP1,
            LampTask::Lamp2 => LAMP2_MOVIES,
            LampTask::Lamp2Old => LAMP2_NEWS,
            LampTask::Lamp3 => LAMP3,
            LampTask::Lamp4 => LAMP4,
            LampTask::Lamp5 => LAMP5,
            LampTask::Lamp6 => LAMP6_EMAIL,
            LampTask::Lamp7 => LAMP7,
        };
        let name = match task {
            LampTask::Lamp2 | LampTask::Lamp6 => format!("adapted-{task}"),
            t => format!("table2-{t}"),
        };
        Some(SummaryPrompt {
            name,
            instruction: instruction.to_string(),
        })
    }

    /// The cold-start item summary's prompt ([`ITEM_REVIEWS`], named `item-reviews`), for
    /// entries written with [`EntryFormat::PRODUCT_REVIEW`](crate::EntryFormat::PRODUCT_REVIEW).
    ///
    /// ```
    /// let p = pgraphrag_stages::SummaryPrompt::item_reviews();
    /// assert!(p.version().starts_with("item-reviews@"));
    /// ```
    pub fn item_reviews() -> SummaryPrompt {
        SummaryPrompt::custom("item-reviews", ITEM_REVIEWS)
    }

    /// A prompt with your own instruction; `name` labels it in [`Self::version`].
    ///
    /// ```
    /// let p = pgraphrag_stages::SummaryPrompt::custom("style", "Describe this user's style.");
    /// assert_eq!(p.name(), "style");
    /// ```
    pub fn custom(name: impl Into<String>, instruction: impl Into<String>) -> SummaryPrompt {
        SummaryPrompt {
            name: name.into(),
            instruction: instruction.into(),
        }
    }

    /// The prompt's name (`table2-LaMP-4`, `adapted-LaMP-2`, or a custom name).
    ///
    /// ```
    /// let p = pgraphrag_stages::SummaryPrompt::table2(pgraphrag_core::LampTask::Lamp7).unwrap();
    /// assert_eq!(p.name(), "table2-LaMP-7");
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The instruction text.
    ///
    /// ```
    /// let p = pgraphrag_stages::SummaryPrompt::table2(pgraphrag_core::LampTask::Lamp1).unwrap();
    /// assert_eq!(p.instruction(), pgraphrag_stages::prompt::LAMP1);
    /// ```
    pub fn instruction(&self) -> &str {
        &self.instruction
    }

    /// `{name}@{12 hex digits}`: the digits are the SHA-256 of the instruction, the entry
    /// layout ([`LAYOUT_VERSION`]) and the entry rendering ([`RENDER_VERSION`]), so any change
    /// to the text the model sees gives another version (and the summaries are recomputed).
    ///
    /// ```
    /// let p = pgraphrag_stages::SummaryPrompt::custom("x", "Summarise.");
    /// let v = p.version();
    /// assert!(v.starts_with("x@") && v.len() == 14);
    /// ```
    pub fn version(&self) -> String {
        let mut h = Sha256::new();
        for part in [LAYOUT_VERSION, RENDER_VERSION, &self.instruction] {
            h.update(part.as_bytes());
            h.update([0u8]);
        }
        let hex: String = h.finalize()[..6]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        format!("{}@{hex}", self.name)
    }

    /// The user message for `entries` (rendered profile entries, in the order given): the
    /// instruction, then each entry, all separated by blank lines ([`LAYOUT_VERSION`]).
    ///
    /// ```
    /// let p = pgraphrag_stages::SummaryPrompt::custom("x", "Summarise.");
    /// assert_eq!(p.message(&["Tweet: a", "Tweet: b"]), "Summarise.\n\nTweet: a\n\nTweet: b");
    /// assert_eq!(p.message(&[]), "Summarise.");
    /// ```
    pub fn message(&self, entries: &[&str]) -> String {
        let mut out = self.instruction.clone();
        for e in entries {
            out.push_str(SEPARATOR);
            out.push_str(e);
        }
        out
    }
}
