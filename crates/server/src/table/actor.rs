//! The table actor: one tokio task owning one table outright (no locks).
//!
//! Its loop waits for a command or its next deadline, and after either lets
//! the robots move. Around the game it runs what mj-server's controller ran:
//! seating, the ready handshake, pauses, the claim timer, the pause between
//! actions, the game manager, and disconnections (a seat waits for its
//! player; optionally a robot stands in).
//!
//! The parts it is made of: [`Seats`] (who sits where), [`Stream`] (the
//! numbered events, the resume log and the fan-out to subscribers), and
//! [`Record`] (what is written to the store). Client messages are handled
//! in `messages.rs`, prompts built in `prompt.rs`, and a table rebuilt from
//! the store in `recovery.rs`.
//!
//! Stored before shown: whatever a command or a burst of robot moves did is
//! gathered in the record and written to the store ([`Actor::flush`])
//! before any of its events is sent or the request answered. When the
//! database cannot be reached the table holds its batch and waits, showing
//! and changing nothing, until it is back; any other store failure stops
//! the table without showing what it could lose, and the next start
//! rebuilds it from what was committed.

use std::time::Duration;

use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::prompt::{self, ClaimDeadline, Moment, Prompts};
use super::record::Record;
use super::seats::Seats;
use super::stream::{Dropped, Stream, to_text};
use super::{
    Asker, Connection, Farewell, SeatGrant, TableCommand, TableError, TableHandle, TableLimits, TableSettings,
    TableSetup,
};
use crate::bots::Robot;
use crate::bots::strategy::Strategy;
use crate::limits::rate::Bucket;
use crate::limits::{HandsPayer, Permit};
use crate::protocol::ws::{ClientMessage, ServerMessage, StreamEvent, TableEvent, TableInfo, TableState, WsErrorCode};
use crate::rules::command::{Action, Command, GameError, PlayerId, WallSource};
use crate::rules::event::{Audience, Emitted, Event};
use crate::rules::game::Game;
use crate::rules::hand::{Hand, Phase};
use crate::rules::rebuild::{Input, new_game};
use crate::rules::view;
use crate::store::journal::Unwritten;
use crate::store::{EventRow, GameRow, HandProjector, Store, StoreError};

/// mj-server's largest reasonable pause between actions: 5 seconds.
pub const MAX_PAUSE_DECISECONDS: u32 = 50;

/// At most this many robot moves are made in a row before the actor lets
/// other tasks run (with no pause between actions).
const ROBOT_BURST: usize = 64;

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
        actor.waiting_hold = Some(hold);
    }
    actor.flush().await?;
    if actor.record.is_held() {
        // The store went away as the table was written: nothing of it is
        // stored, and nothing is opened.
        return Err(TableError::StoreUnavailable.into());
    }
    let table = &actor.settings;
    tracing::info!(table = %actor.id, name = %table.name, preset = %table.preset, "table opened");
    Ok(start_task(actor))
}

/// Starts the task of an actor whose state is stored.
pub(super) fn start_task(actor: Actor) -> TableHandle {
    let (sender, receiver) = mpsc::channel(super::COMMAND_QUEUE);
    let id = actor.id.clone();
    let elsewhere = actor.elsewhere.clone();
    tokio::spawn(actor.run(receiver));
    TableHandle { id, sender, relayed: false, elsewhere }
}

/// One table: its settings, seats, game, stream and record.
pub(super) struct Actor {
    pub id: String,
    pub settings: TableSettings,
    pub store: Store,
    pub seats: Seats,
    pub stream: Stream,
    pub record: Record,
    pub state: TableState,
    pub game: Option<Game>,
    /// Walls, dice and random seating: seeded, so that a seed repeats a table.
    pub rng: ChaCha8Rng,
    /// Waiting for every person to say ready (between hands, or after a pause request).
    pub waiting_ready: bool,
    pub paused: bool,
    pub claim_deadline: Option<ClaimDeadline>,
    /// When the last action was made (for the pause between actions).
    pub last_action: Instant,
    /// When an idle finished table closes.
    pub close_at: Option<Instant>,
    /// An admin closed the table: it stops once that is stored.
    pub closing: bool,
    /// The game ends when the hand being played is over (a losing player
    /// left after Mah-Jong, with `--end-on-disconnect`).
    pub end_after_hand: bool,
    /// What each seat's connection was last prompted (to send only changes).
    pub prompts: Prompts,
    /// Whether the store can be written (from the journal): while a batch is
    /// held for want of it, the table waits for this to turn `true`.
    pub available: tokio::sync::watch::Receiver<bool>,
    /// A table brought back by a restart: `true` while the restart is still
    /// bringing others back. Meanwhile its robots (and its claim timer) wait,
    /// so that the CPU and the store serve the tables still on their way
    /// (at 2,000 robot tables, their play made the restart twice as long);
    /// people's moves are played at once.
    pub robots_wait: Option<tokio::sync::watch::Receiver<bool>>,
    /// The table counted in the metrics under the state the store has: set
    /// when its task starts and after each write, before anyone is answered,
    /// so that a client that saw a change finds it counted (uncounted when
    /// the actor ends).
    counted: Option<crate::metrics::TableCount>,
    /// The limits it applies to its clients.
    pub limits: TableLimits,
    /// Each seat's chat, and its other requests that cost a write.
    talk: [(Bucket, Bucket); 4],
    /// The table counts against its opener's quota while it waits to start.
    pub waiting_hold: Option<Permit>,
    /// A game of four robots counts against its starter's quota while it is played.
    pub robot_game_hold: Option<Permit>,
    /// Who pays for the hands of a game of four robots, and how many it has
    /// paid for (the first, by the request that started it): each hand
    /// dealt is paid for once it is, and a refusal ends the game after it.
    hands_payer: Option<(HandsPayer, u32)>,
    /// Since when no person has been connected (at a table not started, or
    /// a game of people): it expires after the limits' idle time.
    pub idle_since: Option<Instant>,
    /// Answers to requests whose change waits, held with its batch, for the
    /// store to come back: sent once it is written.
    deferred: Vec<Box<dyn FnOnce() + Send>>,
    /// Cluster mode: the epoch this node plays the table under, carried by
    /// every batch (the database refuses a stale one); `None` on one node.
    fence: Option<i64>,
    /// Cluster mode, rebalancing: the table moves to another node when the
    /// hand being played is over (no next hand is dealt here); answered
    /// once it has stopped.
    moving: Option<tokio::sync::oneshot::Sender<()>>,
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
            state: TableState::Open,
            game: None,
            rng,
            waiting_ready: false,
            paused: false,
            claim_deadline: None,
            last_action: Instant::now(),
            close_at: None,
            closing: false,
            end_after_hand: false,
            prompts: Default::default(),
            available,
            robots_wait: None,
            counted: None,
            limits,
            talk: std::array::from_fn(|_| (Bucket::new(limits.chat), Bucket::new(limits.requests))),
            waiting_hold: None,
            robot_game_hold: None,
            hands_payer: None,
            idle_since: Some(Instant::now()),
            deferred: Vec::new(),
            fence,
            moving: None,
            elsewhere: Default::default(),
        }
    }

    /// Takes one of `seat`'s chat messages, or says how long to wait.
    pub fn may_chat(&self, seat: u8) -> Result<(), Duration> {
        self.talk.get(usize::from(seat)).map_or(Ok(()), |(chat, _)| chat.check())
    }

    /// Takes one of `seat`'s other costly requests, or says how long to wait.
    pub fn may_request(&self, seat: u8) -> Result<(), Duration> {
        self.talk.get(usize::from(seat)).map_or(Ok(()), |(_, requests)| requests.check())
    }

    /// Counts the table under its state now (see [`Actor::counted`]).
    fn count(&mut self) {
        let state = self.state.as_str();
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
            let deadline = self.next_deadline();
            let held = self.record.is_held();
            let mut available = self.available.clone();
            let mut recovering = self.robots_wait.clone();
            let done = tokio::select! {
                command = commands.recv() => match command {
                    Some(TableCommand::Shutdown { reply }) => {
                        // The server is stopping: store what is pending, answer, end.
                        if let Err(e) = self.flush().await {
                            tracing::error!(table = %self.id, "the table stops without storing its last changes: {e}");
                        }
                        let _ = reply.send(());
                        break;
                    }
                    Some(TableCommand::HandOver { reply }) => {
                        // Cluster mode, this node leaving: store what is
                        // pending, send the clients to the table's next node.
                        if let Err(e) = self.flush().await {
                            tracing::warn!(table = %self.id, "the table is handed over without its last changes: {e}");
                        }
                        self.send_everyone_elsewhere();
                        let _ = reply.send(());
                        break;
                    }
                    Some(TableCommand::GiveUp) => {
                        // Cluster mode: another node owns the table now.
                        // Nothing more is written or shown here.
                        tracing::warn!(table = %self.id, "the table stops: another node plays it now");
                        self.send_everyone_elsewhere();
                        break;
                    }
                    Some(c) => self.handle(c).await,
                    None => break,
                },
                _ = sleep_until(deadline), if deadline.is_some() => {
                    self.on_timer();
                    Ok(())
                }
                // The store is back: write what was held, then carry on.
                _ = store_back(&mut available), if held => self.flush().await,
                // The restart has brought every table back: the robots play.
                _ = recovery_over(&mut recovering), if recovering.is_some() => {
                    self.robots_wait = None;
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
                break;
            }
            self.watch_idle();
            if self.closing {
                break;
            }
            if self.moving.is_some() && self.between_hands() {
                // Cluster mode, rebalancing: the hand is over, and the next
                // is dealt at the table's next node. Handed over as on
                // SIGTERM: what is pending stored, the clients sent there.
                if let Err(e) = self.flush().await {
                    tracing::warn!(table = %self.id, "the table cannot move without its last changes: {e}");
                    self.moving = None;
                    continue;
                }
                self.send_everyone_elsewhere();
                if let Some(reply) = self.moving.take() {
                    let _ = reply.send(());
                }
                tracing::info!(table = %self.id, "moved to another node at the hand's end");
                break;
            }
            // A finished game with nobody watching closes after a while.
            if self.state == TableState::Over && self.stream.is_empty() {
                let at = *self.close_at.get_or_insert_with(|| Instant::now() + KEEP_FINISHED);
                if at <= Instant::now() {
                    break;
                }
            } else {
                self.close_at = None;
            }
        }
    }

    // ----- the public picture -------------------------------------------

    pub fn info(&self) -> TableInfo {
        TableInfo {
            id: self.id.clone(),
            name: self.settings.name.clone(),
            state: self.state,
            seats: self.seats.info(),
            manager: self.seats.manager,
            spectators: self.stream.spectators(),
            preset: self.settings.preset.clone(),
            scores: self.game.as_ref().map_or([0; 4], Game::scores),
            hands: self.game.as_ref().map_or(0, Game::hands_started),
            pause_deciseconds: self.pause(),
            waiting_for_ready: if self.waiting_ready { self.unready() } else { Vec::new() },
            paused: self.paused,
            seq: self.stream.seq(),
            node: None,
        }
    }

    /// The pause in force: the table's own, or the longest a player asked
    /// for (`set_pause` refuses more than [`MAX_PAUSE_DECISECONDS`]).
    pub fn pause(&self) -> u32 {
        self.settings.pause_deciseconds.max(self.seats.pause_requested())
    }

    /// Everything `seat` (or a spectator) may see now.
    pub fn snapshot(&self, seat: Option<u8>) -> ServerMessage {
        let viewer = seat.map(PlayerId);
        ServerMessage::Snapshot {
            seat,
            table: self.info(),
            game: self.game.as_ref().map(|g| Box::new(g.view(viewer))),
            options: self.options().to_json_map(),
        }
    }

    // ----- commands --------------------------------------------------------

    /// Handles a command. A request that changed something is answered only
    /// once the change is stored.
    async fn handle(&mut self, command: TableCommand) -> Result<(), StoreError> {
        // While a batch waits for the store, or the store is known to be
        // away, nothing is changed that would have to wait for it.
        if self.record.is_held() || (!*self.available.borrow() && command.changes_seats()) {
            self.refuse_while_held(command);
            return self.flush().await;
        }
        match command {
            TableCommand::Info { reply } => {
                let _ = reply.send(self.info());
            }
            TableCommand::Options { reply } => {
                let _ = reply.send(self.options().clone());
            }
            TableCommand::Sit { name, seat, account, session, hold, reply } => {
                let answer = self.sit(&name, seat, account);
                if let Ok(grant) = &answer
                    && let Some(s) = self.seats.get_mut(grant.seat)
                {
                    s.session = session;
                    s.hold = Some(hold);
                }
                self.flush().await?;
                self.answer(reply, answer);
            }
            TableCommand::Leave { asker, reply } => {
                let answer = self.leave(&asker);
                self.flush().await?;
                self.answer(reply, answer);
            }
            TableCommand::AddRobot { seat, strategy, asker, reply } => {
                let answer = self.may_manage(&asker).and_then(|()| self.add_robot(seat, strategy));
                self.start_if_classic_and_full();
                self.flush().await?;
                self.answer(reply, answer);
            }
            TableCommand::RemoveRobot { seat, asker, reply } => {
                let answer = self.may_manage(&asker).and_then(|()| self.remove_robot(seat));
                self.flush().await?;
                self.answer(reply, answer);
            }
            TableCommand::Start { asker, robot_game, payer, reply } => {
                let answer = self.start(&asker, robot_game, payer);
                self.flush().await?;
                self.answer(reply, answer);
            }
            TableCommand::Connect { token, account, since, replay_hand, reply } => {
                let _ = reply.send(self.connect(token.as_deref(), account, since, replay_hand));
                self.start_if_classic_and_full();
            }
            TableCommand::Abort { reply } => {
                self.abort("an admin closed it");
                self.flush().await?;
                self.answer(reply, Ok(()));
            }
            TableCommand::Message { connection, message } => self.message(connection, message),
            TableCommand::BadMessage { connection, code, reason } => {
                self.reply(connection, &ServerMessage::error(code, reason));
            }
            TableCommand::Disconnect { connection } => self.disconnect(connection),
            TableCommand::Watching { connection, count } => self.stream.stands_for(connection, count),
            TableCommand::MoveBetweenHands { reply } => self.move_between_hands(reply),
            TableCommand::EndSeatTokens(revoked) => self.end_seat_tokens(&revoked),
            // `run` answers them.
            TableCommand::Shutdown { .. } | TableCommand::HandOver { .. } | TableCommand::GiveUp => {}
        }
        self.flush().await
    }

    /// Answers a request once its change is stored: now, or (its batch held
    /// for want of the store) once the store is back and it is written.
    fn answer<T: Send + 'static>(&mut self, reply: tokio::sync::oneshot::Sender<T>, answer: T) {
        if self.record.is_held() {
            self.deferred.push(Box::new(move || {
                let _ = reply.send(answer);
            }));
        } else {
            let _ = reply.send(answer);
        }
    }

    /// While a batch waits for the store, the table shows and changes
    /// nothing: every request is refused (`store_unavailable`), except the
    /// public information, pings, bad messages and disconnections.
    fn refuse_while_held(&mut self, command: TableCommand) {
        let waiting = "the game store is unavailable: the table waits for it; try again";
        match command {
            TableCommand::Info { reply } => {
                let _ = reply.send(self.info());
            }
            TableCommand::Options { reply } => {
                let _ = reply.send(self.options().clone());
            }
            TableCommand::Sit { reply, .. } => {
                let _ = reply.send(Err(TableError::StoreUnavailable));
            }
            TableCommand::AddRobot { reply, .. } => {
                let _ = reply.send(Err(TableError::StoreUnavailable));
            }
            TableCommand::Leave { reply, .. }
            | TableCommand::RemoveRobot { reply, .. }
            | TableCommand::Start { reply, .. }
            | TableCommand::Abort { reply } => {
                let _ = reply.send(Err(TableError::StoreUnavailable));
            }
            TableCommand::Connect { reply, .. } => {
                let _ = reply.send(Err(TableError::StoreUnavailable));
            }
            TableCommand::Message { connection, message: ClientMessage::Ping } => {
                self.reply(connection, &ServerMessage::Pong);
            }
            TableCommand::Message { connection, .. } => {
                self.reply(connection, &ServerMessage::error(WsErrorCode::StoreUnavailable, waiting));
            }
            TableCommand::BadMessage { connection, code, reason } => {
                self.reply(connection, &ServerMessage::error(code, reason));
            }
            TableCommand::Disconnect { connection } => self.disconnect(connection),
            TableCommand::Watching { connection, count } => self.stream.stands_for(connection, count),
            TableCommand::MoveBetweenHands { reply } => self.move_between_hands(reply),
            // Ending tokens changes a seat's row: done once the store is back
            // (the sessions themselves have ended already).
            TableCommand::EndSeatTokens(revoked) => self.end_seat_tokens(&revoked),
            // `run` answers them.
            TableCommand::Shutdown { .. } | TableCommand::HandOver { .. } | TableCommand::GiveUp => {}
        }
    }

    /// The seat for a newcomer: the one wanted, else a free one (at random
    /// with `--random-seats`, else the lowest), while the game has not started.
    fn free_seat(&mut self, wanted: Option<u8>) -> Result<u8, TableError> {
        if self.state != TableState::Open {
            return Err(TableError::NotNow("the game has started: seats can no longer change".into()));
        }
        let random = self.settings.random_seats;
        let rng = &mut self.rng;
        self.seats.free(wanted, |n| if random { rng.gen_range(0..n) } else { 0 })
    }

    pub fn sit(&mut self, name: &str, seat: Option<u8>, account: Option<i64>) -> Result<SeatGrant, TableError> {
        use crate::text;
        let name = text::person_name(name).map_err(|e| TableError::Invalid(e.to_string()))?;
        let key = text::look_alike_key(&name);
        if let Some((other, _)) = self.seats.occupied().find(|(_, s)| text::look_alike_key(&s.name) == key) {
            return Err(TableError::Invalid(format!(
                "the name '{name}' looks like the name of the player in seat {other}: choose another"
            )));
        }
        if let Some(held) = account.and_then(|a| self.seats.of_account(a)) {
            return Err(TableError::Invalid(format!(
                "your account already sits in seat {held}: connect with your session to play it"
            )));
        }
        let s = self.free_seat(seat)?;
        let grant = self.seats.seat_person(s, name.clone(), account);
        self.seat_changed(s);
        self.broadcast_table(TableEvent::SeatTaken { seat: s, name, robot: None });
        if self.seats.manager.is_none() && !self.settings.no_manager {
            self.seats.manager = Some(s);
            self.broadcast_table(TableEvent::Manager { seat: Some(s) });
        }
        Ok(grant)
    }

    /// Records a seat's new state (or that it is free) for the store.
    pub fn seat_changed(&mut self, seat: u8) {
        self.record.seat(self.seats.row(seat));
    }

    /// The seat of whoever asks: by its seat token (an unknown one is
    /// refused), else by its account.
    fn seat_of(&self, asker: &Asker) -> Result<Option<u8>, TableError> {
        if let Some(token) = &asker.token {
            return self.seats.of_token(token).map(Some).ok_or(TableError::BadToken);
        }
        Ok(asker.account.and_then(|a| self.seats.of_account(a)))
    }

    /// Whether `asker` may seat or remove robots and start the game: an
    /// admin; the manager; at a table without a manager (`--no-manager`),
    /// anyone seated; and anyone while no person sits.
    fn may_manage(&self, asker: &Asker) -> Result<(), TableError> {
        let seat = self.seat_of(asker)?;
        if asker.admin {
            return Ok(());
        }
        match (self.seats.manager, seat) {
            (Some(m), Some(a)) if m == a => Ok(()),
            (Some(_), _) => Err(TableError::NotManager),
            (None, None) if self.seats.any_person() => {
                Err(TableError::Invalid("give the seat token of a seated player (or log in as one)".into()))
            }
            (None, _) => Ok(()),
        }
    }

    /// Ends the seat tokens given with sessions that ended, and closes the
    /// connections that play those seats (WebSockets and classic ones
    /// alike): what a session gave lives no longer than it.
    fn end_seat_tokens(&mut self, revoked: &crate::store::Revoked) {
        for seat in self.seats.end_tokens(revoked) {
            self.seat_changed(seat);
            if let Some(c) = self.seats.get(seat).and_then(|s| s.connection) {
                self.stream.let_go(c, Farewell::SessionEnded);
                self.seat_lost(c, Some(seat), false);
            }
            tracing::info!(table = %self.id, seat, "a seat token ended with its account's sessions");
        }
    }

    fn leave(&mut self, asker: &Asker) -> Result<(), TableError> {
        let s = self.seat_of(asker)?.ok_or(TableError::BadToken)?;
        if self.state != TableState::Open {
            return Err(TableError::NotNow("the game has started: a seat can no longer be left".into()));
        }
        if let Some(c) = self.seats.vacate(s).and_then(|x| x.connection) {
            self.stream.let_go(c, Farewell::SeatLeft);
        }
        self.prompts.forget(s);
        self.seat_changed(s);
        self.broadcast_table(TableEvent::SeatLeft { seat: s });
        if self.seats.manager == Some(s) {
            self.seats.manager = self.seats.first_person();
            self.broadcast_table(TableEvent::Manager { seat: self.seats.manager });
        }
        Ok(())
    }

    pub fn add_robot(&mut self, seat: Option<u8>, strategy: Strategy) -> Result<u8, TableError> {
        strategy.validate().map_err(|e| TableError::Invalid(e.to_string()))?;
        let s = self.free_seat(seat)?;
        let name = self.seats.seat_robot(s, strategy, &self.settings.options);
        self.seat_changed(s);
        self.broadcast_table(TableEvent::SeatTaken { seat: s, name, robot: Some(strategy) });
        Ok(s)
    }

    fn remove_robot(&mut self, seat: u8) -> Result<(), TableError> {
        if seat >= 4 {
            return Err(TableError::NoSuchSeat(seat));
        }
        if self.state != TableState::Open {
            return Err(TableError::NotNow("the game has started: seats can no longer change".into()));
        }
        if !self.seats.get(seat).is_some_and(|s| s.is_robot()) {
            return Err(TableError::Invalid(format!("no robot sits in seat {seat}")));
        }
        self.seats.vacate(seat);
        self.seat_changed(seat);
        self.broadcast_table(TableEvent::SeatLeft { seat });
        Ok(())
    }

    /// Starts the game for `asker`; a game of four robots needs the permit
    /// of `robot_game` (its starter's quota), which it holds while it is
    /// played, and its hands after the first are paid for by `payer`.
    pub fn start(
        &mut self,
        asker: &Asker,
        robot_game: Option<Permit>,
        payer: Option<HandsPayer>,
    ) -> Result<(), TableError> {
        self.may_manage(asker)?;
        if self.state == TableState::Open && self.seats.full() && !self.seats.any_person() {
            let Some(permit) = robot_game else {
                return Err(TableError::NotNow(
                    "a game of robots alone was not asked for: ask to start it again".into(),
                ));
            };
            self.begin()?;
            self.robot_game_hold = Some(permit);
            self.hands_payer = payer.map(|payer| (payer, 1));
            return Ok(());
        }
        self.begin()
    }

    /// A game of four robots pays for each hand dealt since the last paid
    /// for; when its starter's budget is spent, the hand dealt is its last.
    async fn pay_for_hands(&mut self) {
        let dealt = self.hands_dealt();
        while let Some((payer, paid)) = &mut self.hands_payer
            && *paid < dealt
        {
            *paid += 1;
            if let Err(spent) = payer.pay().await {
                tracing::info!(table = %self.id, hands = dealt, "a game of robots alone ends: {spent}");
                self.hands_payer = None;
                self.end_game_between_hands();
            }
        }
    }

    /// The number of the hand being played (for a game of four robots to
    /// stop its robots' run when a new hand is dealt, until it is paid for).
    fn hands_dealt(&self) -> u32 {
        self.game.as_ref().map_or(0, Game::hands_started)
    }

    /// A classic table starts by itself, as mj-server's game does, once its
    /// four seats are taken and every person in them is connected (never a
    /// table of robots alone: somebody starts that, and it counts as theirs).
    fn start_if_classic_and_full(&mut self) {
        let everyone_here = self.seats.occupied().all(|(_, s)| s.is_robot() || s.connection.is_some());
        if self.settings.classic
            && self.state == TableState::Open
            && self.seats.full()
            && self.seats.any_person()
            && everyone_here
        {
            let _ = self.begin();
        }
    }

    /// Starts the game: the seats are full.
    fn begin(&mut self) -> Result<(), TableError> {
        if self.state != TableState::Open {
            return Err(TableError::NotNow("the game has already started".into()));
        }
        if !self.seats.full() {
            return Err(TableError::NotNow(
                "four players are needed: fill the empty seats with people or robots".into(),
            ));
        }
        // It no longer waits to start.
        self.waiting_hold = None;
        self.record.input(self.stream.seq(), Input::StartGame);
        let game = new_game(self.settings.options.clone(), self.settings.no_special_scores);
        self.start_following(game);
        self.state = TableState::Playing;
        self.broadcast_table(TableEvent::GameStarted);
        tracing::info!(table = %self.id, name = %self.settings.name, players = ?self.seats.names(), "game started");
        self.await_ready();
        Ok(())
    }

    /// Gives every robot the options in force (the game's, or the table's
    /// before it starts): after an option change, and after a rebuild.
    pub fn brief_robots(&mut self) {
        let options = self.game.as_ref().map_or(&self.settings.options, Game::options);
        self.seats.brief_robots(options);
    }

    /// The options in force: the game's, or the table's before it starts.
    fn options(&self) -> &crate::rules::options::GameOptions {
        self.game.as_ref().map_or(&self.settings.options, Game::options)
    }

    /// Takes the game (new, or rebuilt) and follows its hands by the seated names.
    pub fn start_following(&mut self, game: Game) {
        self.game = Some(game);
        self.record.projector = HandProjector::new(self.seats.names());
    }

    /// Between hands (and at the start): every person must say ready.
    pub fn await_ready(&mut self) {
        self.await_ready_but(None);
    }

    /// Every person but `exempt` must say ready.
    fn await_ready_but(&mut self, exempt: Option<u8>) {
        self.waiting_ready = true;
        self.seats.ask_ready();
        if let Some(s) = exempt.and_then(|e| self.seats.get_mut(e)) {
            s.ready = true;
        }
        let seats = self.unready();
        self.broadcast_table(TableEvent::WaitingForReady { seats });
        self.deal_if_ready();
    }

    /// mj-server's pause "to start play": on a classic table, once the
    /// deal's declarations are over, play waits until every person but East
    /// has said ready (East is exempt: it is the one to move).
    fn await_ready_to_play(&mut self, east: u8) {
        self.paused = true;
        self.claim_deadline = None;
        self.broadcast_table(TableEvent::PlayStarting { east });
        self.await_ready_but(Some(east));
    }

    pub fn unready(&self) -> Vec<u8> {
        self.seats.unready(self.settings.robot_takeover)
    }

    /// A robot makes this seat's moves: a robot's seat, or a person's seat
    /// whose player has been away longer than the takeover delay.
    fn robot_plays(&self, seat: u8) -> bool {
        self.seats.robot_plays(seat, self.settings.robot_takeover)
    }

    /// Cluster mode: the table stops here, to be played at another node;
    /// its clients are sent there (4004), and what it was asked and did not
    /// answer is told to come back shortly.
    fn send_everyone_elsewhere(&mut self) {
        self.elsewhere.store(true, std::sync::atomic::Ordering::SeqCst);
        self.stream.let_everyone_go(Farewell::Moved);
    }

    /// Cluster mode, rebalancing: the table is to move to another node when
    /// the hand being played is over. Only a game being played moves (one
    /// not started, or over, is no load worth moving): otherwise the answer
    /// is dropped, which the asker reads as "not moved".
    fn move_between_hands(&mut self, reply: tokio::sync::oneshot::Sender<()>) {
        if self.state == TableState::Playing && !self.closing && self.fence.is_some() {
            self.moving = Some(reply);
        }
    }

    /// No hand is being played, and the game goes on: the moment a table
    /// may move to another node.
    fn between_hands(&self) -> bool {
        self.game.as_ref().is_some_and(|g| !g.hand_in_progress() && !g.is_over())
    }

    /// Once everybody is ready: play resumes after a pause, or the next
    /// hand is dealt.
    pub fn deal_if_ready(&mut self) {
        // A table about to move deals its next hand at its next node.
        if self.closing || (self.moving.is_some() && self.between_hands()) {
            return;
        }
        if !self.waiting_ready || !self.unready().is_empty() {
            return;
        }
        self.waiting_ready = false;
        if self.paused {
            self.paused = false;
            if self.game.as_ref().is_some_and(Game::hand_in_progress) {
                self.broadcast_table(TableEvent::Resumed);
                self.restart_claim_timer();
                self.auto_pass();
                return;
            }
        }
        let Some(game) = &self.game else { return };
        if game.is_over() || game.hand_in_progress() {
            return;
        }
        let given = match game.hands_started() {
            0 => self.settings.first_wall.take(),
            n => self.settings.later_walls.get(n as usize - 1).cloned(),
        };
        let wall = match given {
            Some(tiles) => WallSource::Tiles(tiles),
            None => WallSource::Shuffled { seed: self.rng.next_u64() },
        };
        let dice = Some([self.rng.gen_range(1..=6), self.rng.gen_range(1..=6)]);
        if let Err(e) = self.apply(Command::StartHand { wall, dice }) {
            // Only a given wall can be refused (the options changed since it
            // was checked): deal a shuffled one instead.
            tracing::warn!(table = %self.id, "the wall file was refused ({e}); dealing a shuffled wall");
            let wall = WallSource::Shuffled { seed: self.rng.next_u64() };
            if let Err(e) = self.apply(Command::StartHand { wall, dice }) {
                tracing::error!(table = %self.id, "cannot deal: {e}");
            }
        }
    }

    // ----- connections ----------------------------------------------------

    fn connect(
        &mut self,
        token: Option<&str>,
        account: Option<i64>,
        since: Option<u64>,
        replay_hand: bool,
    ) -> Result<Connection, TableError> {
        let seat = match token {
            Some(t) => Some(self.seats.of_token(t).ok_or(TableError::BadToken)?),
            // A logged-in player needs no token for its own seat.
            None => account.and_then(|a| self.seats.of_account(a)),
        };
        let id = self.stream.next_connection();
        let (connection, needs_snapshot) = self.stream.subscribe(id, seat, since)?;
        // The newest connection acts for the seat; an older one closes.
        let mut arrived = None;
        if let Some(st) = seat.and_then(|s| self.seats.get_mut(s)) {
            // A classic client answers every discard itself, as mj-server's
            // clients do. Otherwise the seat keeps what it asked for
            // (`set_claim_prompts`; at first, only when it can claim).
            if replay_hand {
                st.ask_every_discard = true;
            }
            match st.connection.replace(id) {
                Some(old) => self.stream.let_go(old, Farewell::Replaced),
                None => arrived = Some(st.disconnected_at.take().is_some()),
            }
        }
        // The snapshot is made once the connection counts (its seat
        // connected, or one more spectator).
        if needs_snapshot {
            let snapshot = to_text(&self.snapshot(seat));
            self.stream.send_to(id, snapshot);
            if replay_hand && self.game.as_ref().is_some_and(Game::hand_in_progress) {
                self.stream.replay_hand(id);
            }
        }
        if let Some(s) = seat {
            // A new connection is told what it may do, whatever it was told before.
            self.prompts.forget(s);
            self.send_prompt(s);
            // Everybody sees who is at the table: the first connection of a
            // seat taken by REST counts as much as a return.
            match arrived {
                Some(true) => self.broadcast_table(TableEvent::Reconnected { seat: s }),
                Some(false) => self.broadcast_table(TableEvent::Connected { seat: s }),
                None => {}
            }
        }
        Ok(connection)
    }

    fn disconnect(&mut self, connection: u64) {
        let Some(seat) = self.stream.unsubscribe(connection) else { return };
        self.seat_lost(connection, seat, true);
    }

    /// A connection acting for `seat` is gone: closed by the client (`left`;
    /// noticed by its socket, or by the table finding the socket ended), or
    /// dropped by the table as too slow (the client will reconnect, so that
    /// never ends a game under `--end-on-disconnect`).
    pub fn seat_lost(&mut self, connection: u64, seat: Option<u8>, left: bool) {
        let Some(s) = seat else { return };
        let Some(seat_state) = self.seats.get_mut(s) else { return };
        if seat_state.connection == Some(connection) {
            seat_state.connection = None;
            seat_state.disconnected_at = Some(Instant::now());
            self.prompts.forget(s);
            self.broadcast_table(TableEvent::Disconnected { seat: s });
            if left && self.settings.end_on_disconnect && self.state == TableState::Playing {
                self.end_on_disconnect(s);
            }
        }
    }

    /// A subscriber the stream dropped: fell behind, or its socket already
    /// ended (which is the client leaving).
    fn forget_dropped(&mut self, dropped: Dropped) {
        self.seat_lost(dropped.connection, dropped.seat, dropped.gone);
    }

    /// mj-server's `--end-on-disconnect`: mid-hand the hand is washed out,
    /// except that after Mah-Jong a losing player's tiles are shown and the
    /// hand is scored; then the game ends. The player who left gets the
    /// penalty for when it left.
    fn end_on_disconnect(&mut self, seat: u8) {
        let Some(game) = &self.game else { return };
        // Whatever happens to the hand, the game ends when it is over.
        self.end_after_hand = true;
        let [mid_hand, mid_round, end_of_round] = self.settings.disconnect_penalties;
        let player = PlayerId(seat);
        let penalty = match game.hand().filter(|_| game.hand_in_progress()) {
            Some(hand) => {
                let s = hand.seat_of(player);
                let declared = hand.seat(s).hand_declared || hand.hand_score(s).is_some();
                let loser_after_mah_jong =
                    hand.phase() == Phase::MahJonging && !hand.winners().contains(&s) && hand.to_act() != s;
                if loser_after_mah_jong {
                    if !declared {
                        let _ = self.apply(Command::Act { player, action: Action::ShowTiles });
                    }
                } else {
                    let _ = self.apply(Command::AbandonHand);
                }
                mid_hand
            }
            None if game.next_hand_starts_round() => end_of_round,
            None => mid_round,
        };
        if let Some(s) = self.seats.get_mut(seat) {
            s.penalty += penalty;
        }
        self.seat_changed(seat);
        self.send_event(Audience::Only(player), StreamEvent::Table(TableEvent::Penalty { seat, points: penalty }));
        self.end_game_between_hands();
        let penalties: Vec<i64> = self.seats.occupied().map(|(_, s)| s.penalty).collect();
        tracing::info!(table = %self.id, ?penalties, "the game ends on a disconnection");
    }

    /// Ends the game now if no hand is being played (otherwise when it ends).
    fn end_game_between_hands(&mut self) {
        let Some(game) = &self.game else { return };
        if game.hand_in_progress() {
            self.end_after_hand = true;
            return;
        }
        if !game.is_over() {
            let _ = self.apply(Command::EndGame);
        }
        self.game_over();
        self.waiting_ready = false;
        self.paused = false;
    }

    /// Moves may be made now: the game is being played, neither paused nor
    /// waiting for `ready`.
    fn takes_moves(&self) -> bool {
        self.state == TableState::Playing && !self.paused && !self.waiting_ready
    }

    /// What the player in `seat` may do now.
    pub fn prompt(&self, seat: u8) -> crate::protocol::ws::Prompt {
        let moment = Moment {
            seq: self.stream.seq(),
            game: self.game.as_ref(),
            playing: self.takes_moves(),
            claim_deadline: self.claim_deadline,
        };
        prompt::prompt(seat, self.waiting_ready && self.unready().contains(&seat), moment)
    }

    /// Sends `seat`'s connection its prompt if it changed since the last one.
    fn send_prompt(&mut self, seat: u8) {
        let Some(connection) = self.seats.get(seat).and_then(|s| s.connection) else { return };
        let prompt = self.prompt(seat);
        if self.prompts.changed(seat, &prompt) {
            self.reply(connection, &ServerMessage::Prompt(prompt));
        }
    }

    /// Sends every connected player its prompt where it changed.
    fn send_prompts(&mut self) {
        for seat in 0..4 {
            self.send_prompt(seat);
        }
    }

    /// Sends one message to one connection (an answer, an error, a prompt);
    /// a connection that cannot take it is dropped.
    pub fn reply(&mut self, connection: u64, message: &ServerMessage) {
        if let ServerMessage::Error { code, .. } = message {
            // Every refusal of a client's message is answered here.
            crate::metrics::command_refused(code.as_str());
        }
        if let Some(dropped) = self.stream.send_to(connection, to_text(message)) {
            self.forget_dropped(dropped);
        }
    }

    // ----- the game ----------------------------------------------------------

    /// Applies a command to the game and sends out what it caused; returns
    /// the engine's refusal, which changes nothing.
    pub fn apply(&mut self, command: Command) -> Result<(), GameError> {
        let Some(game) = self.game.as_mut() else { return Err(GameError::NoHand) };
        let starts_hand = matches!(command, Command::StartHand { .. });
        // A pass never opens a claim window; anything else may.
        let may_open_claims = !matches!(command, Command::Act { action: Action::Pass { .. }, .. });
        let emitted = game.apply(command.clone())?;
        let finished_hand = !game.hand_in_progress();
        let over = game.is_over();
        self.record.input(self.stream.seq(), Input::Engine { command });
        self.last_action = Instant::now();
        if starts_hand {
            self.stream.new_hand();
        }
        let play_starts = emitted.iter().find_map(|e| match e.event {
            Event::PlayStarted { east } => Some(east.0),
            _ => None,
        });
        for e in emitted {
            self.broadcast(e);
        }
        if let Some(east) = play_starts.filter(|_| self.settings.classic) {
            self.await_ready_to_play(east);
        }
        self.restart_claim_timer();
        if may_open_claims {
            self.auto_pass();
        }
        if over {
            self.game_over();
        } else if finished_hand && !starts_hand && self.end_after_hand {
            self.end_game_between_hands();
        } else if finished_hand && !starts_hand {
            self.await_ready();
        }
        Ok(())
    }

    /// Passes at once, for every person who asked to be asked only when a
    /// claim is possible (the default on the WebSocket), on the open discard
    /// or kong when `pass` is the only answer the engine accepts from them.
    /// The pass is an input like any other (stored, replayed on recovery);
    /// robots answer for themselves, at the table's pace. What the timing
    /// tells the others is in docs/protocol.md, "Claims only when there is
    /// a choice".
    pub fn auto_pass(&mut self) {
        if !self.takes_moves() {
            return;
        }
        let Some(game) = self.game.as_ref().filter(|g| g.hand_in_progress()) else { return };
        if !game.hand().is_some_and(Hand::claim_window_open) {
            return;
        }
        let mut passes = Vec::new();
        let mut actions = Vec::new();
        for seat in 0..4u8 {
            // Robots (and robots standing in) answer for themselves.
            let wants = self.seats.get(seat).is_some_and(|s| !s.ask_every_discard);
            if !wants || self.robot_plays(seat) {
                continue;
            }
            actions.clear();
            game.legal_actions_into(PlayerId(seat), &mut actions);
            if let [pass @ Action::Pass { .. }] = actions.as_slice() {
                passes.push((seat, pass.clone()));
            }
        }
        for (seat, action) in passes {
            // Legal a moment ago, and each pass leaves the others' answers
            // as they were: never refused.
            if let Err(e) = self.apply(Command::Act { player: PlayerId(seat), action }) {
                tracing::error!(table = %self.id, seat, "the automatic pass was refused: {e}");
            }
        }
    }

    /// Starts the claim timer when a new discard or kong opens for claims.
    pub fn restart_claim_timer(&mut self) {
        let Some((game, hand)) =
            self.game.as_ref().and_then(|g| g.hand().filter(|_| g.hand_in_progress()).map(|h| (g, h)))
        else {
            self.claim_deadline = None;
            return;
        };
        let options = game.options();
        if !hand.claim_window_open() || options.timeout == 0 || self.paused {
            self.claim_deadline = None;
            return;
        }
        let serial = hand.serial();
        if self.claim_deadline.is_none_or(|d| d.serial != serial) {
            // Both options are bounded; adding them as u64 cannot overflow.
            let wait = Duration::from_secs(u64::from(options.timeout) + u64::from(options.timeout_grace));
            let at_us = crate::store::now_us().unsigned_abs() + wait.as_micros() as u64;
            self.claim_deadline = Some(ClaimDeadline { serial, at: Instant::now() + wait, at_us });
        }
    }

    fn next_deadline(&self) -> Option<Instant> {
        if self.record.is_held() {
            // Nothing moves until the store is back: no claim timeout, no robot.
            return None;
        }
        // While a restart brings other tables back, no claim times out (and
        // no robot is due).
        let claim = self.claim_deadline.filter(|_| !self.robots_waiting()).map(|d| d.at);
        let robot = self.robot_due().map(|_| self.last_action + self.pause_duration());
        let takeover = self.seats.next_takeover(self.settings.robot_takeover);
        [claim, robot, takeover, self.close_at, self.idle_deadline()].into_iter().flatten().min()
    }

    fn pause_duration(&self) -> Duration {
        Duration::from_millis(u64::from(self.pause()) * 100)
    }

    fn on_timer(&mut self) {
        if let Some(d) = self.claim_deadline
            && d.at <= Instant::now()
        {
            self.claim_deadline = None;
            let open = self
                .game
                .as_ref()
                .and_then(Game::hand)
                .is_some_and(|h| h.claim_window_open() && h.serial() == d.serial);
            if open {
                let _ = self.apply(Command::ClaimTimeout);
            }
        }
        // A robot may now stand in for a player who has been away long enough.
        if self.waiting_ready {
            self.deal_if_ready();
        }
        self.expire_if_idle();
    }

    /// Whether the restart that brought this table back is still bringing
    /// others back (see [`Actor::robots_wait`]).
    fn robots_waiting(&self) -> bool {
        self.robots_wait.as_ref().is_some_and(|w| *w.borrow())
    }

    /// The first seat (in id order) a robot must move for.
    fn robot_due(&self) -> Option<u8> {
        if self.paused
            || self.waiting_ready
            || self.state != TableState::Playing
            || self.record.is_held()
            || self.robots_waiting()
        {
            return None;
        }
        let game = self.game.as_ref()?;
        let hand = game.hand().filter(|_| game.hand_in_progress())?;
        (0..4u8).find(|&s| self.robot_plays(s) && view::decision(hand, hand.seat_of(PlayerId(s))).is_some())
    }

    /// Makes the robots' moves that are due now (a burst of them is stored
    /// and sent together).
    async fn run_robots(&mut self) -> Result<(), StoreError> {
        self.robot_moves();
        self.flush().await?;
        tokio::task::yield_now().await;
        Ok(())
    }

    fn robot_moves(&mut self) {
        let dealt = self.hands_dealt();
        for _ in 0..ROBOT_BURST {
            // A game of four robots pays for a hand before its moves.
            if self.hands_payer.is_some() && self.hands_dealt() != dealt {
                return;
            }
            let Some(seat) = self.robot_due() else { return };
            if self.last_action + self.pause_duration() > Instant::now() {
                return; // the timer will come back for it
            }
            let Some(game) = &self.game else { return };
            let view = game.view(Some(PlayerId(seat)));
            let decide = |s: &super::seats::Seat| match &s.robot {
                Some((_, robot)) => robot.decide(&view),
                // A robot standing in for an absent player.
                None => Robot::new(Strategy::default(), game.options().clone()).decide(&view),
            };
            let outcome = match self.seats.get(seat).and_then(decide) {
                Some(action) => self.apply(Command::Act { player: PlayerId(seat), action }).map_err(|e| e.to_string()),
                None => Err("the robot found no move".to_string()),
            };
            if let Err(e) = outcome {
                // A robot without a move, or with one the engine refuses, is a
                // bug: pause the table rather than spin, and say so.
                tracing::error!(table = %self.id, seat, "robot move failed: {e}");
                self.paused = true;
                self.broadcast_table(TableEvent::Paused { seat, reason: format!("robot error: {e}") });
                self.await_ready();
                return;
            }
        }
    }

    // ----- sending -----------------------------------------------------------

    pub fn broadcast_table(&mut self, event: TableEvent) {
        self.send_event(Audience::Everyone, StreamEvent::Table(event));
    }

    fn broadcast(&mut self, emitted: Emitted) {
        self.send_event(emitted.to, StreamEvent::Game(emitted.event));
    }

    /// Numbers an event and records it for the store; it is sent once stored.
    pub fn send_event(&mut self, to: Audience, event: StreamEvent) {
        let at_us = crate::store::now_us().unsigned_abs();
        if let StreamEvent::Game(e) = &event {
            self.record.observe(self.stream.seq() as i64 + 1, at_us as i64, e);
        }
        let (seq, text) = self.stream.push(to, event, at_us);
        let row = EventRow {
            seq: seq as i64,
            at_us: at_us as i64,
            hand: self.hand_number(),
            audience: to,
            body: text.to_string(),
        };
        self.record.event(row);
    }

    /// The hand being played or just played (0 before the first deal).
    pub fn hand_number(&self) -> i64 {
        self.game.as_ref().map_or(0, |g| i64::from(g.hands_started()))
    }

    /// The table closes (an admin closed it, or it was idle too long): a hand
    /// in progress is washed out, the game ends as it stands (`game_over`),
    /// everybody is told why (`closed`), and the table stops once that is
    /// stored (its connections close; it is gone from the lobby).
    fn abort(&mut self, reason: &str) {
        // First, so that the hand washed out below is not followed by another.
        self.closing = true;
        if self.game.as_ref().is_some_and(Game::hand_in_progress) {
            let _ = self.apply(Command::AbandonHand);
        }
        if self.game.as_ref().is_some_and(|g| !g.hand_in_progress() && !g.is_over()) {
            let _ = self.apply(Command::EndGame);
        }
        self.game_over();
        self.waiting_ready = false;
        self.paused = false;
        self.broadcast_table(TableEvent::Closed { reason: reason.to_string() });
        tracing::info!(table = %self.id, "closed: {reason}");
    }

    /// Notes when the table became idle (no person connected at a table not
    /// started, or at a game of people), or that it no longer is.
    fn watch_idle(&mut self) {
        let someone_here = self.seats.occupied().any(|(_, s)| !s.is_robot() && s.connection.is_some());
        let may_idle = match self.state {
            TableState::Open => true,
            // A game of robots plays by itself; one of people waits for them.
            TableState::Playing => self.seats.any_person(),
            TableState::Over => false,
        };
        if may_idle && !someone_here {
            self.idle_since.get_or_insert_with(Instant::now);
        } else {
            self.idle_since = None;
        }
    }

    /// When an idle table expires.
    fn idle_deadline(&self) -> Option<Instant> {
        let since = self.idle_since?;
        let after = if self.state == TableState::Open { self.limits.idle_open } else { self.limits.idle_game };
        since.checked_add(after)
    }

    /// Closes the table if it has been idle too long.
    fn expire_if_idle(&mut self) {
        if self.closing || self.idle_deadline().is_none_or(|at| at > Instant::now()) {
            return;
        }
        let (what, after) = match self.state {
            TableState::Open => ("nobody has been at this table", self.limits.idle_open),
            _ => ("nobody has been at this game", self.limits.idle_game),
        };
        let seconds = after.as_secs();
        let span = match seconds {
            60 => "a minute".to_string(),
            s if s.is_multiple_of(60) => format!("{} minutes", s / 60),
            1 => "a second".to_string(),
            s => format!("{s} seconds"),
        };
        self.abort(&format!("{what} for {span}"));
    }

    fn game_over(&mut self) {
        // Seats, a table waiting and a game of robots count against their
        // holders only while the game is not over.
        self.seats.release_holds();
        self.waiting_hold = None;
        self.robot_game_hold = None;
        self.hands_payer = None;
        if self.state != TableState::Over {
            let scores = self.game.as_ref().map(Game::scores);
            tracing::info!(table = %self.id, name = %self.settings.name, ?scores, "game over");
        }
        self.state = TableState::Over;
        self.record.finished_us.get_or_insert_with(crate::store::now_us);
    }

    /// The game row as it now stands.
    fn game_row(&self) -> GameRow {
        GameRow {
            name: self.settings.name.clone(),
            preset: self.settings.preset.clone(),
            source: self.record.source,
            state: self.state,
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
    /// waits for the store ([`Actor::refuse_while_held`]). Any other store
    /// failure is returned, and the table stops.
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

/// Completes once the store can be written again (never, if the store has closed).
async fn store_back(available: &mut tokio::sync::watch::Receiver<bool>) {
    if available.wait_for(|up| *up).await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// Completes when `recovering` turns `false` (or its sender is gone).
async fn recovery_over(recovering: &mut Option<tokio::sync::watch::Receiver<bool>>) {
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
