//! A loopback-only HTTP test double for the async client's tests: a tokio `TcpListener` on
//! 127.0.0.1:0 that answers each of a fixed list of connections with a canned reply (then
//! closes it), and records what each request said. Bounded: it serves at most the replies it
//! was given, waits at most 10 s for each connection, and reads at most 1 MiB of a request.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One canned reply.
#[allow(dead_code)]
pub enum Reply {
    /// A complete response with a `content-length`.
    Full {
        /// HTTP status.
        status: u16,
        /// `content-type`.
        content_type: &'static str,
        /// Extra header lines, e.g. `retry-after: 0`.
        headers: Vec<String>,
        /// The body.
        body: Vec<u8>,
    },
    /// A 200 `text/event-stream` response in `transfer-encoding: chunked`, one HTTP chunk per
    /// piece, each written separately after a pause; then the closing chunk, unless `stall`
    /// is set, in which case the connection is held open that long first.
    Chunked {
        /// The body's pieces.
        pieces: Vec<Vec<u8>>,
        /// Pause before each piece.
        pause: Duration,
        /// Hold the connection open this long instead of finishing the body.
        stall: Option<Duration>,
    },
    /// Read the request, then say nothing for this long.
    Silence(Duration),
}

/// A request as the server saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    /// The request line's path.
    pub path: String,
    /// Header lines, lower-cased names (`name: value`).
    pub headers: Vec<String>,
    /// The body, parsed as JSON (`Null` if it was not JSON).
    pub body: serde_json::Value,
}

/// A running test server.
pub struct Canned {
    addr: SocketAddr,
    seen: Arc<Mutex<Vec<Seen>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Canned {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Canned {
    /// Starts a server that answers one connection per reply, in order.
    pub async fn start(replies: Vec<Reply>) -> Canned {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let addr = listener.local_addr().expect("local address");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&seen);
        let task = tokio::spawn(async move {
            for reply in replies {
                let accepted = tokio::time::timeout(Duration::from_secs(10), listener.accept());
                let Ok(Ok((mut stream, _))) = accepted.await else {
                    return;
                };
                let Some(req) = read_request(&mut stream).await else {
                    continue;
                };
                log.lock().unwrap().push(req);
                let _ = write_reply(&mut stream, reply).await;
            }
        });
        Canned { addr, seen, task }
    }

    /// `http://127.0.0.1:PORT/v1`.
    pub fn url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The requests served so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

/// A JSON reply.
#[allow(dead_code)]
pub fn json(status: u16, body: &str) -> Reply {
    Reply::Full {
        status,
        content_type: "application/json",
        headers: Vec::new(),
        body: body.as_bytes().to_vec(),
    }
}

/// The `data: {json}\n\n` event of a chat delta.
#[allow(dead_code)]
pub fn delta_event(text: &str) -> Vec<u8> {
    let v = serde_json::json!({"choices": [{"index": 0, "delta": {"content": text}}]});
    format!("data: {v}\n\n").into_bytes()
}

async fn read_request(stream: &mut TcpStream) -> Option<Seen> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        if buf.len() > 1 << 20 {
            return None;
        }
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut lines = head.split("\r\n");
    let path = lines.next()?.split(' ').nth(1)?.to_string();
    let headers: Vec<String> = lines
        .map(|l| match l.split_once(':') {
            Some((k, v)) => format!("{}: {}", k.to_ascii_lowercase(), v.trim()),
            None => l.to_string(),
        })
        .collect();
    let len: usize = headers
        .iter()
        .find_map(|h| h.strip_prefix("content-length: "))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
        .min(1 << 20);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < len {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Some(Seen {
        path,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null),
    })
}

async fn write_reply(stream: &mut TcpStream, reply: Reply) -> std::io::Result<()> {
    match reply {
        Reply::Full {
            status,
            content_type,
            headers,
            body,
        } => {
            let mut head = format!(
                "HTTP/1.1 {status} Canned\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n",
                body.len()
            );
            for h in headers {
                head.push_str(&h);
                head.push_str("\r\n");
            }
            head.push_str("\r\n");
            stream.write_all(head.as_bytes()).await?;
            stream.write_all(&body).await?;
        }
        Reply::Chunked {
            pieces,
            pause,
            stall,
        } => {
            stream
                .write_all(
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n",
                )
                .await?;
            stream.flush().await?;
            for piece in pieces {
                tokio::time::sleep(pause).await;
                stream
                    .write_all(format!("{:x}\r\n", piece.len()).as_bytes())
                    .await?;
                stream.write_all(&piece).await?;
                stream.write_all(b"\r\n").await?;
                stream.flush().await?;
            }
            match stall {
                Some(d) => tokio::time::sleep(d).await,
                None => stream.write_all(b"0\r\n\r\n").await?,
            }
        }
        Reply::Silence(d) => tokio::time::sleep(d).await,
    }
    stream.flush().await?;
    stream.shutdown().await
}
