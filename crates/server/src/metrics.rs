//! What the server counts, for Prometheus: `GET /metrics` renders it
//! (`http::metrics`); docs/metrics.md lists every metric.
//!
//! This module stands at the bottom, beside `rules/`: it only wraps the
//! `metrics` crate's macros, so that `store/`, `table/` and `http/` record
//! what happens where it happens, and every name, label and bucket is here.
//! A label takes a few fixed values (a table's state, a kind of socket, an
//! error code, a status class), never a table's or a player's id: the number
//! of series stays the same however many tables play. Nothing recorded is
//! secret.
//!
//! The recorder is the process's: [`install`] puts it in place once, and
//! every server of the process (tests run several) shares it. Before it is
//! installed (the command-line tools, unit tests) recording costs nothing and
//! keeps nothing.

use std::sync::OnceLock;
use std::time::Duration;

use metrics::{Gauge, Unit, counter, describe_counter, describe_gauge, describe_histogram, gauge, histogram};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

/// Tables in the lobby, by `state`: a gauge.
pub const TABLES: &str = "mahjong_tables";
/// Open table WebSockets, by `kind`: a gauge.
pub const WEBSOCKETS: &str = "mahjong_websockets";
/// Events the tables released to their streams once stored: a counter.
pub const EVENTS_SENT: &str = "mahjong_events_sent_total";
/// Messages written to WebSockets: a counter.
pub const MESSAGES_DELIVERED: &str = "mahjong_messages_delivered_total";
/// Connections a table dropped (queue full, socket gone): a counter.
pub const SUBSCRIBERS_DROPPED: &str = "mahjong_subscribers_dropped_total";
/// Table messages refused, by `code`: a counter.
pub const COMMANDS_REFUSED: &str = "mahjong_commands_refused_total";
/// HTTP answers, by status `class`: a counter.
pub const HTTP_RESPONSES: &str = "mahjong_http_responses_total";
/// HTTP error answers, by `code`: a counter.
pub const HTTP_ERRORS: &str = "mahjong_http_errors_total";
/// How long the journal's group commits took: a histogram.
pub const STORE_COMMIT_SECONDS: &str = "mahjong_store_commit_seconds";
/// Batches per group commit: a histogram.
pub const STORE_COMMIT_BATCHES: &str = "mahjong_store_commit_batches";
/// Rows the journal's group commits wrote: a counter.
pub const STORE_ROWS_WRITTEN: &str = "mahjong_store_rows_written_total";
/// Whether the database answers: a gauge, 1 or 0.
pub const STORE_AVAILABLE: &str = "mahjong_store_available";
/// Batches handed to the journal and not yet taken into a commit: a gauge.
pub const JOURNAL_QUEUE: &str = "mahjong_journal_queue_batches";
/// Unfinished games resumed at start-up: a gauge.
pub const RECOVERED_TABLES: &str = "mahjong_recovered_tables";
/// How long resuming them took: a gauge.
pub const RECOVERY_SECONDS: &str = "mahjong_recovery_seconds";

/// Cluster mode: tables this node owns now: a gauge.
pub const CLUSTER_OWNED_TABLES: &str = "mahjong_cluster_owned_tables";
/// Cluster mode: tables this node took over from a dead or leaving node: a counter.
pub const CLUSTER_TAKEN_OVER: &str = "mahjong_cluster_tables_taken_over_total";
/// Cluster mode: tables this node sent to another node at a hand's end (rebalancing): a counter.
pub const CLUSTER_MOVED: &str = "mahjong_cluster_tables_moved_total";
/// Cluster mode: tables this node lost (taken by another, or its lease expired): a counter.
pub const CLUSTER_LOST: &str = "mahjong_cluster_tables_lost_total";
/// Cluster mode: table writes the database refused as fenced (a stale epoch): a counter.
pub const CLUSTER_FENCED_WRITES: &str = "mahjong_cluster_fenced_writes_total";
/// Cluster mode: NATS messages, by `direction` (`in`, `out`): a counter.
pub const CLUSTER_NATS_MESSAGES: &str = "mahjong_cluster_nats_messages_total";
/// Cluster mode: relayed streams that missed a NATS message and were
/// attached again after their last event (filled from the stored log): a counter.
pub const CLUSTER_GAPS_FILLED: &str = "mahjong_cluster_gaps_filled_total";
/// Cluster mode: 1 while this node holds a live lease, 0 otherwise: a gauge.
pub const CLUSTER_MEMBER: &str = "mahjong_cluster_member";
/// Cluster mode: NATS messages refused (not sealed by a node of the
/// cluster, or replayed), by `why` ([`REFUSED_WHY`]): a counter.
pub const CLUSTER_REFUSED: &str = "mahjong_cluster_refused_messages_total";
/// Cluster mode: 1 while this node is connected to NATS: a gauge.
pub const CLUSTER_NATS_CONNECTED: &str = "mahjong_cluster_nats_connected";

/// Every metric of the server's own (the process's, `process_*`, come from
/// `metrics-process`).
pub const ALL: [&str; 25] = [
    TABLES,
    WEBSOCKETS,
    EVENTS_SENT,
    MESSAGES_DELIVERED,
    SUBSCRIBERS_DROPPED,
    COMMANDS_REFUSED,
    HTTP_RESPONSES,
    HTTP_ERRORS,
    STORE_COMMIT_SECONDS,
    STORE_COMMIT_BATCHES,
    STORE_ROWS_WRITTEN,
    STORE_AVAILABLE,
    JOURNAL_QUEUE,
    RECOVERED_TABLES,
    RECOVERY_SECONDS,
    CLUSTER_OWNED_TABLES,
    CLUSTER_TAKEN_OVER,
    CLUSTER_MOVED,
    CLUSTER_LOST,
    CLUSTER_FENCED_WRITES,
    CLUSTER_NATS_MESSAGES,
    CLUSTER_GAPS_FILLED,
    CLUSTER_MEMBER,
    CLUSTER_REFUSED,
    CLUSTER_NATS_CONNECTED,
];

/// The values of [`CLUSTER_REFUSED`]'s `why` label (`cluster::seal::Refused`).
pub const REFUSED_WHY: [&str; 5] = ["unsealed", "unknown_key", "forged", "stale", "replayed"];

/// The values of [`TABLES`]' `state` label (`TableState::as_str`).
pub const TABLE_STATES: [&str; 3] = ["open", "playing", "over"];

/// The values of [`WEBSOCKETS`]' `kind` label.
pub const SOCKET_KINDS: [&str; 2] = ["player", "spectator"];

/// The values of [`HTTP_RESPONSES`]' `class` label.
pub const STATUS_CLASSES: [&str; 5] = ["1xx", "2xx", "3xx", "4xx", "5xx"];

/// The buckets of [`STORE_COMMIT_SECONDS`]: from half a millisecond (an
/// SQLite commit without fsync) to the three seconds a writer waits for a
/// connection, and beyond.
const COMMIT_SECONDS: [f64; 14] = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0];

/// The buckets of [`STORE_COMMIT_BATCHES`]: powers of two up to the
/// journal's largest group (512).
const COMMIT_BATCHES: [f64; 10] = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0];

/// How often the recorder's histograms are folded into their buckets when
/// nobody scrapes (so that they do not grow).
const UPKEEP_EVERY: Duration = Duration::from_secs(5);

/// The installed recorder, rendered as Prometheus text.
#[derive(Clone, Debug)]
pub struct Metrics {
    handle: PrometheusHandle,
    process: metrics_process::Collector,
}

impl Metrics {
    /// Every metric as Prometheus's text format (version 0.0.4), the
    /// process's own (memory, CPU, files, threads) read now.
    pub fn render(&self) -> String {
        self.process.collect();
        self.handle.render()
    }
}

/// Installs the process's recorder the first time, and describes every
/// metric; afterwards, the same recorder. When another recorder is already
/// installed (nothing of ours does that), ours is kept apart: it renders
/// only what is recorded through it, which is nothing.
///
/// Inside a tokio runtime, a task folds the histograms every few seconds.
pub fn install() -> Metrics {
    static INSTALLED: OnceLock<Metrics> = OnceLock::new();
    INSTALLED
        .get_or_init(|| {
            let builder = PrometheusBuilder::new()
                .set_buckets_for_metric(Matcher::Full(STORE_COMMIT_SECONDS.into()), &COMMIT_SECONDS)
                .and_then(|b| b.set_buckets_for_metric(Matcher::Full(STORE_COMMIT_BATCHES.into()), &COMMIT_BATCHES));
            // Our own bucket lists are never empty.
            let builder = builder.unwrap_or_else(|_| PrometheusBuilder::new());
            let recorder = builder.build_recorder();
            let handle = recorder.handle();
            if let Err(e) = metrics::set_global_recorder(recorder) {
                tracing::warn!("another metrics recorder is installed ({e}): /metrics shows nothing");
            }
            describe();
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                let handle = handle.clone();
                runtime.spawn(async move {
                    let mut every = tokio::time::interval(UPKEEP_EVERY);
                    loop {
                        every.tick().await;
                        handle.run_upkeep();
                    }
                });
            }
            let process = metrics_process::Collector::default();
            process.describe();
            Metrics { handle, process }
        })
        .clone()
}

/// Describes every metric, and shows those whose labels are known from the
/// start at zero (a scrape before the first table or socket shows them).
fn describe() {
    describe_gauge!(TABLES, "Tables in the lobby, by state (open, playing, over)");
    describe_gauge!(WEBSOCKETS, "Open table WebSockets, by kind (player, spectator)");
    describe_counter!(EVENTS_SENT, "Events the tables sent (each once, whoever receives it), once stored");
    describe_counter!(MESSAGES_DELIVERED, "Messages written to table WebSockets: events, prompts, answers, snapshots");
    describe_counter!(SUBSCRIBERS_DROPPED, "Connections a table dropped: queue full (too slow) or socket gone");
    describe_counter!(COMMANDS_REFUSED, "Messages from table WebSockets refused, by error code");
    describe_counter!(HTTP_RESPONSES, "HTTP answers, by status class (1xx to 5xx)");
    describe_counter!(HTTP_ERRORS, "HTTP error answers, by error code");
    describe_histogram!(STORE_COMMIT_SECONDS, Unit::Seconds, "How long the journal's group commits took");
    describe_histogram!(STORE_COMMIT_BATCHES, Unit::Count, "Batches (table writes) committed together");
    describe_counter!(STORE_ROWS_WRITTEN, "Rows the journal's group commits wrote, besides the games' own");
    describe_gauge!(STORE_AVAILABLE, "1 while the database answers, 0 while writes fail for want of it");
    describe_gauge!(JOURNAL_QUEUE, "Batches handed to the journal and not yet taken into a commit");
    describe_gauge!(RECOVERED_TABLES, "Unfinished games resumed as tables at start-up");
    describe_gauge!(RECOVERY_SECONDS, Unit::Seconds, "How long resuming the unfinished games took at start-up");
    describe_gauge!(CLUSTER_OWNED_TABLES, "Cluster mode: tables this node owns (plays) now");
    describe_counter!(CLUSTER_TAKEN_OVER, "Cluster mode: tables taken over from a dead or leaving node");
    describe_counter!(CLUSTER_MOVED, "Cluster mode: tables sent to another node at a hand's end (rebalancing)");
    describe_counter!(CLUSTER_LOST, "Cluster mode: tables lost to another node (taken over, or the lease expired)");
    describe_counter!(CLUSTER_FENCED_WRITES, "Cluster mode: table writes the database refused (stale epoch)");
    describe_counter!(CLUSTER_NATS_MESSAGES, "Cluster mode: NATS messages, by direction (in, out)");
    describe_counter!(
        CLUSTER_GAPS_FILLED,
        "Cluster mode: relayed streams that missed a message, resumed from the store"
    );
    describe_gauge!(CLUSTER_MEMBER, "Cluster mode: 1 while this node holds a live lease");
    describe_counter!(
        CLUSTER_REFUSED,
        "Cluster mode: NATS messages refused (not sealed by a node, or replayed), by why"
    );
    describe_gauge!(CLUSTER_NATS_CONNECTED, "Cluster mode: 1 while this node is connected to NATS");
    for state in TABLE_STATES {
        gauge!(TABLES, "state" => state).increment(0.0);
    }
    for kind in SOCKET_KINDS {
        gauge!(WEBSOCKETS, "kind" => kind).increment(0.0);
    }
    for class in STATUS_CLASSES {
        counter!(HTTP_RESPONSES, "class" => class).increment(0);
    }
    for name in [
        EVENTS_SENT,
        MESSAGES_DELIVERED,
        SUBSCRIBERS_DROPPED,
        STORE_ROWS_WRITTEN,
        CLUSTER_TAKEN_OVER,
        CLUSTER_MOVED,
        CLUSTER_LOST,
        CLUSTER_FENCED_WRITES,
        CLUSTER_GAPS_FILLED,
    ] {
        counter!(name).increment(0);
    }
    for direction in ["in", "out"] {
        counter!(CLUSTER_NATS_MESSAGES, "direction" => direction).increment(0);
    }
    for why in REFUSED_WHY {
        counter!(CLUSTER_REFUSED, "why" => why).increment(0);
    }
    for name in [CLUSTER_OWNED_TABLES, CLUSTER_MEMBER, CLUSTER_NATS_CONNECTED] {
        gauge!(name).increment(0.0);
    }
}

/// A table counted in [`TABLES`] under its state while it runs: moved when
/// its state changes, uncounted when dropped (the table's task ended).
#[derive(Debug)]
pub struct TableCount {
    state: &'static str,
    gauge: Gauge,
}

impl TableCount {
    /// Counts a table in `state`.
    pub fn new(state: &'static str) -> TableCount {
        let gauge = gauge!(TABLES, "state" => state);
        gauge.increment(1.0);
        TableCount { state, gauge }
    }

    /// The table is now in `state`.
    pub fn set(&mut self, state: &'static str) {
        if state != self.state {
            *self = TableCount::new(state);
        }
    }
}

impl Drop for TableCount {
    fn drop(&mut self) {
        self.gauge.decrement(1.0);
    }
}

/// A WebSocket counted in [`WEBSOCKETS`] while it is open.
#[derive(Debug)]
pub struct SocketCount(Gauge);

/// The table WebSockets open in this process (the cluster's heartbeat
/// reports it; the gauge cannot be read back).
static SOCKETS_OPEN: std::sync::atomic::AtomicI64 = std::sync::atomic::AtomicI64::new(0);

impl SocketCount {
    /// Counts an open socket: a player's (`true`) or a spectator's.
    pub fn open(player: bool) -> SocketCount {
        let gauge = gauge!(WEBSOCKETS, "kind" => if player { "player" } else { "spectator" });
        gauge.increment(1.0);
        SOCKETS_OPEN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        SocketCount(gauge)
    }

    /// The table WebSockets open in this process now.
    pub fn now() -> i64 {
        SOCKETS_OPEN.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl Drop for SocketCount {
    fn drop(&mut self) {
        self.0.decrement(1.0);
        SOCKETS_OPEN.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}

/// `n` events stored and released to a table's subscribers.
pub fn events_sent(n: usize) {
    counter!(EVENTS_SENT).increment(n as u64);
}

/// `n` messages written to a WebSocket.
pub fn messages_delivered(n: usize) {
    counter!(MESSAGES_DELIVERED).increment(n as u64);
}

/// A table dropped a connection.
pub fn subscriber_dropped() {
    counter!(SUBSCRIBERS_DROPPED).increment(1);
}

/// A table refused a client's message with `code`.
pub fn command_refused(code: &'static str) {
    counter!(COMMANDS_REFUSED, "code" => code).increment(1);
}

/// An HTTP answer with this status.
pub fn http_response(status: u16) {
    let class = STATUS_CLASSES[usize::from(status / 100).clamp(1, 5) - 1];
    counter!(HTTP_RESPONSES, "class" => class).increment(1);
}

/// An HTTP error answer with `code`.
pub fn http_error(code: &'static str) {
    counter!(HTTP_ERRORS, "code" => code).increment(1);
}

/// The journal committed `batches` batches of `rows` rows in one
/// transaction, which took `took`.
pub fn store_commit(took: Duration, batches: usize, rows: usize) {
    histogram!(STORE_COMMIT_SECONDS).record(took.as_secs_f64());
    histogram!(STORE_COMMIT_BATCHES).record(batches as f64);
    counter!(STORE_ROWS_WRITTEN).increment(rows as u64);
}

/// The database refused `n` table writes as fenced.
pub fn fenced_writes(n: usize) {
    counter!(CLUSTER_FENCED_WRITES).increment(n as u64);
}

/// This node owns `n` tables now.
pub fn cluster_owned(n: usize) {
    gauge!(CLUSTER_OWNED_TABLES).set(n as f64);
}

/// This node sent a table to another node (rebalancing).
pub fn cluster_moved() {
    counter!(CLUSTER_MOVED).increment(1);
}

/// This node took `n` tables over.
pub fn cluster_taken_over(n: usize) {
    counter!(CLUSTER_TAKEN_OVER).increment(n as u64);
}

/// This node lost `n` tables.
pub fn cluster_lost(n: usize) {
    counter!(CLUSTER_LOST).increment(n as u64);
}

/// A NATS message went `out` (or came in).
pub fn nats_message(out: bool) {
    counter!(CLUSTER_NATS_MESSAGES, "direction" => if out { "out" } else { "in" }).increment(1);
}

/// A NATS message was refused, for `why` (one of [`REFUSED_WHY`]).
pub fn cluster_refused(why: &'static str) {
    counter!(CLUSTER_REFUSED, "why" => why).increment(1);
}

/// Whether this node is connected to NATS.
pub fn nats_connected(connected: bool) {
    gauge!(CLUSTER_NATS_CONNECTED).set(if connected { 1.0 } else { 0.0 });
}

/// A relayed stream missed a message and was filled from the store.
pub fn gap_filled() {
    counter!(CLUSTER_GAPS_FILLED).increment(1);
}

/// Whether this node holds a live lease.
pub fn cluster_member(live: bool) {
    gauge!(CLUSTER_MEMBER).set(if live { 1.0 } else { 0.0 });
}

/// Whether the database answers now.
pub fn store_available(up: bool) {
    gauge!(STORE_AVAILABLE).set(if up { 1.0 } else { 0.0 });
}

/// Batches waiting for the journal now.
pub fn journal_queue(depth: usize) {
    gauge!(JOURNAL_QUEUE).set(depth as f64);
}

/// Start-up resumed `count` unfinished games, in `took`.
pub fn recovery_done(count: usize, took: Duration) {
    gauge!(RECOVERED_TABLES).set(count as f64);
    gauge!(RECOVERY_SECONDS).set(took.as_secs_f64());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts kept apart from the process's recorder: each test its own.
    fn local(record: impl FnOnce()) -> String {
        let recorder = PrometheusBuilder::new().build_recorder();
        let handle = recorder.handle();
        metrics::with_local_recorder(&recorder, record);
        handle.render()
    }

    #[test]
    fn a_table_is_counted_under_its_state_while_it_runs() {
        let text = local(|| {
            let mut table = TableCount::new("open");
            let _other = TableCount::new("open");
            table.set("playing");
            table.set("playing");
        });
        // Both dropped at the end: every state back to zero, "open" and
        // "playing" having been counted.
        assert!(text.contains("mahjong_tables{state=\"open\"} 0"), "{text}");
        assert!(text.contains("mahjong_tables{state=\"playing\"} 0"), "{text}");
        // Still running: counted where they are.
        let text = local(|| {
            let mut table = TableCount::new("open");
            table.set("playing");
            let socket = SocketCount::open(false);
            std::mem::forget((table, socket));
        });
        assert!(text.contains("mahjong_tables{state=\"open\"} 0"), "{text}");
        assert!(text.contains("mahjong_tables{state=\"playing\"} 1"), "{text}");
        assert!(text.contains("mahjong_websockets{kind=\"spectator\"} 1"), "{text}");
    }

    #[test]
    fn status_classes() {
        let text = local(|| {
            for status in [101, 200, 201, 304, 404, 422, 503] {
                http_response(status);
            }
        });
        for line in
            ["{class=\"1xx\"} 1", "{class=\"2xx\"} 2", "{class=\"3xx\"} 1", "{class=\"4xx\"} 2", "{class=\"5xx\"} 1"]
        {
            assert!(text.contains(&format!("{HTTP_RESPONSES}{line}")), "{line}: {text}");
        }
    }
}
