//! The limits of docs/protocol.md ("Limits") through the real server, on
//! SQLite and Postgres, tried as an abuser would: quotas on tables, seats
//! and games of robots answered `429 quota_exceeded` with `Retry-After` and a
//! JSON body; idle tables expiring (and not coming back after a restart);
//! chat limited per seat and kept bounded; HTTP connections that send
//! nothing, half a head or a byte now and then closed, and capped per
//! address; WebSockets capped per address; a cookie's WebSocket from another
//! origin refused; seat tokens ending with their account's sessions; logins
//! that slow the guesser and not the owner; names that look like an
//! account's or a robot's refused; games of robots alone bounded in rounds,
//! in hands per hour and per day (a budget an admin changes), and in how
//! long they are stored unless kept; behind a trusted proxy, each client
//! counted by the address the proxy forwards, and nobody else believed.
//!
//! Clients come from several addresses of the loopback network (127.0.0.2
//! and up: Linux routes all of 127.0.0.0/8 to it).

use crate::common;

use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use common::app::{Api, TestApp, WAIT};
use common::db::TestDb;
use common::on_both_backends;
use mahjong::auth::AccountSettings;
use mahjong::limits::{Limits, Rate, RobotBudget};
use mahjong::protocol::ws::{ClientMessage, ServerMessage, StreamEvent, TableEvent, WsErrorCode};
use mahjong::server::Serving;
use mahjong::table::TableDefaults;
use mahjong_tools::client::{Answer, TableSocket, request_from};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const PASSWORD: &str = "correct horse battery";

on_both_backends!(
    quotas_answer_429_with_retry_after_and_a_json_body,
    idle_tables_expire_and_do_not_come_back_after_a_restart,
    chat_is_limited_per_seat_and_kept_bounded,
    silent_and_slow_connections_are_closed_and_capped_per_address,
    websockets_are_capped_per_address,
    a_cookies_websocket_from_another_origin_is_refused,
    seat_tokens_end_with_their_accounts_sessions,
    failed_logins_slow_the_guesser_not_the_owner,
    names_that_look_like_an_accounts_or_a_robots_are_refused,
    a_game_of_robots_alone_plays_a_bounded_number_of_rounds,
    robots_play_within_a_budget_of_hands_that_an_admin_sets,
    old_games_of_robots_alone_are_forgotten_unless_kept,
    behind_a_trusted_proxy_each_client_counts_by_its_own_address,
);

/// Address `n` of the loopback network.
fn local(n: u8) -> IpAddr {
    IpAddr::from([127, 0, 0, n])
}

/// A server with these limits (127.0.0.1 is not exempt).
async fn serve(backend: &str, limits: Limits) -> TestApp {
    TestApp::spawn_serving(backend, TableDefaults::default(), Serving { limits, ..Serving::default() }).await
}

/// A request from address `from`.
async fn ask(app: &TestApp, from: IpAddr, method: &str, path: &str, body: Option<Value>) -> Answer {
    ask_with(app, from, method, path, body, &[]).await
}

async fn ask_with(
    app: &TestApp,
    from: IpAddr,
    method: &str,
    path: &str,
    body: Option<Value>,
    headers: &[(&str, &str)],
) -> Answer {
    request_from(Some(from), app.addr, method, path, body.as_ref(), headers)
        .await
        .unwrap_or_else(|e| panic!("{method} {path} from {from}: {e}"))
}

fn code(a: &Answer) -> &str {
    a.body["error"]["code"].as_str().unwrap_or("")
}

/// A refusal `429 quota_exceeded` with `Retry-After` and the JSON body.
fn assert_quota(a: &Answer, what: &str) {
    assert_eq!((a.status, code(a)), (429, "quota_exceeded"), "{what}: {}", a.body);
    let message = a.body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains(what), "the message says what: {message}");
    let retry: u64 = a.header("retry-after").and_then(|v| v.parse().ok()).expect("a Retry-After header");
    assert!(retry >= 1, "Retry-After: {retry}");
}

/// Opens a table from `from`: its id (or the refusal).
async fn open(app: &TestApp, from: IpAddr, body: Value) -> Result<String, Answer> {
    let a = ask(app, from, "POST", "/api/v1/tables", Some(body)).await;
    match a.status {
        201 => Ok(a.body["id"].as_str().unwrap().to_string()),
        _ => Err(a),
    }
}

/// `name` sits at `table` from `from` (with these headers): the seat's token, or the refusal.
async fn sit(app: &TestApp, from: IpAddr, table: &str, name: &str, headers: &[(&str, &str)]) -> Result<String, Answer> {
    let body = if name.is_empty() { json!({}) } else { json!({ "name": name }) };
    let a = ask_with(app, from, "POST", &format!("/api/v1/tables/{table}/seats"), Some(body), headers).await;
    match a.status {
        201 => Ok(a.body["token"].as_str().unwrap().to_string()),
        _ => Err(a),
    }
}

async fn quotas_answer_429_with_retry_after_and_a_json_body(backend: &str) {
    let limits = Limits {
        tables_opened: Rate::new(3, Duration::from_secs(3600)),
        seats_taken: Rate::new(4, Duration::from_secs(3600)),
        waiting_tables: 3,
        seats: 3,
        robot_games: 1,
        ..Limits::default()
    };
    let app = serve(backend, limits).await;
    let (a, b, c) = (local(1), local(2), local(3));
    // Tables waiting to start: three, then refused; another address has its own.
    let t1 = open(&app, a, json!({})).await.unwrap();
    let t2 = open(&app, a, json!({})).await.unwrap();
    open(&app, a, json!({})).await.unwrap();
    assert_quota(&open(&app, a, json!({})).await.unwrap_err(), "tables opened and not started");
    assert!(open(&app, b, json!({})).await.is_ok(), "another address holds its own");
    // Seats: three at games not over, then refused; one left frees one.
    let mine = sit(&app, a, &t1, "Ann", &[]).await.unwrap();
    let bea = sit(&app, a, &t1, "Bea", &[]).await.unwrap();
    sit(&app, a, &t2, "Cy", &[]).await.unwrap();
    assert_quota(&sit(&app, a, &t2, "Dot", &[]).await.unwrap_err(), "seats held");
    let bearer = format!("Bearer {mine}");
    let left =
        ask_with(&app, a, "DELETE", &format!("/api/v1/tables/{t1}/seats"), None, &[("authorization", &bearer)]).await;
    assert_eq!(left.status, 204);
    sit(&app, a, &t2, "Dot", &[]).await.expect("a seat left is a seat free again");
    // Seats taken: four an hour here, however many are held.
    let bearer = format!("Bearer {bea}");
    let left =
        ask_with(&app, a, "DELETE", &format!("/api/v1/tables/{t1}/seats"), None, &[("authorization", &bearer)]).await;
    assert_eq!(left.status, 204);
    assert_quota(&sit(&app, a, &t1, "Bea", &[]).await.unwrap_err(), "too many seats taken");
    // An account holds its own, whatever its address.
    let session = app.api.register("Eve", PASSWORD).await;
    let bearer = format!("Bearer {session}");
    sit(&app, a, &t2, "", &[("authorization", &bearer)]).await.expect("the account's own seat");
    // Games of robots alone: one running (slowed so that it runs), then refused.
    let robots = json!({"robots": [{}, {}, {}, {}], "start": true, "pause_deciseconds": 50});
    let game = open(&app, c, robots.clone()).await.unwrap();
    assert_quota(&open(&app, c, robots.clone()).await.unwrap_err(), "games of robots alone");
    // Starting one by hand counts too.
    let quiet = open(&app, c, json!({"robots": [{}, {}, {}, {}], "pause_deciseconds": 50})).await.unwrap();
    let start = ask(&app, c, "POST", &format!("/api/v1/tables/{quiet}/start"), None).await;
    assert_quota(&start, "games of robots alone");
    // An admin closes the running game: its place is free again.
    let admin = app.admin_token().await;
    let closed = app.api.request("DELETE", &format!("/api/v1/tables/{game}"), None, Some(&admin)).await;
    assert_eq!(closed.status, 204, "{}", closed.body);
    let start = ask(&app, c, "POST", &format!("/api/v1/tables/{quiet}/start"), None).await;
    assert_eq!(start.status, 204, "{}", start.body);
    // Tables opened: three an hour here; a fourth is refused however few are held.
    let started = open(&app, b, json!({"robots": [{"seat": 1}, {"seat": 2}, {"seat": 3}]})).await.unwrap();
    let token = sit(&app, b, &started, "Fay", &[]).await.unwrap();
    let start = app.api.request("POST", &format!("/api/v1/tables/{started}/start"), None, Some(&token)).await;
    assert_eq!(start.status, 204, "{}", start.body);
    open(&app, b, json!({"name": "third"})).await.expect("b's third table");
    let refused = open(&app, b, json!({"name": "fourth"})).await.unwrap_err();
    assert_quota(&refused, "too many tables opened");
    let retry: u64 = refused.header("retry-after").unwrap().parse().unwrap();
    assert!(retry > 60, "the next table is an hour's share away: {retry}");
    // Nothing refused was opened.
    let tables = app.api.get("/api/v1/tables").await["tables"].as_array().unwrap().len();
    assert_eq!(tables, 7, "a's three, b's three, c's one (the closed one is gone)");
    app.finish().await;
}

/// A server of its own over `db`, stopped by dropping the sender.
async fn serve_until(
    db: &TestDb,
    limits: Limits,
) -> (Api, tokio::sync::oneshot::Sender<()>, tokio::task::JoinHandle<()>) {
    let store = mahjong::store::Store::open(&db.url).await.expect("the store");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = Serving { limits, ..Serving::default() };
    let server = tokio::spawn(async move {
        let shutdown = async move {
            let _ = stopped.await;
        };
        let config = mahjong::server::ServerConfig { serving, ..mahjong::server::ServerConfig::new(listener, store) };
        let _ = common::app::serve(config, shutdown).await;
    });
    (Api::at(addr), stop, server)
}

/// Reads a socket's messages until `wanted` picks one out.
async fn until<T>(socket: &mut TableSocket, mut wanted: impl FnMut(&ServerMessage) -> Option<T>) -> T {
    loop {
        let (message, _) = socket.next(WAIT).await.expect("a message in time").expect("the socket is open");
        if let Some(found) = wanted(&message) {
            return found;
        }
    }
}

fn closed_reason(m: &ServerMessage) -> Option<String> {
    match m {
        ServerMessage::Event { event: StreamEvent::Table(TableEvent::Closed { reason }), .. } => Some(reason.clone()),
        _ => None,
    }
}

async fn idle_tables_expire_and_do_not_come_back_after_a_restart(backend: &str) {
    let db = TestDb::new(backend).await;
    let limits = Limits {
        idle_open_table: Duration::from_secs(1),
        idle_game: Duration::from_secs(2),
        exempt: common::app::exempt_loopback().exempt,
        ..Limits::default()
    };
    let (api, stop, server) = serve_until(&db, limits.clone()).await;
    // A table nobody came to, watched by a spectator: it closes, and says why.
    let empty = api.create_table(json!({"name": "empty"})).await;
    let mut watcher = TableSocket::connect(api.addr, &empty, None, None).await.unwrap();
    let reason = until(&mut watcher, closed_reason).await;
    assert!(reason.contains("nobody has been at this table"), "{reason}");
    assert_eq!(watcher.close_code(WAIT).await.unwrap(), Some(1000), "closed for good, not dropped");
    assert_eq!(api.ask(&format!("/api/v1/tables/{empty}"), None).await.status, 404);
    // A game whose only person never came: it ends as it stands.
    let game = api.table(&[1, 2, 3], json!({})).await;
    let token = api.sit(&game, "Ann", 0).await;
    api.start(&game, Some(&token)).await;
    let mut watcher = TableSocket::connect(api.addr, &game, None, None).await.unwrap();
    let reason = until(&mut watcher, closed_reason).await;
    assert!(reason.contains("nobody has been at this game"), "{reason}");
    // A table with its person connected does not expire.
    let kept = api.table(&[1, 2, 3], json!({})).await;
    let token = api.sit(&kept, "Bea", 0).await;
    let mut bea = TableSocket::connect(api.addr, &kept, Some(&token), None).await.unwrap();
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(api.table_info(&kept).await["state"], "open");
    bea.send(&ClientMessage::Ping).await.unwrap();
    drop(bea);
    let _ = stop.send(());
    server.await.unwrap();
    let (api, stop, server) = serve_until(&db, limits).await;
    let ready = async {
        while api.ask("/readyz", None).await.status != 200 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(WAIT, ready).await.expect("ready after the restart");
    let tables = api.get("/api/v1/tables").await;
    let listed = |id: &str| tables["tables"].as_array().unwrap().iter().find(|t| t["id"] == id).cloned();
    assert!(listed(&empty).is_none(), "an expired table stays gone: {tables}");
    // An expired game is not played again: over, it shows as finished for a
    // while, as any game does that ended just before a restart.
    assert!(listed(&game).is_none_or(|t| t["state"] == "over"), "{tables}");
    let games = api.get("/api/v1/games?state=over").await;
    assert!(games.to_string().contains(&game), "the expired game is stored, over: {games}");
    let _ = stop.send(());
    server.await.unwrap();
    db.remove().await;
}

async fn chat_is_limited_per_seat_and_kept_bounded(backend: &str) {
    let limits = Limits { chat_kept: 5, exempt: common::app::exempt_loopback().exempt, ..Limits::default() };
    let app = serve(backend, limits).await;
    let api = app.api;
    let table = api.table(&[2, 3], json!({})).await;
    let flooder = api.sit(&table, "Flo", 0).await;
    let other = api.sit(&table, "Ori", 1).await;
    let mut flo = TableSocket::connect(app.addr, &table, Some(&flooder), None).await.unwrap();
    let mut ori = TableSocket::connect(app.addr, &table, Some(&other), None).await.unwrap();
    // The flood: 2,000 chats as fast as they go; the other player pings meanwhile.
    let sent = 2_000;
    let flood = tokio::spawn(async move {
        for i in 0..sent {
            flo.send(&ClientMessage::Chat { text: format!("{i} {}", "x".repeat(400)) }).await.unwrap();
        }
        flo
    });
    let mut pings = Vec::new();
    while !flood.is_finished() || pings.len() < 20 {
        let at = Instant::now();
        ori.send(&ClientMessage::Ping).await.unwrap();
        until(&mut ori, |m| matches!(m, ServerMessage::Pong).then_some(())).await;
        pings.push(at.elapsed());
        if pings.len() >= 200 {
            break;
        }
    }
    let mut flo = flood.await.unwrap();
    drop(ori);
    pings.sort();
    eprintln!(
        "{backend}: the other player's ping during a flood of {sent} chats: median {:?}, max {:?} ({} pings)",
        pings[pings.len() / 2],
        pings[pings.len() - 1],
        pings.len()
    );
    // The flooder was refused, with the specific code, all but its burst.
    let mut refused = 0;
    let mut heard = 0;
    while refused + heard < sent {
        match flo.next(WAIT).await.unwrap().unwrap().0 {
            ServerMessage::Error { code: WsErrorCode::RateLimited, message } => {
                assert!(message.contains("try again in"), "{message}");
                refused += 1;
            }
            ServerMessage::Event { event: StreamEvent::Table(TableEvent::Chat { .. }), .. } => heard += 1,
            _ => {}
        }
    }
    assert!((10..=20).contains(&heard), "the burst of 10 and what 2 s earn: {heard} chats went through");
    // What is stored is what went through.
    let stored = app.store.events(&table, 0).await.unwrap();
    let chats = stored.iter().filter(|e| e.body.contains(r#""type":"chat""#)).count();
    assert_eq!(chats, heard);
    // Memory keeps the last 5 chats: a client resuming from before them gets a snapshot.
    assert!(chats > 5, "more chats than a table keeps in memory: {chats}");
    let first = stored.first().map_or(0, |e| e.seq as u64);
    let mut late = TableSocket::connect(app.addr, &table, None, Some(first)).await.unwrap();
    let (m, _) = late.next(WAIT).await.unwrap().unwrap();
    assert!(matches!(m, ServerMessage::Snapshot { .. }), "a position before the chats kept needs a snapshot: {m:?}");
    let last_but_two = stored[stored.len() - 3].seq as u64;
    let mut recent = TableSocket::connect(app.addr, &table, None, Some(last_but_two)).await.unwrap();
    let (m, _) = recent.next(WAIT).await.unwrap().unwrap();
    assert!(matches!(m, ServerMessage::Event { .. }), "a recent position resumes: {m:?}");
    app.finish().await;
}

/// Whether the server has closed a socket (it reads end of file, or a reset).
async fn closed_by_server(socket: &mut TcpStream, within: Duration) -> bool {
    let mut buffer = [0u8; 4096];
    let deadline = Instant::now() + within;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, socket.read(&mut buffer)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return true,
            Ok(Ok(_)) => continue, // an answer (408, say): read on to the close
            Err(_) => return false,
        }
    }
}

async fn silent_and_slow_connections_are_closed_and_capped_per_address(backend: &str) {
    let limits = Limits { header_timeout: Duration::from_secs(2), connections_per_address: 400, ..Limits::default() };
    let app = serve(backend, limits).await;
    // 300 sockets sending nothing, 20 half a head, 5 a byte every 500 ms.
    let mut silent = Vec::new();
    for _ in 0..300 {
        silent.push(TcpStream::connect(app.addr).await.unwrap());
    }
    let mut half = Vec::new();
    for _ in 0..20 {
        let mut s = TcpStream::connect(app.addr).await.unwrap();
        s.write_all(b"GET /api/v1/tables HTTP/1.1\r\nHost: x\r\n").await.unwrap();
        half.push(s);
    }
    let dribbling: Vec<_> = (0..5)
        .map(|_| {
            let addr = app.addr;
            tokio::spawn(async move {
                let mut s = TcpStream::connect(addr).await.unwrap();
                let started = Instant::now();
                for byte in b"GET /api/v1/tables HTTP/1.1\r\nHost: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\r\n" {
                    if s.write_all(&[*byte]).await.is_err() {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
                (closed_by_server(&mut s, Duration::from_secs(5)).await, started.elapsed())
            })
        })
        .collect();
    for s in silent.iter_mut().chain(half.iter_mut()) {
        assert!(closed_by_server(s, Duration::from_secs(20)).await, "an idle socket was left open");
    }
    for d in dribbling {
        let (closed, after) = d.await.unwrap();
        assert!(closed && after < Duration::from_secs(15), "a dribbling socket was closed after {after:?}");
    }
    // A kept-alive connection left idle after its answer is closed too.
    let mut kept = TcpStream::connect(app.addr).await.unwrap();
    kept.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n").await.unwrap();
    assert!(closed_by_server(&mut kept, Duration::from_secs(20)).await, "an idle kept-alive socket was left open");
    // The server answers all the while.
    assert_eq!(app.api.ask("/healthz", None).await.status, 200);
    app.finish().await;

    // At most so many connections from one address: the next is answered 429 and closed.
    let limits = Limits { connections_per_address: 10, ..Limits::default() };
    let app = serve(backend, limits).await;
    let mut held = Vec::new();
    for _ in 0..10 {
        held.push(TcpStream::connect(app.addr).await.unwrap());
    }
    // Answered once the server has seen the ten.
    let mut refused = TcpStream::connect(app.addr).await.unwrap();
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(WAIT, refused.read_to_end(&mut answer)).await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 429"), "{answer}");
    assert!(answer.contains("retry-after: ") && answer.contains(r#""code":"quota_exceeded""#), "{answer}");
    let elsewhere = request_from(Some(local(2)), app.addr, "GET", "/healthz", None, &[]).await.unwrap();
    assert_eq!(elsewhere.status, 200, "another address is served");
    drop(held);
    let again = async {
        loop {
            match request_from(None, app.addr, "GET", "/healthz", None, &[]).await {
                Ok(a) if a.status == 200 => return,
                _ => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        }
    };
    tokio::time::timeout(WAIT, again).await.expect("served again once the address's sockets closed");
    app.finish().await;
}

async fn websockets_are_capped_per_address(backend: &str) {
    // Opened too fast: three a minute here.
    let limits = Limits { connections_opened: Rate::new(3, Duration::from_secs(60)), ..Limits::default() };
    let app = serve(backend, limits).await;
    let table = open(&app, local(1), json!({})).await.unwrap();
    for _ in 0..3 {
        TableSocket::connect(app.addr, &table, None, None).await.expect("a spectator").close().await;
    }
    let error =
        TableSocket::connect(app.addr, &table, None, None).await.err().expect("a fourth in a minute").to_string();
    assert!(error.contains("429"), "{error}");
    app.finish().await;

    let app = serve(backend, Limits { websockets_per_address: 3, ..Limits::default() }).await;
    let table = open(&app, local(1), json!({})).await.unwrap();
    let mut sockets = Vec::new();
    for _ in 0..3 {
        sockets.push(TableSocket::connect(app.addr, &table, None, None).await.expect("a spectator"));
    }
    let refused = TableSocket::connect(app.addr, &table, None, None).await;
    let error = refused.err().expect("a fourth WebSocket from the address is refused").to_string();
    assert!(error.contains("429"), "{error}");
    sockets.pop().unwrap().close().await;
    let again = async {
        loop {
            match TableSocket::connect(app.addr, &table, None, None).await {
                Ok(s) => return s,
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        }
    };
    tokio::time::timeout(WAIT, again).await.expect("one closed makes room for one");
    app.finish().await;
}

async fn a_cookies_websocket_from_another_origin_is_refused(backend: &str) {
    let app = TestApp::spawn(backend, TableDefaults::default()).await;
    let api = app.api;
    let session = api.register("Gus", PASSWORD).await;
    let table = api.table(&[1, 2, 3], json!({})).await;
    let bearer = format!("Bearer {session}");
    let path = format!("/api/v1/tables/{table}/seats");
    let sat = api.request_with("POST", &path, Some(&json!({})), &[("authorization", &bearer)]).await;
    assert_eq!(sat.status, 201);
    let cookie = format!("mj_session={session}");
    let ours = format!("http://{}", app.addr);
    let foreign = [("cookie", cookie.as_str()), ("origin", "http://evil.example")];
    let e = TableSocket::connect_with(app.addr, &table, None, None, &foreign).await.err().expect("refused");
    assert!(e.to_string().contains("403"), "{e}");
    let own = [("cookie", cookie.as_str()), ("origin", ours.as_str())];
    let mut socket = TableSocket::connect_with(app.addr, &table, None, None, &own).await.expect("our own page");
    let (m, _) = socket.next(WAIT).await.unwrap().unwrap();
    assert!(matches!(m, ServerMessage::Snapshot { seat: Some(0), .. }), "the account's seat: {m:?}");
    // The header, not the cookie: no page of another site can send it.
    let header = [("authorization", bearer.as_str()), ("origin", "http://evil.example")];
    assert!(TableSocket::connect_with(app.addr, &table, None, None, &header).await.is_ok());
    // A spectator carries no credential: any origin may watch.
    assert!(
        TableSocket::connect_with(app.addr, &table, None, None, &[("origin", "http://evil.example")]).await.is_ok()
    );
    app.finish().await;
}

/// Whether a seat token still opens its seat's WebSocket.
async fn token_opens(addr: SocketAddr, table: &str, token: &str) -> bool {
    TableSocket::connect(addr, table, Some(token), None).await.is_ok()
}

/// Waits until a seat token no longer opens its seat (the tables hear of
/// ended sessions a moment after they end).
async fn until_refused(addr: SocketAddr, table: &str, token: &str) {
    let refused = async {
        while token_opens(addr, table, token).await {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(WAIT, refused).await.expect("the seat token ended with the session");
}

async fn seat_tokens_end_with_their_accounts_sessions(backend: &str) {
    let app = TestApp::spawn(backend, TableDefaults::default()).await;
    let api = app.api;
    let seat_token = |session: String, table: String| async move {
        let bearer = format!("Bearer {session}");
        let path = format!("/api/v1/tables/{table}/seats");
        let a = api.request_with("POST", &path, Some(&json!({})), &[("authorization", &bearer)]).await;
        assert_eq!(a.status, 201, "{}", a.body);
        a.body["token"].as_str().unwrap().to_string()
    };
    // Logged out everywhere: the seat token taken with the session ends; the
    // seat stays the account's, played with a new session.
    let first = api.register("Hal", PASSWORD).await;
    let table = api.table(&[1, 2, 3], json!({})).await;
    let token = seat_token(first.clone(), table.clone()).await;
    assert!(token_opens(app.addr, &table, &token).await);
    let a = api.request("POST", "/api/v1/auth/logout-everywhere", None, Some(&first)).await;
    assert_eq!(a.status, 200, "{}", a.body);
    until_refused(app.addr, &table, &token).await;
    let again = api.login("Hal", PASSWORD).await;
    let bearer = format!("Bearer {again}");
    let mut socket =
        TableSocket::connect_with(app.addr, &table, None, None, &[("authorization", &bearer)]).await.unwrap();
    let (m, _) = socket.next(WAIT).await.unwrap().unwrap();
    assert!(matches!(m, ServerMessage::Snapshot { seat: Some(0), .. }), "{m:?}");
    socket.close().await;
    // A password change: seat tokens of the other sessions end, the changer's lives.
    let phone = api.login("Hal", PASSWORD).await;
    let other_table = api.table(&[2, 3], json!({})).await;
    let phones = seat_token(phone.clone(), other_table.clone()).await;
    let laptops = seat_token(again.clone(), api.table(&[1, 2, 3], json!({})).await).await;
    let change = json!({"current": PASSWORD, "new": "a brand new password"});
    let a = api.request("POST", "/api/v1/auth/password", Some(&change), Some(&again)).await;
    assert_eq!(a.status, 204, "{}", a.body);
    until_refused(app.addr, &other_table, &phones).await;
    let tables: Vec<Value> = api.get("/api/v1/tables").await["tables"].as_array().unwrap().clone();
    let laptop_table = tables.iter().map(|t| t["id"].as_str().unwrap()).find(|id| *id != table && *id != other_table);
    assert!(token_opens(app.addr, laptop_table.unwrap(), &laptops).await, "the changer's own seat token lives");
    // Disabled by an admin: every seat token of the account ends.
    let admin = app.admin_token().await;
    let hal = api.ask("/api/v1/me", Some(&again)).await.body["user"]["id"].as_i64().unwrap();
    let disable = json!({"disabled": true});
    let a = api.request("PATCH", &format!("/api/v1/admin/users/{hal}"), Some(&disable), Some(&admin)).await;
    assert_eq!(a.status, 200);
    until_refused(app.addr, laptop_table.unwrap(), &laptops).await;
    // A guest's token is its own.
    let guest = api.sit(&other_table, "Ida", 1).await;
    assert!(token_opens(app.addr, &other_table, &guest).await);
    app.finish().await;
}

async fn failed_logins_slow_the_guesser_not_the_owner(backend: &str) {
    let accounts = AccountSettings {
        per_address: Rate::new(1000, Duration::from_millis(1)),
        per_address_and_name: Rate::new(3, Duration::from_secs(3600)),
        per_name: Rate::new(10, Duration::from_secs(3600)),
        ..AccountSettings::default()
    };
    let app =
        TestApp::spawn_serving(backend, TableDefaults::default(), Serving { accounts, ..Serving::default() }).await;
    let login = |from: IpAddr, password: &'static str| {
        let app = &app;
        async move { ask(app, from, "POST", "/api/v1/auth/login", Some(json!({"name": "Jo", "password": password}))).await }
    };
    app.api.register("Jo", PASSWORD).await;
    // One address guessing: three tries, then it waits, with Retry-After.
    for _ in 0..3 {
        assert_eq!(login(local(2), "guess").await.status, 401);
    }
    let a = login(local(2), PASSWORD).await;
    assert_eq!((a.status, code(&a)), (429, "too_many_requests"), "{}", a.body);
    assert!(a.header("retry-after").is_some());
    // The owner, elsewhere, logs in at once.
    assert_eq!(login(local(1), PASSWORD).await.status, 200, "the owner is not locked out");
    // Many addresses guessing: the name is under attack (ten failures); an
    // address that has failed once waits, a fresh one (the owner's) may try.
    for n in 10..17 {
        assert_eq!(login(local(n), "guess").await.status, 401);
    }
    let a = login(local(10), "guess").await;
    assert_eq!((a.status, code(&a)), (429, "too_many_requests"), "an address that failed waits: {}", a.body);
    assert_eq!(login(local(1), PASSWORD).await.status, 200, "the owner still logs in");
    assert_eq!(login(local(40), "guess").await.status, 401, "a fresh address gets one try");
    assert_eq!(login(local(40), "guess").await.status, 429, "and only one");
    // The owner's password change is not limited by the name's failed logins.
    let session = app.api.login("Jo", PASSWORD).await;
    let change = json!({"current": PASSWORD, "new": "another good password"});
    let a = app.api.request("POST", "/api/v1/auth/password", Some(&change), Some(&session)).await;
    assert_eq!(a.status, 204, "{}", a.body);
    // A disabled account answers as a wrong password does.
    let admin = app.admin_token().await;
    app.api.register("Kit", PASSWORD).await;
    let kit = app.api.login("Kit", PASSWORD).await;
    let id = app.api.ask("/api/v1/me", Some(&kit)).await.body["user"]["id"].as_i64().unwrap();
    let disable = json!({"disabled": true});
    let a = app.api.request("PATCH", &format!("/api/v1/admin/users/{id}"), Some(&disable), Some(&admin)).await;
    assert_eq!(a.status, 200);
    let right =
        ask(&app, local(50), "POST", "/api/v1/auth/login", Some(json!({"name": "Kit", "password": PASSWORD}))).await;
    let wrong =
        ask(&app, local(51), "POST", "/api/v1/auth/login", Some(json!({"name": "Kit", "password": "nope"}))).await;
    assert_eq!((right.status, &right.body), (wrong.status, &wrong.body), "the same answer");
    assert_eq!(code(&right), "wrong_credentials");
    app.finish().await;
}

async fn names_that_look_like_an_accounts_or_a_robots_are_refused(backend: &str) {
    let accounts = AccountSettings { registrations: Rate::new(100, Duration::from_secs(1)), ..Default::default() };
    let serving = Serving { accounts, limits: common::app::exempt_loopback(), ..Serving::default() };
    let app = TestApp::spawn_serving(backend, TableDefaults::default(), serving).await;
    let api = app.api;
    api.register("alice", PASSWORD).await;
    api.register("root", PASSWORD).await;
    for twin in ["\u{430}lice", "\u{FF41}lice", "al\u{200B}ice", "ALICE ", "r\u{43E}\u{43E}t", "r00t"] {
        let body = json!({"name": twin, "password": PASSWORD});
        let a = api.request("POST", "/api/v1/auth/register", Some(&body), None).await;
        assert!(a.status == 409, "{twin:?}: {} {}", a.status, a.body);
        assert!(["name_taken", "name_confusable"].contains(&code(&a)), "{twin:?}: {}", a.body);
    }
    let table = api.table(&[], json!({})).await;
    let path = format!("/api/v1/tables/{table}/seats");
    for (name, expected) in [
        ("\u{430}lice", "name_confusable"),
        ("al\u{200B}ice", "name_confusable"),
        ("Robot 2", "name_confusable"),
        ("R\u{43E}bot", "name_confusable"),
        ("alice", "name_registered"),
    ] {
        let a = api.request("POST", &path, Some(&json!({ "name": name })), None).await;
        assert_eq!(code(&a), expected, "{name:?}: {} {}", a.status, a.body);
    }
    api.sit(&table, "Zed", 0).await;
    let a = api.request("POST", &path, Some(&json!({"name": "Z\u{435}d"})), None).await;
    assert_eq!((a.status, code(&a)), (400, "bad_request"), "a twin of a seated name: {}", a.body);
    assert!(a.body["error"]["message"].as_str().unwrap().contains("looks like"), "{}", a.body);
    let body = json!({"name": "Robot 3", "password": PASSWORD});
    let a = api.request("POST", "/api/v1/auth/register", Some(&body), None).await;
    assert_eq!(code(&a), "name_confusable");
    app.finish().await;
}

/// A game of four robots plays at most `--max-robot-game-rounds` rounds
/// (4 by default), started at once or later: nobody plays it, and it costs
/// the store all the same.
async fn a_game_of_robots_alone_plays_a_bounded_number_of_rounds(backend: &str) {
    let app = serve(backend, Limits { robot_game_rounds: 2, ..Limits::default() }).await;
    let robots = json!([{}, {}, {}, {}]);
    let long = open(&app, local(1), json!({"robots": robots, "start": true, "options": {"NumRounds": 4}}))
        .await
        .expect_err("four rounds of robots alone");
    assert_eq!(long.status, 400, "{}", long.body);
    assert!(long.body["error"]["message"].as_str().unwrap().contains("at most 2 rounds"), "{}", long.body);
    open(&app, local(1), json!({"robots": robots, "start": true, "options": {"NumRounds": 2}})).await.unwrap();
    // Opened first, started after: the same bound.
    let waiting = open(&app, local(1), json!({"robots": robots, "options": {"NumRounds": 4}})).await.unwrap();
    let start = ask(&app, local(1), "POST", &format!("/api/v1/tables/{waiting}/start"), None).await;
    assert_eq!(start.status, 400, "{}", start.body);
    assert_eq!(app.api.table_info(&waiting).await["state"], "open", "nothing changed");
    // A table with a person at it plays as long as it likes.
    let people = open(&app, local(1), json!({"robots": [{}, {}, {}], "options": {"NumRounds": 4}})).await.unwrap();
    assert!(sit(&app, local(1), &people, "Pat", &[]).await.is_ok());
    app.finish().await;
}

/// A budget of `hands_per_hour`, 50 a day, games kept for `kept_for`.
fn budget(hands_per_hour: u32, kept_for: Duration) -> Limits {
    let robot_budget = RobotBudget { hands_per_hour, hands_per_day: 50, kept_for };
    Limits { robot_budget, robot_games: 4, ..Limits::default() }
}

/// The robot-only games of one player are dealt at most its budget of
/// hands: the hand that finds it spent is the game's last, and the next
/// game is refused `429` with when to come back, started at once or later;
/// another player has its own. An admin sees the budget and changes it,
/// in force at once (what was spent counts under the new budget); a bad
/// budget is refused and changes nothing; every change is in the audit log.
async fn robots_play_within_a_budget_of_hands_that_an_admin_sets(backend: &str) {
    let app = serve(backend, budget(3, Duration::from_secs(3600))).await;
    let robots = json!([{}, {}, {}, {}]);
    let two_rounds = json!({"robots": robots, "start": true, "options": {"NumRounds": 2}});
    let game = open(&app, local(1), two_rounds.clone()).await.unwrap();
    app.api.wait_over(&game).await;
    let played = app.api.get(&format!("/api/v1/games/{game}")).await;
    assert_eq!(played["hands"], 4, "three hands paid for, then one found over the budget and played: {played}");
    let refused = open(&app, local(1), two_rounds.clone()).await.unwrap_err();
    assert_quota(&refused, "budget of hands of robots alone");
    let retry: u64 = refused.header("retry-after").unwrap().parse().unwrap();
    assert!((1100..=1200).contains(&retry), "a hand drains from a budget of 3 an hour in 1,200 s: {retry} s");
    // Opened first and started after: the same budget.
    let waiting = open(&app, local(1), json!({"robots": robots, "options": {"NumRounds": 1}})).await.unwrap();
    let start = ask(&app, local(1), "POST", &format!("/api/v1/tables/{waiting}/start"), None).await;
    assert_quota(&start, "budget of hands of robots alone");
    assert_eq!(app.api.table_info(&waiting).await["state"], "open", "nothing changed");
    // Another address has a budget of its own.
    let other = open(&app, local(2), two_rounds.clone()).await.unwrap();

    // The admin's view, and changes.
    let admin = app.admin_token().await;
    let player = app.api.register("Robin", PASSWORD).await;
    let path = "/api/v1/admin/robot-budget";
    let seen = app.api.request("GET", path, None, Some(&admin)).await;
    assert_eq!(seen.status, 200, "{}", seen.body);
    assert_eq!(
        (&seen.body["hands_per_hour"], &seen.body["hands_per_day"], &seen.body["kept_for_s"], &seen.body["source"]),
        (&json!(3), &json!(50), &json!(3600), &json!("flags"))
    );
    assert_eq!(app.api.request("GET", path, None, Some(&player)).await.status, 403, "admins only");
    assert_eq!(app.api.request("GET", path, None, None).await.status, 401);
    for bad in [
        json!({"hands_per_hour": -1, "hands_per_day": 10, "kept_for_s": 60}),
        json!({"hands_per_hour": 10, "hands_per_day": 10, "kept_for_s": 0}),
        json!({"hands_per_hour": 10, "hands_per_day": 2_000_000, "kept_for_s": 60}),
        json!({"hands_per_hour": 10, "hands_per_day": 10}),
        json!({"hands_per_hour": 10, "hands_per_day": 10, "kept_for_s": 60, "hands_per_week": 9}),
        json!("10 an hour"),
    ] {
        let a = app.api.request("PUT", path, Some(&bad), Some(&admin)).await;
        assert_eq!((a.status, code(&a)), (400, "bad_request"), "{bad}: {}", a.body);
    }
    let wanted = json!({"hands_per_hour": 100, "hands_per_day": 100, "kept_for_s": 7200});
    assert_eq!(app.api.request("PUT", path, Some(&wanted), Some(&player)).await.status, 403);
    assert_eq!(app.api.request("GET", path, None, Some(&admin)).await.body, seen.body, "nothing changed");
    let set = app.api.request("PUT", path, Some(&wanted), Some(&admin)).await;
    assert_eq!(set.status, 200, "{}", set.body);
    assert_eq!((&set.body["hands_per_hour"], &set.body["source"]), (&json!(100), &json!("admin")));
    assert_eq!(set.body["updated_by"]["name"], "admin", "{}", set.body);
    // In force at once: the four hands spent fit in a budget of 100.
    let start = ask(&app, local(1), "POST", &format!("/api/v1/tables/{waiting}/start"), None).await;
    assert_eq!(start.status, 204, "{}", start.body);
    let audit = app.api.request("GET", "/api/v1/admin/audit?target=robot_budget", None, Some(&admin)).await;
    let entry = &audit.body["entries"][0];
    assert_eq!((&entry["action"], &entry["after"]["hands_per_hour"]), (&json!("robot_budget.set"), &json!(100)));
    assert_eq!(entry["before"]["hands_per_hour"], 3, "{entry}");
    // Back to the flags'.
    let reset = app.api.request("DELETE", path, None, Some(&admin)).await;
    assert_eq!((&reset.body["hands_per_hour"], &reset.body["source"]), (&json!(3), &json!("flags")));
    assert_eq!(open(&app, local(1), two_rounds).await.unwrap_err().status, 429);
    for table in [&waiting, &other] {
        app.api.wait_over(table).await;
    }
    app.finish().await;
}

/// A stored game of robots alone that has not changed for the budget's
/// time is forgotten, everything of it, unless a player keeps it; a game
/// a person sat in stays, however old.
async fn old_games_of_robots_alone_are_forgotten_unless_kept(backend: &str) {
    let app = serve(backend, budget(1000, Duration::from_secs(2))).await;
    let admin = app.admin_token().await;
    let player = app.api.register("Robin", PASSWORD).await;
    let robots = json!([{}, {}, {}, {}]);
    let one_round = json!({"robots": robots, "start": true, "options": {"NumRounds": 1}});
    let (old, kept) =
        (open(&app, local(1), one_round.clone()).await.unwrap(), open(&app, local(1), one_round).await.unwrap());
    let people = open(&app, local(1), json!({"robots": [{}, {}, {}]})).await.unwrap();
    sit(&app, local(1), &people, "Pat", &[]).await.unwrap();
    let api = app.api;
    let keep = |table: &str, token: Option<&str>| {
        let (path, token) = (format!("/api/v1/games/{table}/kept"), token.map(str::to_string));
        async move { api.request("PUT", &path, None, token.as_deref()).await }
    };
    assert_eq!(keep(&kept, None).await.status, 401, "a player keeps a game");
    assert_eq!(keep("0123456789abcdef0123456789abcdef", Some(&player)).await.status, 404);
    let kept_view = keep(&kept, Some(&player)).await;
    assert_eq!(kept_view.status, 200, "{}", kept_view.body);
    assert_eq!((&kept_view.body["robots_alone"], &kept_view.body["kept_by"]["name"]), (&json!(true), &json!("Robin")));
    assert_eq!(keep(&kept, Some(&admin)).await.body["kept_by"]["name"], "Robin", "kept once, by its first keeper");
    assert_eq!(keep(&people, Some(&player)).await.body["robots_alone"], false);
    for table in [&old, &kept] {
        app.api.wait_over(table).await;
    }
    // The tables close (a finished one otherwise lingers a while for its
    // watchers): only what is stored is left.
    for table in [&old, &kept, &people] {
        let closed = app.api.request("DELETE", &format!("/api/v1/tables/{table}"), None, Some(&admin)).await;
        assert_eq!(closed.status, 204, "{}", closed.body);
    }
    assert_eq!(app.api.ask(&format!("/api/v1/games/{old}/hands"), None).await.status, 200);
    let started = Instant::now();
    while app.api.ask(&format!("/api/v1/games/{old}"), None).await.status != 404 {
        assert!(started.elapsed() < WAIT, "the old game of robots alone is still stored");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(app.api.ask(&format!("/api/v1/games/{old}/hands"), None).await.status, 404, "nor its hands");
    let listed = app.api.get("/api/v1/games?limit=100").await;
    let ids: Vec<&str> = listed["games"].as_array().unwrap().iter().filter_map(|g| g["id"].as_str()).collect();
    assert!(!ids.contains(&old.as_str()) && ids.contains(&kept.as_str()), "{ids:?}");
    assert!(ids.contains(&people.as_str()), "a game a person sat in stays: {ids:?}");
    let hands = app.api.get(&format!("/api/v1/games/{kept}/hands")).await;
    assert!(!hands["hands"].as_array().unwrap().is_empty(), "the kept game keeps its hands: {hands}");
    app.finish().await;
}

/// Behind a trusted proxy (127.0.0.1 here) every client counts by the
/// address the proxy forwards, the right-most one it appended, whatever the
/// client wrote itself; the proxy's own connections are not capped per
/// address. A client that is no trusted proxy names no address.
async fn behind_a_trusted_proxy_each_client_counts_by_its_own_address(backend: &str) {
    use mahjong::http::forwarded::{AddressHeader, TrustedProxies};
    let limits = Limits { waiting_tables: 2, connections_per_address: 2, ..Limits::default() };
    let trusted_proxies = TrustedProxies::new(vec!["127.0.0.1/32".parse().unwrap()], AddressHeader::XForwardedFor);
    let serving = Serving { limits, trusted_proxies, ..Serving::default() };
    let app = TestApp::spawn_serving(backend, TableDefaults::default(), serving).await;
    let (proxy, stranger) = (local(1), local(2));
    let open_as = async |from: IpAddr, forwarded: &str| {
        ask_with(&app, from, "POST", "/api/v1/tables", Some(json!({})), &[("x-forwarded-for", forwarded)]).await
    };
    let waiting = "tables opened and not started yet";
    for _ in 0..2 {
        assert_eq!(open_as(proxy, "198.51.100.7").await.status, 201);
    }
    assert_quota(&open_as(proxy, "198.51.100.7").await, waiting);
    assert_quota(&open_as(proxy, "203.0.113.1, 198.51.100.7").await, waiting);
    let refused = open_as(proxy, "198.51.100.7").await;
    assert!(refused.body["error"]["message"].as_str().unwrap().contains("your address has 2"), "{}", refused.body);
    assert_eq!(open_as(proxy, "198.51.100.8").await.status, 201, "another client behind the proxy");
    assert_eq!(open_as(proxy, "198.51.100.8, 127.0.0.1").await.status, 201, "past the proxy's own hop");
    for n in 0..2 {
        assert_eq!(open_as(stranger, &format!("203.0.113.{n}")).await.status, 201);
    }
    // The stranger is counted by its own connections too (two at most): the
    // server lets each of its connections go a moment after the answer has
    // been read, and a connection refused changes nothing, so it tries again.
    let mut third = open_as(stranger, "203.0.113.50").await;
    for _ in 0..100 {
        if code(&third) != "quota_exceeded" || !third.body.to_string().contains("open connections") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        third = open_as(stranger, "203.0.113.50").await;
    }
    assert_quota(&third, waiting);

    // The proxy holds more connections than one address may.
    let mut held = Vec::new();
    for _ in 0..4 {
        held.push(TcpStream::connect(app.addr).await.unwrap());
    }
    let answer = request_from(Some(proxy), app.addr, "GET", "/healthz", None, &[]).await.unwrap();
    assert_eq!(answer.status, 200, "{}", answer.body);
    let mut strangers = Vec::new();
    for _ in 0..2 {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind(SocketAddr::new(stranger, 0)).unwrap();
        strangers.push(socket.connect(app.addr).await.unwrap());
    }
    let mut answer = Vec::new();
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(SocketAddr::new(stranger, 0)).unwrap();
    let mut refused = socket.connect(app.addr).await.unwrap();
    let _ = tokio::time::timeout(WAIT, refused.read_to_end(&mut answer)).await;
    assert!(String::from_utf8_lossy(&answer).starts_with("HTTP/1.1 429"), "{}", String::from_utf8_lossy(&answer));
    drop((held, strangers));
    app.finish().await;
}
