//! The WebSocket protocol: JSON messages with a `type` field, mirroring the
//! classic protocol's controller and player messages in meaning (see
//! docs/protocol.md for every message with examples).
//!
//! A client sends [`ClientMessage`]s; the server sends [`ServerMessage`]s.
//! Every event of a table carries a sequence number, so that a client that
//! reconnects with the last number it saw misses nothing and receives
//! nothing twice.

use serde::{Deserialize, Serialize};

use crate::bots::strategy::Strategy;
use crate::rules::command::Action;
use crate::rules::event::Event;
use crate::rules::tile::Tile;
use crate::rules::view::{Claimable, Decision, TableView};

/// The largest text message a client may send, in bytes.
pub const MAX_CLIENT_MESSAGE: usize = 4096;

pub use crate::store::TableState;
pub use crate::text::MAX_CHAT_CHARS;

/// A message from a client (a seated player; spectators may only `ping`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ClientMessage {
    /// A move in the game (the engine's [`Action`]).
    Act {
        /// The move.
        action: Action,
    },
    /// Ready for the next hand (mj-server's `Ready`); also resumes a pause.
    Ready,
    /// Ask for the game to pause (mj-server's `RequestPause`): everyone must
    /// then say `ready` again.
    RequestPause {
        /// Why, shown to the others.
        #[serde(default)]
        reason: String,
    },
    /// Ask for a minimum pause between actions, in tenths of a second
    /// (mj-server's `PlayerOption DelayTime`; at most 50).
    SetPause {
        /// Deciseconds.
        deciseconds: u32,
    },
    /// Change a game option (the game manager only; before the game and
    /// between hands).
    SetOption {
        /// The option's catalogue name.
        name: String,
        /// The value in its natural JSON type (`true`, `20`, `"up"`), or as
        /// written in an option file (`"1"`, `"20"`).
        value: serde_json::Value,
    },
    /// Hand the game manager's role to the person in `seat`, or give it up
    /// (`seat` null: then anyone seated may take it). The manager only, or
    /// anyone while nobody manages the game; never at a table without a
    /// manager (`--no-manager`). mj-server's `ChangeManager`.
    SetManager {
        /// The new manager's seat (a person's), or null for nobody.
        #[serde(default)]
        seat: Option<u8>,
    },
    /// Whether to be asked about every discard (and kong open to robbing),
    /// also those whose only answer is `pass` (`every_discard: true`), or
    /// only when a claim is possible (`false`: the server passes at once for
    /// the seat). The setting is the seat's and lasts until changed: `false`
    /// when the seat is taken; a classic client's connection sets it to
    /// `true` (mj-server's behaviour).
    SetClaimPrompts {
        /// Be asked about every discard.
        every_discard: bool,
    },
    /// Say something to the table.
    Chat {
        /// The text (at most [`MAX_CHAT_CHARS`] characters).
        text: String,
    },
    /// Ask for a fresh snapshot of what this client may see.
    Snapshot,
    /// Keep-alive; answered with `pong`.
    Ping,
}

/// Something that happened at the table outside the game itself.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TableEvent {
    /// Someone sat down.
    SeatTaken {
        /// The seat (the player id in the game: 0 is the first East).
        seat: u8,
        /// The name shown.
        name: String,
        /// A robot, and its strategy.
        #[serde(skip_serializing_if = "Option::is_none", default)]
        robot: Option<Strategy>,
    },
    /// A seat became free.
    SeatLeft {
        /// The seat.
        seat: u8,
    },
    /// A seated player's connection was lost.
    Disconnected {
        /// The seat.
        seat: u8,
    },
    /// A seated player is connected again.
    Reconnected {
        /// The seat.
        seat: u8,
    },
    /// A seated person connected for the first time since sitting down
    /// (a robot never connects: it is always there).
    Connected {
        /// The seat.
        seat: u8,
    },
    /// The game manager changed (`None`: no manager).
    Manager {
        /// The manager's seat.
        seat: Option<u8>,
    },
    /// An option was changed by the manager.
    OptionChanged {
        /// The option.
        name: String,
        /// Its new value.
        value: String,
    },
    /// The game has started (the seats are now fixed).
    GameStarted,
    /// The next hand is dealt when these seats have said `ready`.
    WaitingForReady {
        /// Seats not ready yet.
        seats: Vec<u8>,
    },
    /// Play is paused until everyone is ready.
    Paused {
        /// Who asked.
        seat: u8,
        /// Why.
        reason: String,
    },
    /// On a table for classic clients, the deal's declarations are over:
    /// play starts once every person but East has said `ready` (mj-server's
    /// pause "to start play"); `waiting_for_ready` follows.
    PlayStarting {
        /// East's seat: exempt, it moves first.
        east: u8,
    },
    /// Everybody is ready again after a pause (or after the server
    /// restarted mid-hand): play resumes where it stopped.
    Resumed,
    /// The minimum pause between actions changed.
    PauseChanged {
        /// Deciseconds.
        deciseconds: u32,
    },
    /// A chat message.
    Chat {
        /// Who said it.
        seat: u8,
        /// The name of the speaker.
        name: String,
        /// What was said.
        text: String,
    },
    /// The table closes: an admin closed it, or it was idle too long (a
    /// game being played ends as it stands first). Its connections close
    /// after this.
    Closed {
        /// Why, in words.
        reason: String,
    },
    /// Told only to a player who left a game ended by its disconnection
    /// (`--end-on-disconnect`): the penalty recorded against it.
    Penalty {
        /// The player's seat.
        seat: u8,
        /// The penalty, in points.
        points: i64,
    },
}

/// An event of the table's stream: a game event or a table event.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(untagged)]
pub enum StreamEvent {
    /// From the rules engine.
    Game(Event),
    /// From the table.
    Table(TableEvent),
}

/// A seat as everyone may see it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SeatInfo {
    /// The seat (player id).
    pub seat: u8,
    /// Who sits there, if anyone.
    pub name: Option<String>,
    /// A robot's strategy, if a robot sits there.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub robot: Option<Strategy>,
    /// The player is connected (robots always are).
    pub connected: bool,
    /// Ready for the next hand.
    pub ready: bool,
    /// The seat belongs to an account (played with its session); absent for
    /// a guest's seat, a robot's and a free one. A client that is logged in
    /// knows its seat by this and the name (a guest may share the name).
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub account: bool,
}

/// The state of a table as anyone may see it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct TableInfo {
    /// The table's id.
    pub id: String,
    /// The table's name.
    pub name: String,
    /// `open` (waiting for players), `playing` or `over`.
    pub state: TableState,
    /// The four seats.
    pub seats: Vec<SeatInfo>,
    /// The game manager's seat.
    pub manager: Option<u8>,
    /// Connected spectators.
    pub spectators: usize,
    /// The preset the table was created with.
    pub preset: String,
    /// Cumulative scores by seat.
    pub scores: [i64; 4],
    /// Hands dealt so far.
    pub hands: u32,
    /// The minimum pause between actions, in deciseconds.
    pub pause_deciseconds: u32,
    /// The seats whose `ready` the table is waiting for (before a hand, or
    /// after a pause request); empty while playing.
    pub waiting_for_ready: Vec<u8>,
    /// Play is paused until everyone is ready again.
    pub paused: bool,
    /// The last sequence number of the table's event stream.
    pub seq: u64,
    /// Cluster mode: the name of the node that plays the table (absent on
    /// a single node).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
}

/// A message from the server.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerMessage {
    /// Sent first on connecting (without `since`): everything the receiver
    /// may see now. Events with a higher `seq` follow.
    Snapshot {
        /// The receiver's seat, `None` for a spectator.
        seat: Option<u8>,
        /// The table.
        table: TableInfo,
        /// The game as the receiver may see it, once it has started.
        game: Option<Box<TableView>>,
        /// The options in force (the game's, or before it starts the ones
        /// it will start with), by catalogue name, each in its natural JSON
        /// type; [`option_changed`] events change them.
        #[serde(default)]
        options: serde_json::Map<String, serde_json::Value>,
    },
    /// One event of the table's stream.
    Event {
        /// Its sequence number (increasing by one across the whole stream;
        /// a receiver sees the numbers of the events it may see).
        seq: u64,
        /// The time the table created it, in microseconds since the Unix epoch
        /// (for measuring delivery latency).
        at_us: u64,
        /// The event.
        event: StreamEvent,
    },
    /// A request was refused; nothing changed.
    Error {
        /// What kind of refusal: a stable code.
        code: WsErrorCode,
        /// What was wrong.
        message: String,
    },
    /// To one player only: what it may do now. Sent whenever that changes,
    /// and on connecting; it is not numbered (it describes the state after
    /// the event `seq`) and not kept for resuming, since a newer prompt
    /// always replaces an older one.
    Prompt(Prompt),
    /// The answer to `ping`.
    Pong,
}

impl ServerMessage {
    /// An error message.
    pub fn error(code: WsErrorCode, message: impl Into<String>) -> ServerMessage {
        ServerMessage::Error { code, message: message.into() }
    }
}

/// Why a WebSocket message was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WsErrorCode {
    /// The message is not one the protocol knows, or is malformed.
    BadMessage,
    /// The message is over the size limit.
    TooLarge,
    /// The engine refuses the move (it was not in the prompt's actions).
    IllegalMove,
    /// The request does not fit the table's state now (paused, between hands...).
    NotNow,
    /// The sender may not do that (a spectator acting, a player not managing).
    NotAllowed,
    /// The option or its value is refused.
    BadOption,
    /// The game store cannot be written now: nothing changed; try again.
    StoreUnavailable,
    /// Too many chat messages (or other requests that cost the table a
    /// write) from this seat: the message says when to try
    /// again (docs/protocol.md, "Limits").
    RateLimited,
}

impl WsErrorCode {
    /// The code as sent.
    pub fn as_str(self) -> &'static str {
        match self {
            WsErrorCode::BadMessage => "bad_message",
            WsErrorCode::TooLarge => "too_large",
            WsErrorCode::IllegalMove => "illegal_move",
            WsErrorCode::NotNow => "not_now",
            WsErrorCode::NotAllowed => "not_allowed",
            WsErrorCode::BadOption => "bad_option",
            WsErrorCode::StoreUnavailable => "store_unavailable",
            WsErrorCode::RateLimited => "rate_limited",
        }
    }
}

impl std::fmt::Display for WsErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What one player may do now: the prompt the table sends that player alone.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Prompt {
    /// The stream position this describes: the state after event `seq`.
    pub seq: u64,
    /// The table waits for this player's `ready` (before a hand, or after a
    /// pause request); no move is possible until everybody is.
    pub ready: bool,
    /// What the engine awaits of the player, if anything.
    pub decision: Option<Decision>,
    /// Every move the player may make now, exactly as `act` takes them: a
    /// move is accepted exactly when it is listed. Empty while the game is
    /// paused, between hands, or when nothing is awaited of the player.
    pub actions: Vec<Action>,
    /// The discard (or kong) being answered, when the actions answer one.
    pub claimable: Option<Claimable>,
    /// When the claim window closes, when one is timed and the player may
    /// still answer.
    pub deadline: Option<Deadline>,
    /// The tile the player has just drawn, when it is its turn after drawing.
    pub drawn: Option<Tile>,
    /// Tiles left in the live wall, while a hand is played.
    pub live_tiles_left: Option<usize>,
    /// The tiles the player's hand waits on (each would complete its shape),
    /// at a table whose `ShowWaits` option is on, while its hand is one tile
    /// short; absent otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waits: Vec<Tile>,
}

/// When a claim window closes: unanswered players then pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Deadline {
    /// The serial number of the discard or kong being answered.
    pub discard: u32,
    /// The server's time of the deadline, in microseconds since the Unix epoch.
    pub at_us: u64,
    /// Milliseconds left when the prompt was sent (for clients whose clock
    /// is not the server's).
    pub ms_left: u64,
}
