//! JetStream work queues for the offline jobs (feature `jetstream`).
//!
//! A job (ranking every user of a split, embedding a corpus, …) is split into **units**, one
//! JetStream message each, on a stream with `WorkQueue` retention: a message leaves the stream
//! when a worker acknowledges it. Any number of stateless workers ([`run_worker`]) share one
//! durable pull consumer:
//!
//! * **Idempotent submission**: every unit carries a dedup id (`Nats-Msg-Id`), so submitting
//!   the same units again within [`QueueConfig::dedup_window`] publishes nothing new
//!   ([`SubmitReport::duplicates`]); after the window a resubmitted unit is delivered again and
//!   the handler finds its result already stored ([`Outcome::AlreadyDone`]).
//! * **Ack after store**: the worker acknowledges a unit only after the handler returned, that
//!   is after its result is committed. A worker killed mid-unit never acknowledges it; the
//!   server redelivers it after [`QueueConfig::ack_wait`] to another worker. While a unit runs
//!   the worker tells the server it is still working (`+WPI`) every third of the ack wait, so a
//!   long unit is not redelivered to a second worker.
//! * **Bounded retries, failures reported**: a unit whose handler fails is retried up to
//!   [`QueueConfig::max_deliver`] deliveries; then the worker writes a dead letter (the unit,
//!   the error, the deliveries) to the dead-letter stream and terminates the message. Units
//!   that exhausted their deliveries by crashing workers are reported by the server's
//!   `MAX_DELIVERIES` advisory, which the same stream captures. [`WorkQueue::status`] lists them.
//!
//! The library is async (tokio); the caller builds the runtime (the CLI does). Nothing here
//! knows what a unit means: the handler does, and it decides where results go.
//!
//! ```no_run
//! use pgraphrag_store::queue::{QueueConfig, Unit, WorkQueue};
//! # async fn demo() -> pgraphrag_store::queue::Result<()> {
//! let queue = WorkQueue::connect("nats://127.0.0.1:4222", QueueConfig::default(), "submitter").await?;
//! queue.ensure().await?;
//! let units = vec![Unit { kind: "demo".into(), id: "job-1.0".into(), payload: b"{}".to_vec() }];
//! let first = queue.submit(&units).await?;
//! let again = queue.submit(&units).await?;
//! assert_eq!((first.published, again.duplicates), (1, 1));
//! # Ok(()) }
//! ```

mod status;
mod stream;
mod worker;

pub use status::{DeadLetter, DeadSource, QueueDepth, QueueStatus};
pub use stream::{
    BoxError, Error, QueueConfig, Result, SubmitReport, Unit, WorkQueue, parse_servers,
};
pub use worker::{
    Delivery, Event, Failure, Handler, Outcome, WorkerOptions, WorkerReport, run_worker,
};
