//! The table actor's timers and handshakes, on tokio's paused clock.
//!
//! Each test drives a real table through its public handle, as the
//! WebSocket layer does (`Sit`, `Start`, `Connect`, `Message`,
//! `Disconnect`), and asserts on what the table sends and on the tokio clock
//! at which it arrives. With the clock paused, tokio moves it forward only
//! when every task is idle, straight to the next timer: a claim deadline,
//! the next robot move, a robot takeover or the closing of a finished
//! table. So a test takes no real time for the minutes it spans, and an
//! event's arrival time on the tokio clock is the instant the table acted.
//!
//! The store is the one thing kept off the paused clock. sqlx runs SQLite on
//! its own thread and waits for it under timeouts (its pool's, and the
//! journal's three seconds for a connection); on a paused runtime the clock
//! jumps to those timeouts whenever the tasks wait for SQLite, and the store
//! reports itself unavailable at once (`Store::open` itself fails with
//! `PoolTimedOut`). The in-memory store is therefore opened on a separate
//! runtime with a real clock ([`real_time`]); the table reaches it through
//! the journal's channels, and while it waits for a write no timer of the
//! paused runtime is pending, so the paused clock stands still.
//!
//! For the same reason the tests never hold a tokio timer of their own while
//! the table may be writing: they wait for messages without a timeout on
//! the paused clock (a watchdog on the real-time runtime fails a test that
//! hears nothing for [`REAL_WAIT`]), and they sleep on the paused clock only
//! after a round trip to the table has shown it idle.

use std::future::Future;
use std::sync::OnceLock;
use std::time::Duration;

use tokio::time::Instant;

use super::actor;
use super::{Connection, RobotSeat, SeatGrant, TableCommand, TableHandle, TableLimits, TableSettings, TableSetup};
use crate::bots::strategy::Strategy;
use crate::limits::Permit;
use crate::protocol::ws::{
    ClientMessage, Prompt, ServerMessage, StreamEvent, TableEvent, TableInfo, TableState, WsErrorCode,
};
use crate::rules::command::{Action, PlayerId};
use crate::rules::event::Event;
use crate::rules::options::GameOptions;
use crate::rules::tile::Tile;
use crate::rules::view::{Claimable, Decision};
use crate::store::Store;

/// How long a test waits, in real time, for a message before it fails.
const REAL_WAIT: Duration = Duration::from_secs(60);

/// A runtime on the real clock, for the stores (see the module's notes).
pub(super) fn real_time() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("store")
            .enable_all()
            .build()
            .expect("a runtime for the stores")
    })
}

/// Runs `f` on the paused clock, failing the test if it has not finished
/// after [`REAL_WAIT`] of real time (the alarm runs on the real-time
/// runtime, so it never moves the paused clock).
pub(super) async fn within_real_time<F: Future>(what: &str, f: F) -> F::Output {
    let mut alarm = real_time().spawn(async { tokio::time::sleep(REAL_WAIT).await });
    let f = std::pin::pin!(f);
    let out = tokio::select! {
        biased;
        out = f => Some(out),
        _ = &mut alarm => None,
    };
    alarm.abort();
    out.unwrap_or_else(|| panic!("{what}: nothing after {REAL_WAIT:?} of real time"))
}

/// A fresh in-memory store, served by the real-time runtime.
pub(super) async fn open_store() -> Store {
    let opening = real_time().spawn(Store::open("sqlite::memory:"));
    within_real_time("opening the store", opening).await.expect("the store task").expect("an in-memory store")
}

/// Table settings with these options (as an option file writes them) and
/// this pause between actions.
fn settings(options: &[(&str, &str)], pause_deciseconds: u32) -> TableSettings {
    let mut game = GameOptions::default();
    for (name, value) in options {
        game.set(name, value).expect("a valid option");
    }
    let mut settings = TableSettings::new("timers", game, 7);
    settings.pause_deciseconds = pause_deciseconds;
    settings
}

/// Opens a table with robots in `robots`, started at once if `start`.
async fn open_table(id: &str, settings: TableSettings, robots: &[u8], start: bool) -> TableHandle {
    let robots = robots.iter().map(|&s| RobotSeat { seat: Some(s), strategy: Strategy::default() }).collect();
    let store = open_store().await;
    let setup = TableSetup { settings, robots, start, hold: Permit::uncounted(), payer: None };
    within_real_time("opening the table", actor::spawn(id.to_string(), setup, store, limits()))
        .await
        .expect("the table opens")
}

/// No limit on requests, and no idle table expires (time is paused here, and
/// jumps to the next deadline).
fn limits() -> TableLimits {
    let year = std::time::Duration::from_secs(365 * 24 * 3600);
    TableLimits { idle_open: year, idle_game: year, ..TableLimits::from(&crate::limits::Limits::unlimited()) }
}

async fn sit(table: &TableHandle, name: &str, seat: u8) -> SeatGrant {
    let name = name.to_string();
    let hold = Permit::uncounted();
    let asked =
        table.ask(|reply| TableCommand::Sit { name, seat: Some(seat), account: None, session: None, hold, reply });
    within_real_time("sitting", asked).await.expect("the table answers").expect("the seat is free")
}

async fn start(table: &TableHandle, token: &str) {
    let asker = super::Asker { token: Some(token.to_string()), ..Default::default() };
    let asked = table.ask(|reply| TableCommand::Start { asker, robot_game: None, payer: None, reply });
    within_real_time("starting", asked).await.expect("the table answers").expect("the game starts");
}

async fn info(table: &TableHandle) -> TableInfo {
    within_real_time("info", table.ask(|reply| TableCommand::Info { reply })).await.expect("the table answers")
}

/// One connection to a table, as a WebSocket would hold it.
struct Client {
    table: TableHandle,
    conn: Connection,
}

impl Client {
    /// Connects with a seat token (`None`: a spectator), resuming after
    /// `since` if given.
    async fn connect(table: &TableHandle, token: Option<&str>, since: Option<u64>) -> Client {
        let token = token.map(str::to_string);
        let asked = table.ask(|reply| TableCommand::Connect { token, account: None, since, replay_hand: false, reply });
        let conn = within_real_time("connecting", asked).await.expect("the table answers").expect("connected");
        Client { table: table.clone(), conn }
    }

    /// The next message; the connection must stay open.
    async fn next(&mut self) -> ServerMessage {
        let text = within_real_time("waiting for a message", self.conn.outbound.recv()).await;
        parse(&text.expect("the table keeps the connection open"))
    }

    /// The next message, or `None` once the table has closed the connection.
    async fn next_or_closed(&mut self) -> Option<ServerMessage> {
        within_real_time("waiting for a message", self.conn.outbound.recv()).await.map(|t| parse(&t))
    }

    async fn send(&self, message: ClientMessage) {
        let command = TableCommand::Message { connection: self.conn.id, message };
        within_real_time("sending", self.table.send(command)).await.expect("the table is open");
    }

    /// The seat is asked about every discard, also when it can only pass
    /// (as the tests written before the table passed for it expect).
    async fn ask_every_discard(&self) {
        self.send(ClientMessage::SetClaimPrompts { every_discard: true }).await;
    }

    async fn act(&self, action: Action) {
        self.send(ClientMessage::Act { action }).await;
    }

    /// Everything the table has sent this connection up to now: a `ping`
    /// is answered after whatever the commands before it caused.
    async fn sync(&mut self) -> Vec<ServerMessage> {
        self.send(ClientMessage::Ping).await;
        let mut out = Vec::new();
        loop {
            match self.next().await {
                ServerMessage::Pong => return out,
                m => out.push(m),
            }
        }
    }

    /// Reads until `wanted` picks a message; returns what it picked.
    async fn until<T>(&mut self, mut wanted: impl FnMut(&ServerMessage) -> Option<T>) -> T {
        loop {
            let m = self.next().await;
            if let ServerMessage::Error { code, message } = &m {
                panic!("refused: {code}: {message}");
            }
            if let Some(t) = wanted(&m) {
                return t;
            }
        }
    }
}

fn parse(text: &str) -> ServerMessage {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("the table sent {text}: {e}"))
}

fn game_event(m: &ServerMessage) -> Option<&Event> {
    match m {
        ServerMessage::Event { event: StreamEvent::Game(e), .. } => Some(e),
        _ => None,
    }
}

fn table_event(m: &ServerMessage) -> Option<&TableEvent> {
    match m {
        ServerMessage::Event { event: StreamEvent::Table(e), .. } => Some(e),
        _ => None,
    }
}

fn prompt(m: &ServerMessage) -> Option<&Prompt> {
    match m {
        ServerMessage::Prompt(p) => Some(p),
        _ => None,
    }
}

type Gist = (bool, Option<Decision>, Vec<Action>, Option<Claimable>, Option<(u32, u64)>, Option<Tile>);

/// What a prompt says that matters to a player (not its position, the time
/// left or the wall's count, which change on their own).
fn gist(p: &Prompt) -> Gist {
    (p.ready, p.decision, p.actions.clone(), p.claimable, p.deadline.map(|d| (d.discard, d.at_us)), p.drawn)
}

/// A simple player: says `ready` when asked, declares bonus tiles, never
/// claims (it passes), shows its tiles after another's Mah-Jong, and
/// discards the tile it drew (or the first it may).
fn simple_move(p: &Prompt) -> Option<ClientMessage> {
    if p.ready {
        return Some(ClientMessage::Ready);
    }
    let first = |wanted: fn(&Action) -> bool| p.actions.iter().find(|a| wanted(a)).cloned();
    let drawn = p.drawn.map(|tile| Action::Discard { tile, calling: false }).filter(|d| p.actions.contains(d));
    let action = first(|a| matches!(a, Action::DeclareBonus { .. }))
        .or_else(|| first(|a| matches!(a, Action::FinishDeclaring | Action::Pass { .. } | Action::ShowTiles)))
        .or(drawn)
        .or_else(|| first(|a| matches!(a, Action::Discard { calling: false, .. })))
        .or_else(|| p.actions.first().cloned())?;
    Some(ClientMessage::Act { action })
}

/// 1. An unanswered claim is passed by the table when its window closes:
/// `Timeout` 10 plus `TimeoutGrace` 5 after the discard. The person's
/// prompt for another player's discard carries the deadline (15,000 ms
/// left, for that discard's serial); a connection made 5 s later is told
/// the same deadline with 10 s left; the person says nothing, and exactly
/// 15 s after the prompt on the tokio clock, not before, it is told it
/// passed by timeout.
#[tokio::test(start_paused = true)]
async fn an_unanswered_claim_is_passed_for_the_player_when_the_window_closes() {
    let table =
        open_table("claim-timeout", settings(&[("Timeout", "10"), ("TimeoutGrace", "5")], 0), &[1, 2, 3], false).await;
    let ann = sit(&table, "Ann", 0).await;
    start(&table, &ann.token).await;
    let mut client = Client::connect(&table, Some(&ann.token), None).await;
    client.ask_every_discard().await;
    // Play (never claiming) until asked to answer another player's discard.
    let mut last_discard = None;
    let (serial, asked_at, at_us) = loop {
        match client.next().await {
            ServerMessage::Event { event: StreamEvent::Game(Event::Discarded { player, discard, .. }), .. } => {
                last_discard = Some((player, discard));
            }
            ServerMessage::Prompt(p) if p.decision == Some(Decision::AnswerDiscard) => {
                let (from, discard) = last_discard.expect("the discard came before the prompt");
                assert_ne!(from, PlayerId(0), "asked to answer another's discard");
                let deadline = p.deadline.expect("a timed claim window is in the prompt");
                assert_eq!(deadline.discard, discard, "the deadline is for the discard being answered");
                assert_eq!(p.claimable.map(|c| c.discard), Some(discard));
                assert!((14_900..=15_000).contains(&deadline.ms_left), "10 s + 5 s grace: {deadline:?}");
                let wall_left = deadline.at_us as i64 - crate::store::now_us();
                // (at_us is on the wall clock, which the paused tokio clock does not move.)
                assert!((10_000_000..=15_000_000).contains(&wall_left), "at_us is 15 s ahead on the wall clock");
                break (discard, Instant::now(), deadline.at_us);
            }
            ServerMessage::Prompt(p) => {
                if let Some(m) = simple_move(&p) {
                    client.send(m).await;
                }
            }
            ServerMessage::Error { code, message } => panic!("refused: {code}: {message}"),
            _ => {}
        }
    };
    // Five seconds on, a new connection for the seat is told the same
    // deadline, with the time that is left.
    {
        assert!(client.sync().await.iter().all(|m| prompt(m).is_none()), "one prompt for the window");
        tokio::time::sleep(Duration::from_secs(5)).await;
        let mut again = Client::connect(&table, Some(&ann.token), None).await;
        assert!(matches!(again.next().await, ServerMessage::Snapshot { seat: Some(0), .. }));
        let deadline = prompt(&again.next().await).and_then(|p| p.deadline).expect("the prompt, with its deadline");
        assert_eq!((deadline.discard, deadline.at_us), (serial, at_us), "the same deadline");
        assert!((9_900..=10_000).contains(&deadline.ms_left), "10 s are left: {deadline:?}");
        client = again;
    }
    // Say nothing: the table passes for us when the window closes.
    let (discard, timeout) = client
        .until(|m| match game_event(m) {
            Some(Event::Passed { player, discard, timeout }) => {
                assert_eq!(*player, PlayerId(0), "a player is told only of its own passes");
                Some((*discard, *timeout))
            }
            _ => None,
        })
        .await;
    let waited = asked_at.elapsed();
    assert_eq!(discard, serial);
    assert!(timeout, "passed by the timeout, not by us");
    assert!(waited >= Duration::from_secs(15), "not before the deadline: {waited:?}");
    assert!(waited < Duration::from_millis(15_100), "at the deadline: {waited:?}");
}

/// 2. The pause between actions paces robots: at a table of four robots
/// started at once with `pause_deciseconds` 10, a spectator receives the
/// events of consecutive moves at least 1 s apart on the tokio clock (the
/// events' `at_us` is wall-clock time, so the arrival is timed instead), and
/// the pace is that pause, not slower.
#[tokio::test(start_paused = true)]
async fn robots_move_no_faster_than_the_pause_between_actions() {
    let table = open_table("pace", settings(&[], 10), &[0, 1, 2, 3], true).await;
    let mut watcher = Client::connect(&table, None, None).await;
    assert!(matches!(watcher.next().await, ServerMessage::Snapshot { seat: None, .. }));
    let mut arrivals: Vec<Instant> = Vec::new();
    while arrivals.len() < 40 {
        if let ServerMessage::Event { .. } = watcher.next().await {
            let now = Instant::now();
            if arrivals.last() != Some(&now) {
                arrivals.push(now);
            }
        }
    }
    let gaps: Vec<Duration> = arrivals.windows(2).map(|w| w[1] - w[0]).collect();
    let shortest = *gaps.iter().min().expect("gaps");
    assert!(shortest >= Duration::from_secs(1), "moves 1 s apart at least: {gaps:?}");
    assert!(shortest < Duration::from_millis(1_010), "and paced by the pause: {gaps:?}");
}

/// 3. A robot stands in for an absent person after the takeover delay. With
/// `robot_takeover` 30 s, the person leaves when it is its turn to declare:
/// 29 s later the hand has not moved; at 30 s a robot declares and plays
/// for the seat. When the person reconnects it gets a snapshot and its
/// prompt, and the robot stops: at the person's next turn the table waits
/// for it (two minutes, nothing happens) until it discards itself.
#[tokio::test(start_paused = true)]
async fn a_robot_stands_in_for_an_absent_player_until_it_returns() {
    let mut table_settings = settings(&[], 10);
    table_settings.robot_takeover = Some(Duration::from_secs(30));
    let table = open_table("takeover", table_settings, &[1, 2, 3], false).await;
    let ann = sit(&table, "Ann", 0).await;
    start(&table, &ann.token).await;
    let mut watcher = Client::connect(&table, None, None).await;
    let mut client = Client::connect(&table, Some(&ann.token), None).await;
    // Ready; the hand is dealt and East (Ann) declares first.
    client
        .until(|m| match prompt(m) {
            Some(p) if p.ready => Some(()),
            _ => None,
        })
        .await;
    client.send(ClientMessage::Ready).await;
    client.until(|m| prompt(m).filter(|p| p.decision == Some(Decision::Declare)).map(drop)).await;
    // Ann leaves at her turn.
    within_real_time("disconnecting", table.send(TableCommand::Disconnect { connection: client.conn.id }))
        .await
        .expect("the table is open");
    drop(client);
    let gone = Instant::now();
    let seen = watcher.sync().await;
    assert!(seen.iter().any(|m| table_event(m) == Some(&TableEvent::Disconnected { seat: 0 })));
    // 29 s later the table still waits for her.
    tokio::time::sleep(Duration::from_secs(29)).await;
    let seen = watcher.sync().await;
    assert!(seen.iter().all(|m| game_event(m).is_none()), "nothing moved while waiting: {seen:?}");
    assert!(!info(&table).await.seats[0].connected);
    // At 30 s a robot plays her seat.
    let first = watcher.until(|m| game_event(m).cloned()).await;
    let stood_in = gone.elapsed();
    assert!(stood_in >= Duration::from_secs(30), "not before the takeover delay: {stood_in:?}");
    assert!(stood_in < Duration::from_millis(30_100), "at the takeover delay: {stood_in:?}");
    assert!(
        matches!(
            first,
            Event::FinishedDeclaring { player: PlayerId(0) } | Event::DeclaredBonus { player: PlayerId(0), .. }
        ),
        "the robot declares for her: {first:?}"
    );
    // Play goes on: the robot discards for her after the others declare.
    watcher.until(|m| matches!(game_event(m), Some(Event::Discarded { player: PlayerId(0), .. })).then_some(())).await;
    // Ann comes back: a snapshot, then her prompt.
    let mut client = Client::connect(&table, Some(&ann.token), None).await;
    assert!(matches!(client.next().await, ServerMessage::Snapshot { seat: Some(0), .. }), "a snapshot first");
    assert!(matches!(client.next().await, ServerMessage::Prompt(_)), "then her prompt");
    watcher.until(|m| (table_event(m) == Some(&TableEvent::Reconnected { seat: 0 })).then_some(())).await;
    // She plays again (passing) until it is her turn to discard.
    let turn = loop {
        match client.next().await {
            ServerMessage::Prompt(p) if p.decision == Some(Decision::Discard) => break p,
            ServerMessage::Prompt(p) => {
                if let Some(m) = simple_move(&p) {
                    client.send(m).await;
                }
            }
            ServerMessage::Error { code, message } => panic!("refused: {code}: {message}"),
            _ => {}
        }
    };
    // The robot no longer plays for her: two minutes on, nothing has moved.
    client.sync().await;
    let before = info(&table).await.seq;
    watcher.sync().await;
    tokio::time::sleep(Duration::from_secs(120)).await;
    assert_eq!(info(&table).await.seq, before, "the table waited for her");
    assert!(watcher.sync().await.is_empty());
    assert!(client.sync().await.is_empty(), "no new prompt either");
    // She discards; the others play on.
    let discard = turn.actions.iter().find(|a| matches!(a, Action::Discard { calling: false, .. }));
    client.act(discard.cloned().expect("a discard in her prompt")).await;
    watcher.until(|m| matches!(game_event(m), Some(Event::Discarded { player: PlayerId(0), .. })).then_some(())).await;
    watcher.until(|m| game_event(m).map(drop)).await;
}

/// The next message for either of two clients, and whose (0 or 1).
async fn next_of_two(a: &mut Client, b: &mut Client) -> (usize, ServerMessage) {
    let (who, text) = within_real_time("waiting for a message", async {
        tokio::select! {
            t = a.conn.outbound.recv() => (0, t),
            t = b.conn.outbound.recv() => (1, t),
        }
    })
    .await;
    (who, parse(&text.expect("the table keeps the connections open")))
}

/// 4. The ready handshake and pauses. The hand is dealt only when every
/// person has said `ready`. A pause request during a claim window stops
/// play: moves are refused with `not_now`, the claim timer stops (a minute
/// passes with no timeout pass), everyone must say `ready` again, and then
/// `resumed` comes with a fresh claim deadline, which passes for the silent
/// player 15 s after the resumption.
#[tokio::test(start_paused = true)]
async fn every_person_must_be_ready_and_a_pause_stops_the_claim_timer() {
    let table = open_table("handshake", settings(&[("Timeout", "10"), ("TimeoutGrace", "5")], 0), &[2, 3], false).await;
    let ann_seat = sit(&table, "Ann", 0).await;
    let bob_seat = sit(&table, "Bob", 1).await;
    start(&table, &ann_seat.token).await;
    let mut ann = Client::connect(&table, Some(&ann_seat.token), None).await;
    ann.ask_every_discard().await;
    let mut bob = Client::connect(&table, Some(&bob_seat.token), None).await;
    for client in [&mut ann, &mut bob] {
        client.until(|m| prompt(m).filter(|p| p.ready && p.actions.is_empty()).map(drop)).await;
    }
    // Ann alone is not enough (saying it twice does no harm).
    ann.send(ClientMessage::Ready).await;
    ann.send(ClientMessage::Ready).await;
    let seen = ann.sync().await;
    assert!(seen.iter().any(|m| table_event(m) == Some(&TableEvent::WaitingForReady { seats: vec![1] })));
    assert!(seen.iter().all(|m| game_event(m).is_none()), "no deal yet: {seen:?}");
    let waiting = info(&table).await;
    assert_eq!((waiting.hands, waiting.waiting_for_ready), (0, vec![1]));
    // Bob too: the hand is dealt.
    bob.send(ClientMessage::Ready).await;
    ann.until(|m| matches!(game_event(m), Some(Event::HandStarted { hand: 1, .. })).then_some(())).await;
    // Both play (never claiming) until Ann must answer a discard.
    let serial = loop {
        let (who, m) = next_of_two(&mut ann, &mut bob).await;
        match m {
            ServerMessage::Prompt(p) if who == 0 && p.decision == Some(Decision::AnswerDiscard) => {
                break p.deadline.expect("a timed claim window").discard;
            }
            ServerMessage::Prompt(p) => {
                if let Some(m) = simple_move(&p) {
                    [&ann, &bob][who].send(m).await;
                }
            }
            ServerMessage::Error { code, message } => panic!("refused: {code}: {message}"),
            _ => {}
        }
    };
    let asked_at = Instant::now();
    // Ann asks for a pause instead of answering.
    ann.send(ClientMessage::RequestPause { reason: "the doorbell".into() }).await;
    let seen = ann.sync().await;
    let paused = TableEvent::Paused { seat: 0, reason: "the doorbell".into() };
    assert!(seen.iter().any(|m| table_event(m) == Some(&paused)));
    assert!(seen.iter().any(|m| table_event(m) == Some(&TableEvent::WaitingForReady { seats: vec![0, 1] })));
    let last = seen.iter().filter_map(prompt).next_back().expect("a new prompt");
    assert!(last.ready && last.actions.is_empty() && last.deadline.is_none(), "{last:?}");
    // Moves are refused while paused.
    ann.act(Action::Pass { discard: serial }).await;
    let refused = ann.sync().await;
    assert!(
        matches!(refused.as_slice(), [ServerMessage::Error { code: WsErrorCode::NotNow, .. }]),
        "refused: {refused:?}"
    );
    bob.act(Action::Pass { discard: serial }).await;
    let refused = bob.sync().await;
    assert!(
        matches!(refused.last(), Some(ServerMessage::Error { code: WsErrorCode::NotNow, .. })),
        "refused: {refused:?}"
    );
    // A minute passes: the claim timer does not run while paused.
    tokio::time::sleep(Duration::from_secs(60)).await;
    let seen = ann.sync().await;
    assert!(seen.iter().all(|m| game_event(m).is_none()), "nothing happened while paused: {seen:?}");
    assert!(info(&table).await.paused);
    // Ann is ready: still paused, until Bob is too.
    ann.send(ClientMessage::Ready).await;
    let seen = ann.sync().await;
    assert!(seen.iter().any(|m| table_event(m) == Some(&TableEvent::WaitingForReady { seats: vec![1] })));
    assert!(!seen.iter().any(|m| table_event(m) == Some(&TableEvent::Resumed)));
    bob.send(ClientMessage::Ready).await;
    ann.until(|m| (table_event(m) == Some(&TableEvent::Resumed)).then_some(())).await;
    let resumed_at = Instant::now();
    let deadline =
        ann.until(|m| prompt(m).filter(|p| p.decision == Some(Decision::AnswerDiscard)).and_then(|p| p.deadline)).await;
    assert_eq!(deadline.discard, serial, "the same discard is answered");
    assert!((14_900..=15_000).contains(&deadline.ms_left), "a whole window again: {deadline:?}");
    // Ann still says nothing: the table passes for her 15 s after resuming.
    let timeout = ann
        .until(|m| match game_event(m) {
            Some(Event::Passed { player: PlayerId(0), discard, timeout }) if *discard == serial => Some(*timeout),
            _ => None,
        })
        .await;
    assert!(timeout);
    let waited = resumed_at.elapsed();
    assert!(waited >= Duration::from_secs(15) && waited < Duration::from_millis(15_100), "{waited:?}");
    assert!(asked_at.elapsed() >= Duration::from_secs(75), "the paused minute did not count");
}

/// 5. A finished game's table closes once nobody has been connected for
/// five minutes: not while a spectator watches (ten minutes pass), and
/// after it leaves, open at 299 s, closed at 301 s.
#[tokio::test(start_paused = true)]
async fn a_finished_table_closes_five_minutes_after_its_last_watcher_leaves() {
    let table = open_table("closing", settings(&[("NumRounds", "1")], 0), &[0, 1, 2, 3], true).await;
    let mut watcher = Client::connect(&table, None, None).await;
    watcher
        .until(|m| match m {
            ServerMessage::Snapshot { table, .. } if table.state == TableState::Over => Some(()),
            _ => matches!(game_event(m), Some(Event::GameOver { .. })).then_some(()),
        })
        .await;
    assert_eq!(info(&table).await.state, TableState::Over);
    tokio::time::sleep(Duration::from_secs(600)).await;
    assert!(!table.is_closed(), "a watched table stays open");
    assert_eq!(info(&table).await.spectators, 1);
    within_real_time("disconnecting", table.send(TableCommand::Disconnect { connection: watcher.conn.id }))
        .await
        .expect("the table is open");
    drop(watcher);
    tokio::time::sleep(Duration::from_secs(299)).await;
    assert!(!table.is_closed(), "open for five minutes");
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(table.is_closed(), "then closed");
}

/// A table of four robots (with `options`) played until a spectator sees
/// `until`, stopped, and opened again from the store as a restart does, with
/// `recovering` as the restart's flag.
async fn robots_back_after_a_restart(
    id: &str,
    options: &[(&str, &str)],
    until: impl Fn(&ServerMessage) -> bool,
    recovering: tokio::sync::watch::Receiver<bool>,
) -> TableHandle {
    let store = open_store().await;
    let robots = (0..4).map(|s| RobotSeat { seat: Some(s), strategy: Strategy::default() }).collect();
    let setup =
        TableSetup { settings: settings(options, 0), robots, start: true, hold: Permit::uncounted(), payer: None };
    let spawned = actor::spawn(id.into(), setup, store.clone(), limits());
    let table = within_real_time("opening the table", spawned).await.expect("the table opens");
    let mut watcher = Client::connect(&table, None, None).await;
    watcher.until(|m| until(m).then_some(())).await;
    within_real_time("stopping", table.ask(|reply| TableCommand::Shutdown { reply })).await.expect("stopped");
    drop(watcher);
    let loading = real_time().spawn({
        let (store, id) = (store.clone(), id.to_string());
        async move { store.load_game(&id, i64::MAX).await }
    });
    let saved = within_real_time("loading", loading).await.expect("the task").expect("read").expect("stored");
    let cpus = tokio::sync::Semaphore::new(1);
    let reopened =
        within_real_time("reopening", super::recovery::recover(saved, store, limits(), &cpus, recovering)).await;
    reopened.expect("the game's table opens again")
}

/// 5b. A finished game's table opened again after a restart closes five
/// minutes later if nobody connects: the restart sent everybody away.
#[tokio::test(start_paused = true)]
async fn a_finished_table_back_after_a_restart_closes_five_minutes_later() {
    let game_over = |m: &ServerMessage| matches!(game_event(m), Some(Event::GameOver { .. }));
    let (_, recovering) = tokio::sync::watch::channel(false);
    let table = robots_back_after_a_restart("finished", &[("NumRounds", "1")], game_over, recovering).await;
    // Nothing is asked of it before then: the timer runs from the restart.
    tokio::time::sleep(Duration::from_secs(299)).await;
    assert!(!table.is_closed(), "open for five minutes");
    assert_eq!(info(&table).await.state, TableState::Over);
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(table.is_closed(), "then closed");
}

/// 5c. While a restart is still bringing tables back, the robots of a table
/// already back wait (a minute passes without a move); they play on as soon
/// as the restart is over.
#[tokio::test(start_paused = true)]
async fn robots_wait_until_the_restart_has_brought_every_table_back() {
    let discarded = |m: &ServerMessage| matches!(game_event(m), Some(Event::Discarded { .. }));
    let (recovering, wait) = tokio::sync::watch::channel(true);
    let table = robots_back_after_a_restart("waiting", &[], discarded, wait).await;
    let mut watcher = Client::connect(&table, None, None).await;
    tokio::time::sleep(Duration::from_secs(60)).await;
    let meanwhile = watcher.sync().await;
    assert!(meanwhile.iter().all(|m| game_event(m).is_none()), "the robots moved during the restart: {meanwhile:?}");
    recovering.send_replace(false);
    watcher.until(|m| matches!(game_event(m), Some(Event::Discarded { .. })).then_some(())).await;
}

/// 6. Prompts follow the moves. Over a hand, every prompt differs from the
/// one before it in what it offers, and after each one the player's
/// snapshot offers exactly the prompt's moves; a chat (or any event that
/// changes nothing for the player) brings no prompt. A new connection for
/// the seat always gets the prompt, with a snapshot or resuming after a
/// position, even though nothing changed.
#[tokio::test(start_paused = true)]
async fn a_prompt_is_sent_when_the_moves_change_and_to_every_new_connection() {
    let table = open_table("prompts", settings(&[], 0), &[1, 2, 3], false).await;
    let ann = sit(&table, "Ann", 0).await;
    start(&table, &ann.token).await;
    let mut client = Client::connect(&table, Some(&ann.token), None).await;
    client.ask_every_discard().await;
    assert!(matches!(client.next().await, ServerMessage::Snapshot { seat: Some(0), .. }));
    let mut last = match client.next().await {
        ServerMessage::Prompt(p) => p,
        other => panic!("the prompt follows the snapshot: {other:?}"),
    };
    assert!(last.ready);
    let mut prompts = 1;
    let mut answered_discards = 0;
    let mut hand_over = false;
    let mut chats = 0;
    while !(hand_over && last.ready) {
        // A chat changes nothing for Ann: it brings no prompt, and her
        // snapshot offers what her last prompt offers. (Robots may still be
        // moving, e.g. declaring after a Mah-Jong while Ann may show her
        // tiles; what they change may bring a prompt, never the same one.
        // While she must answer a discard, the table waits for her alone.)
        chats += 1;
        let text = format!("chat {chats}");
        let waited_for = last.decision == Some(Decision::AnswerDiscard);
        client.send(ClientMessage::Chat { text: text.clone() }).await;
        client.send(ClientMessage::Snapshot).await;
        let mut heard = false;
        let view = loop {
            match client.next().await {
                ServerMessage::Snapshot { table, game, .. } => break (table, game),
                ServerMessage::Event { event: StreamEvent::Table(TableEvent::Chat { text: t, .. }), .. } => {
                    assert_eq!(t, text);
                    heard = true;
                }
                ServerMessage::Prompt(p) => {
                    assert!(!waited_for, "nothing changed for her, yet a prompt came: {p:?}");
                    assert_ne!(gist(&p), gist(&last), "a prompt is sent only when it changes");
                    prompts += 1;
                    last = p;
                }
                m @ ServerMessage::Event { .. } => {
                    assert!(!waited_for, "the table waits for her alone: {m:?}");
                    let arrived = table_event(&m) == Some(&TableEvent::Connected { seat: 0 });
                    assert!(game_event(&m).is_some() || arrived, "only the chat and the robots' moves: {m:?}");
                }
                other => panic!("{other:?}"),
            }
        };
        assert!(heard, "the chat came");
        let (table_info, game) = view;
        let playing = table_info.state == TableState::Playing && !table_info.paused;
        if playing && table_info.waiting_for_ready.is_empty() {
            let hand = game.and_then(|g| g.hand).expect("a hand is played");
            assert_eq!(hand.my_actions, last.actions, "the last prompt offers what the snapshot does");
            assert_eq!(hand.my_decision, last.decision);
        }
        // Ann moves; the next prompt must offer something else.
        let Some(message) = simple_move(&last) else { panic!("Ann is waited for in {last:?}") };
        answered_discards += usize::from(last.decision == Some(Decision::AnswerDiscard));
        client.send(message).await;
        last = loop {
            match client.next().await {
                ServerMessage::Prompt(p) => {
                    assert_ne!(gist(&p), gist(&last), "a prompt is sent only when it changes");
                    prompts += 1;
                    // Prompts that offer nothing (waiting for the others) are followed.
                    if p.ready || !p.actions.is_empty() {
                        break p;
                    }
                    last = p;
                }
                ServerMessage::Event {
                    event: StreamEvent::Game(Event::Settled { .. } | Event::WashedOut { .. }),
                    ..
                } => {
                    hand_over = true;
                }
                ServerMessage::Error { code, message } => panic!("refused: {code}: {message}"),
                _ => {}
            }
        };
    }
    assert!(prompts > 10 && answered_discards > 0, "a hand's worth of prompts: {prompts}, {answered_discards}");
    // A new connection for the seat gets the prompt, unchanged as it is.
    let mut again = Client::connect(&table, Some(&ann.token), None).await;
    assert!(matches!(again.next().await, ServerMessage::Snapshot { seat: Some(0), .. }));
    let p = prompt(&again.next().await).cloned().expect("the prompt follows the snapshot");
    assert_eq!(gist(&p), gist(&last));
    // The old connection is closed.
    while let Some(m) = client.next_or_closed().await {
        assert!(!matches!(m, ServerMessage::Prompt(_)), "the replaced connection gets nothing more: {m:?}");
    }
    // So does one resuming after a position: what it missed (nothing), then the prompt.
    let seq = info(&table).await.seq;
    let mut resumed = Client::connect(&table, Some(&ann.token), Some(seq)).await;
    let p = prompt(&resumed.next().await).cloned().expect("the prompt, without a snapshot");
    assert_eq!(gist(&p), gist(&last));
    assert!(resumed.sync().await.is_empty(), "and only once");
}

/// 7. Claims only when there is a choice. A person at a table of robots
/// plays a whole one-round game: every claim prompt it gets offers more
/// than `pass` (the table passed for it on every other discard, at once),
/// and it was asked about fewer discards than the others made. Asking to be
/// asked about every discard (`set_claim_prompts`) brings back the prompts
/// whose only move is `pass`, as a classic client's connection does.
#[tokio::test(start_paused = true)]
async fn a_person_is_asked_about_a_discard_only_when_it_can_claim() {
    let table = open_table("auto-pass", settings(&[("NumRounds", "1")], 0), &[1, 2, 3], false).await;
    let ann = sit(&table, "Ann", 0).await;
    start(&table, &ann.token).await;
    let mut client = Client::connect(&table, Some(&ann.token), None).await;
    let (mut asked, mut others_discards, mut only_pass_asked) = (0, 0, 0);
    let mut every_discard = false;
    loop {
        match client.next().await {
            ServerMessage::Prompt(p) => {
                if matches!(p.decision, Some(Decision::AnswerDiscard | Decision::AnswerKong)) {
                    let only_pass = p.actions.iter().all(|a| matches!(a, Action::Pass { .. }));
                    assert!(every_discard || !only_pass, "asked with nothing to claim: {p:?}");
                    asked += 1;
                    only_pass_asked += usize::from(only_pass);
                }
                if let Some(m) = simple_move(&p) {
                    client.send(m).await;
                }
            }
            ServerMessage::Event { event: StreamEvent::Game(Event::Discarded { player, .. }), .. } => {
                others_discards += usize::from(player != PlayerId(0));
            }
            ServerMessage::Event {
                event: StreamEvent::Game(Event::Settled { .. } | Event::WashedOut { .. }), ..
            } if !every_discard => {
                // From the second hand on, Ann asks to be asked every time.
                assert!(others_discards > asked, "asked about {asked} of {others_discards} discards");
                client.send(ClientMessage::SetClaimPrompts { every_discard: true }).await;
                every_discard = true;
            }
            ServerMessage::Event { event: StreamEvent::Game(Event::GameOver { .. }), .. } => break,
            ServerMessage::Error { code, message } => panic!("refused: {code}: {message}"),
            _ => {}
        }
    }
    assert!(only_pass_asked > 0, "asked about every discard once she wanted to be ({asked} prompts)");

    // A classic client's connection is asked about every discard.
    let table = open_table("classic-asked", settings(&[], 0), &[1, 2, 3], false).await;
    let bo = sit(&table, "Bo", 0).await;
    start(&table, &bo.token).await;
    let asked = table.ask(|reply| TableCommand::Connect {
        token: Some(bo.token.clone()),
        account: None,
        since: None,
        replay_hand: true,
        reply,
    });
    let conn = within_real_time("connecting", asked).await.expect("the table answers").expect("connected");
    let mut classic = Client { table: table.clone(), conn };
    loop {
        if let ServerMessage::Prompt(p) = classic.next().await {
            if p.decision == Some(Decision::AnswerDiscard) && p.actions.len() == 1 {
                break; // asked, with only `pass` to say
            }
            if let Some(m) = simple_move(&p) {
                classic.send(m).await;
            }
        }
    }
}
