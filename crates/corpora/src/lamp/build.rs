//! What every LaMP builder shares: the options, the user split, the selection of targets and
//! profiles, and the built task with its files and statistics.
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use pgraphrag_core::{LampGold, LampQuestion, LampTask};
use pgraphrag_text::py::Random;

use crate::{Error, Report, Result};

/// LaMP-3's input template (`PEFT/data/datasets.py`); the review text follows it.
pub const LAMP3_PREFIX: &str = "What is the score of the following review on a scale of 1 to 5? just answer with 1, 2, 3, 4, or 5 without further explanation. review: ";
/// LaMP-4's input template; the article follows it.
pub const LAMP4_PREFIX: &str = "Generate a headline for the following article: ";
/// LaMP-6's input template; the email body follows it.
pub const LAMP6_PREFIX: &str = "Generate a subject for the following email: ";

/// A question's input for a task this crate builds (LaMP-3, 4, 6); `None` for the others.
///
/// ```
/// use pgraphrag_core::LampTask;
/// assert_eq!(pgraphrag_corpora::lamp::input(LampTask::Lamp4, "Text.").unwrap(),
///            "Generate a headline for the following article: Text.");
/// assert!(pgraphrag_corpora::lamp::input(LampTask::Lamp7, "x").is_none());
/// ```
pub fn input(task: LampTask, text: &str) -> Option<String> {
    let prefix = match task {
        LampTask::Lamp3 => LAMP3_PREFIX,
        LampTask::Lamp4 => LAMP4_PREFIX,
        LampTask::Lamp6 => LAMP6_PREFIX,
        _ => return None,
    };
    Some(format!("{prefix}{text}"))
}

/// Which part of a build a user belongs to; serialised as `"train"`, `"dev"` or `"test"`.
///
/// ```
/// use pgraphrag_corpora::lamp::SplitName;
/// assert_eq!(serde_json::to_string(&SplitName::Test).unwrap(), r#""test""#);
/// assert_eq!(serde_json::from_str::<SplitName>(r#""dev""#).unwrap(), SplitName::Dev);
/// ```
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum SplitName {
    /// Training users.
    Train,
    /// Validation users.
    Dev,
    /// Test users.
    Test,
}

impl SplitName {
    /// All three, in file order.
    pub const ALL: [SplitName; 3] = [SplitName::Train, SplitName::Dev, SplitName::Test];

    /// `train`, `dev` or `test`: the prefix of LaMP's file names (`dev_questions.json`).
    ///
    /// ```
    /// assert_eq!(pgraphrag_corpora::lamp::SplitName::Dev.as_str(), "dev");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            SplitName::Train => "train",
            SplitName::Dev => "dev",
            SplitName::Test => "test",
        }
    }
}

impl fmt::Display for SplitName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Relative sizes of the train, dev and test user sets (weights; the default 85/5/10 is the
/// multistage paper's user split).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SplitRatio {
    /// Weight of train.
    pub train: u32,
    /// Weight of dev.
    pub dev: u32,
    /// Weight of test.
    pub test: u32,
}

impl Default for SplitRatio {
    fn default() -> Self {
        SplitRatio {
            train: 85,
            dev: 5,
            test: 10,
        }
    }
}

/// Splits users: sorted by id, shuffled by CPython's `random.Random(seed).shuffle`, then the
/// first `n_train` are train, the next `n_dev` dev, the rest test, where `n_dev` and `n_test`
/// are the rounded (half up) shares of the ratio; with three or more users every part of
/// non-zero weight gets at least one. Duplicate ids count once.
///
/// ```
/// use pgraphrag_corpora::lamp::{split_users, SplitName, SplitRatio};
/// let users: Vec<String> = (0..20).map(|i| format!("u{i:02}")).collect();
/// let s = split_users(&users, SplitRatio::default(), 42);
/// let n = |p| s.values().filter(|&&v| v == p).count();
/// assert_eq!((n(SplitName::Train), n(SplitName::Dev), n(SplitName::Test)), (17, 1, 2));
/// assert_eq!(s, split_users(&users, SplitRatio::default(), 42));
/// ```
pub fn split_users(users: &[String], ratio: SplitRatio, seed: u64) -> BTreeMap<String, SplitName> {
    let mut ids: Vec<&String> = users.iter().collect::<BTreeSet<_>>().into_iter().collect();
    Random::new(seed).shuffle(&mut ids);
    let n = ids.len() as u64;
    let total = u64::from(ratio.train) + u64::from(ratio.dev) + u64::from(ratio.test);
    let share = |w: u32| -> u64 {
        if total == 0 {
            return 0;
        }
        let s = (n * u64::from(w) * 2 + total) / (2 * total);
        if w > 0 && n >= 3 { s.max(1) } else { s }
    };
    let n_test = share(ratio.test).min(n);
    let n_dev = share(ratio.dev).min(n - n_test);
    let n_train = n - n_test - n_dev;
    ids.into_iter()
        .enumerate()
        .map(|(i, u)| {
            let i = i as u64;
            let part = if i < n_train {
                SplitName::Train
            } else if i < n_train + n_dev {
                SplitName::Dev
            } else {
                SplitName::Test
            };
            (u.clone(), part)
        })
        .collect()
}

/// The builders' rules. The presets name the defaults per task ([`BuildOptions::for_task`]).
///
/// ```
/// use pgraphrag_corpora::lamp::BuildOptions;
/// let o = BuildOptions::multistage();
/// assert_eq!((o.min_target_chars, o.min_profile, o.min_targets_per_author, o.max_targets_per_author), (301, 2, 5, Some(50)));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BuildOptions {
    /// Seed of the user split and of the choice of targets beyond the cap (default 42).
    pub seed: u64,
    /// Relative sizes of train, dev and test.
    pub split: SplitRatio,
    /// A target's text needs at least this many characters (Unicode scalar values).
    pub min_target_chars: usize,
    /// A target needs at least this many earlier documents (its profile).
    pub min_profile: usize,
    /// Authors with fewer qualifying targets are left out.
    pub min_targets_per_author: usize,
    /// At most this many targets per author, drawn by `random.Random(seed + 1).sample` in
    /// author order and kept in time order; `None`: all.
    pub max_targets_per_author: Option<usize>,
    /// Keep only the most recent this many profile items; `None`: all.
    pub max_profile: Option<usize>,
}

impl BuildOptions {
    /// The multistage paper's rules (LaMP-6's default): targets over 300 characters with at
    /// least 2 earlier documents, authors with at least 5 targets, at most 50 per author, the
    /// whole earlier history as profile, users split 85/5/10.
    pub fn multistage() -> Self {
        BuildOptions {
            seed: 42,
            split: SplitRatio::default(),
            min_target_chars: 301,
            min_profile: 2,
            min_targets_per_author: 5,
            max_targets_per_author: Some(50),
            max_profile: None,
        }
    }

    /// LaMP-4's default: the multistage rules with profiles capped at the 50 most recent
    /// articles (an outlet has up to 558 earlier articles of about 3,000 characters).
    pub fn news() -> Self {
        BuildOptions {
            max_profile: Some(50),
            ..Self::multistage()
        }
    }

    /// LaMP-3's default: one target per user (LaMP has one question per user) with at least
    /// one other rating in the profile; no length rule.
    pub fn ratings() -> Self {
        BuildOptions {
            min_target_chars: 0,
            min_profile: 1,
            min_targets_per_author: 1,
            max_targets_per_author: Some(1),
            ..Self::multistage()
        }
    }

    /// The preset of a task: [`ratings`](Self::ratings) for LaMP-3, [`news`](Self::news) for
    /// LaMP-4, [`multistage`](Self::multistage) otherwise.
    ///
    /// ```
    /// use pgraphrag_corpora::lamp::BuildOptions;
    /// assert_eq!(BuildOptions::for_task(pgraphrag_core::LampTask::Lamp3).max_targets_per_author, Some(1));
    /// ```
    pub fn for_task(task: LampTask) -> Self {
        match task {
            LampTask::Lamp3 => Self::ratings(),
            LampTask::Lamp4 => Self::news(),
            _ => Self::multistage(),
        }
    }

    pub(crate) fn check(&self) -> Result<()> {
        let r = self.split;
        if u64::from(r.train) + u64::from(r.dev) + u64::from(r.test) == 0 {
            return Err(Error::Options("the split weights are all 0".into()));
        }
        if self.max_targets_per_author == Some(0) {
            return Err(Error::Options(
                "max_targets_per_author must be at least 1".into(),
            ));
        }
        if let Some(m) = self.max_profile
            && m < self.min_profile.max(1)
        {
            return Err(Error::Options(format!(
                "max_profile {m} is below min_profile {} (or 1)",
                self.min_profile
            )));
        }
        Ok(())
    }
}

impl Default for BuildOptions {
    fn default() -> Self {
        Self::multistage()
    }
}

/// The questions and gold outputs of one part of a build, in the same order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LampSet {
    /// The questions (`*_questions.json`).
    pub questions: Vec<LampQuestion>,
    /// The gold outputs (`*_outputs.json`), one per question, same order.
    pub golds: Vec<LampGold>,
}

/// Counts of one part: distinct users, questions, the median profile size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SetStats {
    /// Distinct users (question `user_id`s).
    pub users: usize,
    /// Questions.
    pub questions: usize,
    /// The median number of profile items per question (0 when there are none).
    pub median_profile: f64,
}

impl LampSet {
    /// The set's counts.
    ///
    /// ```
    /// let s = pgraphrag_corpora::lamp::LampSet::default().stats();
    /// assert_eq!((s.users, s.questions, s.median_profile), (0, 0, 0.0));
    /// ```
    pub fn stats(&self) -> SetStats {
        let users: BTreeSet<&str> = self
            .questions
            .iter()
            .filter_map(|q| q.user_id.as_deref())
            .collect();
        let mut sizes: Vec<usize> = self.questions.iter().map(|q| q.profile.len()).collect();
        sizes.sort_unstable();
        let median_profile = match sizes.len() {
            0 => 0.0,
            n if n % 2 == 1 => sizes[n / 2] as f64,
            n => (sizes[n / 2 - 1] + sizes[n / 2]) as f64 / 2.0,
        };
        SetStats {
            users: users.len(),
            questions: sizes.len(),
            median_profile,
        }
    }
}

/// A built task: its three parts and the report of what became a question (kept) and what
/// did not (skipped, by reason).
#[derive(Debug, Clone, PartialEq)]
pub struct LampBuild {
    /// The task.
    pub task: LampTask,
    /// Training users' questions.
    pub train: LampSet,
    /// Validation users' questions.
    pub dev: LampSet,
    /// Test users' questions.
    pub test: LampSet,
    /// Questions made (kept) and candidates left out, by reason.
    pub report: Report,
}

impl LampBuild {
    /// An empty build of `task` carrying `report`.
    pub(crate) fn empty(task: LampTask, report: Report) -> Self {
        LampBuild {
            task,
            train: LampSet::default(),
            dev: LampSet::default(),
            test: LampSet::default(),
            report,
        }
    }

    /// A part by name, to fill.
    pub(crate) fn set_mut(&mut self, part: SplitName) -> &mut LampSet {
        match part {
            SplitName::Train => &mut self.train,
            SplitName::Dev => &mut self.dev,
            SplitName::Test => &mut self.test,
        }
    }

    /// A part by name.
    pub fn set(&self, part: SplitName) -> &LampSet {
        match part {
            SplitName::Train => &self.train,
            SplitName::Dev => &self.dev,
            SplitName::Test => &self.test,
        }
    }

    /// Writes the build in LaMP's file layout into the existing folder `dir`:
    /// `{train,dev,test}_questions.json` and `{train,dev,test}_outputs.json`, through
    /// `pgraphrag_data::lamp`'s writers (atomic, LaMP's exact format). Returns the paths written.
    ///
    /// ```
    /// # use pgraphrag_corpora::{lamp::*, Report};
    /// let dir = tempfile::tempdir().unwrap();
    /// let b = LampBuild { task: pgraphrag_core::LampTask::Lamp4, train: LampSet::default(),
    ///     dev: LampSet::default(), test: LampSet::default(), report: Report::default() };
    /// let written = b.write(dir.path()).unwrap();
    /// assert_eq!(written.len(), 6);
    /// assert_eq!(std::fs::read_to_string(dir.path().join("dev_outputs.json")).unwrap(),
    ///            r#"{"task": "LaMP_4", "golds": []}"#);
    /// ```
    pub fn write(&self, dir: &std::path::Path) -> Result<Vec<std::path::PathBuf>> {
        let mut written = Vec::with_capacity(6);
        for part in SplitName::ALL {
            let set = self.set(part);
            let q = dir.join(format!("{part}_questions.json"));
            pgraphrag_data::lamp::write_questions(&q, &set.questions)?;
            let o = dir.join(format!("{part}_outputs.json"));
            pgraphrag_data::lamp::write_outputs(&o, self.task, &set.golds)?;
            written.extend([q, o]);
        }
        Ok(written)
    }

    /// The counts as a Markdown table: one row per part, `| task | split | users | questions
    /// | median profile |`.
    ///
    /// ```
    /// # use pgraphrag_corpora::{lamp::*, Report};
    /// let b = LampBuild { task: pgraphrag_core::LampTask::Lamp6, train: LampSet::default(),
    ///     dev: LampSet::default(), test: LampSet::default(), report: Report::default() };
    /// assert!(b.stats_table().contains("| LaMP-6 | dev | 0 | 0 | 0 |"));
    /// ```
    pub fn stats_table(&self) -> String {
        let mut s = String::from(
            "| task | split | users | questions | median profile |\n|---|---|---|---|---|\n",
        );
        for part in SplitName::ALL {
            let st = self.set(part).stats();
            s.push_str(&format!(
                "| {} | {part} | {} | {} | {} |\n",
                self.task, st.users, st.questions, st.median_profile
            ));
        }
        s
    }
}

/// Splits per-user questions into the three parts: users in sorted order, each user's
/// questions in the order given.
pub(crate) fn assemble(
    task: LampTask,
    per_user: BTreeMap<String, Vec<(LampQuestion, LampGold)>>,
    opts: &BuildOptions,
    report: Report,
) -> LampBuild {
    let users: Vec<String> = per_user.keys().cloned().collect();
    let parts = split_users(&users, opts.split, opts.seed);
    let mut build = LampBuild::empty(task, report);
    for (user, qs) in per_user {
        let set = build.set_mut(parts.get(&user).copied().unwrap_or(SplitName::Train));
        let n = qs.len();
        for (q, g) in qs {
            set.questions.push(q);
            set.golds.push(g);
        }
        build.report.kept += n;
    }
    build
}
