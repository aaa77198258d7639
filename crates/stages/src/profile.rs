//! From a LaMP profile to the entry texts a summarizer reads: one text per item, in the order
//! the fitting rule keeps them, and the hash that says whether a profile changed.
use std::cmp::Reverse;

use pgraphrag_core::{LampProfileItem, LampQuestion, LampTask};
use sha2::{Digest, Sha256};

use crate::{Error, Result};

/// The version of [`render_entry`]'s texts; part of every
/// [`SummaryPrompt::version`](crate::SummaryPrompt::version). Bump it when a rendering changes.
pub const RENDER_VERSION: &str = "entries-1";

/// The labelled fields of one task's entry, in the order they are written.
fn labels(task: LampTask) -> &'static [(&'static str, &'static str)] {
    match task {
        LampTask::Lamp1 | LampTask::Lamp5 => &[("title", "Title"), ("abstract", "Abstract")],
        LampTask::Lamp2 => &[("description", "Description"), ("tag", "Tag")],
        LampTask::Lamp2Old => &[
            ("title", "Title"),
            ("category", "Category"),
            ("text", "Article"),
        ],
        LampTask::Lamp3 => &[("score", "Score"), ("text", "Review")],
        LampTask::Lamp4 => &[("title", "Headline"), ("text", "Article")],
        LampTask::Lamp6 => &[("title", "Subject"), ("text", "Email")],
        LampTask::Lamp7 => &[("text", "Tweet")],
    }
}

/// How profile items are written for the summarizer: one `Label: value` line per field, in
/// order, each value trimmed of surrounding whitespace ([`RENDER_VERSION`]).
/// [`EntryFormat::task`] gives a LaMP task's fields ([`render_entry`] lists them);
/// [`EntryFormat::PRODUCT_REVIEW`] writes the reviews of a product (the cold-start item
/// summaries of `pgraphrag_eval::cold_start`); [`EntryFormat::new`] takes any fields.
///
/// ```
/// use pgraphrag_core::{LampProfileItem, LampTask};
/// use pgraphrag_stages::EntryFormat;
/// let review = LampProfileItem::new("9").with("title", "Great").with("text", "Works.").with("score", "5");
/// assert_eq!(
///     EntryFormat::PRODUCT_REVIEW.render(&review).unwrap(),
///     "Review title: Great\nReview text: Works.\nRating: 5"
/// );
/// assert_eq!(EntryFormat::task(LampTask::Lamp3).render(&review).unwrap(), "Score: 5\nReview: Works.");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryFormat {
    name: &'static str,
    fields: &'static [(&'static str, &'static str)],
}

impl EntryFormat {
    /// A product's reviews: `Review title`, `Review text`, `Rating` from the fields `title`,
    /// `text` and `score`.
    pub const PRODUCT_REVIEW: EntryFormat = EntryFormat::new(
        "product-review",
        &[
            ("title", "Review title"),
            ("text", "Review text"),
            ("score", "Rating"),
        ],
    );

    /// A format named `name` (in errors) writing `fields` as `(field, label)` pairs.
    ///
    /// ```
    /// let f = pgraphrag_stages::EntryFormat::new("quote", &[("text", "Quote")]);
    /// assert_eq!(f.name(), "quote");
    /// ```
    pub const fn new(name: &'static str, fields: &'static [(&'static str, &'static str)]) -> Self {
        EntryFormat { name, fields }
    }

    /// The format of a LaMP task's profile items.
    ///
    /// ```
    /// let f = pgraphrag_stages::EntryFormat::task(pgraphrag_core::LampTask::Lamp7);
    /// assert_eq!(f.name(), "LaMP-7");
    /// ```
    pub fn task(task: LampTask) -> Self {
        EntryFormat::new(task.as_str(), labels(task))
    }

    /// The format's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// One item as the summarizer reads it. An item without one of the fields is an
    /// [`Error::MissingField`] naming it.
    pub fn render(&self, item: &LampProfileItem) -> Result<String> {
        let mut out = String::new();
        for (field, label) in self.fields {
            let value = item.get(field).ok_or_else(|| Error::MissingField {
                item: item.id.clone(),
                field,
                format: self.name,
                expected: self
                    .fields
                    .iter()
                    .map(|f| f.0)
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(label);
            out.push_str(": ");
            out.push_str(value.trim());
        }
        Ok(out)
    }

    /// The profile's entries, rendered and in fitting order ([`priority_order`]).
    pub fn render_profile(&self, items: &[LampProfileItem]) -> Result<Vec<String>> {
        priority_order(items)
            .into_iter()
            .map(|i| self.render(&items[i]))
            .collect()
    }
}

/// One profile item as the summarizer reads it for `task` ([`EntryFormat::task`]):
///
/// | task | entry |
/// |---|---|
/// | LaMP-1, LaMP-5 | `Title: …` / `Abstract: …` |
/// | LaMP-2 (movies) | `Description: …` / `Tag: …` |
/// | LaMP-2-old (news) | `Title: …` / `Category: …` / `Article: …` |
/// | LaMP-3 | `Score: …` / `Review: …` |
/// | LaMP-4 | `Headline: …` / `Article: …` |
/// | LaMP-6 | `Subject: …` / `Email: …` |
/// | LaMP-7 | `Tweet: …` |
///
/// An item without one of its task's fields is an [`Error::MissingField`] naming it.
///
/// ```
/// use pgraphrag_core::{LampProfileItem, LampTask};
/// use pgraphrag_stages::render_entry;
/// let item = LampProfileItem::new("7").with("text", " Loved it ").with("score", "5");
/// assert_eq!(render_entry(LampTask::Lamp3, &item).unwrap(), "Score: 5\nReview: Loved it");
/// let e = render_entry(LampTask::Lamp4, &item).unwrap_err();
/// assert!(e.to_string().contains("profile item \"7\" has no field `title`"));
/// ```
pub fn render_entry(task: LampTask, item: &LampProfileItem) -> Result<String> {
    EntryFormat::task(task).render(item)
}

/// The order in which the fitting rule keeps items: dated items first, most recent first
/// (dates compared as text, which orders LaMP's `YYYY-MM-DD` by time), then undated items;
/// items with equal dates, and undated items, keep their profile order.
///
/// ```
/// use pgraphrag_core::LampProfileItem;
/// let items = [
///     LampProfileItem::new("a"),
///     LampProfileItem::new("b").dated("2019-01-02"),
///     LampProfileItem::new("c").dated("2021-05-01"),
///     LampProfileItem::new("d"),
/// ];
/// assert_eq!(pgraphrag_stages::priority_order(&items), vec![2, 1, 0, 3]);
/// ```
pub fn priority_order(items: &[LampProfileItem]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by_key(|&i| {
        let d = items[i].date.as_deref();
        (d.is_none(), Reverse(d))
    });
    order
}

/// The profile's entries for `task`, rendered ([`render_entry`]) and in fitting order
/// ([`priority_order`]).
///
/// ```
/// use pgraphrag_core::{LampProfileItem, LampTask};
/// let items = [
///     LampProfileItem::new("a").with("text", "old").dated("2010-01-01"),
///     LampProfileItem::new("b").with("text", "new").dated("2012-01-01"),
/// ];
/// let entries = pgraphrag_stages::render_profile(LampTask::Lamp7, &items).unwrap();
/// assert_eq!(entries, ["Tweet: new", "Tweet: old"]);
/// ```
pub fn render_profile(task: LampTask, items: &[LampProfileItem]) -> Result<Vec<String>> {
    EntryFormat::task(task).render_profile(items)
}

/// The SHA-256 (hex) of the profile as canonical JSON (items in profile order, each with its id,
/// date and fields): any change to any item, or to their order, changes it.
///
/// ```
/// use pgraphrag_core::LampProfileItem;
/// use pgraphrag_stages::profile_hash;
/// let a = [LampProfileItem::new("1").with("text", "hi")];
/// let b = [LampProfileItem::new("1").with("text", "hi!")];
/// assert_eq!(profile_hash(&a).len(), 64);
/// assert_ne!(profile_hash(&a), profile_hash(&b));
/// assert_eq!(profile_hash(&a), profile_hash(&a.clone()));
/// ```
pub fn profile_hash(items: &[LampProfileItem]) -> String {
    let mut h = Sha256::new();
    // Serializing strings and string maps cannot fail; fall back to the debug form regardless.
    match serde_json::to_vec(items) {
        Ok(json) => h.update(&json),
        Err(_) => h.update(format!("{items:?}").as_bytes()),
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The user a question's profile belongs to: its `user_id` when the file has one (LaMP's
/// time-based split), else its question `id` (in the user-based split every question is its
/// own user). Summaries are stored and exported under this key.
///
/// ```
/// use pgraphrag_core::LampQuestion;
/// let mut q = LampQuestion::new("q1", "x");
/// assert_eq!(pgraphrag_stages::user_key(&q), "q1");
/// q.user_id = Some("u9".into());
/// assert_eq!(pgraphrag_stages::user_key(&q), "u9");
/// ```
pub fn user_key(question: &LampQuestion) -> &str {
    question.summary_key(pgraphrag_core::SummaryScope::User)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_task_renders_its_profile_fields() {
        for task in LampTask::ALL {
            let mut item = LampProfileItem::new("x");
            for f in task.profile_fields() {
                item = item.with(*f, format!("v-{f}"));
            }
            let text = render_entry(task, &item).unwrap();
            for f in task.profile_fields() {
                assert!(text.contains(&format!("v-{f}")), "{task}: {text}");
            }
            assert_eq!(text.lines().count(), task.profile_fields().len(), "{task}");
        }
    }

    #[test]
    fn all_undated_keeps_profile_order() {
        let items: Vec<_> = (0..5)
            .map(|i| LampProfileItem::new(i.to_string()))
            .collect();
        assert_eq!(priority_order(&items), vec![0, 1, 2, 3, 4]);
        let dated: Vec<_> = ["2001-01-01", "2003-01-01", "2003-01-01", "2002-01-01"]
            .iter()
            .enumerate()
            .map(|(i, d)| LampProfileItem::new(i.to_string()).dated(*d))
            .collect();
        assert_eq!(priority_order(&dated), vec![1, 2, 3, 0]);
    }
}
