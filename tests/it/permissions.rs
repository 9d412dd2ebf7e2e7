//! Who may do what at the tables, through the real server on SQLite and
//! Postgres: the manager or an admin seats and removes robots and starts;
//! only an admin closes a table or imports a game; a logged-in player's seat
//! belongs to its account (it plays it without a seat token, and finds its
//! games and standings by account); a guest cannot take an account's name;
//! and `--require-accounts` keeps guests out of the seats.

use crate::common;

use common::app::{Api, TestApp, WAIT};
use common::on_both_backends;
use mahjong::protocol::ws::ServerMessage;
use mahjong::server::Serving;
use mahjong::table::TableDefaults;
use mahjong_tools::client::{Answer, TableSocket};
use serde_json::{Value, json};

const PASSWORD: &str = "correct horse battery";

fn code(a: &Answer) -> &str {
    a.body["error"]["code"].as_str().unwrap_or("")
}

async fn call(api: Api, method: &str, path: &str, body: Option<Value>, token: Option<&str>) -> Answer {
    api.request(method, path, body.as_ref(), token).await
}

on_both_backends!(
    the_manager_or_an_admin_manages_the_seats,
    an_account_holds_its_seat,
    only_admins_close_tables_and_import_games,
);

async fn the_manager_or_an_admin_manages_the_seats(backend: &str) {
    let app = TestApp::spawn(backend, TableDefaults::default()).await;
    let api = app.api;
    let admin = app.admin_token().await;
    let table = api.table(&[], json!({})).await;
    let robots = format!("/api/v1/tables/{table}/robots");
    // No person sits yet: anyone may seat a robot, and remove it.
    assert_eq!(call(api, "POST", &robots, Some(json!({"seat": 3})), None).await.status, 201);
    assert_eq!(call(api, "DELETE", &format!("{robots}/3"), None, None).await.status, 204);

    let manager = api.sit(&table, "Mo", 0).await;
    let other = api.sit(&table, "Ned", 1).await;
    let before = api.table_info(&table).await;
    for token in [None, Some(other.as_str())] {
        let a = call(api, "POST", &robots, Some(json!({"seat": 2})), token).await;
        assert_eq!((a.status, code(&a)), (403, "not_manager"), "{token:?}: {}", a.body);
    }
    let a = call(api, "POST", &robots, Some(json!({"seat": 2})), Some("0123456789abcdef0123456789abcdef")).await;
    assert_eq!((a.status, code(&a)), (401, "bad_token"), "{}", a.body);
    assert_eq!(api.table_info(&table).await, before, "a refused robot was seated");

    assert_eq!(call(api, "POST", &robots, Some(json!({"seat": 2})), Some(&manager)).await.status, 201);
    let a = call(api, "DELETE", &format!("{robots}/2"), None, Some(&other)).await;
    assert_eq!((a.status, code(&a)), (403, "not_manager"), "{}", a.body);
    // An admin manages any table: removes the manager's robot, seats two.
    assert_eq!(call(api, "DELETE", &format!("{robots}/2"), None, Some(&admin)).await.status, 204);
    assert_eq!(call(api, "POST", &robots, Some(json!({"seat": 2})), Some(&admin)).await.status, 201);
    assert_eq!(call(api, "POST", &robots, Some(json!({"seat": 3})), Some(&admin)).await.status, 201);
    // Only the manager or an admin starts.
    let start = format!("/api/v1/tables/{table}/start");
    let a = call(api, "POST", &start, None, Some(&other)).await;
    assert_eq!((a.status, code(&a)), (403, "not_manager"), "{}", a.body);
    let player = api.register("Pat", PASSWORD).await;
    let a = call(api, "POST", &start, None, Some(&player)).await;
    assert_eq!((a.status, code(&a)), (403, "not_manager"), "a player who does not sit here: {}", a.body);
    assert_eq!(api.table_info(&table).await["state"], "open");
    assert_eq!(call(api, "POST", &start, None, Some(&admin)).await.status, 204);
    assert_eq!(api.table_info(&table).await["state"], "playing");
    app.finish().await;
}

async fn an_account_holds_its_seat(backend: &str) {
    let app = TestApp::spawn(backend, TableDefaults::default()).await;
    let api = app.api;
    let ann = api.register("Ann", PASSWORD).await;
    let ann_id = api.ask("/api/v1/me", Some(&ann)).await.body["user"]["id"].as_i64().unwrap();
    let table = api.table(&[], json!({"NumRounds": 1})).await;
    let seats = format!("/api/v1/tables/{table}/seats");

    // A guest cannot take the account's name, whatever its case.
    let a = call(api, "POST", &seats, Some(json!({"name": " aNN ", "seat": 1})), None).await;
    assert_eq!((a.status, code(&a)), (403, "name_registered"), "{}", a.body);
    let a = call(api, "POST", &seats, Some(json!({"seat": 1})), None).await;
    assert_eq!((a.status, code(&a)), (400, "bad_request"), "a guest without a name: {}", a.body);

    // The account sits under its own name; another name is refused.
    let a = call(api, "POST", &seats, Some(json!({"name": "Someone Else", "seat": 0})), Some(&ann)).await;
    assert_eq!((a.status, code(&a)), (400, "bad_request"), "{}", a.body);
    let a = call(api, "POST", &seats, Some(json!({"seat": 0})), Some(&ann)).await;
    assert_eq!(a.status, 201, "{}", a.body);
    let info = api.table_info(&table).await;
    assert_eq!((info["seats"][0]["name"].as_str(), info["manager"].as_i64()), (Some("Ann"), Some(0)), "{info}");
    let a = call(api, "POST", &seats, Some(json!({"seat": 1})), Some(&ann)).await;
    assert_eq!((a.status, code(&a)), (400, "bad_request"), "a second seat for one account: {}", a.body);

    // The manager by account: robots and the start with the session alone.
    for seat in 1..4 {
        let a =
            call(api, "POST", &format!("/api/v1/tables/{table}/robots"), Some(json!({"seat": seat})), Some(&ann)).await;
        assert_eq!(a.status, 201, "{}", a.body);
    }
    assert_eq!(call(api, "POST", &format!("/api/v1/tables/{table}/start"), None, Some(&ann)).await.status, 204);

    // The WebSocket with the session and no seat token plays seat 0.
    let bearer = format!("Bearer {ann}");
    let mut socket =
        TableSocket::connect_with(app.addr, &table, None, None, &[("authorization", &bearer)]).await.unwrap();
    match socket.next(WAIT).await.unwrap() {
        Some((ServerMessage::Snapshot { seat, .. }, _)) => assert_eq!(seat, Some(0)),
        other => panic!("expected the snapshot of seat 0, got {other:?}"),
    }
    let log = mahjong_tools::client::play_seat(&mut socket, mahjong_tools::client::SeatPlan::new(0))
        .await
        .expect("the account plays its game to the end");
    assert!(log.game_over, "the game did not end");
    api.wait_over(&table).await;

    // A hand's history with the session (the seat's view; the whole hand once the game is over).
    let a = api.ask(&format!("/api/v1/games/{table}/hands/1/events"), Some(&ann)).await;
    assert_eq!(a.status, 200, "{}", a.body);

    // Its games and standings, by account.
    let games = api.get(&format!("/api/v1/games?account={ann_id}")).await;
    assert_eq!(games["games"].as_array().unwrap().len(), 1, "{games}");
    assert_eq!(games["games"][0]["id"], table.as_str());
    let none = api.get(&format!("/api/v1/games?account={}", ann_id + 1)).await;
    assert_eq!(none["games"].as_array().unwrap().len(), 0, "{none}");
    let standings = api.get(&format!("/api/v1/standings?account={ann_id}")).await;
    let lines = standings["standings"].as_array().unwrap();
    assert_eq!(lines.len(), 1, "{standings}");
    assert_eq!((lines[0]["name"].as_str(), lines[0]["account"].as_i64()), (Some("Ann"), Some(ann_id)));
    assert_eq!(lines[0]["games_played"], 1);
    let all = api.get("/api/v1/standings").await;
    let robot = all["standings"].as_array().unwrap().iter().find(|l| l["robot"] == true).unwrap();
    assert!(robot.get("account").is_none(), "a robot has no account: {robot}");
    for bad in ["0", "-1", "ann", ""] {
        let a = api.ask(&format!("/api/v1/standings?account={bad}"), None).await;
        assert_eq!((a.status, code(&a)), (400, "bad_request"), "account={bad}: {}", a.body);
    }
    app.finish().await;
}

async fn only_admins_close_tables_and_import_games(backend: &str) {
    let app = TestApp::spawn(backend, TableDefaults::default()).await;
    let api = app.api;
    let admin = app.admin_token().await;
    let player = api.register("Quin", PASSWORD).await;
    let table = api.create_table(json!({"robots": [{}, {}, {}, {}], "start": true, "options": {"NumRounds": 4}})).await;
    let path = format!("/api/v1/tables/{table}");
    let a = call(api, "DELETE", &path, None, None).await;
    assert_eq!((a.status, code(&a)), (401, "unauthenticated"), "{}", a.body);
    let a = call(api, "DELETE", &path, None, Some(&player)).await;
    assert_eq!((a.status, code(&a)), (403, "admin_only"), "{}", a.body);
    assert_eq!(api.table_info(&table).await["state"], "playing");

    let mut watcher = TableSocket::connect(app.addr, &table, None, None).await.unwrap();
    assert_eq!(call(api, "DELETE", &path, None, Some(&admin)).await.status, 204);
    // The game ended as it stood, was announced, and the table is gone.
    let mut last = Vec::new();
    while let Ok(Some((_, text))) = watcher.next(WAIT).await {
        last.push(text);
    }
    let tail = last[last.len().saturating_sub(4)..].join("\n");
    assert!(tail.contains("\"game_over\""), "the spectator was not told the game ended: {tail}");
    let a = api.ask(&path, None).await;
    assert_eq!((a.status, code(&a)), (404, "no_such_table"), "{}", a.body);
    let game = api.get(&format!("/api/v1/games/{table}")).await;
    assert_eq!(game["state"], "over", "{game}");

    // Importing is for admins: nothing is stored for anyone else.
    let file = api.get(&format!("/api/v1/games/{table}/export")).await;
    let games = api.get("/api/v1/games").await["total"].clone();
    for (token, status, expected) in [(None, 401, "unauthenticated"), (Some(player.as_str()), 403, "admin_only")] {
        let a = api.request("POST", "/api/v1/games/import", Some(&file), token).await;
        assert_eq!((a.status, code(&a)), (status, expected), "{}", a.body);
    }
    assert_eq!(api.get("/api/v1/games").await["total"], games, "a refused import stored a game");
    let a = api.request("POST", "/api/v1/games/import", Some(&file), Some(&admin)).await;
    assert_eq!(a.status, 201, "{}", a.body);
    app.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guests_stay_out_of_the_seats_when_accounts_are_required() {
    let serving = Serving { require_accounts: true, ..Serving::default() };
    let app = TestApp::spawn_serving("sqlite", TableDefaults::default(), serving).await;
    let api = app.api;
    let a = call(api, "POST", "/api/v1/tables", Some(json!({})), None).await;
    assert_eq!((a.status, code(&a)), (403, "account_required"), "{}", a.body);
    let player = api.register("Rae", PASSWORD).await;
    let a = call(api, "POST", "/api/v1/tables", Some(json!({})), Some(&player)).await;
    assert_eq!(a.status, 201, "{}", a.body);
    let table = a.body["id"].as_str().unwrap().to_string();
    let seats = format!("/api/v1/tables/{table}/seats");
    let a = call(api, "POST", &seats, Some(json!({"name": "Guest"})), None).await;
    assert_eq!((a.status, code(&a)), (403, "account_required"), "{}", a.body);
    assert_eq!(call(api, "POST", &seats, Some(json!({})), Some(&player)).await.status, 201);
    // Guests may still watch.
    let mut watcher = TableSocket::connect(app.addr, &table, None, None).await.unwrap();
    assert!(matches!(watcher.next(WAIT).await.unwrap(), Some((ServerMessage::Snapshot { .. }, _))));
    app.finish().await;
}
