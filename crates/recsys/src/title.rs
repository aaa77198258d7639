//! Movies and the title rules: splitting the year off an ML-1M title, the display form and
//! the normalised matching key.
use serde::{Deserialize, Serialize};

/// A catalogue item: a movie of MovieLens.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Movie {
    /// The item id (ML-100K `item_id`, ML-1M `MovieID`).
    pub id: u32,
    /// The title as the file writes it, without the year (`"Usual Suspects, The"`).
    pub title: String,
    /// The release year, when the file gives four digits (ML-100K item 267 has `unkonwn`).
    pub year: Option<u16>,
    /// The genres (`Animation`, `Children's`, ...).
    pub genres: Vec<String>,
    /// The line of the item file.
    pub line: usize,
}

/// Leading articles that MovieLens moves behind a comma (`"Matrix, The"`), English and the
/// foreign ones its titles use.
const ARTICLES: [&str; 16] = [
    "The", "A", "An", "Les", "La", "Le", "L'", "Il", "El", "Das", "Die", "Der", "Los", "Las", "Lo",
    "Un",
];

/// Splits an ML-1M title into the title and its trailing `(YYYY)` year; spaces around the
/// parentheses are optional (`"Associate, The (L'Associe)(1982)"`). `None` without a year.
///
/// ```
/// use pgraphrag_recsys::split_title_year;
/// assert_eq!(split_title_year("Matrix, The (1999)"), Some(("Matrix, The", 1999)));
/// assert_eq!(split_title_year("Associate, The (L'Associe)(1982)"), Some(("Associate, The (L'Associe)", 1982)));
/// assert_eq!(split_title_year("No year"), None);
/// ```
pub fn split_title_year(s: &str) -> Option<(&str, u16)> {
    let s = s.trim_end();
    let rest = s.strip_suffix(')')?;
    let open = rest.rfind('(')?;
    let year = &rest[open + 1..];
    if year.len() != 4 || !year.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((rest[..open].trim_end(), year.parse().ok()?))
}

/// The year of a RecBole `release_year` field: four digits, else `None`.
pub(crate) fn parse_year(s: &str) -> Option<u16> {
    let s = s.trim();
    (s.len() == 4 && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

/// Moves a trailing `", <article>"` (see the list in the crate docs) to the front.
fn article_first(title: &str) -> String {
    let t = title.trim();
    if let Some(comma) = t.rfind(", ") {
        let art = &t[comma + 2..];
        if ARTICLES.iter().any(|a| a.eq_ignore_ascii_case(art)) {
            let sep = if art.ends_with('\'') { "" } else { " " };
            return format!("{art}{sep}{}", &t[..comma]);
        }
    }
    t.to_string()
}

/// Removes every parenthesised part (`"(a.k.a. Leon: The Professional)"`, an original-
/// language title), nested or not; an unclosed `(` removes the rest.
fn without_parentheses(title: &str) -> String {
    let mut depth = 0usize;
    let mut out = String::with_capacity(title.len());
    for c in title.chars() {
        match c {
            '(' => depth += 1,
            ')' if depth > 0 => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

/// A title as shown to a reader: a trailing article moved to the front, the rest unchanged
/// (`"Usual Suspects, The"` → `"The Usual Suspects"`).
///
/// ```
/// use pgraphrag_recsys::display_title;
/// assert_eq!(display_title("Usual Suspects, The"), "The Usual Suspects");
/// assert_eq!(display_title("Postino, Il"), "Il Postino");
/// assert_eq!(display_title("Toy Story"), "Toy Story");
/// ```
pub fn display_title(title: &str) -> String {
    article_first(title)
}

/// The key titles are matched on (ML-1M to ML-100K): every parenthesised part removed, a
/// trailing article moved to the front, lowercased, every character that is neither
/// alphanumeric nor whitespace replaced by a space, whitespace collapsed. Letters keep their
/// accents (`é` stays `é`).
///
/// ```
/// use pgraphrag_recsys::normalize_title;
/// assert_eq!(normalize_title("Matrix, The"), "the matrix");
/// assert_eq!(normalize_title("Professional, The (a.k.a. Leon: The Professional)"), "the professional");
/// assert_eq!(normalize_title("What's Love Got to Do with It?"), "what s love got to do with it");
/// assert_eq!(normalize_title("Misérables, Les"), "les misérables");
/// ```
pub fn normalize_title(title: &str) -> String {
    let t = article_first(&without_parentheses(title));
    let spaced: String = t
        .chars()
        .flat_map(char::to_lowercase)
        .map(|c| {
            if c.is_alphanumeric() || c.is_whitespace() {
                c
            } else {
                ' '
            }
        })
        .collect();
    spaced.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules() {
        assert_eq!(
            normalize_title("Associate, The (L'Associe)"),
            "the associate"
        );
        assert_eq!(
            normalize_title("Flower of My Secret, The (La Flor de Mi Secreto)"),
            "the flower of my secret"
        );
        assert_eq!(
            normalize_title("Jungle2Jungle (a.k.a. Jungle 2 Jungle)"),
            "jungle2jungle"
        );
        assert_eq!(
            normalize_title("Sunset Blvd. (a.k.a. Sunset Boulevard)"),
            "sunset blvd"
        );
        assert_eq!(normalize_title("Open (unclosed"), "open");
        assert_eq!(display_title("Enfant, L'"), "L'Enfant");
        assert_eq!(split_title_year("X (19999)"), None);
        assert_eq!(parse_year("unkonwn"), None);
        assert_eq!(parse_year("1995"), Some(1995));
    }
}
