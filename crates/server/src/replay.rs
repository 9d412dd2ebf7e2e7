//! Conformance replay: plays a game recorded by the reference mj-server
//! through our engine and reports our engine's scores and settlements.
//!
//! The replay takes from the log only what the players did and what they
//! drew: the options and seating announced at the start, each hand's live
//! and loose tiles in the order they were drawn (from which the wall is
//! rebuilt), and every request the players sent. Scores, settlements,
//! wash-outs and the rotation of the deal all come from our engine. As a
//! check, every tile our engine deals out must be the tile the reference
//! dealt at that point.

use std::collections::{BTreeMap, HashMap, VecDeque};

use serde::Serialize;

use crate::protocol::classic::MoveContext;
use crate::protocol::{ControllerMessage, Direction, LogError, LogMessage, LogRecord, PlayerMessage, read_log};
use crate::rules::option_file::OptionLine;
use crate::rules::options::GameOptions;
use crate::rules::rebuild::Input;
use crate::rules::{Action, Command, Emitted, Event, Game, GameError, PlayerId, Tile, WallSource, hand::Phase};

/// One hand as our engine played and scored it, keyed by the log's player ids.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ReplayedHand {
    /// 1-based hand number.
    pub hand: u32,
    /// True if the hand was washed out.
    pub washout: bool,
    /// The winner's id.
    pub winner: Option<i32>,
    /// Each player's hand score (empty for a wash-out).
    pub scores: BTreeMap<String, i64>,
    /// Each player's change of score.
    pub settlement: BTreeMap<String, i64>,
    /// Each player's scoring breakdown (not printed; for comparisons).
    #[serde(skip)]
    pub score_lines: BTreeMap<String, Vec<String>>,
    /// The settlement text (not printed; for comparisons).
    #[serde(skip)]
    pub settlement_lines: Vec<String>,
}

/// A whole replayed game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replay {
    /// The hands in order.
    pub hands: Vec<ReplayedHand>,
    /// Final cumulative scores by id.
    pub final_scores: BTreeMap<String, i64>,
}

impl Replay {
    /// The replay's output: one JSON object per hand, then the final scores.
    pub fn to_json_lines(&self) -> String {
        let mut out = String::new();
        for h in &self.hands {
            out.push_str(&serde_json::to_string(h).unwrap_or_default());
            out.push('\n');
        }
        out.push_str(&serde_json::json!({ "final": self.final_scores }).to_string());
        out.push('\n');
        out
    }
}

/// Why a replay stopped.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The log could not be read.
    #[error(transparent)]
    Log(#[from] LogError),
    /// The log lacks something a replay needs.
    #[error("{0}")]
    Setup(String),
    /// Our engine refused a logged action.
    #[error("line {line}: {request:?} refused by our engine: {error}")]
    Illegal {
        /// The log line of the request.
        line: usize,
        /// The request as logged.
        request: String,
        /// The engine's reason.
        error: GameError,
    },
    /// Our engine diverged from the reference.
    #[error("line {line}: {what}")]
    Diverged {
        /// The log line where it showed.
        line: usize,
        /// What differed.
        what: String,
    },
}

/// A draw the reference logged: who drew which tile, and whether it was loose.
struct LoggedDraw {
    id: i32,
    tile: Tile,
    loose: bool,
    line: usize,
}

/// A dangerous discard the reference announced: discarder, serial, no choice.
struct LoggedDanger {
    id: i32,
    discard: u32,
    no_choice: bool,
    line: usize,
}

/// What a replay fed our engine and what the engine said back: enough to
/// store the game as if it had been played here (`game_file::mj_server`). The
/// capture only watches; the replay checks the same things with or without it.
#[derive(Clone, Debug)]
pub struct Capture {
    /// The players' names by our player id (from the log's `Player` messages).
    pub names: [String; 4],
    /// The options announced at the start: the game's options.
    pub options: GameOptions,
    /// The inputs in order (`StartGame`, then every engine command the
    /// replay applied), each with the events the engine emitted for it.
    pub steps: Vec<(Input, Vec<Emitted>)>,
    /// Our engine's game at the end of the log.
    pub game: Game,
}

/// Replays a reference game log.
pub fn replay_log(text: &str) -> Result<Replay, ReplayError> {
    replay(text, false).map(|(replay, _)| replay)
}

/// Replays a reference game log and captures every command applied and
/// every event emitted (see [`Capture`]).
pub fn replay_log_captured(text: &str) -> Result<(Replay, Capture), ReplayError> {
    let (replay, capture) = replay(text, true)?;
    let capture = capture.ok_or_else(|| ReplayError::Setup("the log has no hand".into()))?;
    Ok((replay, capture))
}

fn replay(text: &str, capture: bool) -> Result<(Replay, Option<Capture>), ReplayError> {
    let records = read_log(text)?;
    let setup = Setup::read(&records)?;
    let mut driver = Driver {
        setup,
        game: None,
        hands: Vec::new(),
        expected_draws: VecDeque::new(),
        expected_dangers: VecDeque::new(),
        current: None,
        steps: capture.then(|| vec![(Input::StartGame, Vec::new())]),
    };
    driver.run(&records)?;
    let game = driver.game.as_ref().ok_or_else(|| ReplayError::Setup("the log has no hand".into()))?;
    let final_scores = driver.by_id(game.scores());
    let capture = driver.steps.take().map(|steps| Capture {
        names: std::array::from_fn(|p| {
            let id = driver.setup.ids[p];
            driver.setup.names.get(&id).cloned().unwrap_or_else(|| format!("Player {id}"))
        }),
        options: driver.setup.options.clone(),
        steps,
        game: game.clone(),
    });
    Ok((Replay { hands: driver.hands, final_scores }, capture))
}

/// What a replay needs before the first hand.
struct Setup {
    /// Log id of each player id (the seating cycle from the `Game` message).
    ids: [i32; 4],
    /// Log id of each connection.
    cnx_ids: HashMap<u32, i32>,
    /// Each log id's name, as the reference announced it.
    names: HashMap<i32, String>,
    options: GameOptions,
    /// The index of the record that ends the opening option list (`End`):
    /// options told after it are changes.
    options_end: usize,
}

impl Setup {
    fn read(records: &[LogRecord]) -> Result<Setup, ReplayError> {
        let mut cnx_ids = HashMap::new();
        let mut names = HashMap::new();
        for r in records {
            match &r.message {
                LogMessage::Controller(ControllerMessage::ConnectReply { id, .. }) if *id != 0 => {
                    cnx_ids.insert(r.connection, *id);
                }
                LogMessage::Controller(ControllerMessage::Player { id, name }) => {
                    names.entry(*id).or_insert_with(|| name.clone());
                }
                _ => {}
            }
        }
        let (game_at, ids) = records
            .iter()
            .enumerate()
            .find_map(|(i, r)| match &r.message {
                LogMessage::Controller(ControllerMessage::Game { east, south, west, north, .. }) => {
                    Some((i, [*east, *south, *west, *north]))
                }
                _ => None,
            })
            .ok_or_else(|| ReplayError::Setup("the log has no Game message".into()))?;
        // The option list follows the first Game message on the same connection.
        let cnx = records[game_at].connection;
        let mut options = GameOptions::default();
        let mut options_end = records.len();
        for (i, r) in records.iter().enumerate().skip(game_at + 1) {
            if r.connection != cnx || r.direction != Direction::Sent {
                continue;
            }
            let LogMessage::Controller(ControllerMessage::GameOption { optentry, .. }) = &r.message else { continue };
            if optentry.name == "End" {
                options_end = i;
                break;
            }
            let line = OptionLine {
                name: optentry.name.clone(),
                kind: optentry.option_type.clone(),
                min_protocol: optentry.protversion.max(0) as u32,
                value: optentry.value.clone(),
                description: optentry.desc.clone(),
            };
            options
                .apply_line(&line)
                .map_err(|e| ReplayError::Setup(format!("line {}: option {}: {e}", r.line, optentry.name)))?;
        }
        Ok(Setup { ids, cnx_ids, names, options, options_end })
    }

    fn player(&self, id: i32) -> Option<PlayerId> {
        self.ids.iter().position(|&i| i == id).map(|p| PlayerId(p as u8))
    }
}

struct Driver {
    setup: Setup,
    game: Option<Game>,
    hands: Vec<ReplayedHand>,
    expected_draws: VecDeque<LoggedDraw>,
    expected_dangers: VecDeque<LoggedDanger>,
    current: Option<ReplayedHand>,
    /// The capture's inputs and events, when capturing.
    steps: Option<Vec<(Input, Vec<Emitted>)>>,
}

impl Driver {
    /// Records a command our engine accepted, when capturing.
    fn captured(&mut self, command: Command, events: &[Emitted]) {
        if let Some(steps) = self.steps.as_mut() {
            steps.push((Input::Engine { command }, events.to_vec()));
        }
    }

    fn by_id(&self, values: [i64; 4]) -> BTreeMap<String, i64> {
        (0..4).map(|p| (self.setup.ids[p].to_string(), values[p])).collect()
    }

    fn run(&mut self, records: &[LogRecord]) -> Result<(), ReplayError> {
        for (i, r) in records.iter().enumerate() {
            match (&r.direction, &r.message) {
                (Direction::Sent, LogMessage::Controller(ControllerMessage::NewHand { east, .. })) => {
                    self.start_hand(records, i, *east)?;
                }
                (Direction::Received, LogMessage::Player(m)) => {
                    let refused_by_reference = reference_refused(records, i);
                    self.request(r, m, refused_by_reference)?
                }
                // The reference passed for players who let the claim window
                // time out; it tells each of them with timeout set.
                (
                    Direction::Sent,
                    LogMessage::Controller(ControllerMessage::PlayerDoesntClaim { timeout: true, discard, .. }),
                ) => self.timeout(r, *discard)?,
                // A hand our engine is still playing was washed out by the
                // table (a player left for good): it is abandoned.
                (Direction::Sent, LogMessage::Controller(ControllerMessage::WashOut { .. }))
                    if self.game.as_ref().is_some_and(Game::hand_in_progress) =>
                {
                    self.abandon(r)?
                }
                // An option changed after the opening list (the manager, between
                // hands): told to every connection, applied once.
                (Direction::Sent, LogMessage::Controller(ControllerMessage::GameOption { optentry, .. }))
                    if i > self.setup.options_end && optentry.name != "End" =>
                {
                    self.option_changed(r, &optentry.name, &optentry.value)?
                }
                _ => {}
            }
        }
        if self.current.is_some() {
            return Err(ReplayError::Setup("the log ends in the middle of a hand".into()));
        }
        Ok(())
    }

    fn start_hand(&mut self, records: &[LogRecord], at: usize, east_id: i32) -> Result<(), ReplayError> {
        let line = records[at].line;
        if self.current.is_some() {
            return Err(ReplayError::Diverged {
                line,
                what: "the reference started a new hand; ours is not over".into(),
            });
        }
        let game = self.game.get_or_insert_with(|| Game::new(self.setup.options.clone()));
        if game.is_over() {
            return Err(ReplayError::Diverged {
                line,
                what: "the reference started a new hand; our game is over".into(),
            });
        }
        let our_east = self.setup.ids[game.east().index()];
        if our_east != east_id {
            return Err(ReplayError::Diverged {
                line,
                what: format!("the reference's East is player {east_id}, ours is {our_east}"),
            });
        }
        // This hand's draws and dangerous discards, up to the next hand.
        self.expected_draws.clear();
        self.expected_dangers.clear();
        for r in records[at + 1..].iter() {
            match &r.message {
                LogMessage::Controller(ControllerMessage::NewHand { .. }) => break,
                LogMessage::Controller(ControllerMessage::PlayerDraws { id, tile: Some(t) }) => {
                    self.expected_draws.push_back(LoggedDraw { id: *id, tile: *t, loose: false, line: r.line })
                }
                LogMessage::Controller(ControllerMessage::PlayerDrawsLoose { id, tile: Some(t) }) => {
                    self.expected_draws.push_back(LoggedDraw { id: *id, tile: *t, loose: true, line: r.line })
                }
                LogMessage::Controller(ControllerMessage::DangerousDiscard { id, discard, nochoice }) => {
                    self.expected_dangers.push_back(LoggedDanger {
                        id: *id,
                        discard: (*discard).max(0) as u32,
                        no_choice: *nochoice,
                        line: r.line,
                    })
                }
                _ => {}
            }
        }
        let wall = rebuild_wall(&self.setup.options, &self.expected_draws)
            .map_err(|what| ReplayError::Diverged { line, what })?;
        let hand_no = game.hands_started() + 1;
        self.current = Some(ReplayedHand {
            hand: hand_no,
            washout: false,
            winner: None,
            scores: BTreeMap::new(),
            settlement: BTreeMap::new(),
            score_lines: BTreeMap::new(),
            settlement_lines: Vec::new(),
        });
        let command = Command::StartHand { dice: None, wall: WallSource::Tiles(wall) };
        let events = self
            .game
            .as_mut()
            .map(|g| g.apply(command.clone()))
            .transpose()
            .map_err(|e| ReplayError::Setup(format!("line {line}: cannot deal: {e}")))?
            .unwrap_or_default();
        self.captured(command, &events);
        self.absorb(&events, line)
    }

    fn request(&mut self, r: &LogRecord, m: &PlayerMessage, refused_by_reference: bool) -> Result<(), ReplayError> {
        let Some(game) = self.game.as_mut() else { return Ok(()) };
        let Some(hand) = game.hand() else { return Ok(()) };
        if !game.hand_in_progress() {
            return Ok(());
        }
        let Some(id) = self.setup.cnx_ids.get(&r.connection).copied() else {
            return Err(ReplayError::Setup(format!("line {}: connection {} has no player id", r.line, r.connection)));
        };
        let player = self
            .setup
            .player(id)
            .ok_or_else(|| ReplayError::Setup(format!("line {}: player {id} is not seated", r.line)))?;
        let Some(action) = to_action(m, hand) else { return Ok(()) };
        let is_pass = matches!(action, Action::Pass { .. });
        let command = Command::Act { player, action };
        let events = match game.apply(command.clone()) {
            Ok(_) if refused_by_reference => {
                return Err(ReplayError::Diverged {
                    line: r.line,
                    what: format!("the reference refused {:?}; our engine accepted it", r.raw),
                });
            }
            Ok(events) => events,
            // The reference refused it too (and changed nothing): go on.
            Err(_) if refused_by_reference => return Ok(()),
            // mj-server ignores a pass that comes after its discard is
            // decided; a pass cannot change anything, so neither do we.
            Err(GameError::StaleDiscard { .. } | GameError::Illegal("there is no discard or kong to claim"))
                if is_pass =>
            {
                return Ok(());
            }
            Err(error) => return Err(ReplayError::Illegal { line: r.line, request: r.raw.clone(), error }),
        };
        self.captured(command, &events);
        self.absorb(&events, r.line)
    }

    fn abandon(&mut self, r: &LogRecord) -> Result<(), ReplayError> {
        let Some(game) = self.game.as_mut() else { return Ok(()) };
        let events = game
            .apply(Command::AbandonHand)
            .map_err(|e| ReplayError::Diverged { line: r.line, what: format!("cannot wash the hand out: {e}") })?;
        // The hand's remaining draws were never made.
        self.expected_draws.clear();
        self.captured(Command::AbandonHand, &events);
        self.absorb(&events, r.line)
    }

    fn option_changed(&mut self, r: &LogRecord, name: &str, value: &str) -> Result<(), ReplayError> {
        let refused = |e: crate::rules::options::OptionError| ReplayError::Setup(format!("line {}: {e}", r.line));
        let current = match &self.game {
            Some(game) => game.options(),
            None => &self.setup.options,
        };
        let mut changed = current.clone();
        changed.set_checked(name, value).map_err(refused)?;
        if changed == *current {
            // Every connection is told (and told the whole list again when
            // it reconnects): the first telling changed it.
            return Ok(());
        }
        match self.game.as_mut() {
            // Before the first hand the game starts with it.
            None => self.setup.options.set_checked(name, value).map_err(refused),
            Some(game) => {
                game.set_option(name, value).map_err(refused)?;
                if let Some(steps) = self.steps.as_mut() {
                    steps.push((Input::SetOption { name: name.into(), value: value.into() }, Vec::new()));
                }
                Ok(())
            }
        }
    }

    fn timeout(&mut self, r: &LogRecord, discard: i32) -> Result<(), ReplayError> {
        let Some(game) = self.game.as_mut() else { return Ok(()) };
        let open = game.hand().is_some_and(|h| h.claim_window_open() && h.serial() as i32 == discard);
        if !open {
            return Ok(()); // the first timeout notice already closed the window
        }
        let events = game
            .apply(Command::ClaimTimeout)
            .map_err(|e| ReplayError::Diverged { line: r.line, what: format!("cannot time out the claims: {e}") })?;
        self.captured(Command::ClaimTimeout, &events);
        self.absorb(&events, r.line)
    }

    /// Checks our engine's draws against the reference's and records the
    /// hand's results.
    fn absorb(&mut self, events: &[Emitted], line: usize) -> Result<(), ReplayError> {
        for e in events {
            match &e.event {
                Event::Drew { player, tile: Some(t), loose, .. } => {
                    let id = self.setup.ids[player.index()];
                    let Some(want) = self.expected_draws.pop_front() else {
                        return Err(ReplayError::Diverged {
                            line,
                            what: format!("our engine drew {t} for player {id}; the reference drew no more tiles"),
                        });
                    };
                    if (want.id, want.tile, want.loose) != (id, *t, *loose) {
                        return Err(ReplayError::Diverged {
                            line: want.line,
                            what: format!(
                                "the reference gave {} a {}tile {}; our engine gave {id} a {}tile {t}",
                                want.id,
                                if want.loose { "loose " } else { "" },
                                want.tile,
                                if *loose { "loose " } else { "" },
                            ),
                        });
                    }
                }
                Event::DangerousDiscard { player, discard, no_choice } => {
                    let id = self.setup.ids[player.index()];
                    let ours = format!("player {id}'s discard {discard} (no choice: {no_choice})");
                    let Some(want) = self.expected_dangers.pop_front() else {
                        return Err(ReplayError::Diverged {
                            line,
                            what: format!("our engine found {ours} dangerous; the reference did not"),
                        });
                    };
                    if (want.id, want.discard, want.no_choice) != (id, *discard, *no_choice) {
                        return Err(ReplayError::Diverged {
                            line: want.line,
                            what: format!(
                                "the reference found player {}'s discard {} dangerous (no choice: {}); ours found {ours}",
                                want.id, want.discard, want.no_choice
                            ),
                        });
                    }
                }
                Event::HandScored { player, score } => {
                    let id = self.setup.ids[player.index()].to_string();
                    if let Some(h) = self.current.as_mut() {
                        h.scores.insert(id.clone(), score.score);
                        h.score_lines.insert(id, score.lines().map(str::to_string).collect());
                    }
                }
                Event::Settled { settlement, deltas, .. } => {
                    let winner = self.game.as_ref().and_then(|g| g.hand()).and_then(|h| match h.outcome() {
                        Some(crate::rules::hand::Outcome::Won { winner, .. }) => Some(h.player_at(*winner)),
                        _ => None,
                    });
                    let by_id = self.by_id(*deltas);
                    if let Some(mut h) = self.current.take() {
                        h.winner = winner.map(|p| self.setup.ids[p.index()]);
                        h.settlement = by_id;
                        h.settlement_lines = settlement.lines.clone();
                        self.finish_hand(h, line)?;
                    }
                }
                Event::WashedOut { .. } => {
                    if let Some(mut h) = self.current.take() {
                        h.washout = true;
                        h.settlement = self.by_id([0; 4]);
                        self.finish_hand(h, line)?;
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn finish_hand(&mut self, h: ReplayedHand, line: usize) -> Result<(), ReplayError> {
        if let Some(d) = self.expected_dangers.front() {
            return Err(ReplayError::Diverged {
                line: d.line,
                what: format!(
                    "the reference found player {}'s discard {} dangerous; our engine did not",
                    d.id, d.discard
                ),
            });
        }
        if let Some(d) = self.expected_draws.front() {
            return Err(ReplayError::Diverged {
                line,
                what: format!(
                    "our hand ended but the reference went on to deal {} to player {} (line {})",
                    d.tile, d.id, d.line
                ),
            });
        }
        self.hands.push(h);
        Ok(())
    }
}

/// True if the reference refused the request at `at`: mj-server answers a
/// refused request at once with an `Error` to the requester, so that is the
/// first message the requester's connection receives after it.
fn reference_refused(records: &[LogRecord], at: usize) -> bool {
    let cnx = records[at].connection;
    records[at + 1..].iter().find(|r| r.connection == cnx).is_some_and(|r| {
        r.direction == Direction::Sent && matches!(r.message, LogMessage::Controller(ControllerMessage::Error { .. }))
    })
}

/// Rebuilds a hand's wall from the tiles drawn: live tiles from the front,
/// loose tiles from the back, and the tiles never drawn in between.
fn rebuild_wall(options: &GameOptions, draws: &VecDeque<LoggedDraw>) -> Result<Vec<Tile>, String> {
    let mut rest = crate::rules::tile::TileCounts::full_set(options.flowers, options.animals);
    let size = rest.total();
    let live: Vec<Tile> = draws.iter().filter(|d| !d.loose).map(|d| d.tile).collect();
    let loose: Vec<Tile> = draws.iter().filter(|d| d.loose).map(|d| d.tile).collect();
    if live.len() + loose.len() > size {
        return Err(format!("{} tiles were drawn from a wall of {size}", live.len() + loose.len()));
    }
    for &t in live.iter().chain(&loose) {
        if !rest.remove(t) {
            return Err(format!("tile {t} was drawn more often than the tile set holds"));
        }
    }
    let mut wall = live;
    for t in Tile::all_faces() {
        for _ in 0..rest.get(t) {
            wall.push(t);
        }
    }
    wall.extend(loose.iter().rev());
    Ok(wall)
}

/// Turns a logged request into our engine's action, reading the classic
/// message in the light of the hand's state as mj-server does (`Chow`,
/// `Pung` and `MahJong` mean different things at different moments).
/// Requests that are not moves (Ready, option queries...) give `None`.
pub fn to_action(m: &PlayerMessage, hand: &crate::rules::hand::Hand) -> Option<Action> {
    m.to_action(MoveContext {
        mah_jonging: hand.phase() == Phase::MahJonging,
        chow_position_pending: hand.chow_position_pending(),
        claim_window_open: hand.claim_window_open(),
    })
}
