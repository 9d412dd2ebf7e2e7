//! `mahjong-server loadtest`: keeps T tables of four robots playing on a
//! running server, watches them through W real spectator WebSockets, and
//! reports the events received per second and the delivery latency of every
//! event (receipt time minus the table's `at_us`, the event's creation time).
//!
//! Run it against a release server on the same machine (both need many file
//! descriptors; `ulimit -n` cannot go above the hard limit, `ulimit -Hn`):
//!
//! ```text
//! ulimit -n 65536                       # or as high as `ulimit -Hn` allows
//! cargo run --release -- serve --listen 127.0.0.1:18090 &
//! cargo run --release -- loadtest --server 127.0.0.1:18090 \
//!     --tables 2000 --clients 8000 --duration 60 --ramp 20 --server-pid $!
//! ```
//!
//! What it does:
//!
//! - Raises its own soft open-file limit to the hard limit, and says so in the
//!   report when that is still too low for W clients (or, with `--server-pid`,
//!   when the server's limit is).
//! - Over `--ramp` seconds, opens the tables one after another
//!   (`POST /api/v1/tables` with four robots, `start: true` and
//!   `pause_deciseconds`), and connects each table's share of the W spectators
//!   (spread evenly: the first `W mod T` tables get one more). Staggering the
//!   tables also spreads their moves evenly over each pause.
//! - Then measures for `--duration` seconds: events received, events/s, and
//!   the latency of each event in an HDR histogram (`hdrhistogram`, 0.1 %
//!   resolution; p50, p90, p99, p99.9 and the exact maximum). Connection attempts
//!   that failed and connections dropped by the server (or the network) are
//!   counted; a dropped spectator reconnects after a second, for a fresh
//!   snapshot (never with `since`, whose replayed events would carry old
//!   `at_us` times and spoil the latencies).
//! - With `--server-pid`, samples the server's VmRSS from `/proc/PID/status`
//!   every 250 ms (the peak is reported) and its CPU time over the window.
//!
//! Constant load: the default pause is 10 deciseconds (1 s per action, about a
//! person's pace); every robot move, claims and passes included, waits for the
//! pause, so a game then lasts hours and outlasts any run. With shorter pauses
//! games do end (with pause 0 in milliseconds): when a spectator sees
//! `game_over` (or connects to a table whose game is already over), that table's
//! spectators leave it, a replacement table is opened and they connect to it,
//! so T tables and W clients stay in play; the report counts the games
//! finished. (The server keeps a finished table for five minutes after its
//! last spectator leaves, so fast replacement grows its memory for a while.)
//! A table without spectators (W < T) is polled every 10 s.
//!
//! The client keeps its work per message minimal: it reads only `type`, `seq`,
//! `at_us` and the event's `type` out of each message (serde skips the rest),
//! and its WebSockets use small read buffers. The client still shares the
//! machine with the server when both run on it: the report gives the CPU both
//! used, to tell which one was the bottleneck.

use std::net::{SocketAddr, ToSocketAddrs};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use futures_util::StreamExt;
use serde::Deserialize;
use serde_json::json;
use tokio::sync::{Semaphore, watch};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

use crate::machine::{self, FdLimit, raise_fd_limit};

mod report;
use crate::client::http;
use crate::latency::Latencies;
use crate::logins::Logins;
pub use report::{Report, render_text};

/// Handshakes (HTTP requests and WebSocket upgrades) in flight at once.
const HANDSHAKES: usize = 256;
/// File descriptors the tool needs beyond one per client.
const SPARE_FDS: u64 = HANDSHAKES as u64 + 64;
/// The longest the window waits for the ramp's connections, after the ramp.
const RAMP_GRACE: Duration = Duration::from_secs(30);
/// Wait before retrying a failed table or connection.
const RETRY: Duration = Duration::from_secs(1);
/// How long one handshake may take.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(15);
/// How often a table without spectators is asked whether its game is over.
const POLL_IDLE_TABLE: Duration = Duration::from_secs(10);
/// How often the server's memory is sampled.
const RSS_EVERY: Duration = Duration::from_millis(250);

/// The flags of `loadtest`.
#[derive(clap::Args, Clone, Debug)]
pub struct LoadtestArgs {
    /// The server to load, HOST:PORT.
    #[arg(long)]
    pub server: String,
    /// Tables of four robots kept playing.
    #[arg(long)]
    pub tables: u64,
    /// Spectator WebSockets, spread evenly over the tables (or give
    /// `--clients-per-table`).
    #[arg(long, required_unless_present = "clients_per_table", conflicts_with = "clients_per_table")]
    pub clients: Option<u64>,
    /// Spectator WebSockets per table (instead of `--clients`).
    #[arg(long)]
    pub clients_per_table: Option<u64>,
    /// Seconds to measure, after the ramp.
    #[arg(long)]
    pub duration: u64,
    /// Pause between the robots' actions, in tenths of a second (0-50); with
    /// the default a game outlasts any run.
    #[arg(long, default_value_t = 10)]
    pub pause: u32,
    /// Seconds over which the tables are opened and the clients connected.
    #[arg(long, default_value_t = 10)]
    pub ramp: u64,
    /// The server's process id: sample its memory (VmRSS, peak reported) and CPU.
    #[arg(long)]
    pub server_pid: Option<u32>,
    /// Also log accounts in at this rate (per second) during the run, from
    /// many loopback addresses (see `tools::logins`); 0: none.
    #[arg(long, default_value_t = 0.0)]
    pub logins_per_second: f64,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// The events per second one spectator receives when the server keeps
    /// the robots' pace (as a sweep's calibration measures it): the report
    /// then gives the events offered in the window and the share delivered.
    #[arg(long)]
    pub offered_per_client: Option<f64>,
    /// Cluster mode: the nodes the spectators connect through, HOST:PORT,
    /// comma-separated, taken in turn (the tables open on `--server`, so a
    /// spectator on another node gets its events relayed over NATS);
    /// default: `--server`.
    #[arg(long, value_delimiter = ',')]
    pub spectate_via: Vec<String>,
}

/// Checked settings of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// The server.
    pub server: SocketAddr,
    /// Tables kept playing.
    pub tables: usize,
    /// Spectator connections.
    pub clients: usize,
    /// The measuring window.
    pub duration: Duration,
    /// The robots' pause between actions, in deciseconds.
    pub pause_deciseconds: u32,
    /// Time over which tables open and clients connect.
    pub ramp: Duration,
    /// The server's process, to sample.
    pub server_pid: Option<u32>,
    /// Logins per second beside the tables (0: none).
    pub logins_per_second: f64,
    /// Print JSON.
    pub json: bool,
    /// Events per second one spectator receives at the robots' nominal pace.
    pub offered_per_client: Option<f64>,
    /// The nodes the spectators connect through, in turn (empty: the server).
    pub spectate_via: Vec<SocketAddr>,
}

impl Config {
    /// Checks the flags; the error says which one is wrong and why.
    pub fn from_args(args: &LoadtestArgs) -> Result<Config, String> {
        let server = args
            .server
            .to_socket_addrs()
            .map_err(|e| format!("--server {:?}: not a HOST:PORT address ({e})", args.server))?
            .next()
            .ok_or_else(|| format!("--server {:?}: the name has no address", args.server))?;
        if args.tables == 0 || args.tables > 100_000 {
            return Err(format!("--tables {}: give 1 to 100000 tables", args.tables));
        }
        let clients = match (args.clients, args.clients_per_table) {
            (Some(c), None) => c,
            (None, Some(per)) if (1..=100).contains(&per) => per * args.tables,
            (None, Some(per)) => return Err(format!("--clients-per-table {per}: give 1 to 100")),
            _ => return Err("give --clients or --clients-per-table (one of them)".into()),
        };
        if clients == 0 || clients > 1_000_000 {
            return Err(format!("{clients} clients (--clients): give 1 to 1000000 clients"));
        }
        if args.duration == 0 || args.duration > 86_400 {
            return Err(format!("--duration {}: give 1 to 86400 seconds", args.duration));
        }
        if args.pause > 50 {
            return Err(format!("--pause {}: the server allows at most 50 deciseconds", args.pause));
        }
        if !(0.0..=10_000.0).contains(&args.logins_per_second) {
            return Err(format!("--logins-per-second {}: give 0 to 10000", args.logins_per_second));
        }
        if args.ramp > 3_600 {
            return Err(format!("--ramp {}: give 0 to 3600 seconds", args.ramp));
        }
        if let Some(rate) = args.offered_per_client
            && !(rate > 0.0 && rate < 10_000.0)
        {
            return Err(format!("--offered-per-client {rate}: give a rate above 0 and below 10000 events per second"));
        }
        if let Some(pid) = args.server_pid
            && machine::read_rss_kib(pid).is_none()
        {
            return Err(format!("--server-pid {pid}: no such process (cannot read /proc/{pid}/status)"));
        }
        let mut spectate_via = Vec::new();
        for via in &args.spectate_via {
            let addr = via
                .to_socket_addrs()
                .ok()
                .and_then(|mut a| a.next())
                .ok_or_else(|| format!("--spectate-via {via:?}: not a HOST:PORT address"))?;
            spectate_via.push(addr);
        }
        Ok(Config {
            server,
            spectate_via,
            tables: args.tables as usize,
            clients: clients as usize,
            duration: Duration::from_secs(args.duration),
            pause_deciseconds: args.pause,
            ramp: Duration::from_secs(args.ramp),
            server_pid: args.server_pid,
            logins_per_second: args.logins_per_second,
            json: args.json,
            offered_per_client: args.offered_per_client,
        })
    }

    /// How many clients watch table `index`: W / T each, one more for the
    /// first W mod T tables.
    pub fn clients_of(&self, index: usize) -> usize {
        self.clients / self.tables + usize::from(index < self.clients % self.tables)
    }
}

// ----- what the clients share ----------------------------------------------------

#[derive(Default)]
struct Counters {
    /// Events received in the window.
    window_events: AtomicU64,
    /// Events received in the whole run.
    events: AtomicU64,
    tables_opened: AtomicU64,
    table_failures: AtomicU64,
    games_finished: AtomicU64,
    connect_failures: AtomicU64,
    dropped: AtomicU64,
    connected: AtomicUsize,
    peak_connected: AtomicUsize,
    /// An event whose `seq` was not above the previous one's on its connection.
    out_of_order: AtomicU64,
    /// A message that was not JSON of the expected shape.
    unreadable: AtomicU64,
}

impl Counters {
    fn snapshot(&self) -> CounterSnapshot {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        CounterSnapshot {
            table_failures: get(&self.table_failures),
            connect_failures: get(&self.connect_failures),
            dropped: get(&self.dropped),
            games_finished: get(&self.games_finished),
            connected: self.connected.load(Ordering::Relaxed),
        }
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct CounterSnapshot {
    table_failures: u64,
    connect_failures: u64,
    dropped: u64,
    games_finished: u64,
    connected: usize,
}

struct Shared {
    config: Config,
    latencies: Latencies,
    counters: Counters,
    measuring: AtomicBool,
    /// Tables and first connections of the ramp still to be done.
    ramp_pending: AtomicUsize,
    handshakes: Semaphore,
    stop: watch::Receiver<bool>,
    /// The first error of each kind, to show why.
    first_table_error: Mutex<Option<String>>,
    first_connect_error: Mutex<Option<String>>,
    first_drop: Mutex<Option<String>>,
    ws_config: WebSocketConfig,
}

impl Shared {
    fn stopping(&self) -> bool {
        *self.stop.borrow()
    }

    fn note(slot: &Mutex<Option<String>>, what: impl FnOnce() -> String) {
        let mut first = slot.lock().unwrap_or_else(|e| e.into_inner());
        if first.is_none() {
            *first = Some(what());
        }
    }

    /// Sleeps, unless the run stops first; true if it stopped.
    async fn sleep_or_stop(&self, time: Duration) -> bool {
        let mut stop = self.stop.clone();
        tokio::select! {
            _ = tokio::time::sleep(time) => self.stopping(),
            _ = stop.wait_for(|&s| s) => true,
        }
    }
}

// ----- tables and clients -------------------------------------------------------

/// One of the T tables: opens a table, lets its clients watch it, and opens a
/// replacement when its game is over, until the run stops.
async fn table_slot(shared: Arc<Shared>, index: usize, start_at: Instant) {
    let mut stop = shared.stop.clone();
    tokio::select! {
        _ = tokio::time::sleep_until(start_at) => {}
        _ = stop.wait_for(|&s| s) => return,
    }
    let clients = shared.config.clients_of(index);
    let mut first = true;
    loop {
        let Some(table) = open_table(&shared, index).await else { return };
        if first {
            shared.ramp_pending.fetch_sub(1, Ordering::Relaxed);
        }
        let (over_tx, mut over_rx) = watch::channel(false);
        let over_tx = Arc::new(over_tx);
        let via = &shared.config.spectate_via;
        for n in 0..clients {
            let node = if via.is_empty() { shared.config.server } else { via[(index + n) % via.len()] };
            let url: Arc<str> = format!("ws://{node}/api/v1/tables/{table}/ws").into();
            tokio::spawn(spectate(shared.clone(), url, over_tx.clone(), first));
        }
        first = false;
        if clients == 0 {
            // Nobody watches: ask now and then whether the game is over.
            let path = format!("/api/v1/tables/{table}");
            loop {
                if shared.sleep_or_stop(POLL_IDLE_TABLE).await {
                    return;
                }
                let answer = http(shared.config.server, "GET", &path, None, None).await;
                if answer.is_ok_and(|a| a.body["state"] == "over") {
                    break;
                }
            }
        } else {
            tokio::select! {
                _ = over_rx.wait_for(|&over| over) => {}
                _ = stop.wait_for(|&s| s) => return,
            }
        }
        if shared.stopping() {
            return;
        }
        shared.counters.games_finished.fetch_add(1, Ordering::Relaxed);
        // Every spectator of the finished table leaves it.
        let _ = over_tx.send(true);
    }
}

/// Opens a table of four robots that starts at once; retries until it has
/// one, or `None` when the run stops.
async fn open_table(shared: &Shared, index: usize) -> Option<String> {
    let body = json!({
        "name": format!("loadtest {index}"),
        "robots": [{}, {}, {}, {}],
        "start": true,
        "pause_deciseconds": shared.config.pause_deciseconds,
    });
    loop {
        if shared.stopping() {
            return None;
        }
        let answer = {
            let _permit = shared.handshakes.acquire().await.ok()?;
            tokio::time::timeout(
                HANDSHAKE_TIMEOUT,
                http(shared.config.server, "POST", "/api/v1/tables", Some(&body), None),
            )
            .await
        };
        let problem = match answer {
            Ok(Ok(a)) if a.status == 201 => match a.body["id"].as_str() {
                Some(id) => {
                    shared.counters.tables_opened.fetch_add(1, Ordering::Relaxed);
                    return Some(id.to_string());
                }
                None => format!("no table id in {}", a.body),
            },
            Ok(Ok(a)) => format!("HTTP {}: {}", a.status, a.body),
            Ok(Err(e)) => e.to_string(),
            Err(_) => "timed out".to_string(),
        };
        shared.counters.table_failures.fetch_add(1, Ordering::Relaxed);
        Shared::note(&shared.first_table_error, || problem);
        if shared.sleep_or_stop(RETRY).await {
            return None;
        }
    }
}

/// Why a connection's reading ended.
enum Ended {
    /// The run stopped, or the table's game is over and another client said so.
    Stop,
    /// This client saw the game end.
    GameOver,
    /// The connection was lost.
    Dropped(String),
}

/// One spectator: connects (again after a failure or a drop) and reads until
/// the run stops or the table's game is over.
async fn spectate(shared: Arc<Shared>, url: Arc<str>, over_tx: Arc<watch::Sender<bool>>, mut in_ramp: bool) {
    let mut over = over_tx.subscribe();
    loop {
        if shared.stopping() || *over.borrow() {
            break;
        }
        let connected = {
            let Ok(_permit) = shared.handshakes.acquire().await else { break };
            tokio::time::timeout(
                HANDSHAKE_TIMEOUT,
                tokio_tungstenite::connect_async_with_config(&*url, Some(shared.ws_config), true),
            )
            .await
        };
        let socket = match connected {
            Ok(Ok((socket, _))) => Some(socket),
            Ok(Err(e)) => {
                Shared::note(&shared.first_connect_error, || e.to_string());
                None
            }
            Err(_) => {
                Shared::note(&shared.first_connect_error, || "the handshake timed out".into());
                None
            }
        };
        if in_ramp {
            in_ramp = false;
            shared.ramp_pending.fetch_sub(1, Ordering::Relaxed);
        }
        let Some(socket) = socket else {
            if !shared.stopping() {
                shared.counters.connect_failures.fetch_add(1, Ordering::Relaxed);
            }
            if shared.sleep_or_stop(RETRY).await {
                break;
            }
            continue;
        };
        let now = shared.counters.connected.fetch_add(1, Ordering::Relaxed) + 1;
        shared.counters.peak_connected.fetch_max(now, Ordering::Relaxed);
        let ended = watch_table(&shared, socket, &mut over).await;
        shared.counters.connected.fetch_sub(1, Ordering::Relaxed);
        match ended {
            Ended::Stop => break,
            Ended::GameOver => {
                let _ = over_tx.send(true);
                break;
            }
            Ended::Dropped(why) => {
                if shared.stopping() {
                    break;
                }
                shared.counters.dropped.fetch_add(1, Ordering::Relaxed);
                Shared::note(&shared.first_drop, || why);
                if shared.sleep_or_stop(RETRY).await {
                    break;
                }
            }
        }
    }
}

/// Only what the client needs of a server message; serde skips the rest.
#[derive(Deserialize)]
struct Probe<'a> {
    #[serde(rename = "type", borrow)]
    kind: &'a str,
    #[serde(default)]
    seq: u64,
    #[serde(default)]
    at_us: u64,
    /// An event's own `type`.
    #[serde(default, borrow)]
    event: Option<Kind<'a>>,
    /// A snapshot's table `state`.
    #[serde(default, borrow)]
    table: Option<TableState<'a>>,
}

#[derive(Deserialize)]
struct Kind<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<&'a str>,
}

#[derive(Deserialize)]
struct TableState<'a> {
    #[serde(borrow, default)]
    state: Option<&'a str>,
}

type Socket = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// Reads a connection's messages, timing every event.
async fn watch_table(shared: &Shared, mut socket: Socket, over: &mut watch::Receiver<bool>) -> Ended {
    let mut stop = shared.stop.clone();
    // Made once, not per message: each registers with a channel every client shares.
    let stopped = stop.wait_for(|&s| s);
    let table_over = over.wait_for(|&o| o);
    tokio::pin!(stopped, table_over);
    let mut last_seq = 0;
    loop {
        let frame = tokio::select! {
            biased;
            frame = socket.next() => frame,
            _ = &mut stopped => return Ended::Stop,
            _ = &mut table_over => return Ended::Stop,
        };
        let text = match frame {
            Some(Ok(Message::Text(text))) => text,
            Some(Ok(Message::Close(frame))) => {
                return Ended::Dropped(match frame {
                    Some(f) => format!("closed by the server: {} {}", u16::from(f.code), f.reason),
                    None => "closed by the server".into(),
                });
            }
            Some(Ok(_)) => continue, // pings are answered by tungstenite
            Some(Err(e)) => return Ended::Dropped(e.to_string()),
            None => return Ended::Dropped("the connection closed".into()),
        };
        let received = mahjong::store::now_us().unsigned_abs();
        let Ok(message) = serde_json::from_str::<Probe>(&text) else {
            shared.counters.unreadable.fetch_add(1, Ordering::Relaxed);
            continue;
        };
        match message.kind {
            "event" => {
                shared.counters.events.fetch_add(1, Ordering::Relaxed);
                if shared.measuring.load(Ordering::Relaxed) {
                    shared.counters.window_events.fetch_add(1, Ordering::Relaxed);
                    shared.latencies.record(received.saturating_sub(message.at_us));
                }
                if message.seq <= last_seq {
                    shared.counters.out_of_order.fetch_add(1, Ordering::Relaxed);
                }
                last_seq = message.seq;
                if message.event.and_then(|e| e.kind) == Some("game_over") {
                    return Ended::GameOver;
                }
            }
            "snapshot" if message.table.and_then(|t| t.state) == Some("over") => return Ended::GameOver,
            _ => {}
        }
    }
}

// ----- the run ------------------------------------------------------------------------

/// Runs the load test: tables, clients, the window; returns the report.
pub async fn run(config: Config, fd_limit: Option<FdLimit>, mut warnings: Vec<String>) -> Result<Report, String> {
    let addr = config.server;
    match tokio::time::timeout(HANDSHAKE_TIMEOUT, http(addr, "GET", "/healthz", None, None)).await {
        Ok(Ok(a)) if a.status == 200 => {}
        Ok(Ok(a)) => return Err(format!("the server at {addr} answered /healthz with HTTP {}", a.status)),
        Ok(Err(e)) => return Err(format!("cannot reach the server at {addr}: {e}")),
        Err(_) => return Err(format!("the server at {addr} did not answer /healthz")),
    }
    if let Some(pid) = config.server_pid
        && let Some(limit) = machine::read_fd_limit(pid)
        && limit < config.clients as u64 + 64
    {
        warnings.push(format!(
            "the server's open-file limit is {limit}: too low for {} clients (start it after `ulimit -n`)",
            config.clients
        ));
    }
    let logins = match config.logins_per_second {
        rate if rate > 0.0 => Some(Logins::prepare(addr, rate).await?),
        _ => None,
    };
    let (stop_tx, stop) = watch::channel(false);
    let shared = Arc::new(Shared {
        latencies: Latencies::new(),
        counters: Counters::default(),
        measuring: AtomicBool::new(false),
        ramp_pending: AtomicUsize::new(config.tables + config.clients),
        handshakes: Semaphore::new(HANDSHAKES),
        stop,
        first_table_error: Mutex::new(None),
        first_connect_error: Mutex::new(None),
        first_drop: Mutex::new(None),
        ws_config: WebSocketConfig::default().read_buffer_size(8 * 1024).write_buffer_size(0),
        config: config.clone(),
    });
    let started = Instant::now();
    let rss_peak = Arc::new(AtomicU64::new(0));
    if let Some(pid) = config.server_pid {
        let (rss_peak, mut stop) = (rss_peak.clone(), shared.stop.clone());
        tokio::spawn(async move {
            let mut every = tokio::time::interval(RSS_EVERY);
            loop {
                tokio::select! {
                    _ = every.tick() => {}
                    _ = stop.wait_for(|&s| s) => return,
                }
                if let Some(rss) = machine::read_rss_kib(pid) {
                    rss_peak.fetch_max(rss, Ordering::Relaxed);
                }
            }
        });
    }
    let measuring_logins = Arc::new(AtomicBool::new(false));
    if let Some(logins) = &logins {
        logins.start(addr, measuring_logins.clone(), shared.stop.clone());
    }
    for index in 0..config.tables {
        let offset = config.ramp.mul_f64(index as f64 / config.tables as f64);
        tokio::spawn(table_slot(shared.clone(), index, started + offset));
    }
    // The window opens after the ramp, once its connections are made (or tried).
    tokio::time::sleep(config.ramp).await;
    let give_up = Instant::now() + RAMP_GRACE;
    while shared.ramp_pending.load(Ordering::Relaxed) > 0 && Instant::now() < give_up {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let pending = shared.ramp_pending.load(Ordering::Relaxed);
    if pending > 0 {
        warnings.push(format!("{pending} tables or connections of the ramp were still pending when the window opened"));
    }
    let server_cpu_start = config.server_pid.and_then(|p| machine::cpu_seconds(Some(p)));
    let threads_start = config.server_pid.map(crate::threads::sample).unwrap_or_default();
    let client_cpu_start = machine::cpu_seconds(None);
    let machine_start = machine::machine_ticks();
    let rss_start = config.server_pid.and_then(machine::read_rss_kib);
    let at_start = shared.counters.snapshot();
    let window_start = Instant::now();
    shared.measuring.store(true, Ordering::Relaxed);
    measuring_logins.store(true, Ordering::Relaxed);
    tokio::time::sleep(config.duration).await;
    shared.measuring.store(false, Ordering::Relaxed);
    measuring_logins.store(false, Ordering::Relaxed);
    let window = window_start.elapsed().as_secs_f64();
    let at_end = shared.counters.snapshot();
    let server_cpu_end = config.server_pid.and_then(|p| machine::cpu_seconds(Some(p)));
    let threads_end = config.server_pid.map(crate::threads::sample).unwrap_or_default();
    let client_cpu_end = machine::cpu_seconds(None);
    let machine_end = machine::machine_ticks();
    let rss_end = config.server_pid.and_then(machine::read_rss_kib);
    let _ = stop_tx.send(true);
    if let Some(rss) = rss_end {
        rss_peak.fetch_max(rss, Ordering::Relaxed);
    }
    let percent = |a: Option<f64>, b: Option<f64>| Some((b? - a?) / window * 100.0);
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let counters = &shared.counters;
    let events = counters.window_events.load(Ordering::Relaxed);
    let offered = config.offered_per_client.map(|rate| rate * config.clients as f64 * window);
    let first = |m: &Mutex<Option<String>>| m.lock().unwrap_or_else(|e| e.into_inner()).clone();
    Ok(Report {
        server: addr.to_string(),
        tables: config.tables,
        clients: config.clients,
        pause_deciseconds: config.pause_deciseconds,
        ramp_seconds: (window_start - started).as_secs_f64(),
        window_seconds: window,
        fd_limit,
        warnings,
        tables_opened: counters.tables_opened.load(Ordering::Relaxed),
        table_failures: at_end.table_failures,
        games_finished: at_end.games_finished,
        connected_at_start: at_start.connected,
        connected_at_end: at_end.connected,
        peak_connected: counters.peak_connected.load(Ordering::Relaxed),
        connect_failures: at_end.connect_failures,
        connect_failures_in_window: at_end.connect_failures - at_start.connect_failures,
        dropped: at_end.dropped,
        dropped_in_window: at_end.dropped - at_start.dropped,
        events,
        events_per_second: events as f64 / window,
        offered_events: offered,
        delivered_ratio: offered.map(|o| events as f64 / o),
        latency: shared.latencies.summary(),
        out_of_order: counters.out_of_order.load(Ordering::Relaxed),
        unreadable: counters.unreadable.load(Ordering::Relaxed),
        server_pid: config.server_pid,
        server_rss_peak_kib: config.server_pid.map(|_| rss_peak.load(Ordering::Relaxed)),
        server_rss_start_kib: rss_start,
        server_rss_end_kib: rss_end,
        server_cpu_percent: percent(server_cpu_start, server_cpu_end),
        server_threads: crate::threads::busiest(&threads_start, &threads_end, window, 5),
        client_cpu_percent: percent(client_cpu_start, client_cpu_end),
        cpus,
        machine_cpu_percent: match (machine_start, machine_end) {
            (Some((busy0, total0)), Some((busy1, total1))) if total1 > total0 => {
                Some((busy1 - busy0) as f64 / (total1 - total0) as f64 * cpus as f64 * 100.0)
            }
            _ => None,
        },
        first_table_error: first(&shared.first_table_error),
        first_connect_error: first(&shared.first_connect_error),
        logins: logins.map(|l| l.report(window)),
        first_drop: first(&shared.first_drop),
    })
}

/// `loadtest`: checks the flags (exit status 2 when wrong), raises the
/// open-file limit, runs on a multi-threaded runtime and prints the report.
pub fn run_command(args: LoadtestArgs) -> ExitCode {
    let config = match Config::from_args(&args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("loadtest: {e}");
            return ExitCode::from(2);
        }
    };
    let mut warnings = Vec::new();
    let fd_limit = match raise_fd_limit() {
        Ok(limit) => {
            let needed = config.clients as u64 + SPARE_FDS;
            if limit.soft < needed {
                warnings.push(format!(
                    "the open-file limit is {} (hard limit {}): too low for {} clients, which need about {needed}; \
                     connections beyond it fail",
                    limit.soft, limit.hard, config.clients
                ));
            }
            Some(limit)
        }
        Err(e) => {
            warnings.push(format!("cannot read or raise the open-file limit: {e}"));
            None
        }
    };
    for w in &warnings {
        eprintln!("loadtest: warning: {w}");
    }
    let Some(runtime) = crate::runtime() else { return ExitCode::FAILURE };
    let json = config.json;
    let result = runtime.block_on(run(config, fd_limit, warnings));
    // The clients' tasks end by themselves; do not wait long for them.
    runtime.shutdown_timeout(Duration::from_secs(2));
    match result {
        Ok(report) if json => match serde_json::to_string_pretty(&report) {
            Ok(text) => {
                println!("{text}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("cannot print the report: {e}");
                ExitCode::FAILURE
            }
        },
        Ok(report) => {
            print!("{}", render_text(&report));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("loadtest: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args() -> LoadtestArgs {
        LoadtestArgs {
            server: "127.0.0.1:18090".into(),
            tables: 10,
            clients: Some(40),
            clients_per_table: None,
            duration: 30,
            pause: 10,
            ramp: 5,
            server_pid: None,
            logins_per_second: 0.0,
            json: false,
            offered_per_client: None,
            spectate_via: Vec::new(),
        }
    }

    #[test]
    fn good_arguments_make_a_config() {
        let c = Config::from_args(&args()).expect("valid");
        assert_eq!(c.server, "127.0.0.1:18090".parse::<SocketAddr>().expect("address"));
        assert_eq!((c.tables, c.clients, c.pause_deciseconds), (10, 40, 10));
        assert_eq!((c.duration, c.ramp), (Duration::from_secs(30), Duration::from_secs(5)));
    }

    #[test]
    fn bad_arguments_are_refused_with_the_flag_named() {
        let cases: Vec<(LoadtestArgs, &str)> = vec![
            (LoadtestArgs { server: "localhost".into(), ..args() }, "--server"),
            (LoadtestArgs { server: "127.0.0.1:notaport".into(), ..args() }, "--server"),
            (LoadtestArgs { tables: 0, ..args() }, "--tables"),
            (LoadtestArgs { clients: Some(0), ..args() }, "0 clients"),
            (LoadtestArgs { clients: None, clients_per_table: Some(0), ..args() }, "--clients-per-table"),
            (LoadtestArgs { clients: None, clients_per_table: Some(101), ..args() }, "--clients-per-table"),
            (LoadtestArgs { clients: None, ..args() }, "give --clients"),
            (LoadtestArgs { duration: 0, ..args() }, "--duration"),
            (LoadtestArgs { pause: 51, ..args() }, "--pause"),
            (LoadtestArgs { ramp: 100_000, ..args() }, "--ramp"),
            (LoadtestArgs { logins_per_second: -1.0, ..args() }, "--logins-per-second"),
            (LoadtestArgs { server_pid: Some(u32::MAX), ..args() }, "--server-pid"),
            (LoadtestArgs { offered_per_client: Some(0.0), ..args() }, "--offered-per-client"),
        ];
        for (a, flag) in cases {
            let e = Config::from_args(&a).expect_err(flag);
            assert!(e.starts_with(flag), "{e}");
        }
    }

    #[test]
    fn clients_per_table_count_for_every_table() {
        let c =
            Config::from_args(&LoadtestArgs { clients: None, clients_per_table: Some(2), ..args() }).expect("valid");
        assert_eq!((c.tables, c.clients), (10, 20));
    }

    #[test]
    fn clients_are_spread_evenly() {
        let c = Config { clients: 10, tables: 4, ..Config::from_args(&args()).expect("valid") };
        let shares: Vec<usize> = (0..4).map(|i| c.clients_of(i)).collect();
        assert_eq!(shares, [3, 3, 2, 2]);
        let c = Config { clients: 3, tables: 5, ..c };
        assert_eq!((0..5).map(|i| c.clients_of(i)).sum::<usize>(), 3);
    }

    #[test]
    fn the_probe_reads_only_what_it_needs() {
        let text =
            r#"{"type":"event","seq":7,"at_us":1700000000000000,"event":{"type":"game_over","scores":[1,2,3,4]}}"#;
        let p: Probe = serde_json::from_str(text).expect("an event");
        assert_eq!((p.kind, p.seq, p.at_us), ("event", 7, 1_700_000_000_000_000));
        assert_eq!(p.event.and_then(|e| e.kind), Some("game_over"));
        let p: Probe = serde_json::from_str(r#"{"type":"pong"}"#).expect("a pong");
        assert_eq!((p.kind, p.seq), ("pong", 0));
    }
}
