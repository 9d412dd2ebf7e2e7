//! Cluster mode through real processes: nodes of `mahjong-server serve
//! --nats` on 127.0.0.1 ports, one scratch Postgres database, the machine's
//! NATS (`.ci/run` starts one when none listens).
//!
//! Every table is played by one node; the others relay it. Killing, pausing
//! or restarting a node must lose no event a client has seen and show no
//! sequence number twice with different contents.

use std::collections::{BTreeMap, HashMap};
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use std::sync::Arc;

use futures_util::StreamExt;
use mahjong::auth::{AccountSettings, Accounts, Role};
use mahjong::cluster::bus::Bus;
use mahjong::cluster::relay;
use mahjong::cluster::seal::{ClusterKey, Seal};
use mahjong::limits::Permit;
use mahjong::protocol::ws::ServerMessage;
use mahjong::table::{Asker, Connection, Lobby, RobotSeat, TableCommand, TableSettings, TableSetup};
use mahjong_tools::client::{SeatPlan, TableSocket, http, play_seat};
use serde_json::{Value, json};

use crate::common::app::Api;
use crate::common::db::TestDb;
use crate::common::process::{ServerProcess, free_port, listener};

pub(crate) const NATS: &str = "nats://127.0.0.1:4222";
const UP: Duration = Duration::from_secs(60);

/// Fails at once, saying what to install, when no NATS listens.
pub(crate) fn nats_is_there() {
    if std::net::TcpStream::connect_timeout(&"127.0.0.1:4222".parse().unwrap(), Duration::from_secs(2)).is_err() {
        panic!(
            "the cluster tests need a NATS server on 127.0.0.1:4222: install nats-server (Debian: apt install \
             nats-server) and start it (`nats-server -a 127.0.0.1 -p 4222 &`); .ci/run starts one"
        );
    }
}

/// A node: its socket (kept across restarts) and its process.
pub(crate) struct Node {
    pub(crate) name: String,
    /// `--nats`.
    nats: String,
    /// `--pause` (deciseconds between robots' moves).
    pause: String,
    listener: TcpListener,
    pub(crate) addr: SocketAddr,
    pub(crate) process: Option<ServerProcess>,
}

impl Node {
    /// A node on the machine's NATS whose robots wait `pause` deciseconds between moves.
    pub(crate) async fn start(name: &str, database: &str, pause: u32, flags: &[&str]) -> Node {
        Node::start_on(NATS, name, database, pause, flags).await
    }

    /// A node on the NATS at `nats`.
    pub(crate) async fn start_on(nats: &str, name: &str, database: &str, pause: u32, flags: &[&str]) -> Node {
        let listener = listener();
        let addr = listener.local_addr().unwrap();
        let (name, nats, pause) = (name.into(), nats.into(), pause.to_string());
        let mut node = Node { name, nats, pause, listener, addr, process: None };
        node.restart(database, flags).await;
        node
    }

    /// Nodes of these names on the machine's NATS (robots at `--pause 2`).
    async fn several(names: &[&str], database: &str) -> Vec<Node> {
        Node::several_on(NATS, names, database, 2, &[]).await
    }

    /// Nodes of these names on the NATS at `nats`, each with `flags`.
    pub(crate) async fn several_on(
        nats: &str,
        names: &[&str],
        database: &str,
        pause: u32,
        flags: &[&str],
    ) -> Vec<Node> {
        let mut nodes = Vec::new();
        for name in names {
            nodes.push(Node::start_on(nats, name, database, pause, flags).await);
        }
        nodes
    }

    /// Starts the node's process (again) and waits until it is a member.
    pub(crate) async fn restart(&mut self, database: &str, flags: &[&str]) {
        let mut all = vec!["--nats", &self.nats, "--node-name", &self.name, "--pause", &self.pause];
        all.extend_from_slice(flags);
        self.process = Some(ServerProcess::start_with(&self.listener, database, 7, UP, &all).await);
        wait_for(UP, "the node to be ready", || self.is_ready()).await;
    }

    pub(crate) fn api(&self) -> Api {
        Api::at(self.addr)
    }

    /// Whether `/readyz` answers 200 (a member of the cluster).
    pub(crate) async fn is_ready(&self) -> bool {
        http(self.addr, "GET", "/readyz", None, None).await.is_ok_and(|a| a.status == 200)
    }

    /// Waits until this node shows `table` past sequence number `seq`.
    pub(crate) async fn wait_seq(&self, table: &str, seq: u64, within: Duration, what: &str) {
        wait_for(within, what, || async {
            let a = self.api().request("GET", &format!("/api/v1/tables/{table}"), None, None).await;
            a.status == 200 && a.body["seq"].as_u64().is_some_and(|s| s > seq)
        })
        .await;
    }

    fn process(&self) -> &ServerProcess {
        self.process.as_ref().expect("the node runs")
    }
}

pub(crate) async fn wait_for<F, Fut>(within: Duration, what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + within;
    while !check().await {
        assert!(Instant::now() < deadline, "waited {within:?} for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A table of four robots playing one round, not started, opened through `api`.
async fn robot_table(api: Api, name: &str) -> String {
    api.create_table(json!({"name": name, "robots": [{}, {}, {}, {}], "options": {"NumRounds": 1}})).await
}

/// A table of four robots playing one round, started at once through `api`.
async fn playing_robot_table(api: Api, name: &str) -> String {
    let table = robot_table(api, name).await;
    api.start(&table, None).await;
    table
}

/// A tile of someone's concealed hand that an event shows, with its owner.
pub(crate) fn concealed_tile_owner(event: &Value) -> Option<i64> {
    let shows_tile = !event["tile"].is_null();
    match event["type"].as_str()? {
        "drew" | "tile_passed" if shows_tile => event["player"].as_i64(),
        "tile_received" => event["player"].as_i64(),
        _ => None,
    }
}

/// Follows a table's stream as a spectator through `addrs` (the first that
/// lets it in), reconnecting with `since` whenever the socket closes, until
/// it has seen `until` or the game is over. Every event seen, by sequence
/// number; a number seen twice must carry the same text.
pub(crate) async fn follow(addrs: Vec<SocketAddr>, table: String, until: u64) -> BTreeMap<u64, String> {
    let mut seen: BTreeMap<u64, String> = BTreeMap::new();
    let mut last: Option<u64> = None;
    let deadline = Instant::now() + Duration::from_secs(180);
    let mut turn = 0;
    'connect: loop {
        assert!(Instant::now() < deadline, "following {table}: {} events seen, last {last:?}", seen.len());
        let addr = addrs[turn % addrs.len()];
        turn += 1;
        let Ok(mut socket) = TableSocket::connect(addr, &table, None, last).await else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        loop {
            let Ok(Some((message, text))) = socket.next(Duration::from_secs(30)).await else { continue 'connect };
            let ServerMessage::Event { seq, .. } = message else { continue };
            let value: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(concealed_tile_owner(&value["event"]), None, "a spectator saw a concealed tile: {text}");
            if let Some(before) = seen.insert(seq, text.clone()) {
                assert_eq!(before, text, "two different events numbered {seq}");
            }
            assert!(last.is_none_or(|l| seq > l), "event {seq} after {last:?}");
            last = Some(seq);
            if seq >= until || value["event"]["type"] == "game_over" {
                return seen;
            }
        }
    }
}

/// A stream [`follow`] saw went on to `until`, or to the end of its game.
pub(crate) fn followed_to(seen: &BTreeMap<u64, String>, until: u64) {
    let last = *seen.keys().last().expect("events");
    assert!(last >= until || seen.values().any(|t| t.contains("game_over")), "the stream stopped at {last}");
}

/// An admin's token on the cluster's database, logged in through `api`.
pub(crate) async fn admin(database: &str, api: Api) -> String {
    let store = mahjong::store::Store::open(database).await.unwrap();
    let accounts = Accounts::new(store.clone(), AccountSettings::default()).unwrap();
    accounts.create("root", "correct horse battery", Role::Admin).await.unwrap();
    store.close().await;
    api.login("root", "correct horse battery").await
}

/// The value of a metric in `/metrics`, summed over its labels.
pub(crate) async fn metric(addr: SocketAddr, name: &str) -> f64 {
    metric_where(addr, name, "").await
}

/// The value of a metric in `/metrics`, summed over the lines that hold
/// `label` (`direction="out"`, say).
pub(crate) async fn metric_where(addr: SocketAddr, name: &str, label: &str) -> f64 {
    let a = http(addr, "GET", "/metrics", None, None).await.unwrap();
    let text = a.body.as_str().unwrap_or_default().to_string();
    text.lines()
        .filter(|l| l.starts_with(name) && l.contains(label))
        .filter_map(|l| l.rsplit_once(' ').and_then(|(_, v)| v.parse::<f64>().ok()))
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_refuses_cluster_mode() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mahjong-server"))
        .args(["serve", "--database", "sqlite://x.db", "--nats", NATS, "--listen", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("needs a Postgres database"), "{said}");
    assert!(!std::path::Path::new("x.db").exists(), "nothing was created");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_nodes_play_as_one_service() {
    nats_is_there();
    let db = TestDb::new("postgres").await;
    let mut nodes = Vec::new();
    for name in ["north", "south", "west"] {
        nodes.push(Node::start(name, &db.url, 0, &[]).await);
    }
    // A table opened through each node is that node's, and every node lists them all.
    let mut tables = Vec::new();
    for node in &nodes {
        tables.push(robot_table(node.api(), &format!("at {}", node.name)).await);
    }
    for node in &nodes {
        wait_for(Duration::from_secs(5), "every node to list every table", || async {
            let listed = node.api().get("/api/v1/tables").await;
            let ids: Vec<&str> = listed["tables"].as_array().unwrap().iter().filter_map(|t| t["id"].as_str()).collect();
            tables.iter().all(|t| ids.contains(&t.as_str()))
        })
        .await;
    }
    for (i, table) in tables.iter().enumerate() {
        let elsewhere = &nodes[(i + 1) % 3];
        let info = elsewhere.api().table_info(table).await;
        assert_eq!(info["node"], nodes[i].name, "{info}");
    }

    // Spectators of north's table on north itself and on south see the same stream;
    // the game is started through west.
    let table = tables[0].clone();
    let here = tokio::spawn(follow(vec![nodes[0].addr], table.clone(), u64::MAX));
    let there = tokio::spawn(follow(vec![nodes[1].addr], table.clone(), u64::MAX));
    wait_for(Duration::from_secs(5), "both spectators", || async {
        nodes[2].api().table_info(&table).await["spectators"] == 2
    })
    .await;
    nodes[2].api().start(&table, None).await;
    let (here, there) = (here.await.unwrap(), there.await.unwrap());
    assert!(here.len() > 100, "the game was followed: {} events", here.len());
    assert_eq!(here, there, "a spectator on another node sees exactly what one on the owner sees");

    // A person sits through south at a table of west's and plays from north:
    // it sees its own concealed tiles, never another's.
    let api = nodes[1].api();
    let table = api.table(&[1, 2, 3], json!({"NumRounds": 1})).await;
    let _ = &tables;
    let token = nodes[1].api().sit(&table, "Eve", 0).await;
    nodes[1].api().start(&table, Some(&token)).await;
    let mut player = TableSocket::connect(nodes[0].addr, &table, Some(&token), None).await.unwrap();
    let log = play_seat(&mut player, SeatPlan::new(0)).await.unwrap();
    assert!(log.game_over && log.moves > 10, "the game was played through another node: {} moves", log.moves);
    assert!(log.errors.is_empty(), "{:?}", log.errors);
    let mut own = 0;
    for text in &log.received {
        let value: Value = serde_json::from_str(text).unwrap();
        match concealed_tile_owner(&value["event"]) {
            Some(0) => own += 1,
            Some(other) => panic!("seat 0 saw seat {other}'s concealed tile: {text}"),
            None => {}
        }
    }
    assert!(own > 10, "the player saw its own draws ({own})");

    // The admins' view of the cluster.
    let token = admin(&db.url, nodes[2].api()).await;
    let a = nodes[2].api().request("GET", "/api/v1/cluster", None, Some(&token)).await;
    assert_eq!(a.status, 200, "{}", a.body);
    let names: Vec<&str> = a.body["nodes"].as_array().unwrap().iter().filter_map(|n| n["name"].as_str()).collect();
    assert_eq!(names, ["north", "south", "west"], "{}", a.body);
    assert!(a.body["nodes"][0]["heartbeat_us"].as_i64().unwrap() > 0);
    let anonymous = nodes[2].api().request("GET", "/api/v1/cluster", None, None).await;
    assert_eq!(anonymous.status, 401);
    assert!(metric(nodes[1].addr, "mahjong_cluster_nats_messages_total").await > 0.0);
    drop(nodes);
    db.remove().await;
}

/// The messages a node has published on NATS (`/metrics`).
async fn published(addr: SocketAddr) -> f64 {
    metric_where(addr, "mahjong_cluster_nats_messages_total", r#"direction="out""#).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn spectators_at_another_node_share_one_relayed_stream() {
    nats_is_there();
    let db = TestDb::new("postgres").await;
    let nodes = Node::several_on(NATS, &["owner", "watchers"], &db.url, 0, &[]).await;
    let table = robot_table(nodes[0].api(), "watched from afar").await;
    // One spectator at the owner, twelve through the other node.
    let here = tokio::spawn(follow(vec![nodes[0].addr], table.clone(), u64::MAX));
    let there: Vec<_> = (0..12).map(|_| tokio::spawn(follow(vec![nodes[1].addr], table.clone(), u64::MAX))).collect();
    wait_for(Duration::from_secs(10), "all thirteen spectators counted by the owner", || async {
        nodes[1].api().table_info(&table).await["spectators"] == 13
    })
    .await;
    // A spectator the feed serves is answered as its table would answer it.
    let mut asking = TableSocket::connect(nodes[1].addr, &table, None, None).await.unwrap();
    let (first, _) = asking.next(Duration::from_secs(10)).await.unwrap().unwrap();
    assert!(matches!(first, ServerMessage::Snapshot { .. }), "{first:?}");
    for (ask, answer) in [
        (r#"{"type":"ping"}"#, r#""type":"pong""#),
        (r#"{"type":"ready"}"#, r#""code":"not_allowed""#),
        (r#"{"type":"nonsense"}"#, r#""code":"bad_message""#),
        (r#"{"type":"snapshot"}"#, r#""type":"snapshot""#),
    ] {
        asking.send_text(ask.into()).await.unwrap();
        let (_, text) = asking.next(Duration::from_secs(10)).await.unwrap().unwrap();
        assert!(text.contains(answer), "{ask} was answered {text}");
    }
    asking.close().await;
    wait_for(Duration::from_secs(10), "the one who left to be counted out", || async {
        nodes[0].api().table_info(&table).await["spectators"] == 13
    })
    .await;
    let before = published(nodes[0].addr).await;
    nodes[0].api().start(&table, None).await;
    let here = here.await.unwrap();
    let played = published(nodes[0].addr).await - before;
    eprintln!("{played} published for {} events", here.len());
    assert!(here.len() > 100, "the game was followed: {} events", here.len());
    for there in there {
        assert_eq!(there.await.unwrap(), here, "a spectator through the feed sees exactly what one at the owner sees");
    }
    // Relayed once for the twelve: about one message per event they saw,
    // where a stream each would take twelve.
    let events = here.len() as f64;
    assert!(played < 1.5 * events + 50.0, "{played} messages published for {events} events seen by 12 spectators");
    drop(nodes);
    db.remove().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn tables_spread_again_when_a_node_joins() {
    nats_is_there();
    let db = TestDb::new("postgres").await;
    let quick = ["--lease-seconds", "2"];
    let first = Node::start("first", &db.url, 1, &quick).await;
    let mut tables = Vec::new();
    for i in 0..8 {
        tables.push(playing_robot_table(first.api(), &format!("busy {i}")).await);
    }
    let joining = Node::start("joining", &db.url, 1, &quick).await;
    let addrs = vec![first.addr, joining.addr];
    // Each followed for a few hands, through the move.
    let mut followers = Vec::new();
    for t in &tables {
        let until = first.api().table_info(t).await["seq"].as_u64().unwrap() + 500;
        followers.push((until, tokio::spawn(follow(addrs.clone(), t.clone(), until))));
    }
    // Fair shares of four: four move, each at its hand's end, and no more.
    let where_they_are = || async {
        let mut on_joining = Vec::new();
        for t in &tables {
            let info = first.api().table_info(t).await;
            if info["node"] == "joining" {
                on_joining.push((t.clone(), info["hands"].as_u64().unwrap()));
            }
        }
        on_joining
    };
    wait_for(Duration::from_secs(120), "four tables to move to the node that joined", || async {
        where_they_are().await.len() == 4
    })
    .await;
    assert_eq!(metric(first.addr, "mahjong_cluster_tables_moved_total").await, 4.0, "none was taken back");
    for (until, follower) in followers {
        // Every event once, in order, through the move ([`follow`] checks).
        followed_to(&follower.await.unwrap(), until);
    }
    assert_eq!(where_they_are().await.len(), 4, "nothing moved back");
    assert_eq!(metric(joining.addr, "mahjong_cluster_tables_moved_total").await, 0.0);
    drop((first, joining));
    db.remove().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn new_tables_go_to_the_least_loaded_node() {
    nats_is_there();
    let db = TestDb::new("postgres").await;
    let nodes = [Node::start("busy", &db.url, 0, &[]).await, Node::start("idle", &db.url, 0, &[]).await];
    let first = robot_table(nodes[0].api(), "first").await;
    assert_eq!(nodes[0].api().table_info(&first).await["node"], "busy", "a tie stays where it was asked");
    // Once the heartbeats have told each node of the other, more tables asked
    // of the busy node go to the idle one until they are even.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let mut placed = Vec::new();
    for n in 0..3 {
        let info = nodes[0]
            .api()
            .post("/api/v1/tables", json!({"name": format!("more {n}"), "robots": [{}, {}, {}, {}]}), None)
            .await;
        placed.push(info["node"].as_str().unwrap().to_string());
    }
    assert_eq!(placed[0], "idle", "{placed:?}");
    assert!(placed.iter().filter(|n| *n == "idle").count() >= 2, "{placed:?}");
    // Wherever it went, it is played there and served here.
    let listed = nodes[0].api().get("/api/v1/tables").await;
    assert_eq!(listed["tables"].as_array().unwrap().len(), 4, "{listed}");
    drop(nodes);
    db.remove().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_killed_node_s_tables_play_on_elsewhere() {
    nats_is_there();
    let db = TestDb::new("postgres").await;
    let mut nodes = Node::several(&["one", "two", "three"], &db.url).await;
    let mut tables = Vec::new();
    for n in 0..2 {
        let table = playing_robot_table(nodes[0].api(), &format!("doomed {n}")).await;
        tables.push(table);
    }
    // Followed through the two nodes that live, far past the kill.
    let followers: Vec<_> =
        tables.iter().map(|t| tokio::spawn(follow(vec![nodes[1].addr, nodes[2].addr], t.clone(), 400))).collect();
    nodes[1].wait_seq(&tables[0], 40, Duration::from_secs(30), "some play").await;
    let mut before = Vec::new();
    for t in &tables {
        before.push(nodes[1].api().table_info(t).await["seq"].as_u64().unwrap());
    }
    nodes[0].process.take().unwrap().kill();
    let killed = Instant::now();
    for (t, seq) in tables.iter().zip(&before) {
        wait_for(Duration::from_secs(15), "the table to play again elsewhere", || async {
            let a = nodes[1].api().request("GET", &format!("/api/v1/tables/{t}"), None, None).await;
            a.status == 200 && a.body["seq"].as_u64().is_some_and(|s| s > *seq) && a.body["node"] != "one"
        })
        .await;
    }
    eprintln!("tables playing again {:.1} s after the kill", killed.elapsed().as_secs_f64());
    for follower in followers {
        followed_to(&follower.await.unwrap(), 400);
    }
    drop(nodes);
    db.remove().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_node_paused_past_its_lease_writes_and_shows_nothing() {
    nats_is_there();
    let db = TestDb::new("postgres").await;
    let lease = ["--lease-seconds", "2"];
    let nodes = [Node::start("awake", &db.url, 2, &lease).await, Node::start("sleepy", &db.url, 2, &lease).await];
    let table = playing_robot_table(nodes[1].api(), "paused").await;
    let follower = tokio::spawn(follow(vec![nodes[0].addr], table.clone(), 300));
    nodes[0].wait_seq(&table, 30, Duration::from_secs(30), "some play").await;
    nodes[1].process().signal("STOP");
    wait_for(Duration::from_secs(15), "the awake node to take the table over", || async {
        let a = nodes[0].api().request("GET", &format!("/api/v1/tables/{table}"), None, None).await;
        a.status == 200 && a.body["node"] == "awake"
    })
    .await;
    nodes[1].process().signal("CONT");
    // The sleeper finds its lease gone: it gives its table up (whatever it
    // tried to write meanwhile was refused), and joins again.
    wait_for(Duration::from_secs(15), "the sleeper to give its table up", || async {
        metric(nodes[1].addr, "mahjong_cluster_tables_lost_total").await >= 1.0
    })
    .await;
    let fenced = metric(nodes[1].addr, "mahjong_cluster_fenced_writes_total").await;
    eprintln!("writes refused to the paused node: {fenced}");
    wait_for(Duration::from_secs(15), "the sleeper to be a member again", || nodes[1].is_ready()).await;
    assert_eq!(nodes[1].api().table_info(&table).await["node"], "awake", "the table stays where it went");
    followed_to(&follower.await.unwrap(), 300);
    drop(nodes);
    db.remove().await;
}

/// When every node was cut off past its lease (the database away, say) each
/// comes back to its own tables: the first one back does not take the
/// others' (it waits a lease for them to come back too), and nothing moves.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn after_every_node_lapsed_each_comes_back_to_its_own_tables() {
    nats_is_there();
    let db = TestDb::new("postgres").await;
    let lease = ["--lease-seconds", "3"];
    let nodes = [Node::start("early", &db.url, 2, &lease).await, Node::start("late", &db.url, 2, &lease).await];
    let mut tables = Vec::new();
    for (n, node) in nodes.iter().enumerate() {
        for k in 0..2 {
            tables.push(playing_robot_table(node.api(), &format!("cut off {n}.{k}")).await);
        }
    }
    let where_they_are = || async {
        let mut on = Vec::new();
        for t in &tables {
            on.push(nodes[0].api().table_info(t).await["node"].as_str().unwrap().to_string());
        }
        on
    };
    let before = where_they_are().await;
    assert!(before.contains(&"late".to_string()) && before.contains(&"early".to_string()), "{before:?}");
    let followers: Vec<_> =
        tables.iter().map(|t| tokio::spawn(follow(vec![nodes[0].addr, nodes[1].addr], t.clone(), 250))).collect();
    let mut seqs = Vec::new();
    for t in &tables {
        nodes[0].wait_seq(t, 20, Duration::from_secs(30), "some play").await;
        seqs.push(nodes[0].api().table_info(t).await["seq"].as_u64().unwrap());
    }
    for node in &nodes {
        node.process().signal("STOP");
    }
    tokio::time::sleep(Duration::from_secs(5)).await;
    // One wakes a second before the other: both leases had lapsed.
    nodes[0].process().signal("CONT");
    tokio::time::sleep(Duration::from_secs(1)).await;
    nodes[1].process().signal("CONT");
    for (t, seq) in tables.iter().zip(&seqs) {
        nodes[0].wait_seq(t, *seq, Duration::from_secs(20), "the table to play again").await;
    }
    // Past the first one's wait of a lease: still where they were.
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(where_they_are().await, before, "each node plays its own tables again");
    for follower in followers {
        followed_to(&follower.await.unwrap(), 250);
    }
    drop(nodes);
    db.remove().await;
}

/// Asks for each table through each address every 50 ms until `stop`: the
/// `404`s answered for a table that was seen again afterwards, being
/// played (while a table moves, a node must say `503 recovering`).
async fn wrong_404s(addrs: Vec<SocketAddr>, tables: Vec<String>, stop: Arc<AtomicBool>) -> Vec<String> {
    let mut pending: HashMap<String, Vec<String>> = HashMap::new();
    let mut wrong = Vec::new();
    let mut asked = 0;
    while !stop.load(Ordering::Relaxed) {
        for t in &tables {
            for addr in &addrs {
                let Ok(a) = http(*addr, "GET", &format!("/api/v1/tables/{t}"), None, None).await else { continue };
                asked += 1;
                match a.status {
                    404 => pending.entry(t.clone()).or_default().push(format!("{addr}: {}", a.body)),
                    200 if a.body["state"] == "playing" => wrong.extend(pending.remove(t).unwrap_or_default()),
                    _ => {}
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    eprintln!("{asked} requests for the tables while they moved");
    wrong
}

/// Followers connected through a node that was paused past its lease (its
/// tables' owners let its relayed streams go meanwhile) hear their tables
/// again within seconds of it waking: it closes their sockets as moved, and
/// they connect again.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn followers_through_a_node_paused_past_its_lease_hear_their_table_again() {
    nats_is_there();
    let db = TestDb::new("postgres").await;
    let lease = ["--lease-seconds", "2"];
    let nodes = [Node::start("owner", &db.url, 2, &lease).await, Node::start("sleepy", &db.url, 2, &lease).await];
    let table = playing_robot_table(nodes[0].api(), "watched through a sleeper").await;
    nodes[1].wait_seq(&table, 10, Duration::from_secs(30), "some play").await;
    let mut socket = TableSocket::connect(nodes[1].addr, &table, None, None).await.unwrap();
    let mut last = 0;
    while last < 20 {
        if let Ok(Some((ServerMessage::Event { seq, .. }, _))) = socket.next(Duration::from_secs(10)).await {
            last = seq;
        }
    }
    nodes[1].process().signal("STOP");
    tokio::time::sleep(Duration::from_secs(6)).await;
    nodes[1].process().signal("CONT");
    let woke = Instant::now();
    // Heard again: an event played after the node woke.
    let played = nodes[0].api().table_info(&table).await["seq"].as_u64().unwrap();
    // Whatever the socket held from before the pause, then: closed as moved
    // (or events again); reconnected through the same node, events again.
    let heard_again = loop {
        assert!(woke.elapsed() < Duration::from_secs(10), "silent for 10 s after the node woke (last event {last})");
        match socket.next(Duration::from_secs(1)).await {
            Ok(Some((ServerMessage::Event { seq, .. }, _))) if seq > played => break woke.elapsed(),
            Ok(Some((ServerMessage::Event { seq, .. }, _))) => last = last.max(seq),
            Ok(Some(_)) | Err(mahjong_tools::client::ClientError::Timeout(_)) => {}
            // Closed: connect again where it was, resuming.
            _ => {
                if let Ok(again) = TableSocket::connect(nodes[1].addr, &table, None, Some(last)).await {
                    socket = again;
                }
            }
        }
    };
    eprintln!("heard the table again {:.2} s after the node woke", heard_again.as_secs_f64());
    drop(nodes);
    db.remove().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_rolling_restart_loses_nothing() {
    nats_is_there();
    let db = TestDb::new("postgres").await;
    let mut nodes = Node::several(&["red", "green", "blue"], &db.url).await;
    let mut tables = Vec::new();
    for node in &nodes {
        let table = playing_robot_table(node.api(), &format!("rolling {}", node.name)).await;
        tables.push(table);
    }
    let addrs: Vec<SocketAddr> = nodes.iter().map(|n| n.addr).collect();
    let followers: Vec<_> = tables.iter().map(|t| tokio::spawn(follow(addrs.clone(), t.clone(), 500))).collect();
    let stop = Arc::new(AtomicBool::new(false));
    let prober = tokio::spawn(wrong_404s(addrs.clone(), tables.clone(), stop.clone()));
    for i in 0..3 {
        let other = nodes[(i + 1) % 3].api();
        let mine: Vec<(String, u64)> = {
            let mut mine = Vec::new();
            for t in &tables {
                let info = other.table_info(t).await;
                if info["node"] == nodes[i].name && info["state"] == "playing" {
                    mine.push((t.clone(), info["seq"].as_u64().unwrap()));
                }
            }
            mine
        };
        let stopped = Instant::now();
        nodes[i].process.take().unwrap().terminate(Duration::from_secs(20));
        for (t, seq) in &mine {
            nodes[(i + 1) % 3].wait_seq(t, *seq, Duration::from_secs(10), "a handed-over table to play on").await;
        }
        eprintln!(
            "{}'s {} tables playing again {:.2} s after SIGTERM",
            nodes[i].name,
            mine.len(),
            stopped.elapsed().as_secs_f64()
        );
        let url = db.url.clone();
        nodes[i].restart(&url, &[]).await;
    }
    for follower in followers {
        followed_to(&follower.await.unwrap(), 500);
    }
    stop.store(true, Ordering::Relaxed);
    let wrong = prober.await.unwrap();
    assert!(wrong.is_empty(), "404 for tables on their way to another node: {wrong:?}");
    drop(nodes);
    db.remove().await;
}

/// A NATS server of the test's own on a free port (the machine's is not the
/// test's to restart), killed when dropped.
pub(crate) struct OwnNats {
    child: std::process::Child,
}

impl OwnNats {
    pub(crate) fn start(port: u16) -> OwnNats {
        OwnNats::start_with(port, &[])
    }

    /// A NATS server on `port` with more flags (its authentication, say).
    pub(crate) fn start_with(port: u16, flags: &[&str]) -> OwnNats {
        let child = std::process::Command::new("nats-server")
            .args(["-a", "127.0.0.1", "-p", &port.to_string()])
            .args(flags)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("nats-server is needed for the cluster tests: apt-get install nats-server");
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "nats-server did not come up on port {port}");
            std::thread::sleep(Duration::from_millis(20));
        }
        OwnNats { child }
    }
}

impl Drop for OwnNats {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn games_go_on_when_nats_restarts() {
    nats_is_there();
    let port = free_port();
    let nats = OwnNats::start(port);
    let url = format!("nats://127.0.0.1:{port}");
    let db = TestDb::new("postgres").await;
    let nodes =
        [Node::start_on(&url, "left", &db.url, 2, &[]).await, Node::start_on(&url, "right", &db.url, 2, &[]).await];
    let table = playing_robot_table(nodes[0].api(), "through a restart").await;
    // Followed through the node that does not play it: every event crosses NATS.
    let follower = tokio::spawn(follow(vec![nodes[1].addr], table.clone(), 300));
    nodes[0].wait_seq(&table, 30, Duration::from_secs(30), "some play").await;
    drop(nats);
    // Without NATS a node says it is not ready (the other nodes' tables
    // cannot be reached from it), and why.
    wait_for(Duration::from_secs(5), "readyz to say NATS is away", || async {
        let a = nodes[1].api().request("GET", "/readyz", None, None).await;
        a.status == 503 && a.body["error"]["code"] == "nats_unavailable"
    })
    .await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let _nats = OwnNats::start(port);
    wait_for(Duration::from_secs(15), "the node to be ready again", || nodes[1].is_ready()).await;
    // The game never stopped (its node and Postgres did not), and the relayed stream resumes.
    followed_to(&follower.await.unwrap(), 300);
    assert_eq!(nodes[1].api().table_info(&table).await["node"], "left");
    drop(nodes);
    db.remove().await;
}

/// A node stopped (SIGTERM) while NATS is away still exits, in bounded time:
/// its tables are stored and released through the database, and the other
/// node plays them on.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_node_stopped_while_nats_is_away_still_exits() {
    nats_is_there();
    let port = free_port();
    let nats = OwnNats::start(port);
    let url = format!("nats://127.0.0.1:{port}");
    let db = TestDb::new("postgres").await;
    let mut nodes = [
        Node::start_on(&url, "leaving", &db.url, 2, &[]).await,
        Node::start_on(&url, "staying", &db.url, 2, &[]).await,
    ];
    let table = playing_robot_table(nodes[0].api(), "left in an outage").await;
    nodes[0].wait_seq(&table, 20, Duration::from_secs(30), "some play").await;
    let seq = nodes[0].api().table_info(&table).await["seq"].as_u64();
    drop(nats);
    tokio::time::sleep(Duration::from_millis(500)).await;
    // The hand-over waits at most 10 s for the tables, the bus 2 s for NATS.
    nodes[0].process.take().unwrap().terminate(Duration::from_secs(20));
    let _nats = OwnNats::start(port);
    wait_for(Duration::from_secs(20), "the table to play on at the other node", || async {
        let a = nodes[1].api().request("GET", &format!("/api/v1/tables/{table}"), None, None).await;
        a.status == 200 && a.body["node"] == "staying" && a.body["seq"].as_u64() > seq
    })
    .await;
    drop(nodes);
    db.remove().await;
}

/// Reads a connection's messages until the game is over.
async fn until_game_over(connection: &mut Connection) -> Vec<Arc<str>> {
    let mut texts = Vec::new();
    loop {
        let text = tokio::time::timeout(Duration::from_secs(60), connection.outbound.recv())
            .await
            .expect("the game goes on")
            .expect("the connection stays");
        let over = text.contains(r#""type":"game_over""#);
        texts.push(text);
        if over {
            return texts;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relayed_stream_that_misses_a_message_is_filled_from_the_log() {
    nats_is_there();
    let nats = async_nats::connect(NATS).await.unwrap();
    // Both sides hold the same cluster key, as two nodes do.
    let key = ClusterKey { id: 1, secret: [7; 32], active_in_ms: -1 };
    let bus = Bus::new(nats.clone(), Arc::new(Seal::new(std::slice::from_ref(&key))));
    let tag = uuid::Uuid::new_v4().simple().to_string();
    let (owner_id, me) = (format!("owner{tag}"), format!("socket{tag}"));
    // The owner's side: a lobby with one table of robots, answering on its subject.
    let store = mahjong::store::Store::open("sqlite::memory:").await.unwrap();
    let lobby = Arc::new(Lobby::new(store.clone(), Default::default()));
    let owner = relay::Owner::new(bus.clone(), lobby.clone());
    tokio::spawn(owner.serve(bus.subscribe(relay::node_subject(&owner_id)).await.unwrap()));
    let options = mahjong::rules::presets::preset(mahjong::rules::presets::DEFAULT_PRESET).unwrap();
    let mut settings = TableSettings::new("relayed", options, 11);
    settings.options.num_rounds = 1;
    let robots = (0..4).map(|seat| RobotSeat { seat: Some(seat), strategy: Default::default() }).collect();
    let setup = TableSetup { settings, robots, start: false, hold: Permit::uncounted(), payer: None };
    let table = lobby.open(setup).await.unwrap();
    let connect = |handle: mahjong::table::TableHandle| async move {
        handle
            .ask(|reply| TableCommand::Connect { token: None, account: None, since: None, replay_hand: false, reply })
            .await
            .unwrap()
            .unwrap()
    };
    // A spectator at the table itself, and one through a stand-in (another node's, as it were).
    let mut direct = connect(table.clone()).await;
    let mut frames = nats.subscribe(format!("mj.relay.{me}.>")).await.unwrap();
    let remote = relay::Remote::start(bus.clone(), table.id.clone(), owner_id, me, 1024, Default::default());
    let mut relayed = connect(remote.handle.clone()).await;
    table
        .ask(|reply| TableCommand::Start {
            asker: Asker::default(),
            robot_game: Some(Permit::uncounted()),
            payer: None,
            reply,
        })
        .await
        .unwrap()
        .unwrap();
    // The spectator's feed, relayed once the game's events come.
    let subject = tokio::time::timeout(Duration::from_secs(10), frames.next()).await.unwrap().unwrap().subject;
    // A message "lost" on the way: a frame out of its turn. The stand-in
    // attaches again after the last event it passed on.
    let mut through = Vec::new();
    while through.len() < 40 {
        through.push(relayed.outbound.recv().await.unwrap());
    }
    bus.publish(subject.to_string(), b"1000000 m{}").await.unwrap();
    through.extend(until_game_over(&mut relayed).await);
    let seen = until_game_over(&mut direct).await;
    assert!(seen.len() > 100, "{} messages", seen.len());
    // (Each began with its own snapshot, which counts the spectators then.)
    assert_eq!(through[1..], seen[1..], "the relayed stream is the table's, nothing missed or repeated");
    store.close().await;
}
