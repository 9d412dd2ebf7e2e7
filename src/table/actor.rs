//! The table actor: one tokio task owning one table outright (no locks).
//!
//! It seats players and robots, runs the game through the rules engine, and
//! sends every subscriber exactly the events its seat may see, each with a
//! sequence number. It also runs what mj-server's controller ran around the
//! game: the claim timeout, the pause between actions, the "ready for the
//! next hand" handshake, pause requests, the game manager, chat, and
//! disconnections (a seat waits for its player; optionally a robot stands in).
//!
//! Each subscriber has a bounded queue; one that is full is dropped (its
//! socket closes and the client reconnects for a fresh snapshot), so a slow
//! client never stalls the table.
//!
//! Persistence: what the table does is gathered into a pending batch (the
//! inputs the engine accepted, the events with their sequence numbers, seat
//! and hand projections) and written to the store before any of its events
//! is sent, and before a request that changed something is answered. If the
//! store fails the table stops: it never shows anyone what it could lose.
//! [`recover`] rebuilds a table from the store after a restart.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::rebuild::{Rebuild, new_game};
use super::{Connection, SeatGrant, TableCommand, TableError, TableHandle, TableSettings};
use crate::bots::Robot;
use crate::bots::strategy::Strategy;
use crate::protocol::ws::{
    ClientMessage, MAX_CHAT_CHARS, SeatInfo, ServerMessage, StreamEvent, TableEvent, TableInfo, TableState,
};
use crate::rules::command::{Command, PlayerId, WallSource};
use crate::rules::event::{Audience, Emitted};
use crate::rules::game::Game;
use crate::rules::view;
use crate::store::{
    Batch, EventRow, GameRow, HandProjector, Input, InputRow, SavedGame, SeatChange, SeatRow, Store, StoreError,
    token_sha256,
};

/// mj-server's largest reasonable pause between actions: 5 seconds.
const MAX_PAUSE_DECISECONDS: u32 = 50;

/// At most this many robot moves are made in a row before the actor lets
/// other tasks run (with no pause between actions).
const ROBOT_BURST: usize = 64;

/// A finished game's table stays open this long after its last subscriber
/// has gone (scores can be looked up), then the table closes.
const KEEP_FINISHED: Duration = Duration::from_secs(300);

/// Opens a new table: writes it to the store, then starts its task.
pub async fn spawn(id: String, settings: TableSettings, store: Store) -> Result<TableHandle, StoreError> {
    let mut actor = Actor::new(id.clone(), settings, store);
    actor.flush().await?;
    Ok(start_task(actor))
}

fn start_task(actor: Actor) -> TableHandle {
    let (sender, receiver) = mpsc::channel(super::COMMAND_QUEUE);
    let id = actor.id.clone();
    tokio::spawn(actor.run(receiver));
    TableHandle { id, sender }
}

/// Who sits in a seat.
struct Seat {
    name: String,
    /// The SHA-256 of a person's seat token (hex); `None` for a robot. The
    /// token itself is never kept.
    token_sha256: Option<String>,
    /// A robot's strategy (and the robot playing).
    robot: Option<(Strategy, Robot)>,
    /// The connection acting for a person, if connected.
    connection: Option<u64>,
    /// When the person's connection was lost.
    disconnected_at: Option<Instant>,
    ready: bool,
    /// The pause between actions this player asked for.
    pause_request: u32,
}

impl Seat {
    fn is_robot(&self) -> bool {
        self.robot.is_some()
    }
}

/// A connected client.
struct Subscriber {
    seat: Option<u8>,
    sender: mpsc::Sender<Arc<str>>,
}

/// One event of the stream, kept for clients that resume.
struct Logged {
    seq: u64,
    to: Audience,
    text: Arc<str>,
}

/// What the table has done since its last write to the store.
#[derive(Default)]
struct Pending {
    seats: Vec<SeatChange>,
    inputs: Vec<InputRow>,
    events: Vec<EventRow>,
    hands: Vec<crate::store::HandRow>,
    /// The events' messages, sent once they are stored.
    outbox: Vec<(Audience, Arc<str>)>,
    /// The game row must be written even with nothing else pending.
    game_changed: bool,
}

impl Pending {
    fn is_empty(&self) -> bool {
        !self.game_changed
            && self.seats.is_empty()
            && self.inputs.is_empty()
            && self.events.is_empty()
            && self.hands.is_empty()
    }
}

struct Actor {
    id: String,
    settings: TableSettings,
    store: Store,
    /// The settings have not been written yet (a new table).
    settings_unwritten: bool,
    /// Where the game came from (`live`, `loaded`, `mj-server`).
    source: &'static str,
    created_us: i64,
    finished_us: Option<i64>,
    pending: Pending,
    /// Inputs written so far.
    inputs: i64,
    /// Turns the game's events into the hands' rows.
    projector: HandProjector,
    seats: [Option<Seat>; 4],
    manager: Option<u8>,
    state: TableState,
    game: Option<Game>,
    rng: ChaCha8Rng,
    subscribers: BTreeMap<u64, Subscriber>,
    next_connection: u64,
    seq: u64,
    /// Recent events (the current and previous hand), for resuming.
    log: VecDeque<Logged>,
    /// Events before this sequence number are no longer kept.
    log_start: u64,
    /// The first sequence number of the hand being played.
    hand_started_seq: u64,
    /// Waiting for every person to say ready (between hands, or after a pause request).
    waiting_ready: bool,
    paused: bool,
    /// The claim window being timed: its discard serial and deadline.
    claim_deadline: Option<(u32, Instant)>,
    /// When the last action was made (for the pause between actions).
    last_action: Instant,
    /// When an idle finished table closes.
    close_at: Option<Instant>,
    /// The game ends when the hand being played is over (a losing player
    /// left after Mah-Jong, with `--end-on-disconnect`).
    end_after_hand: bool,
    /// Penalties recorded against players who left (`--disconnect-penalties`).
    penalties: [i64; 4],
}

impl Actor {
    fn new(id: String, settings: TableSettings, store: Store) -> Actor {
        let rng = ChaCha8Rng::seed_from_u64(settings.seed);
        Actor {
            id,
            settings,
            store,
            settings_unwritten: true,
            source: "live",
            created_us: crate::store::now_us(),
            finished_us: None,
            pending: Pending { game_changed: true, ..Pending::default() },
            inputs: 0,
            projector: HandProjector::new(Default::default()),
            seats: [None, None, None, None],
            manager: None,
            state: TableState::Open,
            game: None,
            rng,
            subscribers: BTreeMap::new(),
            next_connection: 1,
            seq: 0,
            log: VecDeque::new(),
            log_start: 1,
            hand_started_seq: 1,
            waiting_ready: false,
            paused: false,
            claim_deadline: None,
            last_action: Instant::now(),
            close_at: None,
            end_after_hand: false,
            penalties: [0; 4],
        }
    }

    async fn run(mut self, mut commands: mpsc::Receiver<TableCommand>) {
        loop {
            let deadline = self.next_deadline();
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
                    Some(c) => self.handle(c).await,
                    None => break,
                },
                _ = sleep_until(deadline), if deadline.is_some() => {
                    self.on_timer();
                    Ok(())
                }
            };
            let done = match done {
                Ok(()) => self.run_robots().await,
                e => e,
            };
            if let Err(e) = done {
                // Nothing unstored has been shown to anyone; the table is
                // rebuilt from the store when the server next starts.
                tracing::error!(table = %self.id, "the table stops: {e}");
                break;
            }
            // A finished game with nobody watching closes after a while.
            if self.state == TableState::Over && self.subscribers.is_empty() {
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

    fn info(&self) -> TableInfo {
        let seats = (0..4u8)
            .map(|i| match &self.seats[i as usize] {
                Some(s) => SeatInfo {
                    seat: i,
                    name: Some(s.name.clone()),
                    robot: s.robot.as_ref().map(|(st, _)| *st),
                    connected: s.is_robot() || s.connection.is_some(),
                    ready: s.is_robot() || s.ready,
                },
                None => SeatInfo { seat: i, name: None, robot: None, connected: false, ready: false },
            })
            .collect();
        TableInfo {
            id: self.id.clone(),
            name: self.settings.name.clone(),
            state: self.state,
            seats,
            manager: self.manager,
            spectators: self.subscribers.values().filter(|s| s.seat.is_none()).count(),
            preset: self.settings.preset.clone(),
            scores: self.game.as_ref().map_or([0; 4], Game::scores),
            hands: self.game.as_ref().map_or(0, Game::hands_started),
            pause_deciseconds: self.pause(),
            waiting_for_ready: if self.waiting_ready { self.unready() } else { Vec::new() },
            paused: self.paused,
            seq: self.seq,
        }
    }

    /// The pause in force: the table's own, or the longest a player asked
    /// for (`set_pause` refuses more than [`MAX_PAUSE_DECISECONDS`]).
    fn pause(&self) -> u32 {
        let requested = self.seats.iter().flatten().map(|s| s.pause_request).max().unwrap_or(0);
        self.settings.pause_deciseconds.max(requested)
    }

    // ----- commands --------------------------------------------------------

    /// Handles a command. A request that changed something is answered only
    /// once the change is stored.
    async fn handle(&mut self, command: TableCommand) -> Result<(), StoreError> {
        match command {
            TableCommand::Info { reply } => {
                let _ = reply.send(self.info());
            }
            TableCommand::Sit { name, seat, reply } => {
                let answer = self.sit(name, seat);
                self.flush().await?;
                let _ = reply.send(answer);
            }
            TableCommand::Leave { token, reply } => {
                let answer = self.leave(&token);
                self.flush().await?;
                let _ = reply.send(answer);
            }
            TableCommand::AddRobot { seat, strategy, reply } => {
                let answer = self.add_robot(seat, strategy);
                self.flush().await?;
                let _ = reply.send(answer);
            }
            TableCommand::RemoveRobot { seat, reply } => {
                let answer = self.remove_robot(seat);
                self.flush().await?;
                let _ = reply.send(answer);
            }
            TableCommand::Start { token, reply } => {
                let answer = self.start(token.as_deref());
                self.flush().await?;
                let _ = reply.send(answer);
            }
            TableCommand::Connect { token, since, reply } => {
                let _ = reply.send(self.connect(token.as_deref(), since));
            }
            TableCommand::Message { connection, message } => self.message(connection, message),
            TableCommand::BadMessage { connection, code, reason } => {
                self.reply(connection, &ServerMessage::error(code, reason));
            }
            TableCommand::Disconnect { connection } => self.disconnect(connection),
            TableCommand::Shutdown { .. } => {} // `run` answers it
        }
        self.flush().await
    }

    fn free_seat(&mut self, wanted: Option<u8>) -> Result<u8, TableError> {
        if self.state != TableState::Open {
            return Err(TableError::NotNow("the game has started: seats can no longer change"));
        }
        match wanted {
            Some(s) if s >= 4 => Err(TableError::NoSuchSeat(s)),
            Some(s) if self.seats[s as usize].is_some() => Err(TableError::SeatTaken(s)),
            Some(s) => Ok(s),
            None => {
                let free: Vec<u8> = (0..4u8).filter(|&s| self.seats[s as usize].is_none()).collect();
                match free.len() {
                    0 => Err(TableError::Full),
                    n if self.settings.random_seats => Ok(free[self.rng.gen_range(0..n)]),
                    _ => Ok(free[0]),
                }
            }
        }
    }

    fn sit(&mut self, name: String, seat: Option<u8>) -> Result<SeatGrant, TableError> {
        let name = name.trim().to_string();
        if name.is_empty() || name.chars().count() > 40 {
            return Err(TableError::Invalid("a name has 1 to 40 characters".into()));
        }
        let s = self.free_seat(seat)?;
        let token = crate::store::new_seat_token();
        self.seats[s as usize] = Some(Seat {
            name: name.clone(),
            token_sha256: Some(token_sha256(&token)),
            robot: None,
            connection: None,
            disconnected_at: None,
            ready: false,
            pause_request: 0,
        });
        self.seat_changed(s);
        self.broadcast_table(TableEvent::SeatTaken { seat: s, name, robot: None });
        if self.manager.is_none() && !self.settings.no_manager {
            self.manager = Some(s);
            self.broadcast_table(TableEvent::Manager { seat: Some(s) });
        }
        Ok(SeatGrant { seat: s, token })
    }

    fn seat_of_token(&self, token: &str) -> Option<u8> {
        let hash = token_sha256(token);
        (0..4u8).find(|&s| self.seats[s as usize].as_ref().is_some_and(|x| x.token_sha256.as_deref() == Some(&hash)))
    }

    /// Records a seat's new state (or that it is free) for the store.
    fn seat_changed(&mut self, seat: u8) {
        let change = match &self.seats[seat as usize] {
            Some(s) => SeatChange::Set(SeatRow {
                seat: i64::from(seat),
                name: s.name.clone(),
                robot: s.robot.as_ref().map(|(strategy, _)| serde_json::to_string(strategy).unwrap_or_default()),
                token_sha256: s.token_sha256.clone(),
                pause_request: i64::from(s.pause_request),
                penalty: self.penalties[seat as usize],
            }),
            None => SeatChange::Free(i64::from(seat)),
        };
        self.pending.seats.push(change);
    }

    fn leave(&mut self, token: &str) -> Result<(), TableError> {
        let s = self.seat_of_token(token).ok_or(TableError::BadToken)?;
        if self.state != TableState::Open {
            return Err(TableError::NotNow("the game has started: a seat can no longer be left"));
        }
        if let Some(c) = self.seats[s as usize].take().and_then(|x| x.connection) {
            self.subscribers.remove(&c);
        }
        self.seat_changed(s);
        self.broadcast_table(TableEvent::SeatLeft { seat: s });
        if self.manager == Some(s) {
            self.manager = (0..4u8).find(|&i| self.seats[i as usize].as_ref().is_some_and(|x| !x.is_robot()));
            self.broadcast_table(TableEvent::Manager { seat: self.manager });
        }
        Ok(())
    }

    fn add_robot(&mut self, seat: Option<u8>, strategy: Strategy) -> Result<u8, TableError> {
        strategy.validate().map_err(|e| TableError::Invalid(e.to_string()))?;
        let s = self.free_seat(seat)?;
        let robot = Robot::new(strategy, self.settings.options.clone());
        let name = format!("Robot {}", s + 1);
        self.seats[s as usize] = Some(Seat {
            name: name.clone(),
            token_sha256: None,
            robot: Some((strategy, robot)),
            connection: None,
            disconnected_at: None,
            ready: true,
            pause_request: 0,
        });
        self.seat_changed(s);
        self.broadcast_table(TableEvent::SeatTaken { seat: s, name, robot: Some(strategy) });
        Ok(s)
    }

    fn remove_robot(&mut self, seat: u8) -> Result<(), TableError> {
        if seat >= 4 {
            return Err(TableError::NoSuchSeat(seat));
        }
        if self.state != TableState::Open {
            return Err(TableError::NotNow("the game has started: seats can no longer change"));
        }
        if !self.seats[seat as usize].as_ref().is_some_and(Seat::is_robot) {
            return Err(TableError::Invalid(format!("no robot sits in seat {seat}")));
        }
        self.seats[seat as usize] = None;
        self.seat_changed(seat);
        self.broadcast_table(TableEvent::SeatLeft { seat });
        Ok(())
    }

    fn start(&mut self, token: Option<&str>) -> Result<(), TableError> {
        let asker = match token {
            Some(t) => Some(self.seat_of_token(t).ok_or(TableError::BadToken)?),
            None => None,
        };
        match (self.manager, asker) {
            (Some(m), Some(a)) if m != a => return Err(TableError::NotManager),
            (Some(_), None) => return Err(TableError::NotManager),
            (None, None) if self.seats.iter().flatten().any(|s| !s.is_robot()) => {
                return Err(TableError::Invalid("give the seat token of a seated player to start".into()));
            }
            _ => {}
        }
        if self.state != TableState::Open {
            return Err(TableError::NotNow("the game has already started"));
        }
        if self.seats.iter().any(Option::is_none) {
            return Err(TableError::NotNow("four players are needed: fill the empty seats with people or robots"));
        }
        self.record(Input::StartGame);
        self.begin_game();
        self.state = TableState::Playing;
        tracing::info!(table = %self.id, name = %self.settings.name, preset = %self.settings.preset, "game started");
        self.broadcast_table(TableEvent::GameStarted);
        self.await_ready();
        Ok(())
    }

    /// The game begins with the table's options.
    fn begin_game(&mut self) {
        let game = new_game(self.settings.options.clone(), self.settings.no_special_scores);
        self.start_following(game);
    }

    /// Gives every robot the options in force (the game's, or the table's
    /// before it starts): after an option change, and after a rebuild.
    fn brief_robots(&mut self) {
        let options = self.game.as_ref().map_or(&self.settings.options, Game::options).clone();
        for (strategy, robot) in self.seats.iter_mut().flatten().filter_map(|s| s.robot.as_mut()) {
            *robot = Robot::new(*strategy, options.clone());
        }
    }

    /// Takes the game (new, or rebuilt) and follows its hands by the seated names.
    fn start_following(&mut self, game: Game) {
        self.game = Some(game);
        let names = std::array::from_fn(|i| self.seats[i].as_ref().map(|s| s.name.clone()).unwrap_or_default());
        self.projector = HandProjector::new(names);
    }

    /// Between hands (and at the start): every person must say ready.
    fn await_ready(&mut self) {
        self.waiting_ready = true;
        for s in self.seats.iter_mut().flatten() {
            s.ready = s.is_robot();
        }
        self.announce_waiting();
        self.deal_if_ready();
    }

    fn announce_waiting(&mut self) {
        let seats = self.unready();
        self.broadcast_table(TableEvent::WaitingForReady { seats });
    }

    fn unready(&self) -> Vec<u8> {
        (0..4u8)
            .filter(|&i| self.seats[i as usize].as_ref().is_some_and(|s| !s.ready && !self.robot_plays(i)))
            .collect()
    }

    /// A robot makes this seat's moves: a robot's seat, or a person's seat
    /// whose player has been away longer than the takeover delay.
    fn robot_plays(&self, seat: u8) -> bool {
        let Some(s) = &self.seats[seat as usize] else { return false };
        s.is_robot()
            || (s.connection.is_none()
                && self.settings.robot_takeover.is_some_and(|d| s.disconnected_at.is_some_and(|at| at.elapsed() >= d)))
    }

    fn deal_if_ready(&mut self) {
        if !self.waiting_ready || !self.unready().is_empty() {
            return;
        }
        self.waiting_ready = false;
        if self.paused {
            self.paused = false;
            if self.game.as_ref().is_some_and(Game::hand_in_progress) {
                self.broadcast_table(TableEvent::Resumed);
                self.restart_claim_timer();
                return;
            }
        }
        let Some(game) = &self.game else { return };
        if game.is_over() || game.hand_in_progress() {
            return;
        }
        let wall = match self.settings.first_wall.take() {
            Some(tiles) if game.hands_started() == 0 => WallSource::Tiles(tiles),
            _ => WallSource::Shuffled { seed: self.rng.next_u64() },
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

    fn connect(&mut self, token: Option<&str>, since: Option<u64>) -> Result<Connection, TableError> {
        let seat = match token {
            Some(t) => Some(self.seat_of_token(t).ok_or(TableError::BadToken)?),
            None => None,
        };
        if let Some(s) = since
            && s > self.seq
        {
            return Err(TableError::Invalid(format!("since={s} is ahead of the table's stream (at {})", self.seq)));
        }
        let id = self.next_connection;
        self.next_connection += 1;
        let (sender, outbound) = mpsc::channel(self.settings.subscriber_queue.max(16));
        // Register the connection first, so that what it is sent counts it
        // (its seat connected, or one more spectator).
        let mut was_away = false;
        if let Some(st) = seat.and_then(|s| self.seats[s as usize].as_mut()) {
            match st.connection.replace(id) {
                // The newest connection acts for the seat; the old one closes.
                Some(old) => {
                    self.subscribers.remove(&old);
                }
                None => was_away = st.disconnected_at.take().is_some(),
            }
        }
        self.subscribers.insert(id, Subscriber { seat, sender: sender.clone() });
        // What the client missed, or a snapshot when it gave no position or
        // its position is older than what is kept.
        let viewer = seat.map(PlayerId);
        let mut first: Vec<Arc<str>> = Vec::new();
        match since {
            Some(s) if s + 1 >= self.log_start => {
                for e in self.log.iter().filter(|e| e.seq > s && e.to.includes(viewer)) {
                    first.push(e.text.clone());
                }
            }
            _ => first.push(to_text(&self.snapshot(seat))),
        }
        if first.len() > sender.capacity() {
            // Too much to replay into the queue: start afresh from a snapshot.
            first.clear();
            first.push(to_text(&self.snapshot(seat)));
        }
        for text in first {
            let _ = sender.try_send(text);
        }
        if let (Some(s), true) = (seat, was_away) {
            self.broadcast_table(TableEvent::Reconnected { seat: s });
        }
        Ok(Connection { id, seat, outbound })
    }

    /// Everything `seat` (or a spectator) may see now.
    fn snapshot(&self, seat: Option<u8>) -> ServerMessage {
        let viewer = seat.map(PlayerId);
        ServerMessage::Snapshot { seat, table: self.info(), game: self.game.as_ref().map(|g| Box::new(g.view(viewer))) }
    }

    fn disconnect(&mut self, connection: u64) {
        let Some(sub) = self.subscribers.remove(&connection) else { return };
        self.seat_lost(connection, sub.seat, true);
    }

    /// A connection acting for `seat` is gone: closed by the client (`left`),
    /// or dropped by the table as too slow (the client will reconnect, so
    /// that never ends a game under `--end-on-disconnect`).
    fn seat_lost(&mut self, connection: u64, seat: Option<u8>, left: bool) {
        let Some(s) = seat else { return };
        let Some(seat_state) = self.seats[s as usize].as_mut() else { return };
        if seat_state.connection == Some(connection) {
            seat_state.connection = None;
            seat_state.disconnected_at = Some(Instant::now());
            self.broadcast_table(TableEvent::Disconnected { seat: s });
            if left && self.settings.end_on_disconnect && self.state == TableState::Playing {
                self.end_on_disconnect(s);
            }
        }
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
                let loser_after_mah_jong = hand.phase() == crate::rules::hand::Phase::MahJonging
                    && !hand.winners().contains(&s)
                    && hand.to_act() != s;
                if loser_after_mah_jong {
                    if !declared {
                        let show = crate::rules::command::Action::ShowTiles;
                        let _ = self.apply(Command::Act { player, action: show });
                    }
                } else {
                    let _ = self.apply(Command::AbandonHand);
                }
                mid_hand
            }
            None if game.next_hand_starts_round() => end_of_round,
            None => mid_round,
        };
        self.penalties[seat as usize] += penalty;
        self.seat_changed(seat);
        self.send_event(Audience::Only(player), StreamEvent::Table(TableEvent::Penalty { seat, points: penalty }));
        self.end_game_between_hands();
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
        tracing::info!(table = %self.id, penalties = ?self.penalties, "the game ended on a disconnection");
    }

    // ----- client messages -------------------------------------------------

    fn reply(&mut self, connection: u64, message: &ServerMessage) {
        let text = to_text(message);
        if let Some(sub) = self.subscribers.get(&connection)
            && sub.sender.try_send(text).is_err()
        {
            let seat = sub.seat;
            self.subscribers.remove(&connection);
            self.seat_lost(connection, seat, false);
        }
    }

    fn message(&mut self, connection: u64, message: ClientMessage) {
        let Some(seat) = self.subscribers.get(&connection).map(|s| s.seat) else { return };
        match message {
            ClientMessage::Ping => return self.reply(connection, &ServerMessage::Pong),
            ClientMessage::Snapshot => {
                let snapshot = self.snapshot(seat);
                return self.reply(connection, &snapshot);
            }
            _ => {}
        }
        let Some(seat) = seat else {
            self.reply(connection, &ServerMessage::error("not_allowed", "spectators can only watch"));
            return;
        };
        if let Err((code, why)) = self.player_message(seat, message) {
            self.reply(connection, &ServerMessage::error(code, why));
        }
    }

    fn player_message(&mut self, seat: u8, message: ClientMessage) -> Result<(), (&'static str, String)> {
        let not_now = |why: &str| Err(("not_now", why.to_string()));
        match message {
            ClientMessage::Ping | ClientMessage::Snapshot => Ok(()),
            ClientMessage::Act { action } => {
                if self.state != TableState::Playing {
                    return not_now("the game is not being played");
                }
                if self.paused {
                    return not_now("the game is paused until everyone is ready");
                }
                if self.waiting_ready {
                    return not_now("the next hand has not been dealt: say ready");
                }
                self.apply(Command::Act { player: PlayerId(seat), action }).map_err(|e| ("illegal_move", e))
            }
            ClientMessage::Ready => {
                if !self.waiting_ready {
                    return not_now("nothing is waiting for you to be ready");
                }
                if self.seats[seat as usize].as_ref().is_some_and(|s| s.ready) {
                    return Ok(()); // said twice: no harm
                }
                if let Some(s) = self.seats[seat as usize].as_mut() {
                    s.ready = true;
                }
                let left = self.unready();
                if !left.is_empty() {
                    self.broadcast_table(TableEvent::WaitingForReady { seats: left });
                }
                self.deal_if_ready();
                Ok(())
            }
            ClientMessage::RequestPause { reason } => {
                if self.state != TableState::Playing || self.waiting_ready {
                    return not_now("only a game in play can be paused");
                }
                self.paused = true;
                self.claim_deadline = None;
                let reason: String = reason.chars().take(MAX_CHAT_CHARS).collect();
                self.broadcast_table(TableEvent::Paused { seat, reason });
                self.await_ready();
                Ok(())
            }
            ClientMessage::SetPause { deciseconds } => {
                if deciseconds > MAX_PAUSE_DECISECONDS {
                    return Err(("bad_message", format!("the pause is at most {MAX_PAUSE_DECISECONDS} deciseconds")));
                }
                let before = self.pause();
                if let Some(s) = self.seats[seat as usize].as_mut() {
                    s.pause_request = deciseconds;
                }
                self.seat_changed(seat);
                if self.pause() != before {
                    self.broadcast_table(TableEvent::PauseChanged { deciseconds: self.pause() });
                }
                Ok(())
            }
            ClientMessage::SetOption { name, value } => {
                if self.settings.no_manager || self.manager != Some(seat) {
                    return Err(("not_allowed", "only the game manager may change options".into()));
                }
                let changed = match &mut self.game {
                    None => self.settings.options.set_checked(&name, &value),
                    Some(game) => game.set_option(&name, &value),
                };
                changed.map_err(|e| ("bad_option", e.to_string()))?;
                self.record(Input::SetOption { name: name.clone(), value: value.clone() });
                self.brief_robots();
                self.broadcast_table(TableEvent::OptionChanged { name, value });
                Ok(())
            }
            ClientMessage::Chat { text } => {
                let text = text.trim();
                if text.is_empty() || text.chars().count() > MAX_CHAT_CHARS {
                    return Err(("bad_message", format!("a chat message has 1 to {MAX_CHAT_CHARS} characters")));
                }
                let name = self.seats[seat as usize].as_ref().map(|s| s.name.clone()).unwrap_or_default();
                self.broadcast_table(TableEvent::Chat { seat, name, text: text.to_string() });
                Ok(())
            }
        }
    }

    // ----- the game ----------------------------------------------------------

    /// Applies a command to the game and sends out what it caused. Returns the
    /// engine's refusal as text.
    fn apply(&mut self, command: Command) -> Result<(), String> {
        let Some(game) = self.game.as_mut() else { return Err("the game has not started".into()) };
        let starts_hand = matches!(command, Command::StartHand { .. });
        let emitted = game.apply(command.clone()).map_err(|e| e.to_string())?;
        let finished_hand = !game.hand_in_progress();
        let over = game.is_over();
        self.record(Input::Engine { command });
        self.last_action = Instant::now();
        if starts_hand {
            self.trim_log();
        }
        for e in emitted {
            self.broadcast(e);
        }
        self.restart_claim_timer();
        if over {
            self.game_over();
        } else if finished_hand && !starts_hand && self.end_after_hand {
            self.end_game_between_hands();
        } else if finished_hand && !starts_hand {
            self.await_ready();
        }
        Ok(())
    }

    /// Keeps the log from the start of the previous hand on.
    fn trim_log(&mut self) {
        // `log_start` moves to where the hand now ending began.
        let keep_from = self.hand_started_seq;
        while self.log.front().is_some_and(|e| e.seq < keep_from) {
            self.log.pop_front();
        }
        self.log_start = keep_from.max(1);
        self.hand_started_seq = self.seq + 1;
    }

    /// Starts the claim timer when a new discard or kong opens for claims.
    fn restart_claim_timer(&mut self) {
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
        let timeout = options.timeout + options.timeout_grace;
        let serial = hand.serial();
        if self.claim_deadline.is_none_or(|(s, _)| s != serial) {
            self.claim_deadline = Some((serial, Instant::now() + Duration::from_secs(u64::from(timeout))));
        }
    }

    fn next_deadline(&self) -> Option<Instant> {
        let claim = self.claim_deadline.map(|(_, at)| at);
        let robot = self.robot_due().map(|_| self.last_action + self.pause_duration());
        let takeover = self.next_takeover();
        [claim, robot, takeover, self.close_at].into_iter().flatten().min()
    }

    fn pause_duration(&self) -> Duration {
        Duration::from_millis(u64::from(self.pause()) * 100)
    }

    /// When a disconnected player's seat will be taken over by a robot.
    fn next_takeover(&self) -> Option<Instant> {
        let delay = self.settings.robot_takeover?;
        self.seats
            .iter()
            .flatten()
            .filter(|s| s.connection.is_none() && !s.is_robot())
            .filter_map(|s| s.disconnected_at.map(|at| at + delay))
            .filter(|&at| at > Instant::now())
            .min()
    }

    fn on_timer(&mut self) {
        if let Some((serial, at)) = self.claim_deadline
            && at <= Instant::now()
        {
            self.claim_deadline = None;
            let open =
                self.game.as_ref().and_then(Game::hand).is_some_and(|h| h.claim_window_open() && h.serial() == serial);
            if open {
                let _ = self.apply(Command::ClaimTimeout);
            }
        }
        // A robot may now stand in for a player who has been away long enough.
        if self.waiting_ready {
            self.deal_if_ready();
        }
    }

    /// The first seat (in id order) a robot must move for, and the move.
    fn robot_due(&self) -> Option<u8> {
        if self.paused || self.waiting_ready || self.state != TableState::Playing {
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
        for _ in 0..ROBOT_BURST {
            let Some(seat) = self.robot_due() else { return };
            if self.last_action + self.pause_duration() > Instant::now() {
                return; // the timer will come back for it
            }
            let Some(game) = &self.game else { return };
            let view = game.view(Some(PlayerId(seat)));
            let decide = |s: &Seat| match &s.robot {
                Some((_, robot)) => robot.decide(&view),
                None => Robot::new(Strategy::default(), game.options().clone()).decide(&view),
            };
            let outcome = match self.seats[seat as usize].as_ref().and_then(decide) {
                Some(action) => self.apply(Command::Act { player: PlayerId(seat), action }),
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

    fn broadcast_table(&mut self, event: TableEvent) {
        self.send_event(Audience::Everyone, StreamEvent::Table(event));
    }

    fn broadcast(&mut self, emitted: Emitted) {
        let at_us = now_us();
        if let Some(hand) = self.projector.observe(self.seq as i64 + 1, at_us as i64, &emitted.event) {
            self.pending.hands.push(hand);
        }
        self.send_event_at(emitted.to, StreamEvent::Game(emitted.event), at_us);
    }

    fn send_event(&mut self, to: Audience, event: StreamEvent) {
        self.send_event_at(to, event, now_us());
    }

    /// Numbers an event and queues it for the store; it is sent once stored.
    fn send_event_at(&mut self, to: Audience, event: StreamEvent, at_us: u64) {
        self.seq += 1;
        let message = ServerMessage::Event { seq: self.seq, at_us, event };
        let text = to_text(&message);
        self.log.push_back(Logged { seq: self.seq, to, text: text.clone() });
        self.pending.events.push(EventRow {
            seq: self.seq as i64,
            at_us: at_us as i64,
            hand: self.hand_number(),
            audience: to,
            body: text.to_string(),
        });
        self.pending.outbox.push((to, text));
    }

    /// The hand being played or just played (0 before the first deal).
    fn hand_number(&self) -> i64 {
        self.game.as_ref().map_or(0, |g| i64::from(g.hands_started()))
    }

    /// Records an input the game accepted, for rebuilding the game.
    fn record(&mut self, input: Input) {
        self.inputs += 1;
        let seq = self.seq as i64;
        self.pending.inputs.push(InputRow { n: self.inputs, seq, input });
    }

    fn game_over(&mut self) {
        if self.state != TableState::Over {
            let scores = self.game.as_ref().map_or([0; 4], Game::scores);
            tracing::info!(table = %self.id, name = %self.settings.name, preset = %self.settings.preset, ?scores, "game over");
        }
        self.state = TableState::Over;
        self.finished_us.get_or_insert_with(crate::store::now_us);
    }

    /// The game row as it now stands.
    fn game_row(&self) -> GameRow {
        GameRow {
            name: self.settings.name.clone(),
            preset: self.settings.preset.clone(),
            source: self.source.to_string(),
            state: self.state.as_str().to_string(),
            created_us: self.created_us,
            finished_us: self.finished_us,
            hands: self.hand_number(),
            scores: self.game.as_ref().map_or([0; 4], Game::scores),
            manager: self.manager.map(i64::from),
            last_seq: self.seq as i64,
            rng_pos: self.rng.get_word_pos(),
        }
    }

    /// Writes what is pending to the store, then sends its events. On a
    /// store failure nothing is sent and the error is returned (the table
    /// then stops).
    async fn flush(&mut self) -> Result<(), StoreError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let pending = std::mem::take(&mut self.pending);
        let mut batch = Batch::new(self.id.clone(), self.game_row());
        if self.settings_unwritten {
            batch.settings = Some(serde_json::to_string(&self.settings).unwrap_or_default());
        }
        batch.seats = pending.seats;
        batch.inputs = pending.inputs;
        batch.events = pending.events;
        batch.hands = pending.hands;
        self.store.write(batch).await?;
        self.settings_unwritten = false;
        let mut lagging = Vec::new();
        for (to, text) in pending.outbox {
            for (&id, sub) in &self.subscribers {
                if to.includes(sub.seat.map(PlayerId)) && sub.sender.try_send(text.clone()).is_err() {
                    lagging.push((id, sub.seat));
                }
            }
            for (id, seat) in lagging.drain(..) {
                // Too slow (or gone): drop it; it reconnects for a fresh snapshot.
                self.subscribers.remove(&id);
                self.seat_lost(id, seat, false);
            }
        }
        // Dropping a subscriber may itself have produced events.
        if !self.pending.is_empty() {
            return Box::pin(self.flush()).await;
        }
        Ok(())
    }
}

fn to_text(message: &ServerMessage) -> Arc<str> {
    // Our own types always serialise.
    serde_json::to_string(message).unwrap_or_default().into()
}

fn now_us() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_micros() as u64)
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Rebuilds a table from its stored game and starts it. The game is replayed
/// input by input through the engine (and checked against the stored
/// scores); the seats, the manager, the random stream and the event stream's
/// position come back, with the recent events for clients that resume. The
/// players are away until they reconnect with their seat tokens; a game in
/// play waits, paused, until every person is ready again.
pub async fn recover(saved: SavedGame, store: Store) -> Result<TableHandle, String> {
    let bad = |why: String| format!("game {}: {why}", saved.id);
    let settings: TableSettings = serde_json::from_str(&saved.settings).map_err(|e| bad(format!("settings: {e}")))?;
    let mut actor = Actor::new(saved.id.clone(), settings, store);
    actor.settings_unwritten = false;
    actor.pending = Pending::default();
    actor.source = match saved.game.source.as_str() {
        "loaded" => "loaded",
        "mj-server" => "mj-server",
        _ => "live",
    };
    actor.created_us = saved.game.created_us;
    actor.finished_us = saved.game.finished_us;
    actor.manager = saved.game.manager.and_then(|m| u8::try_from(m).ok());
    actor.state = TableState::from_name(&saved.game.state).ok_or_else(|| bad("unknown state".into()))?;
    for row in &saved.seats {
        let seat = usize::try_from(row.seat).ok().filter(|&s| s < 4).ok_or_else(|| bad("bad seat".into()))?;
        let robot = match &row.robot {
            Some(json) => {
                let strategy: Strategy = serde_json::from_str(json).map_err(|e| bad(format!("robot: {e}")))?;
                Some((strategy, Robot::new(strategy, actor.settings.options.clone())))
            }
            None => None,
        };
        let person = robot.is_none();
        actor.seats[seat] = Some(Seat {
            name: row.name.clone(),
            token_sha256: row.token_sha256.clone(),
            robot,
            connection: None,
            disconnected_at: person.then(Instant::now),
            ready: !person,
            pause_request: u32::try_from(row.pause_request).unwrap_or(0),
        });
        actor.penalties[seat] = row.penalty;
    }
    // The game, input by input.
    let mut rebuild = Rebuild::new(&actor.settings);
    for row in &saved.inputs {
        rebuild.apply(&row.input).map_err(|e| bad(format!("input {}: {e}", row.n)))?;
        actor.inputs += 1;
    }
    actor.settings.options = rebuild.options;
    if let Some(game) = rebuild.game {
        actor.start_following(game);
    }
    if let Some(game) = &actor.game {
        if game.scores() != saved.game.scores || i64::from(game.hands_started()) != saved.game.hands {
            return Err(bad(format!(
                "replaying the inputs gives scores {:?} after {} hands; the store says {:?} after {}",
                game.scores(),
                game.hands_started(),
                saved.game.scores,
                saved.game.hands
            )));
        }
        actor.projector.set_totals(game.scores());
        if game.hands_started() > 0 {
            actor.settings.first_wall = None;
        }
    }
    actor.brief_robots();
    actor.rng.set_word_pos(saved.game.rng_pos);
    // The stream: its position, and the recent events for resuming.
    actor.seq = u64::try_from(saved.game.last_seq).unwrap_or(0);
    let current = actor.hand_number();
    actor.log_start = saved.events.first().map_or(actor.seq + 1, |e| e.seq as u64);
    actor.hand_started_seq = saved.events.iter().find(|e| e.hand == current).map_or(actor.seq + 1, |e| e.seq as u64);
    let in_progress = actor.game.as_ref().is_some_and(Game::hand_in_progress);
    for e in &saved.events {
        actor.log.push_back(Logged { seq: e.seq as u64, to: e.audience, text: e.body.as_str().into() });
        // The hand being played is followed again, for its row when it ends.
        if in_progress
            && e.hand == current
            && let Ok(ServerMessage::Event { event: StreamEvent::Game(event), .. }) = serde_json::from_str(&e.body)
        {
            let _ = actor.projector.observe(e.seq, e.at_us, &event);
        }
    }
    if actor.state == TableState::Playing {
        actor.paused = in_progress;
        actor.await_ready();
    }
    actor.flush().await.map_err(|e| bad(e.to_string()))?;
    tracing::info!(table = %actor.id, hands = current, seq = actor.seq, "table recovered");
    Ok(start_task(actor))
}
