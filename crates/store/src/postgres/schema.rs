//! The schema: version table, dataset schemas, partitions (local or on shard servers), checks.

use ::postgres::Client;

use super::{Error, PgStore, Result, connect_config, driver_message, query_err, redact};

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
/// or checks it: another version is [`Error::SchemaVersion`].
pub(crate) fn ensure_component(
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

/// The layout of this database: sharded when `pgraphrag_shard*` foreign servers exist.
pub(crate) fn layout(client: &mut Client) -> Result<Layout> {
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

/// Opens a connection to `shard` with the coordinator's user and password.
fn connect_shard(store: &PgStore, shard: &Shard) -> Result<Client> {
    let mut cfg = ::postgres::Config::new();
    if let Some(user) = store.config.get_user() {
        cfg.user(user);
    }
    if let Some(password) = store.config.get_password() {
        cfg.password(password);
    }
    cfg.host(&shard.host).port(shard.port).dbname(&shard.dbname);
    let url = format!(
        "postgres://{}@{}:{}/{}",
        cfg.get_user().unwrap_or(""),
        shard.host,
        shard.port,
        shard.dbname
    );
    connect_config(&cfg, &url).map_err(|e| Error::Shard {
        server: shard.server.clone(),
        message: e.to_string(),
    })
}

/// The partition table name.
pub(crate) fn partition_name(table: &str, p: usize) -> String {
    format!("{table}_p{p}")
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
    match &layout {
        Layout::Single => {
            for (table, key) in REVIEW_TABLES {
                ddl.push_str(&format!(
                    "CREATE TABLE {s}.{table} ({REVIEW_COLUMNS}, PRIMARY KEY ({key}, slot)) \
                     PARTITION BY HASH ({key});\n"
                ));
                for p in 0..partitions {
                    ddl.push_str(&format!(
                        "CREATE TABLE {s}.{} PARTITION OF {s}.{table} \
                         FOR VALUES WITH (MODULUS {partitions}, REMAINDER {p});\n",
                        partition_name(table, p)
                    ));
                }
            }
        }
        Layout::Sharded(shards) => {
            // The shard tables hold the keys; the coordinator's parents have no unique index
            // (PostgreSQL refuses foreign partitions under one).
            for (k, shard) in shards.iter().enumerate() {
                let mut remote = format!("DROP SCHEMA IF EXISTS {s} CASCADE; CREATE SCHEMA {s};\n");
                for (table, key) in REVIEW_TABLES {
                    for p in (k..partitions).step_by(shards.len()) {
                        remote.push_str(&format!(
                            "CREATE TABLE {s}.{} ({REVIEW_COLUMNS}, PRIMARY KEY ({key}, slot));\n",
                            partition_name(table, p)
                        ));
                    }
                }
                let mut c = connect_shard(store, shard)?;
                c.batch_execute(&remote).map_err(|e| Error::Shard {
                    server: shard.server.clone(),
                    message: format!("creating the partitions of {dataset:?}: {e}"),
                })?;
            }
            for (table, key) in REVIEW_TABLES {
                ddl.push_str(&format!(
                    "CREATE TABLE {s}.{table} ({REVIEW_COLUMNS}) PARTITION BY HASH ({key});\n"
                ));
                for p in 0..partitions {
                    let part = partition_name(table, p);
                    let server = &shards[p % shards.len()].server;
                    ddl.push_str(&format!(
                        "CREATE FOREIGN TABLE {s}.{part} PARTITION OF {s}.{table} \
                         FOR VALUES WITH (MODULUS {partitions}, REMAINDER {p}) \
                         SERVER {server} OPTIONS (schema_name '{s}', table_name '{part}');\n"
                    ));
                }
            }
        }
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
    info.servers
        .iter()
        .take(info.partitions)
        .enumerate()
        .find_map(|(k, server)| {
            let part = format!("{s}.{}", partition_name(table, k));
            let e = client
                .query(&format!("SELECT 1 FROM {part} LIMIT 1"), &[])
                .err()?;
            Some(format!(
                "shard server {server} does not answer ({}); start it, then retry",
                driver_message(&e)
            ))
        })
}
