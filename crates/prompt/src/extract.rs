//! Answer extraction from raw generations, as `master_eval.py`'s `extract_prediction`,
//! and a documented rating parser.
//!
//! `extract_prediction` uses Python's `s.split(marker)[1]`, which is the text between the
//! **first** occurrence of the marker and the **next** one (or the end), and
//! `rsplit('"', 1)[0]`, everything before the last double quote. Both are reproduced
//! exactly, including `str.strip()`.
//!
//! **The typo.** The released code checks `'**Review title:** ""' in pred` (and the same
//! for `**Review rating:**`): the doubled quote means the Markdown-bold branch never fires
//! for an ordinary answer like `**Review title:** "Great"`. [`ExtractOptions::default`]
//! fixes it (checks `**Review title:** "`); [`ExtractOptions::reference`] keeps it.
//!
//! ```
//! use pgraphrag_prompt::extract::{extract, ExtractOptions};
//! use pgraphrag_prompt::pgraphrag::Task;
//!
//! let out = "**Review title:** \"Love it\"";
//! assert_eq!(extract(out, Task::Title, &ExtractOptions::default()), "Love it");
//! assert_eq!(extract(out, Task::Title, &ExtractOptions::reference()), out);
//! assert_eq!(extract("Review title: Soft and cheap\n", Task::Title, &ExtractOptions::default()), "Soft and cheap");
//! ```
use std::sync::LazyLock;

use pgraphrag_text::py;
use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::pgraphrag::Task;

/// Options of [`extract`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ExtractOptions {
    /// Keep the released code's `'**Review title:** ""'` / `'**Review rating:** ""'` check,
    /// which never matches an ordinary bold answer. Default `false` (fixed).
    pub reference_typo: bool,
}

impl ExtractOptions {
    /// The released code's behaviour, typo included.
    pub fn reference() -> Self {
        ExtractOptions {
            reference_typo: true,
        }
    }
}

static VIDEO_ID: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\[\[VIDEOID:[^\]]*\]\]").expect("static regex"));

/// Python's `s.split(sep)[1]` for a `sep` known to occur in `s`.
fn split1<'a>(s: &'a str, sep: &str) -> &'a str {
    match s.find(sep) {
        Some(i) => {
            let rest = &s[i + sep.len()..];
            match rest.find(sep) {
                Some(j) => &rest[..j],
                None => rest,
            }
        }
        None => s,
    }
}

/// Python's `s.rsplit('"', 1)[0]`.
fn before_last_quote(s: &str) -> &str {
    match s.rfind('"') {
        Some(i) => &s[..i],
        None => s,
    }
}

/// Extracts the answer from a raw generation exactly as `extract_prediction` does.
///
/// * text: remove `[[VIDEOID:…]]`, then the part after `**Review text:** "` (up to the last
///   quote), else after `Review text: "` (up to the last quote), else after `Review text: `,
///   else after `The review text is: "` (up to the last quote), else after
///   `The review text is: `, else the whole string; stripped;
/// * title: after `**Review title:** "` up to the last quote (see [`ExtractOptions`]), else
///   after `Review title: `, else the whole string; stripped;
/// * rating: after `**Review rating:** "` up to the last quote (see [`ExtractOptions`]),
///   else after `Review rating: `, else after `Rating: `, else the whole string; stripped.
///
/// Use [`parse_rating`] on a rating answer to get a number.
pub fn extract(pred: &str, task: Task, opts: &ExtractOptions) -> String {
    let bold_check = |field: &str| {
        if opts.reference_typo {
            format!("**{field}:** \"\"")
        } else {
            format!("**{field}:** \"")
        }
    };
    let out: &str = match task {
        Task::Text => {
            let noid = VIDEO_ID.replace_all(pred, "");
            let noid: &str = &noid;
            let r = if noid.contains("**Review text:** \"") {
                before_last_quote(split1(noid, "**Review text:** \""))
            } else if noid.contains("Review text: \"") {
                before_last_quote(split1(noid, "Review text: \""))
            } else if noid.contains("Review text: ") {
                split1(noid, "Review text: ")
            } else if noid.contains("The review text is: \"") {
                before_last_quote(split1(noid, "The review text is: \""))
            } else if noid.contains("The review text is: ") {
                split1(noid, "The review text is: ")
            } else {
                noid
            };
            return py::strip(r).to_string();
        }
        Task::Title => {
            if pred.contains(&bold_check("Review title")) {
                before_last_quote(split1(pred, "**Review title:** \""))
            } else if pred.contains("Review title: ") {
                split1(pred, "Review title: ")
            } else {
                pred
            }
        }
        Task::Rating => {
            if pred.contains(&bold_check("Review rating")) {
                before_last_quote(split1(pred, "**Review rating:** \""))
            } else if pred.contains("Review rating: ") {
                split1(pred, "Review rating: ")
            } else if pred.contains("Rating: ") {
                split1(pred, "Rating: ")
            } else {
                pred
            }
        }
    };
    py::strip(out).to_string()
}

static FIRST_NUMBER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[-+]?[0-9]+(?:\.[0-9]+)?").expect("static regex"));

/// Parses an extracted rating answer to a number in 1–5.
///
/// Rule: the **first number** in the string (an optional sign, digits, optionally a
/// decimal part: `4`, `4.5`, `-1`) is the rating if it lies in `[1, 5]`; otherwise, or if
/// there is no number, the answer is unparseable and `None` is returned, so the metrics
/// apply LaMP's rule (an unparseable prediction counts as whichever of 1 or 5 is farther
/// from the gold rating). So `"4"`, `"4/5"`, `"4 stars"`, `"**4**"` give 4; `"10/10"`,
/// `"0"`, `"five"` and `""` give `None`.
///
/// PGraphRAG released no rating evaluation; LaMP applies Python's `float()` to the whole
/// answer, which is [`parse_rating_strict`].
///
/// ```
/// use pgraphrag_prompt::extract::parse_rating;
/// assert_eq!(parse_rating("4 out of 5"), Some(4.0));
/// assert_eq!(parse_rating("Rating: 3.5"), Some(3.5));
/// assert_eq!(parse_rating("10/10"), None);
/// assert_eq!(parse_rating("great"), None);
/// ```
pub fn parse_rating(answer: &str) -> Option<f64> {
    let m = FIRST_NUMBER.find(answer)?;
    let x: f64 = m.as_str().parse().ok()?;
    (1.0..=5.0).contains(&x).then_some(x)
}

/// LaMP's rule: the whole stripped answer must parse as a finite float (any value) with
/// Python's `float(answer.strip())` ([`py::float`]); otherwise `None`.
///
/// ```
/// use pgraphrag_prompt::extract::parse_rating_strict;
/// assert_eq!(parse_rating_strict(" 4 "), Some(4.0));
/// assert_eq!(parse_rating_strict("1_0"), Some(10.0));
/// assert_eq!(parse_rating_strict("4 stars"), None);
/// assert_eq!(parse_rating_strict("inf"), None);
/// ```
pub fn parse_rating_strict(answer: &str) -> Option<f64> {
    py::float(py::strip(answer)).ok().filter(|x| x.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_takes_text_between_first_and_second_marker() {
        let s = "Review title: A\nReview title: B";
        assert_eq!(extract(s, Task::Title, &ExtractOptions::default()), "A");
    }

    #[test]
    fn text_quote_branch_stops_at_last_quote() {
        let s = "Review text: \"I \"really\" like it\" (end)";
        assert_eq!(
            extract(s, Task::Text, &ExtractOptions::default()),
            "I \"really\" like it"
        );
        let v = "[[VIDEOID:abc]]Nice one";
        assert_eq!(
            extract(v, Task::Text, &ExtractOptions::default()),
            "Nice one"
        );
    }

    #[test]
    fn rating_markers() {
        let o = ExtractOptions::default();
        assert_eq!(extract("Rating: 4", Task::Rating, &o), "4");
        assert_eq!(extract("Review rating: 2\nok", Task::Rating, &o), "2\nok");
        assert_eq!(extract("**Review rating:** \"5\"", Task::Rating, &o), "5");
        assert_eq!(
            extract(
                "**Review rating:** \"5\"",
                Task::Rating,
                &ExtractOptions::reference()
            ),
            "**Review rating:** \"5\""
        );
    }

    #[test]
    fn rating_parse_bounds() {
        assert_eq!(parse_rating("5"), Some(5.0));
        assert_eq!(parse_rating("1"), Some(1.0));
        assert_eq!(parse_rating("0"), None);
        assert_eq!(parse_rating("-3"), None);
        assert_eq!(parse_rating("6"), None);
        assert_eq!(parse_rating(""), None);
    }
}
