//! The passage start every multistage cell may prepend, and the stages' errors as the grid's.
use crate::Error;

/// The start of the current document inside its immediate context: the longest tail of
/// `immediate_context` that `target` begins with, starting at the beginning or right after a
/// newline. The builder writes `FirstKCharacters(title + "\n" + body)` and `target` = body
/// (`docs/multistage.md`), so this is the body's start without the title ("the start of the
/// current document included in the immediate context", l.196); empty when the title fills
/// all 150 characters.
///
/// ```
/// use pgraphrag_eval::multistage::document_start;
/// assert_eq!(document_start("Lunch\nThe team lunch mo", "The team lunch moves."), "The team lunch mo");
/// assert_eq!(document_start("No title here", "No title here, really."), "No title here");
/// assert_eq!(document_start("A very long title", "Body."), "");
/// ```
pub fn document_start<'a>(immediate_context: &'a str, target: &str) -> &'a str {
    let starts =
        std::iter::once(0).chain(immediate_context.match_indices('\n').map(|(i, _)| i + 1));
    for i in starts {
        let tail = &immediate_context[i..];
        if target.starts_with(tail) {
            return tail;
        }
    }
    ""
}

/// `output` with `start` prepended (l.196): joined by one space when neither has whitespace at
/// the joint (ours; the paper says only "prepend"), as is otherwise.
///
/// ```
/// use pgraphrag_eval::multistage::prepend_start;
/// assert_eq!(prepend_start("Hi all, the", "venue is booked."), "Hi all, the venue is booked.");
/// assert_eq!(prepend_start("Hi all,\n", "Bye"), "Hi all,\nBye");
/// assert_eq!(prepend_start("", "Bye"), "Bye");
/// ```
pub fn prepend_start(start: &str, output: &str) -> String {
    if start.is_empty() {
        return output.to_string();
    }
    let joint = start.ends_with(char::is_whitespace)
        || output.starts_with(char::is_whitespace)
        || output.is_empty();
    if joint {
        format!("{start}{output}")
    } else {
        format!("{start} {output}")
    }
}

/// An example's id and error, as one of this module's errors: a failed stage of a model is
/// [`Error::Generation`] (its source the stage's error); anything else (a ranker's or a weak
/// label's bad input) is [`Error::InvalidInput`] with the whole error chain.
pub(crate) fn stage_error(id: &str, what: &str, e: pgraphrag_stages::Error) -> Error {
    match e {
        pgraphrag_stages::Error::Stage { stage, .. }
            if stage == "summarization" || stage == "synthesis" =>
        {
            Error::Generation {
                user_id: id.to_string(),
                config: what.to_string(),
                source: pgraphrag_core::Error::backend(e),
            }
        }
        e => Error::InvalidInput(format!(
            "example {id:?} ({what}): {}",
            pgraphrag_core::error_chain(&e)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_document_start_skips_the_title_only() {
        // A title with a newline of its own: the body starts after the last one that matches.
        assert_eq!(document_start("A\nB\nbody st", "body start"), "body st");
        // The whole context when there is no title.
        assert_eq!(
            document_start("line one\nline", "line one\nline two"),
            "line one\nline"
        );
        assert_eq!(document_start("", "x"), "");
        assert_eq!(prepend_start("a", ""), "a");
        assert_eq!(prepend_start("a", " b"), "a b");
    }
}
