//! The worker loop: pull one unit, run the handler, ack after it returned.
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_nats::jetstream::AckKind;
use futures_util::StreamExt;
use serde::Serialize;

use async_nats::jetstream::consumer::PullConsumer;

use super::stream::{BoxError, Error, Result, WorkQueue};

/// A unit as a handler sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// The subject it was published on (`{subjects}.{kind}`).
    pub subject: String,
    /// The unit's kind (the subject's last token).
    pub kind: String,
    /// Its dedup id (`Nats-Msg-Id`; `seq-N` when it was published without one).
    pub id: String,
    /// What the submitter put in it.
    pub payload: Vec<u8>,
    /// How many times it has been delivered, this time included (1 the first time).
    pub delivered: i64,
    /// Its sequence number in the stream.
    pub stream_sequence: u64,
}

/// What a handler did with a unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Outcome {
    /// It computed the unit and committed the result.
    Stored,
    /// The result was already stored (a redelivery after a crash between store and ack, or a
    /// resubmission): nothing computed.
    AlreadyDone,
}

/// Why a handler did not finish a unit.
#[derive(Debug)]
pub enum Failure {
    /// The unit failed: it is retried (redelivered after a short delay) until it has been
    /// delivered `max_deliver` times, then reported as a dead letter.
    Retry(BoxError),
    /// The worker cannot go on (its store is unusable, say): the unit goes back to the queue
    /// at once and [`run_worker`] returns [`Error::Fatal`].
    Fatal(BoxError),
}

/// Runs units. It is called on a blocking thread, one unit at a time; it must commit the
/// unit's result before returning [`Outcome::Stored`] and should check first whether the
/// result is already there ([`Outcome::AlreadyDone`]), which makes redelivery harmless.
pub trait Handler: Send + 'static {
    /// Runs one unit.
    fn handle(&mut self, unit: &Delivery) -> std::result::Result<Outcome, Failure>;
}

impl<F> Handler for F
where
    F: FnMut(&Delivery) -> std::result::Result<Outcome, Failure> + Send + 'static,
{
    fn handle(&mut self, unit: &Delivery) -> std::result::Result<Outcome, Failure> {
        self(unit)
    }
}

/// How a worker runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerOptions {
    /// The worker's name (in dead letters and events).
    pub name: String,
    /// Stop when the queue is drained (nothing pending, nothing awaiting an ack) instead of
    /// waiting for more units forever.
    pub drain: bool,
    /// Stop after this many units.
    pub max_units: Option<usize>,
    /// How long one pull waits for a unit.
    pub poll: Duration,
    /// Give up ([`Error::Unavailable`]) after failing to reach the queue for this long.
    pub give_up_after: Duration,
}

impl Default for WorkerOptions {
    /// Named `worker`, runs forever, 2 s polls, gives up after 120 s without the queue.
    fn default() -> Self {
        WorkerOptions {
            name: "worker".into(),
            drain: false,
            max_units: None,
            poll: Duration::from_secs(2),
            give_up_after: Duration::from_secs(120),
        }
    }
}

/// Something a worker did, for the caller's log or progress display.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A unit finished and was acknowledged (or its ack failed and it will come back, found
    /// done).
    Done {
        /// The unit's id.
        id: String,
        /// What the handler did.
        outcome: Outcome,
        /// Seconds the handler took.
        seconds: f64,
        /// Whether the server confirmed the ack.
        acked: bool,
    },
    /// A unit failed; `dead` when it will not be retried.
    Failed {
        /// The unit's id.
        id: String,
        /// The error chain.
        error: String,
        /// Deliveries so far.
        delivered: i64,
        /// Whether it was given up (a dead letter was written).
        dead: bool,
    },
    /// The queue could not be reached; the worker retries.
    Retrying {
        /// The error chain.
        error: String,
    },
}

/// What a worker did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct WorkerReport {
    /// Units computed and stored.
    pub stored: usize,
    /// Units found already done.
    pub already_done: usize,
    /// Failed attempts (each retried or given up).
    pub failed: usize,
    /// Units given up (dead letters written).
    pub dead: usize,
    /// Acks the server did not confirm (those units come back and are found done).
    pub unconfirmed_acks: usize,
    /// Wall seconds.
    pub seconds: f64,
}

/// The dead letter a worker writes for a unit it gives up.
#[derive(Serialize)]
struct DeadRecord<'a> {
    id: &'a str,
    subject: &'a str,
    stream_seq: u64,
    deliveries: i64,
    worker: &'a str,
    error: &'a str,
}

/// Errors chained into one line.
fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}

/// Tracks how long the queue has been unreachable.
struct Outage {
    since: Option<Instant>,
    limit: Duration,
}

impl Outage {
    fn ok(&mut self) {
        self.since = None;
    }

    /// Records an error; `Err` once the outage lasted past the limit.
    fn failed(
        &mut self,
        e: BoxError,
        queue: &WorkQueue,
        worker: &str,
        on_event: &mut dyn FnMut(&Event),
    ) -> Result<()> {
        let since = *self.since.get_or_insert_with(Instant::now);
        if since.elapsed() > self.limit {
            return Err(Error::Unavailable {
                worker: worker.to_string(),
                stream: queue.config.stream.clone(),
                seconds: since.elapsed().as_secs_f64(),
                source: e,
            });
        }
        on_event(&Event::Retrying {
            error: chain(e.as_ref()),
        });
        Ok(())
    }
}

/// Pulls units from `queue` one at a time and runs `handler` on each until the queue is
/// drained ([`WorkerOptions::drain`]), `max_units` were run, or forever. Each unit is
/// acknowledged after the handler returned; while it runs the server is told every third of
/// the ack wait that work is in progress. Losing the servers is waited out (the client
/// reconnects) for up to [`WorkerOptions::give_up_after`].
///
/// ```no_run
/// use pgraphrag_store::queue::{Delivery, Failure, Outcome, QueueConfig, WorkQueue, WorkerOptions, run_worker};
/// # async fn demo() -> pgraphrag_store::queue::Result<()> {
/// let queue = WorkQueue::connect("nats://127.0.0.1:4222", QueueConfig::default(), "w1").await?;
/// queue.ensure().await?;
/// let opts = WorkerOptions { name: "w1".into(), drain: true, ..Default::default() };
/// let handler = |_unit: &Delivery| Ok::<_, Failure>(Outcome::Stored);
/// let report = run_worker(&queue, handler, &opts, &mut |_| {}).await?;
/// println!("{} units", report.stored);
/// # Ok(()) }
/// ```
pub async fn run_worker<H: Handler>(
    queue: &WorkQueue,
    handler: H,
    opts: &WorkerOptions,
    on_event: &mut dyn FnMut(&Event),
) -> Result<WorkerReport> {
    let handler = Arc::new(Mutex::new(handler));
    let result = work(queue, &handler, opts, on_event).await;
    // A handler may own a blocking client (the synchronous PostgreSQL client blocks on its own
    // runtime when dropped, which panics on an async thread): dropped on a blocking thread.
    let _ = tokio::task::spawn_blocking(move || drop(handler)).await;
    result
}

/// [`run_worker`]'s loop.
async fn work<H: Handler>(
    queue: &WorkQueue,
    handler: &Arc<Mutex<H>>,
    opts: &WorkerOptions,
    on_event: &mut dyn FnMut(&Event),
) -> Result<WorkerReport> {
    let start = Instant::now();
    let mut report = WorkerReport::default();
    let mut outage = Outage {
        since: None,
        limit: opts.give_up_after,
    };
    let consumer = loop {
        match queue.consumer().await {
            Ok(c) => break c,
            Err(e) => outage.failed(Box::new(e), queue, &opts.name, on_event)?,
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    loop {
        let done = report.stored + report.already_done + report.dead;
        if opts.max_units.is_some_and(|n| done >= n) {
            break;
        }
        // A unit waiting now?
        match pull(&consumer, None).await {
            Ok(Some(msg)) => {
                outage.ok();
                run_one(queue, handler, msg, opts, &mut report, on_event).await?;
                continue;
            }
            Ok(None) => outage.ok(),
            Err(e) => {
                outage.failed(e, queue, &opts.name, on_event)?;
                tokio::time::sleep(Duration::from_millis(300)).await;
                continue;
            }
        }
        // None: drained (nothing undelivered, nothing awaiting an ack, so nothing can come
        // back), or wait for one.
        if opts.drain {
            let mut c = consumer.clone();
            match c.info().await {
                Ok(info) => {
                    outage.ok();
                    if info.num_pending == 0 && info.num_ack_pending == 0 {
                        break;
                    }
                }
                Err(e) => {
                    outage.failed(Box::new(e), queue, &opts.name, on_event)?;
                    tokio::time::sleep(Duration::from_millis(300)).await;
                    continue;
                }
            }
        }
        match pull(&consumer, Some(opts.poll)).await {
            Ok(Some(msg)) => {
                outage.ok();
                run_one(queue, handler, msg, opts, &mut report, on_event).await?;
            }
            Ok(None) => outage.ok(),
            Err(e) => {
                outage.failed(e, queue, &opts.name, on_event)?;
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
        }
    }
    report.seconds = start.elapsed().as_secs_f64();
    Ok(report)
}

/// Pulls at most one unit: what is waiting now (`wait` = `None`), or the first to arrive
/// within `wait`.
async fn pull(
    consumer: &PullConsumer,
    wait: Option<Duration>,
) -> std::result::Result<Option<async_nats::jetstream::Message>, BoxError> {
    let one = async {
        let mut batch = match wait {
            None => consumer.fetch().max_messages(1).messages().await?,
            Some(d) => {
                consumer
                    .batch()
                    .max_messages(1)
                    .expires(d)
                    .messages()
                    .await?
            }
        };
        match batch.next().await {
            None => Ok(None),
            Some(Ok(m)) => Ok(Some(m)),
            Some(Err(e)) => Err(e),
        }
    };
    // A pull request lost with a server that died answers never: bound it.
    let limit = wait.unwrap_or_default() + Duration::from_secs(10);
    match tokio::time::timeout(limit, one).await {
        Ok(r) => r,
        Err(_) => Err(format!("no answer to a pull request in {limit:?}").into()),
    }
}

/// Runs one delivered unit and acks, naks or terminates it.
async fn run_one<H: Handler>(
    queue: &WorkQueue,
    handler: &Arc<Mutex<H>>,
    msg: async_nats::jetstream::Message,
    opts: &WorkerOptions,
    report: &mut WorkerReport,
    on_event: &mut dyn FnMut(&Event),
) -> Result<()> {
    let (delivered, stream_sequence) = match msg.info() {
        Ok(i) => (i.delivered, i.stream_sequence),
        Err(_) => (1, 0),
    };
    let subject = msg.subject.to_string();
    let kind = subject.rsplit('.').next().unwrap_or_default().to_string();
    let id = msg
        .headers
        .as_ref()
        .and_then(|h| h.get(async_nats::header::NATS_MESSAGE_ID))
        .map(|v| v.as_str().to_string())
        .unwrap_or_else(|| format!("seq-{stream_sequence}"));
    let unit = Delivery {
        subject: subject.clone(),
        kind: kind.clone(),
        id: id.clone(),
        payload: msg.payload.to_vec(),
        delivered,
        stream_sequence,
    };
    let msg = Arc::new(msg);
    // Keep the unit ours while the handler runs.
    let beat = {
        let msg = Arc::clone(&msg);
        let every = queue.config.ack_wait / 3;
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                let _ = msg.ack_with(AckKind::Progress).await;
            }
        })
    };
    let t = Instant::now();
    let h = Arc::clone(handler);
    let result = tokio::task::spawn_blocking(move || {
        let mut h = h.lock().unwrap_or_else(|e| e.into_inner());
        h.handle(&unit)
    })
    .await;
    beat.abort();
    let seconds = t.elapsed().as_secs_f64();
    let result = match result {
        Ok(r) => r,
        Err(join) => Err(Failure::Retry(
            format!("the handler panicked: {join}").into(),
        )),
    };
    match result {
        Ok(outcome) => {
            let acked = msg.double_ack().await.is_ok();
            if !acked {
                report.unconfirmed_acks += 1;
            }
            match outcome {
                Outcome::Stored => report.stored += 1,
                Outcome::AlreadyDone => report.already_done += 1,
            }
            on_event(&Event::Done {
                id,
                outcome,
                seconds,
                acked,
            });
        }
        Err(Failure::Retry(e)) => {
            report.failed += 1;
            let error = chain(e.as_ref());
            let dead = delivered >= queue.config.max_deliver;
            if dead {
                let body = serde_json::to_vec(&DeadRecord {
                    id: &id,
                    subject: &subject,
                    stream_seq: stream_sequence,
                    deliveries: delivered,
                    worker: &opts.name,
                    error: &error,
                })
                .unwrap_or_default();
                // If the dead letter cannot be written, leave the unit unacked: the server's
                // MAX_DELIVERIES advisory reports it after the ack wait.
                if queue.publish_dead(&kind, body).await.is_ok() {
                    let _ = msg.ack_with(AckKind::Term).await;
                }
                report.dead += 1;
            } else {
                let delay = Duration::from_millis(500 * delivered.clamp(1, 20) as u64);
                let _ = msg.ack_with(AckKind::Nak(Some(delay))).await;
            }
            on_event(&Event::Failed {
                id,
                error,
                delivered,
                dead,
            });
        }
        Err(Failure::Fatal(e)) => {
            let _ = msg.ack_with(AckKind::Nak(None)).await;
            return Err(Error::Fatal {
                worker: opts.name.clone(),
                id,
                source: e,
            });
        }
    }
    Ok(())
}
