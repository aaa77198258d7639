//! What a queue holds: units waiting, in flight, given up.
use serde::{Deserialize, Serialize};

use super::stream::{Result, WorkQueue};

/// Where a dead letter came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum DeadSource {
    /// A worker gave the unit up after its handler failed on the last allowed delivery.
    Worker,
    /// The server's `MAX_DELIVERIES` advisory: the unit was delivered `max_deliver` times
    /// without an ack (workers crashed or stalled on it).
    MaxDeliveries,
}

/// A unit given up.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeadLetter {
    /// Where the record came from.
    pub source: DeadSource,
    /// The unit's dedup id, when known (an advisory names only the stream sequence; the id is
    /// looked up while the unit is still in the stream).
    pub id: Option<String>,
    /// The unit's sequence in the work-queue stream.
    pub stream_sequence: u64,
    /// Deliveries made.
    pub deliveries: i64,
    /// The handler's error (worker records only).
    pub error: Option<String>,
    /// The worker that gave it up (worker records only).
    pub worker: Option<String>,
}

/// A snapshot of a work queue.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QueueStatus {
    /// The work-queue stream.
    pub stream: String,
    /// Units in the stream (not yet acknowledged, including given-up ones still kept).
    pub messages: u64,
    /// Units not yet delivered to any worker.
    pub pending: u64,
    /// Units delivered and awaiting their ack.
    pub in_flight: usize,
    /// Units delivered more than once so far.
    pub redelivered: usize,
    /// Workers waiting for units (open pull requests).
    pub waiting_workers: usize,
    /// The stream's replicas.
    pub replicas: usize,
    /// The server leading the stream, on a cluster.
    pub leader: Option<String>,
    /// Units given up.
    pub dead: Vec<DeadLetter>,
}

/// How many units a queue holds for its workers: a cheap read of the shared consumer (no dead
/// letters), for a gauge read often.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct QueueDepth {
    /// Units not yet delivered to any worker.
    pub pending: u64,
    /// Units delivered and awaiting their ack.
    pub in_flight: usize,
}

#[derive(Deserialize)]
struct WorkerDead {
    id: String,
    stream_seq: u64,
    deliveries: i64,
    worker: String,
    error: String,
}

#[derive(Deserialize)]
struct Advisory {
    stream_seq: u64,
    deliveries: i64,
}

impl WorkQueue {
    /// Units waiting and in flight, from the consumer alone (two requests; [`WorkQueue::status`]
    /// also reads the stream and every dead letter).
    ///
    /// ```no_run
    /// # async fn demo(queue: pgraphrag_store::queue::WorkQueue) -> pgraphrag_store::queue::Result<()> {
    /// let d = queue.depth().await?;
    /// println!("{} waiting, {} in flight", d.pending, d.in_flight);
    /// # Ok(()) }
    /// ```
    pub async fn depth(&self) -> Result<QueueDepth> {
        let mut consumer = self.consumer().await?;
        let info = consumer
            .info()
            .await
            .map_err(|e| self.js_err("reading the consumer", &self.config.stream)(Box::new(e)))?;
        Ok(QueueDepth {
            pending: info.num_pending,
            in_flight: info.num_ack_pending,
        })
    }

    /// Reads the stream, the consumer and every dead letter.
    ///
    /// ```no_run
    /// # async fn demo(queue: pgraphrag_store::queue::WorkQueue) -> pgraphrag_store::queue::Result<()> {
    /// let s = queue.status().await?;
    /// println!("{} waiting, {} in flight, {} given up", s.pending, s.in_flight, s.dead.len());
    /// # Ok(()) }
    /// ```
    pub async fn status(&self) -> Result<QueueStatus> {
        let c = &self.config;
        let js = self.context();
        let mut stream = js
            .get_stream(&c.stream)
            .await
            .map_err(|e| self.js_err("reading", &c.stream)(Box::new(e)))?;
        let info = stream
            .info()
            .await
            .map_err(|e| self.js_err("reading", &c.stream)(Box::new(e)))?
            .clone();
        let consumer = self.consumer().await?;
        let mut consumer = consumer;
        let ci = consumer
            .info()
            .await
            .map_err(|e| self.js_err("reading the consumer", &c.stream)(Box::new(e)))?
            .clone();
        let mut dead = Vec::new();
        let mut dstream = js
            .get_stream(c.dead_stream())
            .await
            .map_err(|e| self.js_err("reading", &c.dead_stream())(Box::new(e)))?;
        let dinfo = dstream
            .info()
            .await
            .map_err(|e| self.js_err("reading", &c.dead_stream())(Box::new(e)))?
            .clone();
        if dinfo.state.messages > 0 {
            for seq in dinfo.state.first_sequence..=dinfo.state.last_sequence {
                let Ok(m) = dstream.get_raw_message(seq).await else {
                    continue;
                };
                if let Ok(w) = serde_json::from_slice::<WorkerDead>(&m.payload) {
                    dead.push(DeadLetter {
                        source: super::DeadSource::Worker,
                        id: Some(w.id),
                        stream_sequence: w.stream_seq,
                        deliveries: w.deliveries,
                        error: Some(w.error),
                        worker: Some(w.worker),
                    });
                } else if let Ok(a) = serde_json::from_slice::<Advisory>(&m.payload) {
                    let id = match stream.get_raw_message(a.stream_seq).await {
                        Ok(unit) => unit
                            .headers
                            .get(async_nats::header::NATS_MESSAGE_ID)
                            .map(|v| v.as_str().to_string()),
                        Err(_) => None,
                    };
                    dead.push(DeadLetter {
                        source: super::DeadSource::MaxDeliveries,
                        id,
                        stream_sequence: a.stream_seq,
                        deliveries: a.deliveries,
                        error: None,
                        worker: None,
                    });
                }
            }
        }
        Ok(QueueStatus {
            stream: c.stream.clone(),
            messages: info.state.messages,
            pending: ci.num_pending,
            in_flight: ci.num_ack_pending,
            redelivered: ci.num_redelivered,
            waiting_workers: ci.num_waiting,
            replicas: info.config.num_replicas,
            leader: info.cluster.and_then(|cl| cl.leader),
            dead,
        })
    }
}
