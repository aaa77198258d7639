//! NATS servers for the queue tests: one JetStream node, or the three-node cluster of
//! `scripts/cluster_nats.sh` on ports of its own, all on 127.0.0.1 and stopped on drop.
//!
//! The server is `runs/cluster/venv/bin/nats-server` (what `scripts/cluster_nats.sh install`
//! puts there) or `$PGRAPHRAG_NATS_SERVER`. Missing: the tests skip with a message, and fail
//! under `CI=true`.
#![allow(dead_code)]
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The server binary, or `None` (after saying why) when the tests should skip.
pub fn server_or_skip(test: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PGRAPHRAG_NATS_SERVER")
        .map(PathBuf::from)
        .or_else(|| Some(root().join("runs/cluster/venv/bin/nats-server")))
        .filter(|p| p.is_file());
    if found.is_none() {
        let msg = format!(
            "{test}: no nats-server (run scripts/cluster_nats.sh install, or set PGRAPHRAG_NATS_SERVER)"
        );
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("{msg}; CI must install it");
        }
        eprintln!("skipped: {msg}");
    }
    found
}

fn port_free(p: u16) -> bool {
    TcpListener::bind(("127.0.0.1", p)).is_ok()
}

/// A base port such that `base + offsets` are all free now.
pub fn free_base(offsets: &[u16]) -> u16 {
    let seed = std::process::id() as u64
        ^ std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
    for i in 0..200u64 {
        let base = 20000 + ((seed.wrapping_mul(2654435761).wrapping_add(i * 7919)) % 20000) as u16;
        if offsets.iter().all(|&o| port_free(base + o)) {
            return base;
        }
    }
    panic!("no free ports found on 127.0.0.1");
}

/// Waits until something accepts on the port.
pub fn wait_port(port: u16, limit: Duration) {
    let t = Instant::now();
    while t.elapsed() < limit {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("nothing listens on 127.0.0.1:{port} after {limit:?}");
}

/// One JetStream node (not clustered), killed on drop.
pub struct Node {
    child: Child,
    pub url: String,
    _dir: tempfile::TempDir,
}

impl Node {
    pub fn start(bin: &Path) -> Node {
        let dir = tempfile::tempdir().unwrap();
        let port = free_base(&[0]);
        let child = Command::new(bin)
            .args(["-js", "-a", "127.0.0.1", "-p", &port.to_string(), "-sd"])
            .arg(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting nats-server");
        wait_port(port, Duration::from_secs(20));
        Node {
            child,
            url: format!("nats://127.0.0.1:{port}"),
            _dir: dir,
        }
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The three-node cluster of `scripts/cluster_nats.sh`, in a temporary folder on free ports;
/// stopped (by its PIDs, through the script) on drop.
pub struct Cluster {
    pub dir: tempfile::TempDir,
    pub base: u16,
    pub bin: PathBuf,
}

impl Cluster {
    fn script(&self, what: &str) -> std::process::Output {
        Command::new("bash")
            .arg(root().join("scripts/cluster_nats.sh"))
            .arg(what)
            .env("NATS_CLUSTER_DIR", self.dir.path())
            .env("NATS_PORT_BASE", self.base.to_string())
            .env("NATS_BIN", &self.bin)
            .output()
            .expect("running scripts/cluster_nats.sh")
    }

    pub fn start(bin: &Path) -> Cluster {
        let offsets: Vec<u16> = (1..=3).flat_map(|i| [i, 10 + i, 20 + i]).collect();
        let c = Cluster {
            dir: tempfile::tempdir().unwrap(),
            base: free_base(&offsets),
            bin: bin.to_path_buf(),
        };
        let out = c.script("start");
        assert!(
            out.status.success(),
            "cluster_nats.sh start failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        c
    }

    /// The client URLs, as the script wrote them to env.sh.
    pub fn urls(&self) -> String {
        let env = std::fs::read_to_string(self.dir.path().join("env.sh")).unwrap();
        env.lines()
            .find_map(|l| l.strip_prefix("export PGRAPHRAG_NATS_URL="))
            .expect("env.sh has PGRAPHRAG_NATS_URL")
            .to_string()
    }

    /// The PID of node `i` (1..=3).
    pub fn pid(&self, i: usize) -> i32 {
        let s = std::fs::read_to_string(self.dir.path().join(format!("nats-{i}.pid"))).unwrap();
        s.trim().parse().unwrap()
    }

    /// `kill -9` of node `i`.
    pub fn kill9(&self, i: usize) {
        let st = Command::new("kill")
            .args(["-9", &self.pid(i).to_string()])
            .status()
            .unwrap();
        assert!(st.success());
    }

    pub fn status(&self) -> String {
        String::from_utf8_lossy(&self.script("status").stdout).into_owned()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self.script("stop");
    }
}
