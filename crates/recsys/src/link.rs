//! Linking ML-1M movies to the Freebase KG through ML-100K's titles, years and links.
use std::collections::{BTreeMap, HashMap};
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::ml1m::Ml1m;
use crate::ml100k::Ml100k;
use crate::title::normalize_title;

/// Where an ML-1M movie links to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KgLink {
    /// The ML-100K item it matched.
    pub ml100k_item: u32,
    /// That item's Freebase entity (`ml-100k.link`).
    pub entity: String,
}

/// What [`link_ml1m`] linked.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkReport {
    /// Movies in `movies.dat`.
    pub ml1m_movies: usize,
    /// Of those, linked to an entity.
    pub linked_movies: usize,
    /// (normalised title, year) keys that more than one *linked* ML-100K item shares (the
    /// lowest item id is used).
    pub ambiguous_keys: usize,
    /// Distinct movies in the rows of `test_filtered.csv` (history items and targets).
    pub slice_movies: usize,
    /// Of those, linked.
    pub slice_linked: usize,
    /// Rows.
    pub rows: usize,
    /// Rows whose target is linked.
    pub targets_linked: usize,
    /// History items over all rows.
    pub history_items: usize,
    /// Of those, linked.
    pub history_linked: usize,
}

impl fmt::Display for LinkReport {
    /// A few lines for a log.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pct = |a: usize, b: usize| {
            if b == 0 {
                0.0
            } else {
                100.0 * a as f64 / b as f64
            }
        };
        writeln!(
            f,
            "ML-1M movies linked to the KG: {} of {} ({:.1}%); ambiguous ML-100K keys: {}",
            self.linked_movies,
            self.ml1m_movies,
            pct(self.linked_movies, self.ml1m_movies),
            self.ambiguous_keys
        )?;
        writeln!(
            f,
            "distinct movies of test_filtered.csv linked: {} of {} ({:.1}%)",
            self.slice_linked,
            self.slice_movies,
            pct(self.slice_linked, self.slice_movies)
        )?;
        write!(
            f,
            "targets linked: {} of {} rows ({:.1}%); history items linked: {} of {} ({:.1}%)",
            self.targets_linked,
            self.rows,
            pct(self.targets_linked, self.rows),
            self.history_linked,
            self.history_items,
            pct(self.history_linked, self.history_items)
        )
    }
}

/// Links ML-1M movies to KG entities by (normalised title, year): each ML-1M movie's
/// [`normalize_title`] and year are looked up among the ML-100K items that have a link
/// (`ml-100k.link`); a match gives that item's entity. Several linked ML-100K items with the
/// same key (ML-100K lists some movies twice) resolve to the lowest item id, counted in
/// `ambiguous_keys`. Items without a year never match. Returns the links by ML-1M movie id and
/// the report.
///
/// ```
/// use pgraphrag_recsys::{link_ml1m, Ml100k, Ml1m, Movie};
/// let movie = |id, title: &str| Movie { id, title: title.into(), year: Some(1999), genres: vec![], line: 1 };
/// let mut ml100k = Ml100k::default();
/// ml100k.items.insert(5, movie(5, "Matrix, The"));
/// ml100k.links.insert(5, "m.matrix".into());
/// let mut ml1m = Ml1m::default();
/// ml1m.movies.insert(2571, movie(2571, "Matrix, The"));
/// ml1m.movies.insert(1, movie(1, "Toy Story"));
/// let (links, report) = link_ml1m(&ml1m, &ml100k);
/// assert_eq!(links[&2571].entity, "m.matrix");
/// assert_eq!((report.linked_movies, report.ml1m_movies), (1, 2));
/// ```
pub fn link_ml1m(ml1m: &Ml1m, ml100k: &Ml100k) -> (BTreeMap<u32, KgLink>, LinkReport) {
    let mut by_key: HashMap<(String, u16), Vec<u32>> = HashMap::new();
    for (&id, m) in &ml100k.items {
        if let (Some(year), true) = (m.year, ml100k.links.contains_key(&id)) {
            by_key
                .entry((normalize_title(&m.title), year))
                .or_default()
                .push(id);
        }
    }
    let mut report = LinkReport {
        ml1m_movies: ml1m.movies.len(),
        ambiguous_keys: by_key.values().filter(|v| v.len() > 1).count(),
        ..Default::default()
    };
    let mut links = BTreeMap::new();
    for (&id, m) in &ml1m.movies {
        let Some(year) = m.year else { continue };
        let hit = by_key
            .get(&(normalize_title(&m.title), year))
            .and_then(|v| v.iter().min());
        if let Some(&item) = hit
            && let Some(entity) = ml100k.links.get(&item)
        {
            links.insert(
                id,
                KgLink {
                    ml100k_item: item,
                    entity: entity.clone(),
                },
            );
        }
    }
    report.linked_movies = links.len();
    let slice = ml1m.slice_movies();
    report.slice_movies = slice.len();
    report.slice_linked = slice.iter().filter(|i| links.contains_key(i)).count();
    report.rows = ml1m.rows.len();
    for r in &ml1m.rows {
        report.targets_linked += usize::from(links.contains_key(&r.target));
        report.history_items += r.history.len();
        report.history_linked += r.history.iter().filter(|i| links.contains_key(i)).count();
    }
    (links, report)
}
