//! The artifact stores' PostgreSQL backend (`$PGRAPHRAG_PG_URL`, from `scripts/cluster.sh`):
//! idempotent upserts keyed as in SQLite, the kind's schema version checked. Skips without the
//! variable, except under `CI=true`, where it fails.
#![cfg(feature = "postgres")]

use pgraphrag_core::{GenParams, Prompt};
use pgraphrag_store::GenerationCache;
use pgraphrag_store::postgres::{ArtifactSchema, ArtifactTable, Error};

fn url() -> Option<String> {
    match std::env::var("PGRAPHRAG_PG_URL") {
        Ok(u) if !u.is_empty() => Some(u),
        _ => {
            let msg = "PGRAPHRAG_PG_URL is not set: scripts/cluster.sh start, then source runs/cluster/env.sh";
            if std::env::var("CI").is_ok_and(|v| v == "true") {
                panic!("{msg}");
            }
            eprintln!("skipping: {msg}");
            None
        }
    }
}

#[test]
fn generation_cache_upserts_are_idempotent() {
    let Some(url) = url() else { return };
    let a = GenerationCache::open_postgres(&url).unwrap();
    let b = GenerationCache::open_postgres(&url).unwrap(); // a second process, say
    let nonce = format!("{}-{:?}", std::process::id(), std::time::SystemTime::now());
    let p = Prompt::user(format!("postgres test {nonce}"));
    let params = GenParams::default();
    assert_eq!(a.get("m", &p, &params).unwrap(), None);
    let before = a.len().unwrap();
    a.put("m", &p, &params, "first", 0.5).unwrap();
    b.put("m", &p, &params, "second", 0.25).unwrap();
    b.put("m", &p, &params, "second", 0.25).unwrap();
    assert_eq!(a.get("m", &p, &params).unwrap().as_deref(), Some("second"));
    assert_eq!(b.get("other", &p, &params).unwrap(), None);
    assert_eq!(a.len().unwrap(), before + 1);
    assert!(
        a.path().to_string_lossy().starts_with("postgres"),
        "{:?}",
        a.path()
    );
}

#[test]
fn embedding_cache_upserts_are_idempotent() {
    let Some(url) = url() else { return };
    use pgraphrag_retrieval::dense::EmbeddingCache;
    let a = EmbeddingCache::open_postgres(&url).unwrap();
    let b = EmbeddingCache::open_postgres(&url).unwrap();
    let model = format!(
        "test-model-{}-{:?}",
        std::process::id(),
        std::time::SystemTime::now()
    );
    let before = a.len().unwrap();
    a.put_many(
        &model,
        &[("hello", &[1.0f32, -2.5][..]), ("bye", &[0.0, 3.0][..])],
    )
    .unwrap();
    b.put_many(&model, &[("hello", &[1.0f32, -2.5][..])])
        .unwrap();
    assert_eq!(
        b.get_many(&model, &["bye", "missing", "hello"]).unwrap(),
        vec![Some(vec![0.0, 3.0]), None, Some(vec![1.0, -2.5])]
    );
    assert_eq!(a.get_many("other", &["hello"]).unwrap(), vec![None]);
    assert_eq!(a.len().unwrap(), before + 2);
}

#[test]
fn summary_store_upserts_are_idempotent() {
    let Some(url) = url() else { return };
    use pgraphrag_stages::{FitReport, Staleness, Summary, SummaryKey, SummaryStore};
    let a = SummaryStore::open_postgres(&url).unwrap();
    let b = SummaryStore::open_postgres(&url).unwrap();
    let model = format!(
        "test-model-{}-{:?}",
        std::process::id(),
        std::time::SystemTime::now()
    );
    let key = SummaryKey {
        user: "u1",
        profile_hash: "h1",
        model: &model,
        version: "v",
    };
    assert_eq!(a.missing(&[key]).unwrap(), [(0, Staleness::Absent)]);
    let s = |t: &str| Summary {
        text: t.into(),
        fit: FitReport::all(3),
    };
    a.put(&key, &s("Likes cats."), 0.5).unwrap();
    b.put(&key, &s("Likes cats."), 0.5).unwrap();
    assert_eq!(b.get(&key).unwrap().unwrap().summary, "Likes cats.");
    let changed = SummaryKey {
        profile_hash: "h2",
        ..key
    };
    assert_eq!(a.get(&changed).unwrap(), None);
    assert_eq!(
        a.missing(&[key, changed]).unwrap(),
        [(1, Staleness::ProfileChanged)]
    );
    b.put(&SummaryKey { user: "u0", ..key }, &s("Short."), 0.1)
        .unwrap();
    assert_eq!(
        a.summaries(&model, "v").unwrap(),
        vec![
            ("u0".to_string(), "Short.".to_string()),
            ("u1".into(), "Likes cats.".into())
        ]
    );
    let c = a.configs().unwrap();
    assert_eq!(
        c.iter().find(|c| c.model == model).map(|c| c.summaries),
        Some(2)
    );
}

#[test]
fn another_artifact_version_is_refused() {
    let Some(url) = url() else { return };
    let kind = format!("test artifact {}", std::process::id());
    let v1 = ArtifactSchema {
        kind: &kind,
        version: 1,
        ddl: "CREATE TABLE IF NOT EXISTS pgraphrag_test_artifacts (key text PRIMARY KEY, v text)",
    };
    let t = ArtifactTable::open(&url, &v1).unwrap();
    t.run("upsert", |c| {
        c.execute(
            "INSERT INTO pgraphrag_test_artifacts VALUES ($1, 'x') ON CONFLICT (key) DO UPDATE SET v = EXCLUDED.v",
            &[&kind],
        )
    })
    .unwrap();
    let v2 = ArtifactSchema { version: 2, ..v1 };
    let e = ArtifactTable::open(&url, &v2).unwrap_err();
    assert!(
        matches!(
            e,
            Error::SchemaVersion {
                found: 1,
                expected: 2,
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains(&kind), "{e}");
    t.run("cleanup", |c| {
        c.execute(
            "DELETE FROM public.pgraphrag_schema WHERE component = $1",
            &[&kind],
        )?;
        c.execute(
            "DELETE FROM pgraphrag_test_artifacts WHERE key = $1",
            &[&kind],
        )
    })
    .unwrap();
}
