//! The server binary as a process of its own, for the tests that kill it
//! (SIGKILL) and start it again on the same database.

use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use mahjong_tools::client::http;

/// The server binary, started on `addr` with `database` and `--seed`;
/// killed and waited for when dropped.
pub struct ServerProcess {
    child: Child,
}

impl ServerProcess {
    /// Starts the server and waits (at most `wait`) until it answers
    /// `/healthz` (not until it is ready: its stored games may still be
    /// coming back).
    pub async fn start(addr: SocketAddr, database: &str, seed: u64, wait: Duration) -> ServerProcess {
        let child = Command::new(env!("CARGO_BIN_EXE_mahjong-server"))
            .args(["serve", "--listen", &addr.to_string(), "--database", database, "--seed", &seed.to_string()])
            // A test plays every client from 127.0.0.1, which the limits
            // would take for an abuser (tests/limits.rs tries them).
            .args(["--exempt-address", "127.0.0.1"])
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the server");
        // Killed and waited for on drop, should it not come up.
        let server = ServerProcess { child };
        let deadline = Instant::now() + wait;
        loop {
            if let Ok(a) = http(addr, "GET", "/healthz", None, None).await {
                assert_eq!((a.status, a.body.as_str()), (200, Some("ok")), "/healthz");
                return server;
            }
            assert!(Instant::now() < deadline, "the server did not come up");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// SIGKILL: no shutdown, no last write.
    pub fn kill(mut self) {
        self.child.kill().expect("kill the server");
        let _ = self.child.wait();
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A loopback address with a port free now, for a server to listen on.
pub fn free_addr() -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap()
}
