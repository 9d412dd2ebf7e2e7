//! Game files and mj-server logs through the real interfaces, on SQLite and
//! Postgres: REST on an in-process server, and the command line (`export`,
//! `import`, `serve --load-game`).

use crate::common;

use std::io::BufRead;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::app::{Api, TestApp, WAIT};
use common::db::TestDb;
use mahjong::store::Store;
use mahjong::table::TableDefaults;
use mahjong_tools::client::{Answer, SeatPlan, TableSocket, http_raw, play_seat};
use serde_json::{Value, json};
use sqlx::Row;

fn binary() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mahjong-server"))
}

/// Runs the command line to the end.
fn cli(args: &[&str]) -> std::process::Output {
    binary().args(args).output().expect("run mahjong-server")
}

fn temp_file(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("mahjong-archive-{}-{name}", uuid::Uuid::new_v4().simple()))
}

/// Posts raw text (an mj-server log) as `text/plain`, as the admin `token`.
async fn post_text(addr: SocketAddr, path: &str, text: &str, token: &str) -> Answer {
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: text/plain\r\nContent-Length: {}\r\n\r\n",
        text.len()
    );
    http_raw(addr, &[head.as_bytes(), text.as_bytes()].concat()).await.unwrap()
}

fn error_code(a: &Answer) -> &str {
    a.body["error"]["code"].as_str().unwrap_or_default()
}

fn error_message(a: &Answer) -> &str {
    a.body["error"]["message"].as_str().unwrap_or_default()
}

/// A game's rows of a projection, every column as text, in order.
async fn rows(store: &Store, table: &str, columns: &str, order: &str, game: &str) -> Vec<Vec<String>> {
    let columns: Vec<String> =
        columns.split(',').map(|c| format!("COALESCE(CAST({} AS TEXT), 'null')", c.trim())).collect();
    let sql = format!("SELECT {} FROM {table} WHERE game_id = $1 ORDER BY {order}", columns.join(", "));
    let found = sqlx::query(&sql).bind(game).fetch_all(store.pool()).await.unwrap();
    found.iter().map(|r| (0..columns.len()).map(|i| r.get::<String, _>(i)).collect()).collect()
}

/// Everything the store projects of a game's hands.
async fn projections(store: &Store, game: &str) -> Vec<Vec<Vec<String>>> {
    vec![
        rows(
            store,
            "hands",
            "hand, round, east, outcome, winners, how, discarder, dice, first_seq, last_seq, started_us, ended_us, settlement",
            "hand",
            game,
        )
        .await,
        rows(store, "hand_players", "hand, player, name, wind, won, points, score, delta, total", "hand, player", game)
            .await,
        rows(store, "payments", "hand, n, from_player, to_player, amount, kind", "hand, n", game).await,
    ]
}

async fn games_stored(store: &Store) -> i64 {
    sqlx::query("SELECT COUNT(*) FROM games").fetch_one(store.pool()).await.unwrap().get::<i64, _>(0)
}

/// A game file without what differs between two copies of a game: its id and source.
fn without_identity(mut file: Value) -> Value {
    file["game"]["id"] = Value::Null;
    file["game"]["source"] = Value::Null;
    file
}

// ----- a finished game --------------------------------------------------------

async fn a_finished_game_comes_back_identical(backend: &str) {
    let app = TestApp::spawn(backend, TableDefaults::default()).await;
    let admin = app.admin_token().await;
    let (api, store, db) = (app.api, app.store.clone(), &app.db);
    let robots = json!({"robots": [{}, {}, {}, {}], "start": true, "options": {"NumRounds": 1}});
    let id = api.create_table(robots).await;
    api.wait_over(&id).await;

    let exported = api.ask(&format!("/api/v1/games/{id}/export"), None).await;
    assert_eq!(exported.status, 200, "{}", exported.body);
    let file = exported.body;
    assert_eq!((file["format"].as_str(), file["version"].as_u64()), (Some("mahjong-server game"), Some(1)));
    assert_eq!((file["game"]["id"].as_str(), file["game"]["state"].as_str()), (Some(id.as_str()), Some("over")));
    assert!(file["game"]["hands"].as_i64().unwrap() >= 4, "a round has four hands at least");
    assert!(!file.to_string().contains("token"), "a game file holds no token, nor its hash");

    let loaded = api.request("POST", "/api/v1/games/import", Some(&file), Some(&admin)).await;
    assert_eq!(loaded.status, 201, "{}", loaded.body);
    assert_eq!(loaded.body["state"], "over");
    assert_eq!(loaded.body["seats"], json!([]), "a finished game gives no seat");
    let copy = loaded.body["id"].as_str().unwrap().to_string();
    assert_ne!(copy, id);
    // A finished game is stored, not opened as a table.
    assert_eq!(api.ask(&format!("/api/v1/tables/{copy}"), None).await.status, 404);

    // The same game: the same file (but its id and source), the same hands.
    let again = api.ask(&format!("/api/v1/games/{copy}/export"), None).await;
    assert_eq!(again.status, 200, "{}", again.body);
    assert_eq!(again.body["game"]["source"], "loaded");
    assert_eq!(without_identity(again.body.clone()), without_identity(file.clone()));
    let hands = projections(&store, &id).await;
    assert!(!hands[0].is_empty() && !hands[1].is_empty() && !hands[2].is_empty());
    assert_eq!(projections(&store, &copy).await, hands, "the loaded game's hands are the original's");

    // The command line exports the same file.
    let out = cli(&["export", "--database", &db.url, &copy]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let from_cli: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(from_cli, again.body);

    // A file written before draws told the wall's count and scores were
    // itemised still loads: what it gives agrees with the engine, and the
    // game is stored as the engine sends it now, the same game again.
    let mut older = file.clone();
    let mut stripped = 0;
    for e in older["events"].as_array_mut().unwrap() {
        let event = &mut e["body"]["event"];
        let fields = event.as_object_mut().unwrap();
        stripped += usize::from(fields.remove("live_tiles_left").is_some());
        if let Some(score) = fields.get_mut("score").and_then(Value::as_object_mut) {
            stripped += usize::from(score.remove("items").is_some() && score.remove("points").is_some());
        }
    }
    assert!(stripped > 100, "the file had draws and scores to strip: {stripped}");
    let loaded = api.request("POST", "/api/v1/games/import", Some(&older), Some(&admin)).await;
    assert_eq!(loaded.status, 201, "an older file loads: {}", loaded.body);
    let older_copy = loaded.body["id"].as_str().unwrap();
    let back = api.ask(&format!("/api/v1/games/{older_copy}/export"), None).await;
    assert_eq!(without_identity(back.body), without_identity(file.clone()), "stored as the engine sends it");
    // But a field it gives must be the engine's.
    let mut wrong = older;
    let drew = first_event(&mut wrong, "drew");
    drew["loose"] = json!(!drew["loose"].as_bool().unwrap());
    let refused = api.request("POST", "/api/v1/games/import", Some(&wrong), Some(&admin)).await;
    assert_eq!((refused.status, error_code(&refused)), (422, "invalid_game"), "{}", refused.body);
    app.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_game_comes_back_identical_sqlite() {
    a_finished_game_comes_back_identical("sqlite").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_game_comes_back_identical_postgres() {
    a_finished_game_comes_back_identical("postgres").await;
}

// ----- an unfinished game ------------------------------------------------------

/// Plays a seat to the end of the game with a robot's judgement.
async fn finish(addr: SocketAddr, table: &str, seat: u8, token: &str) {
    let mut socket = TableSocket::connect(addr, table, Some(token), None).await.unwrap();
    let plan = SeatPlan::new(seat);
    let log = tokio::time::timeout(WAIT, play_seat(&mut socket, plan)).await.expect("the game ends").unwrap();
    assert!(log.game_over);
    assert!(log.moves > 0, "the player played on");
}

async fn an_unfinished_game_is_loaded_and_finished(backend: &str) {
    let app = TestApp::spawn(backend, TableDefaults::default()).await;
    let admin = app.admin_token().await;
    let (addr, api, db) = (app.addr, app.api, &app.db);
    let (id, old_token) = app.a_game_left_unfinished().await;

    // Its log holds the concealed tiles: REST does not hand it out.
    let refused = api.ask(&format!("/api/v1/games/{id}/export"), None).await;
    assert_eq!((refused.status, error_code(&refused)), (409, "not_finished"), "{}", refused.body);
    assert!(error_message(&refused).contains("concealed tiles"), "{}", refused.body);
    let missing = api.ask("/api/v1/games/nosuchgame/export", None).await;
    assert_eq!((missing.status, error_code(&missing)), (404, "no_such_game"));

    // The operator exports it from the command line, while the server runs.
    let path = temp_file("unfinished.json");
    let out = cli(&["export", "--database", &db.url, &id, "-o", path.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not over"), "the operator is warned");
    let text = std::fs::read_to_string(&path).unwrap();
    let file: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(file["game"]["state"], "playing");
    assert!(!text.contains("token"), "a game file holds no token, nor its hash");

    // Loaded over REST: a new table, a new token for the person.
    let loaded = api.request("POST", "/api/v1/games/import", Some(&file), Some(&admin)).await;
    assert_eq!(loaded.status, 201, "{}", loaded.body);
    assert_eq!(loaded.body["state"], "playing");
    let grants = loaded.body["seats"].as_array().unwrap();
    assert_eq!(grants.len(), 1, "one person's seat: {}", loaded.body);
    assert_eq!(grants[0]["seat"], 0);
    let (copy, token) = (loaded.body["id"].as_str().unwrap(), grants[0]["token"].as_str().unwrap());
    assert_ne!(token, old_token);
    assert!(TableSocket::connect(addr, copy, Some(&old_token), None).await.is_err(), "the old token is not the seat's");
    let info = api.ask(&format!("/api/v1/tables/{copy}"), None).await.body;
    assert_eq!((info["hands"].clone(), info["seq"].as_u64() > Some(0)), (file["game"]["hands"].clone(), true));
    finish(addr, copy, 0, token).await;
    api.wait_over(copy).await;
    let finished = api.ask(&format!("/api/v1/games/{copy}/export"), None).await;
    assert_eq!(finished.status, 200, "{}", finished.body);
    // The loaded game went on from where the file stopped.
    let before = file["events"].as_array().unwrap();
    let after = finished.body["events"].as_array().unwrap();
    assert!(after.len() > before.len());
    assert_eq!(&after[..before.len()], &before[..], "the loaded game's stream begins with the file's");

    // Loaded at start-up by `serve --load-game`, into another database.
    let other = TestDb::new(backend).await;
    let mut served = LoadedServer::start(&path, &other.url);
    let (addr2, table, grants) = served.wait_for_table();
    let api2 = Api::at(addr2);
    assert_eq!(grants.len(), 1);
    assert_eq!(grants[0].0, 0);
    wait_listed(api2, &table).await;
    finish(addr2, &table, 0, &grants[0].1).await;
    api2.wait_over(&table).await;
    served.stop();
    other.remove().await;
    std::fs::remove_file(&path).ok();
    app.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unfinished_game_is_loaded_and_finished_sqlite() {
    an_unfinished_game_is_loaded_and_finished("sqlite").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unfinished_game_is_loaded_and_finished_postgres() {
    an_unfinished_game_is_loaded_and_finished("postgres").await;
}

/// Waits until the server lists the table (it resumes after the file is stored).
async fn wait_listed(api: Api, table: &str) {
    let started = Instant::now();
    while api.ask(&format!("/api/v1/tables/{table}"), None).await.status != 200 {
        assert!(started.elapsed() < WAIT, "table {table} never opened");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// `mahjong-server serve --load-game FILE` as a child process, its log read
/// line by line.
struct LoadedServer {
    child: std::process::Child,
    lines: std::sync::mpsc::Receiver<String>,
}

/// A log line without its terminal colour codes (`ESC [ ... m`).
fn without_colours(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            chars.by_ref().find(|&c| c == 'm');
        } else {
            out.push(c);
        }
    }
    out
}

impl LoadedServer {
    fn start(file: &Path, database: &str) -> LoadedServer {
        let mut child = binary()
            .args(["serve", "--listen", "127.0.0.1:0", "--database", database, "--load-game"])
            .arg(file)
            .env("NO_COLOR", "1")
            .env("RUST_LOG", "info")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the server");
        let (send, lines) = std::sync::mpsc::channel();
        for stream in [
            Box::new(child.stdout.take().unwrap()) as Box<dyn std::io::Read + Send>,
            Box::new(child.stderr.take().unwrap()),
        ] {
            let send = send.clone();
            // Read until the child ends, so that its pipes never fill.
            std::thread::spawn(move || {
                for line in std::io::BufReader::new(stream).lines().map_while(Result::ok) {
                    let _ = send.send(without_colours(&line));
                }
            });
        }
        LoadedServer { child, lines }
    }

    /// The server's address, the loaded table and its seat tokens, from the log.
    fn wait_for_table(&mut self) -> (SocketAddr, String, Vec<(u8, String)>) {
        let (mut addr, mut table, mut grants) = (None, None, Vec::new());
        let deadline = Instant::now() + WAIT;
        while addr.is_none() || table.is_none() || grants.is_empty() {
            let line = self
                .lines
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .unwrap_or_else(|_| panic!("the server did not print its table and tokens"));
            if let Some(rest) = line.split("serving on http://").nth(1) {
                addr = rest.split_whitespace().next().and_then(|a| a.parse().ok());
            }
            // The loaded game, printed on standard output as one JSON line
            // (the tokens are never in the log).
            if let Ok(loaded) = serde_json::from_str::<Value>(&line)
                && let Some(seats) = loaded["seats"].as_array()
            {
                table = loaded["id"].as_str().map(str::to_string);
                for grant in seats {
                    let seat = grant["seat"].as_u64().expect("a seat") as u8;
                    grants.push((seat, grant["token"].as_str().expect("a token").to_string()));
                }
            } else {
                assert!(!grants.iter().any(|(_, t)| line.contains(t.as_str())), "a token is in the log: {line}");
            }
        }
        (addr.unwrap(), table.unwrap(), grants)
    }

    fn stop(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ----- mj-server logs -----------------------------------------------------------

/// Each hand the store holds for a game imported from a corpus log, checked
/// against the reference's expected.json (ids as in the reference log).
/// Returns the game's source.
async fn check_against_expected(store: &Store, game: &str, corpus_game: &Path) -> String {
    let name = corpus_game.file_name().unwrap().to_string_lossy().into_owned();
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(corpus_game.join("expected.json")).unwrap()).unwrap();
    // Our player ids follow the reference's first seating, East first.
    let seating = &expected["initial_seating"];
    let ids: Vec<String> = ["east", "south", "west", "north"].iter().map(|w| seating[*w].to_string()).collect();
    let hands = rows(store, "hands", "hand, outcome, winners", "hand", game).await;
    let players = rows(store, "hand_players", "hand, player, points, delta", "hand, player", game).await;
    let exp_hands = expected["hands"].as_array().unwrap();
    assert_eq!(hands.len(), exp_hands.len(), "{name}: number of hands");
    for (ours, theirs) in hands.iter().zip(exp_hands) {
        let at = format!("{name} hand {}", theirs["hand"]);
        assert_eq!(ours[0], theirs["hand"].to_string(), "{at}");
        let mine: Vec<&Vec<String>> = players.iter().filter(|p| p[0] == ours[0]).collect();
        assert_eq!(mine.len(), 4, "{at}: four players");
        if theirs["washout"].as_bool().unwrap() {
            assert_eq!(ours[1], "washed_out", "{at}");
            assert!(mine.iter().all(|p| p[3] == "0"), "{at}: a wash-out pays nothing");
            continue;
        }
        assert_eq!(ours[1], "won", "{at}");
        let winner_id = theirs["winner"].to_string();
        let winner = ids.iter().position(|id| *id == winner_id).unwrap();
        assert_eq!(ours[2], format!("[{winner}]"), "{at}: the winner");
        for (p, id) in ids.iter().enumerate() {
            let row = mine[p];
            let score = theirs["scores"].get(id).map_or(0, |s| s["score"].as_i64().unwrap());
            assert_eq!(row[2], score.to_string(), "{at}: player {id}'s hand score");
            let delta = theirs["settlement"]["by_id"][id].as_i64().unwrap();
            assert_eq!(row[3], delta.to_string(), "{at}: player {id}'s settlement");
        }
    }
    let scores = sqlx::query("SELECT scores, source, state FROM games WHERE id = $1")
        .bind(game)
        .fetch_one(store.pool())
        .await
        .unwrap();
    let final_scores: Vec<i64> = serde_json::from_str(&scores.get::<String, _>(0)).unwrap();
    let want: Vec<i64> = ids.iter().map(|id| expected["final_scores"][id].as_i64().unwrap()).collect();
    assert_eq!(final_scores, want, "{name}: final scores");
    assert_eq!(scores.get::<String, _>(2), "over");
    scores.get::<String, _>(1)
}

async fn every_mj_server_log_imports_with_the_reference_results(backend: &str) {
    let app = TestApp::spawn(backend, TableDefaults::default()).await;
    let admin = app.admin_token().await;
    let (addr, api, store, db) = (app.addr, app.api, app.store.clone(), &app.db);
    let corpus = common::corpus_games();
    // Over REST, all but the last; the last through the command line.
    let (last, rest) = corpus.split_last().unwrap();
    for game in rest {
        let log = std::fs::read_to_string(game.join("game.log")).unwrap();
        let answer = post_text(addr, "/api/v1/games/import-mj-server", &log, &admin).await;
        assert_eq!(answer.status, 201, "{}: {}", game.display(), answer.body);
        assert_eq!((answer.body["state"].as_str(), answer.body["seats"].clone()), (Some("over"), json!([])));
        let id = answer.body["id"].as_str().unwrap();
        assert_eq!(check_against_expected(&store, id, game).await, "mj-server");
        // Written out as an mj-server log again, it imports as the same game.
        let exported = api.ask(&format!("/api/v1/games/{id}/export-mj-server"), None).await;
        assert_eq!(exported.status, 200, "{}: {}", game.display(), exported.body);
        let again = exported.body.as_str().expect("the log is text");
        let answer = post_text(addr, "/api/v1/games/import-mj-server", again, &admin).await;
        assert_eq!(answer.status, 201, "{}: the export imports: {}", game.display(), answer.body);
        let copy = answer.body["id"].as_str().unwrap();
        assert_eq!(check_against_expected(&store, copy, game).await, "mj-server");
        assert_eq!(played(&store, copy).await, played(&store, id).await, "{}: the same game", game.display());
    }
    let out = cli(&["import", "--database", &db.url, last.join("game.log").to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(check_against_expected(&store, answer["id"].as_str().unwrap(), last).await, "mj-server");
    // An imported log is a game like ours: it exports, and its file loads.
    let file = api.ask(&format!("/api/v1/games/{}/export", answer["id"].as_str().unwrap()), None).await;
    assert_eq!(file.status, 200, "{}", file.body);
    let names: Vec<&str> = file.body["seats"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["R1", "R2", "R3", "R4"], "the players' names come from the log");
    let loaded = api.request("POST", "/api/v1/games/import", Some(&file.body), Some(&admin)).await;
    assert_eq!(loaded.status, 201, "{}", loaded.body);
    assert_eq!(check_against_expected(&store, loaded.body["id"].as_str().unwrap(), last).await, "loaded");
    app.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_mj_server_log_imports_with_the_reference_results_sqlite() {
    every_mj_server_log_imports_with_the_reference_results("sqlite").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_mj_server_log_imports_with_the_reference_results_postgres() {
    every_mj_server_log_imports_with_the_reference_results("postgres").await;
}

/// What was played in a game's hands: the projections without the times and
/// sequence numbers, which differ between two copies of a game.
async fn played(store: &Store, game: &str) -> Vec<Vec<Vec<String>>> {
    vec![
        rows(store, "hands", "hand, round, east, outcome, winners, how, discarder, settlement", "hand", game).await,
        rows(store, "hand_players", "hand, player, name, wind, won, points, score, delta, total", "hand, player", game)
            .await,
        rows(store, "payments", "hand, n, from_player, to_player, amount, kind", "hand, n", game).await,
    ]
}

/// A game played here, written as an mj-server log: a log mj-server's tools
/// read (every record parses), whose import is the same game; the command
/// line writes the same log. Games the log cannot record are refused.
async fn a_game_played_here_exports_as_an_mj_server_log(backend: &str) {
    let app = TestApp::spawn(backend, TableDefaults::default()).await;
    let admin = app.admin_token().await;
    let (addr, api, store, db) = (app.addr, app.api, app.store.clone(), &app.db);
    // One of this server's own options too: the log carries it.
    let options = json!({"NumRounds": 1, "RoundMode": "up", "RoundUnit": 10});
    let id = api.create_table(json!({"robots": [{}, {}, {}, {}], "start": true, "options": options})).await;
    api.wait_over(&id).await;

    let exported = api.ask(&format!("/api/v1/games/{id}/export-mj-server"), None).await;
    assert_eq!(exported.status, 200, "{}", exported.body);
    assert_eq!(exported.header("content-type"), Some("text/plain; charset=utf-8"));
    assert_eq!(
        exported.header("content-disposition").map(str::to_string),
        Some(format!("attachment; filename=\"mahjong-game-{id}.log\""))
    );
    let log = exported.body.as_str().expect("the log is text").to_string();
    let records = mahjong::protocol::read_log(&log).expect("every record of the log reads");
    let first: Vec<&str> = records.iter().take(2).map(|r| r.raw.as_str()).collect();
    assert!(first[0].starts_with("Connect 1110 0 ") && first[1] == "ConnectReply 1110 1 ", "{first:?}");
    for wanted in [
        "Game 1 2 3 4 E ",
        "GameOption 0 RoundMode string 1110 1 up ",
        "NewHand ",
        "PlayerDraws ",
        "PlayerDiscards ",
        "HandScore ",
        "Settlement ",
        "GameOver",
    ] {
        assert!(records.iter().any(|r| r.raw.starts_with(wanted)), "the log has no {wanted:?}");
    }
    assert!(log.contains("<cnx2 NoClaim ") && log.contains("<cnx3 Discard "), "the players' moves are logged");
    assert!(!log.contains("token"), "no token in the log");

    let answer = post_text(addr, "/api/v1/games/import-mj-server", &log, &admin).await;
    assert_eq!(answer.status, 201, "the export imports: {}", answer.body);
    let copy = answer.body["id"].as_str().unwrap();
    let hands = played(&store, &id).await;
    assert!(hands[0].len() >= 4, "a round has four hands at least");
    assert_eq!(played(&store, copy).await, hands, "the imported log is the game played");
    let original = api.get(&format!("/api/v1/games/{id}")).await;
    let imported = api.get(&format!("/api/v1/games/{copy}")).await;
    assert_eq!(imported["scores"], original["scores"]);

    let out = cli(&["export", "--database", &db.url, "--format", "mj-server", &id]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), log, "the command line writes the same log");

    // A game not over is not handed out; a game with East's tile swap
    // cannot be written in mj-server's protocol.
    let open = api.create_table(json!({"options": {"NumRounds": 1}})).await;
    let refused = api.ask(&format!("/api/v1/games/{open}/export-mj-server"), None).await;
    assert_eq!((refused.status, error_code(&refused)), (409, "not_finished"), "{}", refused.body);
    let swap = json!({"robots": [{}, {}, {}, {}], "start": true, "options": {"NumRounds": 1, "TileSwap": true}});
    let swapped = api.create_table(swap).await;
    api.wait_over(&swapped).await;
    let refused = api.ask(&format!("/api/v1/games/{swapped}/export-mj-server"), None).await;
    assert_eq!((refused.status, error_code(&refused)), (422, "unrecordable"), "{}", refused.body);
    assert!(error_message(&refused).contains("TileSwap"), "{}", refused.body);
    let missing = api.ask("/api/v1/games/00000000-0000-4000-8000-000000000000/export-mj-server", None).await;
    assert_eq!((missing.status, error_code(&missing)), (404, "no_such_game"), "{}", missing.body);
    // A table an admin closed before its seats were taken had no game to log.
    let empty = api.create_table(json!({"robots": [{}]})).await;
    let closed = api.request("DELETE", &format!("/api/v1/tables/{empty}"), None, Some(&admin)).await;
    assert_eq!(closed.status, 204, "{}", closed.body);
    let refused = api.ask(&format!("/api/v1/games/{empty}/export-mj-server"), None).await;
    assert_eq!((refused.status, error_code(&refused)), (422, "unrecordable"), "{}", refused.body);
    assert!(error_message(&refused).contains("never started"), "{}", refused.body);
    app.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_played_here_exports_as_an_mj_server_log_sqlite() {
    a_game_played_here_exports_as_an_mj_server_log("sqlite").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_played_here_exports_as_an_mj_server_log_postgres() {
    a_game_played_here_exports_as_an_mj_server_log("postgres").await;
}

// ----- refusals ------------------------------------------------------------------

/// The first event of this type in a game file, as a mutable body.
fn first_event<'a>(file: &'a mut Value, kind: &str) -> &'a mut Value {
    file["events"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .map(|e| &mut e["body"]["event"])
        .find(|e| e["type"] == kind)
        .unwrap_or_else(|| panic!("no {kind} event"))
}

async fn bad_files_are_refused_and_store_nothing(backend: &str) {
    let app = TestApp::spawn(backend, TableDefaults::default()).await;
    let admin = app.admin_token().await;
    let (addr, api, store, db) = (app.addr, app.api, app.store.clone(), &app.db);
    // A finished game's file to spoil, from a short corpus game.
    let corpus = common::corpus_games();
    let log = std::fs::read_to_string(corpus[5].join("game.log")).unwrap();
    let imported = post_text(addr, "/api/v1/games/import-mj-server", &log, &admin).await;
    assert_eq!(imported.status, 201, "{}", imported.body);
    let path = format!("/api/v1/games/{}/export", imported.body["id"].as_str().unwrap());
    let good = api.ask(&path, None).await.body;
    let stored = games_stored(&store).await;

    let mut cases: Vec<(&str, Value, u16, &str, &str)> = Vec::new();
    let mut v = good.clone();
    v["version"] = json!(2);
    cases.push(("a later version", v, 400, "unsupported_file", "version 2 is not supported"));
    let mut v = good.clone();
    v["format"] = json!("something else");
    cases.push(("another format", v, 400, "unsupported_file", "not a game file"));
    let mut v = good.clone();
    v["game"]["scores"][0] = json!(good["game"]["scores"][0].as_i64().unwrap() + 10);
    cases.push(("a tampered final score", v, 422, "invalid_game", "the game says scores"));
    let mut v = good.clone();
    let score = &mut first_event(&mut v, "hand_scored")["score"]["score"];
    *score = json!(score.as_i64().unwrap() + 2);
    cases.push(("a tampered hand score", v, 422, "invalid_game", "is not the engine's hand_scored"));
    let mut v = good.clone();
    let deltas = &mut first_event(&mut v, "settled")["deltas"];
    deltas[0] = json!(deltas[0].as_i64().unwrap() + 8);
    deltas[1] = json!(deltas[1].as_i64().unwrap() - 8);
    cases.push(("a tampered settlement", v, 422, "invalid_game", "is not the engine's settled"));
    let mut v = good.clone();
    // A move taken out of the middle: the rest no longer follows.
    let inputs = v["inputs"].as_array_mut().unwrap();
    let at = inputs.len() / 2;
    inputs.remove(at);
    cases.push(("a missing input", v, 422, "invalid_game", "input"));
    let mut v = good.clone();
    v["inputs"].as_array_mut().unwrap().swap(3, 4);
    cases.push(("inputs out of order", v, 422, "invalid_game", "input"));
    let mut v = good.clone();
    v["events"].as_array_mut().unwrap().pop();
    cases.push(("a missing event", v, 422, "invalid_game", "last_seq"));
    let mut v = good.clone();
    v["game"]["state"] = json!("playing");
    cases.push((
        "a finished game said to be unfinished",
        v,
        422,
        "invalid_game",
        "replaying the inputs leaves it over",
    ));
    let mut v = good.clone();
    v["seats"][1]["seat"] = json!(0);
    cases.push(("a seat twice", v, 422, "invalid_game", "seat 0 is listed twice"));
    let mut v = good.clone();
    v["seats"][0]["token_sha256"] = json!("00");
    cases.push(("an unknown field", v, 422, "invalid_game", "unknown field"));
    for (what, file, status, code, message) in cases {
        let answer = api.request("POST", "/api/v1/games/import", Some(&file), Some(&admin)).await;
        assert_eq!((answer.status, error_code(&answer)), (status, code), "{what}: {}", answer.body);
        assert!(error_message(&answer).contains(message), "{what}: {}", answer.body);
    }
    // Not JSON at all.
    let answer = post_text(addr, "/api/v1/games/import", "{\"format\": \"mahjong-server game\", ", &admin).await;
    assert_eq!((answer.status, error_code(&answer)), (400, "bad_request"), "{}", answer.body);
    assert!(error_message(&answer).contains("not JSON"), "{}", answer.body);
    // A log that stops in the middle of a hand, and text that is no log.
    let cut: String = log.lines().take(log.lines().count() / 2).map(|l| format!("{l}\n")).collect();
    let answer = post_text(addr, "/api/v1/games/import-mj-server", &cut, &admin).await;
    assert_eq!((answer.status, error_code(&answer)), (422, "invalid_log"), "{}", answer.body);
    assert!(error_message(&answer).contains("middle of a hand"), "{}", answer.body);
    let answer = post_text(addr, "/api/v1/games/import-mj-server", "hello\n", &admin).await;
    assert_eq!((answer.status, error_code(&answer)), (422, "invalid_log"), "{}", answer.body);
    assert_eq!(games_stored(&store).await, stored, "nothing refused was stored");

    // The command line refuses them as well: `import`, and `serve --load-game`
    // before serving anything.
    let mut tampered = good.clone();
    tampered["game"]["hands"] = json!(good["game"]["hands"].as_i64().unwrap() + 1);
    let bad = temp_file("tampered.json");
    std::fs::write(&bad, tampered.to_string()).unwrap();
    let out = cli(&["import", "--database", &db.url, bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("hands"), "{}", String::from_utf8_lossy(&out.stderr));
    let out = binary()
        .args(["serve", "--listen", "127.0.0.1:0", "--database", &db.url, "--load-game", bad.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "a bad file stops the server before it serves");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--load-game") && err.contains("the game file is refused"), "{err}");
    assert_eq!(games_stored(&store).await, stored, "nothing refused was stored");
    std::fs::remove_file(&bad).ok();
    app.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_files_are_refused_and_store_nothing_sqlite() {
    bad_files_are_refused_and_store_nothing("sqlite").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_files_are_refused_and_store_nothing_postgres() {
    bad_files_are_refused_and_store_nothing("postgres").await;
}
