//! What a converter or builder kept and what it skipped, and why.
use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;

/// Why a record was skipped. Converters skip records they cannot read faithfully; builders skip
/// documents and authors that fail the task's rules. Never a panic, never a silent drop.
///
/// ```
/// assert_eq!(pgraphrag_corpora::Skip::NoDate.to_string(), "no Date: header");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Skip {
    /// A record file that is not a SpamAssassin JSON record.
    BadRecord,
    /// A mail mailparse cannot parse.
    MalformedMail,
    /// No usable `From:` address.
    NoSender,
    /// No `Date:` header.
    NoDate,
    /// A `Date:` that gives no time from 1980 to 2100, or an unreadable publish date.
    BadDate,
    /// A mail with no `text/plain` part (HTML only, or attachments only).
    NoTextPart,
    /// Bytes that do not decode in the declared charset (U+FFFD in the subject or body).
    Undecodable,
    /// An automated sender: feeds, bug trackers, CVS commits, newsletters, list robots.
    AutomatedSender,
    /// A reply (`In-Reply-To:` or a `Re:` subject), when replies are dropped.
    Reply,
    /// Nothing left of the body after quotes and signatures are removed.
    EmptyBody,
    /// No title (subject or headline).
    NoTitle,
    /// A CSV or TSV row that cannot be read (wrong field count, bad UTF-8).
    BadRow,
    /// A retweet (`RT @`): not the account's own text.
    Retweet,
    /// A tweet or rating with an id or value that cannot be read.
    BadValue,
    /// The same text again from the same author (the multistage paper's de-duplication).
    Duplicate,
    /// A rating that is not an integer from 1 to 5.
    BadRating,
    /// Fewer earlier documents than the minimum profile size.
    TooFewEarlier,
    /// Shorter than the minimum target length (not a target; it stays in later profiles).
    TooShort,
    /// A target of an author with fewer targets than the minimum per author.
    AuthorTooFewTargets,
    /// A target beyond the cap per author.
    OverCap,
    /// A user id seen before in the same split file.
    DuplicateUser,
    /// A profile review without text or without a rating from 1 to 5 (left out of the profile;
    /// the question stays).
    BadProfileItem,
}

impl Skip {
    /// A short description.
    ///
    /// ```
    /// assert_eq!(pgraphrag_corpora::Skip::OverCap.as_str(), "over the cap of targets per author");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Skip::BadRecord => "not a SpamAssassin record",
            Skip::MalformedMail => "malformed mail",
            Skip::NoSender => "no From: address",
            Skip::NoDate => "no Date: header",
            Skip::BadDate => "unreadable date",
            Skip::NoTextPart => "no text/plain part",
            Skip::Undecodable => "undecodable bytes",
            Skip::AutomatedSender => "automated sender",
            Skip::Reply => "reply",
            Skip::EmptyBody => "empty body after cleaning",
            Skip::NoTitle => "no title",
            Skip::BadRow => "unreadable row",
            Skip::Retweet => "retweet",
            Skip::BadValue => "unreadable id or value",
            Skip::Duplicate => "duplicate text of the same author",
            Skip::BadRating => "rating not an integer 1-5",
            Skip::TooFewEarlier => "too few earlier documents",
            Skip::TooShort => "too short to be a target",
            Skip::AuthorTooFewTargets => "author with too few targets",
            Skip::OverCap => "over the cap of targets per author",
            Skip::DuplicateUser => "duplicate user id",
            Skip::BadProfileItem => "profile item without text or rating",
        }
    }
}

impl fmt::Display for Skip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Counts of what was kept and what was skipped, by reason.
///
/// ```
/// use pgraphrag_corpora::{Report, Skip};
/// let mut r = Report::default();
/// r.keep();
/// r.skip(Skip::NoDate);
/// r.skip(Skip::NoDate);
/// assert_eq!((r.kept, r.skipped_total()), (1, 2));
/// assert_eq!(r.to_string(), "kept 1, skipped 2 (no Date: header 2)");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Report {
    /// Records kept.
    pub kept: usize,
    /// Records skipped, by reason.
    pub skipped: BTreeMap<Skip, usize>,
}

impl Report {
    /// Counts one kept record.
    pub fn keep(&mut self) {
        self.kept += 1;
    }

    /// Counts one skipped record.
    pub fn skip(&mut self, why: Skip) {
        self.skip_n(why, 1);
    }

    /// Counts `n` skipped records.
    pub fn skip_n(&mut self, why: Skip, n: usize) {
        if n > 0 {
            *self.skipped.entry(why).or_default() += n;
        }
    }

    /// How many records were skipped in all.
    pub fn skipped_total(&self) -> usize {
        self.skipped.values().sum()
    }

    /// How many were skipped for one reason.
    ///
    /// ```
    /// assert_eq!(pgraphrag_corpora::Report::default().count(pgraphrag_corpora::Skip::Retweet), 0);
    /// ```
    pub fn count(&self, why: Skip) -> usize {
        self.skipped.get(&why).copied().unwrap_or(0)
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "kept {}, skipped {}", self.kept, self.skipped_total())?;
        if !self.skipped.is_empty() {
            let parts: Vec<String> = self
                .skipped
                .iter()
                .map(|(k, n)| format!("{k} {n}"))
                .collect();
            write!(f, " ({})", parts.join(", "))?;
        }
        Ok(())
    }
}
