//! The imports' `Idempotency-Key` through a real server, on SQLite and
//! Postgres: a request sent again with its key stores nothing and gets the
//! first answer (the same game id; for a game not over, no second table);
//! the same key with another body or on the other endpoint is refused;
//! requests sent at once with one key store one game; a key is forgotten
//! after a day; and every malformed key is refused before anything is
//! stored.

use crate::common;

use common::app::TestApp;
use mahjong::store::Store;
use mahjong::table::TableDefaults;
use mahjong_tools::client::{Answer, http_raw};
use serde_json::json;
use sqlx::Row;

common::on_both_backends!(
    an_import_sent_again_stores_nothing,
    imports_sent_at_once_with_one_key_store_one_game,
    malformed_keys_are_refused,
);

const MJ_SERVER: &str = "/api/v1/games/import-mj-server";
const GAME_FILE: &str = "/api/v1/games/import";

/// Posts `body` as the admin `token`, with an `Idempotency-Key` header for
/// each of `keys` (raw bytes: a malformed key is sent as it is).
async fn post(app: &TestApp, path: &str, body: &[u8], token: &str, keys: &[&[u8]]) -> Answer {
    let content_type = if path == MJ_SERVER { "text/plain" } else { "application/json" };
    let mut head = format!(
        "POST {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: {content_type}\r\nContent-Length: {}\r\n",
        app.addr,
        body.len()
    )
    .into_bytes();
    for key in keys {
        head.extend_from_slice(b"Idempotency-Key: ");
        head.extend_from_slice(key);
        head.extend_from_slice(b"\r\n");
    }
    head.extend_from_slice(b"\r\n");
    http_raw(app.addr, &[head, body.to_vec()].concat()).await.unwrap()
}

async fn count(store: &Store, sql: &str) -> i64 {
    sqlx::query(sql).fetch_one(store.pool()).await.unwrap().get::<i64, _>(0)
}

async fn games(store: &Store) -> i64 {
    count(store, "SELECT COUNT(*) FROM games").await
}

async fn imports_logged(store: &Store) -> i64 {
    count(store, "SELECT COUNT(*) FROM audit_log WHERE action LIKE 'game.import%'").await
}

fn code(a: &Answer) -> &str {
    a.body["error"]["code"].as_str().unwrap_or_default()
}

/// The first answer to a key: stored, no word of a replay.
fn stored(a: &Answer) -> String {
    assert_eq!(a.status, 201, "{}", a.body);
    assert!(a.body.get("replayed").is_none() && a.header("idempotent-replayed").is_none(), "{a:?}");
    a.body["id"].as_str().unwrap().to_string()
}

/// A repeated answer: the same game, said to be repeated.
fn replayed(a: &Answer, id: &str) {
    assert_eq!(a.status, 201, "{}", a.body);
    assert_eq!((a.body["id"].as_str(), &a.body["replayed"]), (Some(id), &json!(true)), "{}", a.body);
    assert_eq!(a.header("idempotent-replayed"), Some("true"));
}

fn log(n: usize) -> Vec<u8> {
    std::fs::read(common::corpus_games()[n].join("game.log")).unwrap()
}

async fn an_import_sent_again_stores_nothing(backend: &str) {
    let app = TestApp::spawn(backend, TableDefaults::default()).await;
    let admin = app.admin_token().await;
    let store = app.store.clone();
    let (first, second) = (log(0), log(1));

    // An mj-server log, sent twice with one key: one game, one answer.
    let listed = app.api.get("/api/v1/games").await["total"].as_i64().unwrap();
    let a = post(&app, MJ_SERVER, &first, &admin, &[b"log-0"]).await;
    let id = stored(&a);
    assert_eq!(a.body["state"], "over");
    assert_eq!(app.api.get("/api/v1/games").await["total"].as_i64(), Some(listed + 1));
    let (n, logged) = (games(&store).await, imports_logged(&store).await);
    let again = post(&app, MJ_SERVER, &first, &admin, &[b"log-0"]).await;
    replayed(&again, &id);
    assert_eq!(
        (&again.body["state"], &again.body["hands"], &again.body["seats"]),
        (&a.body["state"], &a.body["hands"], &json!([]))
    );
    assert_eq!(games(&store).await, n, "the retry stored nothing");
    assert_eq!(imports_logged(&store).await, logged, "nor logged anything");
    assert_eq!(app.api.get("/api/v1/games").await["total"].as_i64(), Some(listed + 1), "the games list grew by one");

    // The same key for another request: refused, nothing stored.
    let other = post(&app, MJ_SERVER, &second, &admin, &[b"log-0"]).await;
    assert_eq!((other.status, code(&other)), (422, "idempotency_key_reused"), "{}", other.body);
    assert!(other.body["error"]["message"].as_str().unwrap().contains("another body"), "{}", other.body);
    let file = mahjong::game_file::export(&store, &id).await.unwrap().unwrap();
    let file = serde_json::to_vec(&file).unwrap();
    let elsewhere = post(&app, GAME_FILE, &file, &admin, &[b"log-0"]).await;
    assert_eq!((elsewhere.status, code(&elsewhere)), (422, "idempotency_key_reused"), "{}", elsewhere.body);
    assert!(elsewhere.body["error"]["message"].as_str().unwrap().contains("another endpoint"));
    assert_eq!(games(&store).await, n);
    // The first request is still answered as before.
    replayed(&post(&app, MJ_SERVER, &first, &admin, &[b"log-0"]).await, &id);

    // Another key, or none, is another request: another game each.
    let other_key = stored(&post(&app, MJ_SERVER, &first, &admin, &[b"log-0-again"]).await);
    let no_key = stored(&post(&app, MJ_SERVER, &first, &admin, &[]).await);
    assert!(other_key != id && no_key != id && other_key != no_key);
    assert_eq!(games(&store).await, n + 2);

    // A game file of a game not over: one table, whose seats' tokens only
    // the first answer gives.
    let (table, _) = app.a_game_left_unfinished().await;
    let unfinished = mahjong::game_file::export(&store, &table).await.unwrap().unwrap();
    let unfinished = serde_json::to_vec(&unfinished).unwrap();
    let a = post(&app, GAME_FILE, &unfinished, &admin, &[b"file-1"]).await;
    let copy = stored(&a);
    assert_eq!(a.body["state"], "playing");
    assert_eq!(a.body["seats"].as_array().map(Vec::len), Some(1), "the person's seat and its new token: {}", a.body);
    let tables = app.api.get("/api/v1/tables").await["tables"].as_array().unwrap().len();
    let again = post(&app, GAME_FILE, &unfinished, &admin, &[b"file-1"]).await;
    replayed(&again, &copy);
    assert_eq!(again.body["seats"], json!([]), "the tokens are not kept");
    assert_eq!(app.api.get("/api/v1/tables").await["tables"].as_array().unwrap().len(), tables, "no second table");
    assert_eq!(app.api.table_info(&copy).await["state"], "playing");

    // A day later the key is forgotten: the same request stores a new game.
    let day_ago = mahjong::store::now_us() - 24 * 3600 * 1_000_000 - 1;
    sqlx::query("UPDATE idempotency_keys SET created_us = $1 WHERE idempotency_key = 'log-0'")
        .bind(day_ago)
        .execute(store.pool())
        .await
        .unwrap();
    assert!(store.remembered("log-0").await.unwrap().is_none());
    let n = games(&store).await;
    let later = stored(&post(&app, MJ_SERVER, &first, &admin, &[b"log-0"]).await);
    assert_ne!(later, id);
    assert_eq!(games(&store).await, n + 1);
    replayed(&post(&app, MJ_SERVER, &first, &admin, &[b"log-0"]).await, &later);
    let kept = count(&store, "SELECT COUNT(*) FROM idempotency_keys WHERE idempotency_key = 'log-0'").await;
    assert_eq!(kept, 1, "the old key was forgotten when the new one was stored");
    app.finish().await;
}

async fn imports_sent_at_once_with_one_key_store_one_game(backend: &str) {
    let app = TestApp::spawn(backend, TableDefaults::default()).await;
    let admin = app.admin_token().await;
    let store = app.store.clone();
    let n = games(&store).await;

    // Four copies of one request at once: each replays the log before it
    // stores, so that they meet at the key in the database.
    let body = log(2);
    let sent = (0..4).map(|_| post(&app, MJ_SERVER, &body, &admin, &[b"at-once"]));
    let answers = futures_util::future::join_all(sent).await;
    let ids: Vec<&str> =
        answers.iter().map(|a| a.body["id"].as_str().unwrap_or_else(|| panic!("{}", a.body))).collect();
    assert!(answers.iter().all(|a| a.status == 201), "{answers:?}");
    assert!(ids.iter().all(|id| *id == ids[0]), "one game for all: {ids:?}");
    let first = answers.iter().filter(|a| a.body.get("replayed").is_none()).count();
    assert_eq!(first, 1, "one answer stored the game, the others repeat it: {answers:?}");
    assert_eq!(games(&store).await, n + 1);
    assert_eq!(imports_logged(&store).await, 1);

    // Two different requests at once with one key: one stores, the other is refused.
    let (a, b) = (log(3), log(4));
    let (a, b) =
        tokio::join!(post(&app, MJ_SERVER, &a, &admin, &[b"race"]), post(&app, MJ_SERVER, &b, &admin, &[b"race"]));
    let mut statuses = [a.status, b.status];
    statuses.sort();
    assert_eq!(statuses, [201, 422], "{a:?} {b:?}");
    let refused = if a.status == 422 { &a } else { &b };
    assert_eq!(code(refused), "idempotency_key_reused");
    assert_eq!(games(&store).await, n + 2);
    app.finish().await;
}

async fn malformed_keys_are_refused(backend: &str) {
    let app = TestApp::spawn(backend, TableDefaults::default()).await;
    let admin = app.admin_token().await;
    let store = app.store.clone();
    let body = log(5);
    let n = games(&store).await;
    let long = "k".repeat(256);
    let bad: [(&str, Vec<&[u8]>); 6] = [
        ("empty", vec![b""]),
        ("256 characters", vec![long.as_bytes()]),
        ("a space inside", vec![b"two words"]),
        ("a tab inside", vec![b"two\twords"]),
        ("not ASCII", vec!["cl\u{e9}".as_bytes()]),
        ("given twice", vec![b"one", b"one"]),
    ];
    for (what, keys) in bad {
        for path in [MJ_SERVER, GAME_FILE] {
            let a = post(&app, path, &body, &admin, &keys).await;
            assert_eq!((a.status, code(&a)), (400, "bad_idempotency_key"), "{what} on {path}: {}", a.body);
            let message = a.body["error"]["message"].as_str().unwrap();
            assert!(message.contains("Idempotency-Key"), "{what}: {message}");
        }
    }
    assert_eq!(games(&store).await, n, "nothing stored");
    assert_eq!(count(&store, "SELECT COUNT(*) FROM idempotency_keys").await, 0);
    // The longest key, every visible character: taken.
    let longest: String = (b'!'..=b'~').map(char::from).cycle().take(255).collect();
    let id = stored(&post(&app, MJ_SERVER, &body, &admin, &[longest.as_bytes()]).await);
    replayed(&post(&app, MJ_SERVER, &body, &admin, &[longest.as_bytes()]).await, &id);
    // Without an admin's session the key is never looked at.
    let guest = post(&app, MJ_SERVER, &body, "mjs_nobody", &[b""]).await;
    assert_eq!(guest.status, 401, "{}", guest.body);
    app.finish().await;
}
