//! `mahjong-server loadtest-sweep`: the largest number of tables a server
//! carries at a given pace, in one command.
//!
//! For each table count T of `--tables` (ascending) it starts a fresh server
//! (this same program's `serve`, on 127.0.0.1, on a fresh database: an SQLite
//! file in a temporary folder, or a scratch Postgres database it creates and
//! drops), runs the load test against it with `--clients-per-table` spectators
//! per table, stops the server, and judges the step:
//!
//! - every table opened and every client connected when the window opened;
//! - the delivery latency's p99 under `--p99-ms`;
//! - at least `--min-delivered` of the offered events delivered;
//! - the server's peak memory under `--max-rss-mib`.
//!
//! "Offered" is what the spectators would receive if every table kept the
//! robots' pace: a calibration step first runs `--calibrate-tables` tables
//! (a load the server carries easily) at the same pause and measures the
//! events one spectator receives per second; each step's offered events are
//! that rate times its clients times its window. A server that cannot keep
//! up slows its games (a table waits for its store before its next move), so
//! it delivers less than it is offered even when each event arrives fast.
//!
//! The sweep stops after the first failing step (a larger T would fail too)
//! unless `--keep-going`, prints every step and ends with the largest T that
//! passed. It is bounded: each step lasts its ramp, the wait for the ramp's
//! connections (at most 30 s) and its window, and it sends traffic only to
//! the server it started on 127.0.0.1.

use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::path::PathBuf;
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::Duration;

use serde::Serialize;
use sqlx::Connection;

use crate::client::http;
use crate::loadtest::{self, Config, Report};
use crate::machine::FdLimit;

/// How long a started server has to answer `/healthz`.
const START_WAIT: Duration = Duration::from_secs(60);
/// How long a server has to stop after SIGTERM before it is killed.
const STOP_WAIT: Duration = Duration::from_secs(20);
/// Rest between steps, for the machine to settle.
const SETTLE: Duration = Duration::from_secs(3);

/// The flags of `loadtest-sweep`.
#[derive(clap::Args, Clone, Debug)]
pub struct SweepArgs {
    /// Table counts to try, comma-separated (sorted ascending).
    #[arg(long, value_delimiter = ',', default_value = "500,1000,2000,3000,4500")]
    pub tables: Vec<usize>,
    /// Spectator WebSockets per table.
    #[arg(long, default_value_t = 4)]
    pub clients_per_table: usize,
    /// The robots' pause between actions, in tenths of a second (0-50).
    #[arg(long, default_value_t = 10)]
    pub pause: u32,
    /// Seconds each step measures, after its ramp.
    #[arg(long, default_value_t = 30)]
    pub duration: u64,
    /// Seconds over which each step opens its tables and connects its clients.
    #[arg(long, default_value_t = 30)]
    pub ramp: u64,
    /// The database of the servers started: `sqlite` (a fresh file per step)
    /// or `postgres` (a fresh database per step on `--postgres`).
    #[arg(long, default_value = "sqlite", value_parser = ["sqlite", "postgres"])]
    pub backend: String,
    /// SQLite: the files each step's database is split over (`?parts=N`,
    /// 1 to 7); the server's default when not given.
    #[arg(long)]
    pub sqlite_parts: Option<usize>,
    /// The Postgres server on which the scratch databases are created and
    /// dropped (its database is only used to connect).
    #[arg(long, default_value = "postgres://postgres@127.0.0.1:5432/postgres")]
    pub postgres: String,
    /// Tables of the calibration step that measures the offered rate.
    #[arg(long, default_value_t = 40)]
    pub calibrate_tables: usize,
    /// The events per second one spectator receives at the robots' pace, if
    /// known: no calibration step then.
    #[arg(long)]
    pub offered_per_client: Option<f64>,
    /// A step passes with a p99 latency below this, in milliseconds.
    #[arg(long, default_value_t = 50.0)]
    pub p99_ms: f64,
    /// ... and at least this share of the offered events delivered.
    #[arg(long, default_value_t = 0.99)]
    pub min_delivered: f64,
    /// ... and the server's peak memory below this, in MiB.
    #[arg(long, default_value_t = 2048.0)]
    pub max_rss_mib: f64,
    /// Run every step, even after one failed.
    #[arg(long)]
    pub keep_going: bool,
    /// Another flag for the servers started (repeatable), e.g. `--server-flag=--random-seats`.
    #[arg(long, allow_hyphen_values = true)]
    pub server_flag: Vec<String>,
    /// Print the steps as JSON lines as well.
    #[arg(long)]
    pub json: bool,
}

/// One step of the sweep and its verdict.
#[derive(Clone, Debug, Serialize)]
pub struct Step {
    /// The load test's report.
    pub report: Report,
    /// Why the step failed (empty: it passed).
    pub failures: Vec<String>,
}

/// Checks a step's report against the targets; the reasons it fails.
pub fn judge(r: &Report, p99_ms: f64, min_delivered: f64, max_rss_mib: f64) -> Vec<String> {
    let mut failures = Vec::new();
    if r.connected_at_start < r.clients || r.table_failures > 0 {
        failures.push(format!(
            "{} of {} clients connected, {} table requests failed",
            r.connected_at_start, r.clients, r.table_failures
        ));
    }
    match &r.latency {
        Some(l) if l.p99_us as f64 / 1000.0 < p99_ms => {}
        Some(l) => failures.push(format!("p99 {:.1} ms", l.p99_us as f64 / 1000.0)),
        None => failures.push("no event received".into()),
    }
    if let Some(ratio) = r.delivered_ratio
        && ratio < min_delivered
    {
        failures.push(format!("{:.1}% of the offered events delivered", ratio * 100.0));
    }
    if let Some(peak) = r.server_rss_peak_kib
        && peak as f64 / 1024.0 >= max_rss_mib
    {
        failures.push(format!("peak memory {:.0} MiB", peak as f64 / 1024.0));
    }
    failures
}

/// A database for one step, removed when dropped (SQLite) or by [`Scratch::drop_database`].
enum Scratch {
    Sqlite { folder: PathBuf, url: String },
    Postgres { admin: String, name: String, url: String },
}

impl Scratch {
    async fn new(args: &SweepArgs, step: usize) -> Result<Scratch, String> {
        let tag = format!("{}_{step}", std::process::id());
        if args.backend == "sqlite" {
            let folder = std::env::temp_dir().join(format!("mahjong-sweep-{tag}"));
            std::fs::create_dir_all(&folder).map_err(|e| format!("cannot make {}: {e}", folder.display()))?;
            let mut url = format!("sqlite://{}", folder.join("games.db").display());
            if let Some(parts) = args.sqlite_parts {
                url.push_str(&format!("?parts={parts}"));
            }
            return Ok(Scratch::Sqlite { folder, url });
        }
        let name = format!("mahjong_sweep_{tag}");
        let mut conn = sqlx::PgConnection::connect(&args.postgres)
            .await
            .map_err(|e| format!("--postgres {}: cannot connect: {e}", args.postgres))?;
        sqlx::query(&format!("CREATE DATABASE {name}"))
            .execute(&mut conn)
            .await
            .map_err(|e| format!("cannot create the database {name}: {e}"))?;
        let url = match args.postgres.rsplit_once('/') {
            Some((base, _)) => format!("{base}/{name}"),
            None => return Err(format!("--postgres {}: not a postgres://.../DB URL", args.postgres)),
        };
        Ok(Scratch::Postgres { admin: args.postgres.clone(), name, url })
    }

    fn url(&self) -> &str {
        match self {
            Scratch::Sqlite { url, .. } | Scratch::Postgres { url, .. } => url,
        }
    }

    async fn remove(self) {
        match self {
            Scratch::Sqlite { folder, .. } => {
                let _ = std::fs::remove_dir_all(folder);
            }
            Scratch::Postgres { admin, name, .. } => {
                if let Ok(mut conn) = sqlx::PgConnection::connect(&admin).await {
                    let _ =
                        sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).execute(&mut conn).await;
                }
            }
        }
    }
}

/// A server this sweep started; stopped (SIGTERM, then SIGKILL) when dropped.
struct Server {
    child: Child,
    addr: SocketAddr,
    log: PathBuf,
}

impl Server {
    async fn start(args: &SweepArgs, database: &str, log: PathBuf) -> Result<Server, String> {
        // Bound here and handed over: the port is never free for another to take.
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(|e| format!("no free port: {e}"))?;
        let addr = listener.local_addr().map_err(|e| format!("no free port: {e}"))?;
        let program = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
        let out = std::fs::File::create(&log).map_err(|e| format!("cannot write {}: {e}", log.display()))?;
        let mut command = Command::new(program);
        crate::handover::hand_over(&mut command, &listener);
        let child = command
            .arg("serve")
            .arg("--database")
            .arg(database)
            // The load comes from this machine alone: thousands of its
            // tables and sockets from one address are what it measures.
            .args(["--exempt-address", "127.0.0.1"])
            .args(&args.server_flag)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(out.try_clone().map_err(|e| e.to_string())?)
            .stderr(out)
            .spawn()
            .map_err(|e| format!("cannot start the server: {e}"))?;
        let mut server = Server { child, addr, log };
        let deadline = tokio::time::Instant::now() + START_WAIT;
        loop {
            if let Ok(Some(status)) = server.child.try_wait() {
                return Err(format!("the server stopped at start ({status}); see {}", server.log.display()));
            }
            if matches!(http(addr, "GET", "/healthz", None, None).await, Ok(a) if a.status == 200) {
                return Ok(server);
            }
            if tokio::time::Instant::now() > deadline {
                return Err(format!("the server did not answer /healthz in {} s", START_WAIT.as_secs()));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    async fn stop(mut self) {
        // SIGTERM: it stops as an operator's server stops (SIGKILL is the
        // recovery tests' business).
        if let Some(pid) = rustix::process::Pid::from_raw(self.child.id() as i32) {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        }
        let deadline = tokio::time::Instant::now() + STOP_WAIT;
        while tokio::time::Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Runs one step: a fresh database and server, the load test, then both gone.
async fn step(
    args: &SweepArgs,
    index: usize,
    tables: usize,
    offered_per_client: Option<f64>,
    fd_limit: Option<FdLimit>,
) -> Result<Report, String> {
    let scratch = Scratch::new(args, index).await?;
    let log = std::env::temp_dir().join(format!("mahjong-sweep-{}-{index}.log", std::process::id()));
    let server = match Server::start(args, scratch.url(), log).await {
        Ok(s) => s,
        Err(e) => {
            scratch.remove().await;
            return Err(e);
        }
    };
    let config = Config {
        server: server.addr,
        tables,
        clients: tables * args.clients_per_table,
        duration: Duration::from_secs(args.duration),
        pause_deciseconds: args.pause,
        ramp: Duration::from_secs(args.ramp),
        server_pid: Some(server.pid()),
        logins_per_second: 0.0,
        json: false,
        offered_per_client,
        spectate_via: Vec::new(),
    };
    let report = loadtest::run(config, fd_limit, Vec::new()).await;
    server.stop().await;
    scratch.remove().await;
    report
}

fn check(args: &SweepArgs) -> Result<(), String> {
    if args.tables.is_empty() || args.tables.iter().any(|&t| t == 0 || t > 100_000) {
        return Err("--tables: give table counts from 1 to 100000".into());
    }
    if args.clients_per_table == 0 || args.clients_per_table > 100 {
        return Err("--clients-per-table: give 1 to 100".into());
    }
    if args.pause > 50 {
        return Err(format!("--pause {}: the server allows at most 50 deciseconds", args.pause));
    }
    if args.duration == 0 || args.duration > 3_600 || args.ramp > 3_600 {
        return Err("--duration and --ramp: give 1 to 3600 seconds".into());
    }
    if args.calibrate_tables == 0 {
        return Err("--calibrate-tables: give at least 1".into());
    }
    Ok(())
}

async fn run(args: SweepArgs, fd_limit: Option<FdLimit>) -> Result<bool, String> {
    let mut tables = args.tables.clone();
    tables.sort_unstable();
    tables.dedup();
    let offered = match args.offered_per_client {
        Some(rate) => rate,
        None => {
            println!("calibration: {} tables at pause {:.1} s ...", args.calibrate_tables, args.pause as f64 / 10.0);
            let r = step(&args, 0, args.calibrate_tables, None, fd_limit).await?;
            let rate = r.events as f64 / r.window_seconds / r.clients.max(1) as f64;
            if r.connected_at_start < r.clients || rate <= 0.0 {
                return Err(format!("the calibration step did not run cleanly:\n{}", loadtest::render_text(&r)));
            }
            println!("calibration: {rate:.2} events/s per spectator (pass --offered-per-client {rate:.2} to skip it)");
            rate
        }
    };
    let mut largest = None;
    for (i, &t) in tables.iter().enumerate() {
        tokio::time::sleep(SETTLE).await;
        let report = step(&args, i + 1, t, Some(offered), fd_limit).await?;
        let failures = judge(&report, args.p99_ms, args.min_delivered, args.max_rss_mib);
        let latency = report.latency.as_ref().map_or("-".into(), |l| {
            format!("p50 {:.1} ms, p99 {:.1} ms", l.p50_us as f64 / 1000.0, l.p99_us as f64 / 1000.0)
        });
        println!(
            "{} tables / {} clients: {}/{} connected, {:.0} events/s, {latency}, delivered {}, server RSS {}, \
             CPU server {:.0}% client {:.0}% (busiest threads: {}): {}",
            t,
            report.clients,
            report.connected_at_start,
            report.clients,
            report.events_per_second,
            report.delivered_ratio.map_or("-".into(), |r| format!("{:.1}%", r * 100.0)),
            report.server_rss_peak_kib.map_or("-".into(), |k| format!("{:.0} MiB", k as f64 / 1024.0)),
            report.server_cpu_percent.unwrap_or(0.0),
            report.client_cpu_percent.unwrap_or(0.0),
            crate::threads::describe(&report.server_threads[..report.server_threads.len().min(3)]),
            if failures.is_empty() { "PASS".to_string() } else { format!("FAIL ({})", failures.join("; ")) }
        );
        let passed = failures.is_empty();
        if args.json {
            let step = Step { report, failures };
            println!("{}", serde_json::to_string(&step).unwrap_or_default());
        }
        if passed {
            largest = Some(t);
        } else if !args.keep_going {
            break;
        }
    }
    match largest {
        Some(t) => println!(
            "largest passing: {t} tables ({} clients) at pause {:.1} s on {}",
            t * args.clients_per_table,
            args.pause as f64 / 10.0,
            args.backend
        ),
        None => println!("no step passed"),
    }
    Ok(largest.is_some())
}

/// `loadtest-sweep`: checks the flags (exit status 2 when wrong), runs the
/// steps and prints them; exit status 0 when some step passed, 1 when none did.
pub fn run_command(args: SweepArgs) -> ExitCode {
    if let Err(e) = check(&args) {
        eprintln!("loadtest-sweep: {e}");
        return ExitCode::from(2);
    }
    let fd_limit = crate::machine::raise_fd_limit().ok();
    let most = args.tables.iter().max().copied().unwrap_or(0) * args.clients_per_table;
    if let Some(limit) = fd_limit
        && limit.soft < most as u64 + 400
    {
        eprintln!(
            "loadtest-sweep: warning: the open-file limit is {} (hard {}): too low for {most} clients",
            limit.soft, limit.hard
        );
    }
    let Some(runtime) = crate::runtime() else { return ExitCode::FAILURE };
    let result = runtime.block_on(run(args, fd_limit));
    runtime.shutdown_timeout(Duration::from_secs(2));
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("loadtest-sweep: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::latency::LatencySummary;

    fn report(p99_ms: u64, connected: usize, delivered: Option<f64>, rss_mib: u64) -> Report {
        let json = serde_json::json!({
            "server": "127.0.0.1:1", "tables": 10, "clients": 40, "pause_deciseconds": 2,
            "ramp_seconds": 1.0, "window_seconds": 10.0, "fd_limit": null, "warnings": [],
            "tables_opened": 10, "table_failures": 0, "games_finished": 0,
            "connected_at_start": connected, "connected_at_end": connected, "peak_connected": connected,
            "connect_failures": 0, "connect_failures_in_window": 0, "dropped": 0, "dropped_in_window": 0,
            "events": 1000, "events_per_second": 100.0, "offered_events": delivered.map(|d| 1000.0 / d),
            "delivered_ratio": delivered, "latency": null, "out_of_order": 0, "unreadable": 0,
            "server_pid": 1, "server_rss_peak_kib": rss_mib * 1024, "server_rss_start_kib": null,
            "server_rss_end_kib": null, "server_cpu_percent": null, "client_cpu_percent": null,
            "machine_cpu_percent": null, "cpus": 2, "first_table_error": null, "first_connect_error": null,
            "logins": null, "first_drop": null,
        });
        let mut r: Report = serde_json::from_value(json).expect("a report");
        r.latency = Some(LatencySummary {
            count: 1000,
            p50_us: 1_000,
            p90_us: 2_000,
            p99_us: p99_ms * 1000,
            p999_us: p99_ms * 1000,
            max_us: p99_ms * 1000,
            mean_us: 1_000.0,
        });
        r
    }

    #[test]
    fn a_step_passes_only_when_every_target_is_met() {
        assert!(judge(&report(20, 40, Some(0.995), 500), 50.0, 0.99, 2048.0).is_empty());
        let slow = judge(&report(60, 40, Some(0.995), 500), 50.0, 0.99, 2048.0);
        assert_eq!(slow, ["p99 60.0 ms"]);
        let behind = judge(&report(20, 40, Some(0.9), 500), 50.0, 0.99, 2048.0);
        assert_eq!(behind, ["90.0% of the offered events delivered"]);
        let missing = judge(&report(20, 39, Some(0.995), 500), 50.0, 0.99, 2048.0);
        assert_eq!(missing, ["39 of 40 clients connected, 0 table requests failed"]);
        let big = judge(&report(20, 40, Some(0.995), 3000), 50.0, 0.99, 2048.0);
        assert_eq!(big, ["peak memory 3000 MiB"]);
    }
}
