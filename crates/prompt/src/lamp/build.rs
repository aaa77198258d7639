//! LaMP's prompt construction (`create_prompt_generator` and the `create_*_prompt`
//! functions of `LaMP/prompts/prompts.py`), byte-identical, and the summary-augmented form.

use pgraphrag_core::{LampProfileItem, LampTask};

use super::tokenizer::{LampTokenizer, TokenizerError};

/// Why one attempt at building a prompt failed: what Python raises inside the `try:` of
/// `create_prompt_generator` (its bare `except:` catches all of them alike).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// No profile item was selected (an empty profile, or k = 0): the per-item budget
    /// divides by `len(profile)` (`ZeroDivisionError`).
    #[error("no profile items to divide the budget among")]
    NoItems,
    /// A selected item lacks a field the template reads (`KeyError`).
    #[error("profile item {item} (id {id:?}) has no field {field:?}")]
    MissingField {
        /// Position among the selected items.
        item: usize,
        /// The item's id.
        id: String,
        /// The field.
        field: &'static str,
    },
    /// A tokenizer call failed (most often a negative `max_length`).
    #[error(transparent)]
    Tokenizer(#[from] TokenizerError),
}

/// How a prompt came about.
#[derive(Debug, Clone, PartialEq)]
pub enum PromptOutcome {
    /// Built at this factor (0.6 unless earlier attempts failed) after `retries` failed
    /// attempts.
    Built {
        /// The factor of `int(factor * max_length)` that succeeded.
        factor: f64,
        /// How many attempts failed before.
        retries: u32,
    },
    /// Every attempt failed (the factor fell below 0); the prompt is the input unchanged.
    InputReturned {
        /// The last attempt's error.
        last_error: BuildError,
    },
}

/// A prompt and how it came about.
#[derive(Debug, Clone, PartialEq)]
pub struct LampPrompt {
    /// The prompt text.
    pub text: String,
    /// Built, or the input returned unchanged.
    pub outcome: PromptOutcome,
}

/// Where a user summary `s_u` goes in φp(x, R(φq(x), P_u, k), s_u). The paper (Richardson et
/// al. 2023) does not say; see `docs/lamp.md` for the choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SummaryPlacement {
    /// `{summary}. {LaMP's prompt}` (the default): one rule for every task, LaMP-1 included
    /// (whose items sit inside the input), and the summary-less prompt is a suffix of it.
    #[default]
    Prefix,
    /// Between the retrieved items and the input: `{items}. {summary}. {inp}` (LaMP-5:
    /// `{items}. {summary}. Following the given patterns {inp}`; LaMP-7: `{items} are written
    /// by a person. {summary}. Following the given patterns {inp}`). LaMP-1 and a prompt
    /// without items fall back to [`SummaryPlacement::Prefix`].
    BeforeInput,
}

/// A user summary and where it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary<'a> {
    /// The summary text (stripped of surrounding whitespace; an empty summary is no summary).
    pub text: &'a str,
    /// Where it goes.
    pub placement: SummaryPlacement,
}

/// The fields of a task's item template: the truncated main text and the field the
/// `needed_part_len` template reads (LaMP-1 and LaMP-7 have none).
fn fields(task: LampTask) -> (&'static str, Option<&'static str>) {
    match task {
        LampTask::Lamp1 => ("title", None),
        LampTask::Lamp2 => ("description", Some("tag")),
        LampTask::Lamp2Old => ("text", Some("category")),
        LampTask::Lamp3 => ("text", Some("score")),
        LampTask::Lamp4 | LampTask::Lamp6 => ("text", Some("title")),
        LampTask::Lamp5 => ("abstract", Some("title")),
        LampTask::Lamp7 => ("text", None),
    }
}

/// The template whose length `needed_part_len` measures (note LaMP-5's `is a title " "`,
/// without the `for` its items have).
fn needed_part(task: LampTask, side: &str) -> String {
    match task {
        LampTask::Lamp1 => String::new(),
        LampTask::Lamp2 => format!("the tag for the movie: \" \" is \"{side}\" "),
        LampTask::Lamp2Old => format!("the category for the article: \" \" is \"{side}\" "),
        LampTask::Lamp3 => format!("{side} is the score for \" \" "),
        LampTask::Lamp4 | LampTask::Lamp6 => format!("\"{side}\" is the title for \" \" "),
        LampTask::Lamp5 => format!("\"{side}\" is a title \" \" "),
        LampTask::Lamp7 => "\"\" ".to_string(),
    }
}

/// One item of the prompt, with its main text truncated to `new`.
fn item_text(task: LampTask, side: &str, new: &str) -> String {
    match task {
        LampTask::Lamp1 => format!("\"{new}\""),
        LampTask::Lamp7 => format!("\"{new}\" "),
        LampTask::Lamp2 => format!("the tag for the movie: \"{new}\" is \"{side}\" "),
        LampTask::Lamp2Old => format!("the category for the article: \"{new}\" is \"{side}\" "),
        LampTask::Lamp3 => format!("{side} is the score for \"{new}\" "),
        LampTask::Lamp4 | LampTask::Lamp6 => format!("\"{side}\" is the title for \"{new}\" "),
        LampTask::Lamp5 => format!("\"{side}\" is a title for \"{new}\" "),
    }
}

/// What joins the items to the input, split where [`SummaryPlacement::BeforeInput`] puts the
/// summary: `{items}{head}{tail}{inp}`.
fn joiner(task: LampTask) -> (&'static str, &'static str) {
    match task {
        LampTask::Lamp5 => (". ", "Following the given patterns "),
        LampTask::Lamp7 => (
            " are written by a person. ",
            "Following the given patterns ",
        ),
        _ => (". ", ""),
    }
}

/// The instruction LaMP-5 and LaMP-7 take out of the profile budget (LaMP-7's says `user`
/// where its prompt says `a person`).
fn instruction(task: LampTask) -> Option<&'static str> {
    match task {
        LampTask::Lamp5 => Some("Following the given patterns"),
        LampTask::Lamp7 => Some("are written by user. Following the given patterns"),
        _ => None,
    }
}

fn field<'a>(p: &'a LampProfileItem, i: usize, name: &'static str) -> Result<&'a str, BuildError> {
    p.get(name).ok_or_else(|| BuildError::MissingField {
        item: i,
        id: p.id.clone(),
        field: name,
    })
}

fn len_i64(ids: &[u32]) -> i64 {
    i64::try_from(ids.len()).unwrap_or(i64::MAX)
}

/// The summary joined to what follows it: `{summary}. ` (`{summary} ` when it already ends
/// with a period).
fn with_separator(summary: &str) -> String {
    if summary.ends_with('.') {
        format!("{summary} ")
    } else {
        format!("{summary}. ")
    }
}

/// One `create_*_prompt` call of `prompts.py`: `task`'s prompt over `profile` (the selected
/// items, in order) with `max_length` tokens for the profile (LaMP's `max_len_prompt`).
/// Errors where Python raises. `before_input` is the summary (with its separator) for
/// [`SummaryPlacement::BeforeInput`].
///
/// ```
/// use pgraphrag_core::{LampProfileItem, LampTask};
/// use pgraphrag_prompt::lamp::{create_prompt, BuildError, LampTokenizer, TokenizerError};
/// # struct Chars;
/// # impl LampTokenizer for Chars {
/// #     fn input_ids(&self, t: &str) -> Result<Vec<u32>, TokenizerError> { Ok(t.chars().map(u32::from).collect()) }
/// #     fn truncated_ids(&self, t: &str, m: i64) -> Result<Vec<u32>, TokenizerError> {
/// #         let m = usize::try_from(m).map_err(|_| TokenizerError::NegativeMaxLength { max_length: m })?;
/// #         Ok(self.input_ids(t)?.into_iter().take(m).collect())
/// #     }
/// #     fn decode(&self, ids: &[u32]) -> Result<String, TokenizerError> { Ok(ids.iter().filter_map(|&c| char::from_u32(c)).collect()) }
/// # }
/// let p = LampProfileItem::new("1").with("text", "abcdefgh");
/// // One id per character: (20 - 1) // 1 = 19 tokens, less 3 for `"" ` and 50 for the instruction: negative.
/// assert!(matches!(create_prompt(LampTask::Lamp7, "x: y", &[&p], 20, &Chars, None), Err(BuildError::Tokenizer(_))));
/// let out = create_prompt(LampTask::Lamp7, "x: y", &[&p], 60, &Chars, None).unwrap();
/// assert_eq!(out, "\"abcdefg\"  are written by a person. Following the given patterns x: y");
/// ```
pub fn create_prompt<T: LampTokenizer + ?Sized>(
    task: LampTask,
    inp: &str,
    profile: &[&LampProfileItem],
    max_length: i64,
    tok: &T,
    before_input: Option<&str>,
) -> Result<String, BuildError> {
    let instr = match instruction(task) {
        Some(s) => len_i64(&tok.input_ids(s)?),
        None => 0,
    };
    let n = i64::try_from(profile.len()).unwrap_or(i64::MAX);
    if n == 0 {
        return Err(BuildError::NoItems);
    }
    let (main, side_field) = fields(task);
    let citation = task == LampTask::Lamp1;
    let numerator = if citation {
        max_length - 2 * (n - 1)
    } else {
        max_length - 1 - 2 * (n - 1) - instr
    };
    // Python's `//` floors.
    let per_p = numerator.div_euclid(n);
    let mut saved: i64 = 0;
    let mut items = Vec::with_capacity(profile.len());
    for (i, p) in profile.iter().enumerate() {
        let side = side_field
            .map(|f| field(p, i, f))
            .transpose()?
            .unwrap_or("");
        let needed = if citation {
            2
        } else {
            len_i64(&tok.input_ids(&needed_part(task, side))?)
        };
        let text = field(p, i, main)?;
        let ids = tok.truncated_ids(text, per_p + saved - needed)?;
        saved += per_p - len_i64(&ids) - needed;
        items.push(item_text(task, side, &tok.decode(&ids)?));
    }
    let joined = items.join(", and ");
    if citation {
        return Ok(super::query::add_string_after_title(inp, &joined));
    }
    let (head, tail) = joiner(task);
    Ok(format!(
        "{joined}{head}{}{tail}{inp}",
        before_input.unwrap_or("")
    ))
}

/// One attempt of `create_prompt_generator`'s loop at `factor`.
fn attempt<T: LampTokenizer + ?Sized>(
    task: LampTask,
    inp: &str,
    profile: &[&LampProfileItem],
    max_length: i64,
    tok: &T,
    summary: Option<Summary<'_>>,
    factor: f64,
) -> Result<String, BuildError> {
    let inp_len = len_i64(&tok.input_ids(inp)?);
    // Python's `int(factor * max_length)` truncates toward zero.
    let cap = (factor * max_length as f64) as i64;
    let mut budget = max_length - inp_len.min(cap);
    let Some(summary) = summary else {
        return create_prompt(task, inp, profile, budget, tok, None);
    };
    let ids = tok.input_ids(summary.text)?;
    let text = if len_i64(&ids) <= budget {
        budget -= len_i64(&ids);
        summary.text.to_string()
    } else {
        let cut = tok.truncated_ids(summary.text, budget)?;
        budget -= len_i64(&cut);
        tok.decode(&cut)?
    };
    let sep = with_separator(&text);
    if profile.is_empty() {
        return Ok(format!("{sep}{inp}"));
    }
    match summary.placement {
        SummaryPlacement::BeforeInput if task != LampTask::Lamp1 => {
            create_prompt(task, inp, profile, budget, tok, Some(&sep))
        }
        _ => Ok(format!(
            "{sep}{}",
            create_prompt(task, inp, profile, budget, tok, None)?
        )),
    }
}

/// LaMP's prompt for one question, as `create_prompt_generator`'s inner `prompt(inp,
/// profile, task)` builds it from the already selected items (`selected_profs`):
///
/// * `max_len_prompt = max_length - min(len(tok(inp)), int(factor * max_length))` with
///   `factor = 0.6`; the items share it as `create_*_prompt` does (unused tokens carry over);
/// * when an attempt fails ([`BuildError`]), `factor -= 0.1` (in floating point: 0.6, 0.5,
///   0.4, 0.30000000000000004, 0.20000000000000004, 0.10000000000000003,
///   2.7755575615628914e-17) and the prompt is rebuilt; once the factor is below 0 the input
///   comes back unchanged ([`PromptOutcome::InputReturned`]).
///
/// With a `summary` (the summary-augmented form), the summary's tokens (`len(tok(summary))`,
/// special tokens included, as LaMP counts every template) come out of `max_len_prompt` before
/// the items share the rest; a summary longer than `max_len_prompt` is truncated to it and
/// decoded, as an item's text is. Without items the prompt is `{summary}. {inp}`.
///
/// ```
/// use pgraphrag_core::{LampProfileItem, LampTask};
/// use pgraphrag_prompt::lamp::{build_prompt, LampTokenizer, PromptOutcome, Summary, SummaryPlacement, TokenizerError};
/// /// One token per character, no special tokens.
/// struct Chars;
/// impl LampTokenizer for Chars {
///     fn input_ids(&self, t: &str) -> Result<Vec<u32>, TokenizerError> { Ok(t.chars().map(u32::from).collect()) }
///     fn truncated_ids(&self, t: &str, m: i64) -> Result<Vec<u32>, TokenizerError> {
///         let m = usize::try_from(m).map_err(|_| TokenizerError::NegativeMaxLength { max_length: m })?;
///         Ok(self.input_ids(t)?.into_iter().take(m).collect())
///     }
///     fn decode(&self, ids: &[u32]) -> Result<String, TokenizerError> { Ok(ids.iter().filter_map(|&c| char::from_u32(c)).collect()) }
/// }
/// let p = LampProfileItem::new("1").with("text", "Great soap").with("score", "5");
/// let inp = "What is the score of the following review on a scale of 1 to 5? review: ok";
/// let out = build_prompt(LampTask::Lamp3, inp, &[&p], 200, &Chars, None);
/// assert_eq!(out.text, format!("5 is the score for \"Great soap\" . {inp}"));
/// assert_eq!(out.outcome, PromptOutcome::Built { factor: 0.6, retries: 0 });
/// // No items: every attempt divides by zero; the input comes back.
/// let out = build_prompt(LampTask::Lamp3, inp, &[], 200, &Chars, None);
/// assert_eq!(out.text, inp);
/// assert!(matches!(out.outcome, PromptOutcome::InputReturned { .. }));
/// // The summary-augmented form.
/// let s = Summary { text: "most common positive score: 5", placement: SummaryPlacement::Prefix };
/// let out = build_prompt(LampTask::Lamp3, inp, &[&p], 200, &Chars, Some(s));
/// assert!(out.text.starts_with("most common positive score: 5. 5 is the score for \"Great"));
/// ```
pub fn build_prompt<T: LampTokenizer + ?Sized>(
    task: LampTask,
    inp: &str,
    selected: &[&LampProfileItem],
    max_length: i64,
    tok: &T,
    summary: Option<Summary<'_>>,
) -> LampPrompt {
    let summary = summary
        .map(|s| Summary {
            text: pgraphrag_text::py::strip(s.text),
            ..s
        })
        .filter(|s| !s.text.is_empty());
    let mut factor = 0.6f64;
    let mut retries = 0u32;
    loop {
        match attempt(task, inp, selected, max_length, tok, summary, factor) {
            Ok(text) => {
                return LampPrompt {
                    text,
                    outcome: PromptOutcome::Built { factor, retries },
                };
            }
            Err(e) => {
                factor -= 0.1;
                if factor < 0.0 {
                    return LampPrompt {
                        text: inp.to_string(),
                        outcome: PromptOutcome::InputReturned { last_error: e },
                    };
                }
                retries += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One token per character, no special tokens.
    struct Chars;
    impl LampTokenizer for Chars {
        fn input_ids(&self, t: &str) -> Result<Vec<u32>, TokenizerError> {
            Ok(t.chars().map(u32::from).collect())
        }
        fn truncated_ids(&self, t: &str, m: i64) -> Result<Vec<u32>, TokenizerError> {
            let m = usize::try_from(m)
                .map_err(|_| TokenizerError::NegativeMaxLength { max_length: m })?;
            Ok(self.input_ids(t)?.into_iter().take(m).collect())
        }
        fn decode(&self, ids: &[u32]) -> Result<String, TokenizerError> {
            Ok(ids.iter().filter_map(|&c| char::from_u32(c)).collect())
        }
    }

    const INP: &str = "Generate a headline for the following article: x";

    fn item() -> LampProfileItem {
        LampProfileItem::new("1")
            .with("title", "T")
            .with("text", "abcdefghijklmnopqrstuvwxyz".repeat(4))
    }

    fn text_len(prompt: &str) -> usize {
        let start = prompt.find("for \"").unwrap() + 5;
        prompt[start..].find('"').unwrap()
    }

    #[test]
    fn summary_tokens_come_out_of_the_profile_budget() {
        let p = item();
        let plain = build_prompt(LampTask::Lamp4, INP, &[&p], 100, &Chars, None);
        let s = Summary {
            text: "short titles",
            placement: SummaryPlacement::Prefix,
        };
        let with = build_prompt(LampTask::Lamp4, INP, &[&p], 100, &Chars, Some(s));
        // 100 - 49 (input) = 51; 51 - 1 - 24 (template) = 26 letters; the summary takes 12.
        assert_eq!(text_len(&plain.text), 26);
        assert_eq!(text_len(&with.text), 14);
        assert!(
            with.text
                .starts_with("short titles. \"T\" is the title for")
        );
        assert!(with.text.ends_with(INP));
        let before = Summary {
            placement: SummaryPlacement::BeforeInput,
            ..s
        };
        let b = build_prompt(LampTask::Lamp4, INP, &[&p], 100, &Chars, Some(before));
        assert!(
            b.text.ends_with(&format!("\" . short titles. {INP}")),
            "{}",
            b.text
        );
        let l5 = build_prompt(
            LampTask::Lamp7,
            "tweet: x",
            &[&p],
            200,
            &Chars,
            Some(before),
        );
        assert!(
            l5.text.ends_with(
                " are written by a person. short titles. Following the given patterns tweet: x"
            ),
            "{}",
            l5.text
        );
    }

    #[test]
    fn summary_edge_cases() {
        let p = item();
        let s = |text| {
            Some(Summary {
                text,
                placement: SummaryPlacement::Prefix,
            })
        };
        // No items: `{summary}. {inp}`; a trailing period is not doubled.
        let out = build_prompt(LampTask::Lamp4, INP, &[], 100, &Chars, s(" Likes puns. "));
        assert_eq!(out.text, format!("Likes puns. {INP}"));
        // An empty summary is no summary.
        assert_eq!(
            build_prompt(LampTask::Lamp4, INP, &[&p], 100, &Chars, s("  ")),
            build_prompt(LampTask::Lamp4, INP, &[&p], 100, &Chars, None)
        );
        // A summary longer than the budget is cut to it; the items then have nothing left,
        // so the factor drops until the input's share shrinks enough.
        let long = "s".repeat(500);
        let out = build_prompt(LampTask::Lamp4, INP, &[&p], 100, &Chars, s(&long));
        assert!(
            matches!(out.outcome, PromptOutcome::InputReturned { .. }),
            "{out:?}"
        );
        assert_eq!(out.text, INP);
    }

    #[test]
    fn no_items_returns_the_input_after_seven_attempts() {
        let out = build_prompt(LampTask::Lamp3, "review: x", &[], 512, &Chars, None);
        assert_eq!(out.text, "review: x");
        assert_eq!(
            out.outcome,
            PromptOutcome::InputReturned {
                last_error: BuildError::NoItems
            }
        );
    }

    #[test]
    fn missing_field_is_a_failed_attempt() {
        let p = LampProfileItem::new("9").with("text", "t");
        let e = create_prompt(LampTask::Lamp4, INP, &[&p], 100, &Chars, None).unwrap_err();
        assert_eq!(
            e,
            BuildError::MissingField {
                item: 0,
                id: "9".into(),
                field: "title"
            }
        );
    }

    #[test]
    fn citation_inserts_after_title_and_carries_savings() {
        let a = LampProfileItem::new("a").with("title", "ab");
        let b = LampProfileItem::new("b").with("title", "cdefghij");
        let inp = "the title \"x\" [1]: \"y\" [2]: \"z\"";
        // max_len_prompt 14: per_p = (14 - 2) // 2 = 6; "ab" uses 2 of 4, saving 2 for "cdefgh".
        let out = create_prompt(LampTask::Lamp1, inp, &[&a, &b], 14, &Chars, None).unwrap();
        assert_eq!(
            out,
            "the title, and \"ab\", and \"cdefgh\" \"x\" [1]: \"y\" [2]: \"z\""
        );
    }
}
