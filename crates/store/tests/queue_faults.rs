//! Faults: three worker processes drain a work queue on the three-node cluster of
//! `scripts/cluster_nats.sh` (own ports, loopback); mid-job one worker is killed with
//! `kill -9` and so is the node leading the stream. The job completes; counted from the
//! result store: every unit stored, none stored twice.
//!
//! The workers are this test binary run again (`worker_process`, which does nothing unless
//! started by the test). Needs `nats-server` (see `queue_support`): skipped locally without
//! it, failed under CI=true. Bounded: ~20 s normally, 120 s at most.
#![cfg(feature = "jetstream")]

mod queue_support;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use pgraphrag_store::queue::{
    Delivery, Failure, Outcome, QueueConfig, Unit, WorkQueue, WorkerOptions, run_worker,
};
use pgraphrag_store::sqlite::{self, Options, Schema};

const UNITS: usize = 90;
const WORK_MS: u64 = 150;

const RESULTS: Schema<'static> = Schema {
    kind: "fault-test results",
    application_id: 0x7467_0001,
    version: 1,
    ddl: "CREATE TABLE IF NOT EXISTS results (
              unit TEXT PRIMARY KEY, worker TEXT NOT NULL, stores INTEGER NOT NULL DEFAULT 1);
          CREATE TABLE IF NOT EXISTS reports (worker TEXT PRIMARY KEY, body TEXT NOT NULL);",
};

fn config() -> QueueConfig {
    QueueConfig {
        stream: "FAULTS".into(),
        replicas: 3,
        ack_wait: Duration::from_secs(3),
        max_deliver: 20,
        ..Default::default()
    }
}

fn count(db: &Path, sql: &str) -> i64 {
    let c = sqlite::open(db, &RESULTS, &Options::default()).unwrap();
    c.query_row(sql, [], |r| r.get(0)).unwrap()
}

fn spawn_worker(urls: &str, db: &Path, name: &str) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["worker_process", "--exact", "--ignored", "--nocapture"])
        .env("QUEUE_FAULTS_URLS", urls)
        .env("QUEUE_FAULTS_DB", db)
        .env("QUEUE_FAULTS_NAME", name)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap()
}

/// Waits for `child` up to `until`; kills it and fails past that.
fn wait_until(child: &mut Child, until: Instant, what: &str) -> std::process::ExitStatus {
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return st;
        }
        if Instant::now() > until {
            let _ = child.kill();
            panic!("{what} did not finish in time");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn kill_a_worker_and_the_stream_leader_mid_job_loses_and_repeats_nothing() {
    let Some(bin) = queue_support::server_or_skip("queue faults") else {
        return;
    };
    let deadline = Instant::now() + Duration::from_secs(120);
    let cluster = queue_support::Cluster::start(&bin);
    let urls = cluster.urls();
    let work = tempfile::tempdir().unwrap();
    let db = work.path().join("results.sqlite");
    drop(sqlite::open(&db, &RESULTS, &Options::default()).unwrap());

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let q = rt.block_on(async {
        let q = WorkQueue::connect(&urls, config(), "test").await.unwrap();
        q.ensure().await.unwrap();
        let units: Vec<Unit> = (0..UNITS)
            .map(|i| Unit {
                kind: "toy".into(),
                id: format!("faults.{i}"),
                payload: i.to_string().into_bytes(),
            })
            .collect();
        let r = q.submit(&units).await.unwrap();
        assert_eq!(r.published, UNITS);
        q
    });

    let mut workers: Vec<Child> = (0..3)
        .map(|i| spawn_worker(&urls, &db, &format!("w{i}")))
        .collect();
    // Mid-job: a third of the units stored.
    while count(&db, "SELECT COUNT(*) FROM results") < (UNITS / 3) as i64 {
        assert!(Instant::now() < deadline, "the workers made no progress");
        std::thread::sleep(Duration::from_millis(50));
    }
    workers[0].kill().unwrap(); // SIGKILL
    workers[0].wait().unwrap();
    let leader = rt
        .block_on(q.status())
        .unwrap()
        .leader
        .expect("a clustered stream has a leader");
    let node: usize = leader
        .strip_prefix("pgraphrag-n")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("unexpected server name {leader}"));
    cluster.kill9(node);
    let stored_at_kill = count(&db, "SELECT COUNT(*) FROM results");
    assert!(
        stored_at_kill < UNITS as i64,
        "the job was over before the faults"
    );

    for (i, w) in workers.iter_mut().enumerate().skip(1) {
        let st = wait_until(w, deadline, &format!("worker w{i}"));
        assert!(st.success(), "worker w{i} failed: {st}");
    }
    let results = count(&db, "SELECT COUNT(*) FROM results");
    let stores = count(&db, "SELECT SUM(stores) FROM results");
    let twice = count(&db, "SELECT COUNT(*) FROM results WHERE stores > 1");
    assert_eq!(results, UNITS as i64, "every unit stored");
    assert_eq!((stores, twice), (UNITS as i64, 0), "no unit stored twice");
    for w in ["w1", "w2"] {
        let n = count(
            &db,
            &format!("SELECT COUNT(*) FROM results WHERE worker = '{w}'"),
        );
        assert!(n > 0, "{w} stored nothing");
    }
    // The queue, read through the two remaining nodes, holds nothing.
    let s = rt.block_on(async {
        let mut last = None;
        for _ in 0..20 {
            match q.status().await {
                Ok(s) => return s,
                Err(e) => last = Some(e),
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        panic!("no status through the remaining nodes: {last:?}")
    });
    assert_eq!((s.messages, s.pending, s.in_flight), (0, 0, 0), "{s:?}");
    assert!(s.dead.is_empty(), "{s:?}");
    let c = sqlite::open(&db, &RESULTS, &Options::default()).unwrap();
    let reports: Vec<String> = c
        .prepare("SELECT worker || ' ' || body FROM reports ORDER BY worker")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    eprintln!(
        "faults: {UNITS} units, {stored_at_kill} stored when w0 and node {node} (leader) were killed; \
         {results} stored, {stores} stores; survivors: {reports:?}; cluster after: {}",
        cluster.status().replace('\n', "; ")
    );
}

/// A worker process of the fault test (does nothing unless the test started it).
#[test]
#[ignore = "run by kill_a_worker_and_the_stream_leader_mid_job_loses_and_repeats_nothing"]
fn worker_process() {
    let (Ok(urls), Ok(db), Ok(name)) = (
        std::env::var("QUEUE_FAULTS_URLS"),
        std::env::var("QUEUE_FAULTS_DB"),
        std::env::var("QUEUE_FAULTS_NAME"),
    ) else {
        return;
    };
    let conn = sqlite::open(Path::new(&db), &RESULTS, &Options::default()).unwrap();
    let worker = name.clone();
    let handler = move |u: &Delivery| -> Result<Outcome, Failure> {
        let done: bool = conn
            .query_row(
                "SELECT COUNT(*) > 0 FROM results WHERE unit = ?1",
                [&u.id],
                |r| r.get(0),
            )
            .map_err(|e| Failure::Fatal(Box::new(e)))?;
        if done {
            return Ok(Outcome::AlreadyDone);
        }
        std::thread::sleep(Duration::from_millis(WORK_MS)); // the computation
        conn.execute(
            "INSERT INTO results (unit, worker) VALUES (?1, ?2)
             ON CONFLICT (unit) DO UPDATE SET stores = stores + 1",
            [&u.id, &worker],
        )
        .map_err(|e| Failure::Fatal(Box::new(e)))?;
        Ok(Outcome::Stored)
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let report = rt
        .block_on(async {
            let q = WorkQueue::connect(&urls, config(), &name).await?;
            let opts = WorkerOptions {
                name: name.clone(),
                drain: true,
                poll: Duration::from_secs(1),
                give_up_after: Duration::from_secs(60),
                ..Default::default()
            };
            run_worker(&q, handler, &opts, &mut |e| eprintln!("{name}: {e:?}")).await
        })
        .unwrap();
    let c = sqlite::open(Path::new(&db), &RESULTS, &Options::default()).unwrap();
    c.execute(
        "INSERT OR REPLACE INTO reports (worker, body) VALUES (?1, ?2)",
        [&name, &format!("{report:?}")],
    )
    .unwrap();
}
