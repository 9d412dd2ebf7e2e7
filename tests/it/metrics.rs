//! `GET /metrics` through a real server on SQLite: a person plays a game
//! with three robots while a spectator watches and a move is refused; the
//! scrapes before, during and after show each documented metric with
//! plausible values; a second server started on the same database counts
//! the game it resumes. And docs/metrics.md lists exactly the metrics there
//! are: every one a scrape shows, and every one the code names.
//!
//! The metrics are the process's, shared by every server it runs: this file
//! holds one test that serves, so that no other test's tables or sockets
//! move its counts.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::{Duration, Instant};

use common::app::{Api, TestApp, WAIT};
use mahjong::metrics;
use mahjong::protocol::ws::{ServerMessage, StreamEvent};
use mahjong::rules::event::Event;
use mahjong::table::TableDefaults;
use mahjong_tools::client::{SeatPlan, TableSocket, play_seat};
use serde_json::json;

/// One scrape, read: each family's type, and each series' value.
struct Scrape {
    /// `# TYPE` lines: a family's name and its type.
    families: BTreeMap<String, String>,
    /// `name{labels}` (or `name`) and its value.
    samples: BTreeMap<String, f64>,
    text: String,
}

impl Scrape {
    /// A series' value; it must be there.
    fn value(&self, series: &str) -> f64 {
        *self.samples.get(series).unwrap_or_else(|| panic!("no series {series} in the scrape:\n{}", self.text))
    }
}

async fn scrape(api: Api) -> Scrape {
    let answer = api.ask("/metrics", None).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let content_type = answer.header("content-type").unwrap_or_default();
    assert!(content_type.starts_with("text/plain; version=0.0.4"), "content type {content_type}");
    let text = answer.body.as_str().unwrap_or_else(|| panic!("not text: {}", answer.body)).to_string();
    let mut families = BTreeMap::new();
    let mut samples = BTreeMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        if let Some(family) = line.strip_prefix("# TYPE ") {
            let (name, kind) = family.split_once(' ').unwrap_or_else(|| panic!("a TYPE line without a type: {line}"));
            families.insert(name.to_string(), kind.to_string());
        } else if !line.starts_with('#') {
            let (series, value) = line.rsplit_once(' ').unwrap_or_else(|| panic!("a sample without a value: {line}"));
            let value: f64 = value.parse().unwrap_or_else(|e| panic!("{line}: the value does not read: {e}"));
            samples.insert(series.to_string(), value);
        }
    }
    Scrape { families, samples, text }
}

/// Scrapes until `series` has the value `want` (a gauge that follows a
/// socket's opening or closing, which the server notes a moment later).
async fn wait_value(api: Api, series: &str, want: f64) {
    let started = Instant::now();
    loop {
        let now = scrape(api).await;
        if now.samples.get(series) == Some(&want) {
            return;
        }
        assert!(started.elapsed() < WAIT, "{series} is not {want}:\n{}", now.text);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The metrics docs/metrics.md lists: the first column of its tables.
fn documented() -> BTreeSet<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/metrics.md");
    let doc = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    doc.lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split_once('`').map(|(name, _)| name.to_string()))
        .collect()
}

const SPECTATORS: &str = "mahjong_websockets{kind=\"spectator\"}";
const PLAYERS: &str = "mahjong_websockets{kind=\"player\"}";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_follow_a_game_and_are_all_documented() {
    let app = TestApp::spawn("sqlite", TableDefaults::default()).await;
    let (addr, api) = (app.addr, app.api);
    // The server answers while start-up's recovery runs; its gauges are set
    // when it is done (at once here: an empty store, nothing to resume).
    wait_value(api, metrics::RECOVERED_TABLES, 0.0).await;
    let before = scrape(api).await;
    for name in metrics::ALL {
        let kind = &before.families.get(name).map(String::as_str);
        let later = [metrics::COMMANDS_REFUSED, metrics::HTTP_ERRORS, metrics::STORE_COMMIT_BATCHES];
        let commit = metrics::STORE_COMMIT_SECONDS;
        // Each code appears at its first refusal; the histograms at the first commit.
        assert!(kind.is_some() || later.contains(&name) || name == commit, "{name} missing:\n{}", before.text);
    }
    for state in metrics::TABLE_STATES {
        before.value(&format!("mahjong_tables{{state=\"{state}\"}}"));
    }
    assert_eq!(before.value("mahjong_store_available"), 1.0);
    assert_eq!(before.value("mahjong_recovered_tables"), 0.0, "a new database has nothing to resume");
    assert!(before.value("process_resident_memory_bytes") > 1e6, "{}", before.text);
    assert!(before.value("process_open_fds") > 0.0);

    // A person and three robots; a spectator watches.
    let id = api.table(&[1, 2, 3], json!({"NumRounds": 1})).await;
    let token = api.sit(&id, "Alice", 0).await;
    api.start(&id, Some(&token)).await;
    let playing = scrape(api).await;
    assert!(playing.value("mahjong_tables{state=\"playing\"}") >= 1.0, "{}", playing.text);
    let spectator = TableSocket::connect(addr, &id, None, None).await.unwrap();
    wait_value(api, SPECTATORS, before.value(SPECTATORS) + 1.0).await;
    let mut player = TableSocket::connect(addr, &id, Some(&token), None).await.unwrap();
    wait_value(api, PLAYERS, before.value(PLAYERS) + 1.0).await;

    // An illegal move, once the hand is dealt: refused and counted.
    let refused = |s: &Scrape| s.samples.get("mahjong_commands_refused_total{code=\"illegal_move\"}").copied();
    let refused_before = refused(&scrape(api).await).unwrap_or(0.0);
    player.send_text(r#"{"type":"ready"}"#.into()).await.unwrap();
    loop {
        let (m, _) = player.next(WAIT).await.unwrap().expect("the socket stays open");
        if matches!(m, ServerMessage::Event { event: StreamEvent::Game(Event::HandStarted { .. }), .. }) {
            break;
        }
    }
    player.send_text(r#"{"type":"act","action":{"action":"show_tiles"}}"#.into()).await.unwrap();
    loop {
        let (m, _) = player.next(WAIT).await.unwrap().expect("the socket stays open");
        if let ServerMessage::Error { code, .. } = m {
            assert_eq!(code.as_str(), "illegal_move");
            break;
        }
    }
    assert_eq!(refused(&scrape(api).await), Some(refused_before + 1.0));

    // The game played to its end, from a new connection (which gets the prompt).
    let mut player = TableSocket::connect(addr, &id, Some(&token), None).await.unwrap();
    let log = play_seat(&mut player, SeatPlan::new(0)).await.unwrap();
    assert!(log.game_over && log.errors.is_empty(), "{:?}", log.errors);
    api.wait_over(&id).await;
    let missing = api.ask("/api/v1/tables/no-such-table", None).await;
    assert_eq!(missing.status, 404);

    let after = scrape(api).await;
    let grew = |series: &str| after.value(series) - before.value(series);
    let events = grew("mahjong_events_sent_total");
    assert!(events > 100.0, "a game sends events ({events}):\n{}", after.text);
    // Each event goes to the spectator and to the player, with prompts besides.
    assert!(grew("mahjong_messages_delivered_total") > events, "{}", after.text);
    assert!(after.value("mahjong_tables{state=\"over\"}") >= 1.0, "watched, the finished table stays");
    assert!(after.value("mahjong_http_errors_total{code=\"no_such_table\"}") >= 1.0);
    assert!(grew("mahjong_http_responses_total{class=\"2xx\"}") >= 4.0, "{}", after.text);
    assert!(after.value("mahjong_http_responses_total{class=\"1xx\"}") >= 3.0, "three WebSockets upgraded");
    let commits = after.value("mahjong_store_commit_seconds_count");
    assert!(commits >= 10.0, "{}", after.text);
    assert!(after.value("mahjong_store_commit_seconds_sum") > 0.0);
    assert_eq!(after.value("mahjong_store_commit_batches_count"), commits);
    assert!(after.value("mahjong_store_commit_batches_sum") >= commits, "a commit has a batch at least");
    assert_eq!(after.value("mahjong_store_commit_seconds_bucket{le=\"+Inf\"}"), commits);
    // Every event is a row, and so is every input.
    assert!(grew("mahjong_store_rows_written_total") > events, "{}", after.text);
    assert_eq!(after.value("mahjong_journal_queue_batches"), 0.0, "nothing waits once the game is over");
    assert_eq!(after.families.get("mahjong_store_commit_seconds").map(String::as_str), Some("histogram"));
    assert_eq!(after.families.get("mahjong_events_sent_total").map(String::as_str), Some("counter"));
    assert_eq!(after.families.get("mahjong_tables").map(String::as_str), Some("gauge"));

    // The sockets closed, uncounted.
    drop(player);
    spectator.close().await;
    wait_value(api, SPECTATORS, before.value(SPECTATORS)).await;
    wait_value(api, PLAYERS, before.value(PLAYERS)).await;

    // A game left open resumes when a server starts on the database: counted.
    api.table(&[1, 2], json!({})).await;
    // (It stops once it is ready, its games back; the metrics, the
    // process's, are read from the first.)
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let second = listener.local_addr().unwrap();
    let store = mahjong::store::Store::open(&app.db.url).await.unwrap();
    let serving = mahjong::server::Serving::default();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let config = mahjong::server::ServerConfig { serving, ..mahjong::server::ServerConfig::new(listener, store) };
    let serve = tokio::spawn(common::app::serve(config, async move {
        let _ = stopped.await;
    }));
    let ready = async {
        while !matches!(mahjong_tools::client::http(second, "GET", "/readyz", None, None).await, Ok(a) if a.status == 200)
        {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(WAIT, ready).await.expect("the second server gets ready");
    let _ = stop.send(());
    tokio::time::timeout(WAIT, serve).await.expect("the second server stops").unwrap().unwrap();
    let resumed = scrape(api).await;
    assert_eq!(resumed.value("mahjong_recovered_tables"), 1.0, "{}", resumed.text);
    assert!(resumed.value("mahjong_recovery_seconds") > 0.0, "{}", resumed.text);

    // Every metric the scrapes showed is documented, and every documented
    // one was shown.
    let doc = documented();
    let shown: BTreeSet<String> = before.families.keys().chain(after.families.keys()).cloned().collect();
    let undocumented: Vec<_> = shown.difference(&doc).collect();
    assert!(undocumented.is_empty(), "shown at /metrics but not in docs/metrics.md: {undocumented:?}");
    let unshown: Vec<_> = doc.iter().filter(|d| !shown.contains(*d) && !may_be_absent(d)).collect();
    assert!(unshown.is_empty(), "in docs/metrics.md but never shown at /metrics: {unshown:?}");
    app.finish().await;
}

/// Metrics that a scrape may lack on this machine: the limit of virtual
/// memory is absent when there is none.
fn may_be_absent(name: &str) -> bool {
    name == "process_virtual_memory_max_bytes"
}

/// docs/metrics.md lists exactly the server's metrics (`metrics::ALL`) and
/// the process's.
#[test]
fn the_documented_metrics_are_the_ones_the_code_names() {
    let doc = documented();
    let ours: BTreeSet<String> = metrics::ALL.iter().map(|n| n.to_string()).collect();
    let missing: Vec<_> = ours.difference(&doc).collect();
    assert!(missing.is_empty(), "not in docs/metrics.md: {missing:?}");
    let unknown: Vec<_> = doc.iter().filter(|d| !ours.contains(*d) && !d.starts_with("process_")).collect();
    assert!(unknown.is_empty(), "docs/metrics.md lists metrics the code does not name: {unknown:?}");
    for name in &ours {
        assert!(name.starts_with("mahjong_"), "{name}: the server's metrics are named mahjong_*");
    }
}
