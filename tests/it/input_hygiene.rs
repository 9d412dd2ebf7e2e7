//! Bad input through the real server, on SQLite and on Postgres: every input
//! below was once found getting through, and each must now be refused with a
//! specific 4xx (REST) or a WebSocket `error` (the code, and a message that
//! says what was wrong) and change nothing.
//!
//! "Changes nothing" is checked, not assumed: the table's info (seats, `seq`,
//! state) and the lobby (`GET /api/v1/tables`, `GET /api/v1/games`) are the
//! same before and after; a WebSocket stays open and its snapshot is the same;
//! no event reaches another connection; and the table still plays a hand
//! afterwards. The inputs: NUL in names (which once killed a table on
//! Postgres), JSON arrays in place of objects, names against the text policy,
//! chat and pause reasons, option values out of bounds or of the wrong JSON
//! type, the HTTP layer's refusals, odd game ids and player filters in the
//! score queries, and a WebSocket message over 4096 bytes.

use crate::common;

use std::net::SocketAddr;

use common::app::{Api, TestApp, WAIT};
use common::on_both_backends;
use mahjong::protocol::ws::ClientMessage;
use mahjong::table::TableDefaults;
use mahjong_tools::client::{SeatPlan, TableSocket, http_raw, play_seat};
use serde_json::{Value, json};

on_both_backends!(
    a_nul_in_a_name_is_refused_and_the_table_lives_on,
    arrays_in_place_of_objects_are_refused_over_rest,
    player_names_follow_the_text_policy,
    table_names_follow_the_text_policy,
    bad_websocket_messages_change_nothing,
    options_are_bounded_and_read_in_their_natural_types,
    http_layer_refusals_carry_a_json_error,
    odd_game_ids_and_player_filters_never_reach_the_store,
);

// ----- helpers --------------------------------------------------------------

/// A request, shown short in assertion messages.
fn label(text: &str) -> String {
    let short: String = text.chars().take(80).collect();
    if short.len() < text.len() { format!("{short:?}... ({} bytes)", text.len()) } else { format!("{short:?}") }
}

/// A REST request that must be refused with this status and code, with a
/// message holding every one of `says`.
async fn refused(api: Api, method: &str, path: &str, body: Option<&Value>, status: u16, code: &str, says: &[&str]) {
    let shown = format!("{method} {} {}", label(path), body.map_or(String::new(), |b| label(&b.to_string())));
    let a = api.request(method, path, body, None).await;
    assert_eq!(a.status, status, "{shown}: the status ({})", a.body);
    assert_eq!(a.body["error"]["code"], code, "{shown}: the error code ({})", a.body);
    let message = a.body["error"]["message"].as_str().unwrap_or_else(|| panic!("{shown}: no message in {}", a.body));
    assert!(!message.trim().is_empty(), "{shown}: the message says why ({})", a.body);
    for needle in says {
        assert!(message.contains(needle), "{shown}: the message {message:?} does not say {needle:?}");
    }
}

/// What the lobby shows: every table and every stored game.
async fn lobby(api: Api) -> Value {
    json!({"tables": api.get("/api/v1/tables").await, "games": api.get("/api/v1/games?limit=100").await})
}

/// A person's seat and its token.
type Person = (u8, String);

/// Plays one hand of a started game: each person in `people` connects with
/// its token and plays from its prompts alone; robots fill the other seats.
/// Every person sees the hand end, without an error.
async fn play_one_hand(addr: SocketAddr, api: Api, table: &str, people: &[Person]) {
    let plays = people.iter().map(|(seat, token)| async move {
        let mut socket = TableSocket::connect(addr, table, Some(token), None).await.expect("a seat connects");
        let plan = SeatPlan { max_hands: Some(1), ..SeatPlan::new(*seat) };
        let log = play_seat(&mut socket, plan).await.unwrap_or_else(|e| panic!("seat {seat} plays a hand: {e}"));
        socket.close().await;
        (*seat, log)
    });
    for (seat, log) in futures_util::future::join_all(plays).await {
        assert_eq!(log.hands_ended, 1, "seat {seat} saw the hand end");
        assert!(log.errors.is_empty(), "seat {seat} was refused nothing: {:?}", log.errors);
    }
    let info = api.table_info(table).await;
    assert_eq!(info["state"], "playing", "the game goes on: {info}");
    assert!(info["hands"].as_i64().unwrap_or(0) >= 1, "a hand was dealt: {info}");
}

/// Seats `name` in `seat` (answered 201), starts the game with its token
/// (the table has robots in its other seats) and plays a hand: the table is
/// alive and playable.
async fn sit_start_and_play(addr: SocketAddr, api: Api, table: &str, name: &str, seat: u8) {
    let token = api.sit(table, name, seat).await;
    api.start(table, Some(&token)).await;
    play_one_hand(addr, api, table, &[(seat, token)]).await;
}

/// The next message on a socket, as JSON; the socket must stay open.
async fn next_message(socket: &mut TableSocket) -> Value {
    let (_, text) = socket.next(WAIT).await.expect("a message within the wait").expect("the socket stays open");
    serde_json::from_str(&text).expect("the server sends JSON")
}

/// Connects to a table (a player with its token, or a spectator) and reads
/// the snapshot a new connection is sent first.
async fn connect(addr: SocketAddr, table: &str, token: Option<&str>) -> TableSocket {
    let mut socket = TableSocket::connect(addr, table, token, None).await.expect("the WebSocket opens");
    let first = next_message(&mut socket).await;
    assert_eq!(first["type"], "snapshot", "a new connection is sent a snapshot first: {first}");
    socket
}

/// A fresh snapshot of what this connection sees (its `seq` included).
async fn snapshot(socket: &mut TableSocket) -> Value {
    socket.send(&ClientMessage::Snapshot).await.expect("send a snapshot request");
    loop {
        let m = next_message(socket).await;
        if m["type"] == "snapshot" {
            return m;
        }
    }
}

/// Sends `text` over the WebSocket: it must be answered with an `error` of
/// this code whose message holds every one of `says`, and no event.
async fn ws_refused(socket: &mut TableSocket, text: &str, code: &str, says: &[&str]) {
    let shown = label(text);
    socket.send_text(text.to_string()).await.unwrap_or_else(|e| panic!("send {shown}: {e}"));
    loop {
        let m = next_message(socket).await;
        match m["type"].as_str() {
            Some("error") => {
                assert_eq!(m["code"], code, "{shown}: the error code ({m})");
                let message = m["message"].as_str().unwrap_or_default();
                for needle in says {
                    assert!(message.contains(needle), "{shown}: the message {message:?} does not say {needle:?}");
                }
                return;
            }
            Some("event") => panic!("{shown}: an event instead of an error: {m}"),
            _ => {}
        }
    }
}

/// Reads `socket` until it has received the events `expected` (each given
/// by some of its fields), in that order, and no other event: nothing else
/// was broadcast meanwhile.
async fn events_until(socket: &mut TableSocket, expected: &[Value]) {
    let mut expected = expected.iter();
    loop {
        let m = next_message(socket).await;
        if m["type"] != "event" {
            continue;
        }
        let wanted = expected.next().unwrap_or_else(|| panic!("an event more than expected: {m}"));
        for (key, value) in wanted.as_object().expect("an expected event is an object") {
            assert_eq!(&m["event"][key], value, "the next event broadcast: {m}, expected {wanted}");
        }
        if expected.len() == 0 {
            return;
        }
    }
}

/// A text of `n` characters.
fn chars(c: char, n: usize) -> String {
    std::iter::repeat_n(c, n).collect()
}

// ----- scenarios -------------------------------------------------------------

/// A NUL in a sitter's name reached Postgres, which refused the row, and the
/// table died with it. Now the body is refused (400) before the table sees
/// it, and the table takes the next sitter and plays. A NUL in a table's
/// name is refused too (it was a 503).
async fn a_nul_in_a_name_is_refused_and_the_table_lives_on(backend: &str) {
    let app = TestApp::spawn(backend, TableDefaults::default()).await;
    let (addr, api) = (app.addr, app.api);
    let id = api.table(&[1, 2, 3], json!({})).await;
    let seats = format!("/api/v1/tables/{id}/seats");
    let (info, before) = (api.table_info(&id).await, lobby(api).await);

    for body in [json!({"name": "Max\u{0}ine", "seat": 0}), json!({"name": "\u{0}"}), json!({"name": "Max\u{0}"})] {
        refused(api, "POST", &seats, Some(&body), 400, "bad_request", &["NUL", "$.name"]).await;
    }
    assert_eq!(api.table_info(&id).await, info, "a refused sitter changed nothing at the table");

    for body in [
        json!({"name": "Table\u{0}"}),
        json!({"name": "\u{0}", "robots": [{}, {}, {}, {}], "start": true}),
        json!({"robots": [{"seat": 0}], "preset": "chinese\u{0}classical"}),
    ] {
        refused(api, "POST", "/api/v1/tables", Some(&body), 400, "bad_request", &["NUL"]).await;
    }
    assert_eq!(lobby(api).await, before, "no table opened, no game stored");

    sit_start_and_play(addr, api, &id, "Max", 0).await;
    app.finish().await;
}

/// A struct written as a JSON array (which serde reads as its fields in
/// order) is refused over REST wherever an object belongs, and leaves no
/// table, seat or robot behind.
async fn arrays_in_place_of_objects_are_refused_over_rest(backend: &str) {
    let app = TestApp::spawn(backend, TableDefaults::default()).await;
    let (addr, api) = (app.addr, app.api);
    // Seats 0, 2 and 3 free: an array that got through would take one.
    let id = api.table(&[1], json!({})).await;
    let (info, before) = (api.table_info(&id).await, lobby(api).await);
    let array_at = |at: &str| format!("expected an object at {at}, found an array");

    let tables = "/api/v1/tables";
    refused(api, "POST", tables, Some(&json!(["Array table"])), 400, "bad_request", &[&array_at("$")]).await;
    let robots_in_arrays = json!({"robots": [[1]]});
    refused(api, "POST", tables, Some(&robots_in_arrays), 400, "bad_request", &[&array_at("$.robots[0]")]).await;
    let strategy_in_array = json!({"robots": [{"seat": 1, "strategy": [0.5, 0, 0, 0]}]});
    let at = array_at("$.robots[0].strategy");
    refused(api, "POST", tables, Some(&strategy_in_array), 400, "bad_request", &[&at]).await;
    assert_eq!(lobby(api).await, before, "no table opened, no game stored");

    let seats = format!("/api/v1/tables/{id}/seats");
    refused(api, "POST", &seats, Some(&json!(["array sitter", 2])), 400, "bad_request", &[&array_at("$")]).await;
    let robots = format!("/api/v1/tables/{id}/robots");
    refused(api, "POST", &robots, Some(&json!([3])), 400, "bad_request", &[&array_at("$")]).await;
    refused(api, "POST", &robots, Some(&json!([1])), 400, "bad_request", &[&array_at("$")]).await;
    let at = array_at("$.strategy");
    refused(api, "POST", &robots, Some(&json!({"seat": 3, "strategy": [1, 0, 0, 0]})), 400, "bad_request", &[&at])
        .await;
    assert_eq!(api.table_info(&id).await, info, "no seat taken, no robot seated");
    assert_eq!(lobby(api).await, before, "the lobby is unchanged");

    // The calculator: its request as an object is answered, as an array refused.
    let settle = "/api/v1/settle";
    let a = api.request("POST", settle, Some(&json!({"east": 0, "winner": 0, "scores": [370, 0, 0, 0]})), None).await;
    assert_eq!(a.status, 200, "the object form is answered: {}", a.body);
    let as_array = json!([null, {}, 0, 0, null, null, [370, 0, 0, 0], 0, false]);
    refused(api, "POST", settle, Some(&as_array), 400, "bad_request", &[&array_at("$")]).await;
    let score_in_array = json!({"east": 0, "winner": 1, "scores": [0, [30, 1], 0, 0]});
    let a = api.request("POST", settle, Some(&score_in_array), None).await;
    assert_eq!(a.status, 400, "a score as an array is refused: {}", a.body);
    assert_eq!(a.body["error"]["code"], "bad_request", "{}", a.body);

    // The table still seats robots and a person, and plays.
    for seat in [2, 3] {
        let a = api.request("POST", &robots, Some(&json!({"seat": seat})), None).await;
        assert_eq!((a.status, &a.body), (201, &json!({"seat": seat})), "a robot sits in seat {seat}");
    }
    sit_start_and_play(addr, api, &id, "Max", 0).await;
    app.finish().await;
}

/// Player names by the text policy: control characters, terminal escapes,
/// invisible-only names, bidirectional overrides and names over 32
/// characters are refused with a message naming the problem; a name is
/// trimmed; 32 characters and CJK names are fine.
async fn player_names_follow_the_text_policy(backend: &str) {
    let app = TestApp::spawn(backend, TableDefaults::default()).await;
    let (addr, api) = (app.addr, app.api);
    let id = api.table(&[3], json!({})).await;
    let seats = format!("/api/v1/tables/{id}/seats");
    let (info, before) = (api.table_info(&id).await, lobby(api).await);

    let control = "may not contain control characters";
    let invisible = "must contain a visible character";
    let long = chars('x', 33);
    let refusals: &[(&str, &[&str])] = &[
        ("Max\u{0}", &["NUL (U+0000)"]),
        ("Bell\u{7}", &[control, "U+0007"]),
        ("\u{1b}[31mRed", &[control, "U+001B"]),
        ("Two\nLines", &[control, "U+000A"]),
        ("Carriage\rReturn", &[control, "U+000D"]),
        ("Tab\tName", &[control, "U+0009"]),
        ("Del\u{7f}", &[control, "U+007F"]),
        ("Line\u{2028}Break", &[control, "U+2028"]),
        ("\u{200b}", &[invisible]),
        ("\u{3164}", &[invisible]),
        ("\u{feff}", &[invisible]),
        (" \u{200b}\u{3164} ", &[invisible]),
        ("\u{202e}", &["may not contain bidirectional controls", "U+202E"]),
        ("evil\u{202e}gpj.exe", &["bidirectional", "U+202E at character 5"]),
        (&long, &["at most 32 characters", "this one has 33"]),
        ("", &["is empty"]),
        ("    ", &["is empty"]),
    ];
    for (name, says) in refusals {
        let body = json!({"name": name, "seat": 0});
        let says_whose: Vec<&str> =
            if name.contains('\0') { says.to_vec() } else { [&["a player's name"], *says].concat() };
        refused(api, "POST", &seats, Some(&body), 400, "bad_request", &says_whose).await;
    }
    assert_eq!(api.table_info(&id).await, info, "no name refused took a seat");
    assert_eq!(lobby(api).await, before, "the lobby is unchanged");

    // Accepted: trimmed, at the limit, CJK.
    let thirty_two = chars('n', 32);
    let mut people = Vec::new();
    for (seat, sent, shown) in
        [(0, "  Ann Lee \u{200b}", "Ann Lee"), (1, &thirty_two, &thirty_two), (2, "張偉", "張偉")]
    {
        let a = api.request("POST", &seats, Some(&json!({"name": sent, "seat": seat})), None).await;
        assert_eq!(a.status, 201, "{} sits: {}", label(sent), a.body);
        assert_eq!(a.body["seat"], seat, "{}", a.body);
        let info = api.table_info(&id).await;
        assert_eq!(info["seats"][seat as usize]["name"], shown, "the seat shows the name trimmed: {info}");
        people.push((seat, a.body["token"].as_str().expect("a token").to_string()));
    }
    api.start(&id, Some(&people[0].1)).await;
    play_one_hand(addr, api, &id, &people).await;
    app.finish().await;
}

/// Table names by the same policy, up to 64 characters; a refused name
/// opens no table (and stores no game).
async fn table_names_follow_the_text_policy(backend: &str) {
    let app = TestApp::spawn(backend, TableDefaults::default()).await;
    let api = app.api;
    let before = lobby(api).await;

    let control = "may not contain control characters";
    let invisible = "must contain a visible character";
    let long = chars('t', 65);
    let refusals: &[(&str, &[&str])] = &[
        ("Table\u{0}", &["NUL (U+0000)"]),
        ("Bell\u{7}", &[control, "U+0007"]),
        ("\u{1b}[31mRed room", &[control, "U+001B"]),
        ("Two\nLines", &[control, "U+000A"]),
        ("Tab\troom", &[control, "U+0009"]),
        ("\u{200b}", &[invisible]),
        ("\u{3164}", &[invisible]),
        ("\u{feff}", &[invisible]),
        ("\u{202e}", &["may not contain bidirectional controls", "U+202E"]),
        (&long, &["at most 64 characters", "this one has 65"]),
        ("", &["is empty"]),
        ("  ", &["is empty"]),
    ];
    for (name, says) in refusals {
        for body in [json!({"name": name}), json!({"name": name, "robots": [{}, {}, {}, {}], "start": true})] {
            let says_whose: Vec<&str> =
                if name.contains('\0') { says.to_vec() } else { [&["a table's name"], *says].concat() };
            refused(api, "POST", "/api/v1/tables", Some(&body), 400, "bad_request", &says_whose).await;
        }
    }
    assert_eq!(lobby(api).await, before, "no table opened, no game stored");

    let sixty_four = chars('t', 64);
    for (sent, shown) in [("  Spaced table  ", "Spaced table"), (&sixty_four, &sixty_four), ("麻將桌", "麻將桌")]
    {
        let id = api.create_table(json!({"name": sent})).await;
        assert_eq!(api.table_info(&id).await["name"], shown, "the table's name as shown");
        assert_eq!(api.get(&format!("/api/v1/games/{id}")).await["name"], shown, "the stored game's name");
    }
    let robots = api.robot_game("  Robots' table ").await;
    api.wait_over(&robots).await;
    assert_eq!(api.get(&format!("/api/v1/games/{robots}")).await["name"], "Robots' table", "a whole game stored");
    app.finish().await;
}

/// Over the WebSocket, during a hand: a message as an array, an action as an
/// array, bad chat and bad pause reasons, and a message over 4096 bytes are
/// each answered with an error to the sender alone; the connection stays
/// open, both players' snapshots are unchanged, the other player is sent no
/// event, the game is not paused, and the hand plays on.
async fn bad_websocket_messages_change_nothing(backend: &str) {
    let app = TestApp::spawn(backend, TableDefaults::default()).await;
    let (addr, api) = (app.addr, app.api);
    let id = api.table(&[2, 3], json!({})).await;
    let ann_token = api.sit(&id, "Ann", 0).await;
    let bob_token = api.sit(&id, "Bob", 1).await;
    api.start(&id, Some(&ann_token)).await;
    let mut ann = connect(addr, &id, Some(&ann_token)).await;
    let mut bob = connect(addr, &id, Some(&bob_token)).await;
    for socket in [&mut ann, &mut bob] {
        socket.send(&ClientMessage::Ready).await.expect("send ready");
    }
    // The deal; then the table waits for Ann (East) to declare her bonus tiles.
    for socket in [&mut ann, &mut bob] {
        while next_message(socket).await["event"]["type"] != "hand_started" {}
    }
    let (ann_before, bob_before) = (snapshot(&mut ann).await, snapshot(&mut bob).await);
    let info = api.table_info(&id).await;
    assert_eq!(ann_before["table"]["paused"], false, "{}", ann_before["table"]);

    let array = "expected an object at $, found an array";
    let control = "may not contain control characters";
    let chat = |text: &str| json!({"type": "chat", "text": text}).to_string();
    let pause = |reason: &str| json!({"type": "request_pause", "reason": reason}).to_string();
    let refusals: Vec<(String, &str, Vec<&str>)> = vec![
        (r#"["chat","hi"]"#.into(), "bad_message", vec![array]),
        (r#"["request_pause","why"]"#.into(), "bad_message", vec![array]),
        (
            r#"{"type":"act","action":["discard","1B",false]}"#.into(),
            "bad_message",
            vec!["expected an object at $.action, found an array"],
        ),
        (r#"{"type":"act","action":["finish_declaring"]}"#.into(), "bad_message", vec!["$.action, found an array"]),
        (chat(""), "bad_message", vec!["a chat message is empty"]),
        (chat("   "), "bad_message", vec!["a chat message is empty"]),
        (chat("two\nlines"), "bad_message", vec!["a chat message", control, "U+000A"]),
        (chat("nul\u{0}"), "bad_message", vec!["NUL (U+0000)"]),
        (chat("\u{1b}[2J"), "bad_message", vec![control, "U+001B"]),
        (chat("abc\u{202e}def"), "bad_message", vec!["bidirectional", "U+202E"]),
        (chat(&chars('x', 501)), "bad_message", vec!["at most 500 characters", "this one has 501"]),
        (pause("back\nsoon"), "bad_message", vec!["a pause's reason", control, "U+000A"]),
        (pause("\u{0}"), "bad_message", vec!["NUL (U+0000)"]),
        (pause("tab\there"), "bad_message", vec![control, "U+0009"]),
        (pause(&chars('y', 501)), "bad_message", vec!["a pause's reason", "at most 500 characters"]),
        (chat(&chars('z', 5000)), "too_large", vec!["at most 4096 bytes", "this one has"]),
    ];
    for (text, code, says) in &refusals {
        ws_refused(&mut ann, text, code, says).await;
    }
    assert_eq!(snapshot(&mut ann).await, ann_before, "Ann's connection is open and sees the same table");
    assert_eq!(snapshot(&mut bob).await, bob_before, "Bob sees the same table");
    assert_eq!(api.table_info(&id).await, info, "the table's info is unchanged (not paused, same seq)");

    // Ann's next good chat is the first event Bob receives.
    ann.send(&ClientMessage::Chat { text: "  still here  ".into() }).await.expect("send a chat");
    events_until(&mut bob, &[json!({"type": "chat", "seat": 0, "text": "still here"})]).await;

    // Fresh connections (each gets its prompt) play the hand out.
    ann.close().await;
    bob.close().await;
    play_one_hand(addr, api, &id, &[(0, ann_token), (1, bob_token)]).await;
    app.finish().await;
}

/// Options: `Timeout` and `TimeoutGrace` are bounded (a value so large that
/// their sum would overflow is refused, as is 3601), `NumRounds` 68 is
/// refused, and a value must be a boolean, whole number or string, at
/// `POST /api/v1/tables` and in the manager's `set_option` alike. A refused
/// `set_option` is announced to nobody and the game starts with the
/// accepted values only; natural JSON types and strings are both accepted.
async fn options_are_bounded_and_read_in_their_natural_types(backend: &str) {
    let app = TestApp::spawn(backend, TableDefaults::default()).await;
    let (addr, api) = (app.addr, app.api);
    let before = lobby(api).await;

    let timeout_bound = "the claim timeout is at most 3600 seconds";
    let grace_bound = "the grace period is at most 600 seconds";
    let not_a_value = "is not a boolean, whole number or string";
    let refusals: Vec<(Value, Vec<&str>)> = vec![
        (json!({"Timeout": 4_294_967_295u32}), vec!["Timeout", timeout_bound]),
        (json!({"TimeoutGrace": 4_294_967_295u32}), vec!["TimeoutGrace", grace_bound]),
        (json!({"Timeout": 4_294_967_295u32, "TimeoutGrace": 4_294_967_295u32}), vec!["at most"]),
        (json!({"Timeout": "4294967295"}), vec!["Timeout", timeout_bound]),
        (json!({"Timeout": 4_294_967_296u64}), vec!["Timeout", "4294967296"]),
        (json!({"Timeout": 3601}), vec!["Timeout", timeout_bound]),
        (json!({"TimeoutGrace": 601}), vec!["TimeoutGrace", grace_bound]),
        (json!({"Timeout": -1}), vec!["Timeout", "-1"]),
        (json!({"NumRounds": 68}), vec!["NumRounds", "at most 64 rounds"]),
        (json!({"NumRounds": 3}), vec!["NumRounds", "1, 2 or a multiple of 4"]),
        (json!({"Timeout": [20]}), vec!["Timeout", not_a_value]),
        (json!({"Timeout": {"seconds": 20}}), vec!["Timeout", not_a_value]),
        (json!({"Timeout": 2.5}), vec!["Timeout", "2.5 is not a whole number"]),
        (json!({"SevenPairs": "maybe"}), vec!["SevenPairs", "maybe"]),
    ];
    for (options, says) in &refusals {
        let body = json!({"options": options});
        refused(api, "POST", "/api/v1/tables", Some(&body), 400, "bad_request", says).await;
    }
    assert_eq!(lobby(api).await, before, "no table opened, no game stored");
    // The bounds themselves are accepted.
    let bounded = api.create_table(json!({"options": {"Timeout": 3600, "TimeoutGrace": 600}})).await;
    assert_eq!(api.get(&format!("/api/v1/games/{bounded}")).await["state"], "open");

    // The manager's set_option over the WebSocket.
    let id = api.table(&[1, 2, 3], json!({})).await;
    let token = api.sit(&id, "Ann", 0).await;
    let mut ann = connect(addr, &id, Some(&token)).await;
    let mut watcher = connect(addr, &id, None).await;
    let (ann_before, watcher_before) = (snapshot(&mut ann).await, snapshot(&mut watcher).await);
    let info = api.table_info(&id).await;

    let set = |name: &str, value: Value| json!({"type": "set_option", "name": name, "value": value}).to_string();
    let ws_refusals: Vec<(String, &str, Vec<&str>)> = vec![
        (set("Timeout", json!(4_294_967_295u32)), "bad_option", vec!["Timeout", timeout_bound]),
        (set("TimeoutGrace", json!(4_294_967_295u32)), "bad_option", vec!["TimeoutGrace", grace_bound]),
        (set("Timeout", json!("4294967295")), "bad_option", vec!["Timeout", timeout_bound]),
        (set("Timeout", json!(3601)), "bad_option", vec!["Timeout", timeout_bound]),
        (set("TimeoutGrace", json!(601)), "bad_option", vec!["TimeoutGrace", grace_bound]),
        (set("NumRounds", json!(68)), "bad_option", vec!["NumRounds", "at most 64 rounds"]),
        (set("Timeout", json!([20])), "bad_option", vec!["Timeout", not_a_value]),
        (set("Timeout", json!({"seconds": 20})), "bad_option", vec!["Timeout", not_a_value]),
        (set("ScoreLimit", json!(2000.5)), "bad_option", vec!["ScoreLimit", "is not a whole number"]),
        (set("SevenPairs", json!("maybe")), "bad_option", vec!["SevenPairs", "maybe"]),
        (set("Bogus", json!(1)), "bad_option", vec!["unknown game option 'Bogus'"]),
        (set("ScoreLimit", json!("2\u{0}")), "bad_message", vec!["NUL (U+0000)"]),
        (r#"["set_option","Timeout",20]"#.into(), "bad_message", vec!["expected an object at $, found an array"]),
    ];
    for (text, code, says) in &ws_refusals {
        ws_refused(&mut ann, text, code, says).await;
    }
    assert_eq!(snapshot(&mut ann).await, ann_before, "Ann's connection is open and sees the same table");
    assert_eq!(snapshot(&mut watcher).await, watcher_before, "the spectator sees the same table");
    assert_eq!(api.table_info(&id).await, info, "the table's info is unchanged");

    // Accepted, in natural JSON types and as option-file text: each is
    // announced, written as in an option file, and nothing before them.
    for text in [
        set("ScoreLimit", json!(2000)),
        set("SevenPairs", json!(true)),
        set("Timeout", json!("20")),
        set("TimeoutGrace", json!(600)),
    ] {
        ann.send_text(text).await.expect("send set_option");
    }
    let changed = |name: &str, value: &str| json!({"type": "option_changed", "name": name, "value": value});
    let announced = [
        changed("ScoreLimit", "2000"),
        changed("SevenPairs", "1"),
        changed("Timeout", "20"),
        changed("TimeoutGrace", "600"),
    ];
    events_until(&mut watcher, &announced).await;

    // The game plays with the accepted values, none of the refused ones.
    ann.close().await;
    api.start(&id, Some(&token)).await;
    let mut ann = connect(addr, &id, Some(&token)).await;
    let options = snapshot(&mut ann).await["game"]["options"].clone();
    ann.close().await;
    for (field, value) in [
        ("score_limit", json!(2000)),
        ("seven_pairs", json!(true)),
        ("timeout", json!(20)),
        ("timeout_grace", json!(600)),
    ] {
        assert_eq!(options[field], value, "the game's {field}: {options}");
    }
    let presets = api.get("/api/v1/presets").await;
    let preset = presets["presets"]
        .as_array()
        .and_then(|all| all.iter().find(|p| p["name"] == "chinese-classical"))
        .unwrap_or_else(|| panic!("no chinese-classical preset in {presets}"));
    assert_eq!(options["num_rounds"], preset["options"]["NumRounds"], "the game's rounds are the preset's");
    play_one_hand(addr, api, &id, &[(0, token)]).await;
    app.finish().await;
}

/// The HTTP layer's refusals (a URI over 8192 bytes or over hyper's own
/// limit, a wrong method, a body over 64 KiB) carry the JSON error body,
/// and leave the table and the lobby as they were.
async fn http_layer_refusals_carry_a_json_error(backend: &str) {
    let app = TestApp::spawn(backend, TableDefaults::default()).await;
    let (addr, api) = (app.addr, app.api);
    let id = api.table(&[1, 2, 3], json!({})).await;
    let (info, before) = (api.table_info(&id).await, lobby(api).await);

    // URIs too long: ours (8192 bytes) and hyper's (65534), which answers
    // itself and closes the connection.
    for length in [10_000, 100_000] {
        let request =
            format!("GET /api/v1/games?player={} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", chars('x', length));
        let a = http_raw(addr, request.as_bytes()).await.unwrap_or_else(|e| panic!("a URI of {length} bytes: {e}"));
        assert_eq!(a.status, 414, "a query of {length} bytes: {}", label(&a.body.to_string()));
        assert_eq!(a.body["error"]["code"], "uri_too_long", "a query of {length} bytes: the JSON body {}", a.body);
        let message = a.body["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("8192 bytes"), "a query of {length} bytes: the message {message:?} says the limit");
    }
    let long_sit = format!("/api/v1/tables/{id}/seats?name={}", chars('x', 9000));
    refused(api, "POST", &long_sit, Some(&json!({"name": "Max"})), 414, "uri_too_long", &["8192"]).await;

    // Wrong methods.
    for (method, path) in [
        ("PUT", format!("/api/v1/tables/{id}")),
        ("DELETE", "/api/v1/tables".to_string()),
        ("GET", format!("/api/v1/tables/{id}/seats")),
        ("PATCH", format!("/api/v1/tables/{id}/start")),
        ("GET", "/api/v1/settle".to_string()),
    ] {
        refused(api, method, &path, Some(&json!({"name": "Max"})), 405, "method_not_allowed", &[]).await;
    }

    // Bodies over 64 KiB.
    let big = json!({"name": chars('x', 70_000)});
    refused(api, "POST", &format!("/api/v1/tables/{id}/seats"), Some(&big), 413, "too_large", &[]).await;
    refused(api, "POST", "/api/v1/tables", Some(&big), 413, "too_large", &[]).await;
    let big_robot = json!({"seat": 0, "strategy": {"chowness": 0.5}, "padding": chars(' ', 70_000)});
    refused(api, "POST", &format!("/api/v1/tables/{id}/robots"), Some(&big_robot), 413, "too_large", &[]).await;

    assert_eq!(api.table_info(&id).await, info, "the table is unchanged");
    assert_eq!(lobby(api).await, before, "no table opened, no game stored");
    sit_start_and_play(addr, api, &id, "Max", 0).await;
    app.finish().await;
}

/// The score queries: a player filter with NUL or another control
/// character is a 400; a game id with NUL or other odd characters names no
/// game (404 `no_such_game`) and never reaches the database: on Postgres it
/// must not become a 500 or a 503. The store answers as before afterwards.
async fn odd_game_ids_and_player_filters_never_reach_the_store(backend: &str) {
    let app = TestApp::spawn(backend, TableDefaults::default()).await;
    let (addr, api) = (app.addr, app.api);
    let id = api.table(&[1, 2, 3], json!({})).await;
    let (info, before) = (api.table_info(&id).await, lobby(api).await);
    let game = api.get(&format!("/api/v1/games/{id}")).await;

    let control = "player may not contain control characters";
    for (query, says) in [
        ("/api/v1/games?player=%00", vec![control, "U+0000"]),
        ("/api/v1/games?player=Max%00", vec![control, "U+0000"]),
        ("/api/v1/games?player=a%0Ab", vec![control, "U+000A"]),
        ("/api/v1/games?player=%1B%5B31m", vec![control, "U+001B"]),
        ("/api/v1/games?player=%E2%80%AE", vec!["bidirectional", "U+202E"]),
        ("/api/v1/games?player=%20", vec!["player must name a player"]),
        ("/api/v1/standings?player=%00", vec![control, "U+0000"]),
        ("/api/v1/standings?player=a%0Db", vec![control, "U+000D"]),
    ] {
        refused(api, "GET", query, None, 400, "bad_request", &says).await;
    }

    let long_id = chars('a', 65);
    let ids = ["%00", "a%00", "a%0Ab", "%1B%5B31m", "%E2%80%AE", "a%20b", "x'%20OR%20'1'='1", "%C3%A9", &long_id];
    for odd in ids {
        for path in [
            format!("/api/v1/games/{odd}"),
            format!("/api/v1/games/{odd}/hands"),
            format!("/api/v1/games/{odd}/hands/1"),
            format!("/api/v1/games/{odd}/hands/1/events"),
            format!("/api/v1/games/{odd}/export"),
        ] {
            refused(api, "GET", &path, None, 404, "no_such_game", &["no stored game has this id"]).await;
        }
        let path = format!("/api/v1/tables/{odd}");
        refused(api, "GET", &path, None, 404, "no_such_table", &[]).await;
        let path = format!("/api/v1/tables/{odd}/seats");
        refused(api, "POST", &path, Some(&json!({"name": "Max"})), 404, "no_such_table", &[]).await;
    }

    // The store still answers, with what it had.
    assert_eq!(api.get(&format!("/api/v1/games/{id}")).await, game, "the stored game reads back the same");
    assert_eq!(api.table_info(&id).await, info, "the table is unchanged");
    assert_eq!(lobby(api).await, before, "the lobby is unchanged");
    let standings = api.ask("/api/v1/standings", None).await;
    assert_eq!(standings.status, 200, "the standings are answered: {}", standings.body);
    sit_start_and_play(addr, api, &id, "Max", 0).await;
    app.finish().await;
}
