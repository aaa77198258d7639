//! The work queue against one real JetStream node: idempotent submission, draining workers,
//! retries ending in a dead letter, and the server's advisory for units that crashed workers.
//! Needs `nats-server` (see `queue_support`): skipped locally without it, failed under CI=true.
#![cfg(feature = "jetstream")]

mod queue_support;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use pgraphrag_store::queue::{
    DeadSource, Delivery, Error, Failure, Outcome, QueueConfig, Unit, WorkQueue, WorkerOptions,
    run_worker,
};

fn units(n: usize) -> Vec<Unit> {
    (0..n)
        .map(|i| Unit {
            kind: "toy".into(),
            id: format!("job-1.{i}"),
            payload: i.to_string().into_bytes(),
        })
        .collect()
}

fn config(stream: &str) -> QueueConfig {
    QueueConfig {
        stream: stream.into(),
        subjects: format!("t.{stream}"),
        dead_subjects: format!("t.{stream}_dead"),
        ack_wait: Duration::from_secs(1),
        max_deliver: 3,
        ..Default::default()
    }
}

fn drain_opts(name: &str) -> WorkerOptions {
    WorkerOptions {
        name: name.into(),
        drain: true,
        poll: Duration::from_millis(500),
        give_up_after: Duration::from_secs(20),
        ..Default::default()
    }
}

#[tokio::test]
async fn nothing_listening_is_a_connect_error_naming_the_servers() {
    let port = queue_support::free_base(&[0]);
    let url = format!("nats://127.0.0.1:{port}");
    let e = WorkQueue::connect(&url, QueueConfig::default(), "t")
        .await
        .err()
        .expect("no server listens there");
    assert!(matches!(e, Error::Connect { .. }), "{e}");
    assert!(e.to_string().contains(&url), "{e}");
    let e = WorkQueue::connect("http://x:1", QueueConfig::default(), "t")
        .await
        .err()
        .unwrap();
    assert!(matches!(e, Error::BadUrl { .. }), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resubmission_is_idempotent_and_a_worker_drains_the_queue() {
    let Some(bin) = queue_support::server_or_skip("queue idempotence") else {
        return;
    };
    let node = queue_support::Node::start(&bin);
    let q = WorkQueue::connect(&node.url, config("IDEM"), "t")
        .await
        .unwrap();
    q.ensure().await.unwrap();
    q.ensure().await.unwrap(); // a second process creating the same queue changes nothing
    let first = q.submit(&units(10)).await.unwrap();
    let again = q.submit(&units(10)).await.unwrap();
    assert_eq!((first.published, first.duplicates), (10, 0));
    assert_eq!((again.published, again.duplicates), (0, 10));
    let s = q.status().await.unwrap();
    assert_eq!((s.messages, s.pending, s.in_flight), (10, 10, 0));
    let d = q.depth().await.unwrap();
    assert_eq!((d.pending, d.in_flight), (10, 0));

    let seen: Arc<Mutex<BTreeMap<String, i64>>> = Arc::default();
    let s2 = Arc::clone(&seen);
    let handler = move |u: &Delivery| -> Result<Outcome, Failure> {
        s2.lock().unwrap().insert(u.id.clone(), u.delivered);
        assert_eq!(u.kind, "toy");
        Ok(Outcome::Stored)
    };
    let mut events = 0;
    let r = run_worker(&q, handler, &drain_opts("w1"), &mut |_| events += 1)
        .await
        .unwrap();
    assert_eq!((r.stored, r.failed, r.dead), (10, 0, 0));
    assert_eq!(events, 10);
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 10);
    assert!(seen.values().all(|&d| d == 1), "{seen:?}");
    let s = q.status().await.unwrap();
    assert_eq!(
        (s.messages, s.pending, s.in_flight),
        (0, 0, 0),
        "acked units leave a work queue"
    );
    assert!(s.dead.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_unit_is_retried_then_written_as_a_dead_letter() {
    let Some(bin) = queue_support::server_or_skip("queue dead letters") else {
        return;
    };
    let node = queue_support::Node::start(&bin);
    let q = WorkQueue::connect(&node.url, config("DEAD"), "t")
        .await
        .unwrap();
    q.ensure().await.unwrap();
    q.submit(&units(4)).await.unwrap();
    let handler = |u: &Delivery| {
        if u.payload == b"2" {
            Err(Failure::Retry("unit 2 is broken".into()))
        } else {
            Ok(Outcome::Stored)
        }
    };
    let r = run_worker(&q, handler, &drain_opts("w1"), &mut |_| {})
        .await
        .unwrap();
    assert_eq!((r.stored, r.failed, r.dead), (3, 3, 1));
    let s = q.status().await.unwrap();
    assert_eq!(s.dead.len(), 1, "{s:?}");
    let d = &s.dead[0];
    assert_eq!(d.source, DeadSource::Worker);
    assert_eq!(d.id.as_deref(), Some("job-1.2"));
    assert_eq!(d.deliveries, 3);
    assert_eq!(d.worker.as_deref(), Some("w1"));
    assert!(d.error.as_deref().unwrap().contains("unit 2 is broken"));
    assert_eq!((s.pending, s.in_flight), (0, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn units_that_crash_every_worker_are_reported_by_the_advisory() {
    let Some(bin) = queue_support::server_or_skip("queue max-deliveries advisory") else {
        return;
    };
    let node = queue_support::Node::start(&bin);
    let cfg = QueueConfig {
        max_deliver: 2,
        ..config("CRASH")
    };
    let q = WorkQueue::connect(&node.url, cfg.clone(), "t")
        .await
        .unwrap();
    q.ensure().await.unwrap();
    q.submit(&units(1)).await.unwrap();
    // A "worker" that takes the unit and dies (never acks), twice.
    let client = async_nats::connect(&node.url).await.unwrap();
    let js = async_nats::jetstream::new(client);
    let consumer: async_nats::jetstream::consumer::PullConsumer = js
        .get_stream(&cfg.stream)
        .await
        .unwrap()
        .get_consumer(&cfg.consumer)
        .await
        .unwrap();
    for delivery in 1..=2 {
        let mut batch = consumer
            .batch()
            .max_messages(1)
            .expires(Duration::from_secs(5))
            .messages()
            .await
            .unwrap();
        let m = batch.next().await.expect("a delivery").unwrap();
        assert_eq!(m.info().unwrap().delivered, delivery);
        drop(m); // no ack
        tokio::time::sleep(cfg.ack_wait + Duration::from_millis(300)).await;
    }
    // A live worker polls: the server finds the unit out of deliveries and says so.
    let mut batch = consumer
        .batch()
        .max_messages(1)
        .expires(Duration::from_secs(2))
        .messages()
        .await
        .unwrap();
    assert!(batch.next().await.is_none(), "no third delivery");
    let mut found = None;
    for _ in 0..40 {
        let s = q.status().await.unwrap();
        if let Some(d) = s.dead.first() {
            found = Some(d.clone());
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let d = found.expect("a MAX_DELIVERIES advisory in the dead-letter stream");
    assert_eq!(d.source, DeadSource::MaxDeliveries);
    assert_eq!(d.id.as_deref(), Some("job-1.0"));
    assert_eq!(d.deliveries, 2);
}
