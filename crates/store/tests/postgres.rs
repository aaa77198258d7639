//! The PostgreSQL profile store against the in-memory graph, on one server
//! (`$PGRAPHRAG_PG_URL`) and on the loopback sharded cluster (`$PGRAPHRAG_PG_SHARDED_URL`):
//! `scripts/cluster.sh start && . runs/cluster/env.sh`. Without the variables the tests skip
//! with a message, except under `CI=true`, where they fail.
#![cfg(feature = "postgres")]

use std::path::PathBuf;

use pgraphrag_core::NoProgress;
use pgraphrag_data::{RankingRecord, Split, load_split, parse_split, write_rankings_to};
use pgraphrag_eval::{Recipe, rank_all, rank_all_from};
use pgraphrag_graph::{ItemId, ProfileRequest, ProfileSource, Scope, UserDirectory, UserItemGraph};
use pgraphrag_retrieval::profile::{ProfileRanker, Task};
use pgraphrag_store::postgres::{Error, LoadOptions, PgProfiles, PgStore};

/// The server URL in `var`, or `None` (skip) outside CI.
fn url(var: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(u) if !u.is_empty() => Some(u),
        _ => {
            let msg = format!(
                "{var} is not set: start the loopback cluster (scripts/cluster.sh start) and \
                 source runs/cluster/env.sh"
            );
            if std::env::var("CI").is_ok_and(|v| v == "true") {
                panic!("{msg}");
            }
            eprintln!("skipping: {msg}");
            None
        }
    }
}

fn data(name: &str) -> PathBuf {
    let dir = std::env::var_os("PGRAPHRAG_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data"));
    dir.join("pgraphrag").join(name)
}

fn options(recipe: Recipe) -> LoadOptions {
    LoadOptions {
        graph: recipe.graph_options(),
        ids: recipe.id_policy(),
        partitions: 8,
        replace: true,
    }
}

fn load(url: &str, dataset: &str, split: &Split, recipe: Recipe) -> PgProfiles {
    let mut store = PgStore::connect(url).unwrap();
    store
        .load(dataset, split, &[], &options(recipe), &NoProgress)
        .unwrap();
    PgProfiles::open(url, dataset).unwrap()
}

/// Every profile of every target batched, of every `every`-th target one by one, and the
/// user directory, agree.
fn check_profiles(
    split: &Split,
    graph: &UserItemGraph,
    pg: &PgProfiles,
    recipe: Recipe,
    every: usize,
) {
    let policy = recipe.id_policy();
    let items: Vec<ItemId> = split
        .users
        .iter()
        .map(|u| policy.apply(&u.profile[0].pid))
        .collect();
    let mut requests = Vec::new();
    for (i, (u, item)) in split.users.iter().zip(&items).enumerate() {
        for scope in [Scope::User, Scope::Neighbor, Scope::Both] {
            if i % every == 0 {
                let want = ProfileSource::profile(graph, &u.id, item, scope).unwrap();
                let got = pg.profile(&u.id, item, scope).unwrap();
                assert_eq!(got, want, "user {} scope {scope:?}", u.id);
            }
            requests.push(ProfileRequest {
                user: &u.id,
                item,
                scope,
            });
        }
    }
    for chunk in requests.chunks(300) {
        assert_eq!(pg.profiles(chunk).unwrap(), graph.profiles(chunk).unwrap());
    }
    assert_eq!(pg.num_users().unwrap(), graph.num_users());
    for i in [0, graph.num_users() / 2, graph.num_users() - 1] {
        let user = UserDirectory::user_at(graph, i).unwrap().unwrap();
        assert_eq!(pg.user_at(i).unwrap().as_deref(), Some(user.as_str()));
        assert_eq!(pg.user_position(&user).unwrap(), Some(i));
        assert_eq!(
            pg.user_reviews(&user).unwrap(),
            UserDirectory::user_reviews(graph, &user).unwrap()
        );
        assert_eq!(
            pg.user_reviews_at(i).unwrap(),
            UserDirectory::user_reviews_at(graph, i).unwrap()
        );
    }
    assert_eq!(pg.user_reviews_at(graph.num_users()).unwrap(), None);
    assert_eq!(pg.user_position("no such user").unwrap(), None);
}

/// Duplicate reviews, integer and string ids that look alike, empty titles.
const TRICKY: &[u8] = br#"[
  {"id": "a", "profile": [{"title": "", "text": "t0", "rating": 5, "pid": "7"},
                          {"title": "x", "text": "first", "rating": 1, "pid": 7},
                          {"title": "y", "text": "again", "rating": 2, "pid": 7},
                          {"title": "z", "text": "other", "rating": 3, "pid": "q"}]},
  {"id": "b", "profile": [{"title": "b0", "text": null, "rating": null, "pid": "7"},
                          {"title": "b1", "text": "int", "rating": 4, "pid": 7},
                          {"title": "b2", "text": "q", "rating": 4, "pid": "q"}]},
  {"id": "c", "profile": [{"title": "c0", "text": "c", "rating": 1, "pid": "q"}]}
]"#;

fn tricky(url: &str, prefix: &str) {
    let split = parse_split(TRICKY, "tricky.json").unwrap();
    for (recipe, name) in [(Recipe::ReleasedCode, "released"), (Recipe::Clean, "clean")] {
        let graph = recipe.graph(&split);
        let pg = load(url, &format!("{prefix}_tricky_{name}"), &split, recipe);
        check_profiles(&split, &graph, &pg, recipe, 1);
        assert_eq!(pg.targets().unwrap().users.len(), split.users.len());
        assert_eq!(
            pg.targets().unwrap().users[0].profile[0],
            split.users[0].profile[0]
        );
    }
}

/// The whole split ranked from the store writes the same bytes as from the graph, per task.
fn rankings_identical(url: &str, dataset: &str, file: &str) {
    let split = load_split(&data(file)).unwrap();
    let recipe = Recipe::ReleasedCode;
    let graph = recipe.graph(&split);
    let pg = load(url, dataset, &split, recipe);
    // One by one on every 25th target (each a round trip; the batched check covers all).
    check_profiles(&split, &graph, &pg, recipe, 25);
    let targets = pg.targets().unwrap();
    assert_eq!(targets.users.len(), split.users.len());
    for task in [Task::Text, Task::Title, Task::Rating] {
        let ranker = || ProfileRanker::new(recipe.bm25(), recipe.profile_options());
        let bytes = |profiles: Vec<_>| {
            let recs: Vec<RankingRecord> = profiles.into_iter().map(RankingRecord::from).collect();
            let mut out = Vec::new();
            write_rankings_to(&mut out, &recs).unwrap();
            out
        };
        let policy = recipe.id_policy();
        let want = bytes(rank_all(&split, &graph, policy, task, ranker(), &NoProgress).unwrap());
        let got =
            bytes(rank_all_from(&targets, &pg, policy, task, ranker(), &NoProgress, 256).unwrap());
        assert!(
            got == want,
            "{file} {task:?}: the store's ranking file differs"
        );
    }
}

#[test]
fn single_server_profiles_match_the_graph() {
    let Some(url) = url("PGRAPHRAG_PG_URL") else {
        return;
    };
    tricky(&url, "t_single");
}

#[test]
fn sharded_profiles_match_the_graph() {
    let Some(url) = url("PGRAPHRAG_PG_SHARDED_URL") else {
        return;
    };
    let mut store = PgStore::connect(&url).unwrap();
    assert!(
        matches!(store.layout().unwrap(), pgraphrag_store::postgres::Layout::Sharded(ref s) if s.len() >= 2),
        "{url} should be a coordinator with two shard servers (scripts/cluster.sh)"
    );
    tricky(&url, "t_sharded");
}

#[test]
fn single_server_rankings_are_byte_identical() {
    let Some(url) = url("PGRAPHRAG_PG_URL") else {
        return;
    };
    rankings_identical(&url, "t_single_amazon_dev", "amazon_dev.json");
}

#[test]
fn sharded_rankings_are_byte_identical() {
    let Some(url) = url("PGRAPHRAG_PG_SHARDED_URL") else {
        return;
    };
    rankings_identical(&url, "t_sharded_b2w_dev", "b2w_dev.json");
}

#[test]
fn bad_urls_say_what_to_fix() {
    let e = PgStore::connect("postgres://nobody@127.0.0.1:1/nothing").unwrap_err();
    assert!(matches!(e, Error::Connect { .. }), "{e}");
    let m = e.to_string();
    assert!(
        m.contains("127.0.0.1:1") && m.contains("scripts/cluster.sh start"),
        "{m}"
    );
    let e = PgStore::connect("postgres://u:secret@127.0.0.1:1/x")
        .unwrap_err()
        .to_string();
    assert!(!e.contains("secret"), "the password leaked: {e}");
    let e = PgProfiles::open("mysql://x@y:z/w", "d").unwrap_err();
    assert!(matches!(e, Error::Url { .. }), "{e}");
    assert!(
        e.to_string().contains("postgres://USER@HOST:PORT/DATABASE"),
        "{e}"
    );
}

#[test]
fn a_schema_of_another_version_is_refused() {
    let Some(url) = url("PGRAPHRAG_PG_URL") else {
        return;
    };
    let db = format!("pgraphrag_t_version_{}", std::process::id());
    let mut admin = PgStore::connect(&url).unwrap();
    let c = admin.client();
    c.batch_execute(&format!("DROP DATABASE IF EXISTS {db}"))
        .unwrap();
    c.batch_execute(&format!("CREATE DATABASE {db}")).unwrap();
    let (base, _) = url.rsplit_once('/').unwrap();
    let other = format!("{base}/{db}");
    let mut store = PgStore::connect(&other).unwrap();
    store
        .client()
        .batch_execute(
            "UPDATE public.pgraphrag_schema SET version = 99 WHERE component = 'profiles'",
        )
        .unwrap();
    drop(store);
    let e = PgStore::connect(&other).unwrap_err();
    let e2 = PgProfiles::open(&other, "any").unwrap_err();
    admin
        .client()
        .batch_execute(&format!("DROP DATABASE {db} WITH (FORCE)"))
        .unwrap();
    assert!(
        matches!(
            e,
            Error::SchemaVersion {
                found: 99,
                expected: 1,
                ..
            }
        ),
        "{e}"
    );
    let m = e.to_string();
    assert!(
        m.contains("version 99") && m.contains("new database"),
        "{m}"
    );
    assert!(matches!(e2, Error::SchemaVersion { .. }), "{e2}");
}

#[test]
fn missing_datasets_and_partitions_are_named() {
    let Some(url) = url("PGRAPHRAG_PG_URL") else {
        return;
    };
    let e = PgProfiles::open(&url, "t_never_loaded").unwrap_err();
    assert!(matches!(e, Error::NoDataset { .. }), "{e}");
    assert!(e.to_string().contains("pgraphrag store load"), "{e}");
    let e = PgProfiles::open(&url, "Bad-Name").unwrap_err();
    assert!(matches!(e, Error::DatasetName { .. }), "{e}");

    let split = parse_split(TRICKY, "tricky.json").unwrap();
    let mut store = PgStore::connect(&url).unwrap();
    let mut opts = options(Recipe::ReleasedCode);
    store
        .load("t_missing", &split, &[], &opts, &NoProgress)
        .unwrap();
    opts.replace = false;
    let e = store
        .load("t_missing", &split, &[], &opts, &NoProgress)
        .unwrap_err();
    assert!(
        matches!(e, Error::Exists { .. }) && e.to_string().contains("--replace"),
        "{e}"
    );
    store
        .client()
        .batch_execute("DROP TABLE pgraphrag_t_missing.reviews_by_item_p3")
        .unwrap();
    let e = PgProfiles::open(&url, "t_missing").unwrap_err();
    let m = e.to_string();
    assert!(matches!(e, Error::MissingPartition { .. }), "{m}");
    assert!(
        m.contains("pgraphrag_t_missing.reviews_by_item_p3") && m.contains("--replace"),
        "{m}"
    );
    store.drop_dataset("t_missing").unwrap();
}

#[test]
fn an_unreachable_shard_partition_is_named() {
    let Some(url) = url("PGRAPHRAG_PG_SHARDED_URL") else {
        return;
    };
    let split = parse_split(TRICKY, "tricky.json").unwrap();
    let mut store = PgStore::connect(&url).unwrap();
    store
        .load(
            "t_shard_gone",
            &split,
            &[],
            &options(Recipe::ReleasedCode),
            &NoProgress,
        )
        .unwrap();
    let pgraphrag_store::postgres::Layout::Sharded(shards) = store.layout().unwrap() else {
        panic!("{url} is not a sharded coordinator");
    };
    // Partition 1 lives on the second shard: remove its table there.
    let (base, _) = url.split_once('@').unwrap();
    let shard_url = format!(
        "{base}@{}:{}/{}",
        shards[1].host, shards[1].port, shards[1].dbname
    );
    let mut shard = PgStore::connect(&shard_url).unwrap();
    shard
        .client()
        .batch_execute("DROP TABLE pgraphrag_t_shard_gone.reviews_by_user_p1")
        .unwrap();
    let e = PgProfiles::open(&url, "t_shard_gone").unwrap_err();
    let m = e.to_string();
    assert!(matches!(e, Error::MissingPartition { .. }), "{m}");
    assert!(
        m.contains("reviews_by_user_p1") && m.contains(&shards[1].server),
        "{m}"
    );
    store.drop_dataset("t_shard_gone").unwrap();
}

#[test]
fn review_jsonl_appends_after_the_split() {
    let Some(url) = url("PGRAPHRAG_PG_URL") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let jsonl = dir.path().join("more.jsonl");
    std::fs::write(
        &jsonl,
        "{\"user\": \"c\", \"item\": 7, \"title\": \"late\", \"text\": \"review\", \"rating\": 3}\n\n\
         {\"user\": \"d\", \"item\": \"q\", \"text\": \"new user\", \"time\": 1700000000}\n",
    )
    .unwrap();
    let split = parse_split(TRICKY, "tricky.json").unwrap();
    let recipe = Recipe::ReleasedCode;
    let mut graph = recipe.graph(&split);
    let mut store = PgStore::connect(&url).unwrap();
    let s = store
        .load(
            "t_jsonl",
            &split,
            std::slice::from_ref(&jsonl),
            &options(recipe),
            &NoProgress,
        )
        .unwrap();
    assert_eq!(s.jsonl_reviews, 2);
    for (i, line) in std::fs::read_to_string(&jsonl)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
    {
        let (e, item) =
            pgraphrag_store::postgres::parse_review_line(line, split.num_reviews() + i).unwrap();
        graph.insert_keyed(e, item).unwrap();
    }
    let pg = PgProfiles::open(&url, "t_jsonl").unwrap();
    check_profiles(&split, &graph, &pg, recipe, 1);
    std::fs::write(&jsonl, "{\"user\": \"c\"}\n").unwrap();
    let e = store
        .load(
            "t_jsonl",
            &split,
            std::slice::from_ref(&jsonl),
            &options(recipe),
            &NoProgress,
        )
        .unwrap_err();
    let m = e.to_string();
    assert!(
        matches!(e, Error::Jsonl { line: 1, .. }) && m.contains("\"item\""),
        "{m}"
    );
    store.drop_dataset("t_jsonl").unwrap();
}
