//! `followers`: follows every table being played through every node of a
//! cluster, as spectators that reconnect (with `since`) whenever their socket
//! closes, and reports how long each went without an event, how often a
//! reconnection was answered `404`, and how many games were followed to their
//! end. Meant to run beside faults an operator (or a script) causes: a node
//! killed, stopped, paused, NATS or Postgres restarted (docs/performance.md,
//! "Faults").
//!
//! A spectator of a table of robots hears an event every second or so; a
//! silence much longer than that is the time it was cut off. Like the
//! browser, a follower pings every three seconds and connects again when
//! nothing came since its last ping (not even the `pong`), and one whose
//! node does not answer (or does not open the socket within two seconds)
//! tries the next; as the proxy of docker-compose.yml does, every follower
//! then passes that node over for ten seconds. It stops by itself after `--duration`, or once every
//! game it follows is over.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use tokio::time::Instant;

use crate::client::{ClientError, TableSocket, http};
use mahjong::protocol::ws::{ClientMessage, ServerMessage};

/// How often a follower pings its table: the browser's `PING_EVERY_MS`.
const PING_EVERY: Duration = Duration::from_secs(3);

/// How long a node that did not answer is passed over (Caddy's
/// `fail_duration` in docker-compose.yml).
const DOWN_FOR: Duration = Duration::from_secs(10);

/// The nodes as the proxy in front of them offers them: one that did not
/// answer (killed, paused, its sockets silent) is passed over for
/// [`DOWN_FOR`], for every follower, unless every node is.
struct Proxy {
    nodes: Vec<SocketAddr>,
    down_until: Vec<std::sync::Mutex<Option<Instant>>>,
}

impl Proxy {
    fn new(nodes: &[SocketAddr]) -> Proxy {
        Proxy { nodes: nodes.to_vec(), down_until: nodes.iter().map(|_| std::sync::Mutex::new(None)).collect() }
    }

    fn is_down(&self, node: usize) -> bool {
        self.down_until[node].lock().unwrap_or_else(|e| e.into_inner()).is_some_and(|until| Instant::now() < until)
    }

    fn mark_down(&self, node: usize) {
        *self.down_until[node].lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now() + DOWN_FOR);
    }

    /// `node` if it is up, else the next that is (`node` if none is).
    fn up_from(&self, node: usize) -> usize {
        let n = self.nodes.len();
        (0..n).map(|k| (node + k) % n).find(|&i| !self.is_down(i)).unwrap_or(node)
    }

    /// The next node after `node` that is up.
    fn after(&self, node: usize) -> usize {
        self.up_from((node + 1) % self.nodes.len())
    }
}

/// `followers`' arguments.
#[derive(clap::Args, Debug)]
pub struct FollowersArgs {
    /// The nodes, HOST:PORT, comma-separated: every table being played is
    /// followed through each of them (a follower whose node does not answer
    /// tries the next, as a client behind a proxy would be sent there).
    #[arg(long, value_delimiter = ',', required = true)]
    pub via: Vec<SocketAddr>,
    /// Seconds to follow at most.
    #[arg(long, default_value_t = 600)]
    pub duration: u64,
    /// A silence longer than this many seconds is listed in the report.
    #[arg(long, default_value_t = 10)]
    pub silence: u64,
}

/// One follower's account.
#[derive(Debug, Serialize)]
struct Followed {
    table: String,
    via: SocketAddr,
    /// The longest time without an event, in seconds.
    longest_silence_s: f64,
    /// Every silence longer than `--silence`: when it began (seconds since
    /// the start) and how long it lasted.
    silences: Vec<(f64, f64)>,
    /// Reconnections answered `404 no_such_table`.
    not_found: u32,
    /// Sockets opened.
    connections: u32,
    /// It saw its game end.
    finished: bool,
}

/// The report.
#[derive(Debug, Serialize)]
struct Report {
    tables: usize,
    followers: usize,
    finished: usize,
    not_found: u32,
    reconnections: u32,
    longest_silence_s: f64,
    /// Followers silent longer than `--silence`: when their silence began
    /// and how long it lasted, by its start.
    silences_over_limit: Vec<(f64, f64, String)>,
}

/// Runs `followers`.
pub fn run_command(args: FollowersArgs) -> ExitCode {
    if let Err(e) = crate::machine::raise_fd_limit() {
        eprintln!("followers: cannot raise the open-file limit: {e}");
    }
    let Some(runtime) = crate::runtime() else { return ExitCode::FAILURE };
    match runtime.block_on(run(args)) {
        Ok(report) => {
            println!("{}", serde_json::to_string_pretty(&report).unwrap_or_default());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("followers: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: FollowersArgs) -> Result<Report, String> {
    let first = *args.via.first().ok_or("no node given")?;
    let listed = http(first, "GET", "/api/v1/tables", None, None).await.map_err(|e| e.to_string())?;
    let tables: Vec<String> = listed.body["tables"]
        .as_array()
        .ok_or_else(|| format!("GET /api/v1/tables answered {}", listed.body))?
        .iter()
        .filter(|t| t["state"] == "playing")
        .filter_map(|t| t["id"].as_str().map(str::to_string))
        .collect();
    let started = Instant::now();
    let until = started + Duration::from_secs(args.duration);
    let mut tasks = Vec::new();
    let proxy = Arc::new(Proxy::new(&args.via));
    let limit = args.silence as f64;
    for table in &tables {
        for first in 0..args.via.len() {
            let (proxy, table) = (proxy.clone(), Arc::from(table.as_str()));
            tasks.push(tokio::spawn(follow(proxy, first, table, started, until, limit)));
        }
    }
    let mut followed = Vec::new();
    for task in tasks {
        followed.push(task.await.map_err(|e| e.to_string())?);
    }
    let mut silences: Vec<(f64, f64, String)> = followed
        .iter()
        .flat_map(|f| {
            f.silences.iter().map(move |&(from, length)| (from, length, format!("{} via {}", f.table, f.via)))
        })
        .collect();
    silences.sort_by(|a, b| a.0.total_cmp(&b.0));
    Ok(Report {
        tables: tables.len(),
        followers: followed.len(),
        finished: followed.iter().filter(|f| f.finished).count(),
        not_found: followed.iter().map(|f| f.not_found).sum(),
        reconnections: followed.iter().map(|f| f.connections.saturating_sub(1)).sum(),
        longest_silence_s: followed.iter().map(|f| f.longest_silence_s).fold(0.0, f64::max),
        silences_over_limit: silences,
    })
}

/// Follows one table through node `first` (the next when it does not
/// answer) until its game ends or `until`.
async fn follow(
    proxy: Arc<Proxy>,
    first: usize,
    table: Arc<str>,
    started: Instant,
    until: Instant,
    limit: f64,
) -> Followed {
    let mut f = Followed {
        table: table.to_string(),
        via: proxy.nodes[first],
        longest_silence_s: 0.0,
        silences: Vec::new(),
        not_found: 0,
        connections: 0,
        finished: false,
    };
    let mut last_event = Instant::now();
    let mut since: Option<u64> = None;
    let mut node = first;
    let heard = |f: &mut Followed, now: Instant, last: &mut Instant| {
        let silence = (now - *last).as_secs_f64();
        f.longest_silence_s = f.longest_silence_s.max(silence);
        if silence > limit {
            f.silences.push(((*last - started).as_secs_f64(), silence));
        }
        *last = now;
    };
    'connect: while Instant::now() < until && !f.finished {
        node = proxy.up_from(node);
        let connecting = TableSocket::connect(proxy.nodes[node], &table, None, since);
        let mut socket = match tokio::time::timeout(Duration::from_secs(2), connecting).await {
            Ok(Ok(socket)) => socket,
            Ok(Err(ClientError::Ws(e))) if e.to_string().contains("404") => {
                f.not_found += 1;
                tokio::time::sleep(Duration::from_millis(250)).await;
                continue;
            }
            // 503 recovering (the table is moving): again, through the proxy.
            Ok(Err(ClientError::Ws(e))) if e.to_string().contains("503") => {
                node = proxy.after(node);
                tokio::time::sleep(Duration::from_millis(250)).await;
                continue;
            }
            // Not answered (the node is down or paused): passed over a while.
            _ => {
                proxy.mark_down(node);
                node = proxy.after(node);
                tokio::time::sleep(Duration::from_millis(250)).await;
                continue;
            }
        };
        f.connections += 1;
        // The browser's rule (connection.js): a ping every PING_EVERY, and a
        // socket that brought nothing since the last one is silent.
        let mut heard_since_ping = true;
        let mut next_ping = Instant::now() + PING_EVERY;
        while Instant::now() < until {
            if Instant::now() >= next_ping {
                if !heard_since_ping {
                    // Its node answers nothing (paused): the proxy's health
                    // checks would mark it down as well.
                    proxy.mark_down(node);
                    node = proxy.after(node);
                    continue 'connect;
                }
                heard_since_ping = false;
                next_ping += PING_EVERY;
                let ping = socket.send(&ClientMessage::Ping);
                if !matches!(tokio::time::timeout(PING_EVERY, ping).await, Ok(Ok(()))) {
                    continue 'connect;
                }
            }
            let wait = next_ping.saturating_duration_since(Instant::now());
            match socket.next(wait).await {
                Ok(Some((ServerMessage::Event { seq, .. }, text))) => {
                    heard_since_ping = true;
                    heard(&mut f, Instant::now(), &mut last_event);
                    since = Some(seq);
                    if text.contains(r#""type":"game_over""#) {
                        f.finished = true;
                        break 'connect;
                    }
                }
                Ok(Some(_)) => heard_since_ping = true,
                Err(ClientError::Timeout(_)) => {}
                Ok(None) | Err(_) => continue 'connect,
            }
        }
    }
    // A silence still going on at the end counts too (unless the game ended).
    if !f.finished {
        heard(&mut f, Instant::now(), &mut last_event);
    }
    f
}
