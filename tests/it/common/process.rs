//! The server binary as a process of its own, for the tests that kill it
//! (SIGKILL) and start it again on the same database and the same socket.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use mahjong_tools::client::http;

/// The server binary, started on a listening socket the test holds, with
/// `database` and `--seed`; killed and waited for when dropped.
pub struct ServerProcess {
    child: Child,
}

impl ServerProcess {
    /// Starts the server and waits (at most `wait`) until it answers
    /// `/healthz` with `ok` (not until it is ready: its stored games may still be
    /// coming back).
    ///
    /// The socket is handed over ([`mahjong_tools::handover`]): it stays
    /// bound while the test holds it, so a server started again answers on
    /// the same address, and the connections made while none ran wait for it.
    pub async fn start(listener: &TcpListener, database: &str, seed: u64, wait: Duration) -> ServerProcess {
        ServerProcess::start_with(listener, database, seed, wait, &[]).await
    }

    /// As [`ServerProcess::start`], with more flags for `serve`.
    pub async fn start_with(
        listener: &TcpListener,
        database: &str,
        seed: u64,
        wait: Duration,
        flags: &[&str],
    ) -> ServerProcess {
        let addr = listener.local_addr().unwrap();
        let mut command = Command::new(env!("CARGO_BIN_EXE_mahjong-server"));
        mahjong_tools::handover::hand_over(&mut command, listener);
        let child = command
            .args(["serve", "--database", database, "--seed", &seed.to_string()])
            .args(flags)
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
            // (503 while it waits for its database or NATS.)
            if let Ok(a) = http(addr, "GET", "/healthz", None, None).await
                && a.status != 503
            {
                assert_eq!((a.status, a.body.as_str()), (200, Some("ok")), "/healthz");
                return server;
            }
            assert!(Instant::now() < deadline, "the server did not come up");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Sends the process a signal (`STOP`, `CONT`, `TERM`...).
    pub fn signal(&self, name: &str) {
        let sent = Command::new("kill").args([&format!("-{name}"), &self.child.id().to_string()]).status();
        assert!(sent.is_ok_and(|s| s.success()), "kill -{name}");
    }

    /// SIGTERM, then waits (at most `wait`) for the process to end.
    pub fn terminate(mut self, wait: Duration) {
        self.signal("TERM");
        let deadline = Instant::now() + wait;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("the server did not stop within {wait:?} of SIGTERM");
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

/// A listening socket on a free loopback port, for [`ServerProcess::start`].
pub fn listener() -> TcpListener {
    TcpListener::bind("127.0.0.1:0").unwrap()
}

/// A loopback port free a moment ago, for a process that binds it itself
/// (a nats-server, a server started by hand).
pub fn free_port() -> u16 {
    listener().local_addr().unwrap().port()
}
