//! Games survive a crash: the server process is killed with SIGKILL in the
//! middle of a hand, started again on the same database, and the same
//! clients reconnect with their seat tokens and finish the game. Nothing they
//! saw is lost, nothing reaches them twice, and the game ends exactly as an
//! uninterrupted run with the same seed and moves does. On both databases.

use crate::common;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use common::app::Api;
use common::db::{BACKENDS, TestDb};
use common::process::{ServerProcess, listener};
use mahjong::protocol::ws::{ServerMessage, StreamEvent};
use mahjong::rules::event::Event;
use mahjong_tools::client::{ClientError, SeatLog, SeatPlan, TableSocket, play_seat_into};
use serde_json::{Value, json};

const SEED: u64 = 4242;
const WAIT: Duration = Duration::from_secs(30);

/// A table with two people (seats 0 and 1) and two robots, no claim timer
/// (so that nothing depends on timing); returns its id and the two tokens.
async fn open_table(addr: SocketAddr) -> (String, [String; 2]) {
    let api = Api::at(addr);
    let table = api.table(&[2, 3], json!({"Timeout": "0"})).await;
    let tokens = [api.sit(&table, "Ann", 0).await, api.sit(&table, "Bob", 1).await];
    api.start(&table, Some(&tokens[0])).await;
    (table, tokens)
}

fn plan(seat: u8) -> SeatPlan {
    SeatPlan::new(seat)
}

/// What one client received: every event's sequence number and game event.
#[derive(Default, Debug)]
struct Seen {
    seqs: Vec<u64>,
    game: Vec<Event>,
    final_scores: Option<[i64; 4]>,
}

impl Seen {
    fn add(&mut self, log: &SeatLog) {
        for text in &log.received {
            if let Ok(ServerMessage::Event { seq, event, .. }) = serde_json::from_str(text) {
                self.seqs.push(seq);
                if let StreamEvent::Game(e) = event {
                    if let Event::GameOver { scores } = &e {
                        self.final_scores = Some(*scores);
                    }
                    self.game.push(e);
                }
            }
        }
    }
}

/// Plays a seat until the game is over, reconnecting (with the token and the
/// last sequence number seen) whenever the server goes away.
async fn play_through(addr: SocketAddr, table: String, token: String, seat: u8) -> (Seen, usize) {
    let mut seen = Seen::default();
    let mut since = None;
    let mut reconnections = 0;
    let deadline = Instant::now() + Duration::from_secs(240);
    loop {
        assert!(Instant::now() < deadline, "seat {seat} never finished the game");
        let mut socket = match TableSocket::connect(addr, &table, Some(&token), since).await {
            Ok(s) => s,
            Err(_) => {
                // The server is down: try again shortly.
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        if since.is_some() {
            reconnections += 1;
        }
        let mut log = SeatLog::default();
        let outcome = play_seat_into(&mut socket, plan(seat), &mut log).await;
        since = Some(socket.last_seq);
        assert!(log.errors.is_empty(), "seat {seat}: {:?}", log.errors);
        // What it received before the server went away counts too.
        seen.add(&log);
        match outcome {
            Ok(()) => {
                assert!(log.game_over);
                return (seen, reconnections);
            }
            // The server was killed under it.
            Err(ClientError::Answer(_) | ClientError::Ws(_) | ClientError::Io(_)) => {}
            Err(e) => panic!("seat {seat}: {e}"),
        }
    }
}

/// Waits until a spectator has seen `discards` discards of hand `hand`.
async fn watch_until(addr: SocketAddr, table: &str, hand: u32, discards: usize) {
    let mut socket = TableSocket::connect(addr, table, None, None).await.unwrap();
    let mut current = 0;
    let mut count = 0;
    loop {
        let (m, _) = socket.next(WAIT).await.unwrap().expect("the spectator's socket stays open");
        if let ServerMessage::Event { event: StreamEvent::Game(e), .. } = m {
            match e {
                Event::HandStarted { hand: h, .. } => current = h,
                Event::Discarded { .. } if current == hand => {
                    count += 1;
                    if count == discards {
                        return;
                    }
                }
                Event::GameOver { .. } => panic!("the game ended before hand {hand}"),
                _ => {}
            }
        }
    }
}

/// One run: the game played to the end, killed (or not) in hand 3.
async fn run(backend: &str, kill: bool) -> (Seen, Seen) {
    let db = TestDb::new(backend).await;
    let socket = listener();
    let addr = socket.local_addr().unwrap();
    let server = ServerProcess::start(&socket, &db.url, SEED, WAIT).await;
    let (table, [ann, bob]) = open_table(addr).await;
    let players = [
        tokio::spawn(play_through(addr, table.clone(), ann, 0)),
        tokio::spawn(play_through(addr, table.clone(), bob, 1)),
    ];
    let restarted = if kill {
        watch_until(addr, &table, 3, 9).await;
        server.kill();
        Some(ServerProcess::start(&socket, &db.url, SEED, WAIT).await)
    } else {
        Some(server)
    };
    let mut seen = Vec::new();
    for p in players {
        let (s, reconnections) = p.await.unwrap();
        assert_eq!(reconnections > 0, kill, "{backend}: reconnections {reconnections}");
        seen.push(s);
    }
    drop(restarted);
    db.remove().await;
    let bob = seen.pop().unwrap();
    (seen.pop().unwrap(), bob)
}

/// The events split by who made them (`player`, or none for the table's
/// own events such as the deal and the settlement), each list in stream
/// order. Two people act at the same moment (answering a discard, showing
/// their tiles after Mah-Jong), so the interleaving of different players'
/// events differs from run to run; each player's own sequence does not.
fn by_player(events: &[Event]) -> Vec<Vec<Event>> {
    let mut out = vec![Vec::new(); 5];
    for e in events {
        let json = serde_json::to_value(e).unwrap();
        let who = json.get("player").and_then(Value::as_u64).map_or(4, |p| p as usize);
        out[who].push(e.clone());
    }
    out
}

fn assert_stream_whole(backend: &str, who: &str, seen: &Seen) {
    assert!(
        seen.seqs.windows(2).all(|w| w[0] < w[1]),
        "{backend}: {who} received an event twice or out of order: {:?}",
        seen.seqs
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_game_killed_mid_hand_resumes_with_nothing_lost_on_both_databases() {
    for backend in BACKENDS {
        let (ann_whole, bob_whole) = run(backend, false).await;
        let (ann, bob) = run(backend, true).await;
        for (who, whole, resumed) in [("Ann", &ann_whole, &ann), ("Bob", &bob_whole, &bob)] {
            assert_stream_whole(backend, who, resumed);
            assert!(whole.final_scores.is_some(), "{backend}: the uninterrupted game ended");
            assert_eq!(resumed.final_scores, whole.final_scores, "{backend}: {who}'s final scores");
            // Every game event exactly once, each player's in order: as in
            // the uninterrupted run.
            assert_eq!(resumed.game.len(), whole.game.len(), "{backend}: {who}'s number of game events");
            for (p, (resumed, whole)) in by_player(&resumed.game).iter().zip(by_player(&whole.game)).enumerate() {
                let first_difference = resumed.iter().zip(&whole).position(|(a, b)| a != b);
                if let Some(i) = first_difference {
                    let around = |v: &[Event]| v[i.saturating_sub(2)..(i + 3).min(v.len())].to_vec();
                    panic!(
                        "{backend}: {who}'s events by player {p} differ at {i}:\nresumed {:#?}\nwhole {:#?}",
                        around(resumed),
                        around(&whole)
                    );
                }
                assert_eq!(resumed.len(), whole.len(), "{backend}: {who}'s number of events by player {p}");
            }
        }
    }
}
