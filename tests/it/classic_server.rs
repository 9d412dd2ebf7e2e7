//! The classic protocol over TCP (`serve --classic-listen`): classic clients
//! built on `mahjong::protocol::classic` play at the server's tables.
//!
//! The wire-conformance test plays the reference corpus again: for each
//! game, a server is given the game's options and each hand's wall, four
//! classic clients send the players' logged messages over TCP in the log's
//! order, and every controller message each client receives must be the one
//! the reference server sent it. The log holds a broadcast once (under
//! East's connection) and a draw once (to the drawer): every client must
//! receive each broadcast, and the other three a draw with its tile hidden.
//! What differs on purpose is only `NewHand`'s two numbers for where the
//! live wall starts: mj-server throws four dice of its own for them (they
//! have no effect on play), which a server given only the walls cannot throw
//! again; `NewHand`'s East is compared.

use crate::common;

use std::collections::BTreeMap;
use std::net::SocketAddr;

use common::app::TestApp;
use common::classic::ClassicClient;
use common::corpus_games;
use mahjong::classic::ClassicListener;
use mahjong::protocol::classic::ControllerMessage;
use mahjong::protocol::reference_log::{Direction, LogMessage, read_log};
use mahjong::rules::command::{Command, WallSource};
use mahjong::rules::rebuild::Input;
use mahjong::server::{Serving, TableSources};

/// A server with a classic listener on a random port of 127.0.0.1.
async fn classic_server(defaults: mahjong::table::TableDefaults) -> (TestApp, SocketAddr) {
    classic_server_on("memory", defaults).await
}

/// The same over a database of `backend` (`sqlite` or `postgres`).
async fn classic_server_on(backend: &str, defaults: mahjong::table::TableDefaults) -> (TestApp, SocketAddr) {
    let listener = ClassicListener::bind("127.0.0.1:0").await.expect("bind the classic listener");
    let addr: SocketAddr = listener.local_addr().parse().expect("a TCP address");
    let app =
        TestApp::spawn_serving(backend, defaults, Serving { classic: Some(listener), ..Serving::default() }).await;
    (app, addr)
}

common::on_both_backends!(
    a_seat_is_given_back_by_its_id_only_with_its_credential,
    names_are_read_by_the_text_policy_before_any_account_is_looked_up,
);

/// Messages the reference sends to one connection only (the others get
/// nothing, or for draws a copy with the tile hidden).
fn private(m: &ControllerMessage) -> bool {
    use ControllerMessage as C;
    matches!(
        m,
        C::ConnectReply { .. }
            | C::Player { .. }
            | C::Game { .. }
            | C::GameOption { .. }
            | C::PlayerDoesntClaim { .. }
            | C::ClaimDenied { .. }
            | C::Error { .. }
            | C::PlayerDraws { .. }
            | C::PlayerDrawsLoose { .. }
    )
}

/// What a player other than the drawer is told of a draw.
fn hidden(m: &ControllerMessage) -> Option<ControllerMessage> {
    match m {
        ControllerMessage::PlayerDraws { id, .. } => Some(ControllerMessage::PlayerDraws { id: *id, tile: None }),
        ControllerMessage::PlayerDrawsLoose { id, .. } => {
            Some(ControllerMessage::PlayerDrawsLoose { id: *id, tile: None })
        }
        _ => None,
    }
}

/// Equal but for the differences named at the top.
fn same(expected: &ControllerMessage, got: &ControllerMessage) -> bool {
    match (expected, got) {
        (ControllerMessage::NewHand { east: a, .. }, ControllerMessage::NewHand { east: b, .. }) => a == b,
        _ => expected == got,
    }
}

/// Plays one corpus game over TCP and checks every message; returns how
/// many messages were compared.
async fn replay_over_tcp(game: &std::path::Path) -> usize {
    let name = game.file_name().unwrap().to_string_lossy().into_owned();
    let text = std::fs::read_to_string(game.join("game.log")).unwrap();
    let records = read_log(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
    let (_, capture) = mahjong::replay::replay_log_captured(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
    let walls: Vec<String> = capture
        .steps
        .iter()
        .filter_map(|(input, _)| match input {
            Input::Engine { command: Command::StartHand { wall: WallSource::Tiles(tiles), .. } } => {
                Some(tiles.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(" "))
            }
            _ => None,
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let (walls_file, options_file) = (dir.path().join("walls"), dir.path().join("options"));
    std::fs::write(&walls_file, walls.join("\n")).unwrap();
    std::fs::write(&options_file, capture.options.to_option_file(false)).unwrap();
    let sources = TableSources { walls: Some(walls_file), option_file: Some(options_file), ..TableSources::default() };
    let defaults =
        sources.read_into(mahjong::table::TableDefaults::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
    let (app, addr) = classic_server(defaults).await;

    let mut clients: BTreeMap<u32, ClassicClient> = BTreeMap::new();
    let mut compared = 0;
    for r in &records {
        let at = format!("{name} line {}", r.line);
        match (&r.direction, &r.message) {
            (Direction::Received, LogMessage::Closed) => {
                if let Some(c) = clients.remove(&r.connection) {
                    c.close().await;
                }
            }
            (Direction::Received, LogMessage::Player(_)) => {
                if let std::collections::btree_map::Entry::Vacant(slot) = clients.entry(r.connection) {
                    slot.insert(ClassicClient::connect(addr).await);
                }
                clients.get_mut(&r.connection).unwrap().send(&r.raw).await;
            }
            (Direction::Sent, LogMessage::Controller(expected)) => {
                let to: Vec<u32> = if private(expected) && hidden(expected).is_none() {
                    vec![r.connection]
                } else {
                    clients.keys().copied().collect()
                };
                for cnx in to {
                    let want = if cnx == r.connection {
                        expected.clone()
                    } else {
                        hidden(expected).unwrap_or_else(|| expected.clone())
                    };
                    let client = clients.get_mut(&cnx).unwrap_or_else(|| panic!("{at}: no connection {cnx}"));
                    let got = tokio::time::timeout(std::time::Duration::from_secs(10), client.message())
                        .await
                        .unwrap_or_else(|_| panic!("{at}: connection {cnx} waited in vain for\n  {want}"));
                    assert!(same(&want, &got), "{at}: connection {cnx} expected\n  {want}\ngot\n  {got}");
                    compared += 1;
                }
            }
            _ => panic!("{at}: unexpected record"),
        }
    }
    app.finish().await;
    compared
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reference_games_play_again_over_tcp_message_for_message() {
    let only = std::env::var("CLASSIC_WIRE_GAME").ok();
    let mut total = 0;
    for game in corpus_games() {
        if only.as_ref().is_some_and(|o| !game.ends_with(o)) {
            continue;
        }
        total += replay_over_tcp(&game).await;
    }
    assert!(total > 0);
    eprintln!("{total} controller messages compared");
}

/// Connects a classic client as `name` and reads its `ConnectReply`: its id.
async fn join(addr: SocketAddr, name: &str, last_id: i32) -> (ClassicClient, i32) {
    let mut client = ClassicClient::connect(addr).await;
    client.send(&format!("Connect 1110 {last_id} {name}")).await;
    match client.message().await {
        ControllerMessage::ConnectReply { id, reason, .. } => {
            assert!(id > 0, "{name} refused: {reason}");
            (client, id)
        }
        other => panic!("{name}: expected ConnectReply, got {other}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mixed_table_of_two_classic_clients_a_websocket_player_and_a_robot_plays_a_whole_game() {
    use mahjong_tools::client::{SeatPlan, TableSocket, play_seat};
    use serde_json::json;
    let (app, addr) = classic_server(mahjong::table::TableDefaults::default()).await;
    // A table opened over REST for classic clients, a robot in seat 3.
    let table = app
        .api
        .create_table(json!({"classic": true, "robots": [{"seat": 3}], "options": {"NumRounds": 1, "Timeout": 0}}))
        .await;
    let (mut ann, ann_id) = join(addr, &format!("Ann@{table}"), 0).await;
    let (mut bob, bob_id) = join(addr, &format!("Bob@{table}"), 0).await;
    assert_eq!((ann_id, bob_id), (1, 2), "the first classic table's seats are players 1 to 4");
    let token = app.api.sit(&table, "Cy", 2).await;
    let mut cy = TableSocket::connect(app.addr, &table, Some(&token), None).await.expect("Cy's WebSocket");
    let cy = tokio::spawn(async move { play_seat(&mut cy, SeatPlan::new(2)).await });
    let bob = tokio::spawn(async move {
        let mut log = common::classic::NaiveLog::default();
        common::classic::NaivePlayer::new(bob_id).play(&mut bob, None, &mut log).await;
        log
    });
    // Ann leaves after three discards and comes back with her id.
    let mut ann_log = common::classic::NaiveLog::default();
    common::classic::NaivePlayer::new(ann_id).play(&mut ann, Some(3), &mut ann_log).await;
    // Her id is refused while she is still connected.
    let mut twin = ClassicClient::connect(addr).await;
    twin.send(&format!("Connect 1110 {ann_id} Twin")).await;
    assert!(
        matches!(twin.message().await, ControllerMessage::ConnectReply { id: 0, reason, .. } if reason.contains("already connected"))
    );
    ann.close().await;
    let (mut ann, again) = loop {
        // Her seat is free once the server has seen her connection close.
        let mut client = ClassicClient::connect(addr).await;
        client.send(&format!("Connect 1110 {ann_id} Ann")).await;
        match client.message().await {
            ControllerMessage::ConnectReply { id, .. } if id > 0 => break (client, id),
            _ => tokio::time::sleep(std::time::Duration::from_millis(20)).await,
        }
    };
    assert_eq!(again, ann_id, "a client reconnecting with its id gets its seat back");
    assert_eq!(ann_log.started, 1, "StartPlay once, at the first hand");
    common::classic::NaivePlayer::new(ann_id).play(&mut ann, None, &mut ann_log).await;
    let bob_log = tokio::time::timeout(std::time::Duration::from_secs(120), bob).await.expect("in time").unwrap();
    let cy_log = tokio::time::timeout(std::time::Duration::from_secs(120), cy).await.expect("in time").unwrap();
    assert!(cy_log.is_ok(), "the WebSocket player played to the end: {cy_log:?}");
    assert!(ann_log.game_over && bob_log.game_over, "both classic clients saw GameOver");
    assert!(bob_log.hands_scored > 0 && bob_log.discards > 0, "{bob_log:?}");
    // Ann, back, is told the hand again from its deal (as mj-server replays
    // it) and answers its old discards too: those answers are refused.
    assert!(bob_log.errors.is_empty(), "no move of Bob's refused: {bob_log:?}");
    assert!(ann_log.hands_scored > 0, "{ann_log:?}");
    assert_eq!(ann_log.started, 2, "StartPlay again once the hand was told again after the reconnection");
    let info = app.api.table_info(&table).await;
    assert_eq!(info["state"], "over", "{info}");
    app.finish().await;
}

/// Reads until a message `wanted` picks out comes (it is the answer).
async fn until<T>(client: &mut ClassicClient, mut wanted: impl FnMut(ControllerMessage) -> Option<T>) -> T {
    let read = async {
        loop {
            if let Some(found) = wanted(client.message().await) {
                return found;
            }
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(30), read).await.expect("the message came")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_manager_hands_the_role_on_as_mj_server_allows() {
    use serde_json::json;
    let (app, addr) = classic_server(mahjong::table::TableDefaults::default()).await;
    let table = app
        .api
        .create_table(json!({"classic": true, "robots": [{"seat": 2}, {"seat": 3}], "options": {"NumRounds": 1}}))
        .await;
    let (mut ann, ann_id) = join(addr, &format!("Ann@{table}"), 0).await;
    let (mut bob, bob_id) = join(addr, &format!("Bob@{table}"), 0).await;
    // The game starts (and waits for their Ready): `Game` names Ann, the first seated.
    for client in [&mut ann, &mut bob] {
        let manager = until(client, |m| match m {
            ControllerMessage::Game { manager, .. } => Some(manager),
            _ => None,
        })
        .await;
        assert_eq!(manager, ann_id);
    }
    let error = |m| match m {
        ControllerMessage::Error { error, .. } => Some(error),
        _ => None,
    };
    let changed = |m| match m {
        ControllerMessage::ChangeManager { manager, .. } => Some(manager),
        _ => None,
    };
    let manager = |info: serde_json::Value| info["manager"].clone();
    bob.send(&format!("ChangeManager {bob_id}")).await;
    assert!(until(&mut bob, error).await.contains("only the game manager"));
    ann.send(&format!("ChangeManager {}", ann_id + 2)).await;
    assert!(until(&mut ann, error).await.contains("not a person's"), "a robot does not manage");
    ann.send("ChangeManager 99").await;
    assert!(until(&mut ann, error).await.contains("no player 99"));
    assert_eq!(manager(app.api.table_info(&table).await), json!(0), "nothing changed");
    // Ann hands it to Bob; both are told.
    ann.send(&format!("ChangeManager {bob_id}")).await;
    assert_eq!(until(&mut ann, changed).await, bob_id);
    assert_eq!(until(&mut bob, changed).await, bob_id);
    assert_eq!(manager(app.api.table_info(&table).await), json!(1));
    // Bob gives it up; then anybody may take it.
    bob.send("ChangeManager 0").await;
    assert_eq!(until(&mut bob, changed).await, 0);
    assert_eq!(until(&mut ann, changed).await, 0);
    assert_eq!(manager(app.api.table_info(&table).await), json!(null));
    ann.send(&format!("ChangeManager {ann_id}")).await;
    assert_eq!(until(&mut ann, changed).await, ann_id);
    assert_eq!(manager(app.api.table_info(&table).await), json!(0));
    app.finish().await;

    // With --no-manager nobody manages, and nobody may.
    let defaults = mahjong::table::TableDefaults { no_manager: true, ..mahjong::table::TableDefaults::default() };
    let (app, addr) = classic_server(defaults).await;
    let (mut cy, cy_id) = join(addr, "Cy", 0).await;
    cy.send(&format!("ChangeManager {cy_id}")).await;
    assert!(until(&mut cy, error).await.contains("no game manager"));
    app.finish().await;
}

#[tokio::test]
async fn bad_and_over_long_lines_get_the_protocol_error_and_change_nothing() {
    let (app, addr) = classic_server(mahjong::table::TableDefaults::default()).await;
    let mut client = ClassicClient::connect(addr).await;
    let expect_error = |m: ControllerMessage, what: &str| match m {
        ControllerMessage::Error { error, .. } => assert!(error.contains(what), "{error:?} should say {what:?}"),
        other => panic!("expected an Error saying {what:?}, got {other}"),
    };
    client.send("Discard 1B 0").await;
    expect_error(client.message().await, "Connect first");
    client.send(&"x".repeat(5000)).await;
    expect_error(client.message().await, "line too long");
    client.send("Connect 1110 0 Ann").await;
    assert!(matches!(client.message().await, ControllerMessage::ConnectReply { id: 1, .. }));
    for (line, says) in [
        ("Frobnicate 1 2", "unknown player message type 'Frobnicate'"),
        ("Discard XY 0", "not a tile code"),
        ("NoClaim many", "integer"),
        ("Discard 1B 0", "not being played"),
        ("SaveState now", "not supported"),
        ("Connect 1110 0 Ann", "already have a player ID"),
        ("SetPlayerOption Colour 0 0", "unknown player option"),
    ] {
        client.send(line).await;
        expect_error(client.message().await, says);
    }
    client.send_raw(&[b'D', 0xff, 0xfe, b'\r', b'\n']).await;
    expect_error(client.message().await, "unknown player message type");
    // A message continued over physical lines is bounded too.
    client.send_raw(b"Discard 1B 0\\\r\n").await;
    for _ in 0..5 {
        client.send_raw(&[&b"z".repeat(1000)[..], b"\\\r\n"].concat()).await;
    }
    client.send_raw(b"end\r\n").await;
    expect_error(client.message().await, "line too long");
    expect_error(client.message().await, "unknown player message type 'end'");
    // The table is as it was: one seat taken, not started.
    let tables = app.api.get("/api/v1/tables").await;
    let table = &tables["tables"].as_array().expect("a list")[0];
    assert_eq!(table["state"], "open", "{table}");
    assert_eq!(table["seats"].as_array().unwrap().iter().filter(|s| !s["name"].is_null()).count(), 1);
    // A refused connection: wrong major version.
    let mut old = ClassicClient::connect(addr).await;
    old.send("Connect 2000 0 Old").await;
    assert!(matches!(old.message().await, ControllerMessage::ConnectReply { id: 0, .. }));
    assert_eq!(old.line().await, None, "a refused connection is closed");
    app.finish().await;
}

#[tokio::test]
async fn a_unix_socket_serves_the_classic_protocol_too() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("classic.sock").to_string_lossy().into_owned();
    let listener = ClassicListener::bind(&path).await.expect("bind the Unix socket");
    let app = TestApp::spawn_serving(
        "memory",
        mahjong::table::TableDefaults::default(),
        Serving { classic: Some(listener), ..Serving::default() },
    )
    .await;
    let stream = tokio::net::UnixStream::connect(&path).await.expect("connect to the Unix socket");
    let (read, mut write) = stream.into_split();
    write.write_all(b"Connect 1110 0 Una\r\n").await.unwrap();
    let mut line = String::new();
    let mut reader = tokio::io::BufReader::new(read);
    tokio::time::timeout(common::app::WAIT, reader.read_line(&mut line))
        .await
        .expect("a line within the wait")
        .unwrap();
    assert_eq!(line, "ConnectReply 1110 1 \r\n");
    app.finish().await;
}

#[tokio::test]
async fn a_player_who_leaves_before_the_game_starts_frees_its_seat() {
    let (app, addr) = classic_server(mahjong::table::TableDefaults::default()).await;
    let (ann, ann_id) = join(addr, "Ann", 0).await;
    let (mut bob, bob_id) = join(addr, "Bob", 0).await;
    assert_eq!((ann_id, bob_id), (1, 2));
    assert_eq!(bob.message().await, ControllerMessage::Player { id: 1, name: "Ann".into() });
    ann.close().await;
    // Bob is told Ann is gone (a Player message with no name), and her seat is free again.
    loop {
        match bob.message().await {
            ControllerMessage::Player { id: 1, name } if name.is_empty() => break,
            _ => continue,
        }
    }
    let (_cy, cy_id) = join(addr, "Cy", 0).await;
    assert_eq!(cy_id, 1, "Cy takes the seat Ann left, at the same table");
    assert_eq!(bob.message().await, ControllerMessage::Player { id: 1, name: "Cy".into() });
    app.finish().await;
}

/// Connects as `name` to an account-named seat; answers `AuthReqd` with
/// `password`: the `ConnectReply`.
async fn connect_with_password(addr: SocketAddr, name: &str, password: Option<&str>) -> ControllerMessage {
    let mut client = ClassicClient::connect(addr).await;
    client.send(&format!("Connect 1110 0 {name}")).await;
    let mut reply = client.message().await;
    if let (ControllerMessage::AuthReqd { authtype, .. }, Some(password)) = (&reply, password) {
        assert_eq!(authtype, "basic");
        client.send(&format!("AuthInfo basic {password}")).await;
        reply = client.message().await;
    }
    reply
}

#[tokio::test]
async fn a_registered_name_must_give_its_password_or_is_refused_when_the_server_says_so() {
    let (app, addr) = classic_server(mahjong::table::TableDefaults::default()).await;
    app.api.register("Dora", "a long enough password").await;
    let refused = connect_with_password(addr, "Dora", Some("not her password")).await;
    assert!(
        matches!(&refused, ControllerMessage::ConnectReply { id: 0, reason, .. } if reason == "Authentication failure"),
        "{refused}"
    );
    let asked = connect_with_password(addr, "Dora", None).await;
    assert!(matches!(asked, ControllerMessage::AuthReqd { .. }), "{asked}");
    let accepted = connect_with_password(addr, "Dora", Some("a long enough password")).await;
    assert!(matches!(accepted, ControllerMessage::ConnectReply { id: 1, .. }), "{accepted}");
    let guest = connect_with_password(addr, "Eve", None).await;
    // (Id 1 or 2: Dora's seat is freed once the server sees her connection close.)
    assert!(
        matches!(guest, ControllerMessage::ConnectReply { id: 1 | 2, .. }),
        "a name of no account plays as a guest: {guest}"
    );
    app.finish().await;

    // `--classic-no-accounts`: an account's name is refused outright.
    let listener = ClassicListener::bind("127.0.0.1:0").await.unwrap();
    let addr: SocketAddr = listener.local_addr().parse().unwrap();
    let serving = Serving { classic: Some(listener), classic_refuses_accounts: true, ..Serving::default() };
    let app = TestApp::spawn_serving("memory", mahjong::table::TableDefaults::default(), serving).await;
    app.api.register("Dora", "a long enough password").await;
    let refused = connect_with_password(addr, "Dora", Some("a long enough password")).await;
    assert!(
        matches!(&refused, ControllerMessage::ConnectReply { id: 0, reason, .. } if reason.contains("registered account")),
        "{refused}"
    );
    app.finish().await;
}

/// Connects from `from` with `Connect 1110 ID NAME`, answering `AuthReqd`
/// with `password` if asked: the `ConnectReply` (or the `AuthReqd`, unanswered).
async fn reconnect(addr: SocketAddr, from: &str, id: i32, name: &str, password: Option<&str>) -> ControllerMessage {
    let mut client = ClassicClient::connect_from(addr, from.parse().unwrap()).await;
    client.send(&format!("Connect 1110 {id} {name}")).await;
    let mut reply = client.message().await;
    if let (ControllerMessage::AuthReqd { .. }, Some(password)) = (&reply, password) {
        client.send(&format!("AuthInfo basic {password}")).await;
        reply = client.message().await;
    }
    reply
}

/// The reason of a refusing `ConnectReply`.
fn refusal(reply: &ControllerMessage) -> Option<&str> {
    match reply {
        ControllerMessage::ConnectReply { id: 0, reason, .. } => Some(reason),
        _ => None,
    }
}

/// Waits until the server has seen `id`'s connection close: a reconnection
/// is no longer answered "already connected elsewhere".
async fn until_away(addr: SocketAddr, from: &str, id: i32, password: Option<&str>) -> ControllerMessage {
    loop {
        let reply = reconnect(addr, from, id, "Mallory", password).await;
        if !refusal(&reply).is_some_and(|r| r.contains("already connected")) {
            return reply;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

async fn a_seat_is_given_back_by_its_id_only_with_its_credential(backend: &str) {
    use serde_json::json;
    let (app, addr) = classic_server_on(backend, mahjong::table::TableDefaults::default()).await;
    app.api.register("Dora", "a long enough password").await;
    let table = app
        .api
        .create_table(json!({"classic": true, "robots": [{"seat": 2}, {"seat": 3}], "options": {"Timeout": 0}}))
        .await;
    let (ann, ann_id) = join(addr, &format!("Ann@{table}"), 0).await;
    let mut dora = ClassicClient::connect(addr).await;
    dora.send(&format!("Connect 1110 0 Dora@{table}")).await;
    assert!(matches!(dora.message().await, ControllerMessage::AuthReqd { .. }));
    dora.send("AuthInfo basic a long enough password").await;
    let dora_reply = dora.message().await;
    let ControllerMessage::ConnectReply { id: dora_id, .. } = dora_reply else { panic!("{dora_reply}") };
    assert!(dora_id > 0);
    // The game starts once both are there; then both drop.
    let started = async {
        while app.api.table_info(&table).await["state"] != "playing" {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(30), started).await.expect("the game starts");
    ann.close().await;
    // A guest's seat: another address with its id is refused (it would be
    // told the guest's tiles); its own address gets it back.
    let hijack = until_away(addr, "127.0.0.2", ann_id, None).await;
    assert!(refusal(&hijack).is_some_and(|r| r.contains("another address")), "{hijack}");
    let back = reconnect(addr, "127.0.0.1", ann_id, "Ann", None).await;
    assert!(matches!(back, ControllerMessage::ConnectReply { id, .. } if id == ann_id), "{back}");
    // An account's seat: the account's password, whatever name or address.
    dora.close().await;
    let asked = until_away(addr, "127.0.0.1", dora_id, None).await;
    assert!(matches!(asked, ControllerMessage::AuthReqd { .. }), "the password is asked for: {asked}");
    let wrong = reconnect(addr, "127.0.0.2", dora_id, "Mallory", Some("not her password")).await;
    assert_eq!(refusal(&wrong), Some("Authentication failure"), "{wrong}");
    let right = reconnect(addr, "127.0.0.3", dora_id, "Dora", Some("a long enough password")).await;
    assert!(matches!(right, ControllerMessage::ConnectReply { id, .. } if id == dora_id), "{right}");
    app.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_guest_who_gave_a_password_gets_its_seat_back_with_it_from_anywhere() {
    use serde_json::json;
    let listener = ClassicListener::bind("127.0.0.1:0").await.unwrap();
    let addr: SocketAddr = listener.local_addr().parse().unwrap();
    let serving = Serving { classic: Some(listener), classic_guest_passwords: true, ..Serving::default() };
    let app = TestApp::spawn_serving("memory", mahjong::table::TableDefaults::default(), serving).await;
    let table = app.api.create_table(json!({"classic": true, "robots": [{"seat": 1}, {"seat": 2}, {"seat": 3}]})).await;
    // Asked for a password when it first connects, as mj-server asks with --auth-basic.
    let first = connect_with_password(addr, &format!("Eve@{table}"), Some("open sesame")).await;
    let ControllerMessage::ConnectReply { id, .. } = first else { panic!("{first}") };
    assert!(id > 0, "{first}");
    let wrong = until_away(addr, "127.0.0.2", id, Some("guess")).await;
    assert_eq!(refusal(&wrong), Some("Authentication failure"), "{wrong}");
    // Guesses are limited as logins are: five wrong ones from an address,
    // then that address waits, even with the right password; another does not.
    for n in 2..=5 {
        let wrong = reconnect(addr, "127.0.0.2", id, "Eve", Some(&format!("guess {n}"))).await;
        assert_eq!(refusal(&wrong), Some("Authentication failure"), "{wrong}");
    }
    let limited = reconnect(addr, "127.0.0.2", id, "Eve", Some("open sesame")).await;
    assert!(refusal(&limited).is_some_and(|r| r.contains("too many attempts")), "{limited}");
    let right = reconnect(addr, "127.0.0.3", id, "Eve", Some("open sesame")).await;
    assert!(matches!(right, ControllerMessage::ConnectReply { id: back, .. } if back == id), "{right}");
    app.finish().await;
}

async fn names_are_read_by_the_text_policy_before_any_account_is_looked_up(backend: &str) {
    let (app, addr) = classic_server_on(backend, mahjong::table::TableDefaults::default()).await;
    app.api.register("vic", "a long enough password").await;
    // An invisible character at the edge is trimmed: the account's name, its password asked.
    let asked = connect_with_password(addr, "vic\u{200B}", None).await;
    assert!(matches!(asked, ControllerMessage::AuthReqd { .. }), "{asked}");
    // Inside the name it makes a look-alike, which a guest may not take.
    let refused = connect_with_password(addr, "v\u{200B}ic", None).await;
    assert!(refusal(&refused).is_some_and(|r| r.contains("looks too much like")), "{refused}");
    let robot = connect_with_password(addr, "Robot 2", None).await;
    assert!(refusal(&robot).is_some_and(|r| r.contains("robot")), "{robot}");
    app.finish().await;
}

#[tokio::test]
async fn classic_connections_are_capped_per_address() {
    let listener = ClassicListener::bind("127.0.0.1:0").await.unwrap();
    let addr: SocketAddr = listener.local_addr().parse().unwrap();
    let limits = mahjong::limits::Limits { classic_per_address: 2, ..Default::default() };
    let serving = Serving { classic: Some(listener), limits, ..Serving::default() };
    let app = TestApp::spawn_serving("memory", mahjong::table::TableDefaults::default(), serving).await;
    let (_a, _) = join(addr, "Ann", 0).await;
    let (_b, _) = join(addr, "Bob", 0).await;
    let mut third = ClassicClient::connect(addr).await;
    let reply = third.message().await;
    assert!(refusal(&reply).is_some_and(|r| r.contains("classic-protocol connections")), "{reply}");
    assert_eq!(third.line().await, None, "and closed");
    let (_c, _) = {
        let mut c = ClassicClient::connect_from(addr, "127.0.0.2".parse().unwrap()).await;
        c.send("Connect 1110 0 Cy").await;
        let reply = c.message().await;
        assert!(matches!(reply, ControllerMessage::ConnectReply { id, .. } if id > 0), "another address: {reply}");
        (c, ())
    };
    app.finish().await;
}
