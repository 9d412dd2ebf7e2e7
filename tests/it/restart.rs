//! A restart through the real server process, on both databases: the
//! server is killed with SIGKILL while many games are being played, and
//! started again on the same database.
//!
//! - It answers at once: `/healthz` says `ok` while its stored games are
//!   still coming back, `/readyz` says `503 recovering` with the progress,
//!   and a table still on its way back is answered `503 recovering` with
//!   `Retry-After` (over REST and on its WebSocket), not `404`. To see that
//!   happen whatever the machine's speed, on Postgres another connection
//!   keeps the games' inputs from being read during the start; on SQLite
//!   (whose locks hold the whole file) what is answered while recovery runs
//!   is checked as it comes.
//! - Then `/readyz` says `200`, every game is back and plays on, and the
//!   people find their seats with their tokens.
//! - A game that ended just before the restart comes back as a finished
//!   table, readable over REST and its WebSocket; one an admin closed does
//!   not.
//! - Under `--seed`, new tables are numbered after the stored ones: the
//!   first table after the restart does not deal the walls of the first
//!   table before it.

use crate::common;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use common::app::{Api, TestApp};
use common::db::TestDb;
use common::process::{ServerProcess, listener};
use mahjong::auth::{AccountSettings, Accounts, Role};
use mahjong::protocol::ws::ServerMessage;
use mahjong::store::Store;
use mahjong::table::TableDefaults;
use mahjong_tools::client::{TableSocket, request};
use serde_json::{Value, json};
use sqlx::{Connection, Executor};

const SEED: u64 = 7;
const WAIT: Duration = Duration::from_secs(60);
/// Robot games being played when the server is killed.
const PLAYING: usize = 40;
const ADMIN_PASSWORD: &str = "the admin's password 1";

common::on_both_backends!(
    a_restart_answers_at_once_and_brings_every_table_back,
    games_read_together_read_as_each_alone
);

/// Another connection's lock on the games' events, which keeps a Postgres
/// server from reading them (and so from bringing any game back) until it
/// is released; everything else reads and writes as usual.
struct EventsLock(sqlx::PgConnection);

impl EventsLock {
    async fn take(url: &str) -> EventsLock {
        let mut conn = sqlx::PgConnection::connect(url).await.expect("a second Postgres connection");
        conn.execute("BEGIN").await.unwrap();
        conn.execute("LOCK TABLE events IN ACCESS EXCLUSIVE MODE").await.expect("a lock on the events");
        EventsLock(conn)
    }

    async fn release(mut self) {
        self.0.execute("ROLLBACK").await.unwrap();
        self.0.close().await.unwrap();
    }
}

/// Chat lines of a table that has no game yet, written straight to the
/// store (with the server down) as if its people had talked for days: a
/// hundred thousand of them, which recovery reads back for clients that
/// resume.
async fn long_history(url: &str, table: &str) {
    use mahjong::protocol::ws::{StreamEvent, TableEvent};
    use mahjong::rules::event::Audience;
    use mahjong::store::{Batch, EventRow};
    const LINES: i64 = 100_000;
    let store = Store::open(url).await.unwrap();
    let mut row = store.load_game(table, i64::MAX).await.unwrap().expect("stored").game;
    let first = row.last_seq + 1;
    row.last_seq += LINES;
    let mut batch = Batch::new(table, row);
    batch.events = (first..first + LINES)
        .map(|seq| {
            let text = format!("line {seq} of a long conversation");
            let event = StreamEvent::Table(TableEvent::Chat { seat: 0, name: "Ann".into(), text });
            let at_us = mahjong::store::now_us() as u64;
            let message = ServerMessage::Event { seq: seq as u64, at_us, event };
            let body = serde_json::to_string(&message).unwrap();
            EventRow { seq, at_us: at_us as i64, hand: 0, audience: Audience::Everyone, body }
        })
        .collect();
    store.write(batch).await.unwrap();
    store.close().await;
}

/// The public game events of a finished game's first hand (as a replay
/// shows them, without their times).
async fn first_hand(api: Api, game: &str) -> Vec<Value> {
    let history = api.get(&format!("/api/v1/games/{game}/hands/1/events")).await;
    let events = history["events"].as_array().unwrap_or_else(|| panic!("no events in {history}"));
    events.iter().map(|e| e["event"].clone()).collect()
}

/// Waits until `ready` holds of the table's public state.
async fn until(api: Api, table: &str, what: &str, ready: impl Fn(&Value) -> bool) -> Value {
    let started = Instant::now();
    loop {
        let info = api.table_info(table).await;
        if ready(&info) {
            return info;
        }
        assert!(started.elapsed() < WAIT, "table {table}: {what} did not happen in {WAIT:?}: {info}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A WebSocket upgrade request for the table (as a browser sends it), over
/// plain HTTP: its refusal, if any, is an ordinary answer.
async fn upgrade(addr: SocketAddr, table: &str, token: &str) -> mahjong_tools::client::Answer {
    let headers = [
        ("connection", "upgrade"),
        ("upgrade", "websocket"),
        ("sec-websocket-version", "13"),
        ("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ=="),
    ];
    request(addr, "GET", &format!("/api/v1/tables/{table}/ws?token={token}"), None, &headers).await.unwrap()
}

fn assert_recovering(what: &str, a: &mahjong_tools::client::Answer) {
    assert_eq!((a.status, a.body["error"]["code"].as_str()), (503, Some("recovering")), "{what}: {}", a.body);
    assert_eq!(a.header("retry-after"), Some("1"), "{what}: Retry-After");
}

async fn a_restart_answers_at_once_and_brings_every_table_back(backend: &str) {
    let db = TestDb::new(backend).await;
    let store = Store::open(&db.url).await.unwrap();
    let accounts = Accounts::new(store.clone(), AccountSettings::default()).unwrap();
    accounts.create("admin", ADMIN_PASSWORD, Role::Admin).await.unwrap();
    store.close().await;
    let socket = listener();
    let addr = socket.local_addr().unwrap();
    let api = Api::at(addr);
    let server = ServerProcess::start(&socket, &db.url, SEED, WAIT).await;
    assert_eq!(api.get("/readyz").await["ready"], true, "nothing to recover: ready at once");

    // Table 0 (seeded 7): a game played to its end just before the restart.
    let finished = api.robot_game("first").await;
    api.wait_over(&finished).await;
    // A finished table an admin closes: gone for good.
    let closed = api.robot_game("closed").await;
    api.wait_over(&closed).await;
    let admin = api.login("admin", ADMIN_PASSWORD).await;
    let a = api.request("DELETE", &format!("/api/v1/tables/{closed}"), None, Some(&admin)).await;
    assert_eq!(a.status, 204, "close {closed}: {}", a.body);
    // Robot games being played (half a second between moves).
    let mut playing = Vec::new();
    for i in 0..PLAYING {
        let body = json!({"name": format!("busy {i}"), "robots": [{}, {}, {}, {}], "start": true,
                          "pause_deciseconds": 5, "options": {"NumRounds": 1}});
        playing.push(api.create_table(body).await);
    }
    // A table of two people and two robots, waiting for the people.
    let people = api.table(&[2, 3], json!({"Timeout": "0"})).await;
    let tokens = [api.sit(&people, "Ann", 0).await, api.sit(&people, "Bob", 1).await];
    api.start(&people, Some(&tokens[0])).await;
    // A table where nobody has started a game.
    let chatty = api.table(&[1], json!({})).await;
    let opened = playing.len() as u64 + 4;
    // Every robot game has been dealt and played a little.
    let mut seqs = Vec::new();
    for table in &playing {
        let info = until(api, table, "the first discards", |i| i["hands"] == 1 && i["seq"].as_u64() > Some(40)).await;
        seqs.push(info["seq"].as_u64().unwrap());
    }
    server.kill();
    let killed: Vec<u64> = {
        // What the store kept is what comes back (a move may have been
        // stored after the table was last asked).
        let store = Store::open(&db.url).await.unwrap();
        let mut kept = Vec::new();
        for table in &playing {
            kept.push(store.load_game(table, i64::MAX).await.unwrap().expect("stored").game.last_seq as u64);
        }
        store.close().await;
        kept
    };
    assert!(killed.iter().zip(&seqs).all(|(k, s)| k >= s), "the store kept what was seen: {killed:?} {seqs:?}");

    // Started again. On Postgres, another connection keeps the games'
    // events from being read during the start: the server answers, but no
    // game can come back until the lock is released. SQLite locks the whole
    // file, reads included: there a table with a long history (chat lines
    // written straight to the store) makes recovery last a while, and
    // whatever is answered before it ends is checked as it comes.
    if backend == "sqlite" {
        long_history(&db.url, &chatty).await;
    }
    let lock = if backend == "postgres" { Some(EventsLock::take(&db.url).await) } else { None };
    let server = ServerProcess::start(&socket, &db.url, SEED, WAIT).await;
    // The games in play, the table of people, the open table and the game just finished.
    let returning = PLAYING as u64 + 3;
    let mut recovering = 0;
    loop {
        let a = api.ask("/readyz", None).await;
        if a.status == 200 {
            assert!(lock.is_none(), "ready while the inputs cannot be read: {}", a.body);
            break;
        }
        recovering += 1;
        assert_recovering("/readyz", &a);
        assert_eq!((a.body["ready"].as_bool(), a.body["total"].as_u64()), (Some(false), Some(returning)), "{}", a.body);
        let back = a.body["recovered"].as_u64().unwrap_or_else(|| panic!("{}", a.body));
        assert!(back < returning, "{}", a.body);
        let message = a.body["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(&format!("of {returning} back")), "{message}");
        // A table is on its way back, or back: never unknown.
        let a = api.ask(&format!("/api/v1/tables/{chatty}"), None).await;
        if a.status != 200 {
            assert_recovering("a table in play", &a);
        }
        if lock.is_some() {
            break;
        }
    }
    if let Some(lock) = lock {
        assert_recovering("a table in play", &api.ask(&format!("/api/v1/tables/{}", playing[0]), None).await);
        assert_recovering("a person's WebSocket", &upgrade(addr, &people, &tokens[0]).await);
        let body = json!({"name": "Cy"});
        let a = api.request("POST", &format!("/api/v1/tables/{people}/seats"), Some(&body), None).await;
        assert_recovering("sitting", &a);
        // The score queries read the store: they answer meanwhile.
        assert_eq!(api.get(&format!("/api/v1/games/{finished}")).await["state"], "over");
        lock.release().await;
    }
    eprintln!("{backend}: {recovering} answers of /readyz before it was ready");
    assert!(recovering > 0, "the server was ready at its first answer: nothing was seen while it recovered");
    for table in [closed.as_str(), "nosuchtable"] {
        let a = api.ask(&format!("/api/v1/tables/{table}"), None).await;
        assert_eq!((a.status, a.body["error"]["code"].as_str()), (404, Some("no_such_table")), "{table}: {}", a.body);
    }

    let started = Instant::now();
    let ready = loop {
        let a = api.ask("/readyz", None).await;
        if a.status == 200 {
            break a.body;
        }
        assert_recovering("/readyz", &a);
        assert!(started.elapsed() < WAIT, "not ready in {WAIT:?}: {}", a.body);
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(ready["ready"], true, "{ready}");
    assert_eq!((ready["total"].as_u64(), ready["recovered"].as_u64()), (Some(returning), Some(returning)), "{ready}");
    assert_eq!(ready["failed"], 0, "{ready}");
    assert!(ready["seconds"].as_f64().is_some_and(|s| s > 0.0), "{ready}");

    // Every table is back, the closed one excepted.
    let listed = api.get("/api/v1/tables").await;
    let ids: Vec<&str> = listed["tables"].as_array().unwrap().iter().filter_map(|t| t["id"].as_str()).collect();
    for table in playing.iter().chain([&people, &chatty, &finished]) {
        assert!(ids.contains(&table.as_str()), "{table} is not listed after the restart: {ids:?}");
    }
    assert!(!ids.contains(&closed.as_str()), "the table an admin closed came back");
    // The finished table is readable, over REST and its WebSocket.
    let game = api.get(&format!("/api/v1/games/{finished}")).await;
    let info = api.table_info(&finished).await;
    assert_eq!(info["state"], "over", "{info}");
    assert_eq!(info["scores"], game["scores"], "the table's scores are the stored game's: {info} {game}");
    let mut watcher = TableSocket::connect(addr, &finished, None, None).await.expect("watch the finished table");
    match watcher.next(WAIT).await.unwrap() {
        Some((ServerMessage::Snapshot { table, game, .. }, _)) => {
            assert_eq!(serde_json::to_value(table.state).unwrap(), "over");
            assert!(game.is_some(), "the finished game is shown");
        }
        other => panic!("a spectator of the finished table got {other:?}"),
    }
    watcher.close().await;
    // Every game plays on from where the store left it.
    for (table, &at_kill) in playing.iter().zip(&killed) {
        until(api, table, "a move after the restart", |i| i["seq"].as_u64() > Some(at_kill)).await;
    }
    // The people find their seats, asked whether they are ready.
    let mut ann = TableSocket::connect(addr, &people, Some(&tokens[0]), None).await.expect("Ann comes back");
    match ann.next(WAIT).await.unwrap() {
        Some((ServerMessage::Snapshot { seat, table, .. }, _)) => {
            assert_eq!(seat, Some(0));
            assert!(
                table.waiting_for_ready.contains(&0),
                "Ann is asked whether she is ready: {:?}",
                table.waiting_for_ready
            );
        }
        other => panic!("Ann got {other:?}"),
    }
    ann.close().await;

    // New tables are numbered after the stored ones: the first table after
    // the restart is not seeded as the first before it.
    let after = api.robot_game("after").await;
    api.wait_over(&after).await;
    let store = Store::open(&db.url).await.unwrap();
    let seed = |settings: &str| serde_json::from_str::<Value>(settings).unwrap()["seed"].as_u64();
    let first_seed = seed(&store.load_game(&finished, 0).await.unwrap().unwrap().settings);
    let after_seed = seed(&store.load_game(&after, 0).await.unwrap().unwrap().settings);
    store.close().await;
    assert_eq!((first_seed, after_seed), (Some(SEED), Some(SEED + opened)), "the seeds of the first tables");
    assert_ne!(first_hand(api, &after).await, first_hand(api, &finished).await, "the same walls were dealt twice");

    drop(server);
    db.remove().await;
}

/// `Store::load_games_resuming`, which reads many games at once for a
/// restart, reads each game as `load_game` and `events` read it alone: its
/// row, settings, seats, inputs, and the events of its last two hands (names
/// and chat with spaces, quotes and other scripts included).
async fn games_read_together_read_as_each_alone(backend: &str) {
    let app = TestApp::spawn(backend, TableDefaults::default()).await;
    let api = app.api;
    let finished = api.robot_game("a game over").await;
    api.wait_over(&finished).await;
    let waiting = api.table(&[2, 3], json!({"Timeout": "0"})).await;
    let token = api.sit(&waiting, "Ann O'Neil", 0).await;
    api.sit(&waiting, "Bõb 李", 1).await;
    api.start(&waiting, Some(&token)).await;
    let mut ann = TableSocket::connect(app.addr, &waiting, Some(&token), None).await.unwrap();
    let chat = mahjong::protocol::ws::ClientMessage::Chat { text: "hello, \"world\" \u{1f600}".into() };
    ann.send(&chat).await.unwrap();
    loop {
        match ann.next(WAIT).await.unwrap() {
            Some((ServerMessage::Event { .. }, text)) if text.contains("world") => break,
            Some(_) => {}
            None => panic!("Ann's socket closed"),
        }
    }
    ann.close().await;
    // The table stores Ann's leaving (an event): wait for it, so that both
    // reads below see the same game.
    let deadline = std::time::Instant::now() + WAIT;
    while api.table_info(&waiting).await["seats"][0]["connected"] != json!(false) {
        assert!(std::time::Instant::now() < deadline, "the table never saw Ann leave");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let open = api.table(&[1], json!({})).await;
    let ids = vec![finished, waiting, open, "nosuchgame".to_string()];
    let together = app.store.load_games_resuming(&ids).await.unwrap();
    assert_eq!(together.len(), ids.len());
    for (id, read) in ids.iter().zip(together) {
        let read = read.unwrap_or_else(|e| panic!("{id}: {e}"));
        let Some(mut alone) = app.store.load_game(id, i64::MAX).await.unwrap() else {
            assert!(read.is_none(), "{id} is no game");
            continue;
        };
        alone.events = app.store.events(id, (alone.game.hands - 1).max(0)).await.unwrap();
        let read = read.unwrap_or_else(|| panic!("{id} was not read"));
        assert!(!alone.inputs.is_empty() || id == &ids[2], "{id} has inputs");
        assert!(!alone.events.is_empty(), "{id} has events");
        assert_eq!(read.game, alone.game, "{id}: the row");
        assert_eq!(read.settings, alone.settings, "{id}: the settings");
        assert_eq!(read.seats, alone.seats, "{id}: the seats");
        assert_eq!(read.inputs, alone.inputs, "{id}: the inputs");
        assert_eq!(read.events, alone.events, "{id}: the events");
    }
    // The finished game's inputs and events are read from its blocks (one
    // per finished hand): with the rows the blocks hold gone from `inputs`
    // and `events`, the restart's read still has every input, and the same
    // events of the last two hands.
    let finished = &ids[0];
    let whole = app.store.load_game(finished, i64::MAX).await.unwrap().unwrap();
    let last_hand = whole.game.hands;
    // Postgres writes the blocks after the hand's own transaction: wait for
    // the last hand's.
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let hand: i64 = sqlx::query_scalar("SELECT COALESCE(MAX(last_hand), 0) FROM event_blocks WHERE game_id = $1")
            .bind(finished)
            .fetch_one(app.store.pool())
            .await
            .unwrap();
        if hand == last_hand {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "no block of hand {last_hand} (up to hand {hand})");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let last_two = app.store.load_games_resuming(std::slice::from_ref(finished)).await.unwrap().remove(0);
    let last_two = last_two.unwrap().unwrap().events;
    for (log, key, blocks, last) in
        [("inputs", "n", "input_blocks", "last_n"), ("events", "seq", "event_blocks", "last_seq")]
    {
        let (count, packed): (i64, i64) =
            sqlx::query_as(&format!("SELECT COUNT(*), COALESCE(MAX({last}), 0) FROM {blocks} WHERE game_id = $1"))
                .bind(finished)
                .fetch_one(app.store.pool())
                .await
                .unwrap();
        assert!(count >= 1 && packed > 0, "the finished game's {log} are in {count} blocks, up to {packed}");
        // (An SQLite store in several files reads each game table through
        // a view: the rows are deleted from the file that holds the game.)
        let files = app.store.files();
        let log = match files {
            1 => log.to_string(),
            _ => format!("{}.{log}", mahjong::store::parts::schema(mahjong::store::parts::part_of(finished, files))),
        };
        sqlx::query(&format!("DELETE FROM {log} WHERE game_id = $1 AND {key} <= $2"))
            .bind(finished)
            .bind(packed)
            .execute(app.store.pool())
            .await
            .unwrap();
    }
    let read = app.store.load_games_resuming(std::slice::from_ref(finished)).await.unwrap().remove(0);
    let read = read.unwrap().unwrap();
    assert_eq!(read.inputs, whole.inputs, "the inputs read from the blocks");
    assert_eq!(read.events, last_two, "the events read from the blocks");
    assert!(!read.events.is_empty());
    app.finish().await;
}
