//! The REST score queries against a real server on each backend: games
//! played to the end by robots (and by a person through the WebSocket), then
//! read back through `/api/v1/games...` and `/api/v1/standings`, and checked
//! against each other and against what the players were sent.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use common::app::{Api, TestApp, WAIT};
use common::on_both_backends;
use mahjong::protocol::ws::{ClientMessage, ServerMessage, StreamEvent, TableEvent};
use mahjong::rules::event::Event;
use mahjong::table::TableDefaults;
use mahjong_tools::client::{SeatPlan, TableSocket, http_raw, play_seat};
use serde_json::{Value, json};

on_both_backends!(
    finished_games_add_up,
    games_are_listed_filtered_and_paged,
    a_live_hand_shows_concealed_tiles_only_to_their_seat,
    standings_are_the_hands_summed,
    bad_requests_get_specific_errors,
);

// ----- helpers --------------------------------------------------------------

/// A request that must be refused with this status and code, with a message
/// holding `says`.
async fn refused(api: Api, path: &str, token: Option<&str>, status: u16, code: &str, says: &str) {
    let a = api.ask(path, token).await;
    assert_eq!(a.status, status, "GET {path}: {}", a.body);
    assert_eq!(a.body["error"]["code"], code, "GET {path}: {}", a.body);
    let message = a.body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains(says), "GET {path}: the message {message:?} does not say {says:?}");
}

/// Waits until the table says its game is over; then the store says so too.
async fn wait_over(api: Api, id: &str) {
    api.wait_over(id).await;
    assert_eq!(api.get(&format!("/api/v1/games/{id}")).await["state"], "over");
}

/// A table with robots in seats 1-3 and a person, `name`, in seat 0.
async fn person_table(api: Api, name: &str) -> (String, String) {
    let id = api.table(&[1, 2, 3], json!({"NumRounds": 1})).await;
    let token = api.sit(&id, name, 0).await;
    (id, token)
}

/// Every item of a paginated list, following `next_offset` pages of `limit`.
async fn all_pages(api: Api, path: &str, key: &str, limit: i64) -> Vec<Value> {
    let sep = if path.contains('?') { '&' } else { '?' };
    let mut items = Vec::new();
    let mut offset = 0;
    loop {
        let page = api.get(&format!("{path}{sep}limit={limit}&offset={offset}")).await;
        assert_eq!((page["limit"].as_i64(), page["offset"].as_i64()), (Some(limit), Some(offset)), "{page}");
        let got = page[key].as_array().unwrap();
        assert!(got.len() as i64 <= limit);
        items.extend(got.iter().cloned());
        match page["next_offset"].as_i64() {
            Some(next) => {
                assert_eq!(next, offset + limit);
                assert_eq!(got.len() as i64, limit, "a page before the last is full");
                offset = next;
            }
            None => {
                assert_eq!(page["total"].as_i64(), Some(items.len() as i64), "{path}: the total is every item");
                return items;
            }
        }
    }
}

fn int(v: &Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

/// Reads the socket until a message satisfies `stop`.
async fn read_until(socket: &mut TableSocket, mut stop: impl FnMut(&ServerMessage) -> bool) -> Vec<String> {
    let mut texts = Vec::new();
    loop {
        let (m, text) = socket.next(WAIT).await.unwrap().expect("the socket stays open");
        texts.push(text);
        if stop(&m) {
            return texts;
        }
    }
}

/// Reads the socket until it has been quiet for a while.
async fn read_until_quiet(socket: &mut TableSocket) -> Vec<String> {
    let mut texts = Vec::new();
    while let Ok(Some((_, text))) = socket.next(Duration::from_millis(400)).await {
        texts.push(text);
    }
    texts
}

/// The `(seq, event)` of the event messages among `texts` with `seq` in `range`.
fn stream_events(texts: &[String], range: std::ops::RangeInclusive<i64>) -> Vec<(i64, Value)> {
    texts
        .iter()
        .map(|t| serde_json::from_str::<Value>(t).unwrap())
        .filter(|m| m["type"] == "event" && range.contains(&int(&m["seq"])))
        .map(|m| (int(&m["seq"]), m["event"].clone()))
        .collect()
}

fn history_events(history: &Value) -> Vec<(i64, Value)> {
    history["events"].as_array().unwrap().iter().map(|e| (int(&e["seq"]), e["event"].clone())).collect()
}

/// A tile of someone's concealed hand that an event shows (a tile drawn,
/// passed or received), with the player it belongs to.
fn concealed_tile_of(event: &Value) -> Option<i64> {
    let shows_tile = !event["tile"].is_null();
    match event["type"].as_str()? {
        "drew" | "tile_passed" if shows_tile => Some(int(&event["player"])),
        "tile_received" => Some(int(&event["player"])),
        _ => None,
    }
}

/// The options of the default preset with these changes.
async fn preset_options_with(api: Api, changes: Value) -> Value {
    let presets = api.get("/api/v1/presets").await;
    let mut options = presets["presets"][0]["options"].clone();
    for (name, value) in changes.as_object().unwrap() {
        assert!(options.get(name).is_some(), "no option {name}");
        options[name] = value.clone();
    }
    options
}

// ----- scenarios -------------------------------------------------------------

/// Two games of robots: each game's hands settle to zero, carry their totals
/// from hand to hand to the game's final scores, agree with their payments
/// and settlements, and replay from their first to their last event.
async fn finished_games_add_up(backend: &str) {
    let app = TestApp::spawn(backend, TableDefaults::default()).await;
    let api = app.api;
    let ids = [api.robot_game("First").await, api.robot_game("Second").await];
    for id in &ids {
        wait_over(api, id).await;
    }
    let expected_options = preset_options_with(api, json!({"NumRounds": 1})).await;
    for id in &ids {
        let game = api.get(&format!("/api/v1/games/{id}")).await;
        assert_eq!(game["id"], *id);
        assert_eq!(
            (&game["state"], &game["source"], &game["preset"]),
            (&json!("over"), &json!("live"), &json!("chinese-classical"))
        );
        assert!(int(&game["finished_us"]) >= int(&game["created_us"]));
        assert!(game["finished"].as_str().unwrap().ends_with('Z'));
        assert_eq!(game["options"], expected_options, "the options in force");
        let players = game["players"].as_array().unwrap();
        assert_eq!(players.len(), 4);
        for (seat, p) in players.iter().enumerate() {
            assert_eq!(p["seat"], seat as i64);
            assert_eq!(p["name"], format!("Robot {}", seat + 1));
            assert!(p["robot"].is_object(), "a robot's strategy: {p}");
            assert_eq!(p["penalty"], 0);
        }
        let scores: Vec<i64> = game["scores"].as_array().unwrap().iter().map(int).collect();
        assert_eq!(scores.iter().sum::<i64>(), 0);

        let hands = all_pages(api, &format!("/api/v1/games/{id}/hands"), "hands", 3).await;
        assert!(hands.len() >= 4, "a round has at least four hands, got {}", hands.len());
        assert_eq!(hands.len() as i64, int(&game["hands_finished"]));
        assert_eq!(hands.len() as i64, int(&game["hands"]), "every hand dealt finished");
        let mut totals = [0i64; 4];
        for (i, hand) in hands.iter().enumerate() {
            let n = int(&hand["hand"]);
            assert_eq!(n, i as i64 + 1, "hands in order");
            assert_eq!(api.get(&format!("/api/v1/games/{id}/hands/{n}")).await, *hand, "one hand = its list entry");
            let players = hand["players"].as_array().unwrap();
            assert_eq!(players.len(), 4);
            let deltas: Vec<i64> = players.iter().map(|p| int(&p["delta"])).collect();
            assert_eq!(deltas.iter().sum::<i64>(), 0, "hand {n}: the deltas settle to zero");
            for (p, player) in players.iter().enumerate() {
                assert_eq!(int(&player["player"]), p as i64);
                totals[p] += deltas[p];
                assert_eq!(int(&player["total"]), totals[p], "hand {n}: player {p}'s total carries on");
            }
            let east = int(&hand["east"]);
            assert_eq!(players[east as usize]["wind"], "East");
            match hand["outcome"].as_str().unwrap() {
                "won" => {
                    let winners: Vec<i64> = hand["winners"].as_array().unwrap().iter().map(int).collect();
                    assert!(!winners.is_empty());
                    for p in players {
                        assert_eq!(p["won"], winners.contains(&int(&p["player"])), "hand {n}: {p}");
                        // The breakdown is the hand_scored event's score.
                        assert_eq!(p["score"]["score"], p["points"], "hand {n}: {p}");
                        assert!(p["score"]["lines"].as_array().unwrap().len() > 1, "a breakdown: {p}");
                    }
                    assert!(["self_drawn", "discard", "robbed_kong"].contains(&hand["how"].as_str().unwrap()));
                    // The settlement is by seat wind: East is player `east`.
                    let by_wind: Vec<i64> = hand["settlement"]["deltas"].as_array().unwrap().iter().map(int).collect();
                    for (w, d) in by_wind.iter().enumerate() {
                        assert_eq!(*d, deltas[(east as usize + w) % 4], "hand {n}: the settlement's wind {w}");
                    }
                    // The payments make the deltas.
                    let mut paid = [0i64; 4];
                    for pay in hand["payments"].as_array().unwrap() {
                        paid[int(&pay["from_player"]) as usize] -= int(&pay["amount"]);
                        paid[int(&pay["to_player"]) as usize] += int(&pay["amount"]);
                    }
                    assert_eq!(paid.to_vec(), deltas, "hand {n}: payments");
                }
                "washed_out" => {
                    assert_eq!(deltas, vec![0; 4]);
                    assert!(hand["settlement"].is_null() && hand["payments"].as_array().unwrap().is_empty());
                    assert!(hand["winners"].as_array().unwrap().is_empty());
                }
                other => panic!("hand {n}: outcome {other}"),
            }
            // The game is over: its replay is every event of the hand.
            let history = api.get(&format!("/api/v1/games/{id}/hands/{n}/events")).await;
            assert_eq!((&history["seen_as"], &history["finished"]), (&json!("everything"), &json!(true)));
            let seqs: Vec<i64> = history["events"].as_array().unwrap().iter().map(|e| int(&e["seq"])).collect();
            let (first, last) = (int(&hand["first_seq"]), int(&hand["last_seq"]));
            assert_eq!(seqs, (first..=last).collect::<Vec<_>>(), "hand {n}: every event from first to last");
            let events = history["events"].as_array().unwrap();
            assert_eq!(events[0]["event"]["type"], "hand_started");
            assert_eq!(events[0]["event"]["hand"], n);
            let end = &events[events.len() - 1]["event"];
            if hand["outcome"] == "won" {
                assert_eq!(end["type"], "settled");
                assert_eq!(end["deltas"], json!(deltas), "hand {n}: the settled event's deltas");
            } else {
                assert_eq!(end["type"], "washed_out");
            }
            let hidden: BTreeSet<i64> = events.iter().filter_map(|e| concealed_tile_of(&e["event"])).collect();
            assert_eq!(hidden, (0..4).collect(), "hand {n}: every seat's concealed tiles are in the replay");
            assert!(events.iter().any(|e| e["audience"] == json!({"only": east})), "hand {n}: East's own events");
        }
        assert_eq!(totals.to_vec(), scores, "the last totals are the game's final scores");
    }
    app.finish().await;
}

/// Games are listed newest first, filtered by player, state, source and
/// date, and paged.
async fn games_are_listed_filtered_and_paged(backend: &str) {
    let app = TestApp::spawn(backend, TableDefaults::default()).await;
    let api = app.api;
    let older = api.robot_game("Older").await;
    // The date filters work to the second: the newer game opens in a later
    // second than the older one did (the server's clock is this machine's).
    let older_us = int(&api.get(&format!("/api/v1/games/{older}")).await["created_us"]);
    let next_second = std::time::UNIX_EPOCH + Duration::from_secs(older_us as u64 / 1_000_000 + 1);
    if let Ok(wait) = next_second.duration_since(std::time::SystemTime::now()) {
        tokio::time::sleep(wait).await;
    }
    let newer = api.robot_game("Newer").await;
    let (open, _) = person_table(api, "Bob").await;
    let (live, alice) = person_table(api, "Alice").await;
    api.start(&live, Some(&alice)).await;
    for id in [&older, &newer] {
        wait_over(api, id).await;
    }

    let all = all_pages(api, "/api/v1/games", "games", 2).await;
    let ids: Vec<&str> = all.iter().map(|g| g["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 4);
    assert_eq!(ids[2..], [newer.as_str(), older.as_str()], "newest first");
    assert_eq!(BTreeSet::from([ids[0], ids[1]]), BTreeSet::from([open.as_str(), live.as_str()]));
    let created: Vec<i64> = all.iter().map(|g| int(&g["created_us"])).collect();
    assert!(created.windows(2).all(|w| w[0] >= w[1]), "{created:?}");
    let first_page = api.get("/api/v1/games").await;
    assert_eq!(
        (int(&first_page["total"]), int(&first_page["limit"]), &first_page["next_offset"]),
        (4, 20, &Value::Null)
    );
    let by_id = |id: &str| all.iter().find(|g| g["id"] == id).unwrap().clone();
    let g = by_id(&newer);
    assert_eq!((&g["name"], &g["state"], &g["source"]), (&json!("Newer"), &json!("over"), &json!("live")));
    assert_eq!(g["players"][3], json!({"seat": 3, "name": "Robot 4", "robot": true}));
    assert_eq!(g["scores"], api.get(&format!("/api/v1/games/{newer}")).await["scores"]);
    assert!(int(&g["hands"]) >= 4);
    let l = by_id(&live);
    assert_eq!((&l["state"], &l["finished"]), (&json!("playing"), &Value::Null));
    assert_eq!(l["players"][0], json!({"seat": 0, "name": "Alice", "robot": false}));

    let listed = |query: String| async move {
        let page = api.get(&format!("/api/v1/games?{query}")).await;
        let ids: Vec<String> =
            page["games"].as_array().unwrap().iter().map(|g| g["id"].as_str().unwrap().to_string()).collect();
        assert_eq!(int(&page["total"]), ids.len() as i64, "{query}");
        ids
    };
    assert_eq!(listed("state=over".into()).await, [newer.as_str(), older.as_str()]);
    assert_eq!(listed("state=open".into()).await, [open.as_str()]);
    assert_eq!(listed("state=playing".into()).await, [live.as_str()]);
    assert_eq!(listed("player=Alice".into()).await, [live.as_str()]);
    assert_eq!(listed("player=Bob&state=open".into()).await, [open.as_str()]);
    assert_eq!(listed("player=Bob&state=over".into()).await, Vec::<String>::new());
    assert_eq!(listed("player=Robot%201&state=over".into()).await, [newer.as_str(), older.as_str()]);
    assert_eq!(listed("player=Nobody".into()).await, Vec::<String>::new());
    assert_eq!(listed("source=live".into()).await.len(), 4);
    assert_eq!(listed("source=mj-server".into()).await, Vec::<String>::new());
    let page = api.get("/api/v1/games?state=over&limit=1&offset=1").await;
    assert_eq!((&page["games"][0]["id"], int(&page["total"]), &page["next_offset"]), (&json!(older), 2, &Value::Null));
    assert_eq!(page["games"].as_array().unwrap().len(), 1);

    // Dates: `created` is the second the game opened, which `from` includes
    // and `to` excludes; a day, an RFC 3339 time and Unix seconds all work.
    let newer_created = g["created"].as_str().unwrap().to_string();
    let newer_secs = int(&g["created_us"]) / 1_000_000;
    let older_day = by_id(&older)["created"].as_str().unwrap()[..10].to_string();
    let over = |q: &str| format!("state=over&{q}");
    assert_eq!(listed(over(&format!("from={newer_created}"))).await, [newer.as_str()]);
    assert_eq!(listed(over(&format!("to={newer_created}"))).await, [older.as_str()]);
    assert_eq!(listed(over(&format!("from={newer_secs}"))).await, [newer.as_str()]);
    assert_eq!(listed(over(&format!("to={newer_secs}"))).await, [older.as_str()]);
    assert_eq!(listed(over(&format!("from={older_day}"))).await, [newer.as_str(), older.as_str()]);
    assert_eq!(listed(over(&format!("to={older_day}"))).await, Vec::<String>::new());
    assert_eq!(listed(over("from=2000-01-01&to=2000-01-02")).await, Vec::<String>::new());
    app.finish().await;
}

/// While a game is live, a hand's history is what the requester's stream
/// showed: a spectator never gets a concealed tile, a player gets its own;
/// once the game is over, everything. Also: the options in force follow the
/// manager's changes.
async fn a_live_hand_shows_concealed_tiles_only_to_their_seat(backend: &str) {
    let app = TestApp::spawn(backend, TableDefaults::default()).await;
    let (addr, api) = (app.addr, app.api);
    let (id, token) = person_table(api, "Alice").await;
    let mut socket = TableSocket::connect(addr, &id, Some(&token), None).await.unwrap();
    let option_changed = |m: &ServerMessage| {
        matches!(m, ServerMessage::Event { event: StreamEvent::Table(TableEvent::OptionChanged { .. }), .. })
    };
    // An option changed before the game, another between hands.
    socket.send(&ClientMessage::SetOption { name: "Timeout".into(), value: "30".into() }).await.unwrap();
    read_until(&mut socket, option_changed).await;
    api.start(&id, Some(&token)).await;
    let log = play_seat(&mut socket, SeatPlan { max_hands: Some(1), ..SeatPlan::new(0) }).await.unwrap();
    assert!(log.errors.is_empty(), "{:?}", log.errors);
    socket.send(&ClientMessage::SetOption { name: "TimeoutGrace".into(), value: "7".into() }).await.unwrap();
    let mut received = log.received;
    received.extend(read_until(&mut socket, option_changed).await);
    let game = api.get(&format!("/api/v1/games/{id}")).await;
    assert_eq!((&game["state"], int(&game["hands"]), int(&game["hands_finished"])), (&json!("playing"), 1, 1));
    assert_eq!(
        game["options"],
        preset_options_with(api, json!({"NumRounds": 1, "Timeout": 30, "TimeoutGrace": 7})).await
    );
    assert_eq!(game["players"][0], json!({"seat": 0, "name": "Alice", "robot": null, "penalty": 0}));
    assert_eq!(game["manager"], 0);

    // Hand 1 is over, the game is not.
    let hand = api.get(&format!("/api/v1/games/{id}/hands/1")).await;
    let range = int(&hand["first_seq"])..=int(&hand["last_seq"]);
    let path = format!("/api/v1/games/{id}/hands/1/events");
    let spectator = api.get(&path).await;
    assert_eq!((&spectator["seen_as"], &spectator["seat"]), (&json!("spectator"), &Value::Null));
    for e in spectator["events"].as_array().unwrap() {
        assert!(e["audience"] == "everyone" || e["audience"].get("all_but").is_some(), "a spectator got {e}");
        assert_eq!(concealed_tile_of(&e["event"]), None, "a spectator saw a concealed tile: {e}");
    }
    let own = api.ask(&path, Some(&token)).await;
    assert_eq!(own.status, 200, "{}", own.body);
    let own = own.body;
    assert_eq!((&own["seen_as"], &own["seat"], &own["finished"]), (&json!("player"), &json!(0), &json!(true)));
    // Exactly what Alice's socket was sent during the hand.
    assert_eq!(history_events(&own), stream_events(&received, range.clone()));
    let mine: Vec<&Value> =
        own["events"].as_array().unwrap().iter().filter(|e| e["audience"] == json!({"only": 0})).collect();
    assert!(!mine.is_empty(), "Alice's own events");
    for e in own["events"].as_array().unwrap() {
        assert_ne!(e["audience"], json!({"all_but": 0}), "the copy for the others: {e}");
        if let Some(p) = concealed_tile_of(&e["event"]) {
            assert_eq!(p, 0, "Alice saw another player's concealed tile: {e}");
        }
    }
    // What everyone saw is the same either way.
    let public = |h: &Value| -> Vec<Value> {
        h["events"].as_array().unwrap().iter().filter(|e| e["audience"] == "everyone").cloned().collect()
    };
    assert_eq!(public(&spectator), public(&own));
    assert!(!public(&own).is_empty());
    // A token that is not a seat's of this game is refused.
    refused(api, &path, Some("0123456789abcdef0123456789abcdef"), 401, "bad_token", "not a seat token").await;
    refused(api, &format!("/api/v1/games/{id}/hands/2/events"), None, 404, "no_such_hand", "1 dealt").await;

    // Hand 2 being played: its history so far.
    socket.send(&ClientMessage::Ready).await.unwrap();
    let hand_started = |m: &ServerMessage| {
        matches!(m, ServerMessage::Event { event: StreamEvent::Game(Event::HandStarted { .. }), .. })
    };
    let mut second = read_until(&mut socket, hand_started).await;
    // The robots play until Alice must act; then the stream is quiet.
    second.extend(read_until_quiet(&mut socket).await);
    refused(api, &format!("/api/v1/games/{id}/hands/2"), None, 404, "no_such_hand", "has not finished").await;
    let path2 = format!("/api/v1/games/{id}/hands/2/events");
    let live = api.ask(&path2, Some(&token)).await.body;
    assert_eq!((&live["finished"], &live["seen_as"]), (&json!(false), &json!("player")));
    let events = history_events(&live);
    assert_eq!(events[0].1["type"], "hand_started");
    assert_eq!(events, stream_events(&second, events[0].0..=i64::MAX), "hand 2 so far, as Alice's socket had it");
    assert!(live["events"].as_array().unwrap().iter().any(|e| e["audience"] == json!({"only": 0})), "Alice's deal");
    let watching = api.get(&path2).await;
    assert!(watching["events"].as_array().unwrap().iter().all(|e| concealed_tile_of(&e["event"]).is_none()));

    // To the end: then the history hides nothing, from anyone. The prompt
    // read above is sent again to a new connection, which resumes the stream.
    let since = Some(socket.last_seq);
    let mut socket = TableSocket::connect(addr, &id, Some(&token), since).await.unwrap();
    let rest = play_seat(&mut socket, SeatPlan::new(0)).await.unwrap();
    assert!(rest.game_over && rest.errors.is_empty(), "{:?}", rest.errors);
    wait_over(api, &id).await;
    let after = api.get(&path).await;
    assert_eq!((&after["seen_as"], &after["seat"]), (&json!("everything"), &Value::Null));
    let seqs: Vec<i64> = history_events(&after).iter().map(|e| e.0).collect();
    assert_eq!(seqs, range.collect::<Vec<_>>());
    let hidden: BTreeSet<i64> =
        after["events"].as_array().unwrap().iter().filter_map(|e| concealed_tile_of(&e["event"])).collect();
    assert_eq!(hidden, (0..4).collect());
    assert_eq!(api.ask(&path, Some(&token)).await.body, after, "Alice's token changes nothing once it is over");
    let hand2 = api.get(&path2).await;
    assert_eq!((&hand2["finished"], &hand2["seen_as"]), (&json!(true), &json!("everything")));
    assert!(int(&api.get(&format!("/api/v1/games/{id}")).await["finished_us"]) > 0);
    app.finish().await;
}

/// One player's record, computed from the game and hand answers.
#[derive(Debug, Default, Clone, PartialEq)]
struct Record {
    games_played: i64,
    games_won: i64,
    hands_played: i64,
    mah_jongs: i64,
    points: i64,
    net: i64,
}

/// Standings are what the games' own answers add up to.
async fn standings_are_the_hands_summed(backend: &str) {
    let app = TestApp::spawn(backend, TableDefaults::default()).await;
    let (addr, api) = (app.addr, app.api);
    let robots = [api.robot_game("One").await, api.robot_game("Two").await];
    let (alices, token) = person_table(api, "Alice").await;
    // A table that never starts counts for nobody.
    person_table(api, "Bob").await;
    api.start(&alices, Some(&token)).await;
    let mut socket = TableSocket::connect(addr, &alices, Some(&token), None).await.unwrap();
    let log = play_seat(&mut socket, SeatPlan::new(0)).await.unwrap();
    assert!(log.game_over && log.errors.is_empty(), "{:?}", log.errors);
    for id in robots.iter().chain([&alices]) {
        wait_over(api, id).await;
    }

    // Independently: from each game's players and final scores, and its hands.
    let mut expected: BTreeMap<(String, bool), Record> = BTreeMap::new();
    for game in all_pages(api, "/api/v1/games?state=over", "games", 100).await {
        let id = game["id"].as_str().unwrap();
        let detail = api.get(&format!("/api/v1/games/{id}")).await;
        let scores: Vec<i64> = detail["scores"].as_array().unwrap().iter().map(int).collect();
        let top = *scores.iter().max().unwrap();
        let mut key_of = BTreeMap::new();
        for p in detail["players"].as_array().unwrap() {
            let key = (p["name"].as_str().unwrap().to_string(), !p["robot"].is_null());
            let r = expected.entry(key.clone()).or_default();
            r.games_played += 1;
            r.games_won += i64::from(scores[int(&p["seat"]) as usize] == top);
            key_of.insert(int(&p["seat"]), key);
        }
        for hand in all_pages(api, &format!("/api/v1/games/{id}/hands"), "hands", 100).await {
            for p in hand["players"].as_array().unwrap() {
                let r = expected.get_mut(&key_of[&int(&p["player"])]).unwrap();
                r.hands_played += 1;
                r.mah_jongs += i64::from(p["won"] == true);
                r.points += int(&p["points"]);
                r.net += int(&p["delta"]);
            }
        }
    }
    let names: BTreeSet<&str> = expected.keys().map(|k| k.0.as_str()).collect();
    assert_eq!(names, BTreeSet::from(["Alice", "Robot 1", "Robot 2", "Robot 3", "Robot 4"]));
    assert_eq!(expected[&("Robot 1".to_string(), true)].games_played, 2, "Alice sat in seat 0");
    assert_eq!(expected[&("Robot 2".to_string(), true)].games_played, 3);
    assert!(expected.values().map(|r| r.games_won).sum::<i64>() >= 3, "each game has a winner");
    assert!(expected.values().map(|r| r.mah_jongs).sum::<i64>() > 0);

    let standings = all_pages(api, "/api/v1/standings", "standings", 2).await;
    assert_eq!(standings.len(), expected.len());
    let mut listed = Vec::new();
    for s in &standings {
        let key = (s["name"].as_str().unwrap().to_string(), s["robot"] == true);
        let r = &expected[&key];
        let got = Record {
            games_played: int(&s["games_played"]),
            games_won: int(&s["games_won"]),
            hands_played: int(&s["hands_played"]),
            mah_jongs: int(&s["mah_jongs"]),
            points: r.points,
            net: int(&s["net_settlement"]),
        };
        assert_eq!(&got, r, "{s}");
        let mean = s["mean_score"].as_f64().unwrap();
        // To two decimals.
        assert!((mean - r.points as f64 / r.hands_played as f64).abs() <= 0.005 + 1e-9, "{s}");
        assert!((mean * 100.0 - (mean * 100.0).round()).abs() < 1e-6, "{s}");
        listed.push((-r.net, key.0));
    }
    let mut sorted = listed.clone();
    sorted.sort();
    assert_eq!(listed, sorted, "best net settlement first, then by name");
    assert_eq!(expected.values().map(|r| r.net).sum::<i64>(), 0, "settlements are zero-sum");

    let alice = api.get("/api/v1/standings?player=Alice").await;
    assert_eq!((int(&alice["total"]), &alice["next_offset"]), (1, &Value::Null));
    assert_eq!(alice["standings"][0], *standings.iter().find(|s| s["name"] == "Alice").unwrap());
    assert_eq!(alice["standings"][0]["robot"], false);
    let bob = api.get("/api/v1/standings?player=Bob").await;
    assert_eq!((int(&bob["total"]), bob["standings"].as_array().unwrap().len()), (0, 0));
    app.finish().await;
}

/// Every bad request is refused with a status, a code and a message that
/// names what is wrong.
async fn bad_requests_get_specific_errors(backend: &str) {
    let app = TestApp::spawn(backend, TableDefaults::default()).await;
    let (addr, api) = (app.addr, app.api);
    let id = api.robot_game("Finished").await;
    let (open, bob) = person_table(api, "Bob").await;
    wait_over(api, &id).await;
    let games = "/api/v1/games";
    for (query, says) in [
        ("colour=red", "unknown field `colour`"),
        ("state=over&state=open", "duplicate field `state`"),
        ("limit=0", "limit must be a whole number from 1 to 100, not '0'"),
        ("limit=101", "limit must be a whole number from 1 to 100"),
        ("limit=ten", "not 'ten'"),
        ("offset=-1", "offset must be a whole number from 0"),
        ("state=finished", "state must be one of open, playing, over, not 'finished'"),
        ("source=web", "source must be one of live, loaded, mj-server"),
        ("from=2024-02-30", "from: '2024-02-30' is not a date"),
        ("to=yesterday", "to: 'yesterday' is not a date"),
        ("from=2024-05-01T10:00:00", "YYYY-MM-DDTHH:MM:SSZ"),
        ("from=2024-05-02&to=2024-05-01", "from must be before to"),
        ("from=2024-05-01&to=2024-05-01", "from must be before to"),
        ("player=", "player must name a player"),
    ] {
        refused(api, &format!("{games}?{query}"), None, 400, "bad_request", says).await;
    }
    refused(api, &format!("{games}/nope"), None, 404, "no_such_game", "no game nope").await;
    refused(api, &format!("{games}/nope/hands"), None, 404, "no_such_game", "no game nope").await;
    refused(api, &format!("{games}/nope/hands/1"), None, 404, "no_such_game", "no game nope").await;
    refused(api, &format!("{games}/nope/hands/1/events"), None, 404, "no_such_game", "no game nope").await;
    refused(api, &format!("{games}/{id}/hands?limit=500"), None, 400, "bad_request", "limit must be").await;
    refused(api, &format!("{games}/{id}/hands?player=Bob"), None, 400, "bad_request", "unknown field `player`").await;
    refused(api, &format!("{games}/{id}/hands/0"), None, 400, "bad_request", "a hand number is a whole number from 1")
        .await;
    refused(api, &format!("{games}/{id}/hands/two"), None, 400, "bad_request", "not 'two'").await;
    refused(api, &format!("{games}/{id}/hands/two/events"), None, 400, "bad_request", "not 'two'").await;
    refused(api, &format!("{games}/{id}/hands/999"), None, 404, "no_such_hand", "has no hand 999").await;
    refused(api, &format!("{games}/{id}/hands/999/events"), None, 404, "no_such_hand", "has no hand 999").await;
    refused(api, &format!("{games}/{open}/hands/1/events"), None, 404, "no_such_hand", "0 dealt").await;
    // A seat token of another game is no token of this one, over or not.
    refused(api, &format!("{games}/{id}/hands/1/events"), Some(&bob), 401, "bad_token", "not a seat token").await;
    let raw = format!(
        "GET {games}/{id}/hands/1/events HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Basic Ym9i\r\n\r\n"
    );
    let a = http_raw(addr, raw.as_bytes()).await.unwrap();
    assert_eq!((a.status, &a.body["error"]["code"]), (401, &json!("bad_token")), "{}", a.body);
    refused(api, "/api/v1/standings?limit=1000", None, 400, "bad_request", "limit must be").await;
    refused(api, "/api/v1/standings?state=over", None, 400, "bad_request", "unknown field `state`").await;
    refused(api, "/api/v1/standings?player=%20", None, 400, "bad_request", "player must name a player").await;
    // Nothing refused above stopped the good requests from answering.
    assert_eq!(int(&api.get(&format!("{games}?state=over")).await["total"]), 1);
    app.finish().await;
}
