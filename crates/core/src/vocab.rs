//! The shared vocabulary of the PGraphRAG benchmark: the three [`Task`]s and the prompt and
//! tokenizer [`Language`]. One definition each, used by retrieval (which query a task
//! ranks with), prompts (which direction a task asks for), text (which Punkt model) and the
//! command line.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A name that is not one of a vocabulary's: the error of the [`FromStr`] implementations
/// of [`Task`] and [`Language`].
///
/// ```
/// let e = "poem".parse::<pgraphrag_core::Task>().unwrap_err();
/// assert_eq!(e.value, "poem");
/// assert!(e.to_string().contains("text, title or rating"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} {value:?}: expected {expected}")]
pub struct UnknownName {
    /// What was parsed (`task`, `language`).
    pub what: &'static str,
    /// The name given.
    pub value: String,
    /// The accepted names, in words.
    pub expected: &'static str,
}

/// The star-rating scale of the PGraphRAG splits and of LaMP-3 (`1` to `5`, inclusive): the
/// domain a rating read from those files must lie in (`pgraphrag-data` refuses a value outside
/// it, naming the file, the record and the field), the constant answers a rating grid is
/// compared with, and the live index's default rating range.
///
/// ```
/// let scale = pgraphrag_core::RATING_SCALE;
/// assert!(scale.contains(&4.5) && !scale.contains(&99999.0) && !scale.contains(&0.0));
/// assert_eq!((*scale.start(), *scale.end()), (1.0, 5.0));
/// ```
pub const RATING_SCALE: std::ops::RangeInclusive<f64> = 1.0..=5.0;

/// The three PGraphRAG tasks. Each decides the retrieval query ([`Task::query`]) and what
/// the model generates. Serialises as `text`, `title`, `rating`.
///
/// ```
/// use pgraphrag_core::Task;
/// assert_eq!("reviewTitle".parse::<Task>().unwrap(), Task::Title);
/// assert_eq!("rating".parse::<Task>().unwrap().reference_name(), "reviewRating");
/// assert_eq!(Task::Text.to_string(), "text");
/// assert_eq!(Task::Text.query(Some("Lovely soap"), Some("Smells")), "Lovely soap");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Task {
    /// Review text generation (`reviewText`): the target's **title** is given (and is the
    /// retrieval query).
    Text,
    /// Review title generation (`reviewTitle`): the target's **text** is given (and is the
    /// query).
    Title,
    /// Rating prediction (`reviewRating`): title and text are given; the query is
    /// `f"{title} {text}".strip()`.
    Rating,
}

impl Task {
    /// All three tasks.
    pub const ALL: [Task; 3] = [Task::Text, Task::Title, Task::Rating];

    /// The short name (`text`, `title`, `rating`).
    ///
    /// ```
    /// assert_eq!(pgraphrag_core::Task::Rating.as_str(), "rating");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Task::Text => "text",
            Task::Title => "title",
            Task::Rating => "rating",
        }
    }

    /// The name the released code uses (notebook and file names): `reviewText`,
    /// `reviewTitle`, `reviewRating`.
    ///
    /// ```
    /// assert_eq!(pgraphrag_core::Task::Title.reference_name(), "reviewTitle");
    /// ```
    pub fn reference_name(self) -> &'static str {
        match self {
            Task::Text => "reviewText",
            Task::Title => "reviewTitle",
            Task::Rating => "reviewRating",
        }
    }

    /// The notebook's name of the task: the same as [`Task::reference_name`].
    ///
    /// ```
    /// assert_eq!(pgraphrag_core::Task::Text.notebook_name(), "reviewText");
    /// ```
    pub fn notebook_name(self) -> &'static str {
        self.reference_name()
    }

    /// The retrieval query for a target review with raw `title` and `text` (`None` counts
    /// as empty), stripped like Python's `str.strip()`.
    ///
    /// ```
    /// use pgraphrag_core::Task;
    /// assert_eq!(Task::Title.query(Some("T"), Some(" body ")), "body");
    /// assert_eq!(Task::Rating.query(Some(" "), Some("x")), "x");
    /// ```
    pub fn query(self, title: Option<&str>, text: Option<&str>) -> String {
        let t = title.unwrap_or("").trim();
        let x = text.unwrap_or("").trim();
        match self {
            Task::Text => t.to_string(),
            Task::Title => x.to_string(),
            Task::Rating => format!("{t} {x}").trim().to_string(),
        }
    }
}

impl fmt::Display for Task {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Task {
    type Err = UnknownName;
    /// `text`, `title`, `rating` or the released code's `reviewText`, `reviewTitle`,
    /// `reviewRating` (surrounding whitespace ignored).
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        match s.trim() {
            "text" | "reviewText" => Ok(Task::Text),
            "title" | "reviewTitle" => Ok(Task::Title),
            "rating" | "reviewRating" => Ok(Task::Rating),
            _ => Err(UnknownName {
                what: "task",
                value: s.to_string(),
                expected: "text, title or rating (or PGraphRAG's reviewText, reviewTitle, reviewRating)",
            }),
        }
    }
}

/// A language of the benchmark: the Punkt sentence model of the tokenizers and the
/// language of PGraphRAG's prompt directions (Portuguese for B2W). Serialises as `english`,
/// `portuguese`.
///
/// ```
/// use pgraphrag_core::Language;
/// assert_eq!(Language::for_dataset("b2w"), Language::Portuguese);
/// assert_eq!(Language::for_dataset("amazon"), Language::English);
/// assert_eq!("pt".parse::<Language>().unwrap(), Language::Portuguese);
/// assert_eq!(Language::Portuguese.to_string(), "pt");
/// assert_eq!(Language::default(), Language::English);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    /// English (Amazon, Hotel, GAP; NLTK `punkt_tab/english`, what `nltk.word_tokenize`
    /// uses by default).
    #[default]
    English,
    /// Portuguese (B2W; NLTK `punkt_tab/portuguese`).
    Portuguese,
}

impl Language {
    /// The language the released code uses for a dataset name (`b2w` → Portuguese,
    /// anything else → English).
    ///
    /// ```
    /// assert_eq!(pgraphrag_core::Language::for_dataset("B2W"), pgraphrag_core::Language::Portuguese);
    /// ```
    pub fn for_dataset(dataset: &str) -> Self {
        if dataset.eq_ignore_ascii_case("b2w") {
            Language::Portuguese
        } else {
            Language::English
        }
    }

    /// The short code (`en`, `pt`), also its [`Display`](fmt::Display).
    ///
    /// ```
    /// assert_eq!(pgraphrag_core::Language::English.code(), "en");
    /// ```
    pub fn code(self) -> &'static str {
        match self {
            Language::English => "en",
            Language::Portuguese => "pt",
        }
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

impl FromStr for Language {
    type Err = UnknownName;
    /// `en`, `english`, `pt` or `portuguese`, any case.
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        match s.trim().to_ascii_lowercase().as_str() {
            "en" | "english" => Ok(Language::English),
            "pt" | "portuguese" => Ok(Language::Portuguese),
            _ => Err(UnknownName {
                what: "language",
                value: s.to_string(),
                expected: "en or pt",
            }),
        }
    }
}
