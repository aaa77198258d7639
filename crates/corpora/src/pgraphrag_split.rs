//! PGraphRAG's review splits (`{amazon,b2w,gap,hotel}_{dev,test}.json`) as authored
//! documents: each user's reviews, in profile order.
//!
//! The splits carry no time for a review: a review is `{title, text, rating, pid}` (see
//! `pgraphrag_data::SplitReview`). The profile order stands in for time: a review's `time` is
//! its index in the user's profile (`profile[0]`, PGraphRAG's target review, is 0), so
//! "earlier" means "earlier in the user's profile list".
use std::path::Path;

use pgraphrag_data::Split;

use crate::{AuthoredDoc, Converted, Error, Report, Result, Skip};

/// A split's reviews as [`AuthoredDoc`]s: author the user id, `doc_id`
/// `{name}/{user}-{index}`, `time` the review's index in the profile (the splits have no
/// dates), title the review title (`None` when missing or blank), text the review text.
/// Reviews without text are skipped ([`Skip::EmptyBody`]), as are all reviews of a user id
/// seen before in the file ([`Skip::DuplicateUser`]); the report counts reviews.
///
/// ```
/// use pgraphrag_corpora::convert_pgraphrag_split;
/// let json = br#"[{"id": "u1", "profile": [{"title": "Good", "text": "I like it.", "rating": 5, "pid": "p1"},
///                                          {"title": "", "text": "", "rating": 1, "pid": "p2"},
///                                          {"title": "", "text": "Meh.", "rating": 3, "pid": "p3"}]}]"#;
/// let split = pgraphrag_data::parse_split(json, "x_dev.json").unwrap();
/// let c = convert_pgraphrag_split(&split, "x_dev");
/// assert_eq!(c.docs.len(), 2);
/// assert_eq!((c.docs[1].doc_id.as_str(), c.docs[1].time, c.docs[1].title.as_deref()), ("x_dev/u1-2", 2, None));
/// assert_eq!(c.docs[0].title.as_deref(), Some("Good"));
/// assert_eq!(c.report.to_string(), "kept 2, skipped 1 (empty body after cleaning 1)");
/// ```
pub fn convert_pgraphrag_split(split: &Split, name: &str) -> Converted {
    let mut report = Report::default();
    let mut docs = Vec::new();
    for (user, earlier) in split.users.iter().zip(split.repeated_ids()) {
        if earlier.is_some() {
            report.skip_n(Skip::DuplicateUser, user.profile.len());
            continue;
        }
        for (i, r) in user.profile.iter().enumerate() {
            let text = r.text.as_deref().unwrap_or("");
            if text.trim().is_empty() {
                report.skip(Skip::EmptyBody);
                continue;
            }
            report.keep();
            docs.push(AuthoredDoc {
                author: user.id.clone(),
                doc_id: format!("{name}/{}-{i}", user.id),
                time: i as i64,
                title: r
                    .title
                    .as_deref()
                    .map(str::trim)
                    .filter(|t| !t.is_empty())
                    .map(str::to_string),
                text: text.to_string(),
            });
        }
    }
    Converted { docs, report }
}

/// [`convert_pgraphrag_split`] of the split file at `path`, named by its file stem
/// (`amazon_dev`). Errors: the file cannot be read or is not a PGraphRAG split
/// ([`Error::Split`], whose source names the file and the record).
///
/// ```
/// let e = pgraphrag_corpora::convert_pgraphrag_split_file("no/such/amazon_dev.json").unwrap_err();
/// assert!(matches!(e, pgraphrag_corpora::Error::Split { .. }));
/// ```
pub fn convert_pgraphrag_split_file(path: impl AsRef<Path>) -> Result<Converted> {
    let path = path.as_ref();
    let split = pgraphrag_data::load_split(path).map_err(|source| Error::Split { source })?;
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "split".into());
    Ok(convert_pgraphrag_split(&split, &name))
}
