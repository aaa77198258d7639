//! `pgraphrag serve`'s choice of store: `--data DIR` or `--store postgres://...`, exactly one;
//! anything else is a usage error (exit 2) that names both flags. No server is needed: each
//! command stops before opening a store.

use std::process::Command;

/// (exit code, stderr) of `pgraphrag serve --keys KEYS.toml` plus `args`.
fn serve(args: &[&str]) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let keys = dir.path().join("KEYS.toml");
    std::fs::write(&keys, "[tenants.acme]\nkeys = [\"acme-secret-1\"]\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_pgraphrag"))
        .args(["serve", "--keys"])
        .arg(&keys)
        .args(args)
        .env("RUST_BACKTRACE", "0")
        .env("RUST_LIB_BACKTRACE", "0")
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn data_and_store_are_exclusive_and_one_is_needed() {
    let url = "postgres://postgres@127.0.0.1:1/db";
    for args in [&["--data", "x", "--store", url][..], &[]] {
        let (code, err) = serve(args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains("--data") && err.contains("--store"), "{err}");
    }
    let (code, err) = serve(&["--store", "mysql://db"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("expected a PostgreSQL URL"), "{err}");
}

#[cfg(feature = "postgres")]
#[test]
fn a_bad_schema_name_is_a_usage_error() {
    let (code, err) = serve(&[
        "--store",
        "postgres://postgres@127.0.0.1:1/db",
        "--store-schema",
        "pgraphrag_amazon",
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("pgraphrag_amazon"), "{err}");
}

#[cfg(feature = "jetstream")]
#[test]
fn a_queue_needs_a_shared_store_and_summaries() {
    // The embedded store cannot be shared between processes.
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let (code, err) = serve(&["--data", data, "--queue", "nats://127.0.0.1:1"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--queue") && err.contains("--store"), "{err}");
    let url = "postgres://postgres@127.0.0.1:1/db";
    let (code, err) = serve(&[
        "--store",
        url,
        "--queue",
        "nats://127.0.0.1:1",
        "--no-summaries",
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--no-summaries"), "{err}");
    let (code, err) = serve(&["--store", url, "--queue", "not a url"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--queue"), "{err}");
}
