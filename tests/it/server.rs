//! The server through its real interface: a server on a random port, REST
//! over HTTP and real WebSocket clients.

use crate::common;

use std::collections::BTreeSet;
use std::time::Duration;

use common::app::{TestApp, WAIT};
use mahjong::bots::Strategy;
use mahjong::protocol::ws::{ClientMessage, ServerMessage, StreamEvent, TableEvent, WsErrorCode};
use mahjong::rules::event::Event;
use mahjong::rules::{Action, Claim, Decision};
use mahjong::table::TableDefaults;
use mahjong_tools::client::{SeatPlan, TableSocket, http_raw, play_seat};
use serde_json::{Value, json};

const QUIET: Duration = Duration::from_millis(40);

/// Reads messages until `stop` says so; returns them.
async fn read_until(socket: &mut TableSocket, mut stop: impl FnMut(&ServerMessage) -> bool) -> Vec<ServerMessage> {
    let mut out = Vec::new();
    loop {
        let (m, _) = socket.next(WAIT).await.unwrap().expect("the socket stays open");
        let done = stop(&m);
        out.push(m);
        if done {
            return out;
        }
    }
}

fn is_game_over(m: &ServerMessage) -> bool {
    matches!(m, ServerMessage::Event { event: StreamEvent::Game(Event::GameOver { .. }), .. })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_person_and_three_robots_play_a_whole_game() {
    let app = TestApp::spawn("memory", TableDefaults::default()).await;
    let (addr, api) = (app.addr, app.api);
    let id = api.table(&[1, 2, 3], json!({"NumRounds": 1})).await;
    let token = api.sit(&id, "Alice", 0).await;
    let info = api.table_info(&id).await;
    assert_eq!(info["manager"], 0, "the first person to sit manages the game");
    api.start(&id, Some(&token)).await;
    let mut socket = TableSocket::connect(addr, &id, Some(&token), None).await.unwrap();
    let log = play_seat(&mut socket, SeatPlan::new(0)).await.unwrap();
    assert!(log.game_over);
    assert!(log.moves > 10, "the person played ({} moves)", log.moves);
    assert!(log.errors.is_empty(), "{:?}", log.errors);
    // From the prompts alone: one snapshot when connecting, none asked for.
    let kinds: Vec<String> = log
        .received
        .iter()
        .map(|t| serde_json::from_str::<Value>(t).unwrap()["type"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(kinds.iter().filter(|k| *k == "snapshot").count(), 1, "only the first message is a snapshot");
    assert_eq!(kinds[0], "snapshot");
    assert!(kinds.iter().filter(|k| *k == "prompt").count() > log.moves, "a prompt for every move, and more");
    let info = api.table_info(&id).await;
    assert_eq!(info["state"], "over");
    let total: i64 = info["scores"].as_array().unwrap().iter().map(|v| v.as_i64().unwrap()).sum();
    assert_eq!(total, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_remote_players_play_a_hand() {
    let app = TestApp::spawn("memory", TableDefaults::default()).await;
    let (addr, api) = (app.addr, app.api);
    let id = api.table(&[], json!({})).await;
    let mut tokens = Vec::new();
    for (seat, name) in ["Ann", "Bo", "Cy", "Di"].iter().enumerate() {
        tokens.push(api.sit(&id, name, seat as u8).await);
    }
    // Only the manager may start.
    let a = api.request("POST", &format!("/api/v1/tables/{id}/start"), None, Some(&tokens[1])).await;
    assert_eq!((a.status, a.body["error"]["code"].as_str()), (403, Some("not_manager")));
    api.start(&id, Some(&tokens[0])).await;
    let mut players = Vec::new();
    for (seat, token) in tokens.iter().enumerate() {
        let id = id.clone();
        let token = token.clone();
        players.push(tokio::spawn(async move {
            let mut socket = TableSocket::connect(addr, &id, Some(&token), None).await.unwrap();
            play_seat(&mut socket, SeatPlan { max_hands: Some(1), ..SeatPlan::new(seat as u8) }).await.unwrap()
        }));
    }
    for p in players {
        let log = p.await.unwrap();
        assert_eq!(log.hands_ended, 1);
        assert!(log.moves > 0);
        assert!(log.errors.is_empty(), "{:?}", log.errors);
    }
}

/// The tiles a spectator's message shows that belong in someone's concealed
/// hand before they are revealed: any drawn or passed tile, any concealed
/// tiles of a seat in a snapshot while its hand is in play.
fn hidden_tiles_shown(m: &ServerMessage) -> Option<String> {
    match m {
        ServerMessage::Event { event: StreamEvent::Game(e), .. } => match e {
            Event::Drew { tile: Some(t), .. } => Some(format!("drew {t}")),
            Event::TilePassed { tile: Some(t), .. } => Some(format!("passed {t}")),
            Event::TileReceived { .. } => Some("a received tile".into()),
            _ => None,
        },
        ServerMessage::Snapshot { game: Some(view), .. } => view.hand.as_ref().and_then(|h| {
            h.seats
                .iter()
                .find(|s| s.concealed.is_some() && s.score.is_none())
                .map(|s| format!("seat {:?} concealed", s.player))
        }),
        _ => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spectator_follows_a_whole_game_and_sees_no_concealed_tile() {
    let app = TestApp::spawn("memory", TableDefaults::default()).await;
    let (addr, api) = (app.addr, app.api);
    let id = api.table(&[0, 1, 2, 3], json!({"NumRounds": 1, "ShowOnWashout": false})).await;
    let mut spectator = TableSocket::connect(addr, &id, None, None).await.unwrap();
    let first = spectator.next(WAIT).await.unwrap().unwrap().0;
    assert!(matches!(first, ServerMessage::Snapshot { seat: None, .. }));
    let info = api.table_info(&id).await;
    assert_eq!(info["spectators"], 1);
    api.start(&id, None).await;
    let messages = read_until(&mut spectator, is_game_over).await;
    let (mut shown, mut revealed) = (0, 0);
    for m in &messages {
        assert_eq!(hidden_tiles_shown(m), None, "a spectator saw a hidden tile");
        if let ServerMessage::Event { event: StreamEvent::Game(Event::Drew { .. }), .. } = m {
            shown += 1;
        }
        if let ServerMessage::Event { event: StreamEvent::Game(Event::ShowedTiles { .. }), .. } = m {
            revealed += 1;
        }
    }
    assert!(shown > 100 && revealed > 0, "the spectator followed the game ({shown} draws, {revealed} reveals)");
    // Sequence numbers increase by one: a spectator sees every public event.
    let seqs: Vec<u64> = messages
        .iter()
        .filter_map(|m| match m {
            ServerMessage::Event { seq, .. } => Some(*seq),
            _ => None,
        })
        .collect();
    assert!(seqs.windows(2).all(|w| w[1] > w[0]));
    // A spectator cannot act.
    spectator.send(&ClientMessage::Chat { text: "hello".into() }).await.unwrap();
    let (reply, _) = spectator.next(WAIT).await.unwrap().unwrap();
    assert!(matches!(reply, ServerMessage::Error { code: WsErrorCode::NotAllowed, .. }), "{reply:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_player_who_reconnects_with_its_token_misses_nothing() {
    // A robot stands in for a disconnected player at once, so the game goes on
    // meanwhile; a pause between actions keeps it from racing more than a hand
    // past the player (the table keeps two hands' events for resuming).
    let app = TestApp::spawn(
        "memory",
        TableDefaults { robot_takeover_secs: Some(0), pause_deciseconds: 1, ..TableDefaults::default() },
    )
    .await;
    let (addr, api) = (app.addr, app.api);
    let id = api.table(&[1, 2, 3], json!({"NumRounds": 1})).await;
    let token = api.sit(&id, "Eve", 0).await;
    let mut witness = TableSocket::connect(addr, &id, None, None).await.unwrap();
    api.start(&id, Some(&token)).await;
    let mut player = TableSocket::connect(addr, &id, Some(&token), None).await.unwrap();
    let mut mine = Vec::new();
    // Make a few moves, then drop the connection mid-hand.
    let log = play_seat(&mut player, SeatPlan { max_moves: Some(3), ..SeatPlan::new(0) }).await.unwrap();
    // The first snapshot stands for everything before it.
    let from = match serde_json::from_str(&log.received[0]).unwrap() {
        ServerMessage::Snapshot { table, .. } => table.seq,
        other => panic!("the first message is a snapshot, not {other:?}"),
    };
    collect_seqs(&log.received, &mut mine);
    let last = player.last_seq;
    player.close().await;
    // Meanwhile the game goes on.
    let mut seen =
        read_until(&mut witness, |m| matches!(m, ServerMessage::Event { seq, .. } if *seq > last + 20)).await;
    let mut back = TableSocket::connect(addr, &id, Some(&token), Some(last)).await.unwrap();
    let log = play_seat(&mut back, SeatPlan { max_hands: Some(1), ..SeatPlan::new(0) }).await.unwrap();
    assert!(log.errors.is_empty(), "{:?}", log.errors);
    collect_seqs(&log.received, &mut mine);
    let end = back.last_seq;
    seen.extend(read_until(&mut witness, |m| matches!(m, ServerMessage::Event { seq, .. } if *seq >= end)).await);
    // No duplicates, and every public event up to the end was received.
    let unique: BTreeSet<u64> = mine.iter().copied().collect();
    assert_eq!(unique.len(), mine.len(), "an event was received twice");
    assert!(mine.windows(2).all(|w| w[0] < w[1]), "events arrive in order");
    let mut checked = 0;
    for m in &seen {
        // A player sees its own draws in its own version, not the others'.
        let own_draw_for_others = matches!(m,
            ServerMessage::Event { event: StreamEvent::Game(Event::Drew { player, .. }), .. } if player.0 == 0);
        if let ServerMessage::Event { seq, .. } = m
            && *seq > from
            && *seq <= end
            && !own_draw_for_others
        {
            assert!(unique.contains(seq), "public event {seq} was missed across the reconnection: {m:?}");
            checked += 1;
        }
    }
    assert!(checked > 40, "{checked} public events compared");
    // The others were told of the disconnection and of the return.
    let table_event = |m: &ServerMessage, want: fn(&TableEvent) -> bool| matches!(m, ServerMessage::Event { event: StreamEvent::Table(e), .. } if want(e));
    assert!(seen.iter().any(|m| table_event(m, |e| matches!(e, TableEvent::Disconnected { seat: 0 }))));
    // (The return may come after `end`, if a whole hand ended while the player was away.)
    if !seen.iter().any(|m| table_event(m, |e| matches!(e, TableEvent::Reconnected { seat: 0 }))) {
        read_until(&mut witness, |m| table_event(m, |e| matches!(e, TableEvent::Reconnected { seat: 0 }))).await;
    }
}

fn collect_seqs(received: &[String], into: &mut Vec<u64>) {
    for text in received {
        if let Ok(ServerMessage::Event { seq, .. }) = serde_json::from_str(text) {
            into.push(seq);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_player_is_passed_when_the_claim_times_out() {
    let app = TestApp::spawn("memory", TableDefaults::default()).await;
    let (addr, api) = (app.addr, app.api);
    let id = api.table(&[0, 2, 3], json!({"Timeout": 1, "TimeoutGrace": 0})).await;
    let token = api.sit(&id, "Sam", 1).await;
    api.start(&id, Some(&token)).await;
    let mut socket = TableSocket::connect(addr, &id, Some(&token), None).await.unwrap();
    // Asked about every discard: otherwise the table passes at once for us
    // whenever we cannot claim (`timeout: false`).
    socket.send(&ClientMessage::SetClaimPrompts { every_discard: true }).await.unwrap();
    socket.send(&ClientMessage::Ready).await.unwrap();
    // Make every move but answering a discard; then the table passes for us.
    let robot = mahjong::bots::Robot::new(Strategy::default(), mahjong::rules::GameOptions::default());
    let mut asked = false;
    let started = std::time::Instant::now();
    loop {
        let next = match socket.next(QUIET).await {
            Ok(m) => m,
            Err(_) => {
                if !asked {
                    socket.send(&ClientMessage::Snapshot).await.unwrap();
                    asked = true;
                }
                continue;
            }
        };
        let (m, _) = next.expect("the socket stays open");
        match m {
            ServerMessage::Snapshot { game: Some(view), .. } => {
                asked = false;
                let due = view.hand.as_ref().and_then(|h| h.my_decision);
                if due.is_some() && due != Some(Decision::AnswerDiscard) {
                    let action = robot.decide(&view).unwrap();
                    socket.send(&ClientMessage::Act { action }).await.unwrap();
                }
            }
            ServerMessage::Event { event: StreamEvent::Game(Event::Passed { player, timeout, .. }), .. } => {
                assert_eq!(player.0, 1, "a player is told only of its own passes");
                assert!(timeout, "we never passed: only the timeout can");
                break;
            }
            ServerMessage::Error { message, .. } => panic!("{message}"),
            _ => {}
        }
        assert!(started.elapsed() < Duration::from_secs(30), "no claim timed out");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_messages_get_specific_errors_and_change_nothing() {
    let app = TestApp::spawn("memory", TableDefaults::default()).await;
    let (addr, api) = (app.addr, app.api);
    let id = api.table(&[1, 2, 3], json!({})).await;
    let token = api.sit(&id, "Max", 0).await;
    api.start(&id, Some(&token)).await;
    let mut socket = TableSocket::connect(addr, &id, Some(&token), None).await.unwrap();
    socket.send(&ClientMessage::Ready).await.unwrap();
    // Wait for the deal: we are East, declaring first.
    read_until(&mut socket, |m| {
        matches!(m, ServerMessage::Event { event: StreamEvent::Game(Event::HandStarted { .. }), .. })
    })
    .await;
    let before = snapshot(&mut socket).await;
    let error = |m: &ServerMessage| match m {
        ServerMessage::Error { code, message } => Some((code.to_string(), message.clone())),
        _ => None,
    };
    for (text, code, needle) in [
        ("{not json".to_string(), "bad_message", "key must be a string"),
        (r#"{"type":"fly"}"#.to_string(), "bad_message", "unknown variant `fly`"),
        (r#"{"type":"act","action":{"action":"discard","tile":"ZZ"}}"#.to_string(), "bad_message", "ZZ"),
        (r#"{"type":"act","action":{"action":"pass","discard":99}}"#.to_string(), "illegal_move", ""),
        (r#"{"type":"act","action":{"action":"show_tiles"}}"#.to_string(), "illegal_move", "only after Mah-Jong"),
        (r#"{"type":"chat","text":""}"#.to_string(), "bad_message", "chat message"),
        (r#"{"type":"set_pause","deciseconds":99}"#.to_string(), "bad_message", "at most 50"),
        (r#"{"type":"set_option","name":"Bogus","value":"1"}"#.to_string(), "bad_option", "between hands"),
        (format!(r#"{{"type":"chat","text":"{}"}}"#, "x".repeat(5000)), "too_large", "at most 4096 bytes"),
    ] {
        socket.send_text(text.clone()).await.unwrap();
        let reply = read_until(&mut socket, |m| error(m).is_some()).await;
        let (got_code, message) = error(reply.last().unwrap()).unwrap();
        assert_eq!(got_code, code, "{text}: {message}");
        assert!(message.contains(needle), "{text}: {message}");
    }
    // Out of turn: South (a robot) is not us; claiming a discard that is not there.
    socket.send(&ClientMessage::Act { action: Action::Claim { discard: 1, claim: Claim::Pung } }).await.unwrap();
    let reply = read_until(&mut socket, |m| error(m).is_some()).await;
    assert_eq!(error(reply.last().unwrap()).unwrap().0, "illegal_move");
    let after = snapshot(&mut socket).await;
    assert_eq!(before, after, "refused messages changed nothing");
    // A frame over 64 KiB closes the connection.
    socket.send_text(format!(r#"{{"type":"chat","text":"{}"}}"#, "x".repeat(70_000))).await.unwrap();
    let closed = loop {
        match socket.next(WAIT).await {
            Ok(Some(_)) => continue,
            Ok(None) | Err(_) => break true,
        }
    };
    assert!(closed);
    // REST refusals.
    let a = api.request("POST", "/api/v1/tables", Some(&json!({"options": {"Bogus": 1}})), None).await;
    assert_eq!(a.status, 400);
    assert!(a.body["error"]["message"].as_str().unwrap().contains("Bogus"));
    let a = api.request("POST", &format!("/api/v1/tables/{id}/seats"), Some(&json!({"name": "Late"})), None).await;
    assert_eq!(a.status, 409);
    let a = api.request("GET", "/api/v1/tables/nope", None, None).await;
    assert_eq!((a.status, a.body["error"]["code"].as_str()), (404, Some("no_such_table")));
    let a = http_raw(
        addr,
        b"POST /api/v1/tables HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 5\r\n\r\n{bad}",
    )
    .await
    .unwrap();
    assert_eq!(a.status, 400);
    let big = "x".repeat(100_000);
    let a = api.request("POST", "/api/v1/tables", Some(&json!({"name": big})), None).await;
    assert_eq!((a.status, a.body["error"]["code"].as_str()), (413, Some("too_large")), "{}", a.body);
    let a = api.request("GET", "/api/v1/settle", None, None).await;
    assert_eq!((a.status, a.body["error"]["code"].as_str()), (405, Some("method_not_allowed")), "{}", a.body);
    let a = api.request("DELETE", &format!("/api/v1/tables/{id}/robots/east"), None, None).await;
    assert_eq!((a.status, a.body["error"]["code"].as_str()), (400, Some("bad_request")), "{}", a.body);
    let a = TableSocket::connect(addr, &id, Some("not-a-token"), None).await;
    assert!(a.is_err(), "a bad token is refused before the upgrade");
}

async fn snapshot(socket: &mut TableSocket) -> Value {
    socket.send(&ClientMessage::Snapshot).await.unwrap();
    let m = read_until(socket, |m| matches!(m, ServerMessage::Snapshot { .. })).await;
    let mut v = serde_json::to_value(m.last().unwrap()).unwrap();
    // The connection count and sequence number are not game state.
    v["table"]["seq"] = Value::Null;
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_manager_sets_options_chat_reaches_everyone_and_a_pause_waits_for_all() {
    let app = TestApp::spawn("memory", TableDefaults::default()).await;
    let (addr, api) = (app.addr, app.api);
    let id = api.table(&[2, 3], json!({})).await;
    let a = api.sit(&id, "Ann", 0).await;
    let b = api.sit(&id, "Bob", 1).await;
    let mut ann = TableSocket::connect(addr, &id, Some(&a), None).await.unwrap();
    let mut bob = TableSocket::connect(addr, &id, Some(&b), None).await.unwrap();
    for s in [&mut ann, &mut bob] {
        read_until(s, |m| matches!(m, ServerMessage::Snapshot { .. })).await;
    }
    let error_code = |m: &ServerMessage| match m {
        ServerMessage::Error { code, .. } => Some(code.to_string()),
        _ => None,
    };
    // Only the manager (the first to sit) changes options.
    bob.send(&ClientMessage::SetOption { name: "Timeout".into(), value: "5".into() }).await.unwrap();
    let reply = read_until(&mut bob, |m| error_code(m).is_some()).await;
    assert_eq!(error_code(reply.last().unwrap()).as_deref(), Some("not_allowed"));
    ann.send(&ClientMessage::SetOption { name: "Timeout".into(), value: "5".into() }).await.unwrap();
    read_until(&mut bob, |m| {
        matches!(m, ServerMessage::Event { event: StreamEvent::Table(TableEvent::OptionChanged { name, value }), .. }
            if name == "Timeout" && value == "5")
    })
    .await;
    // Chat reaches the others.
    ann.send(&ClientMessage::Chat { text: "good luck".into() }).await.unwrap();
    read_until(&mut bob, |m| {
        matches!(m, ServerMessage::Event { event: StreamEvent::Table(TableEvent::Chat { seat: 0, text, .. }), .. }
            if text == "good luck")
    })
    .await;
    api.start(&id, Some(&a)).await;
    for s in [&mut ann, &mut bob] {
        s.send(&ClientMessage::Ready).await.unwrap();
    }
    read_until(&mut bob, |m| {
        matches!(m, ServerMessage::Event { event: StreamEvent::Game(Event::HandStarted { .. }), .. })
    })
    .await;
    let snap = snapshot(&mut ann).await;
    assert_eq!(snap["game"]["options"]["timeout"], 5, "the game plays with the changed option: {snap}");
    // A pause: play stops until both have said ready again.
    ann.send(&ClientMessage::RequestPause { reason: "phone".into() }).await.unwrap();
    read_until(&mut bob, |m| {
        matches!(m, ServerMessage::Event { event: StreamEvent::Table(TableEvent::Paused { seat: 0, .. }), .. })
    })
    .await;
    assert_eq!(snapshot(&mut bob).await["table"]["paused"], true);
    bob.send(&ClientMessage::Act { action: Action::FinishDeclaring }).await.unwrap();
    let reply = read_until(&mut bob, |m| error_code(m).is_some()).await;
    assert_eq!(error_code(reply.last().unwrap()).as_deref(), Some("not_now"));
    ann.send(&ClientMessage::Ready).await.unwrap();
    assert_eq!(snapshot(&mut bob).await["table"]["paused"], true, "one ready is not enough");
    bob.send(&ClientMessage::Ready).await.unwrap();
    assert_eq!(snapshot(&mut bob).await["table"]["paused"], false);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_end_on_disconnect_a_player_leaving_ends_the_game_with_its_penalty() {
    let defaults =
        TableDefaults { end_on_disconnect: true, disconnect_penalties: [5, 10, 20], ..TableDefaults::default() };
    let app = TestApp::spawn("memory", defaults).await;
    let (addr, api) = (app.addr, app.api);
    let id = api.table(&[1, 2, 3], json!({})).await;
    let token = api.sit(&id, "Lee", 0).await;
    let mut witness = TableSocket::connect(addr, &id, None, None).await.unwrap();
    api.start(&id, Some(&token)).await;
    let mut player = TableSocket::connect(addr, &id, Some(&token), None).await.unwrap();
    player.send(&ClientMessage::Ready).await.unwrap();
    read_until(&mut player, |m| {
        matches!(m, ServerMessage::Event { event: StreamEvent::Game(Event::HandStarted { .. }), .. })
    })
    .await;
    let last = player.last_seq;
    player.close().await;
    // Mid-hand: the hand is washed out and the game ends.
    let seen = read_until(&mut witness, is_game_over).await;
    assert!(seen.iter().any(|m| matches!(m,
        ServerMessage::Event { event: StreamEvent::Game(Event::WashedOut { reason }), .. } if reason == "abandoned")));
    assert!(
        !seen
            .iter()
            .any(|m| matches!(m, ServerMessage::Event { event: StreamEvent::Table(TableEvent::Penalty { .. }), .. })),
        "the others are not told the penalty"
    );
    let info = api.table_info(&id).await;
    assert_eq!(info["state"], "over");
    // The player, back, is told its penalty for leaving mid-hand.
    let mut back = TableSocket::connect(addr, &id, Some(&token), Some(last)).await.unwrap();
    read_until(&mut back, |m| {
        matches!(m, ServerMessage::Event { event: StreamEvent::Table(TableEvent::Penalty { seat: 0, points: 5 }), .. })
    })
    .await;
}

/// Each way a table lets a player's connection go while it goes on has its
/// own close code: a newer connection for the seat (4002) and the seat left
/// (4003) are for good; falling behind (4000, `stream`'s unit tests) is to
/// reconnect from.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_let_go_is_told_why_by_its_close_code() {
    let app = TestApp::spawn("memory", TableDefaults::default()).await;
    let (addr, api) = (app.addr, app.api);
    let id = api.table(&[1, 2, 3], json!({})).await;
    let token = api.sit(&id, "Lee", 0).await;
    let mut first = TableSocket::connect(addr, &id, Some(&token), None).await.unwrap();
    let mut second = TableSocket::connect(addr, &id, Some(&token), None).await.unwrap();
    assert_eq!(first.close_code(WAIT).await.unwrap(), Some(mahjong::http::ws::CLOSE_REPLACED));
    let left = api.request("DELETE", &format!("/api/v1/tables/{id}/seats"), None, Some(&token)).await;
    assert_eq!(left.status, 204, "{}", left.body);
    assert_eq!(second.close_code(WAIT).await.unwrap(), Some(mahjong::http::ws::CLOSE_SEAT_LEFT));
}

/// The option catalogue (`GET /api/v1/options`) names every option of the
/// engine's catalogue with a label in words, its type, default and bounds;
/// a table's snapshot carries the options in force by the same names, and
/// the manager's change (`set_option`) reaches the next snapshot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_option_catalogue_and_a_tables_options_in_force() {
    let app = TestApp::spawn("memory", TableDefaults::default()).await;
    let (addr, api) = (app.addr, app.api);
    let catalogue = api.get("/api/v1/options").await;
    let entries = catalogue["options"].as_array().expect("a list of options");
    let names: Vec<&str> = entries.iter().filter_map(|e| e["name"].as_str()).collect();
    let engine: Vec<&str> = mahjong::rules::options::CATALOGUE.iter().map(|s| s.name).collect();
    assert_eq!(names, engine, "every option, in the catalogue's order");
    let entry = |name: &str| entries.iter().find(|e| e["name"] == name).unwrap().clone();
    for e in entries {
        assert_ne!(e["label"], e["name"], "{e}");
        assert!(!e["description"].as_str().unwrap_or_default().is_empty(), "{e}");
    }
    let rounds = entry("NumRounds");
    assert_eq!((rounds["type"].clone(), rounds["default"].clone()), (json!("nat"), json!(4)));
    assert_eq!(rounds["allowed"].as_array().unwrap()[..4], [json!(1), json!(2), json!(4), json!(8)]);
    assert_eq!(entry("Timeout")["max"], 3600);
    assert_eq!(entry("SevenPairs")["type"], "bool");
    assert_eq!(entry("RoundMode")["words"], json!(["none", "off", "up"]));
    assert_eq!(entry("FlowersOwnBoth")["default"], 10000, "a score: one double");

    let id = api.table(&[1, 2, 3], json!({"NumRounds": 1})).await;
    let token = api.sit(&id, "Olive", 0).await;
    let mut socket = TableSocket::connect(addr, &id, Some(&token), None).await.unwrap();
    let snapshot_options = |m: &ServerMessage| match m {
        ServerMessage::Snapshot { options, .. } => Some(options.clone()),
        _ => None,
    };
    let first = read_until(&mut socket, |m| snapshot_options(m).is_some()).await;
    let options = first.iter().find_map(snapshot_options).unwrap();
    assert_eq!(options.len(), engine.len(), "every option in force: {options:?}");
    assert_eq!((options["NumRounds"].clone(), options["SevenPairs"].clone()), (json!(1), json!(false)));
    socket.send(&ClientMessage::SetOption { name: "SevenPairs".into(), value: json!(true) }).await.unwrap();
    socket.send(&ClientMessage::Snapshot).await.unwrap();
    let after = read_until(&mut socket, |m| snapshot_options(m).is_some()).await;
    assert!(after.iter().all(|m| !matches!(m, ServerMessage::Error { .. })), "{after:?}");
    assert_eq!(after.iter().find_map(snapshot_options).unwrap()["SevenPairs"], json!(true));
}

/// `ShowWaits`: at a table with the option on, once East (dealt a hand one
/// discard from waiting on 5 Bamboo) discards, its prompt lists 5 Bamboo as
/// the tile it waits on; with the option off (the default) no prompt lists
/// waits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_player_is_told_its_waits_when_the_table_shows_them() {
    use common::scenario::{t, wall_filling};
    let options = mahjong::rules::GameOptions::default();
    let east = "1B 2B 3B 4C 5C 6C 7D 8D 9D EW EW EW 5B";
    let wall = wall_filling([Some(east), None, None, None], "9C", "", "", &options);
    for show in [true, false] {
        let defaults = TableDefaults { first_wall: Some(wall.clone()), ..TableDefaults::default() };
        let app = TestApp::spawn("memory", defaults).await;
        let (addr, api) = (app.addr, app.api);
        let id = api.table(&[1, 2, 3], json!({"ShowWaits": show})).await;
        let token = api.sit(&id, "Wanda", 0).await;
        api.start(&id, Some(&token)).await;
        let mut socket = TableSocket::connect(addr, &id, Some(&token), None).await.unwrap();
        socket.send(&ClientMessage::Ready).await.unwrap();
        let mut discarded = false;
        let waits = loop {
            let (m, _) = socket.next(WAIT).await.unwrap().expect("the socket stays open");
            let ServerMessage::Prompt(p) = m else { continue };
            if discarded {
                break p.waits;
            }
            assert!(p.waits.is_empty(), "no waits with fourteen tiles: {p:?}");
            let act = |action: Action| ClientMessage::Act { action };
            if p.actions.contains(&Action::FinishDeclaring) {
                socket.send(&act(Action::FinishDeclaring)).await.unwrap();
            } else if p.decision == Some(Decision::Discard) {
                socket.send(&act(Action::Discard { tile: t("9C"), calling: false })).await.unwrap();
                discarded = true;
            }
        };
        let expected = if show { vec![t("5B")] } else { Vec::new() };
        assert_eq!(waits, expected, "ShowWaits {show}");
    }
}
