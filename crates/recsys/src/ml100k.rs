//! MovieLens-100K as RecBole ships it: `ml-100k.{inter,item,kg,link}` atomic files.
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use pgraphrag_core::RATING_SCALE;
use serde::{Deserialize, Serialize};

use crate::text::{parse_f32, parse_id, parse_time, read_atomic};
use crate::title::{Movie, parse_year};
use crate::{Error, Result};

/// One rating of ML-100K.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interaction {
    /// The user id.
    pub user: u32,
    /// The item id.
    pub item: u32,
    /// The rating (1–5).
    pub rating: f32,
    /// Unix seconds.
    pub timestamp: i64,
    /// The line of `ml-100k.inter`.
    pub line: usize,
}

/// One KG triple `head relation tail` (Freebase ids) with its line of `ml-100k.kg`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Triple {
    /// The head entity (`m.04ctbw8`).
    pub head: String,
    /// The relation (`film.producer.film`).
    pub relation: String,
    /// The tail entity.
    pub tail: String,
    /// The line.
    pub line: usize,
}

/// MovieLens-100K with its Freebase KG, read by [`Ml100k::load`].
#[derive(Debug, Clone, Default)]
pub struct Ml100k {
    /// The ratings, in file order.
    pub interactions: Vec<Interaction>,
    /// The catalogue, by item id.
    pub items: BTreeMap<u32, Movie>,
    /// The KG triples, in file order.
    pub triples: Vec<Triple>,
    /// Item id → Freebase entity (`ml-100k.link`).
    pub links: BTreeMap<u32, String>,
    /// The folder it was read from (errors name the files in it).
    pub dir: PathBuf,
}

/// The file names [`Ml100k::load`] reads from its folder.
pub const ML100K_FILES: [&str; 4] = [
    "ml-100k.inter",
    "ml-100k.item",
    "ml-100k.kg",
    "ml-100k.link",
];

impl Ml100k {
    /// Reads `ml-100k.item` (`item_id`, `movie_title`, `release_year`, `class`),
    /// `ml-100k.inter` (`user_id`, `item_id`, `rating`, `timestamp`), `ml-100k.kg`
    /// (`head_id`, `relation_id`, `tail_id`) and `ml-100k.link` (`item_id`, `entity_id`) from
    /// `dir`. Columns are found by name in each header; every line must have as many fields as
    /// its header. Errors name the file and line: an unreadable value, a rating off the 1-5
    /// scale ([`RATING_SCALE`]), an item of `.inter` or
    /// `.link` missing from `.item`, an item twice in `.item` or `.link`, a KG line with an
    /// empty field. Blank lines are ignored. A `release_year` that is not four digits gives
    /// `year: None`.
    ///
    /// ```
    /// let dir = tempfile::tempdir().unwrap();
    /// let w = |n: &str, s: &str| std::fs::write(dir.path().join(n), s).unwrap();
    /// w("ml-100k.item", "item_id:token\tmovie_title:token_seq\trelease_year:token\tclass:token_seq\n1\tToy Story\t1995\tAnimation Comedy\n");
    /// w("ml-100k.inter", "user_id:token\titem_id:token\trating:float\ttimestamp:float\n7\t1\t4\t881250949\n");
    /// w("ml-100k.kg", "head_id:token\trelation_id:token\ttail_id:token\nm.1\tfilm.film.genre\tm.2\n");
    /// w("ml-100k.link", "item_id:token\tentity_id:token\n1\tm.1\n");
    /// let ml = pgraphrag_recsys::Ml100k::load(dir.path()).unwrap();
    /// assert_eq!((ml.interactions.len(), ml.items[&1].year, ml.links[&1].as_str()), (1, Some(1995), "m.1"));
    /// ```
    pub fn load(dir: &Path) -> Result<Self> {
        let items = read_items(&dir.join("ml-100k.item"))?;
        let item_path = dir.join("ml-100k.item");
        let unknown = |path: &Path, line, item| Error::UnknownItem {
            path: path.to_path_buf(),
            line,
            item,
            catalogue: item_path.clone(),
        };

        let inter = read_atomic(&dir.join("ml-100k.inter"))?;
        let [u, i, r, t] = ["user_id", "item_id", "rating", "timestamp"].map(|c| inter.column(c));
        let (u, i, r, t) = (u?, i?, r?, t?);
        let mut interactions = Vec::with_capacity(inter.rows.len());
        for (line, f) in &inter.rows {
            let p = inter.path.as_path();
            let item = parse_id(p, *line, "item_id", &f[i])?;
            if !items.contains_key(&item) {
                return Err(unknown(p, *line, item));
            }
            interactions.push(Interaction {
                user: parse_id(p, *line, "user_id", &f[u])?,
                item,
                rating: parse_rating(p, *line, &f[r])?,
                timestamp: parse_time(p, *line, "timestamp", &f[t])?,
                line: *line,
            });
        }

        let kg = read_atomic(&dir.join("ml-100k.kg"))?;
        let [h, rel, tl] = ["head_id", "relation_id", "tail_id"].map(|c| kg.column(c));
        let (h, rel, tl) = (h?, rel?, tl?);
        let mut triples = Vec::with_capacity(kg.rows.len());
        for (line, f) in &kg.rows {
            for (k, name) in [(h, "head_id"), (rel, "relation_id"), (tl, "tail_id")] {
                if f[k].is_empty() {
                    return Err(Error::Value {
                        path: kg.path.clone(),
                        line: *line,
                        field: name.to_string(),
                        value: String::new(),
                        expected: "a non-empty id".to_string(),
                    });
                }
            }
            triples.push(Triple {
                head: f[h].clone(),
                relation: f[rel].clone(),
                tail: f[tl].clone(),
                line: *line,
            });
        }

        let link = read_atomic(&dir.join("ml-100k.link"))?;
        let [li, le] = ["item_id", "entity_id"].map(|c| link.column(c));
        let (li, le) = (li?, le?);
        let mut links = BTreeMap::new();
        let mut first: HashMap<u32, usize> = HashMap::new();
        for (line, f) in &link.rows {
            let p = link.path.as_path();
            let item = parse_id(p, *line, "item_id", &f[li])?;
            if !items.contains_key(&item) {
                return Err(unknown(p, *line, item));
            }
            if f[le].is_empty() {
                return Err(Error::Value {
                    path: p.to_path_buf(),
                    line: *line,
                    field: "entity_id".into(),
                    value: String::new(),
                    expected: "a non-empty entity id".into(),
                });
            }
            if let Some(&prev) = first.get(&item) {
                return Err(Error::Duplicate {
                    path: p.to_path_buf(),
                    line: *line,
                    what: "linked item",
                    id: item.to_string(),
                    first: prev,
                });
            }
            first.insert(item, *line);
            links.insert(item, f[le].clone());
        }
        Ok(Ml100k {
            interactions,
            items,
            triples,
            links,
            dir: dir.to_path_buf(),
        })
    }

    /// The distinct users of the interactions.
    ///
    /// ```
    /// let ml = pgraphrag_recsys::Ml100k::default();
    /// assert!(ml.users().is_empty());
    /// ```
    pub fn users(&self) -> BTreeSet<u32> {
        self.interactions.iter().map(|x| x.user).collect()
    }

    /// Every item each user interacted with (any rating, any time).
    ///
    /// ```
    /// use pgraphrag_recsys::{Interaction, Ml100k};
    /// let mut ml = Ml100k::default();
    /// ml.interactions.push(Interaction { user: 1, item: 5, rating: 4.0, timestamp: 0, line: 2 });
    /// assert!(ml.interacted()[&1].contains(&5));
    /// ```
    pub fn interacted(&self) -> BTreeMap<u32, BTreeSet<u32>> {
        let mut m: BTreeMap<u32, BTreeSet<u32>> = BTreeMap::new();
        for x in &self.interactions {
            m.entry(x.user).or_default().insert(x.item);
        }
        m
    }
}

/// A rating on [`RATING_SCALE`] (ML-100K's 1 to 5 stars): one off the scale would count as
/// liked or not (the popularity gate counts ratings of 4 and up) as a wrong number.
fn parse_rating(path: &Path, line: usize, value: &str) -> Result<f32> {
    let r = parse_f32(path, line, "rating", value)?;
    if !RATING_SCALE.contains(&f64::from(r)) {
        return Err(Error::Value {
            path: path.to_path_buf(),
            line,
            field: "rating".into(),
            value: pgraphrag_data::shown(value),
            expected: "a rating from 1 to 5".into(),
        });
    }
    Ok(r)
}

fn read_items(path: &Path) -> Result<BTreeMap<u32, Movie>> {
    let f = read_atomic(path)?;
    let [i, t, y, g] = ["item_id", "movie_title", "release_year", "class"].map(|c| f.column(c));
    let (i, t, y) = (i?, t?, y?);
    // `class` (the genres) is optional.
    let g = g.ok();
    let mut items: BTreeMap<u32, Movie> = BTreeMap::new();
    for (line, r) in &f.rows {
        let id = parse_id(path, *line, "item_id", &r[i])?;
        if let Some(prev) = items.get(&id) {
            return Err(Error::Duplicate {
                path: path.to_path_buf(),
                line: *line,
                what: "item",
                id: id.to_string(),
                first: prev.line,
            });
        }
        items.insert(
            id,
            Movie {
                id,
                title: r[t].clone(),
                year: parse_year(&r[y]),
                genres: g
                    .map(|g| r[g].split_whitespace().map(str::to_string).collect())
                    .unwrap_or_default(),
                line: *line,
            },
        );
    }
    Ok(items)
}
