//! The immediate context `x_t` (paper l.45, 67–68): the title and a short start of the current
//! document.

/// The paper's `K` (l.68: "We set K = 150 for all experiments").
pub const PAPER_K: usize = 150;

/// Turns the current document into the immediate context `x_t` that every later stage starts
/// from (the retrieval query, the `passage start` of the generation input).
///
/// One required method; [`ImmediateContext::contexts`] (provided: a loop) does many documents.
///
/// ```
/// use pgraphrag_stages::multistage::ImmediateContext;
/// /// The title alone: a toy immediate context.
/// struct TitleOnly;
/// impl ImmediateContext for TitleOnly {
///     fn context(&self, title: Option<&str>, _body: &str) -> String {
///         title.unwrap_or("").to_string()
///     }
/// }
/// assert_eq!(TitleOnly.contexts(&[(Some("A"), "x"), (None, "y")]), ["A", ""]);
/// ```
pub trait ImmediateContext {
    /// The immediate context of a document with an optional `title` and its `body`.
    fn context(&self, title: Option<&str>, body: &str) -> String;

    /// [`ImmediateContext::context`] of each `(title, body)`, in order.
    fn contexts(&self, docs: &[(Option<&str>, &str)]) -> Vec<String> {
        docs.iter().map(|(t, b)| self.context(*t, b)).collect()
    }
}

impl<T: ImmediateContext + ?Sized> ImmediateContext for &T {
    fn context(&self, title: Option<&str>, body: &str) -> String {
        (**self).context(title, body)
    }
}

/// `FirstKCharacters(d_t)` (l.67–68): the first `k` characters of the document's text, where the
/// text of a document with a title is the title and the body concatenated.
///
/// * **Characters** are Unicode scalar values, as Python's `text[:k]`
///   ([`pgraphrag_text::first_k_chars`]); a cut never splits a multi-byte character.
/// * **The joiner** between title and body is one newline by default. The paper says only "we
///   concatenate the title and the body" (l.68); a separator keeps the title's last word and the
///   body's first word apart, a newline also shows a chat model where the title ends, and for
///   the paper's T5 vocabulary a newline and a space are the same token boundary. It is the
///   corpus builder's `TITLE_SEPARATOR` (`pgraphrag_corpora::multistage`), so this stage gives
///   exactly the builder's `immediate_context` for every document.
///   [`FirstKCharacters::with_joiner`] changes it. The joiner counts towards `k`.
/// * **The title** is trimmed of surrounding whitespace (Rust's `str::trim`, as the builder's
///   `document_text`); `None`, an empty title or one of whitespace only gives the first `k`
///   characters of the body alone. The body is used as given.
///
/// ```
/// use pgraphrag_stages::multistage::{FirstKCharacters, ImmediateContext};
/// let f = FirstKCharacters::paper();
/// let body = "é".repeat(200);
/// let x = f.context(Some(" Café "), &body);
/// assert_eq!(x.chars().count(), 150);
/// assert!(x.starts_with("Café\néé"));
/// assert_eq!(f.context(Some("  "), "body"), "body");
/// assert_eq!(FirstKCharacters::new(5).with_joiner(": ").context(Some("Hi"), "there"), "Hi: t");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FirstKCharacters {
    k: usize,
    joiner: String,
}

impl FirstKCharacters {
    /// The paper's setting: `K = 150` ([`PAPER_K`]), title and body joined by a newline.
    pub fn paper() -> FirstKCharacters {
        FirstKCharacters::new(PAPER_K)
    }

    /// The first `k` characters, title and body joined by a newline.
    pub fn new(k: usize) -> FirstKCharacters {
        FirstKCharacters {
            k,
            joiner: "\n".to_string(),
        }
    }

    /// Replaces the joiner between title and body.
    pub fn with_joiner(mut self, joiner: impl Into<String>) -> FirstKCharacters {
        self.joiner = joiner.into();
        self
    }

    /// `K`.
    pub fn k(&self) -> usize {
        self.k
    }

    /// The joiner between title and body.
    pub fn joiner(&self) -> &str {
        &self.joiner
    }

    /// The document's text: the trimmed title, the joiner and the body, or the body alone when
    /// there is no title (see the type's rules). Nothing is cut.
    ///
    /// ```
    /// use pgraphrag_stages::multistage::FirstKCharacters;
    /// assert_eq!(FirstKCharacters::paper().full_text(Some(" T "), "b"), "T\nb");
    /// assert_eq!(FirstKCharacters::paper().full_text(None, "b"), "b");
    /// ```
    pub fn full_text(&self, title: Option<&str>, body: &str) -> String {
        match title.map(str::trim).filter(|t| !t.is_empty()) {
            None => body.to_string(),
            Some(t) => format!("{t}{}{body}", self.joiner),
        }
    }
}

impl Default for FirstKCharacters {
    /// [`FirstKCharacters::paper`].
    fn default() -> Self {
        FirstKCharacters::paper()
    }
}

impl ImmediateContext for FirstKCharacters {
    fn context(&self, title: Option<&str>, body: &str) -> String {
        match title.map(str::trim).filter(|t| !t.is_empty()) {
            // Cut before building the whole text: a long email body is not copied.
            None => pgraphrag_text::first_k_chars(body, self.k).to_string(),
            Some(_) => {
                let head = pgraphrag_text::first_k_chars(body, self.k);
                pgraphrag_text::first_k_chars(&self.full_text(title, head), self.k).to_string()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_counts_scalar_values_and_the_joiner() {
        let f = FirstKCharacters::new(4);
        assert_eq!(f.context(Some("日本"), "語です"), "日本\n語");
        assert_eq!(f.context(None, "👍🏽ok!"), "👍🏽ok");
        assert_eq!(f.context(Some("abcdef"), "xyz"), "abcd");
        assert_eq!(f.context(Some("ab"), ""), "ab\n", "as the corpus builder");
        assert_eq!(f.context(None, ""), "");
        assert_eq!(FirstKCharacters::new(0).context(Some("a"), "b"), "");
    }
}
