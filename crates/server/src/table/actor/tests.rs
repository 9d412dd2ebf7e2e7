//! The table's phase under random commands: whatever a table is asked, in
//! whatever order (people sitting and leaving, robots seated, the start,
//! connections opening and closing, `ready`, pauses, moves, time passing,
//! an admin's close, the server stopping), its [`Phase`] always agrees with
//! its game, and every event it numbered is stored, in order and without a
//! gap, before any connection receives it.
//!
//! The actor is driven turn by turn through [`Actor::step`], the body of its
//! run loop, on tokio's paused clock (time passes only when a `Wait` says
//! so); the in-memory store runs on the real-time runtime of the table's
//! timer tests (see `table/tests.rs` for why).

use std::time::Duration;

use proptest::prelude::*;
use tokio::sync::oneshot;

use super::phase::{Flow, Phase};
use super::{Actor, Turn};
use crate::bots::strategy::Strategy as RobotStrategy;
use crate::limits::Permit;
use crate::protocol::ws::ClientMessage;
use crate::rules::command::PlayerId;
use crate::rules::options::GameOptions;
use crate::store::Store;
use crate::table::tests::{open_store, real_time};
use crate::table::{Asker, Connection, SeatGrant, TableCommand, TableLimits, TableSettings};

/// One thing asked of the table (a seat number is taken modulo 4).
#[derive(Clone, Debug)]
enum Ask {
    Sit(u8),
    Leave(u8),
    Robot(u8),
    Start(u8),
    Connect(u8),
    Disconnect(u8),
    Ready(u8),
    Pause(u8),
    /// The seat's `n`th legal move (modulo how many it has).
    Move(u8, usize),
    /// Time passes, then the table's timer fires.
    Wait(u16),
    Close,
    Shutdown,
}

fn ask() -> impl Strategy<Value = Ask> {
    let seat = 0u8..4;
    prop_oneof![
        3 => seat.clone().prop_map(Ask::Sit),
        1 => seat.clone().prop_map(Ask::Leave),
        3 => seat.clone().prop_map(Ask::Robot),
        2 => seat.clone().prop_map(Ask::Start),
        4 => seat.clone().prop_map(Ask::Connect),
        1 => seat.clone().prop_map(Ask::Disconnect),
        8 => seat.clone().prop_map(Ask::Ready),
        1 => seat.clone().prop_map(Ask::Pause),
        10 => (seat, 0usize..8).prop_map(|(s, n)| Ask::Move(s, n)),
        3 => (0u16..400).prop_map(Ask::Wait),
    ]
}

/// Most runs begin at a full table (some with an empty seat): people and
/// robots seated, the people connected, the game started. Then anything.
fn seating() -> impl Strategy<Value = Vec<Ask>> {
    proptest::array::uniform4(0u8..10).prop_map(|seats| {
        let mut asks = Vec::new();
        for (seat, who) in (0u8..).zip(seats) {
            match who {
                0..=3 => asks.extend([Ask::Sit(seat), Ask::Connect(seat)]),
                4..=8 => asks.push(Ask::Robot(seat)),
                _ => {}
            }
        }
        asks.push(Ask::Start(0));
        asks
    })
}

/// How a run ends: as it stands, closed by an admin, or stopped with the server.
fn ending() -> impl Strategy<Value = Option<Ask>> {
    prop_oneof![Just(None), Just(Some(Ask::Close)), Just(Some(Ask::Shutdown))]
}

/// The people's names (distinct: a name like another's is refused).
const NAMES: [&str; 4] = ["Ann", "Bob", "Cyd", "Dee"];

/// What the test holds of each seat: its token and its connection.
#[derive(Default)]
struct People {
    tokens: [Option<String>; 4],
    connections: [Option<Connection>; 4],
    /// Answers still to come (a seat's grant, a connection).
    granted: Vec<(u8, oneshot::Receiver<Result<SeatGrant, crate::table::TableError>>)>,
    connecting: Vec<(u8, oneshot::Receiver<Result<Connection, crate::table::TableError>>)>,
}

impl People {
    fn asker(&self, seat: u8) -> Asker {
        Asker { token: self.tokens[usize::from(seat)].clone(), ..Default::default() }
    }

    fn asker_first(&self) -> Asker {
        Asker { token: self.tokens.iter().flatten().next().cloned(), ..Default::default() }
    }

    fn connection(&self, seat: u8) -> Option<u64> {
        self.connections[usize::from(seat)].as_ref().map(|c| c.id)
    }

    /// Takes the answers that have come.
    fn answered(&mut self) {
        for (seat, mut reply) in std::mem::take(&mut self.granted) {
            match reply.try_recv() {
                Ok(Ok(grant)) => self.tokens[usize::from(seat)] = Some(grant.token),
                Ok(Err(_)) | Err(oneshot::error::TryRecvError::Closed) => {}
                Err(oneshot::error::TryRecvError::Empty) => self.granted.push((seat, reply)),
            }
        }
        for (seat, mut reply) in std::mem::take(&mut self.connecting) {
            match reply.try_recv() {
                Ok(Ok(connection)) => self.connections[usize::from(seat)] = Some(connection),
                Ok(Err(_)) | Err(oneshot::error::TryRecvError::Closed) => {}
                Err(oneshot::error::TryRecvError::Empty) => self.connecting.push((seat, reply)),
            }
        }
    }
}

/// The turn that makes the table do `ask`.
fn turn(ask: &Ask, actor: &Actor, people: &mut People) -> Option<Turn> {
    let message = |seat: u8, message: ClientMessage| {
        let connection = people.connection(seat)?;
        Some(Turn::Command(TableCommand::Message { connection, message }))
    };
    let command = match *ask {
        Ask::Sit(seat) => {
            let (reply, answer) = oneshot::channel();
            people.granted.push((seat, answer));
            let name = NAMES[usize::from(seat)].to_string();
            let hold = Permit::uncounted();
            TableCommand::Sit { name, seat: Some(seat), account: None, session: None, hold, reply }
        }
        Ask::Leave(seat) => TableCommand::Leave { asker: people.asker(seat), reply: oneshot::channel().0 },
        Ask::Robot(seat) => {
            let asker = Asker { admin: true, ..Default::default() };
            TableCommand::AddRobot {
                seat: Some(seat),
                strategy: RobotStrategy::default(),
                asker,
                reply: oneshot::channel().0,
            }
        }
        // Asked by a seat's player, or else by the first seated (the manager,
        // unless the role has passed on).
        Ask::Start(seat) => TableCommand::Start {
            asker: people.asker(seat).token.map_or_else(|| people.asker_first(), |_| people.asker(seat)),
            robot_game: Some(Permit::uncounted()),
            payer: None,
            reply: oneshot::channel().0,
        },
        Ask::Connect(seat) => {
            let token = people.tokens[usize::from(seat)].clone()?;
            let (reply, answer) = oneshot::channel();
            people.connecting.push((seat, answer));
            TableCommand::Connect { token: Some(token), account: None, since: None, replay_hand: false, reply }
        }
        Ask::Disconnect(seat) => {
            let connection = people.connections[usize::from(seat)].take()?.id;
            TableCommand::Disconnect { connection }
        }
        Ask::Ready(seat) => return message(seat, ClientMessage::Ready),
        Ask::Pause(seat) => return message(seat, ClientMessage::RequestPause { reason: "tea".into() }),
        Ask::Move(seat, n) => {
            let mut actions = Vec::new();
            actor.game.as_ref()?.legal_actions_into(PlayerId(seat), &mut actions);
            let action = actions.get(n % actions.len().max(1))?.clone();
            return message(seat, ClientMessage::Act { action });
        }
        Ask::Wait(_) => return Some(Turn::Timer),
        Ask::Close => TableCommand::Abort { reply: oneshot::channel().0 },
        Ask::Shutdown => TableCommand::Shutdown { reply: oneshot::channel().0 },
    };
    Some(Turn::Command(command))
}

/// The phase agrees with the game: what each phase says of the game holds.
fn phase_agrees_with_game(actor: &Actor) -> Result<(), TestCaseError> {
    let game = actor.game.as_ref();
    match &actor.phase {
        Phase::Open(_) => prop_assert!(game.is_none(), "an open table has no game"),
        Phase::Playing(play) => {
            let game = game.filter(|g| !g.is_over());
            prop_assert!(game.is_some(), "a game being played is not over");
            let in_progress = game.is_some_and(|g| g.hand_in_progress());
            if play.flow == Flow::Moves {
                prop_assert!(in_progress, "moves are taken only in a hand");
            }
            if play.claim_deadline.is_some() {
                prop_assert_eq!(play.flow, Flow::Moves, "a claim is timed only while moves are taken");
            }
            if play.flow == Flow::Ready {
                prop_assert!(!in_progress, "between hands, no hand is being played");
            }
        }
        Phase::Over { .. } | Phase::Closing => {
            prop_assert!(game.is_none_or(|g| g.is_over()), "an ended table's game is over")
        }
    }
    let info = actor.info();
    prop_assert_eq!(info.paused, matches!(actor.phase.play(), Some(p) if p.flow == Flow::Paused));
    if !info.waiting_for_ready.is_empty() {
        prop_assert!(actor.phase.waits_for_ready(), "nobody is asked to be ready unless the table waits");
    }
    Ok(())
}

/// Every event numbered is stored, in order, without a gap; nothing is left
/// unwritten; and no connection has received an event not stored.
async fn stored_before_shown(actor: &Actor, store: &Store, people: &mut People) -> Result<(), TestCaseError> {
    prop_assert!(actor.record.is_empty(), "a turn leaves nothing unwritten");
    let (store, id) = (store.clone(), actor.id.clone());
    let rows = real_time().spawn(async move { store.events(&id, 0).await }).await.expect("the store task");
    let seqs: Vec<i64> = rows.expect("the events read").iter().map(|e| e.seq).collect();
    let last = actor.stream.seq();
    prop_assert_eq!(seqs, (1..=last as i64).collect::<Vec<_>>());
    for connection in people.connections.iter_mut().flatten() {
        while let Ok(text) = connection.outbound.try_recv() {
            let message: serde_json::Value = serde_json::from_str(&text).expect("JSON");
            if message["type"] == "event" {
                let seq = message["seq"].as_u64().expect("an event's number");
                prop_assert!(seq <= last, "event {} was received, and only {} are stored", seq, last);
            }
        }
    }
    Ok(())
}

/// A game of one round; with `--end-on-disconnect` if asked (a game that
/// ends soon, when a player leaves).
fn settings(end_on_disconnect: bool) -> TableSettings {
    let mut options = GameOptions::default();
    options.set("NumRounds", "1").expect("a valid option");
    let mut settings = TableSettings::new("phases", options, 11);
    settings.end_on_disconnect = end_on_disconnect;
    settings
}

/// Idle tables expire within the waits the test makes.
fn limits() -> TableLimits {
    TableLimits {
        idle_open: Duration::from_secs(600),
        idle_game: Duration::from_secs(900),
        ..TableLimits::from(&crate::limits::Limits::unlimited())
    }
}

async fn play(mut asks: Vec<Ask>, ending: Option<Ask>, end_on_disconnect: bool) -> Result<(), TestCaseError> {
    asks.extend(ending);
    let store = open_store().await;
    let mut actor = Actor::new("phases".into(), settings(end_on_disconnect), store.clone(), limits());
    actor.flush().await.expect("the table is stored");
    let mut people = People::default();
    for ask in &asks {
        let Some(turn) = turn(ask, &actor, &mut people) else { continue };
        if let Ask::Wait(seconds) = ask {
            tokio::time::advance(Duration::from_secs(u64::from(*seconds))).await;
        }
        let stopped = actor.step(turn).await.is_break();
        people.answered();
        phase_agrees_with_game(&actor)?;
        stored_before_shown(&actor, &store, &mut people).await?;
        if stopped {
            break;
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn every_phase_agrees_with_the_game_and_every_event_is_stored_before_it_is_shown(
        seated in seating(),
        asks in proptest::collection::vec(ask(), 1..100),
        ending in ending(),
        end_on_disconnect in any::<bool>(),
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
            .build()
            .expect("a runtime");
        runtime.block_on(play([seated, asks].concat(), ending, end_on_disconnect))?;
    }
}
