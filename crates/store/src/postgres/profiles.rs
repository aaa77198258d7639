//! [`PgProfiles`]: a loaded dataset as a [`ProfileSource`] and [`UserDirectory`].

use std::cell::RefCell;
use std::collections::HashMap;

use ::postgres::{Client, Row, Statement};
use pgraphrag_core::Entry;
use pgraphrag_data::{IdPolicy, Split, SplitReview, SplitUser};
use pgraphrag_graph::{
    Duplicates, GraphOptions, ItemId, ProfileRequest, ProfileSource, Review, ReviewId, Scope,
    SourcedProfile, UserDirectory,
};

use super::schema::{self, DatasetInfo, dataset_schema};
use super::store::{Error, Result, config, connect_config, driver_message, query_err};

const COLUMNS: &str = "user_id, slot, doc_id, item, item_is_int, title, body, rating, time";

struct Statements {
    by_user: Statement,
    by_item: Statement,
    by_users: Statement,
    by_items: Statement,
    position: Statement,
    positions: Statement,
    user_at: Statement,
    reviews_at: Statement,
}

/// A loaded dataset read through one connection: the profiles of
/// [`pgraphrag_graph::UserItemGraph::profile`] (same reviews, order, slots and duplicate
/// handling), each scope one query on one partition, a batch of profiles in two queries
/// (users' reviews from `reviews_by_user`, then the items' reviews from `reviews_by_item`).
/// Not `Sync`: open one per thread.
///
/// ```no_run
/// use pgraphrag_graph::{ItemId, ProfileSource, Scope, UserDirectory};
/// let p = pgraphrag_store::postgres::PgProfiles::open("postgres://postgres@127.0.0.1:55432/pgraphrag", "amazon_dev").unwrap();
/// let n = p.num_users().unwrap();
/// let first = p.user_at(0).unwrap().unwrap();
/// let profile = p.profile(&first, &ItemId::from("B000"), Scope::User).unwrap();
/// println!("{n} users; {first} has {} other reviews", profile.len());
/// ```
pub struct PgProfiles {
    client: RefCell<Client>,
    statements: Statements,
    info: DatasetInfo,
    /// The positions of the users of the last [`ProfileSource::profiles`] batch (their random
    /// review asks for them next).
    positions: RefCell<HashMap<String, usize>>,
}

impl std::fmt::Debug for PgProfiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgProfiles")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

impl PgProfiles {
    /// Connects to `url`, checks the schema version, the dataset and every partition, and
    /// prepares the profile queries.
    pub fn open(url: &str, dataset: &str) -> Result<Self> {
        let cfg = config(url)?;
        let mut client = connect_config(&cfg, url)?;
        schema::ensure_version(&mut client, url)?;
        let info = schema::info(&mut client, url, dataset)?;
        schema::check_partitions(&mut client, &info)?;
        let s = dataset_schema(dataset);
        let mut prepare = |sql: String| {
            client
                .prepare(&sql)
                .map_err(query_err(format!("preparing {sql}")))
        };
        let statements = Statements {
            by_user: prepare(format!(
                "SELECT {COLUMNS} FROM {s}.reviews_by_user WHERE user_id = $1 ORDER BY slot"
            ))?,
            by_item: prepare(format!(
                "SELECT {COLUMNS} FROM {s}.reviews_by_item WHERE item = $1 ORDER BY slot"
            ))?,
            by_users: prepare(format!(
                "SELECT {COLUMNS} FROM {s}.reviews_by_user WHERE user_id = ANY($1) ORDER BY slot"
            ))?,
            by_items: prepare(format!(
                "SELECT {COLUMNS} FROM {s}.reviews_by_item WHERE item = ANY($1) ORDER BY slot"
            ))?,
            position: prepare(format!("SELECT position FROM {s}.users WHERE user_id = $1"))?,
            positions: prepare(format!(
                "SELECT user_id, position FROM {s}.users WHERE user_id = ANY($1)"
            ))?,
            user_at: prepare(format!("SELECT user_id FROM {s}.users WHERE position = $1"))?,
            // One round trip; the scalar subquery prunes to one partition at run time.
            reviews_at: prepare(format!(
                "SELECT {COLUMNS} FROM {s}.reviews_by_user \
                 WHERE user_id = (SELECT user_id FROM {s}.users WHERE position = $1) ORDER BY slot"
            ))?,
        };
        Ok(PgProfiles {
            client: RefCell::new(client),
            statements,
            info,
            positions: RefCell::new(HashMap::new()),
        })
    }

    /// The dataset as its `meta` row records it.
    pub fn info(&self) -> &DatasetInfo {
        &self.info
    }

    /// The graph options and id policy the dataset was loaded with (`None` if `meta` holds
    /// names this build does not know).
    pub fn options(&self) -> Option<(GraphOptions, IdPolicy)> {
        let duplicates = match self.info.duplicates.as_str() {
            "keep-all" => Duplicates::KeepAll,
            "overwrite" => Duplicates::Overwrite,
            _ => return None,
        };
        let ids = match self.info.ids.as_str() {
            "keep-json-type" => IdPolicy::KeepJsonType,
            "normalize" => IdPolicy::Normalize,
            _ => return None,
        };
        Some((GraphOptions { duplicates }, ids))
    }

    /// The split's records as loaded: each user with only its target review (`profile[0]`,
    /// raw), in file order: what [`rank_all_from`](https://docs.rs/pgraphrag-eval) needs.
    pub fn targets(&self) -> Result<Split> {
        let s = dataset_schema(&self.info.name);
        let rows = self
            .client
            .borrow_mut()
            .query(
                &format!(
                    "SELECT user_id, title, body, rating, pid, pid_is_int FROM {s}.targets \
                     ORDER BY record"
                ),
                &[],
            )
            .map_err(query_err(format!("reading {s}.targets")))?;
        let mut users = Vec::with_capacity(rows.len());
        for row in rows {
            let pid = self.item_id(row.get(4), row.get(5), "targets")?;
            users.push(SplitUser {
                id: row.get(0),
                profile: vec![SplitReview {
                    title: row.get(1),
                    text: row.get(2),
                    rating: row.get(3),
                    pid,
                }],
            });
        }
        Ok(Split { users })
    }

    fn bad(&self, table: &str, message: String) -> Error {
        Error::BadRow {
            dataset: self.info.name.clone(),
            table: table.to_string(),
            message,
        }
    }

    fn item_id(&self, key: String, is_int: bool, table: &str) -> Result<ItemId> {
        if is_int {
            key.parse()
                .map(ItemId::Int)
                .map_err(|_| self.bad(table, format!("item {key:?} is marked integer")))
        } else {
            Ok(ItemId::Str(key))
        }
    }

    fn review(&self, row: &Row) -> Result<(ReviewId, Review)> {
        let slot: i64 = row.get(1);
        let slot = u32::try_from(slot)
            .map_err(|_| self.bad("reviews", format!("slot {slot} out of range")))?;
        let doc: i64 = row.get(2);
        let item = self.item_id(row.get(3), row.get(4), "reviews")?;
        let entry = Entry {
            id: usize::try_from(doc)
                .map_err(|_| self.bad("reviews", format!("doc_id {doc} out of range")))?,
            author: row.get(0),
            item: item.to_string(),
            title: row.get(5),
            text: row.get(6),
            rating: row.get(7),
            time: row.get(8),
        };
        Ok((ReviewId(slot), Review { entry, item }))
    }

    /// Runs `f` on the connection. A failure says `what`; when the coordinator lost its
    /// connection to a shard mid-query, the dataset's partitions are probed at once and the
    /// error names the shard server that does not answer.
    fn run<T>(
        &self,
        what: impl FnOnce() -> String,
        f: impl FnOnce(&mut Client) -> std::result::Result<T, ::postgres::Error>,
    ) -> Result<T> {
        let result = f(&mut self.client.borrow_mut());
        result.map_err(|source| {
            let what = what();
            if self.info.servers.is_empty() || !lost_shard_connection(&source) {
                return Error::Query { what, source };
            }
            // A failed connect names its server already.
            if self
                .info
                .servers
                .iter()
                .any(|s| driver_message(&source).contains(&format!("\"{s}\"")))
            {
                return Error::Query { what, source };
            }
            let probe = schema::unanswering_shard(&mut self.client.borrow_mut(), &self.info)
                .unwrap_or_else(|| "every shard server answers again: retry".into());
            Error::ShardLost {
                what,
                probe,
                source,
            }
        })
    }

    fn reviews(&self, rows: Vec<Row>) -> Result<SourcedProfile> {
        rows.iter().map(|r| self.review(r)).collect()
    }

    fn query(&self, st: &Statement, key: &str, what: &str) -> Result<SourcedProfile> {
        let rows = self.run(
            || format!("dataset {:?}: reading the {what} {key:?}", self.info.name),
            |c| c.query(st, &[&key]),
        )?;
        self.reviews(rows)
    }

    /// Every review of the users (or items) `keys`, grouped by key, slot order kept.
    fn query_many(
        &self,
        st: &Statement,
        keys: &[&str],
        by_item: bool,
    ) -> Result<HashMap<String, SourcedProfile>> {
        let mut out: HashMap<String, SourcedProfile> = HashMap::new();
        if keys.is_empty() {
            return Ok(out);
        }
        let rows = self.run(
            || {
                format!(
                    "dataset {:?}: reading the reviews of {} {}",
                    self.info.name,
                    keys.len(),
                    if by_item { "items" } else { "users" }
                )
            },
            |c| c.query(st, &[&keys]),
        )?;
        for row in &rows {
            let (slot, review) = self.review(row)?;
            let key = if by_item {
                key_of(&review.item)
            } else {
                review.entry.author.clone()
            };
            out.entry(key).or_default().push((slot, review));
        }
        Ok(out)
    }
}

impl PgProfiles {
    /// Remembers the positions of `users` (replacing the previous batch's).
    fn cache_positions(&self, users: &[&str]) -> Result<()> {
        let mut cache = self.positions.borrow_mut();
        cache.clear();
        if users.is_empty() {
            return Ok(());
        }
        let rows = self.run(
            || {
                format!(
                    "dataset {:?}: reading the positions of {} users",
                    self.info.name,
                    users.len()
                )
            },
            |c| c.query(&self.statements.positions, &[&users]),
        )?;
        for r in rows {
            cache.insert(r.get(0), r.get::<_, i64>(1).max(0) as usize);
        }
        Ok(())
    }
}

/// Whether the coordinator answered with a connection failure (SQLSTATE class 08, which
/// `postgres_fdw` reports when a shard's connection breaks) or a shutdown relayed from a shard
/// (class 57P). An error without a code is this client's own connection.
fn lost_shard_connection(e: &::postgres::Error) -> bool {
    super::server_lost(e)
}

/// The text key an item is partitioned by (its JSON type is a separate column).
fn key_of(item: &ItemId) -> String {
    match item {
        ItemId::Int(i) => i.to_string(),
        ItemId::Str(s) => s.clone(),
    }
}

/// The user's reviews of items other than `item` (the user scope).
fn user_scope(mine: &[(ReviewId, Review)], item: &ItemId) -> SourcedProfile {
    mine.iter()
        .filter(|(_, r)| &r.item != item)
        .cloned()
        .collect()
}

/// Other users' reviews of `item` (the neighbour scope), from the reviews of its key.
fn neighbor_scope(theirs: &[(ReviewId, Review)], user: &str, item: &ItemId) -> SourcedProfile {
    theirs
        .iter()
        .filter(|(_, r)| &r.item == item && r.entry.author != user)
        .cloned()
        .collect()
}

fn scoped(
    scope: Scope,
    user: &str,
    item: &ItemId,
    mine: &[(ReviewId, Review)],
    theirs: &[(ReviewId, Review)],
) -> SourcedProfile {
    match scope {
        Scope::User => user_scope(mine, item),
        Scope::Neighbor => neighbor_scope(theirs, user, item),
        Scope::Both => {
            let mut v = user_scope(mine, item);
            v.extend(neighbor_scope(theirs, user, item));
            v
        }
    }
}

impl ProfileSource for PgProfiles {
    type Error = Error;

    fn profile(&self, user: &str, item: &ItemId, scope: Scope) -> Result<SourcedProfile> {
        let mine = match scope {
            Scope::User | Scope::Both => self.query(&self.statements.by_user, user, "user")?,
            Scope::Neighbor => Vec::new(),
        };
        let theirs = match scope {
            Scope::Neighbor | Scope::Both => {
                self.query(&self.statements.by_item, &key_of(item), "item")?
            }
            Scope::User => Vec::new(),
        };
        Ok(scoped(scope, user, item, &mine, &theirs))
    }

    fn profiles(&self, requests: &[ProfileRequest<'_>]) -> Result<Vec<SourcedProfile>> {
        let mut users: Vec<&str> = Vec::new();
        let mut items: Vec<String> = Vec::new();
        for r in requests {
            if r.scope != Scope::Neighbor {
                users.push(r.user);
            }
            if r.scope != Scope::User {
                items.push(key_of(r.item));
            }
        }
        users.sort_unstable();
        users.dedup();
        items.sort_unstable();
        items.dedup();
        let item_refs: Vec<&str> = items.iter().map(String::as_str).collect();
        // Two steps, each a single-key-per-partition read: never one cross-partition join.
        let mine = self.query_many(&self.statements.by_users, &users, false)?;
        self.cache_positions(&users)?;
        let theirs = self.query_many(&self.statements.by_items, &item_refs, true)?;
        let empty = Vec::new();
        Ok(requests
            .iter()
            .map(|r| {
                let m = mine.get(r.user).unwrap_or(&empty);
                let t = theirs.get(&key_of(r.item)).unwrap_or(&empty);
                scoped(r.scope, r.user, r.item, m, t)
            })
            .collect())
    }
}

impl UserDirectory for PgProfiles {
    type Error = Error;

    fn num_users(&self) -> Result<usize> {
        Ok(self.info.users)
    }

    fn user_position(&self, user: &str) -> Result<Option<usize>> {
        if let Some(&p) = self.positions.borrow().get(user) {
            return Ok(Some(p));
        }
        let row = self.run(
            || format!("dataset {:?}: user {user:?}", self.info.name),
            |c| c.query_opt(&self.statements.position, &[&user]),
        )?;
        Ok(row.map(|r| r.get::<_, i64>(0).max(0) as usize))
    }

    fn user_at(&self, position: usize) -> Result<Option<String>> {
        let row = self.run(
            || format!("dataset {:?}: user at position {position}", self.info.name),
            |c| c.query_opt(&self.statements.user_at, &[&(position as i64)]),
        )?;
        Ok(row.map(|r| r.get(0)))
    }

    fn user_reviews(&self, user: &str) -> Result<SourcedProfile> {
        self.query(&self.statements.by_user, user, "user")
    }

    fn user_reviews_at(&self, position: usize) -> Result<Option<SourcedProfile>> {
        let rows = self.run(
            || {
                format!(
                    "dataset {:?}: reading the reviews of the user at position {position}",
                    self.info.name
                )
            },
            |c| c.query(&self.statements.reviews_at, &[&(position as i64)]),
        )?;
        // Every user has a review: no rows means no user there.
        Ok(Some(self.reviews(rows)?).filter(|r| !r.is_empty()))
    }
}
