//! The browser client's picture of the game (`crates/server/src/web/js/state.js`) against
//! the server's own: real games are played over the WebSocket, by a person's
//! seat and by a spectator, asking for a `snapshot` after many events; the
//! streams are written to files and `node` replays each through the client's
//! state logic, checking that its picture equals every snapshot the server sent.

use crate::common;

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use common::app::{TestApp, WAIT};
use mahjong::protocol::ws::{ClientMessage, ServerMessage, StreamEvent, TableState};
use mahjong::rules::event::Event;
use mahjong::rules::{Action, Claim};
use mahjong::table::TableDefaults;
use mahjong_tools::client::{TableSocket, preferred};
use serde_json::json;

/// A move that makes things happen: claims of every kind, kongs, then as a
/// plain client would.
fn busy_move(prompt: &mahjong::protocol::ws::Prompt) -> Option<Action> {
    let first = |wanted: &dyn Fn(&Action) -> bool| prompt.actions.iter().find(|a| wanted(a)).cloned();
    first(&|a| matches!(a, Action::MahJong | Action::Claim { claim: Claim::MahJong, .. }))
        .or_else(|| first(&|a| matches!(a, Action::Claim { claim: Claim::Kong, .. })))
        .or_else(|| first(&|a| matches!(a, Action::Claim { claim: Claim::Pung, .. })))
        .or_else(|| first(&|a| matches!(a, Action::Claim { claim: Claim::Chow(None), .. })))
        .or_else(|| first(&|a| matches!(a, Action::DeclareClosedKong { .. } | Action::AddToPung { .. })))
        .or_else(|| preferred(prompt))
}

/// Plays (or, without a token, watches) the game to its end, asking for a
/// snapshot every `every` events; answers every message received, as text.
async fn record(addr: std::net::SocketAddr, table: &str, token: Option<&str>, every: usize) -> Vec<String> {
    let mut socket = TableSocket::connect(addr, table, token, None).await.unwrap();
    let mut received = Vec::new();
    let mut events = 0;
    // Snapshots on their way: the first comes unasked, then those asked for.
    let mut asked: i64 = 1;
    let mut over = false;
    loop {
        let (message, text) = socket.next(WAIT).await.unwrap().expect("the socket stays open");
        received.push(text);
        match message {
            ServerMessage::Snapshot { table, .. } => {
                asked -= 1;
                // A socket that connected late (a loaded machine) may find
                // the game already over: no `game_over` event will come.
                over |= table.state == TableState::Over;
                if over && asked == 0 {
                    return received;
                }
            }
            ServerMessage::Prompt(prompt) if prompt.ready => socket.send(&ClientMessage::Ready).await.unwrap(),
            ServerMessage::Prompt(prompt) => {
                if let Some(action) = busy_move(&prompt) {
                    socket.send(&ClientMessage::Act { action }).await.unwrap();
                }
            }
            ServerMessage::Event { event, .. } => {
                events += 1;
                over = matches!(event, StreamEvent::Game(Event::GameOver { .. }));
                // A last snapshot after the game's end, and one every few events.
                if over || events % every == 0 {
                    socket.send(&ClientMessage::Snapshot).await.unwrap();
                    asked += 1;
                }
            }
            _ => {}
        }
    }
}

fn stream_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("client-state");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs the node check over a recorded stream.
fn check_with_node(file: &PathBuf) {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/web-stream/check-state.mjs");
    // The hook lets a Node older than 20.19 load crates/server/src/web/js as ES modules.
    let out = Command::new("node")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("--import")
        .arg("./tests/web/register.mjs")
        .arg(&script)
        .arg(file)
        .output()
        .unwrap_or_else(|e| {
            panic!("the client's logic tests need Node.js 18 or later on PATH (node: {e}); install Debian's nodejs")
        });
    let report = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "the client's state differs from the server's snapshots:\n{report}");
    assert!(report.contains("snapshots matched"), "{report}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_clients_picture_of_a_whole_game_matches_the_servers_snapshots() {
    let app = TestApp::spawn("memory", TableDefaults::default()).await;
    let (addr, api) = (app.addr, app.api);
    for (game, options) in
        [(0, json!({"NumRounds": 1})), (1, json!({"NumRounds": 1, "FlowersLoose": true, "ShowOnWashout": true}))]
    {
        let id = api.table(&[1, 2, 3], options).await;
        let token = api.sit(&id, "Tester", 0).await;
        api.start(&id, Some(&token)).await;
        // A spectator from the start, and the player.
        let watched = id.clone();
        let spectator = tokio::spawn(async move { record(addr, &watched, None, 7).await });
        let player = record(addr, &id, Some(&token), 5).await;
        let spectator = tokio::time::timeout(Duration::from_secs(120), spectator).await.unwrap().unwrap();
        for (who, stream) in [("player", player), ("spectator", spectator)] {
            let file = stream_dir().join(format!("game{game}-{who}.json"));
            std::fs::write(&file, serde_json::to_string(&stream).unwrap()).unwrap();
            check_with_node(&file);
        }
    }
    app.finish().await;
}
