//! Query extraction φq and the BM25 corpus of each task, exact to the corpus makers of
//! `LaMP/prompts/prompts.py` and the helpers of `LaMP/prompts/utils.py`.

use pgraphrag_core::{LampProfileItem, LampTask};
use pgraphrag_text::py;

/// `extract_strings_between_quotes`: the texts between successive pairs of `"` (an unclosed
/// last quote is dropped).
///
/// ```
/// use pgraphrag_prompt::lamp::strings_between_quotes;
/// assert_eq!(strings_between_quotes(r#"a "b c" d "e" "f"#), vec!["b c", "e"]);
/// ```
pub fn strings_between_quotes(input: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in input.char_indices() {
        if c == '"' {
            match start.take() {
                None => start = Some(i + 1),
                Some(s) => out.push(&input[s..i]),
            }
        }
    }
    out
}

/// `extract_after_<marker>`: the text after the first occurrence of `marker`, `strip()`ped
/// as Python strips (Unicode whitespace); `None` when the marker is absent (LaMP's functions
/// return `None`, and the caller's `query.split()` then raises).
///
/// ```
/// use pgraphrag_prompt::lamp::extract_after;
/// assert_eq!(extract_after("review: fine: ok ", "review:"), Some("fine: ok"));
/// assert_eq!(extract_after("no marker", "review:"), None);
/// ```
pub fn extract_after<'a>(input: &'a str, marker: &str) -> Option<&'a str> {
    input
        .find(marker)
        .map(|i| py::strip(&input[i + marker.len()..]))
}

/// `add_string_after_title`: inserts `", and " + addition` right after the first `title` of
/// `original`; `original` unchanged when it has no `title`.
///
/// ```
/// use pgraphrag_prompt::lamp::add_string_after_title;
/// assert_eq!(add_string_after_title("the title \"x\"", "\"y\""), "the title, and \"y\" \"x\"");
/// assert_eq!(add_string_after_title("no", "\"y\""), "no");
/// ```
pub fn add_string_after_title(original: &str, addition: &str) -> String {
    match original.find("title") {
        None => original.to_string(),
        Some(i) => {
            let at = i + "title".len();
            format!("{}, and {}{}", &original[..at], addition, &original[at..])
        }
    }
}

/// Where a task's query comes from (the differences between `prompts.py` and
/// `rank_profiles.py` are the `Ranking` variants).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum QuerySource {
    /// `prompts.py`'s corpus makers (what `create_prompt_generator` ranks with).
    #[default]
    Prompts,
    /// `rank_profiles.py`'s corpus makers: the same except LaMP-5, whose query follows the
    /// first `:` instead of `paper:` (and LaMP-2-old, which `rank_profiles.py` lacks; it falls
    /// back to `prompts.py`'s rule).
    RankProfiles,
}

/// Why no query could be extracted (where LaMP's code raises).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum QueryError {
    /// LaMP-1: the input has fewer than three quoted strings (`extracted[2]` raises
    /// `IndexError`).
    #[error("the input has {found} quoted strings; LaMP-1's query needs three")]
    TooFewQuotes {
        /// How many quoted strings the input has.
        found: usize,
    },
    /// The marker is not in the input (`extract_after_*` returns `None`, `query.split()`
    /// raises `AttributeError`).
    #[error("the input has no {marker:?}, after which the query follows")]
    NoMarker {
        /// The marker looked for.
        marker: &'static str,
    },
}

/// The marker after which `task`'s query follows (`None` for LaMP-1, whose query is quoted).
///
/// ```
/// use pgraphrag_core::LampTask;
/// use pgraphrag_prompt::lamp::{query_marker, QuerySource};
/// assert_eq!(query_marker(LampTask::Lamp5, QuerySource::Prompts), Some("paper:"));
/// assert_eq!(query_marker(LampTask::Lamp5, QuerySource::RankProfiles), Some(":"));
/// assert_eq!(query_marker(LampTask::Lamp2Old, QuerySource::Prompts), Some("article:"));
/// ```
pub fn query_marker(task: LampTask, source: QuerySource) -> Option<&'static str> {
    match task {
        LampTask::Lamp1 => None,
        LampTask::Lamp2 => Some("description:"),
        LampTask::Lamp2Old | LampTask::Lamp4 => Some("article:"),
        LampTask::Lamp3 => Some("review:"),
        LampTask::Lamp5 => Some(match source {
            QuerySource::Prompts => "paper:",
            QuerySource::RankProfiles => ":",
        }),
        LampTask::Lamp6 | LampTask::Lamp7 => Some(":"),
    }
}

/// φq: the BM25 query of `input` for `task`. LaMP-1: `f'{quoted[1]} {quoted[2]}'` (the two
/// candidate references); the others: the text after the task's [`query_marker`], stripped.
///
/// ```
/// use pgraphrag_core::LampTask;
/// use pgraphrag_prompt::lamp::{extract_query, QuerySource};
/// let inp = r#"For an author who has written the paper with the title "A", which reference is related? Just answer with [1] or [2] without explanation. [1]: "B" [2]: "C""#;
/// assert_eq!(extract_query(LampTask::Lamp1, inp, QuerySource::Prompts).unwrap(), "B C");
/// let inp = "Generate a title for the following abstract of a paper: We study cats.";
/// assert_eq!(extract_query(LampTask::Lamp5, inp, QuerySource::Prompts).unwrap(), "We study cats.");
/// assert!(extract_query(LampTask::Lamp3, inp, QuerySource::Prompts).is_err());
/// ```
pub fn extract_query(
    task: LampTask,
    input: &str,
    source: QuerySource,
) -> Result<String, QueryError> {
    match query_marker(task, source) {
        None => {
            let q = strings_between_quotes(input);
            if q.len() < 3 {
                return Err(QueryError::TooFewQuotes { found: q.len() });
            }
            Ok(format!("{} {}", q[1], q[2]))
        }
        Some(marker) => extract_after(input, marker)
            .map(str::to_string)
            .ok_or(QueryError::NoMarker { marker }),
    }
}

/// The fields whose texts make a profile item's BM25 document, joined by one space: LaMP-1
/// and 5 `title abstract`; LaMP-2 `description`; LaMP-2-old and 4 `title text`; LaMP-3, 6
/// and 7 `text` (LaMP-6's prompts-side corpus is the body only).
///
/// ```
/// use pgraphrag_core::LampTask;
/// assert_eq!(pgraphrag_prompt::lamp::corpus_fields(LampTask::Lamp4), &["title", "text"]);
/// ```
pub fn corpus_fields(task: LampTask) -> &'static [&'static str] {
    match task {
        LampTask::Lamp1 | LampTask::Lamp5 => &["title", "abstract"],
        LampTask::Lamp2 => &["description"],
        LampTask::Lamp2Old | LampTask::Lamp4 => &["title", "text"],
        LampTask::Lamp3 | LampTask::Lamp6 | LampTask::Lamp7 => &["text"],
    }
}

/// A profile item's BM25 document (`f'{x["title"]} {x["abstract"]}'` etc.); `Err(field)`
/// names the first field the item lacks (Python raises `KeyError`).
///
/// ```
/// use pgraphrag_core::{LampProfileItem, LampTask};
/// let p = LampProfileItem::new("1").with("title", "T").with("text", "body");
/// assert_eq!(pgraphrag_prompt::lamp::corpus_document(LampTask::Lamp4, &p).unwrap(), "T body");
/// assert_eq!(pgraphrag_prompt::lamp::corpus_document(LampTask::Lamp5, &p).unwrap_err(), "abstract");
/// ```
pub fn corpus_document(task: LampTask, item: &LampProfileItem) -> Result<String, &'static str> {
    let mut parts = Vec::with_capacity(2);
    for f in corpus_fields(task) {
        parts.push(item.get(f).ok_or(*f)?);
    }
    Ok(parts.join(" "))
}
