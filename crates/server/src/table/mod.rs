//! Tables: one tokio task per table owns its game, its seats, its timers and
//! its subscribers (see [`actor`]). Everything else talks to a table through
//! its [`TableHandle`]: a bounded command channel, with a oneshot reply where
//! an answer is needed. [`Lobby`] is the registry of tables.

pub mod actor;
pub mod lobby;
mod prompt;
pub mod record;
pub mod recovery;
pub mod rulebook;
pub mod seats;
pub mod setup;
pub mod stream;
#[cfg(test)]
mod tests;

use tokio::sync::{mpsc, oneshot};

use crate::bots::strategy::Strategy;
use crate::limits::{HandsPayer, Limits, Permit, Rate};
use crate::protocol::ws::{ClientMessage, TableInfo, WsErrorCode};
use crate::rules::options::GameOptions;
use crate::rules::tile::Tile;

pub use actor::spectator_answer;
pub use lobby::Lobby;
pub use rulebook::{Rulebook, Rules};
pub use setup::{NewTable, TableDefaults};

/// Commands waiting for a table beyond this many make senders wait.
pub const COMMAND_QUEUE: usize = 256;

/// How a table is set up (stored with its game, as JSON).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct TableSettings {
    /// The table's name, shown in the lobby.
    pub name: String,
    /// The preset the options started from.
    pub preset: String,
    /// The game options.
    pub options: GameOptions,
    /// Seeds the walls, the dice and random seating: the same seed deals the
    /// same walls.
    pub seed: u64,
    /// The first hand's wall (mj-server's `--wallfile`).
    pub first_wall: Option<Vec<Tile>>,
    /// The least pause between actions, in tenths of a second (`--pause`).
    pub pause_deciseconds: u32,
    /// Seat players who do not choose a seat at random (`--random-seats`);
    /// otherwise in the lowest free seat.
    pub random_seats: bool,
    /// Nobody manages the game (`--no-manager`).
    pub no_manager: bool,
    /// Flowers and seasons score nothing (`--no-special-scores`).
    pub no_special_scores: bool,
    /// After a player has been disconnected this long, a robot plays the seat
    /// until the player returns (`None`: the seat waits).
    pub robot_takeover: Option<std::time::Duration>,
    /// A disconnection ends the game gracefully (`--end-on-disconnect`).
    pub end_on_disconnect: bool,
    /// The penalties for leaving mid-hand, between hands of a round, and
    /// between rounds (`--disconnect-penalties N1,N2,N3`).
    pub disconnect_penalties: [i64; 3],
    /// Messages that may wait for one subscriber before it is dropped as too slow.
    pub subscriber_queue: usize,
    /// The walls of the hands after the first, in order (`--walls`): hand
    /// N + 2 is dealt `later_walls[N]`; hands beyond them are shuffled.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub later_walls: Vec<Vec<Tile>>,
    /// Opened for the classic protocol's clients (xmj, mj-player): as
    /// mj-server's game, it starts by itself once four players sit and are
    /// connected, and each hand's play starts only once every person but
    /// East has said ready (mj-server's pause "to start play").
    #[serde(default)]
    pub classic: bool,
}

impl TableSettings {
    /// A table of mj-server's defaults.
    pub fn new(name: impl Into<String>, options: GameOptions, seed: u64) -> TableSettings {
        TableSettings {
            name: name.into(),
            preset: crate::rules::presets::DEFAULT_PRESET.to_string(),
            options,
            seed,
            first_wall: None,
            pause_deciseconds: 0,
            random_seats: false,
            no_manager: false,
            no_special_scores: false,
            robot_takeover: None,
            end_on_disconnect: false,
            disconnect_penalties: [0; 3],
            subscriber_queue: 1024,
            later_walls: Vec::new(),
            classic: false,
        }
    }
}

/// A table to open: its settings, the robots to seat at once, and whether
/// to start the game at once (every seat must then be a robot's).
#[derive(Debug)]
pub struct TableSetup {
    /// The settings.
    pub settings: TableSettings,
    /// Robots to seat.
    pub robots: Vec<RobotSeat>,
    /// Start the game at once.
    pub start: bool,
    /// What the client who opens it holds by it: a table waiting to start,
    /// or (started at once) a game of robots.
    pub hold: Permit,
    /// Started at once: who pays for its hands ([`crate::limits::budget`]),
    /// the first already paid for.
    pub payer: Option<HandsPayer>,
}

/// The limits a table applies to the clients at it (from the server's
/// [`Limits`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableLimits {
    /// Chat messages per seat.
    pub chat: Rate,
    /// Other requests that cost a write (pauses, options, the manager), per seat.
    pub requests: Rate,
    /// Chat messages kept in memory for clients that reconnect.
    pub chat_kept: usize,
    /// A table not started with no person connected closes after this long.
    pub idle_open: std::time::Duration,
    /// A game with people seated and none connected ends after this long.
    pub idle_game: std::time::Duration,
}

impl From<&Limits> for TableLimits {
    fn from(l: &Limits) -> TableLimits {
        TableLimits {
            chat: l.chat,
            requests: l.table_requests,
            chat_kept: l.chat_kept,
            idle_open: l.idle_open_table,
            idle_game: l.idle_game,
        }
    }
}

impl Default for TableLimits {
    fn default() -> TableLimits {
        TableLimits::from(&Limits::default())
    }
}

/// A robot to seat when a table opens.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub struct RobotSeat {
    /// The seat, or any free one.
    pub seat: Option<u8>,
    /// Its strategy.
    pub strategy: Strategy,
}

/// Why a table refused a request. Nothing changed. (It crosses NATS in
/// cluster mode, as the answer of a table on another node.)
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum TableError {
    /// No table has this id.
    #[error("no table {0}")]
    NoSuchTable(String),
    /// The seat is outside 0-3.
    #[error("there is no seat {0}: seats are 0-3")]
    NoSuchSeat(u8),
    /// The seat is taken.
    #[error("seat {0} is taken")]
    SeatTaken(u8),
    /// Every seat is taken.
    #[error("the table is full")]
    Full,
    /// The seat token is not one of this table's.
    #[error("unknown seat token")]
    BadToken,
    /// The request needs the game manager.
    #[error("only the game manager may do that")]
    NotManager,
    /// The request is not possible now; the text says why.
    #[error("{0}")]
    NotNow(std::borrow::Cow<'static, str>),
    /// The request is malformed; the text says why.
    #[error("{0}")]
    Invalid(String),
    /// The table's task has ended.
    #[error("the table has closed")]
    Closed,
    /// The game store cannot be written now: the table waits for it, and
    /// changes nothing meanwhile.
    #[error("the game store is unavailable: the table waits for it; try again")]
    StoreUnavailable,
    /// The table's stored game is still being brought back after a restart.
    #[error("the server has restarted and this table is not back yet: try again in a moment")]
    Recovering,
}

/// A seat taken by a player: the seat and the token that alone acts for it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct SeatGrant {
    /// The seat (player id in the game).
    pub seat: u8,
    /// The seat token: keep it secret; it is the player's only credential.
    pub token: String,
}

/// A subscription to a table's stream, for one WebSocket.
pub struct Connection {
    /// The connection's id at the table.
    pub id: u64,
    /// The seat it acts for, `None` for a spectator.
    pub seat: Option<u8>,
    /// Messages to send, already serialised. When the table drops the sender
    /// (the connection fell behind, was replaced, or its seat was left), the
    /// socket must close: [`Connection::farewell`] says why.
    pub outbound: mpsc::Receiver<std::sync::Arc<str>>,
    /// Why the table let the connection go, set before it drops the sender.
    pub farewell: std::sync::Arc<std::sync::OnceLock<Farewell>>,
}

/// Why a table let a connection go while the table itself goes on: each
/// has its own close code, since a client must reconnect after one and not
/// after the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Farewell {
    /// Its queue was full: it fell behind. Reconnect (with `since`).
    FellBehind,
    /// A newer connection opened for the same seat, which it now plays.
    Replaced,
    /// The seat was left (`DELETE .../seats`): its token no longer works.
    SeatLeft,
    /// Cluster mode: another node plays the table now (this one left, or
    /// lost it). Reconnect (with `since`), through any node.
    Moved,
    /// The table has closed (cluster mode: told through the relay of a
    /// table on another node).
    Closed,
    /// The seat's token ended with the account session it was given to
    /// (logged out, out everywhere, password changed, disabled, sessions
    /// ended by an admin). Log in again.
    SessionEnded,
}

/// Who asks a table to change its seats, to start, or to let a seat go.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Asker {
    /// A seat token given with the request (`Authorization: Bearer`).
    pub token: Option<String>,
    /// The account the request comes from, if logged in.
    pub account: Option<i64>,
    /// The account is an admin: it may manage any table.
    pub admin: bool,
}

/// What a table is asked to do.
pub enum TableCommand {
    /// The public state of the table.
    Info {
        /// The answer.
        reply: oneshot::Sender<TableInfo>,
    },
    /// The game options in force (the game's once it has started).
    Options {
        /// The answer.
        reply: oneshot::Sender<GameOptions>,
    },
    /// A person sits down.
    Sit {
        /// The name to show.
        name: String,
        /// The seat wanted, or any free one.
        seat: Option<u8>,
        /// The account the seat will belong to (a guest's: `None`).
        account: Option<i64>,
        /// The account's session that asks (the SHA-256 of its token): the
        /// seat token ends with it.
        session: Option<String>,
        /// The seat held, counted against the client's quota while it sits
        /// at a game not over.
        hold: Permit,
        /// The seat and its token.
        reply: oneshot::Sender<Result<SeatGrant, TableError>>,
    },
    /// A person leaves its seat (before the game starts).
    Leave {
        /// Whose seat: by its token, or its account.
        asker: Asker,
        /// Done.
        reply: oneshot::Sender<Result<(), TableError>>,
    },
    /// A robot sits down.
    AddRobot {
        /// The seat wanted, or any free one.
        seat: Option<u8>,
        /// Its strategy.
        strategy: Strategy,
        /// Who asks (the manager, an admin, or anyone while no person sits).
        asker: Asker,
        /// The seat taken.
        reply: oneshot::Sender<Result<u8, TableError>>,
    },
    /// A robot leaves (before the game starts).
    RemoveRobot {
        /// Its seat.
        seat: u8,
        /// Who asks (as for [`TableCommand::AddRobot`]).
        asker: Asker,
        /// Done.
        reply: oneshot::Sender<Result<(), TableError>>,
    },
    /// Start the game (the manager, or anyone seated when there is none, or an admin).
    Start {
        /// Who asks; nobody in particular is allowed only when the table has
        /// no manager and no seated person.
        asker: Asker,
        /// A game of four robots held by whoever starts it (counted against
        /// its quota while it is played); without one, such a game is
        /// refused. Dropped for a game with people.
        robot_game: Option<Permit>,
        /// Who pays for the hands of a game of four robots, the first
        /// already paid for (`None`: nobody, as for a game with people).
        payer: Option<HandsPayer>,
        /// Done.
        reply: oneshot::Sender<Result<(), TableError>>,
    },
    /// A WebSocket connects, as a player (with its seat token) or a spectator.
    Connect {
        /// The seat token, or `None` for a spectator.
        token: Option<String>,
        /// The account connecting: without a token, it plays the seat the
        /// account holds here (if any).
        account: Option<i64>,
        /// The last sequence number the client saw, to resume without a snapshot.
        since: Option<u64>,
        /// After the snapshot, send again the events of the hand being
        /// played (the classic protocol's reconnection; with `since: None`).
        replay_hand: bool,
        /// The subscription.
        reply: oneshot::Sender<Result<Connection, TableError>>,
    },
    /// A message from a connected client.
    Message {
        /// The connection.
        connection: u64,
        /// The message.
        message: ClientMessage,
    },
    /// A client's message that could not be read; it gets the error.
    BadMessage {
        /// The connection.
        connection: u64,
        /// The error code.
        code: WsErrorCode,
        /// What was wrong.
        reason: String,
    },
    /// A connection has closed.
    Disconnect {
        /// The connection.
        connection: u64,
    },
    /// Cluster mode, rebalancing: the table moves to another node when the
    /// hand being played is over, as on [`TableCommand::HandOver`]; answered
    /// once it has stopped (dropped unanswered when it does not move: it is
    /// not being played, or it closed first).
    MoveBetweenHands {
        /// Answered when the table has stopped here.
        reply: oneshot::Sender<()>,
    },
    /// Cluster mode: a spectator connection is the feed of another node's
    /// spectators of this table, `count` of them now (the table counts them
    /// all, not the one feed).
    Watching {
        /// The feed's connection.
        connection: u64,
        /// The spectators it feeds.
        count: usize,
    },
    /// An admin closes the table: a game being played ends as it stands
    /// (a hand in progress is washed out), and the table is gone.
    Abort {
        /// Done.
        reply: oneshot::Sender<Result<(), TableError>>,
    },
    /// An account's sessions ended (logged out everywhere, password
    /// changed, disabled): the seat tokens its seats were given with them end
    /// too; the seats stay the account's, played with a new session.
    EndSeatTokens(crate::store::Revoked),
    /// The server is shutting down: the table stops once what it has
    /// handled is stored.
    Shutdown {
        /// Answered when the table has stopped.
        reply: oneshot::Sender<()>,
    },
    /// Cluster mode, this node leaving: the table stores what it has
    /// handled, lets its clients go to reconnect elsewhere
    /// ([`Farewell::Moved`]), and stops.
    HandOver {
        /// Answered when the table has stopped.
        reply: oneshot::Sender<()>,
    },
    /// Cluster mode: another node owns the table now. It stops at once,
    /// writing and showing nothing more; its clients reconnect elsewhere.
    GiveUp,
}

impl TableCommand {
    /// Whether the command changes who sits or whether the game is played:
    /// a request refused at once while the store cannot be written.
    pub fn changes_seats(&self) -> bool {
        matches!(
            self,
            TableCommand::Sit { .. }
                | TableCommand::Leave { .. }
                | TableCommand::AddRobot { .. }
                | TableCommand::RemoveRobot { .. }
                | TableCommand::Start { .. }
                | TableCommand::Abort { .. }
        )
    }
}

/// A handle on a running table.
#[derive(Clone, Debug)]
pub struct TableHandle {
    /// The table's id.
    pub id: String,
    sender: mpsc::Sender<TableCommand>,
    /// A stand-in for a table another node plays (cluster mode): an answer
    /// that never comes means its node did not answer, and the table is
    /// on its way to another.
    relayed: bool,
    /// Cluster mode: the table stopped here to be played at another node.
    elsewhere: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl TableHandle {
    /// A handle whose commands arrive on the receiver returned with it: for
    /// a stand-in that serves a table played elsewhere (cluster mode's
    /// relay to the table's node).
    pub fn channel(id: String) -> (TableHandle, mpsc::Receiver<TableCommand>) {
        let (sender, receiver) = mpsc::channel(COMMAND_QUEUE);
        (TableHandle { id, sender, relayed: true, elsewhere: Default::default() }, receiver)
    }

    /// Sends a command; fails if the table has closed (or moved).
    pub async fn send(&self, command: TableCommand) -> Result<(), TableError> {
        self.sender.send(command).await.map_err(|_| self.stopped())
    }

    /// Sends a command built around a reply channel and waits for the answer.
    pub async fn ask<T>(&self, make: impl FnOnce(oneshot::Sender<T>) -> TableCommand) -> Result<T, TableError> {
        let (tx, rx) = oneshot::channel();
        self.send(make(tx)).await?;
        rx.await.map_err(|_| self.stopped())
    }

    /// Why a command went unanswered: the table closed, or (cluster mode)
    /// it is on its way to another node, where it is back shortly.
    fn stopped(&self) -> TableError {
        if self.relayed || self.elsewhere.load(std::sync::atomic::Ordering::SeqCst) {
            TableError::Recovering
        } else {
            TableError::Closed
        }
    }

    /// True once the table's task has ended.
    pub fn is_closed(&self) -> bool {
        self.sender.is_closed()
    }

    /// Completes once the table's task has ended.
    pub async fn closed(&self) {
        self.sender.closed().await
    }
}
