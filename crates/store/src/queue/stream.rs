//! The work queue's stream and consumer: connecting, submitting and acknowledging units.
use std::time::Duration;

use async_nats::jetstream;
use async_nats::jetstream::consumer::{AckPolicy, PullConsumer, pull};
use async_nats::jetstream::message::PublishMessage;
use async_nats::jetstream::stream::{self, RetentionPolicy, StorageType};

/// A boxed error from the NATS client or a handler.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Errors of the work queue.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The server list cannot be parsed.
    #[error(
        "NATS server list {urls:?}: {reason}; pass nats://HOST:PORT URLs separated by commas (e.g. the PGRAPHRAG_NATS_URL that scripts/cluster_nats.sh writes to runs/cluster/env.sh)"
    )]
    BadUrl {
        /// The list as given.
        urls: String,
        /// What is wrong with it.
        reason: String,
    },
    /// No server of the list answered.
    #[error(
        "cannot connect to NATS at {urls} (is the cluster running? `scripts/cluster_nats.sh status` tells, `start` starts it)"
    )]
    Connect {
        /// The list as given.
        urls: String,
        /// The client's error.
        #[source]
        source: BoxError,
    },
    /// The configuration is unusable.
    #[error("invalid work-queue configuration: {0}")]
    Config(String),
    /// A JetStream request (creating or reading a stream or consumer) failed.
    #[error(
        "JetStream: {what} of stream {stream} failed (is JetStream enabled on the servers, and are enough of them up for {replicas} replica(s)?)"
    )]
    JetStream {
        /// What was asked (e.g. `creating`).
        what: &'static str,
        /// The stream.
        stream: String,
        /// The replicas the configuration asks for.
        replicas: usize,
        /// The client's error.
        #[source]
        source: BoxError,
    },
    /// Publishing a unit failed.
    #[error(
        "publishing unit {id} to {subject} failed (no stream listens there, or the cluster lost its quorum); submitting again is safe: units are deduplicated by id"
    )]
    Publish {
        /// The subject.
        subject: String,
        /// The unit's dedup id.
        id: String,
        /// The client's error.
        #[source]
        source: BoxError,
    },
    /// A unit's kind or id cannot be used.
    #[error("unit {id:?} of kind {kind:?}: {reason}")]
    BadUnit {
        /// The unit's kind.
        kind: String,
        /// The unit's id.
        id: String,
        /// What is wrong.
        reason: String,
    },
    /// A worker lost the queue for longer than it may wait.
    #[error(
        "worker {worker}: no working connection to stream {stream} for {seconds:.0} s (the cluster is down or lost its quorum); units it held are redelivered to other workers"
    )]
    Unavailable {
        /// The worker's name.
        worker: String,
        /// The stream.
        stream: String,
        /// How long it tried.
        seconds: f64,
        /// The last error.
        #[source]
        source: BoxError,
    },
    /// The handler asked the worker to stop.
    #[error(
        "worker {worker} stopped on unit {id}: the handler reported a fatal error (the unit goes back to the queue)"
    )]
    Fatal {
        /// The worker's name.
        worker: String,
        /// The unit's dedup id.
        id: String,
        /// The handler's error.
        #[source]
        source: BoxError,
    },
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Names and limits of a work queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueConfig {
    /// The work-queue stream (letters, digits, `-`, `_`).
    pub stream: String,
    /// Its subjects: `{subjects}.{kind}` per unit kind.
    pub subjects: String,
    /// The durable pull consumer every worker shares.
    pub consumer: String,
    /// The dead-letter stream (`{stream}_DEAD` by default) and its subjects.
    pub dead_subjects: String,
    /// Replicas of both streams (1, or 3 on a three-node cluster).
    pub replicas: usize,
    /// How long the server waits for a delivered unit's ack before redelivering it.
    pub ack_wait: Duration,
    /// Deliveries of one unit before it is given up (at least 1).
    pub max_deliver: i64,
    /// How long the server remembers dedup ids.
    pub dedup_window: Duration,
}

impl Default for QueueConfig {
    /// Stream `PGRAPHRAG_JOBS` on `pgraphrag.jobs.*`, consumer `workers`, dead letters on
    /// `pgraphrag.dead.*`, 1 replica, 30 s ack wait, 5 deliveries, 24 h dedup window.
    fn default() -> Self {
        QueueConfig {
            stream: "PGRAPHRAG_JOBS".into(),
            subjects: "pgraphrag.jobs".into(),
            consumer: "workers".into(),
            dead_subjects: "pgraphrag.dead".into(),
            replicas: 1,
            ack_wait: Duration::from_secs(30),
            max_deliver: 5,
            dedup_window: Duration::from_secs(24 * 3600),
        }
    }
}

impl QueueConfig {
    /// The dead-letter stream's name.
    ///
    /// ```
    /// assert_eq!(pgraphrag_store::queue::QueueConfig::default().dead_stream(), "PGRAPHRAG_JOBS_DEAD");
    /// ```
    pub fn dead_stream(&self) -> String {
        format!("{}_DEAD", self.stream)
    }

    /// The server's advisory subject for units of this queue that reached `max_deliver`.
    pub fn max_deliveries_advisory(&self) -> String {
        format!(
            "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.{}.{}",
            self.stream, self.consumer
        )
    }

    /// Checks names and limits.
    ///
    /// ```
    /// use pgraphrag_store::queue::QueueConfig;
    /// assert!(QueueConfig::default().validate().is_ok());
    /// assert!(QueueConfig { stream: "a.b".into(), ..Default::default() }.validate().is_err());
    /// assert!(QueueConfig { max_deliver: 0, ..Default::default() }.validate().is_err());
    /// ```
    pub fn validate(&self) -> Result<()> {
        let name_ok = |s: &str| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        };
        let subject_ok = |s: &str| {
            !s.is_empty()
                && s.split('.').all(|t| {
                    !t.is_empty() && !t.contains(['*', '>', ' ', '\t']) && !t.starts_with('$')
                })
        };
        if !name_ok(&self.stream) || !name_ok(&self.consumer) {
            return Err(Error::Config(format!(
                "stream {:?} and consumer {:?} must be letters, digits, '-' or '_'",
                self.stream, self.consumer
            )));
        }
        if !subject_ok(&self.subjects) || !subject_ok(&self.dead_subjects) {
            return Err(Error::Config(format!(
                "subjects {:?} and {:?} must be dot-separated tokens without wildcards",
                self.subjects, self.dead_subjects
            )));
        }
        if self.subjects == self.dead_subjects
            || self
                .dead_subjects
                .starts_with(&format!("{}.", self.subjects))
            || self
                .subjects
                .starts_with(&format!("{}.", self.dead_subjects))
        {
            return Err(Error::Config(format!(
                "the unit subjects {:?} and the dead-letter subjects {:?} must not overlap",
                self.subjects, self.dead_subjects
            )));
        }
        if self.max_deliver < 1 {
            return Err(Error::Config(format!(
                "max_deliver is {}; it must be at least 1",
                self.max_deliver
            )));
        }
        if self.replicas < 1 || self.replicas > 5 {
            return Err(Error::Config(format!(
                "replicas is {}; JetStream allows 1 to 5",
                self.replicas
            )));
        }
        if self.ack_wait < Duration::from_millis(300) {
            return Err(Error::Config(format!(
                "ack_wait is {:?}; use at least 300 ms (workers send progress every third of it)",
                self.ack_wait
            )));
        }
        Ok(())
    }
}

/// One unit of work to submit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    /// The kind of job (a subject token: letters, digits, `-`, `_`), e.g. `rank`.
    pub kind: String,
    /// The dedup id: the same id submitted twice is one unit (e.g. `rank-3f2a….12`).
    pub id: String,
    /// What the handler reads.
    pub payload: Vec<u8>,
}

/// What [`WorkQueue::submit`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SubmitReport {
    /// Units stored in the stream by this call.
    pub published: usize,
    /// Units the stream already had (same dedup id within the window).
    pub duplicates: usize,
}

/// A connection to a JetStream work queue.
#[derive(Clone)]
pub struct WorkQueue {
    pub(super) js: jetstream::Context,
    pub(super) config: QueueConfig,
    pub(super) urls: String,
}

/// Splits a comma-separated server list into addresses.
///
/// ```
/// use pgraphrag_store::queue::parse_servers;
/// assert_eq!(parse_servers("nats://127.0.0.1:4222, nats://127.0.0.1:4223").unwrap().len(), 2);
/// assert!(parse_servers(" , ").is_err());
/// assert!(parse_servers("http://x:1").is_err());
/// ```
pub fn parse_servers(urls: &str) -> Result<Vec<async_nats::ServerAddr>> {
    let bad = |reason: String| Error::BadUrl {
        urls: urls.to_string(),
        reason,
    };
    let list: Vec<&str> = urls
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    if list.is_empty() {
        return Err(bad("no server given".into()));
    }
    list.iter()
        .map(|u| {
            if !(u.starts_with("nats://") || u.starts_with("tls://") || !u.contains("://")) {
                return Err(bad(format!("{u:?} is not a nats:// URL")));
            }
            u.parse::<async_nats::ServerAddr>()
                .map_err(|e| bad(format!("{u:?}: {e}")))
        })
        .collect()
}

impl WorkQueue {
    /// Connects to the servers in `urls` (comma-separated; the client fails over between them
    /// and reconnects forever once connected), as client `name`.
    pub async fn connect(urls: &str, config: QueueConfig, name: &str) -> Result<Self> {
        config.validate()?;
        let servers = parse_servers(urls)?;
        let client = async_nats::ConnectOptions::new()
            .name(name)
            .connection_timeout(Duration::from_secs(5))
            .request_timeout(Some(Duration::from_secs(5)))
            .max_reconnects(None::<usize>)
            .connect(servers)
            .await
            .map_err(|e| Error::Connect {
                urls: urls.to_string(),
                source: Box::new(e),
            })?;
        let js = jetstream::new(client);
        Ok(WorkQueue {
            js,
            config,
            urls: urls.to_string(),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &QueueConfig {
        &self.config
    }

    /// The server list it was connected with.
    pub fn urls(&self) -> &str {
        &self.urls
    }

    pub(super) fn js_err(
        &self,
        what: &'static str,
        stream: &str,
    ) -> impl Fn(BoxError) -> Error + '_ {
        let stream = stream.to_string();
        move |source| Error::JetStream {
            what,
            stream: stream.clone(),
            replicas: self.config.replicas,
            source,
        }
    }

    /// Creates the work-queue stream, its consumer and the dead-letter stream when they do
    /// not exist (existing ones are left as they are). Safe to call from every process.
    pub async fn ensure(&self) -> Result<()> {
        let c = &self.config;
        self.js
            .get_or_create_stream(stream::Config {
                name: c.stream.clone(),
                subjects: vec![format!("{}.>", c.subjects)],
                retention: RetentionPolicy::WorkQueue,
                storage: StorageType::File,
                num_replicas: c.replicas,
                duplicate_window: c.dedup_window,
                description: Some("pgraphrag offline job units".into()),
                ..Default::default()
            })
            .await
            .map_err(|e| self.js_err("creating", &c.stream)(Box::new(e)))?;
        self.js
            .get_or_create_stream(stream::Config {
                name: c.dead_stream(),
                subjects: vec![
                    format!("{}.>", c.dead_subjects),
                    c.max_deliveries_advisory(),
                ],
                storage: StorageType::File,
                num_replicas: c.replicas,
                description: Some("pgraphrag units that failed max_deliver times".into()),
                ..Default::default()
            })
            .await
            .map_err(|e| self.js_err("creating", &c.dead_stream())(Box::new(e)))?;
        self.consumer().await?;
        Ok(())
    }

    /// The shared durable consumer (created when missing).
    pub(crate) async fn consumer(&self) -> Result<PullConsumer> {
        let c = &self.config;
        let stream = self
            .js
            .get_stream(&c.stream)
            .await
            .map_err(|e| self.js_err("opening", &c.stream)(Box::new(e)))?;
        stream
            .get_or_create_consumer(
                &c.consumer,
                pull::Config {
                    durable_name: Some(c.consumer.clone()),
                    ack_policy: AckPolicy::Explicit,
                    ack_wait: c.ack_wait,
                    max_deliver: c.max_deliver,
                    description: Some("pgraphrag workers".into()),
                    ..Default::default()
                },
            )
            .await
            .map_err(|e| self.js_err("creating the consumer", &c.stream)(Box::new(e)))
    }

    /// Publishes `units` (each on `{subjects}.{kind}` with its id as `Nats-Msg-Id`) and waits
    /// for the stream to confirm every one. Units already in the stream (same id within the
    /// dedup window) are counted as duplicates, not stored twice.
    pub async fn submit(&self, units: &[Unit]) -> Result<SubmitReport> {
        let token_ok = |s: &str| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        };
        for u in units {
            if !token_ok(&u.kind) {
                return Err(bad_unit(u, "the kind must be letters, digits, '-' or '_'"));
            }
            if u.id.is_empty() || u.id.chars().any(char::is_control) {
                return Err(bad_unit(
                    u,
                    "the id must be non-empty, without control characters",
                ));
            }
        }
        let mut report = SubmitReport::default();
        // Pipelined: a window of publishes in flight, then their acks.
        for window in units.chunks(256) {
            let mut acks = Vec::with_capacity(window.len());
            for u in window {
                let subject = format!("{}.{}", self.config.subjects, u.kind);
                let publish = PublishMessage::build()
                    .payload(u.payload.clone().into())
                    .message_id(&u.id);
                let ack = self
                    .js
                    .send_publish(subject.clone(), publish)
                    .await
                    .map_err(|e| publish_err(&subject, u, Box::new(e)))?;
                acks.push((subject, u, ack));
            }
            for (subject, u, ack) in acks {
                let ack = ack
                    .await
                    .map_err(|e| publish_err(&subject, u, Box::new(e)))?;
                if ack.duplicate {
                    report.duplicates += 1;
                } else {
                    report.published += 1;
                }
            }
        }
        Ok(report)
    }

    /// Publishes a dead letter (JSON) for a unit of `kind`.
    pub(crate) async fn publish_dead(&self, kind: &str, body: Vec<u8>) -> Result<()> {
        let subject = format!("{}.{}", self.config.dead_subjects, kind);
        let id = String::from("dead-letter");
        let ack = self
            .js
            .publish(subject.clone(), body.into())
            .await
            .map_err(|e| Error::Publish {
                subject: subject.clone(),
                id: id.clone(),
                source: Box::new(e),
            })?;
        ack.await.map_err(|e| Error::Publish {
            subject,
            id,
            source: Box::new(e),
        })?;
        Ok(())
    }

    pub(crate) fn context(&self) -> &jetstream::Context {
        &self.js
    }
}

pub(super) fn bad_unit(u: &Unit, reason: &str) -> Error {
    Error::BadUnit {
        kind: u.kind.clone(),
        id: u.id.clone(),
        reason: reason.into(),
    }
}

pub(super) fn publish_err(subject: &str, u: &Unit, source: BoxError) -> Error {
    Error::Publish {
        subject: subject.to_string(),
        id: u.id.clone(),
        source,
    }
}
