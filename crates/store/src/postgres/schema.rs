//! The schema: version table, dataset schemas, partitions (local or on shard servers), checks.

use ::postgres::Client;

use super::store::{
    Error, PgStore, Result, config, connect_config, driver_message, query_err, redact,
};

/// The schema version this build reads and writes (`public.pgraphrag_schema`, component
/// `profiles`).
pub const SCHEMA_VERSION: i32 = 1;

/// The prefix of the foreign servers that hold partitions on a coordinator.
const SHARD_PREFIX: &str = "pgraphrag_shard";

/// The two partitioned review tables and their partition keys.
pub(crate) const REVIEW_TABLES: [(&str, &str); 2] =
    [("reviews_by_user", "user_id"), ("reviews_by_item", "item")];

/// The review columns, in COPY order.
pub(crate) const REVIEW_COLUMNS: &str = "user_id text NOT NULL, slot bigint NOT NULL, \
     doc_id bigint NOT NULL, item text NOT NULL, item_is_int boolean NOT NULL, title text, \
     body text, rating double precision, time bigint";

/// Where a dataset's partitions live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    /// Local tables on this server.
    Single,
    /// Foreign tables on these shard servers (their `postgres_fdw` server names, in order).
    Sharded(Vec<Shard>),
}

/// One shard server registered on a coordinator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shard {
    /// The foreign server's name (`pgraphrag_shard<N>`).
    pub server: String,
    /// Its `host` option.
    pub host: String,
    /// Its `port` option.
    pub port: u16,
    /// Its `dbname` option.
    pub dbname: String,
}

/// A loaded dataset, as `meta` records it.
#[derive(Debug, Clone, PartialEq)]
pub struct DatasetInfo {
    /// The dataset name.
    pub name: String,
    /// Partitions per review table.
    pub partitions: usize,
    /// Stored reviews (graph slots `0..reviews`).
    pub reviews: usize,
    /// Distinct users.
    pub users: usize,
    /// Targets (split records).
    pub targets: usize,
    /// The graph's duplicate handling (`keep-all` or `overwrite`).
    pub duplicates: String,
    /// The id policy (`keep-json-type` or `normalize`).
    pub ids: String,
    /// The foreign servers holding partitions (empty on a single server).
    pub servers: Vec<String>,
}

/// The PostgreSQL schema of `dataset`: `pgraphrag_<dataset>`.
///
/// ```
/// assert_eq!(pgraphrag_store::postgres::dataset_schema("amazon_dev"), "pgraphrag_amazon_dev");
/// ```
pub fn dataset_schema(dataset: &str) -> String {
    format!("pgraphrag_{dataset}")
}

/// Checks that `name` can name a dataset (it becomes part of a schema name, unquoted).
///
/// ```
/// use pgraphrag_store::postgres::validate_dataset_name;
/// assert!(validate_dataset_name("amazon_dev").is_ok());
/// assert!(validate_dataset_name("Amazon-dev").is_err());
/// ```
pub fn validate_dataset_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 48
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(Error::DatasetName {
            name: name.to_string(),
        })
    }
}

/// Creates `public.pgraphrag_schema` if missing; fails on another profile-store version.
pub(crate) fn ensure_version(client: &mut Client, url: &str) -> Result<()> {
    ensure_component(client, url, "profiles", SCHEMA_VERSION)
}

/// Records `component`'s schema `version` in `public.pgraphrag_schema` (created if missing),
/// or checks it: another version is [`Error::SchemaVersion`] (naming `url` and the component).
/// Concurrent first calls on one database are serialised.
///
/// ```no_run
/// use pgraphrag_store::postgres::{config, connect_config, ensure_component};
/// let url = "postgres://postgres@127.0.0.1:55432/pgraphrag";
/// let mut client = connect_config(&config(url).unwrap(), url).unwrap();
/// ensure_component(&mut client, url, "notes", 1).unwrap();
/// ```
pub fn ensure_component(
    client: &mut Client,
    url: &str,
    component: &str,
    version: i32,
) -> Result<()> {
    let what = || format!("{}: creating public.pgraphrag_schema", redact(url));
    // Concurrent first connections would race on CREATE TABLE IF NOT EXISTS: serialise them.
    let mut tx = client.transaction().map_err(query_err(what()))?;
    tx.batch_execute(
        "SELECT pg_advisory_xact_lock(7254031001); \
         CREATE TABLE IF NOT EXISTS public.pgraphrag_schema (\
           component text PRIMARY KEY, version integer NOT NULL)",
    )
    .map_err(query_err(what()))?;
    tx.execute(
        "INSERT INTO public.pgraphrag_schema (component, version) VALUES ($1, $2) \
         ON CONFLICT (component) DO NOTHING",
        &[&component, &version],
    )
    .map_err(query_err(what()))?;
    tx.commit().map_err(query_err(what()))?;
    let row = client
        .query_one(
            "SELECT version FROM public.pgraphrag_schema WHERE component = $1",
            &[&component],
        )
        .map_err(query_err(what()))?;
    let found: i32 = row.get(0);
    if found != version {
        return Err(Error::SchemaVersion {
            url: redact(url),
            component: component.to_string(),
            found,
            expected: version,
        });
    }
    Ok(())
}

/// The layout of the database `client` is connected to: [`Layout::Sharded`] when
/// `postgres_fdw` foreign servers named `pgraphrag_shard*` exist (what `scripts/cluster.sh`
/// sets up on its coordinator), their options read; [`Layout::Single`] otherwise.
///
/// ```no_run
/// use pgraphrag_store::postgres::{config, connect_config, layout};
/// let url = "postgres://postgres@127.0.0.1:55432/pgraphrag";
/// let mut client = connect_config(&config(url).unwrap(), url).unwrap();
/// println!("{:?}", layout(&mut client).unwrap());
/// ```
pub fn layout(client: &mut Client) -> Result<Layout> {
    let rows = client
        .query(
            "SELECT srvname::text, coalesce(srvoptions, '{}')::text[] FROM pg_foreign_server \
             WHERE starts_with(srvname::text, $1) ORDER BY srvname",
            &[&SHARD_PREFIX],
        )
        .map_err(query_err("listing the shard servers (pg_foreign_server)"))?;
    if rows.is_empty() {
        return Ok(Layout::Single);
    }
    let mut shards = Vec::with_capacity(rows.len());
    for row in rows {
        let server: String = row.get(0);
        let opts: Vec<String> = row.get(1);
        let opt = |k: &str| {
            opts.iter()
                .find_map(|o| o.strip_prefix(&format!("{k}=")).map(str::to_string))
        };
        let bad = |m: String| Error::Shard {
            server: server.clone(),
            message: m,
        };
        let host = opt("host").ok_or_else(|| bad("no host option".into()))?;
        let port = opt("port")
            .unwrap_or_else(|| "5432".into())
            .parse()
            .map_err(|e| bad(format!("bad port option: {e}")))?;
        let dbname = opt("dbname").ok_or_else(|| bad("no dbname option".into()))?;
        shards.push(Shard {
            server: server.clone(),
            host,
            port,
            dbname,
        });
    }
    Ok(Layout::Sharded(shards))
}

impl Shard {
    /// Opens a connection straight to this shard server with the user and password of the
    /// coordinator's configuration `coordinator` (to create or drop the tables behind its
    /// foreign partitions). A failure is [`Error::Shard`] naming the server.
    ///
    /// ```no_run
    /// use pgraphrag_store::postgres::{Layout, PgStore, config};
    /// let url = "postgres://postgres@127.0.0.1:55432/pgraphrag";
    /// if let Layout::Sharded(shards) = PgStore::connect(url).unwrap().layout().unwrap() {
    ///     let mut c = shards[0].connect(&config(url).unwrap()).unwrap();
    ///     c.batch_execute("SELECT 1").unwrap();
    /// }
    /// ```
    pub fn connect(&self, coordinator: &::postgres::Config) -> Result<Client> {
        let mut cfg = ::postgres::Config::new();
        if let Some(user) = coordinator.get_user() {
            cfg.user(user);
        }
        if let Some(password) = coordinator.get_password() {
            cfg.password(password);
        }
        cfg.host(&self.host).port(self.port).dbname(&self.dbname);
        let url = format!(
            "postgres://{}@{}:{}/{}",
            cfg.get_user().unwrap_or(""),
            self.host,
            self.port,
            self.dbname
        );
        connect_config(&cfg, &url).map_err(|e| Error::Shard {
            server: self.server.clone(),
            message: e.to_string(),
        })
    }
}

/// Opens a connection to `shard` with the coordinator's user and password.
fn connect_shard(store: &PgStore, shard: &Shard) -> Result<Client> {
    shard.connect(&store.config)
}

/// The partition table name.
pub(crate) fn partition_name(table: &str, p: usize) -> String {
    format!("{table}_p{p}")
}

/// A table hash-partitioned into `partitions` partitions: local tables on a single server, or
/// on a coordinator plain tables (with the primary key) on shard server `p mod N` and foreign
/// partitions pointing at them (the parent then has no primary key: PostgreSQL refuses a
/// unique index over foreign partitions). The profile store's review tables and
/// `pgraphrag-serve`'s documents are laid out this way.
///
/// ```
/// use pgraphrag_store::postgres::{Layout, PartitionedTable};
/// let t = PartitionedTable {
///     schema: "notes", table: "docs", columns: "owner text NOT NULL, body text",
///     primary_key: "owner, body", partition_key: "owner", partitions: 4,
/// };
/// assert_eq!(t.partition(3), "notes.docs_p3");
/// assert!(t.coordinator_ddl(&Layout::Single).contains("PARTITION BY HASH (owner)"));
/// assert!(t.shard_ddl(1, 2).contains("notes.docs_p3"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartitionedTable<'a> {
    /// The PostgreSQL schema holding it (the same name on every shard).
    pub schema: &'a str,
    /// The parent table's name; partition `p` is `{table}_p{p}`.
    pub table: &'a str,
    /// The column definitions, as in `CREATE TABLE t (...)`.
    pub columns: &'a str,
    /// The primary key's columns (the partition key's columns among them).
    pub primary_key: &'a str,
    /// The hash partition key's columns.
    pub partition_key: &'a str,
    /// How many partitions.
    pub partitions: usize,
}

impl PartitionedTable<'_> {
    /// Partition `p`, schema-qualified.
    pub fn partition(&self, p: usize) -> String {
        format!("{}.{}", self.schema, partition_name(self.table, p))
    }

    /// The foreign server holding partition `p` (`local` on a single server).
    pub fn server<'l>(&self, layout: &'l Layout, p: usize) -> &'l str {
        match layout {
            Layout::Single => "local",
            Layout::Sharded(shards) if !shards.is_empty() => &shards[p % shards.len()].server,
            Layout::Sharded(_) => "local",
        }
    }

    /// The statements creating the parent and its partitions on this server (a single
    /// server, or the coordinator's foreign partitions). The schema must exist.
    pub fn coordinator_ddl(&self, layout: &Layout) -> String {
        let (s, table, cols, n) = (self.schema, self.table, self.columns, self.partitions);
        let (pk, key) = (self.primary_key, self.partition_key);
        let mut ddl = String::new();
        match layout {
            Layout::Sharded(shards) if !shards.is_empty() => {
                ddl.push_str(&format!(
                    "CREATE TABLE {s}.{table} ({cols}) PARTITION BY HASH ({key});\n"
                ));
                for p in 0..n {
                    let part = partition_name(table, p);
                    let server = &shards[p % shards.len()].server;
                    ddl.push_str(&format!(
                        "CREATE FOREIGN TABLE {s}.{part} PARTITION OF {s}.{table} \
                         FOR VALUES WITH (MODULUS {n}, REMAINDER {p}) \
                         SERVER {server} OPTIONS (schema_name '{s}', table_name '{part}');\n"
                    ));
                }
            }
            _ => {
                ddl.push_str(&format!(
                    "CREATE TABLE {s}.{table} ({cols}, PRIMARY KEY ({pk})) \
                     PARTITION BY HASH ({key});\n"
                ));
                for p in 0..n {
                    ddl.push_str(&format!(
                        "CREATE TABLE {s}.{} PARTITION OF {s}.{table} \
                         FOR VALUES WITH (MODULUS {n}, REMAINDER {p});\n",
                        partition_name(table, p)
                    ));
                }
            }
        }
        ddl
    }

    /// The statements creating, on shard `k` of `shards`, the plain tables behind its
    /// partitions (`IF NOT EXISTS`: a rerun after a failed setup is harmless). The schema must
    /// exist there.
    pub fn shard_ddl(&self, k: usize, shards: usize) -> String {
        let mut ddl = String::new();
        for p in (k..self.partitions).step_by(shards.max(1)) {
            ddl.push_str(&format!(
                "CREATE TABLE IF NOT EXISTS {} ({}, PRIMARY KEY ({}));\n",
                self.partition(p),
                self.columns,
                self.primary_key
            ));
        }
        ddl
    }
}

/// Whether the dataset's schema exists (its `meta` table).
pub(crate) fn exists(client: &mut Client, dataset: &str) -> Result<bool> {
    let schema = dataset_schema(dataset);
    let row = client
        .query_one(
            "SELECT to_regclass($1) IS NOT NULL",
            &[&format!("{schema}.meta")],
        )
        .map_err(query_err(format!("looking up dataset {dataset:?}")))?;
    Ok(row.get(0))
}

/// Creates the dataset's schema and empty tables (local, or foreign partitions on shards).
pub(crate) fn create(store: &mut PgStore, dataset: &str, partitions: usize) -> Result<Layout> {
    let s = dataset_schema(dataset);
    let layout = layout(&mut store.client)?;
    let what = || format!("creating dataset {dataset:?} (schema {s})");
    let mut ddl = format!(
        "CREATE SCHEMA {s};\n\
         CREATE TABLE {s}.meta (dataset text NOT NULL, partitions integer NOT NULL, \
           reviews bigint NOT NULL, users bigint NOT NULL, targets bigint NOT NULL, \
           duplicates text NOT NULL, ids text NOT NULL, servers text[] NOT NULL);\n\
         CREATE TABLE {s}.users (position bigint PRIMARY KEY, user_id text NOT NULL UNIQUE);\n\
         CREATE TABLE {s}.targets (record bigint PRIMARY KEY, user_id text NOT NULL, \
           title text, body text, rating double precision, pid text NOT NULL, \
           pid_is_int boolean NOT NULL);\n"
    );
    let primary_keys = REVIEW_TABLES.map(|(_, key)| format!("{key}, slot"));
    let tables: Vec<PartitionedTable<'_>> = REVIEW_TABLES
        .iter()
        .zip(&primary_keys)
        .map(|(&(table, key), pk)| PartitionedTable {
            schema: &s,
            table,
            columns: REVIEW_COLUMNS,
            primary_key: pk,
            partition_key: key,
            partitions,
        })
        .collect();
    if let Layout::Sharded(shards) = &layout {
        // The shard tables hold the keys; the coordinator's parents have no unique index
        // (PostgreSQL refuses foreign partitions under one).
        for (k, shard) in shards.iter().enumerate() {
            let mut remote = format!("DROP SCHEMA IF EXISTS {s} CASCADE; CREATE SCHEMA {s};\n");
            for t in &tables {
                remote.push_str(&t.shard_ddl(k, shards.len()));
            }
            let mut c = connect_shard(store, shard)?;
            c.batch_execute(&remote).map_err(|e| Error::Shard {
                server: shard.server.clone(),
                message: format!("creating the partitions of {dataset:?}: {e}"),
            })?;
        }
    }
    for t in &tables {
        ddl.push_str(&t.coordinator_ddl(&layout));
    }
    store
        .client
        .batch_execute(&ddl)
        .map_err(query_err(what()))?;
    Ok(layout)
}

/// Drops a dataset here and on the shards.
pub(crate) fn drop_dataset(store: &mut PgStore, dataset: &str) -> Result<()> {
    validate_dataset_name(dataset)?;
    let s = dataset_schema(dataset);
    if let Layout::Sharded(shards) = layout(&mut store.client)? {
        for shard in &shards {
            let mut c = connect_shard(store, shard)?;
            c.batch_execute(&format!("DROP SCHEMA IF EXISTS {s} CASCADE"))
                .map_err(|e| Error::Shard {
                    server: shard.server.clone(),
                    message: format!("dropping dataset {dataset:?}: {e}"),
                })?;
        }
    }
    store
        .client
        .batch_execute(&format!("DROP SCHEMA IF EXISTS {s} CASCADE"))
        .map_err(query_err(format!("dropping dataset {dataset:?}")))
}

/// Reads a dataset's `meta` row.
pub(crate) fn info(client: &mut Client, url: &str, dataset: &str) -> Result<DatasetInfo> {
    validate_dataset_name(dataset)?;
    let s = dataset_schema(dataset);
    let missing = || Error::NoDataset {
        url: redact(url),
        dataset: dataset.to_string(),
        schema: s.clone(),
    };
    if !exists(client, dataset)? {
        return Err(missing());
    }
    let rows = client
        .query(
            &format!(
                "SELECT dataset, partitions, reviews, users, targets, duplicates, ids, servers \
                 FROM {s}.meta"
            ),
            &[],
        )
        .map_err(query_err(format!("reading {s}.meta")))?;
    let Some(row) = rows.first() else {
        return Err(missing());
    };
    let n = |i: usize| row.get::<_, i64>(i).max(0) as usize;
    Ok(DatasetInfo {
        name: row.get(0),
        partitions: row.get::<_, i32>(1).max(0) as usize,
        reviews: n(2),
        users: n(3),
        targets: n(4),
        duplicates: row.get(5),
        ids: row.get(6),
        servers: row.get(7),
    })
}

/// Every dataset of this database.
pub(crate) fn datasets(client: &mut Client) -> Result<Vec<DatasetInfo>> {
    let rows = client
        .query(
            "SELECT substr(nspname, 11) FROM pg_namespace WHERE nspname LIKE 'pgraphrag\\_%' \
             ORDER BY nspname",
            &[],
        )
        .map_err(query_err("listing the datasets (pg_namespace)"))?;
    let mut out = Vec::new();
    for row in rows {
        let name: String = row.get(0);
        if validate_dataset_name(&name).is_ok() && exists(client, &name)? {
            out.push(info(client, "", &name)?);
        }
    }
    Ok(out)
}

/// Checks that every partition the dataset's `meta` promises exists and answers.
pub(crate) fn check_partitions(client: &mut Client, info: &DatasetInfo) -> Result<()> {
    let s = dataset_schema(&info.name);
    for (table, _) in REVIEW_TABLES {
        for p in 0..info.partitions {
            let part = format!("{s}.{}", partition_name(table, p));
            let server = if info.servers.is_empty() {
                "local".to_string()
            } else {
                info.servers[p % info.servers.len()].clone()
            };
            let problem = |problem: String| Error::MissingPartition {
                dataset: info.name.clone(),
                table: format!("{s}.{table}"),
                partition: part.clone(),
                problem,
                server: server.clone(),
            };
            let attached: bool = client
                .query_one(
                    "SELECT EXISTS (SELECT 1 FROM pg_inherits \
                     WHERE inhrelid = to_regclass($1) AND inhparent = to_regclass($2))",
                    &[&part, &format!("{s}.{table}")],
                )
                .map_err(query_err(format!("checking partition {part}")))?
                .get(0);
            if !attached {
                return Err(problem("missing".into()));
            }
            if !info.servers.is_empty() {
                client
                    .query(&format!("SELECT 1 FROM {part} LIMIT 1"), &[])
                    .map_err(|e| problem(format!("unreadable ({})", driver_message(&e))))?;
            }
        }
    }
    Ok(())
}

/// Reads one partition on each shard server of a sharded dataset: the first server that does
/// not answer, and why (`None` when every one answers, or on a single server).
pub(crate) fn unanswering_shard(client: &mut Client, info: &DatasetInfo) -> Option<String> {
    let s = dataset_schema(&info.name);
    let (table, _) = REVIEW_TABLES[0];
    let probes: Vec<(String, String)> = info
        .servers
        .iter()
        .take(info.partitions)
        .enumerate()
        .map(|(k, server)| (format!("{s}.{}", partition_name(table, k)), server.clone()))
        .collect();
    first_unanswering(client, &probes)
}

/// Reads one row of each `(partition, server)` through `client` (a coordinator): for the
/// first that fails, `shard server SERVER does not answer (WHY); start it, then retry`; `None`
/// when every one answers. Probe one partition per shard server to find which one is down.
///
/// ```no_run
/// use pgraphrag_store::postgres::{config, connect_config, first_unanswering};
/// let url = "postgres://postgres@127.0.0.1:55432/pgraphrag";
/// let mut client = connect_config(&config(url).unwrap(), url).unwrap();
/// let probes = [("pgraphrag_x.reviews_by_user_p0".to_string(), "pgraphrag_shard0".to_string())];
/// if let Some(down) = first_unanswering(&mut client, &probes) { eprintln!("{down}") }
/// ```
pub fn first_unanswering(client: &mut Client, probes: &[(String, String)]) -> Option<String> {
    probes.iter().find_map(|(part, server)| {
        let e = client
            .query(&format!("SELECT 1 FROM {part} LIMIT 1"), &[])
            .err()?;
        Some(format!(
            "shard server {server} does not answer ({}); start it, then retry",
            driver_message(&e)
        ))
    })
}

/// The store's schema-level calls: connecting (which creates or checks the schema), the
/// layout, the datasets.
impl PgStore {
    /// Connects to `url` and creates or checks `public.pgraphrag_schema`.
    ///
    /// ```no_run
    /// let mut store = pgraphrag_store::postgres::PgStore::connect("postgres://postgres@127.0.0.1:55432/pgraphrag").unwrap();
    /// println!("{:?}", store.layout().unwrap());
    /// ```
    pub fn connect(url: &str) -> Result<Self> {
        let config = config(url)?;
        let mut client = connect_config(&config, url)?;
        ensure_version(&mut client, url)?;
        Ok(PgStore {
            client,
            url: url.to_string(),
            config,
        })
    }

    /// Where partitions go: local tables, or foreign tables on the shard servers registered
    /// on this coordinator.
    pub fn layout(&mut self) -> Result<Layout> {
        layout(&mut self.client)
    }

    /// The datasets loaded into this database, by name.
    pub fn datasets(&mut self) -> Result<Vec<DatasetInfo>> {
        datasets(&mut self.client)
    }

    /// Drops a dataset (its schema here and its partitions on the shards). Dropping a dataset
    /// that does not exist does nothing.
    pub fn drop_dataset(&mut self, dataset: &str) -> Result<()> {
        drop_dataset(self, dataset)
    }
}
