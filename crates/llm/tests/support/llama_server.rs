//! llama.cpp's OpenAI-compatible server from the `cyllama` wheel, started on a free loopback port
//! for a test and killed when dropped. Shared by `openai_llamacpp.rs` and the examples' test
//! (included by path).
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running server; killed (and waited for) on drop.
pub struct LlamaServer {
    child: Child,
    /// Its port on 127.0.0.1.
    pub port: u16,
}

impl Drop for LlamaServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl LlamaServer {
    /// Starts `py -m cyllama.llama.server` on `model` and waits (up to 90 s) until it listens.
    pub fn start(py: &str, model: &Path) -> LlamaServer {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(py)
            .args([
                "-m",
                "cyllama.llama.server",
                "--host",
                "127.0.0.1",
                "--ctx-size",
                "1024",
            ])
            .arg("--port")
            .arg(port.to_string())
            .arg("-m")
            .arg(model)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the cyllama server");
        let mut server = LlamaServer { child, port };
        let t0 = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(st)) = server.child.try_wait() {
                panic!("the cyllama server exited early with {st}");
            }
            assert!(
                t0.elapsed() < Duration::from_secs(90),
                "server did not listen within 90 s"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        server
    }
}
