//! Tools around the product, not part of it: the tests, the load test and
//! the benchmarks use them.
//!
//! - [`client`]: a small client of the server's public API (JSON over HTTP,
//!   the table WebSocket, a seat player with a robot's judgement), used by
//!   the integration tests and the load tool;
//! - [`loadtest`]: `mahjong-server loadtest`, robot tables on a running
//!   server watched through many spectator WebSockets;
//! - [`logins`]: logins from many accounts and addresses beside the load
//!   test (`loadtest --logins-per-second`);
//! - [`sweep`]: `mahjong-server loadtest-sweep`, the load test over a
//!   range of table counts, each against a fresh server it starts, to find
//!   the largest that meets the latency and delivery targets;
//! - [`latency`]: the latency histogram the load test and the store
//!   benchmark record into;
//! - [`handover`]: the server binary started on a listening socket its
//!   caller holds (the sweep's servers, the tests that kill one);
//! - [`storebench`]: `mahjong-server storebench`, events persisted per
//!   second with many tables writing to the store at once;
//! - [`threads`]: a process's threads and the CPU each used (the load
//!   test's report of the server's busiest threads);
//! - [`followers`]: `mahjong-server followers`, every table of a cluster
//!   followed through every node while faults happen.
//!
//! Imports go one way: the tools use the product (the crate `mahjong`: its
//! `rules`, `protocol`, `store`), and the product never depends on this crate.

pub mod client;
pub mod followers;
pub mod handover;
pub mod latency;
pub mod loadtest;
pub mod logins;
pub mod machine;
pub mod storebench;
pub mod sweep;
pub mod threads;

/// The multi-threaded runtime a tool's command runs in; `None`, said on
/// stderr, when it cannot start.
pub fn runtime() -> Option<tokio::runtime::Runtime> {
    match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => Some(runtime),
        Err(e) => {
            eprintln!("cannot start the runtime: {e}");
            None
        }
    }
}
