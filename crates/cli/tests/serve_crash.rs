//! `pgraphrag serve` killed with SIGKILL during a stream of writes: after a restart every
//! acknowledged write is there, whole.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const KEY: &str = "crash-test-key-1";

/// Starts the server on a free loopback port; returns it and its base URL.
fn start(data: &std::path::Path, keys: &std::path::Path) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_pgraphrag"))
        .args(["serve", "--listen", "127.0.0.1:0", "--rate", "0"])
        .arg("--data")
        .arg(data)
        .arg("--keys")
        .arg(keys)
        .env("RUST_LOG", "warn")
        .stderr(Stdio::piped())
        .spawn()
        .expect("start pgraphrag serve");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let base = loop {
        let line = lines.next().expect("the server's first lines").unwrap();
        if let Some(addr) = line.split("listening on ").nth(1) {
            break addr.trim().to_string();
        }
    };
    // Keep draining stderr so the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    (child, base)
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(5)))
        .build()
        .into()
}

#[test]
fn acknowledged_writes_survive_kill_9() {
    let dir = tempfile::tempdir().unwrap();
    let keys = dir.path().join("KEYS.toml");
    std::fs::write(&keys, format!("[tenants.t]\nkeys = [\"{KEY}\"]\n")).unwrap();
    let data = dir.path().join("data");
    let (mut child, base) = start(&data, &keys);
    let auth = format!("Bearer {KEY}");
    let a = agent();
    let mut acknowledged = Vec::new();
    let t0 = Instant::now();
    // Writes for at most 1.5 s (and 5,000 writes), the kill landing in the middle.
    let killer = {
        let pid = child.id();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(700));
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        })
    };
    for i in 0..5000 {
        if t0.elapsed() > Duration::from_millis(1500) {
            break;
        }
        let body = json!({"text": format!("word{i} lavender soap review number {i}"), "item": format!("p{}", i % 7)});
        let url = format!("{base}/v1/users/u{}/documents/d{i}", i % 3);
        match a.put(&url).header("Authorization", &auth).send_json(&body) {
            Ok(r) if r.status() == 200 => acknowledged.push(i),
            _ => break, // the server is gone
        }
    }
    killer.join().unwrap();
    let _ = child.wait();
    assert!(
        acknowledged.len() > 10,
        "only {} writes before the kill",
        acknowledged.len()
    );

    let (mut child, base) = start(&data, &keys);
    let mut found = std::collections::HashMap::new();
    for u in 0..3 {
        let q =
            json!({"user": format!("u{u}"), "query": "lavender", "scope": "user", "k": 100_000});
        let mut r = a
            .post(format!("{base}/v1/context"))
            .header("Authorization", &auth)
            .send_json(&q)
            .unwrap();
        let v: Value = r.body_mut().read_json().unwrap();
        for e in v["entries"].as_array().unwrap() {
            found.insert(
                e["doc"].as_str().unwrap().to_string(),
                e["text"].as_str().unwrap().to_string(),
            );
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    for i in &acknowledged {
        let text = found
            .get(&format!("d{i}"))
            .unwrap_or_else(|| panic!("acknowledged write d{i} lost"));
        assert_eq!(text, &format!("word{i} lavender soap review number {i}"));
    }
    // At most the one write in flight at the kill was stored without its acknowledgement.
    assert!(
        found.len() <= acknowledged.len() + 1,
        "{} stored, {} acknowledged",
        found.len(),
        acknowledged.len()
    );
}
