//! The fitting rule: which profile entries a summarizer reads, so that its prompt and its
//! answer fit in the model's context.
//!
//! The budget for the user message is `context − max_new_tokens − reserve` tokens
//! ([`Budget::input_tokens`]), where `reserve` covers what the chat template adds around the
//! message (role markers, a default system prompt). Entries arrive in priority order (most
//! recent first when dated, see [`crate::priority_order`]); the rule then:
//!
//! 1. keeps whole entries, in that order, while the instruction plus the kept entries (each
//!    with its separator) fit the budget, and stops at the first entry that does not fit:
//!    it and every entry after it are dropped, even if a later, shorter one would fit (the
//!    kept entries are always the most recent ones);
//! 2. checks the whole message with one more count (token counts of joined texts need not
//!    add up) and drops kept entries from the end until it fits;
//! 3. when not even the first entry fits whole, keeps the longest prefix of it (cut at a
//!    character boundary, found by binary search on the token count) and drops the rest.
//!
//! Every count is the [`TokenCounter`]'s, so the rule is exact for the counter it is given.
//! The [`FitReport`] says how many entries were kept, dropped and whether one was cut.
use pgraphrag_core::{Error as CoreError, Result as CoreResult, TokenCounter};
use serde::{Deserialize, Serialize};

use crate::prompt::{SEPARATOR, SummaryPrompt};

/// The token budget of one summary: the model's context, the tokens reserved for the answer,
/// and those reserved for the chat template around the user message.
///
/// ```
/// let b = pgraphrag_stages::Budget::paper();
/// assert_eq!((b.context, b.max_new_tokens, b.reserve), (2048, 256, 64));
/// assert_eq!(b.input_tokens(), Some(1728));
/// assert_eq!(pgraphrag_stages::Budget { context: 100, max_new_tokens: 90, reserve: 20 }.input_tokens(), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Budget {
    /// The context window in tokens (Vicuna's, in the paper: 2,048).
    pub context: usize,
    /// The most tokens the summary may have.
    pub max_new_tokens: usize,
    /// Tokens kept free for the chat template's framing of the message.
    pub reserve: usize,
}

impl Budget {
    /// Vicuna's 2,048-token context of the paper, 256 new tokens, 64 reserved for the template.
    pub const fn paper() -> Budget {
        Budget {
            context: 2048,
            max_new_tokens: 256,
            reserve: 64,
        }
    }

    /// Tokens left for the user message (instruction and entries), `None` when the answer and
    /// the reserve alone fill the context.
    pub fn input_tokens(&self) -> Option<usize> {
        self.context
            .checked_sub(self.max_new_tokens)?
            .checked_sub(self.reserve)
            .filter(|&n| n > 0)
    }
}

impl Default for Budget {
    /// [`Budget::paper`].
    fn default() -> Self {
        Budget::paper()
    }
}

/// What the fitting rule did with one user's entries.
///
/// ```
/// let r = pgraphrag_stages::FitReport::all(3);
/// assert_eq!((r.kept, r.dropped, r.truncated), (3, 0, false));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FitReport {
    /// Entries in the prompt (a cut entry counts as kept).
    pub kept: usize,
    /// Entries left out.
    pub dropped: usize,
    /// Whether the one kept entry was cut to fit.
    pub truncated: bool,
}

impl FitReport {
    /// All `n` entries kept whole (for summarizers that read everything).
    pub fn all(n: usize) -> FitReport {
        FitReport {
            kept: n,
            dropped: 0,
            truncated: false,
        }
    }
}

/// The user message the fitting rule chose and its report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fitted {
    /// The user message ([`SummaryPrompt::message`] of the kept entries).
    pub message: String,
    /// Its token count.
    pub tokens: usize,
    /// What was kept and dropped.
    pub report: FitReport,
}

/// Applies the fitting rule (see the [module docs](self)) to `entries`, already in priority
/// order.
///
/// Errors: the counter's, or [`pgraphrag_core::Error::InvalidInput`] when the budget has no
/// room for the instruction itself.
///
/// ```
/// use pgraphrag_core::{Result, TokenCounter};
/// use pgraphrag_stages::{Budget, SummaryPrompt, fit_entries};
/// struct Words;
/// impl TokenCounter for Words {
///     fn count(&self, t: &str) -> Result<usize> { Ok(t.split_whitespace().count()) }
/// }
/// let p = SummaryPrompt::custom("x", "Summarise these.");         // 2 words
/// let budget = Budget { context: 20, max_new_tokens: 10, reserve: 2 }; // 8 words for the message
/// let f = fit_entries(&p, &["Tweet: one two", "Tweet: three four", "Tweet: five"], &Words, &budget).unwrap();
/// assert_eq!(f.message, "Summarise these.\n\nTweet: one two\n\nTweet: three four");
/// assert_eq!((f.report.kept, f.report.dropped, f.report.truncated), (2, 1, false));
/// ```
pub fn fit_entries(
    prompt: &SummaryPrompt,
    entries: &[&str],
    counter: &dyn TokenCounter,
    budget: &Budget,
) -> CoreResult<Fitted> {
    let avail = budget.input_tokens().ok_or_else(|| {
        CoreError::InvalidInput(format!(
            "a context of {} tokens has no room for a prompt after {} new tokens and {} reserved for the chat template",
            budget.context, budget.max_new_tokens, budget.reserve
        ))
    })?;
    let frame = counter.count(prompt.instruction())?;
    if frame > avail {
        return Err(CoreError::InvalidInput(format!(
            "the instruction of prompt {} has {frame} tokens, more than the {avail} the budget leaves for the message",
            prompt.name()
        )));
    }
    // 1. Whole entries while they fit, by per-entry counts.
    let sep = counter.count(SEPARATOR)?;
    let mut used = frame;
    let mut kept = 0;
    for e in entries {
        let c = counter.count(e)? + sep;
        if used + c > avail {
            break;
        }
        used += c;
        kept += 1;
    }
    // 2. The whole message, counted once more.
    while kept > 0 {
        let message = prompt.message(&entries[..kept]);
        let tokens = counter.count(&message)?;
        if tokens <= avail {
            return Ok(Fitted {
                message,
                tokens,
                report: FitReport {
                    kept,
                    dropped: entries.len() - kept,
                    truncated: false,
                },
            });
        }
        kept -= 1;
    }
    let Some(first) = entries.first() else {
        return Ok(Fitted {
            message: prompt.message(&[]),
            tokens: frame,
            report: FitReport::default(),
        });
    };
    // 3. Cut the first entry: the longest prefix (in characters) whose message fits.
    let bounds: Vec<usize> = first
        .char_indices()
        .map(|(i, _)| i)
        .chain([first.len()])
        .collect();
    let (mut lo, mut hi) = (0usize, bounds.len() - 1); // prefix of bounds[lo] bytes fits
    let mut best = (prompt.message(&[]), frame);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        let message = prompt.message(&[&first[..bounds[mid]]]);
        let tokens = counter.count(&message)?;
        if tokens <= avail {
            lo = mid;
            best = (message, tokens);
        } else {
            hi = mid - 1;
        }
    }
    let kept = usize::from(lo > 0);
    Ok(Fitted {
        message: best.0,
        tokens: best.1,
        report: FitReport {
            kept,
            dropped: entries.len() - kept,
            truncated: lo > 0,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One token per character: joined texts add up exactly.
    struct Chars;
    impl TokenCounter for Chars {
        fn count(&self, t: &str) -> CoreResult<usize> {
            Ok(t.chars().count())
        }
    }

    /// Counts like [`Chars`] but a joined text costs 5 more: per-entry sums under-count, so
    /// step 2 must drop entries.
    struct Greedy;
    impl TokenCounter for Greedy {
        fn count(&self, t: &str) -> CoreResult<usize> {
            let n = t.chars().count();
            Ok(if t.contains("\n\n") && n > 2 {
                n + 5
            } else {
                n
            })
        }
    }

    fn p() -> SummaryPrompt {
        SummaryPrompt::custom("t", "I") // 1 char
    }

    fn budget(input: usize) -> Budget {
        Budget {
            context: input + 10,
            max_new_tokens: 7,
            reserve: 3,
        }
    }

    #[test]
    fn keeps_a_prefix_and_stops_at_the_first_misfit() {
        // "I" + ("\n\n" + "aaaa") = 7, + "\n\n" + "bbbbbbbb" = 17 > 12; "cc" would fit but is dropped.
        let f = fit_entries(&p(), &["aaaa", "bbbbbbbb", "cc"], &Chars, &budget(12)).unwrap();
        assert_eq!(f.message, "I\n\naaaa");
        assert_eq!(f.tokens, 7);
        assert_eq!(
            f.report,
            FitReport {
                kept: 1,
                dropped: 2,
                truncated: false
            }
        );
        let all = fit_entries(&p(), &["aa", "bb"], &Chars, &budget(9)).unwrap();
        assert_eq!(all.report, FitReport::all(2));
        assert_eq!(all.tokens, 9);
    }

    #[test]
    fn the_whole_message_is_checked() {
        // Per-entry sums say 7 + 4 = 11 <= 12, the joined text counts 11 + 5.
        let f = fit_entries(&p(), &["aaaa", "bb"], &Greedy, &budget(12)).unwrap();
        assert_eq!((f.message.as_str(), f.tokens), ("I\n\naaaa", 12));
        assert_eq!((f.report.kept, f.report.dropped), (1, 1));
    }

    #[test]
    fn a_too_long_first_entry_is_cut_at_a_char_boundary() {
        let f = fit_entries(&p(), &["ééééééééé", "x"], &Chars, &budget(8)).unwrap();
        assert_eq!(f.message, "I\n\nééééé");
        assert_eq!(
            f.report,
            FitReport {
                kept: 1,
                dropped: 1,
                truncated: true
            }
        );
    }

    #[test]
    fn no_entries_and_no_room() {
        let f = fit_entries(&p(), &[], &Chars, &budget(5)).unwrap();
        assert_eq!((f.message.as_str(), f.report), ("I", FitReport::default()));
        // Room for the instruction only: nothing of the entry fits.
        let f = fit_entries(&p(), &["abc"], &Chars, &budget(2)).unwrap();
        assert_eq!(f.report.kept, 0);
        assert_eq!(f.report.dropped, 1);
        let e = fit_entries(
            &SummaryPrompt::custom("t", "long instruction"),
            &["a"],
            &Chars,
            &budget(3),
        )
        .unwrap_err();
        assert!(e.to_string().contains("16 tokens"), "{e}");
        let b = Budget {
            context: 10,
            max_new_tokens: 8,
            reserve: 2,
        };
        assert!(fit_entries(&p(), &["a"], &Chars, &b).is_err());
    }
}
