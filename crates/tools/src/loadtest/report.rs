//! What a load test measured ([`Report`]), and the report for people.

use serde::{Deserialize, Serialize};

use crate::latency::LatencySummary;
use crate::logins::LoginReport;
use crate::machine::FdLimit;

/// What a run measured.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Report {
    /// The server loaded.
    pub server: String,
    /// Tables kept playing.
    pub tables: usize,
    /// Spectator connections wanted.
    pub clients: usize,
    /// The robots' pause between actions, in deciseconds.
    pub pause_deciseconds: u32,
    /// Seconds from the start to the window (the ramp, and waiting for its connections).
    pub ramp_seconds: f64,
    /// Seconds measured.
    pub window_seconds: f64,
    /// The tool's open-file limit.
    pub fd_limit: Option<FdLimit>,
    /// Problems with the setup that may spoil the numbers.
    pub warnings: Vec<String>,
    /// Tables opened (replacements included).
    pub tables_opened: u64,
    /// Table requests that failed, over the whole run.
    pub table_failures: u64,
    /// Games that ended (and were replaced), over the whole run.
    pub games_finished: u64,
    /// Clients connected when the window opened.
    pub connected_at_start: usize,
    /// Clients connected when the window closed.
    pub connected_at_end: usize,
    /// Most clients connected at once.
    pub peak_connected: usize,
    /// Connection attempts that failed, over the whole run.
    pub connect_failures: u64,
    /// ... of which in the window.
    pub connect_failures_in_window: u64,
    /// Connections lost, over the whole run.
    pub dropped: u64,
    /// ... of which in the window.
    pub dropped_in_window: u64,
    /// Events received in the window.
    pub events: u64,
    /// Events received per second in the window.
    pub events_per_second: f64,
    /// Events the W clients would have received in the window had every
    /// table kept the robots' nominal pace (`--offered-per-client` times W
    /// times the window), when that rate is known.
    pub offered_events: Option<f64>,
    /// `events` over `offered_events`: the share of the offered events
    /// delivered (a server that falls behind slows its games, and delivers
    /// less than it is offered even when each event arrives fast).
    pub delivered_ratio: Option<f64>,
    /// Latency from an event's creation to its receipt, over the window.
    pub latency: Option<LatencySummary>,
    /// Events whose sequence number was not above the one before (expected 0).
    pub out_of_order: u64,
    /// Messages that could not be read (expected 0).
    pub unreadable: u64,
    /// The server's process id.
    pub server_pid: Option<u32>,
    /// The server's largest RSS sampled over the run, in KiB.
    pub server_rss_peak_kib: Option<u64>,
    /// The server's RSS when the window opened, in KiB.
    pub server_rss_start_kib: Option<u64>,
    /// The server's RSS when the window closed, in KiB.
    pub server_rss_end_kib: Option<u64>,
    /// The server's CPU use over the window, in percent of one core.
    pub server_cpu_percent: Option<f64>,
    /// The server's busiest threads over the window (at most five), busiest
    /// first: one near 100 % while cores are idle is a serial path.
    #[serde(default)]
    pub server_threads: Vec<crate::threads::ThreadShare>,
    /// This tool's CPU use over the window, in percent of one core.
    pub client_cpu_percent: Option<f64>,
    /// The whole machine's CPU use over the window, in percent of one core
    /// (at most 100 times `cpus`): more than server and client together
    /// means other processes competed.
    pub machine_cpu_percent: Option<f64>,
    /// CPUs available.
    pub cpus: usize,
    /// The first failure of each kind, to tell why.
    pub first_table_error: Option<String>,
    /// The first failed connection.
    pub first_connect_error: Option<String>,
    /// The logins run beside the tables (`--logins-per-second`).
    pub logins: Option<LoginReport>,
    /// The first dropped connection.
    pub first_drop: Option<String>,
}

/// The report for people.
pub fn render_text(r: &Report) -> String {
    let ms = |us: u64| format!("{:.2} ms", us as f64 / 1000.0);
    let mib = |kib: u64| format!("{:.1} MiB", kib as f64 / 1024.0);
    let mut out = String::new();
    let mut line = |s: String| {
        out.push_str(&s);
        out.push('\n');
    };
    line(format!(
        "loadtest against {}: {} tables of robots (pause {:.1} s), {} spectator WebSockets, {} CPUs",
        r.server,
        r.tables,
        f64::from(r.pause_deciseconds) / 10.0,
        r.clients,
        r.cpus
    ));
    line(format!("ramp {:.1} s, measured {:.1} s", r.ramp_seconds, r.window_seconds));
    if let Some(fd) = r.fd_limit {
        line(format!("open-file limit: {} (was {}, hard {})", fd.soft, fd.before, fd.hard));
    }
    for w in &r.warnings {
        line(format!("WARNING: {w}"));
    }
    line(format!(
        "tables: {} opened, {} requests failed, {} games finished and replaced",
        r.tables_opened, r.table_failures, r.games_finished
    ));
    line(format!(
        "clients: {} connected at the window's start, {} at its end (peak {}); \
         {} connection attempts failed ({} in the window), {} dropped ({} in the window)",
        r.connected_at_start,
        r.connected_at_end,
        r.peak_connected,
        r.connect_failures,
        r.connect_failures_in_window,
        r.dropped,
        r.dropped_in_window
    ));
    line(format!("events: {} received in the window, {:.0}/s", r.events, r.events_per_second));
    if let (Some(offered), Some(ratio)) = (r.offered_events, r.delivered_ratio) {
        line(format!(
            "offered: {:.0} events ({:.0}/s) at the robots' pace; delivered {:.1}%",
            offered,
            offered / r.window_seconds,
            ratio * 100.0
        ));
    }
    match &r.latency {
        Some(l) => line(format!(
            "latency (creation to receipt): p50 {}, p90 {}, p99 {}, p99.9 {}, max {}, mean {}",
            ms(l.p50_us),
            ms(l.p90_us),
            ms(l.p99_us),
            ms(l.p999_us),
            ms(l.max_us),
            ms(l.mean_us as u64)
        )),
        None => line("latency: no events received in the window".into()),
    }
    if r.out_of_order > 0 || r.unreadable > 0 {
        line(format!("anomalies: {} events out of order, {} unreadable messages", r.out_of_order, r.unreadable));
    }
    if let Some(pid) = r.server_pid {
        let mut s = format!("server (pid {pid}): peak RSS {}", r.server_rss_peak_kib.map_or("?".into(), mib));
        if let (Some(a), Some(b)) = (r.server_rss_start_kib, r.server_rss_end_kib) {
            s.push_str(&format!(" (window start {}, end {})", mib(a), mib(b)));
        }
        if let Some(cpu) = r.server_cpu_percent {
            s.push_str(&format!(", CPU {cpu:.0}% of one core"));
        }
        line(s);
        if !r.server_threads.is_empty() {
            line(format!("server's busiest threads: {}", crate::threads::describe(&r.server_threads)));
        }
    }
    if let Some(cpu) = r.client_cpu_percent {
        line(format!("loadtest client: CPU {cpu:.0}% of one core"));
    }
    if let Some(cpu) = r.machine_cpu_percent {
        let ours = r.server_cpu_percent.unwrap_or(0.0) + r.client_cpu_percent.unwrap_or(0.0);
        let others =
            if r.server_pid.is_some() { format!(" (others {:.0}%)", (cpu - ours).max(0.0)) } else { String::new() };
        line(format!("machine: CPU {cpu:.0}% of {}%{others}", r.cpus * 100));
    }
    if let Some(l) = &r.logins {
        let latency = l.latency.as_ref().map_or("no login answered".to_string(), |l| {
            format!("p50 {}, p99 {}, max {}", ms(l.p50_us), ms(l.p99_us), ms(l.max_us))
        });
        line(format!(
            "logins: {:.1}/s asked, {:.1}/s succeeded ({} in the window, {} limited, {} failed); login latency {latency}",
            l.asked_per_second, l.per_second, l.succeeded, l.limited, l.failed
        ));
        if let Some(f) = &l.first_failure {
            line(format!("first failed login: {f}"));
        }
    }
    for (what, e) in
        [("table request", &r.first_table_error), ("connection", &r.first_connect_error), ("drop", &r.first_drop)]
    {
        if let Some(e) = e {
            line(format!("first failed {what}: {e}"));
        }
    }
    out
}
