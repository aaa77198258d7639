//! The MovieLens-1M slice of K-RagRec: `movies.dat`, `test_filtered.csv`, `movies_id_name.txt`.
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::rows::Row;
use crate::text::{Decode, lines, parse_flag, parse_id, parse_py_list, parse_time, read};
use crate::title::{Movie, split_title_year};
use crate::{Error, Result};
use pgraphrag_data::RecboleError;

/// One row of `test_filtered.csv`: a user, ten history items with like (1) / dislike (0)
/// flags, the target and its flag.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ml1mRow {
    /// The user id.
    pub user: u32,
    /// The history items, oldest first (the file's order).
    pub history: Vec<u32>,
    /// Like flags of the history items (`history_rating`), same order.
    pub history_liked: Vec<bool>,
    /// The target item (`movie_id`).
    pub target: u32,
    /// The target's like flag (`rating`).
    pub target_liked: bool,
    /// Unix seconds of the target's rating.
    pub timestamp: i64,
    /// The line of `test_filtered.csv`.
    pub line: usize,
}

impl Ml1mRow {
    /// The row as a [`Row`] (user, history, target).
    ///
    /// ```
    /// let r = pgraphrag_recsys::Ml1mRow { user: 1, history: vec![2, 3], history_liked: vec![true, false],
    ///                                     target: 4, target_liked: true, timestamp: 0, line: 2 };
    /// assert_eq!(r.row().history, [2, 3]);
    /// ```
    pub fn row(&self) -> Row {
        Row {
            user: self.user,
            history: self.history.clone(),
            target: self.target,
        }
    }
}

/// The ML-1M slice, read by [`Ml1m::load`].
#[derive(Debug, Clone, Default)]
pub struct Ml1m {
    /// The catalogue (`movies.dat`), by movie id; titles without the year.
    pub movies: BTreeMap<u32, Movie>,
    /// The rows of `test_filtered.csv`, in file order.
    pub rows: Vec<Ml1mRow>,
    /// `movies_id_name.txt`: movie id → title as the released code's prompts write it.
    pub names: BTreeMap<u32, String>,
    /// Whether `movies.dat` was not UTF-8 and was decoded as ISO-8859-1 (the original ML-1M is).
    pub movies_latin1: bool,
    /// `movies.dat` (errors name it as the catalogue).
    pub movies_path: PathBuf,
}

impl Ml1m {
    /// Reads `movies.dat` (`MovieID::Title (Year)::Genre|Genre`; ISO-8859-1 in the original
    /// ML-1M: decoded as UTF-8 when the whole file is valid UTF-8, else as ISO-8859-1, which
    /// cannot fail), `test_filtered.csv` (header `user_id,history_movie_id,history_rating,
    /// movie_id,rating,timestamp`; the two lists are Python literals such as `"['2640',
    /// '2178']"` and `"[1, 0]"`) and `movies_id_name.txt` (`id<TAB>title`, UTF-8) from `dir`.
    ///
    /// Errors name the file and line: a wrong number of fields, an unreadable value, a movie
    /// twice in `movies.dat`, a title without `(YYYY)`, history and flag lists of different
    /// lengths, an empty history, a history item or target not in `movies.dat`, a target that
    /// is also in its history, non-UTF-8 bytes in the CSV or the names file, a movie twice in
    /// the names file or none at all, a file whose last line has no newline (cut short).
    ///
    /// ```
    /// let dir = tempfile::tempdir().unwrap();
    /// let w = |n: &str, s: &[u8]| std::fs::write(dir.path().join(n), s).unwrap();
    /// w("movies.dat", b"1::Toy Story (1995)::Animation\n2::Mis\xe9rables, Les (1995)::Drama\n3::Heat (1995)::Action\n");
    /// w("test_filtered.csv", b"user_id,history_movie_id,history_rating,movie_id,rating,timestamp\n\
    ///                          5,\"['1', '2']\",\"[1, 0]\",3,1,958742610\n");
    /// w("movies_id_name.txt", b"1\tToy Story\n");
    /// let ml = pgraphrag_recsys::Ml1m::load(dir.path()).unwrap();
    /// assert_eq!(ml.movies[&2].title, "Misérables, Les");
    /// assert!(ml.movies_latin1);
    /// assert_eq!((ml.rows[0].history.clone(), ml.rows[0].target), (vec![1, 2], 3));
    /// ```
    pub fn load(dir: &Path) -> Result<Self> {
        let movies_path = dir.join("movies.dat");
        let (movies, movies_latin1) = read_movies(&movies_path)?;
        let rows = read_rows(&dir.join("test_filtered.csv"), &movies, &movies_path)?;
        let names = read_names(&dir.join("movies_id_name.txt"))?;
        Ok(Ml1m {
            movies,
            rows,
            names,
            movies_latin1,
            movies_path,
        })
    }

    /// The distinct movies of the rows (history items and targets).
    ///
    /// ```
    /// assert!(pgraphrag_recsys::Ml1m::default().slice_movies().is_empty());
    /// ```
    pub fn slice_movies(&self) -> BTreeSet<u32> {
        self.rows
            .iter()
            .flat_map(|r| r.history.iter().copied().chain([r.target]))
            .collect()
    }
}

fn read_movies(path: &Path) -> Result<(BTreeMap<u32, Movie>, bool)> {
    let bytes = read(path)?;
    let decoded = lines(path, &bytes, Decode::Utf8OrLatin1)?;
    let mut movies: BTreeMap<u32, Movie> = BTreeMap::new();
    for (line, text) in decoded.lines {
        let f: Vec<&str> = text.split("::").collect();
        if f.len() != 3 {
            return Err(Error::from(RecboleError::Fields {
                path: path.to_path_buf(),
                line,
                expected: 3,
                found: f.len(),
            }));
        }
        let id = parse_id(path, line, "MovieID", f[0])?;
        let (title, year) = split_title_year(f[1]).ok_or_else(|| Error::Value {
            path: path.to_path_buf(),
            line,
            field: "Title".into(),
            value: f[1].to_string(),
            expected: "a title ending in (YYYY)".into(),
        })?;
        if let Some(prev) = movies.get(&id) {
            return Err(Error::Duplicate {
                path: path.to_path_buf(),
                line,
                what: "movie",
                id: id.to_string(),
                first: prev.line,
            });
        }
        let genres = f[2]
            .split('|')
            .map(str::trim)
            .filter(|g| !g.is_empty())
            .map(str::to_string)
            .collect();
        movies.insert(
            id,
            Movie {
                id,
                title: title.to_string(),
                year: Some(year),
                genres,
                line,
            },
        );
    }
    Ok((movies, decoded.latin1))
}

const COLUMNS: [&str; 6] = [
    "user_id",
    "history_movie_id",
    "history_rating",
    "movie_id",
    "rating",
    "timestamp",
];

fn read_rows(path: &Path, movies: &BTreeMap<u32, Movie>, catalogue: &Path) -> Result<Vec<Ml1mRow>> {
    let bytes = read(path)?;
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(bytes.as_slice());
    let csv_err = |e: csv::Error| Error::Csv {
        path: path.to_path_buf(),
        line: e.position().map(|p| p.line()).unwrap_or(0),
        message: e.to_string(),
    };
    let mut records = rdr.byte_records();
    let header = match records.next() {
        Some(h) => h.map_err(csv_err)?,
        None => csv::ByteRecord::new(),
    };
    let found: Vec<String> = header
        .iter()
        .map(|h| String::from_utf8_lossy(h).trim().to_string())
        .collect();
    let mut idx: HashMap<&str, usize> = HashMap::new();
    for c in COLUMNS {
        let at = found.iter().position(|h| h == c).ok_or_else(|| {
            Error::from(RecboleError::MissingColumn {
                path: path.to_path_buf(),
                column: c.to_string(),
                found: pgraphrag_data::recbole::header_names(&found),
            })
        })?;
        idx.insert(c, at);
    }
    let mut rows = Vec::new();
    for rec in records {
        let rec = rec.map_err(csv_err)?;
        let line = rec.position().map(|p| p.line() as usize).unwrap_or(0);
        if rec.len() == 1
            && rec
                .get(0)
                .is_some_and(|f| f.iter().all(u8::is_ascii_whitespace))
        {
            continue; // a blank line
        }
        if rec.len() != found.len() {
            return Err(Error::from(RecboleError::Fields {
                path: path.to_path_buf(),
                line,
                expected: found.len(),
                found: rec.len(),
            }));
        }
        let field = |c: &str| -> Result<&str> {
            let raw = rec.get(idx[c]).unwrap_or(b"");
            std::str::from_utf8(raw).map_err(|_| {
                Error::from(RecboleError::NotUtf8 {
                    path: path.to_path_buf(),
                    line,
                })
            })
        };
        let user = parse_id(path, line, "user_id", field("user_id")?)?;
        let hist_text = field("history_movie_id")?;
        let flags_text = field("history_rating")?;
        let history = parse_py_list(path, line, "history_movie_id", hist_text)?
            .into_iter()
            .map(|v| parse_id(path, line, "history_movie_id", v))
            .collect::<Result<Vec<u32>>>()?;
        let history_liked = parse_py_list(path, line, "history_rating", flags_text)?
            .into_iter()
            .map(|v| parse_flag(path, line, "history_rating", v))
            .collect::<Result<Vec<bool>>>()?;
        let target = parse_id(path, line, "movie_id", field("movie_id")?)?;
        let target_liked = parse_flag(path, line, "rating", field("rating")?)?;
        let timestamp = parse_time(path, line, "timestamp", field("timestamp")?)?;
        if history.is_empty() {
            return Err(Error::EmptyHistory {
                path: path.to_path_buf(),
                line,
            });
        }
        if history.len() != history_liked.len() {
            return Err(Error::Value {
                path: path.to_path_buf(),
                line,
                field: "history_rating".into(),
                value: flags_text.to_string(),
                expected: format!("{} flags, one per history item", history.len()),
            });
        }
        for &item in history.iter().chain([&target]) {
            if !movies.contains_key(&item) {
                return Err(Error::UnknownItem {
                    path: path.to_path_buf(),
                    line,
                    item,
                    catalogue: catalogue.to_path_buf(),
                });
            }
        }
        if history.contains(&target) {
            return Err(Error::TargetInHistory {
                path: path.to_path_buf(),
                line,
                item: target,
            });
        }
        rows.push(Ml1mRow {
            user,
            history,
            history_liked,
            target,
            target_liked,
            timestamp,
            line,
        });
    }
    Ok(rows)
}

fn read_names(path: &Path) -> Result<BTreeMap<u32, String>> {
    let bytes = read(path)?;
    let mut names = BTreeMap::new();
    let mut first: HashMap<u32, usize> = HashMap::new();
    for (line, text) in lines(path, &bytes, Decode::Utf8)?.lines {
        let Some((id, name)) = text.split_once('\t') else {
            return Err(Error::from(RecboleError::Fields {
                path: path.to_path_buf(),
                line,
                expected: 2,
                found: 1,
            }));
        };
        let id = parse_id(path, line, "id", id)?;
        if let Some(&prev) = first.get(&id) {
            return Err(Error::Duplicate {
                path: path.to_path_buf(),
                line,
                what: "movie",
                id: id.to_string(),
                first: prev,
            });
        }
        first.insert(id, line);
        names.insert(id, name.trim().to_string());
    }
    if names.is_empty() {
        return Err(Error::EmptyFile {
            path: path.to_path_buf(),
            what: "movie names",
        });
    }
    Ok(names)
}
