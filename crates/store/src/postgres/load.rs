//! Loading: a split (and review JSONL) → the graph of `pgraphrag-graph` → binary COPY.

use std::io::BufRead;
use std::path::{Path, PathBuf};

use ::postgres::binary_copy::BinaryCopyInWriter;
use ::postgres::types::Type;
use pgraphrag_core::{Entry, Progress};
use pgraphrag_data::{IdPolicy, Split};
use pgraphrag_graph::{Duplicates, GraphOptions, ItemId, UserItemGraph};
use serde_json::Value;

use super::schema::{self, Layout, dataset_schema, validate_dataset_name};
use super::store::{Error, PgStore, Result, query_err, redact};

/// How to load a dataset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadOptions {
    /// The graph's duplicate handling (the released code: `GraphOptions::notebook()`).
    pub graph: GraphOptions,
    /// How product ids become item ids (the released code: `IdPolicy::KeepJsonType`).
    pub ids: IdPolicy,
    /// Hash partitions per review table (spread round-robin over the shard servers).
    pub partitions: usize,
    /// Drop and reload a dataset that exists.
    pub replace: bool,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            graph: GraphOptions::default(),
            ids: IdPolicy::default(),
            partitions: 8,
            replace: false,
        }
    }
}

/// What a load stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LoadSummary {
    /// Reviews stored (graph slots).
    pub reviews: usize,
    /// Inserts that overwrote an earlier review ([`pgraphrag_graph::Duplicates::Overwrite`]).
    pub overwritten: usize,
    /// Distinct users.
    pub users: usize,
    /// Targets (split records).
    pub targets: usize,
    /// Review JSONL lines read.
    pub jsonl_reviews: usize,
}

/// How `meta` names the graph options (their serde names).
pub(crate) fn option_names(opts: &LoadOptions) -> (&'static str, &'static str) {
    let dup = match opts.graph.duplicates {
        Duplicates::KeepAll => "keep-all",
        Duplicates::Overwrite => "overwrite",
    };
    let ids = match opts.ids {
        IdPolicy::KeepJsonType => "keep-json-type",
        IdPolicy::Normalize => "normalize",
    };
    (dup, ids)
}

/// Parses one review JSONL line: `{"user", "item", "title", "text", "rating", "time"}` (only
/// `user` and `item` required; an empty title or text counts as missing, as in a split).
///
/// ```
/// use pgraphrag_graph::ItemId;
/// let (e, item) = pgraphrag_store::postgres::parse_review_line(r#"{"user": "u", "item": 7, "title": "", "text": "ok", "rating": 4}"#, 3).unwrap();
/// assert_eq!((e.id, e.author.as_str(), e.title, item), (3, "u", None, ItemId::Int(7)));
/// assert!(pgraphrag_store::postgres::parse_review_line(r#"{"item": 7}"#, 0).unwrap_err().contains("\"user\""));
/// ```
pub fn parse_review_line(
    line: &str,
    doc_id: usize,
) -> std::result::Result<(Entry, ItemId), String> {
    let v: Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
    let Value::Object(o) = v else {
        return Err("expected a JSON object".into());
    };
    let text = |k: &str| -> std::result::Result<Option<String>, String> {
        match o.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if s.is_empty() => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(format!("\"{k}\": expected a string or null")),
        }
    };
    let author = text("user")?.ok_or("\"user\": missing (a non-empty string)")?;
    let item = match o.get("item") {
        Some(Value::String(s)) => ItemId::Str(s.clone()),
        Some(Value::Number(n)) if n.as_i64().is_some() => ItemId::Int(n.as_i64().unwrap_or(0)),
        _ => return Err("\"item\": missing or not a string or an integer".into()),
    };
    let rating = match o.get("rating") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => n.as_f64().filter(|x| x.is_finite()),
        Some(_) => return Err("\"rating\": expected a number or null".into()),
    };
    let time = match o.get("time") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) if n.as_i64().is_some() => n.as_i64(),
        Some(_) => return Err("\"time\": expected an integer or null".into()),
    };
    let entry = Entry {
        id: doc_id,
        author,
        item: item.to_string(),
        title: text("title")?,
        text: text("text")?,
        rating,
        time,
    };
    Ok((entry, item))
}

/// Appends the reviews of a JSONL file to `graph`, doc ids counting on from `first_doc`.
fn read_jsonl(
    graph: &mut UserItemGraph,
    path: &Path,
    ids: IdPolicy,
    first_doc: usize,
) -> Result<usize> {
    let file = std::fs::File::open(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let mut n = 0;
    for (i, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
        if line.trim().is_empty() {
            continue;
        }
        let (entry, item) =
            parse_review_line(&line, first_doc + n).map_err(|message| Error::Jsonl {
                path: path.to_path_buf(),
                line: i + 1,
                message,
            })?;
        graph.insert_keyed(entry, ids.apply(&item))?;
        n += 1;
    }
    Ok(n)
}

const ROWS_PER_TICK: usize = 10_000;

impl PgStore {
    /// Loads `split` (its reviews in file order, then the reviews of each `jsonl` file) as
    /// dataset `dataset`: builds the graph with `opts` exactly as the in-memory path does
    /// (`Split::entries`, `UserItemGraph::insert_keyed`), then copies its reviews with binary
    /// COPY into both partitioned tables, its users, and the split's targets. Progress counts
    /// reviews. A failed load leaves no readable dataset (its `meta` row is written last).
    pub fn load(
        &mut self,
        dataset: &str,
        split: &Split,
        jsonl: &[PathBuf],
        opts: &LoadOptions,
        progress: &dyn Progress,
    ) -> Result<LoadSummary> {
        validate_dataset_name(dataset)?;
        let mut graph = UserItemGraph::new(opts.graph);
        for (entry, item) in split.entries(opts.ids) {
            graph.insert_keyed(entry, item)?;
        }
        let mut summary = LoadSummary::default();
        let mut next_doc = split.num_reviews();
        for path in jsonl {
            let n = read_jsonl(&mut graph, path, opts.ids, next_doc)?;
            next_doc += n;
            summary.jsonl_reviews += n;
        }
        summary.reviews = graph.num_reviews();
        summary.overwritten = graph.num_overwritten();
        summary.users = graph.num_users();
        summary.targets = split.users.len();
        self.load_graph(dataset, &graph, split, opts, progress)?;
        Ok(summary)
    }

    /// Loads an already built `graph` (with `split`'s records as the targets) as `dataset`.
    /// `opts.graph` and `opts.ids` must be what `graph` was built with (they are recorded).
    pub fn load_graph(
        &mut self,
        dataset: &str,
        graph: &UserItemGraph,
        split: &Split,
        opts: &LoadOptions,
        progress: &dyn Progress,
    ) -> Result<()> {
        validate_dataset_name(dataset)?;
        let partitions = opts.partitions.clamp(1, 4096);
        if schema::exists(&mut self.client, dataset)? {
            if !opts.replace {
                return Err(Error::Exists {
                    dataset: dataset.into(),
                    url: redact(&self.url),
                });
            }
            schema::drop_dataset(self, dataset)?;
        } else {
            // A failed earlier load may have left a schema without meta.
            schema::drop_dataset(self, dataset)?;
        }
        let layout = schema::create(self, dataset, partitions)?;
        let s = dataset_schema(dataset);
        progress.start(graph.num_reviews() as u64, "reviews");
        let out = copy_all(self, &s, graph, split, progress);
        progress.finish();
        out?;
        let servers: Vec<String> = match &layout {
            Layout::Single => Vec::new(),
            Layout::Sharded(shards) => shards.iter().map(|x| x.server.clone()).collect(),
        };
        let what = || format!("writing {s}.meta");
        let (dup, ids) = option_names(opts);
        self.client
            .execute(
                &format!(
                    "INSERT INTO {s}.meta (dataset, partitions, reviews, users, targets, \
                     duplicates, ids, servers) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
                ),
                &[
                    &dataset,
                    &(partitions as i32),
                    &(graph.num_reviews() as i64),
                    &(graph.num_users() as i64),
                    &(split.users.len() as i64),
                    &dup,
                    &ids,
                    &servers,
                ],
            )
            .map_err(query_err(what()))?;
        Ok(())
    }
}

/// Copies reviews (through a staging table, then into both partitioned copies), users and
/// targets in one transaction.
fn copy_all(
    store: &mut PgStore,
    s: &str,
    graph: &UserItemGraph,
    split: &Split,
    progress: &dyn Progress,
) -> Result<()> {
    let mut tx = store
        .client
        .transaction()
        .map_err(query_err("starting the load transaction"))?;
    tx.batch_execute(&format!(
        "CREATE TEMP TABLE pgraphrag_staging ({}) ON COMMIT DROP",
        schema::REVIEW_COLUMNS
    ))
    .map_err(query_err("creating the staging table"))?;
    let sink = tx
        .copy_in("COPY pgraphrag_staging FROM STDIN (FORMAT binary)")
        .map_err(query_err("starting COPY of the reviews"))?;
    let types = [
        Type::TEXT,
        Type::INT8,
        Type::INT8,
        Type::TEXT,
        Type::BOOL,
        Type::TEXT,
        Type::TEXT,
        Type::FLOAT8,
        Type::INT8,
    ];
    let mut w = BinaryCopyInWriter::new(sink, &types);
    for (slot, r) in graph.reviews().iter().enumerate() {
        let e = &r.entry;
        let (item, is_int) = match &r.item {
            ItemId::Int(i) => (i.to_string(), true),
            ItemId::Str(x) => (x.clone(), false),
        };
        w.write(&[
            &e.author,
            &(slot as i64),
            &(e.id as i64),
            &item,
            &is_int,
            &e.title,
            &e.text,
            &e.rating,
            &e.time,
        ])
        .map_err(query_err(format!("COPY of review slot {slot}")))?;
        if (slot + 1) % ROWS_PER_TICK == 0 {
            progress.advance(ROWS_PER_TICK as u64);
        }
    }
    w.finish()
        .map_err(query_err("finishing COPY of the reviews"))?;
    progress.advance((graph.num_reviews() % ROWS_PER_TICK) as u64);
    for (table, _) in schema::REVIEW_TABLES {
        tx.batch_execute(&format!(
            "INSERT INTO {s}.{table} SELECT * FROM pgraphrag_staging"
        ))
        .map_err(query_err(format!("filling {s}.{table}")))?;
    }
    let sink = tx
        .copy_in(&format!("COPY {s}.users FROM STDIN (FORMAT binary)"))
        .map_err(query_err(format!("starting COPY of {s}.users")))?;
    let mut w = BinaryCopyInWriter::new(sink, &[Type::INT8, Type::TEXT]);
    for (i, u) in graph.users().enumerate() {
        w.write(&[&(i as i64), &u])
            .map_err(query_err(format!("COPY of {s}.users")))?;
    }
    w.finish()
        .map_err(query_err(format!("finishing COPY of {s}.users")))?;
    let sink = tx
        .copy_in(&format!("COPY {s}.targets FROM STDIN (FORMAT binary)"))
        .map_err(query_err(format!("starting COPY of {s}.targets")))?;
    let types = [
        Type::INT8,
        Type::TEXT,
        Type::TEXT,
        Type::TEXT,
        Type::FLOAT8,
        Type::TEXT,
        Type::BOOL,
    ];
    let mut w = BinaryCopyInWriter::new(sink, &types);
    for (i, u) in split.users.iter().enumerate() {
        let Some(t) = u.target() else { continue };
        let (pid, is_int) = match &t.pid {
            ItemId::Int(x) => (x.to_string(), true),
            ItemId::Str(x) => (x.clone(), false),
        };
        w.write(&[
            &(i as i64),
            &u.id,
            &t.title,
            &t.text,
            &t.rating,
            &pid,
            &is_int,
        ])
        .map_err(query_err(format!("COPY of {s}.targets")))?;
    }
    w.finish()
        .map_err(query_err(format!("finishing COPY of {s}.targets")))?;
    tx.commit().map_err(query_err("committing the load"))?;
    store
        .client
        .batch_execute(&format!(
            "ANALYZE {s}.users; ANALYZE {s}.targets; ANALYZE {s}.reviews_by_user; \
             ANALYZE {s}.reviews_by_item;"
        ))
        .map_err(query_err(format!("analyzing {s}")))
}
