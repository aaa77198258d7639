//! The time-ordered builders: LaMP-4 and LaMP-6 from authored documents, and the selection
//! engine ([`select`]) that LaMP-3 from MovieLens and the multistage examples
//! ([`crate::multistage`]) share with them.
use std::collections::{BTreeMap, HashSet};

use pgraphrag_core::{LampGold, LampProfileItem, LampQuestion, LampTask};
use pgraphrag_text::py::Random;

use super::build::{BuildOptions, LampBuild, SplitName, split_users};
use crate::{AuthoredDoc, Error, Report, Result, Skip, ymd};

/// One candidate document of a time-ordered build.
pub(crate) struct Timed {
    pub id: String,
    pub author: String,
    pub time: i64,
    /// The question's text (article, body, movie description).
    pub text: String,
    /// The gold output (title, subject, rating).
    pub label: String,
}

/// The profile-item fields of a document: `(title, text)` for LaMP-4/6, `(text, score)` for
/// LaMP-3.
fn item(task: LampTask, d: &Timed) -> LampProfileItem {
    let it = LampProfileItem::new(d.id.clone()).dated(ymd(d.time));
    match task {
        LampTask::Lamp3 => it
            .with("text", d.text.clone())
            .with("score", d.label.clone()),
        _ => it
            .with("title", d.label.clone())
            .with("text", d.text.clone()),
    }
}

/// What the selection engine reads of a candidate document.
pub(crate) trait Dated {
    /// The document id, unique in the input.
    fn id(&self) -> &str;
    /// The author.
    fn author(&self) -> &str;
    /// When, in unix seconds (or any order key).
    fn time(&self) -> i64;
    /// The text the rules read: its length (`min_target_chars`) and, trimmed, its identity
    /// (the per-author de-duplication).
    fn text(&self) -> &str;
}

impl Dated for Timed {
    fn id(&self) -> &str {
        &self.id
    }
    fn author(&self) -> &str {
        &self.author
    }
    fn time(&self) -> i64 {
        self.time
    }
    fn text(&self) -> &str {
        &self.text
    }
}

impl Dated for &AuthoredDoc {
    fn id(&self) -> &str {
        &self.doc_id
    }
    fn author(&self) -> &str {
        &self.author
    }
    fn time(&self) -> i64 {
        self.time
    }
    fn text(&self) -> &str {
        &self.text
    }
}

/// One target of a selection: its index in the author's documents and the indices of its
/// profile (strictly earlier documents, the most recent `max_profile` of them).
pub(crate) struct Target {
    /// Index of the target in [`Selected::docs`].
    pub index: usize,
    /// Indices of its profile in [`Selected::docs`], in time order.
    pub profile: std::ops::Range<usize>,
}

/// One author's part of a selection.
pub(crate) struct Selected<T> {
    /// The author.
    pub author: String,
    /// The author's part of the user split.
    pub part: SplitName,
    /// The author's documents: time order `(time, id)`, identical texts removed.
    pub docs: Vec<T>,
    /// The targets, in time order (capped).
    pub targets: Vec<Target>,
}

/// The selection engine of every time-ordered build (LaMP-3 from MovieLens, LaMP-4, LaMP-6,
/// the multistage examples): unique ids, per-author time order `(time, id)`, per-author
/// de-duplication of identical (trimmed) texts (the earliest kept), targets by the options'
/// rules (length, strictly earlier documents), authors with too few targets left out, targets
/// beyond the cap drawn by `random.Random(seed + 1).sample` in author order, profiles of
/// strictly earlier documents, a seeded split of the authors that keep targets. Authors come
/// out sorted; every document that is not a target is counted in `report` by reason.
pub(crate) fn select<T: Dated>(
    docs: Vec<T>,
    opts: &BuildOptions,
    report: &mut Report,
) -> Result<Vec<Selected<T>>> {
    opts.check()?;
    let mut seen = HashSet::with_capacity(docs.len());
    for d in &docs {
        if !seen.insert(d.id()) {
            return Err(Error::DuplicateDocId {
                doc_id: d.id().to_string(),
            });
        }
    }
    drop(seen);
    let mut by_author: BTreeMap<String, Vec<T>> = BTreeMap::new();
    for d in docs {
        by_author.entry(d.author().to_string()).or_default().push(d);
    }
    let mut rng = Random::new(opts.seed.wrapping_add(1));
    let mut selected = Vec::new();
    for (author, mut ds) in by_author {
        ds.sort_by(|a, b| (a.time(), a.id()).cmp(&(b.time(), b.id())));
        let mut texts = HashSet::new();
        let before = ds.len();
        ds.retain(|d| texts.insert(d.text().trim().to_string()));
        report.skip_n(Skip::Duplicate, before - ds.len());
        let mut targets = Vec::new();
        for (i, d) in ds.iter().enumerate() {
            let earlier = ds[..i].partition_point(|e| e.time() < d.time());
            if d.text().chars().count() < opts.min_target_chars {
                report.skip(Skip::TooShort);
            } else if earlier < opts.min_profile {
                report.skip(Skip::TooFewEarlier);
            } else {
                targets.push((i, earlier));
            }
        }
        if targets.len() < opts.min_targets_per_author || targets.is_empty() {
            report.skip_n(Skip::AuthorTooFewTargets, targets.len());
            continue;
        }
        if let Some(cap) = opts.max_targets_per_author
            && targets.len() > cap
        {
            let mut pick = rng.sample(targets.len(), cap).unwrap_or_default();
            pick.sort_unstable();
            report.skip_n(Skip::OverCap, targets.len() - pick.len());
            targets = pick.into_iter().map(|k| targets[k]).collect();
        }
        let targets = targets
            .into_iter()
            .map(|(index, earlier)| Target {
                index,
                profile: opts.max_profile.map_or(0, |m| earlier.saturating_sub(m))..earlier,
            })
            .collect();
        selected.push(Selected {
            author,
            part: SplitName::Train,
            docs: ds,
            targets,
        });
    }
    let users: Vec<String> = selected.iter().map(|s| s.author.clone()).collect();
    let parts = split_users(&users, opts.split, opts.seed);
    for s in &mut selected {
        s.part = parts.get(&s.author).copied().unwrap_or(SplitName::Train);
    }
    Ok(selected)
}

/// The LaMP build of a selection: one question per target, its profile items of the task's
/// fields, each user in their part.
pub(crate) fn build_timed(
    task: LampTask,
    docs: Vec<Timed>,
    opts: &BuildOptions,
    mut report: Report,
) -> Result<LampBuild> {
    let selected = select(docs, opts, &mut report)?;
    let mut build = LampBuild::empty(task, report);
    for s in selected {
        let set = build.set_mut(s.part);
        for t in &s.targets {
            let d = &s.docs[t.index];
            let profile = s.docs[t.profile.clone()]
                .iter()
                .map(|p| item(task, p))
                .collect();
            let mut q = LampQuestion::new(
                d.id.clone(),
                super::input(task, &d.text).unwrap_or_default(),
            )
            .with_profile(profile);
            q.user_id = Some(s.author.clone());
            set.questions.push(q);
            set.golds.push(LampGold {
                id: d.id.clone(),
                output: d.label.clone(),
            });
        }
        build.report.kept += s.targets.len();
    }
    Ok(build)
}

fn titled(task: LampTask, docs: &[AuthoredDoc], opts: &BuildOptions) -> Result<LampBuild> {
    let mut report = Report::default();
    let timed = docs
        .iter()
        .filter_map(|d| match d.title.as_deref().map(str::trim) {
            Some(t) if !t.is_empty() && !d.text.trim().is_empty() => Some(Timed {
                id: d.doc_id.clone(),
                author: d.author.clone(),
                time: d.time,
                text: d.text.clone(),
                label: t.to_string(),
            }),
            _ => {
                report.skip(Skip::NoTitle);
                None
            }
        })
        .collect();
    build_timed(task, timed, opts, report)
}

/// LaMP-4, news headline generation: one question per target article of an outlet, input
/// `Generate a headline for the following article: {text}`, output the headline, profile the
/// outlet's earlier articles as `{id, date, title, text}`. Documents without a title (or
/// with an empty text) are left out. Default options: [`BuildOptions::news`].
///
/// ```
/// use pgraphrag_corpora::{AuthoredDoc, lamp::{lamp4, BuildOptions}};
/// let docs: Vec<AuthoredDoc> = (0..6).map(|i| AuthoredDoc { author: "bbc.co.uk".into(),
///     doc_id: format!("news/{i}"), time: i * 86_400, title: Some(format!("Headline {i}")),
///     text: format!("Article number {i}.") }).collect();
/// let opts = BuildOptions { min_target_chars: 0, min_targets_per_author: 1, ..BuildOptions::news() };
/// let b = lamp4(&docs, &opts).unwrap();
/// let q = &b.train.questions[0];
/// assert_eq!((q.id.as_str(), q.profile.len()), ("news/2", 2));
/// assert_eq!(q.input, "Generate a headline for the following article: Article number 2.");
/// assert_eq!(q.profile[1].date.as_deref(), Some("1970-01-02"));
/// assert_eq!(b.train.golds[0].output, "Headline 2");
/// ```
pub fn lamp4(docs: &[AuthoredDoc], opts: &BuildOptions) -> Result<LampBuild> {
    titled(LampTask::Lamp4, docs, opts)
}

/// LaMP-6, email subject generation: one question per target mail of a sender, input
/// `Generate a subject for the following email: {text}`, output the subject, profile the
/// sender's earlier mails as `{id, date, title, text}`. Mails without a subject are left
/// out. Default options: [`BuildOptions::multistage`].
///
/// ```
/// use pgraphrag_corpora::{AuthoredDoc, lamp::{lamp6, BuildOptions}};
/// let docs: Vec<AuthoredDoc> = (0..10).map(|i| AuthoredDoc { author: format!("u{}@x.org", i % 2),
///     doc_id: format!("m{i}"), time: i, title: Some(format!("Subject {i}")),
///     text: "word ".repeat(70) + &i.to_string() }).collect();
/// let b = lamp6(&docs, &BuildOptions { min_targets_per_author: 3, ..BuildOptions::multistage() }).unwrap();
/// assert_eq!(b.report.kept, 6); // 3 targets each: the first two mails of a sender have no history
/// ```
pub fn lamp6(docs: &[AuthoredDoc], opts: &BuildOptions) -> Result<LampBuild> {
    titled(LampTask::Lamp6, docs, opts)
}
