//! The LaMP benchmark's vocabulary (`LaMP-Benchmark/LaMP`): its tasks ([`LampTask`]) and the
//! records of its question and output files ([`LampQuestion`], [`LampProfileItem`],
//! [`LampGold`]). One definition each: `pgraphrag-data` reads and writes the files,
//! `pgraphrag-prompt` builds LaMP's prompts from them and `pgraphrag-stages` summarises
//! their profiles.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::UnknownName;

/// A LaMP task, named as the LaMP repository names it. `LaMP-2` is today's movie tagging;
/// `LaMP-2-old` is the original news categorisation that the summary-augmented paper used.
///
/// ```
/// use pgraphrag_core::LampTask;
/// let t: LampTask = "LaMP-2-old".parse().unwrap();
/// assert_eq!(t, LampTask::Lamp2Old);
/// assert_eq!(t.to_string(), "LaMP-2-old");
/// assert_eq!("LaMP_4".parse::<LampTask>().unwrap(), LampTask::Lamp4);
/// assert_eq!(LampTask::Lamp3.profile_fields(), &["text", "score"]);
/// assert!("LaMP-9".parse::<LampTask>().unwrap_err().to_string().contains("LaMP-1"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum LampTask {
    /// Personalized citation identification (`title`, `abstract`).
    #[serde(rename = "LaMP-1")]
    Lamp1,
    /// Personalized movie tagging (`description`, `tag`).
    #[serde(rename = "LaMP-2")]
    Lamp2,
    /// Personalized news categorisation, the original LaMP-2 (`title`, `text`, `category`).
    #[serde(rename = "LaMP-2-old")]
    Lamp2Old,
    /// Personalized product rating (`text`, `score`).
    #[serde(rename = "LaMP-3")]
    Lamp3,
    /// Personalized news headline generation (`title`, `text`).
    #[serde(rename = "LaMP-4")]
    Lamp4,
    /// Personalized scholarly title generation (`title`, `abstract`).
    #[serde(rename = "LaMP-5")]
    Lamp5,
    /// Personalized email subject generation (`title` = subject, `text` = body).
    #[serde(rename = "LaMP-6")]
    Lamp6,
    /// Personalized tweet paraphrasing (`text`).
    #[serde(rename = "LaMP-7")]
    Lamp7,
}

impl LampTask {
    /// Every task, in the repository's order.
    pub const ALL: [LampTask; 8] = [
        LampTask::Lamp1,
        LampTask::Lamp2,
        LampTask::Lamp2Old,
        LampTask::Lamp3,
        LampTask::Lamp4,
        LampTask::Lamp5,
        LampTask::Lamp6,
        LampTask::Lamp7,
    ];

    /// The name as the repository spells it: `LaMP-1` … `LaMP-7`, `LaMP-2-old`.
    ///
    /// ```
    /// assert_eq!(pgraphrag_core::LampTask::Lamp7.as_str(), "LaMP-7");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            LampTask::Lamp1 => "LaMP-1",
            LampTask::Lamp2 => "LaMP-2",
            LampTask::Lamp2Old => "LaMP-2-old",
            LampTask::Lamp3 => "LaMP-3",
            LampTask::Lamp4 => "LaMP-4",
            LampTask::Lamp5 => "LaMP-5",
            LampTask::Lamp6 => "LaMP-6",
            LampTask::Lamp7 => "LaMP-7",
        }
    }

    /// The `task` value of an outputs file (`{"task": "LaMP_4", "golds": [...]}`):
    /// `LaMP_N`; both LaMP-2 variants write `LaMP_2`.
    ///
    /// ```
    /// assert_eq!(pgraphrag_core::LampTask::Lamp2Old.outputs_name(), "LaMP_2");
    /// ```
    pub fn outputs_name(self) -> &'static str {
        match self {
            LampTask::Lamp1 => "LaMP_1",
            LampTask::Lamp2 | LampTask::Lamp2Old => "LaMP_2",
            LampTask::Lamp3 => "LaMP_3",
            LampTask::Lamp4 => "LaMP_4",
            LampTask::Lamp5 => "LaMP_5",
            LampTask::Lamp6 => "LaMP_6",
            LampTask::Lamp7 => "LaMP_7",
        }
    }

    /// The task fields every profile item carries (besides `id` and the optional `date`),
    /// as the corpus makers of `LaMP/prompts/prompts.py` read them.
    ///
    /// ```
    /// assert_eq!(pgraphrag_core::LampTask::Lamp2Old.profile_fields(), &["title", "text", "category"]);
    /// ```
    pub fn profile_fields(self) -> &'static [&'static str] {
        match self {
            LampTask::Lamp1 | LampTask::Lamp5 => &["title", "abstract"],
            LampTask::Lamp2 => &["description", "tag"],
            LampTask::Lamp2Old => &["title", "text", "category"],
            LampTask::Lamp3 => &["text", "score"],
            LampTask::Lamp4 | LampTask::Lamp6 => &["title", "text"],
            LampTask::Lamp7 => &["text"],
        }
    }

    /// The label set of a classification task, as `get_all_labels` in
    /// `LaMP/data/datasets.py` lists it (LaMP-1 `[1]`/`[2]`, LaMP-2's 15 movie tags, LaMP-3
    /// `1`…`5`). `None` for the generation tasks and for LaMP-2-old, whose news categories the
    /// repository no longer lists (take them from the gold outputs).
    ///
    /// ```
    /// use pgraphrag_core::LampTask;
    /// assert_eq!(LampTask::Lamp3.labels().unwrap(), &["1", "2", "3", "4", "5"]);
    /// assert_eq!(LampTask::Lamp2.labels().unwrap().len(), 15);
    /// assert!(LampTask::Lamp4.labels().is_none());
    /// ```
    pub fn labels(self) -> Option<&'static [&'static str]> {
        match self {
            LampTask::Lamp1 => Some(&["[1]", "[2]"]),
            LampTask::Lamp2 => Some(&[
                "sci-fi",
                "based on a book",
                "comedy",
                "action",
                "twist ending",
                "dystopia",
                "dark comedy",
                "classic",
                "psychology",
                "fantasy",
                "romance",
                "thought-provoking",
                "social commentary",
                "violence",
                "true story",
            ]),
            LampTask::Lamp3 => Some(&["1", "2", "3", "4", "5"]),
            _ => None,
        }
    }

    /// Whether the task's output is a label (LaMP-1, 2, 2-old, 3) rather than free text.
    ///
    /// ```
    /// assert!(pgraphrag_core::LampTask::Lamp3.is_classification());
    /// assert!(!pgraphrag_core::LampTask::Lamp4.is_classification());
    /// ```
    pub fn is_classification(self) -> bool {
        matches!(
            self,
            LampTask::Lamp1 | LampTask::Lamp2 | LampTask::Lamp2Old | LampTask::Lamp3
        )
    }
}

impl fmt::Display for LampTask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for LampTask {
    type Err = UnknownName;
    /// `LaMP-N`, `LaMP_N` (the outputs files' spelling; `LaMP_2` is today's LaMP-2) or
    /// `LaMP-2-old`, any case, surrounding whitespace ignored.
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        let norm = s.trim().to_ascii_lowercase().replace('_', "-");
        LampTask::ALL
            .into_iter()
            .find(|t| t.as_str().to_ascii_lowercase() == norm)
            .ok_or_else(|| UnknownName {
                what: "LaMP task",
                value: s.to_string(),
                expected: "LaMP-1, LaMP-2, LaMP-2-old, LaMP-3, LaMP-4, LaMP-5, LaMP-6 or LaMP-7",
            })
    }
}

/// One item of a LaMP user profile: its `id`, the optional `date` (`YYYY-MM-DD`, used by
/// recency retrieval) and the task fields ([`LampTask::profile_fields`]) by name, each as
/// the text Python's `str()` would give (a JSON number `5` is `"5"`).
///
/// ```
/// use pgraphrag_core::LampProfileItem;
/// let item = LampProfileItem::new("p1").with("title", "Cats").with("text", "On cats.");
/// assert_eq!(item.get("title"), Some("Cats"));
/// assert_eq!(item.get("abstract"), None);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LampProfileItem {
    /// The item's id (unique within the profile).
    pub id: String,
    /// `YYYY-MM-DD`, when the file has it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    /// The task fields, by name.
    #[serde(flatten)]
    pub fields: BTreeMap<String, String>,
}

impl LampProfileItem {
    /// An item with an id and no fields.
    pub fn new(id: impl Into<String>) -> Self {
        LampProfileItem {
            id: id.into(),
            ..Default::default()
        }
    }

    /// The item with one more field (builder style).
    pub fn with(mut self, field: impl Into<String>, value: impl Into<String>) -> Self {
        self.fields.insert(field.into(), value.into());
        self
    }

    /// The item with a date (builder style).
    pub fn dated(mut self, date: impl Into<String>) -> Self {
        self.date = Some(date.into());
        self
    }

    /// A task field's text.
    pub fn get(&self, field: &str) -> Option<&str> {
        self.fields.get(field).map(String::as_str)
    }
}

/// One record of a LaMP `*_questions.json` file: `{"id", "input", "profile": [...]}`
/// (the time-based split adds `user_id`).
///
/// ```
/// use pgraphrag_core::{LampProfileItem, LampQuestion};
/// let q = LampQuestion::new("q1", "Generate a headline for the following article: x")
///     .with_profile(vec![LampProfileItem::new("p1").with("title", "T").with("text", "B")]);
/// assert_eq!(q.profile.len(), 1);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LampQuestion {
    /// The question id.
    pub id: String,
    /// The task input (instruction and query text).
    pub input: String,
    /// The user's profile.
    pub profile: Vec<LampProfileItem>,
    /// The user, in the time-based split.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
}

impl LampQuestion {
    /// A question with an empty profile.
    pub fn new(id: impl Into<String>, input: impl Into<String>) -> Self {
        LampQuestion {
            id: id.into(),
            input: input.into(),
            ..Default::default()
        }
    }

    /// The question with a profile (builder style).
    pub fn with_profile(mut self, profile: Vec<LampProfileItem>) -> Self {
        self.profile = profile;
        self
    }
}

/// What a user summary belongs to: the user (`user_id`, else the question `id`: LaMP's
/// user-based splits have one question per user) or the question (`id`: for files where one
/// user has several questions, each with its own time-ordered profile, so a summary of the user's
/// whole history would show a question documents later than itself).
///
/// ```
/// use pgraphrag_core::{LampQuestion, SummaryScope};
/// let mut q = LampQuestion::new("q1", "x");
/// q.user_id = Some("u9".into());
/// assert_eq!(q.summary_key(SummaryScope::User), "u9");
/// assert_eq!(q.summary_key(SummaryScope::Question), "q1");
/// assert_eq!("question".parse::<SummaryScope>().unwrap(), SummaryScope::Question);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SummaryScope {
    /// One summary per user (`user_id`, else `id`). The default.
    #[default]
    User,
    /// One summary per question (`id`).
    Question,
}

impl FromStr for SummaryScope {
    type Err = UnknownName;
    /// `user` or `question`.
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        match s.trim() {
            "user" => Ok(SummaryScope::User),
            "question" => Ok(SummaryScope::Question),
            _ => Err(UnknownName {
                what: "summary scope",
                value: s.to_string(),
                expected: "user or question",
            }),
        }
    }
}

impl LampQuestion {
    /// The key of this question's summary under `scope` (see [`SummaryScope`]).
    pub fn summary_key(&self, scope: SummaryScope) -> &str {
        match scope {
            SummaryScope::User => self.user_id.as_deref().unwrap_or(&self.id),
            SummaryScope::Question => &self.id,
        }
    }
}

/// One gold (or predicted) output of a LaMP `*_outputs.json` file: `{"id", "output"}`.
///
/// ```
/// let g = pgraphrag_core::LampGold { id: "q1".into(), output: "4".into() };
/// assert_eq!(g.output, "4");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LampGold {
    /// The question id.
    pub id: String,
    /// The output text (a label for the classification tasks).
    pub output: String,
}
