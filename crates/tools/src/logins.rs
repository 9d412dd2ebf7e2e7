//! Logins beside the load test (`loadtest --logins-per-second R`): how many
//! logins the server sustains, and whether hashing them slows the tables.
//!
//! The server limits logins per client address and per name, as it should;
//! a load from one address would measure the limiter, not the server. So
//! the tool registers [`ACCOUNTS`] accounts, each from an address of its own
//! on the loopback network (127.0.0.10 and up: Linux routes all of
//! 127.0.0.0/8 to the loopback interface), and logs them in in turn, each
//! from its own address, at the rate asked. It runs only against a server on
//! 127.0.0.1.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::json;
use tokio::sync::watch;

use super::client::request_from;
use crate::latency::{Latencies, LatencySummary};

/// Accounts (and addresses) the logins are spread over.
pub const ACCOUNTS: usize = 200;
/// Their password.
const PASSWORD: &str = "loadtest password";
/// A login that takes longer than this counts as failed.
const LOGIN_TIMEOUT: Duration = Duration::from_secs(30);

/// Logins counted while the window is open.
#[derive(Default)]
pub struct LoginCounters {
    succeeded: AtomicU64,
    limited: AtomicU64,
    failed: AtomicU64,
    latencies: Latencies,
}

/// What the logins measured in the window.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct LoginReport {
    /// Logins asked for per second.
    pub asked_per_second: f64,
    /// Logins that succeeded per second in the window.
    pub per_second: f64,
    /// Logins that succeeded in the window.
    pub succeeded: u64,
    /// Logins refused `429` (the server's limits) in the window.
    pub limited: u64,
    /// Logins that failed otherwise (an error, a timeout) in the window.
    pub failed: u64,
    /// The first failure, to tell why.
    pub first_failure: Option<String>,
    /// A login's time from request to answer.
    pub latency: Option<LatencySummary>,
}

/// The logins of a run.
pub struct Logins {
    counters: Arc<LoginCounters>,
    first_failure: Arc<std::sync::Mutex<Option<String>>>,
    rate: f64,
    /// The accounts' names, by number.
    names: Arc<Vec<String>>,
}

/// The address account `i` uses.
fn address(i: usize) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(127, 0, (10 + i / 200) as u8, (10 + i % 200) as u8))
}

impl Logins {
    /// Registers the accounts (named after this run, so runs do not collide).
    pub async fn prepare(server: SocketAddr, rate: f64) -> Result<Logins, String> {
        if !server.ip().is_loopback() {
            return Err("--logins-per-second needs a server on 127.0.0.1".into());
        }
        let run = uuid::Uuid::new_v4().simple().to_string();
        let names: Vec<String> = (0..ACCOUNTS).map(|i| format!("lt{}-{i}", &run[..8])).collect();
        for (i, name) in names.iter().enumerate() {
            let body = json!({"name": name, "password": PASSWORD});
            let a = request_from(Some(address(i)), server, "POST", "/api/v1/auth/register", Some(&body), &[])
                .await
                .map_err(|e| format!("registering the login accounts: {e}"))?;
            if a.status != 201 {
                return Err(format!("registering the login accounts: HTTP {} {}", a.status, a.body));
            }
        }
        Ok(Logins {
            counters: Arc::new(LoginCounters::default()),
            first_failure: Arc::new(std::sync::Mutex::new(None)),
            rate,
            names: Arc::new(names),
        })
    }

    /// Logs the accounts in, in turn, at the rate asked, until `stop`;
    /// counts only while `measuring`.
    pub fn start(&self, server: SocketAddr, measuring: Arc<AtomicBool>, mut stop: watch::Receiver<bool>) {
        let (counters, first_failure, rate) = (self.counters.clone(), self.first_failure.clone(), self.rate);
        let names = self.names.clone();
        tokio::spawn(async move {
            let mut every = tokio::time::interval(Duration::from_secs_f64(1.0 / rate));
            every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let mut n = 0usize;
            loop {
                tokio::select! {
                    _ = every.tick() => {}
                    _ = stop.wait_for(|&s| s) => return,
                }
                let i = n % ACCOUNTS;
                n += 1;
                let (counters, first_failure, measuring, names) =
                    (counters.clone(), first_failure.clone(), measuring.clone(), names.clone());
                tokio::spawn(async move {
                    let body = json!({"name": names[i], "password": PASSWORD});
                    let started = Instant::now();
                    let asked = request_from(Some(address(i)), server, "POST", "/api/v1/auth/login", Some(&body), &[]);
                    let answer = tokio::time::timeout(LOGIN_TIMEOUT, asked).await;
                    if !measuring.load(Ordering::Relaxed) {
                        return;
                    }
                    let failure = match answer {
                        Ok(Ok(a)) if a.status == 200 => {
                            counters.succeeded.fetch_add(1, Ordering::Relaxed);
                            counters.latencies.record(started.elapsed().as_micros() as u64);
                            return;
                        }
                        Ok(Ok(a)) if a.status == 429 => {
                            counters.limited.fetch_add(1, Ordering::Relaxed);
                            return;
                        }
                        Ok(Ok(a)) => format!("HTTP {} {}", a.status, a.body),
                        Ok(Err(e)) => e.to_string(),
                        Err(_) => format!("no answer in {} s", LOGIN_TIMEOUT.as_secs()),
                    };
                    counters.failed.fetch_add(1, Ordering::Relaxed);
                    first_failure.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(failure);
                });
            }
        });
    }

    /// The report of a window of `seconds`.
    pub fn report(&self, seconds: f64) -> LoginReport {
        let c = &self.counters;
        let succeeded = c.succeeded.load(Ordering::Relaxed);
        LoginReport {
            asked_per_second: self.rate,
            per_second: succeeded as f64 / seconds,
            succeeded,
            limited: c.limited.load(Ordering::Relaxed),
            failed: c.failed.load(Ordering::Relaxed),
            first_failure: self.first_failure.lock().unwrap_or_else(|e| e.into_inner()).clone(),
            latency: c.latencies.summary(),
        }
    }
}
