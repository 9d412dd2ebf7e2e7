//! The HTTP edge through a real server on a random port: every refusal of
//! the HTTP layer (hyper's own included) carries the JSON error body, REST
//! requests time out but WebSockets do not, and the server stops in order
//! (requests traced without their tokens: `tests/http_trace.rs`).

use crate::common;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use mahjong::http::Timeouts;
use mahjong::protocol::ws::{ClientMessage, ServerMessage};

use mahjong_tools::client::{Answer, TableSocket, http, http_raw};
use serde_json::json;
use tokio::net::{TcpListener, TcpStream};

const WAIT: Duration = Duration::from_secs(60);

/// The admin account of [`server`]: name and password.
const ADMIN: (&str, &str) = ("admin", "admin password 1");

/// A server storing its games in memory, with these time limits.
async fn server(timeouts: Timeouts) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let store = mahjong::store::Store::open("sqlite::memory:").await.unwrap();
    // An admin, for the routes only admins may use.
    let accounts = mahjong::auth::Accounts::new(store.clone(), Default::default()).unwrap();
    accounts.create(ADMIN.0, ADMIN.1, mahjong::auth::Role::Admin).await.unwrap();
    let mut config = mahjong::server::ServerConfig::new(listener, store);
    config.serving.timeouts = timeouts;
    tokio::spawn(common::app::serve(config, std::future::pending()));
    addr
}

fn refusal(a: &Answer) -> (u16, &str) {
    (a.status, a.body["error"]["code"].as_str().unwrap_or_else(|| panic!("not a JSON error: {} {}", a.status, a.body)))
}

async fn get(addr: SocketAddr, target: &str) -> Answer {
    let request = format!("GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    http_raw(addr, request.as_bytes()).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_refusal_of_the_http_layer_is_json() {
    let addr = server(Timeouts::default()).await;
    // A wrong method, an unknown path, a body over the limit.
    let a = http(addr, "GET", "/api/v1/settle", None, None).await.unwrap();
    assert_eq!(refusal(&a), (405, "method_not_allowed"));
    let a = http(addr, "GET", "/api/v1/nothing-here", None, None).await.unwrap();
    assert_eq!(refusal(&a), (404, "not_found"));
    let a = http(addr, "POST", "/api/v1/tables", Some(&json!({"name": "x".repeat(100_000)})), None).await.unwrap();
    assert_eq!(refusal(&a), (413, "too_large"));
    // A path parameter or query that does not parse.
    let a = get(addr, "/api/v1/games/g/hands/first").await;
    assert_eq!(refusal(&a), (400, "bad_request"));
    let a = get(addr, "/api/v1/games?colour=red").await;
    assert_eq!(refusal(&a), (400, "bad_request"));
    // A WebSocket request without its upgrade headers.
    let a = get(addr, "/api/v1/tables/t/ws").await;
    assert_eq!(a.status / 100, 4, "{}", a.body);
    assert!(a.body["error"]["code"].is_string(), "{}", a.body);
    // A URI over our limit (8 KiB), and one over hyper's (64 KiB), which
    // hyper refuses itself; a head over hyper's buffer (which hyper calls
    // too large a URI or too large a head, depending on how much of the line
    // has arrived when it decides).
    for (length, refusals) in [
        (10_000, &[(414, "uri_too_long")][..]),
        (100_000, &[(414, "uri_too_long")]),
        (500_000, &[(431, "headers_too_large"), (414, "uri_too_long")]),
    ] {
        let a = get(addr, &format!("/api/v1/games?player={}", "x".repeat(length))).await;
        assert!(refusals.contains(&refusal(&a)), "a URI of {length} bytes: {:?}", refusal(&a));
        assert!(!a.body["error"]["message"].as_str().unwrap().is_empty());
    }
    let a = get(addr, &format!("/api/v1/games?player={}", "x".repeat(8_000))).await;
    assert_eq!(a.status, 200, "a URI under 8 KiB is served: {}", a.body);
    // A request line hyper cannot read.
    let a = http_raw(addr, b"GET /a b c HTTP/1.1\r\nHost: x\r\n\r\n").await.unwrap();
    assert_eq!(refusal(&a), (400, "bad_request"));
    let a = http_raw(addr, b"GET / HTTP/1.1\r\nHost x\r\n\r\n").await.unwrap();
    assert_eq!(refusal(&a), (400, "bad_request"));
    // The server still serves.
    assert_eq!(http(addr, "GET", "/healthz", None, None).await.unwrap().status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_request_times_out_but_a_websocket_lives_on() {
    let quick = Timeouts { request: Duration::from_secs(1), game_file: Duration::from_secs(1) };
    let addr = server(quick).await;
    // A body announced but never sent.
    let started = Instant::now();
    let a = http_raw(
        addr,
        b"POST /api/v1/tables HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 100\r\n\r\n{\"na",
    )
    .await
    .unwrap();
    assert_eq!(refusal(&a), (408, "timeout"));
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    let login = json!({"name": ADMIN.0, "password": ADMIN.1});
    let admin = http(addr, "POST", "/api/v1/auth/login", Some(&login), None).await.unwrap();
    let token = admin.body["token"].as_str().unwrap().to_string();
    let request = format!(
        "POST /api/v1/games/import HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer {token}\r\n\
         Content-Length: 100\r\n\r\n{{"
    );
    let a = http_raw(addr, request.as_bytes()).await.unwrap();
    assert_eq!(refusal(&a), (408, "timeout"));
    // A spectator's socket outlives the request time limit.
    let table = http(addr, "POST", "/api/v1/tables", Some(&json!({})), None).await.unwrap();
    let id = table.body["id"].as_str().unwrap().to_string();
    let mut socket = TableSocket::connect(addr, &id, None, None).await.unwrap();
    tokio::time::sleep(Duration::from_millis(2500)).await;
    socket.send(&ClientMessage::Ping).await.unwrap();
    loop {
        let (m, _) = socket.next(WAIT).await.unwrap().expect("the socket stays open");
        if matches!(m, ServerMessage::Pong) {
            break;
        }
    }
}

/// Shutting down: the HTTP server stops, then the tables, then the store;
/// `serve` returns.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_stops_in_order() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("stop.db").display());
    let store = mahjong::store::Store::open(&url).await.unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(common::app::serve(mahjong::server::ServerConfig::new(listener, store), async move {
        let _ = stopped.await;
    }));
    let robots = json!({"robots": [{"seat": 0}, {"seat": 1}, {"seat": 2}, {"seat": 3}], "start": true});
    let table = http(addr, "POST", "/api/v1/tables", Some(&robots), None).await.unwrap();
    assert_eq!(table.status, 201, "{}", table.body);
    let ws = format!("ws://{addr}/api/v1/tables/{}/ws", table.body["id"].as_str().unwrap());
    let (mut socket, _) = tokio_tungstenite::connect_async(ws).await.unwrap();
    stop.send(()).unwrap();
    let served = tokio::time::timeout(Duration::from_secs(20), server).await.expect("the server stops");
    served.unwrap().unwrap();
    // The socket was closed as the server stopped (1001), not dropped by its
    // table (4000); the port no longer answers.
    let close = loop {
        use futures_util::StreamExt;
        match tokio::time::timeout(Duration::from_secs(5), socket.next()).await {
            Ok(Some(Ok(tokio_tungstenite::tungstenite::Message::Close(frame)))) => break frame,
            Ok(Some(Ok(_))) => continue,
            other => panic!("the socket ended without a close frame: {other:?}"),
        }
    };
    assert_eq!(close.map(|f| u16::from(f.code)), Some(1001));
    assert!(TcpStream::connect(addr).await.is_err(), "the server still listens");
    // Everything the tables did is in the store, which reopens.
    let store = mahjong::store::Store::open(&url).await.unwrap();
    let games = store.list_games(&Default::default(), mahjong::store::queries::Window { limit: 10, offset: 0 }).await;
    assert_eq!(games.unwrap().games.len(), 1);
    store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_probes_are_answered_when_the_connections_are_full() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let store = mahjong::store::Store::open("sqlite::memory:").await.unwrap();
    let mut config = mahjong::server::ServerConfig::new(listener, store);
    config.serving.limits = mahjong::limits::Limits { connections: Some(2), ..Default::default() };
    tokio::spawn(common::app::serve(config, std::future::pending()));
    // Two idle connections fill the server.
    let mut held = Vec::new();
    for _ in 0..2 {
        held.push(TcpStream::connect(addr).await.unwrap());
    }
    let full = async {
        loop {
            if let Ok(a) = http_raw(addr, b"GET /api/v1/tables HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").await
                && a.status == 429
            {
                return a;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    let refused = tokio::time::timeout(WAIT, full).await.expect("the server fills up");
    assert_eq!(refusal(&refused), (429, "quota_exceeded"));
    // A load balancer still hears how the server is.
    assert_eq!(get(addr, "/healthz").await.status, 200);
    assert_eq!(get(addr, "/readyz").await.status, 200);
    assert_eq!(get(addr, "/readyz?verbose=1").await.status, 200);
    // Anything else waits for a connection to close, said in the API's JSON.
    assert_eq!(refusal(&get(addr, "/metrics").await), (429, "quota_exceeded"));
    let sneaky =
        http_raw(addr, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /api/v1/tables HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
    assert_eq!(sneaky.status, 200, "the probe, and the connection closed after it");
    drop(held);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_metrics_can_ask_for_a_token_or_live_on_a_listener_of_their_own() {
    // Behind a token.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let store = mahjong::store::Store::open("sqlite::memory:").await.unwrap();
    let mut config = mahjong::server::ServerConfig::new(listener, store);
    config.serving.metrics_token = Some("scrape me please".into());
    tokio::spawn(common::app::serve(config, std::future::pending()));
    assert_eq!(refusal(&get(addr, "/metrics").await), (401, "unauthenticated"));
    let wrong = http(addr, "GET", "/metrics", None, Some("scrape me")).await.unwrap();
    assert_eq!(refusal(&wrong), (401, "unauthenticated"));
    let right = http(addr, "GET", "/metrics", None, Some("scrape me please")).await.unwrap();
    assert_eq!(right.status, 200);
    assert!(right.body.as_str().is_some_and(|t| t.contains("mahjong_tables")), "{}", right.body);
    assert_eq!(get(addr, "/healthz").await.status, 200, "the probes ask for nothing");

    // On a listener of its own: not beside the API.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let private = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let private_addr = private.local_addr().unwrap();
    let store = mahjong::store::Store::open("sqlite::memory:").await.unwrap();
    let mut config = mahjong::server::ServerConfig::new(listener, store);
    config.serving.metrics_listener = Some(private);
    tokio::spawn(common::app::serve(config, std::future::pending()));
    let wait_up = async {
        while get(addr, "/healthz").await.status != 200 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(WAIT, wait_up).await.unwrap();
    assert_eq!(refusal(&get(addr, "/metrics").await), (404, "not_found"));
    let there = get(private_addr, "/metrics").await;
    assert_eq!(there.status, 200);
    assert!(there.body.as_str().is_some_and(|t| t.contains("mahjong_tables")));
    assert_eq!(get(private_addr, "/api/v1/tables").await.status, 404, "only the metrics there");
}
