//! The table actor: one tokio task owning one table outright (no locks).
//!
//! Its loop waits for its next [`Turn`] (a command, a deadline, the store
//! coming back, the end of a restart) and takes it ([`Actor::step`]), after
//! which the robots move. Around the game it runs what mj-server's
//! controller ran: seating, the ready handshake, pauses, the claim timer,
//! the pause between actions, the game manager, and disconnections (a seat
//! waits for its player; optionally a robot stands in).
//!
//! Where the table is in its life is one value, its [`Phase`] (`phase.rs`
//! says which waits and deadlines each phase holds). The rest is in rooms:
//! seating and connections (`seating.rs`), readiness, pauses and the game's
//! end (`readiness.rs`), the game's moves, people's and robots'
//! (`moves.rs`), timers and idleness (`timers.rs`), what is sent
//! (`sending.rs`), and the commands and client messages (`messages.rs`).
//! The parts it is made of: [`Seats`] (who sits where), [`Stream`] (the
//! numbered events, the resume log and the fan-out to subscribers), and
//! [`Record`] (what is written to the store). A table rebuilt from the
//! store is made by [`Actor::restored`] from what `recovery.rs` read.
//!
//! Stored before shown: whatever a command or a burst of robot moves did is
//! gathered in the record and written to the store ([`Actor::flush`])
//! before any of its events is sent or the request answered. When the
//! database cannot be reached the table holds its batch and waits, showing
//! and changing nothing, until it is back; any other store failure stops
//! the table without showing what it could lose, and the next start
//! rebuilds it from what was committed.

mod messages;
mod moves;
mod phase;
mod readiness;
mod seating;
mod sending;
#[cfg(test)]
mod tests;
mod timers;

use std::ops::ControlFlow;
use std::time::Duration;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use self::phase::{Flow, Phase, Play};
use super::record::Record;
use super::seats::Seats;
use super::stream::Stream;
use super::{Asker, TableCommand, TableError, TableHandle, TableLimits, TableSettings, TableSetup};
use crate::limits::rate::Bucket;
use crate::protocol::ws::{ServerMessage, TableState, WsErrorCode};
use crate::rules::event::Event;
use crate::rules::game::Game;
use crate::store::journal::Unwritten;
use crate::store::{GameRow, Store, StoreError};

pub use messages::spectator_answer;

/// mj-server's largest reasonable pause between actions: 5 seconds.
pub const MAX_PAUSE_DECISECONDS: u32 = 50;

/// A finished game's table stays open this long after its last subscriber
/// has gone (scores can be looked up), then the table closes.
pub const KEEP_FINISHED: Duration = Duration::from_secs(300);

/// Why a table could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The set-up is refused (a seat taken twice, a bad strategy...); nothing was stored.
    #[error(transparent)]
    Table(#[from] TableError),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Opens a new table as `setup` says (its robots seated, the game started
/// if asked), writes it to the store in one batch, then starts its task. A
/// set-up the table refuses stores nothing; so does a table opened while the
/// store cannot be written (`store_unavailable`: nothing is opened that is
/// not stored).
pub async fn spawn(id: String, setup: TableSetup, store: Store, limits: TableLimits) -> Result<TableHandle, OpenError> {
    let TableSetup { settings, robots, start, hold, payer } = setup;
    if !*store.available().borrow() {
        return Err(TableError::StoreUnavailable.into());
    }
    let mut actor = Actor::new(id, settings, store, limits);
    for robot in robots {
        actor.add_robot(robot.seat, robot.strategy)?;
    }
    if start {
        actor.start(&Asker::default(), Some(hold), payer)?;
    } else {
        actor.phase = Phase::open(Some(hold));
    }
    actor.flush().await?;
    if actor.record.is_held() {
        // The store went away as the table was written: nothing of it is
        // stored, and nothing is opened.
        return Err(TableError::StoreUnavailable.into());
    }
    let table = &actor.settings;
    tracing::info!(table = %actor.id, name = %table.name, preset = %table.preset, "table opened");
    Ok(actor.start_task())
}

/// What recovery rebuilt of a stored table: its rows read again, its game
/// replayed (see `recovery.rs`).
pub(in crate::table) struct Restored {
    /// The table's id.
    pub id: String,
    /// Its settings, with the options its inputs left in force.
    pub settings: TableSettings,
    /// The store it is played on.
    pub store: Store,
    /// The limits it applies to its clients.
    pub limits: TableLimits,
    /// What is stored of it (its game row's times, its inputs' count).
    pub record: Record,
    /// Its seats, as stored (people away until they reconnect).
    pub seats: Seats,
    /// Its state, as stored.
    pub state: TableState,
    /// Its game, as its inputs rebuild it.
    pub game: Option<Game>,
    /// Where its random stream had got to.
    pub rng_pos: u128,
    /// Its stream: the position, and the recent events for resuming.
    pub stream: Stream,
    /// The stored events of the hand being played, followed again for its
    /// row when it ends.
    pub hand_events: Vec<(i64, i64, Event)>,
    /// `true` while the restart that brought it back brings others back
    /// (see [`Play::robots_wait`]).
    pub robots_wait: Option<watch::Receiver<bool>>,
}

/// What wakes a table. (One at a time, moved once from the wait to the
/// step: a command is not boxed for the sake of the small variants.)
#[allow(clippy::large_enum_variant)]
pub(in crate::table) enum Turn {
    /// A command from a handle.
    Command(TableCommand),
    /// A deadline has come (a claim's, a robot's, a takeover, closing, idleness).
    Timer,
    /// The store can be written again: what was held is written.
    StoreBack,
    /// The restart has brought every table back: the robots play.
    RestartOver,
    /// Every handle has gone.
    Gone,
}

/// One table: its settings, seats, game, stream and record.
pub(super) struct Actor {
    id: String,
    settings: TableSettings,
    store: Store,
    seats: Seats,
    stream: Stream,
    record: Record,
    /// Where the table is in its life, with what that phase holds.
    phase: Phase,
    game: Option<Game>,
    /// Walls, dice and random seating: seeded, so that a seed repeats a table.
    rng: ChaCha8Rng,
    /// When the last action was made (for the pause between actions).
    last_action: Instant,
    /// What each seat's connection was last prompted (to send only changes).
    prompts: super::prompt::Prompts,
    /// Whether the store can be written (from the journal): while a batch is
    /// held for want of it, the table waits for this to turn `true`.
    available: watch::Receiver<bool>,
    /// The table counted in the metrics under the state the store has: set
    /// when its task starts and after each write, before anyone is answered,
    /// so that a client that saw a change finds it counted (uncounted when
    /// the actor ends).
    counted: Option<crate::metrics::TableCount>,
    /// The limits it applies to its clients.
    limits: TableLimits,
    /// Each seat's chat, and its other requests that cost a write.
    talk: [(Bucket, Bucket); 4],
    /// Answers to requests whose change waits, held with its batch, for the
    /// store to come back: sent once it is written.
    deferred: Vec<Box<dyn FnOnce() + Send>>,
    /// Cluster mode: the epoch this node plays the table under, carried by
    /// every batch (the database refuses a stale one); `None` on one node.
    fence: Option<i64>,
    /// Set when the table stops here to be played at another node (shared
    /// with its handles: a request it did not answer is told to come back
    /// shortly, not that the table has closed).
    elsewhere: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Actor {
    /// A table as it opens: nobody seated, nothing stored yet.
    pub fn new(id: String, settings: TableSettings, store: Store, limits: TableLimits) -> Actor {
        let rng = ChaCha8Rng::seed_from_u64(settings.seed);
        let stream = Stream::new(settings.subscriber_queue, limits.chat_kept);
        let available = store.available();
        let fence = store.epoch_of(&id);
        Actor {
            id,
            settings,
            store,
            seats: Seats::default(),
            stream,
            record: Record::new_table(crate::store::now_us()),
            phase: Phase::open(None),
            game: None,
            rng,
            last_action: Instant::now(),
            prompts: Default::default(),
            available,
            counted: None,
            limits,
            talk: std::array::from_fn(|_| (Bucket::new(limits.chat), Bucket::new(limits.requests))),
            deferred: Vec::new(),
            fence,
            elsewhere: Default::default(),
        }
    }

    /// A table opened again on what recovery rebuilt: the seats, the
    /// manager, the random stream and the event stream's position come back,
    /// the hand being played is followed again, and a game in play waits,
    /// paused, until every person is ready again (its people are away until
    /// they reconnect). A finished game's table closes once nobody has
    /// watched it for a while: the restart has just sent everybody away.
    /// What this changes is stored when its task starts.
    pub fn restored(restored: Restored) -> Actor {
        let Restored {
            id,
            settings,
            store,
            limits,
            record,
            seats,
            state,
            game,
            rng_pos,
            stream,
            hand_events,
            robots_wait,
        } = restored;
        let mut actor = Actor::new(id, settings, store, limits);
        actor.record = record;
        actor.seats = seats;
        actor.stream = stream;
        actor.rng.set_word_pos(rng_pos);
        if let Some(game) = game {
            let totals = game.scores();
            actor.start_following(game);
            actor.record.projector.set_totals(totals);
            for (seq, at_us, event) in &hand_events {
                let _ = actor.record.projector.observe(*seq, *at_us, event);
            }
        }
        actor.brief_robots();
        actor.phase = match state {
            TableState::Open => Phase::open(None),
            TableState::Playing => Phase::Playing(Play::new(None, robots_wait)),
            TableState::Over => Phase::Over { close_at: Some(Instant::now() + KEEP_FINISHED) },
        };
        if let Some(play) = actor.phase.play_mut() {
            if actor.game.as_ref().is_some_and(Game::hand_in_progress) {
                play.flow = Flow::Paused;
            }
            actor.await_ready();
        }
        actor
    }

    /// Starts the task of an actor whose state is stored.
    pub fn start_task(self) -> TableHandle {
        let (sender, receiver) = mpsc::channel(super::COMMAND_QUEUE);
        let id = self.id.clone();
        let elsewhere = self.elsewhere.clone();
        tokio::spawn(self.run(receiver));
        TableHandle { id, sender, relayed: false, elsewhere }
    }

    /// The table's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The last number of its stream.
    pub fn seq(&self) -> u64 {
        self.stream.seq()
    }

    /// Takes one of `seat`'s chat messages, or says how long to wait.
    fn may_chat(&self, seat: u8) -> Result<(), Duration> {
        self.talk.get(usize::from(seat)).map_or(Ok(()), |(chat, _)| chat.check())
    }

    /// Takes one of `seat`'s other costly requests, or says how long to wait.
    fn may_request(&self, seat: u8) -> Result<(), Duration> {
        self.talk.get(usize::from(seat)).map_or(Ok(()), |(_, requests)| requests.check())
    }

    /// Counts the table under its state now (see [`Actor::counted`]).
    fn count(&mut self) {
        let state = self.phase.table_state().as_str();
        match &mut self.counted {
            Some(counted) => counted.set(state),
            None => self.counted = Some(crate::metrics::TableCount::new(state)),
        }
    }

    async fn run(mut self, mut commands: mpsc::Receiver<TableCommand>) {
        // A table opened again after a restart may start with changes its
        // set-up made (the wait for its people): they are stored first,
        // before any command is handled (nothing to do for any other table).
        if let Err(e) = self.flush().await {
            tracing::error!(table = %self.id, "the table stops: {e}");
            return;
        }
        self.count();
        loop {
            let turn = next_turn(&mut commands, self.waits()).await;
            if self.step(turn).await.is_break() {
                break;
            }
        }
    }

    /// What the table waits for, besides its commands.
    fn waits(&self) -> Waits {
        Waits {
            deadline: self.next_deadline(),
            held: self.record.is_held(),
            available: self.available.clone(),
            recovering: self.phase.play().and_then(|p| p.robots_wait.clone()),
        }
    }

    /// Takes one turn, then lets the robots move; `Break` when the table stops.
    async fn step(&mut self, turn: Turn) -> ControlFlow<()> {
        let done = match turn {
            Turn::Command(TableCommand::Shutdown { reply }) => {
                // The server is stopping: store what is pending, answer, end.
                if let Err(e) = self.flush().await {
                    tracing::error!(table = %self.id, "the table stops without storing its last changes: {e}");
                }
                let _ = reply.send(());
                return ControlFlow::Break(());
            }
            Turn::Command(TableCommand::HandOver { reply }) => {
                // Cluster mode, this node leaving: store what is pending,
                // send the clients to the table's next node.
                if let Err(e) = self.flush().await {
                    tracing::warn!(table = %self.id, "the table is handed over without its last changes: {e}");
                }
                self.send_everyone_elsewhere();
                let _ = reply.send(());
                return ControlFlow::Break(());
            }
            Turn::Command(TableCommand::GiveUp) => {
                // Cluster mode: another node owns the table now. Nothing
                // more is written or shown here.
                tracing::warn!(table = %self.id, "the table stops: another node plays it now");
                self.send_everyone_elsewhere();
                return ControlFlow::Break(());
            }
            Turn::Command(command) => self.handle(command).await,
            Turn::Gone => return ControlFlow::Break(()),
            Turn::Timer => {
                self.on_timer();
                Ok(())
            }
            Turn::StoreBack => self.flush().await,
            Turn::RestartOver => {
                if let Some(play) = self.phase.play_mut() {
                    play.robots_wait = None;
                }
                Ok(())
            }
        };
        let done = match done {
            Ok(()) => {
                // (Before the robots' moves, which store what it changed.)
                self.pay_for_hands().await;
                self.run_robots().await
            }
            e => e,
        };
        if let Err(e) = done {
            // Nothing unstored has been shown to anyone; the table is
            // rebuilt from the store when the server next starts (or,
            // fenced, by the node that owns it now: its clients go there).
            // (The cluster's check of ownership counts the table lost.)
            if let StoreError::Fenced { .. } = e {
                self.send_everyone_elsewhere();
            }
            tracing::error!(table = %self.id, "the table stops: {e}");
            return ControlFlow::Break(());
        }
        self.watch_idle();
        if let Phase::Closing = self.phase {
            return ControlFlow::Break(());
        }
        if self.moves_now() {
            return self.move_away().await;
        }
        // A finished game with nobody watching closes after a while.
        if let Phase::Over { close_at } = &mut self.phase {
            if !self.stream.is_empty() {
                *close_at = None;
            } else if *close_at.get_or_insert_with(|| Instant::now() + KEEP_FINISHED) <= Instant::now() {
                return ControlFlow::Break(());
            }
        }
        ControlFlow::Continue(())
    }

    /// Cluster mode, rebalancing: the hand is over, and the next is dealt at
    /// the table's next node. Handed over as on SIGTERM: what is pending
    /// stored, the clients sent there; if that cannot be stored, it stays.
    async fn move_away(&mut self) -> ControlFlow<()> {
        if let Err(e) = self.flush().await {
            tracing::warn!(table = %self.id, "the table cannot move without its last changes: {e}");
            if let Some(play) = self.phase.play_mut() {
                play.moving = None;
            }
            return ControlFlow::Continue(());
        }
        self.send_everyone_elsewhere();
        if let Some(reply) = self.phase.play_mut().and_then(|p| p.moving.take()) {
            let _ = reply.send(());
        }
        tracing::info!(table = %self.id, "moved to another node at the hand's end");
        ControlFlow::Break(())
    }

    /// The options in force: the game's, or the table's before it starts.
    fn options(&self) -> &crate::rules::options::GameOptions {
        self.game.as_ref().map_or(&self.settings.options, Game::options)
    }

    /// The game row as it now stands.
    fn game_row(&self) -> GameRow {
        GameRow {
            name: self.settings.name.clone(),
            preset: self.settings.preset.clone(),
            source: self.record.source,
            state: self.phase.table_state(),
            created_us: self.record.created_us,
            finished_us: self.record.finished_us,
            hands: self.hand_number(),
            scores: self.game.as_ref().map_or([0; 4], Game::scores),
            manager: self.seats.manager.map(i64::from),
            last_seq: self.stream.seq() as i64,
            rng_pos: self.rng.get_word_pos(),
        }
    }

    /// Writes what is pending to the store (a batch held back first), then
    /// sends its events and the prompts that changed. When the database
    /// cannot be reached the batch is held and nothing is sent: the table
    /// waits for the store (`refuse_while_held`). Any other store failure is
    /// returned, and the table stops.
    pub async fn flush(&mut self) -> Result<(), StoreError> {
        let was_held = self.record.is_held();
        // Dropping a slow subscriber may itself produce events: go round
        // until nothing is pending.
        loop {
            let batch = match self.record.take_held() {
                Some(held) => *held,
                None if self.record.is_empty() => return Ok(()),
                None => {
                    let settings = &self.settings;
                    let mut batch = self
                        .record
                        .batch(&self.id, self.game_row(), || serde_json::to_string(settings).unwrap_or_default());
                    batch.fence = self.fence;
                    batch
                }
            };
            match self.store.write_or_return(batch).await {
                Ok(()) => {
                    self.record.written();
                    self.count();
                    // Requests whose change was held with this batch are answered now.
                    for answer in std::mem::take(&mut self.deferred) {
                        answer();
                    }
                    for dropped in self.stream.release() {
                        self.forget_dropped(dropped);
                    }
                    self.send_prompts();
                }
                Err(Unwritten { error: StoreError::Unavailable(why), batch: Some(batch) }) => {
                    self.record.hold(batch);
                    if was_held {
                        return Ok(()); // still away: everybody has been told
                    }
                    tracing::warn!(table = %self.id, "the store is unavailable ({why}): the table waits for it");
                    // Told once, to everybody connected: nothing happens until it is back.
                    let notice = ServerMessage::error(
                        WsErrorCode::StoreUnavailable,
                        "the game store is unavailable: play waits until it is back",
                    );
                    for dropped in self.stream.tell_everyone(&notice) {
                        self.forget_dropped(dropped);
                    }
                    return Ok(());
                }
                Err(unwritten) => return Err(unwritten.error),
            }
        }
    }
}

/// What a table waits for, besides its commands (taken from the actor, so
/// that the wait does not hold it).
struct Waits {
    /// Its next deadline.
    deadline: Option<Instant>,
    /// A batch is held for want of the store.
    held: bool,
    /// Whether the store can be written.
    available: watch::Receiver<bool>,
    /// Whether the restart that brought it back still goes on.
    recovering: Option<watch::Receiver<bool>>,
}

/// Waits for what wakes the table next.
async fn next_turn(commands: &mut mpsc::Receiver<TableCommand>, waits: Waits) -> Turn {
    let Waits { deadline, held, mut available, mut recovering } = waits;
    tokio::select! {
        command = commands.recv() => command.map_or(Turn::Gone, Turn::Command),
        _ = sleep_until(deadline), if deadline.is_some() => Turn::Timer,
        _ = store_back(&mut available), if held => Turn::StoreBack,
        _ = recovery_over(&mut recovering), if recovering.is_some() => Turn::RestartOver,
    }
}

/// Completes once the store can be written again (never, if the store has closed).
async fn store_back(available: &mut watch::Receiver<bool>) {
    if available.wait_for(|up| *up).await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// Completes when `recovering` turns `false` (or its sender is gone).
async fn recovery_over(recovering: &mut Option<watch::Receiver<bool>>) {
    if let Some(w) = recovering {
        let _ = w.wait_for(|recovering| !*recovering).await;
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
