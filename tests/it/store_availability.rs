//! The journal's contract with real databases: a write while the database
//! cannot be reached fails quickly with `StoreError::Unavailable` and stores
//! nothing; `Store::available` says when the database is down and when it
//! is back, and writes succeed again then. A batch the database refuses
//! fails alone with `StoreError::Rejected`; the others written with it are
//! committed.

use crate::common;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::app::Api;
use common::db::{TestDb, events_batch};
use mahjong::protocol::ws::{ClientMessage, ServerMessage, WsErrorCode};
use mahjong::store::{Batch, Store, StoreError};

use mahjong_tools::client::{SeatPlan, TableSocket, play_seat, preferred};
use serde_json::json;
use sqlx::Connection;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// A batch of game `id` holding the events `seqs`.
fn batch(id: &str, seqs: std::ops::RangeInclusive<i64>) -> Batch {
    events_batch(id, "availability", seqs)
}

/// The sequence numbers stored for a game.
async fn stored_seqs(store: &Store, id: &str) -> Vec<i64> {
    store.events(id, 0).await.unwrap().iter().map(|e| e.seq).collect()
}

/// Waits until the store says the database answers (or not).
async fn until_available(store: &Store, up: bool) {
    let mut available = store.available();
    tokio::time::timeout(Duration::from_secs(30), available.wait_for(|a| *a == up))
        .await
        .unwrap_or_else(|_| panic!("the store did not become available={up}"))
        .unwrap();
}

// ----- a database that goes away --------------------------------------------

/// A TCP proxy to a database, which can be cut off and restored on the same
/// port.
struct Proxy {
    addr: SocketAddr,
    upstream: SocketAddr,
    accept: JoinHandle<()>,
    connections: Arc<Mutex<Vec<JoinHandle<()>>>>,
}

impl Proxy {
    async fn start(listen: SocketAddr, upstream: SocketAddr) -> Proxy {
        let listener = TcpListener::bind(listen).await.expect("bind the proxy");
        let addr = listener.local_addr().unwrap();
        let connections: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
        let tasks = connections.clone();
        let accept = tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                let task = tokio::spawn(async move {
                    if let Ok(mut outbound) = TcpStream::connect(upstream).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
                tasks.lock().unwrap().push(task);
            }
        });
        Proxy { addr, upstream, accept, connections }
    }

    /// Cuts every connection and stops listening.
    fn cut(&self) {
        self.accept.abort();
        for task in self.connections.lock().unwrap().drain(..) {
            task.abort();
        }
    }

    /// Listens again on the same port.
    async fn restore(&self) -> Proxy {
        Proxy::start(self.addr, self.upstream).await
    }
}

/// The test database's URL through a proxy: the proxy and the URL.
async fn through_proxy(url: &str) -> (Proxy, String) {
    let (scheme, rest) = url.split_once("://").unwrap();
    let (user, rest) = rest.rsplit_once('@').map_or(("", rest), |(u, r)| (u, r));
    let (host, database) = rest.split_once('/').unwrap();
    let host = if host.contains(':') { host.to_string() } else { format!("{host}:5432") };
    let upstream = tokio::net::lookup_host(&host).await.unwrap().next().unwrap();
    let proxy = Proxy::start("127.0.0.1:0".parse().unwrap(), upstream).await;
    let at = if user.is_empty() { String::new() } else { format!("{user}@") };
    let url = format!("{scheme}://{at}{}/{database}", proxy.addr);
    (proxy, url)
}

/// A write "at once": well under the 3 s a write waits for a connection
/// (and the 10 s SQLite waits for its lock), so that only waiting for the
/// database fails it, not a busy machine.
const AT_ONCE: Duration = Duration::from_secs(2);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_writes_fail_fast_while_unreachable_and_resume() {
    let _ = tracing_subscriber::fmt().with_test_writer().try_init();
    let db = TestDb::new("postgres").await;
    let (proxy, url) = through_proxy(&db.url).await;
    let store = Store::open(&url).await.unwrap();
    store.write(batch("g", 1..=2)).await.unwrap();
    assert!(*store.available().borrow());

    proxy.cut();
    let started = Instant::now();
    let e = store.write(batch("g", 3..=4)).await.unwrap_err();
    assert!(matches!(e, StoreError::Unavailable(_)), "{e}");
    assert!(started.elapsed() < Duration::from_secs(8), "the first failure took {:?}", started.elapsed());
    assert!(!*store.available().borrow(), "the store says the database is down");
    // While it is down, writes fail at once, without waiting for it.
    let started = Instant::now();
    let e = store.write(batch("g", 3..=4)).await.unwrap_err();
    assert!(matches!(e, StoreError::Unavailable(_)), "{e}");
    assert!(started.elapsed() < AT_ONCE, "a write while down took {:?}", started.elapsed());

    let restored = proxy.restore().await;
    until_available(&store, true).await;
    // The failed batch stored nothing: written again, it is committed whole.
    store.write(batch("g", 3..=4)).await.unwrap();
    assert_eq!(stored_seqs(&store, "g").await, vec![1, 2, 3, 4]);
    store.close().await;
    restored.cut();
    db.remove().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_writes_fail_while_locked_and_resume() {
    let db = TestDb::new("sqlite").await;
    let store = Store::open(&db.url).await.unwrap();
    store.write(batch("g", 1..=2)).await.unwrap();
    // Another process holds the write lock of the file that holds the game
    // (the store may be in several, see store_parts.rs) past the store's
    // busy timeout (10 s).
    use mahjong::store::parts::{file_of, part_file, part_of};
    let file = part_file(&file_of(&db.url), part_of("g", store.files()));
    let mut other = sqlx::SqliteConnection::connect(&format!("sqlite://{}", file.display())).await.unwrap();
    sqlx::query("BEGIN EXCLUSIVE").execute(&mut other).await.unwrap();
    let started = Instant::now();
    let e = store.write(batch("g", 3..=4)).await.unwrap_err();
    assert!(matches!(e, StoreError::Unavailable(_)), "{e}");
    assert!(started.elapsed() < Duration::from_secs(20), "the first failure took {:?}", started.elapsed());
    assert!(!*store.available().borrow());
    let started = Instant::now();
    assert!(matches!(store.write(batch("g", 3..=4)).await, Err(StoreError::Unavailable(_))));
    assert!(started.elapsed() < AT_ONCE, "a write while down took {:?}", started.elapsed());

    sqlx::query("ROLLBACK").execute(&mut other).await.unwrap();
    other.close().await.unwrap();
    until_available(&store, true).await;
    store.write(batch("g", 3..=4)).await.unwrap();
    assert_eq!(stored_seqs(&store, "g").await, vec![1, 2, 3, 4]);
    store.close().await;
    db.remove().await;
}

// ----- a batch the database refuses -------------------------------------------

async fn a_refused_batch_fails_alone(backend: &str) {
    let _ = tracing_subscriber::fmt().with_test_writer().try_init();
    let db = TestDb::new(backend).await;
    let store = Store::open(&db.url).await.unwrap();
    store.write(batch("bad", 1..=2)).await.unwrap();
    // Many batches at once, so that the journal commits them in groups; one
    // repeats sequence numbers already stored.
    let mut writes = Vec::new();
    for i in 0..40 {
        let good = store.clone();
        writes.push(tokio::spawn(async move { good.write(batch(&format!("good{i}"), 1..=3)).await }));
        if i == 20 {
            let bad = store.clone();
            writes.push(tokio::spawn(async move { bad.write(batch("bad", 2..=3)).await }));
        }
    }
    let mut refused = 0;
    for (i, w) in writes.into_iter().enumerate() {
        match w.await.unwrap() {
            Ok(()) => {}
            Err(StoreError::Rejected(_)) if i == 21 => refused += 1,
            Err(e) => panic!("write {i}: {e}"),
        }
    }
    assert_eq!(refused, 1, "the bad batch is refused");
    for i in 0..40 {
        assert_eq!(stored_seqs(&store, &format!("good{i}")).await, vec![1, 2, 3], "game good{i}");
    }
    assert_eq!(stored_seqs(&store, "bad").await, vec![1, 2], "nothing of the refused batch is stored");
    assert!(*store.available().borrow(), "a refusal is not an outage");
    store.write(batch("bad", 3..=3)).await.unwrap();
    store.close().await;
    db.remove().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_batch_fails_alone_sqlite() {
    a_refused_batch_fails_alone("sqlite").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_batch_fails_alone_postgres() {
    a_refused_batch_fails_alone("postgres").await;
}

// ----- a table while its database is away --------------------------------------

/// The next prompt (or error) on `socket`, skipping events.
async fn next_of(socket: &mut TableSocket, wanted: impl Fn(&ServerMessage) -> bool) -> ServerMessage {
    loop {
        let (m, _) = socket.next(Duration::from_secs(60)).await.unwrap().expect("the socket stays open");
        if wanted(&m) {
            return m;
        }
    }
}

/// A table whose database goes away mid-hand shows nothing it could not
/// store: the move that could not be written is held, everybody connected
/// is told the table waits, requests are refused with `store_unavailable`;
/// once the database is back the held move's events arrive, numbered on
/// from the last ones, and the game plays on to its end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_waits_for_its_database_and_plays_on() {
    let _ = tracing_subscriber::fmt().with_test_writer().try_init();
    let db = TestDb::new("postgres").await;
    let (proxy, url) = through_proxy(&db.url).await;
    let store = Store::open(&url).await.unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(common::app::serve(
        mahjong::server::ServerConfig::new(listener, store.clone()),
        std::future::pending(),
    ));
    let api = Api::at(addr);
    let table = api.table(&[1, 2, 3], json!({"NumRounds": 1})).await;
    let token = api.sit(&table, "Ann", 0).await;
    api.start(&table, Some(&token)).await;
    let mut ann = TableSocket::connect(addr, &table, Some(&token), None).await.unwrap();
    let mut watcher = TableSocket::connect(addr, &table, None, None).await.unwrap();
    // Ann is East: the hand waits for her to declare first.
    let is_prompt = |m: &ServerMessage| matches!(m, ServerMessage::Prompt(_));
    let ServerMessage::Prompt(p) = next_of(&mut ann, is_prompt).await else { unreachable!() };
    assert!(p.ready);
    ann.send(&ClientMessage::Ready).await.unwrap();
    let has_moves = |m: &ServerMessage| matches!(m, ServerMessage::Prompt(p) if !p.actions.is_empty());
    let ServerMessage::Prompt(p) = next_of(&mut ann, has_moves).await else { unreachable!() };
    let before = ann.last_seq;

    proxy.cut();
    let action = preferred(&p).unwrap();
    ann.send(&ClientMessage::Act { action }).await.unwrap();
    let is_error = |m: &ServerMessage| matches!(m, ServerMessage::Error { .. });
    for socket in [&mut ann, &mut watcher] {
        let notice = next_of(socket, is_error).await;
        assert!(matches!(notice, ServerMessage::Error { code: WsErrorCode::StoreUnavailable, .. }), "{notice:?}");
    }
    assert_eq!(ann.last_seq, before, "nothing was shown of the move that could not be stored");
    ann.send(&ClientMessage::Chat { text: "hello?".into() }).await.unwrap();
    let refused = next_of(&mut ann, is_error).await;
    assert!(matches!(refused, ServerMessage::Error { code: WsErrorCode::StoreUnavailable, .. }), "{refused:?}");
    let sit = api.request("POST", &format!("/api/v1/tables/{table}/seats"), Some(&json!({"name": "Bo"})), None).await;
    assert_eq!((sit.status, sit.body["error"]["code"].as_str()), (503, Some("store_unavailable")), "{}", sit.body);
    let info = api.table_info(&table).await;
    assert_eq!(info["state"], "playing", "the table is still there");

    let restored = proxy.restore().await;
    until_available(&store, true).await;
    // The held move's events arrive, numbered on, then play goes on.
    let (first, _) = ann.next(Duration::from_secs(60)).await.unwrap().expect("the socket stays open");
    let ServerMessage::Event { seq, .. } = first else { panic!("expected the held events, got {first:?}") };
    assert!(seq > before, "numbered on from the last event shown ({seq} after {before})");
    let log = play_seat(&mut ann, SeatPlan::new(0)).await.unwrap();
    assert!(log.game_over, "the game plays to its end");
    assert!(log.errors.is_empty(), "{:?}", log.errors);
    let stored: Vec<i64> = store.events(&table, 0).await.unwrap().iter().map(|e| e.seq).collect();
    assert_eq!(stored, (1..=stored.len() as i64).collect::<Vec<_>>(), "every event stored, once, in order");
    store.close().await;
    restored.cut();
    db.remove().await;
}

/// `/readyz` and the opening of a table while the database is away: 503
/// `store_unavailable` and nothing opened (no table answered 201 that was
/// never stored); once it is back, 200 and 201 again.
async fn readiness_and_new_tables_follow_the_database(
    store: Store,
    cut: impl AsyncFnOnce(),
    restore: impl AsyncFnOnce(),
) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(common::app::serve(
        mahjong::server::ServerConfig::new(listener, store.clone()),
        std::future::pending(),
    ));
    let api = Api::at(addr);
    let ready = api.ask("/readyz", None).await;
    assert_eq!(ready.status, 200, "{}", ready.body);
    cut().await;
    let opened = api.request("POST", "/api/v1/tables", Some(&json!({"name": "during the cut"})), None).await;
    assert_eq!(
        (opened.status, opened.body["error"]["code"].as_str()),
        (503, Some("store_unavailable")),
        "{}",
        opened.body
    );
    let ready = api.ask("/readyz", None).await;
    assert_eq!(
        (ready.status, ready.body["error"]["code"].as_str()),
        (503, Some("store_unavailable")),
        "{}",
        ready.body
    );
    assert!(ready.header("retry-after").is_some());
    let listed = api.get("/api/v1/tables").await;
    assert_eq!(listed["tables"].as_array().unwrap().len(), 0, "nothing was opened: {listed}");
    restore().await;
    until_available(&store, true).await;
    let back = async {
        while api.ask("/readyz", None).await.status != 200 {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(30), back).await.expect("ready again");
    api.create_table(json!({"name": "after the cut"})).await;
    let stored: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM games").fetch_one(store.pool()).await.unwrap();
    assert_eq!(stored, 1, "only the table opened after the cut is stored");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readiness_and_new_tables_follow_the_database_postgres() {
    let db = TestDb::new("postgres").await;
    let (proxy, url) = through_proxy(&db.url).await;
    let store = Store::open(&url).await.unwrap();
    let proxy = Arc::new(Mutex::new(Some(proxy)));
    let (cutter, restorer) = (proxy.clone(), proxy.clone());
    readiness_and_new_tables_follow_the_database(
        store.clone(),
        async move || cutter.lock().unwrap().as_ref().unwrap().cut(),
        async move || {
            let old = restorer.lock().unwrap().take().unwrap();
            let restored = old.restore().await;
            *restorer.lock().unwrap() = Some(restored);
        },
    )
    .await;
    store.close().await;
    if let Some(p) = proxy.lock().unwrap().take() {
        p.cut();
    }
    db.remove().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readiness_and_new_tables_follow_the_database_sqlite() {
    let db = TestDb::new("sqlite").await;
    // One file, which the test locks: a new table's game may be in any of
    // several.
    let store = Store::open(&format!("{}?parts=1", db.url)).await.unwrap();
    // Another process holds the write lock past the store's busy timeout.
    let other = Arc::new(tokio::sync::Mutex::new(sqlx::SqliteConnection::connect(&db.url).await.unwrap()));
    let (locker, unlocker) = (other.clone(), other.clone());
    readiness_and_new_tables_follow_the_database(
        store.clone(),
        async move || {
            sqlx::query("BEGIN EXCLUSIVE").execute(&mut *locker.lock().await).await.unwrap();
        },
        async move || {
            sqlx::query("ROLLBACK").execute(&mut *unlocker.lock().await).await.unwrap();
        },
    )
    .await;
    store.close().await;
    db.remove().await;
}
