//! What is written to the store: a [`Batch`] per table flush, made of the
//! rows of the log (events, inputs) and of the projections (the game, its
//! seats, finished hands).

use serde::{Deserialize, Serialize};

use crate::rules::event::Audience;
/// The inputs rows hold (the engine's, re-exported: the store only keeps them).
pub use crate::rules::rebuild::Input;
use crate::store::row::from_row;

// The `state` of a game's row, which the lobby and the WebSocket describe
// too (`protocol::ws` re-exports it). Its doc comment is the API's schema.
/// Where a table is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TableState {
    /// Players are sitting down; the game has not started.
    Open,
    /// The game is being played.
    Playing,
    /// The game is over (or ended early).
    Over,
}

impl TableState {
    /// The state's name, as in JSON (and in the store).
    pub fn as_str(self) -> &'static str {
        match self {
            TableState::Open => "open",
            TableState::Playing => "playing",
            TableState::Over => "over",
        }
    }

    /// A state from its name.
    pub fn from_name(name: &str) -> Option<TableState> {
        [TableState::Open, TableState::Playing, TableState::Over].into_iter().find(|s| s.as_str() == name)
    }
}

/// Where a game came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "kebab-case")]
pub enum GameSource {
    /// Played at a table of this server.
    Live,
    /// Loaded from a game file.
    Loaded,
    /// Imported from a log of the original mj-server.
    MjServer,
}

impl GameSource {
    /// Every source.
    pub const ALL: [GameSource; 3] = [GameSource::Live, GameSource::Loaded, GameSource::MjServer];

    /// The source's name, as stored and as in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            GameSource::Live => "live",
            GameSource::Loaded => "loaded",
            GameSource::MjServer => "mj-server",
        }
    }

    /// A source from its name.
    pub fn from_name(name: &str) -> Option<GameSource> {
        GameSource::ALL.into_iter().find(|s| s.as_str() == name)
    }
}

/// How a finished hand ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum HandOutcome {
    /// Someone went out; the hand was scored and settled.
    Won,
    /// Nobody went out (the wall ran out, or the hand was abandoned).
    WashedOut,
}

impl HandOutcome {
    /// Every outcome.
    pub const ALL: [HandOutcome; 2] = [HandOutcome::Won, HandOutcome::WashedOut];

    /// The outcome's name, as stored and as in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            HandOutcome::Won => "won",
            HandOutcome::WashedOut => "washed_out",
        }
    }

    /// An outcome from its name.
    pub fn from_name(name: &str) -> Option<HandOutcome> {
        HandOutcome::ALL.into_iter().find(|o| o.as_str() == name)
    }
}

/// The game row: what a query needs to know of a game without reading its log.
///
/// `source` and `state` are kept as their names here (the game files and the
/// table actor build rows from names); [`GameRow::game_source`] and
/// [`GameRow::game_state`] read them. A game's state is its table's
/// [`TableState`], named by [`TableState::as_str`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameRow {
    /// The table's name.
    pub name: String,
    /// The preset the options started from.
    pub preset: String,
    /// Where the game came from.
    pub source: GameSource,
    /// `open`, `playing` or `over`.
    pub state: TableState,
    /// When the table opened (µs since the epoch).
    pub created_us: i64,
    /// When the game ended.
    pub finished_us: Option<i64>,
    /// Hands dealt so far.
    pub hands: i64,
    /// Cumulative scores by player id.
    pub scores: [i64; 4],
    /// The manager's seat.
    pub manager: Option<i64>,
    /// The stream's last sequence number. The stored row's may be behind
    /// (see [`Batch::game_changed`]): reading a game back takes the larger of
    /// it and the last stored event's.
    pub last_seq: i64,
    /// The table's random stream position.
    pub rng_pos: u128,
}

impl GameRow {
    /// The same row but for `last_seq`.
    pub fn same_but_seq(&self, other: &GameRow) -> bool {
        GameRow { last_seq: other.last_seq, ..self.clone() } == *other
    }
}

from_row! {
    /// A seat, as stored (read by column name).
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct SeatRow {
        /// 0-3 (the player id).
        pub seat: i64,
        /// The name shown.
        pub name: String,
        /// A robot's strategy as JSON; `None` for a person.
        pub robot: Option<String>,
        /// The SHA-256 of a person's seat token, in hex.
        pub token_sha256: Option<String>,
        /// The account the seat belongs to (`None`: a guest or a robot).
        pub user_id: Option<i64>,
        /// The pause between actions the player asked for.
        pub pause_request: i64,
        /// Penalties recorded against the player (`--disconnect-penalties`).
        pub penalty: i64,
    }
}

/// A change of seat.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SeatChange {
    /// The seat is taken, or its row changed.
    Set(SeatRow),
    /// The seat became free.
    Free(i64),
}

/// One message of a table's stream, as sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventRow {
    /// Its sequence number.
    pub seq: i64,
    /// When it was sent.
    pub at_us: i64,
    /// The hand it belongs to (0: before the first deal).
    pub hand: i64,
    /// Who may see it.
    pub audience: Audience,
    /// The message's JSON text, exactly as sent.
    pub body: String,
}

impl EventRow {
    /// The audience's stored form: its kind and its player.
    pub fn audience_columns(&self) -> (&'static str, Option<i64>) {
        audience_columns(self.audience)
    }
}

/// An audience's stored form.
pub fn audience_columns(audience: Audience) -> (&'static str, Option<i64>) {
    match audience {
        Audience::Everyone => ("everyone", None),
        Audience::Only(p) => ("only", Some(i64::from(p.0))),
        Audience::AllBut(p) => ("all_but", Some(i64::from(p.0))),
    }
}

/// An audience read back from its stored form.
pub fn audience_from_columns(kind: &str, player: Option<i64>) -> Option<Audience> {
    let p = || player.and_then(|p| u8::try_from(p).ok()).filter(|&p| p < 4).map(crate::rules::PlayerId);
    match kind {
        "everyone" => Some(Audience::Everyone),
        "only" => p().map(Audience::Only),
        "all_but" => p().map(Audience::AllBut),
        _ => None,
    }
}

/// An input, numbered in the game's order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputRow {
    /// Its place in the game's inputs, from 1.
    pub n: i64,
    /// The stream's last sequence number before its events.
    pub seq: i64,
    /// The input.
    pub input: Input,
}

/// A finished hand.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HandRow {
    /// The hand's number in the game, from 1.
    pub hand: i64,
    /// The prevailing wind (`East`...).
    pub round: String,
    /// The player who was East.
    pub east: i64,
    /// How it ended.
    pub outcome: HandOutcome,
    /// The winners' player ids.
    pub winners: Vec<i64>,
    /// How the first winner went out: `self_drawn`, `discard` or `robbed_kong`.
    pub how: Option<String>,
    /// The player who supplied the winning tile.
    pub discarder: Option<i64>,
    /// The dice.
    pub dice: Option<[u8; 2]>,
    /// The first and last sequence numbers of the hand's events.
    pub first_seq: i64,
    /// See `first_seq`.
    pub last_seq: i64,
    /// When it was dealt.
    pub started_us: i64,
    /// When it ended.
    pub ended_us: i64,
    /// The engine's settlement, as JSON (`None` for a wash-out).
    pub settlement: Option<String>,
    /// Each player's part, by player id.
    pub players: Vec<HandPlayerRow>,
    /// The payments, in order.
    pub payments: Vec<PaymentRow>,
}

/// One player's part in a finished hand.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HandPlayerRow {
    /// The player id.
    pub player: i64,
    /// The player's name.
    pub name: String,
    /// The player's seat wind this hand.
    pub wind: String,
    /// The player won the hand.
    pub won: bool,
    /// The hand score's points (0 when not scored).
    pub points: i64,
    /// The hand score with its breakdown, as JSON.
    pub score: Option<String>,
    /// The change of score.
    pub delta: i64,
    /// The cumulative score after the hand.
    pub total: i64,
}

from_row! {
    /// One payment of a settlement, between player ids (read by column name).
    #[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
    pub struct PaymentRow {
        /// Who pays.
        pub from_player: i64,
        /// Who is paid.
        pub to_player: i64,
        /// How much.
        pub amount: i64,
        /// What for (the settlement's payment kind).
        pub kind: String,
    }
}

/// Everything one flush of a table writes, in one transaction.
#[derive(Clone, Debug)]
pub struct Batch {
    /// The game.
    pub game_id: String,
    /// The game row as it now stands.
    pub game: GameRow,
    /// The game row changed beyond its `last_seq` (which the events give
    /// anyway) since it was last written: it is written with this batch.
    /// Most moves change nothing else, and rewriting a game's row (with its
    /// settings) for each of them was most of the store's work.
    pub game_changed: bool,
    /// The settings as JSON: given the first time a game is written.
    pub settings: Option<String>,
    /// Seats taken, changed or freed.
    pub seats: Vec<SeatChange>,
    /// Inputs accepted.
    pub inputs: Vec<InputRow>,
    /// Events sent.
    pub events: Vec<EventRow>,
    /// Hands finished.
    pub hands: Vec<HandRow>,
    /// Cluster mode: the epoch under which the writing node owns the
    /// table. The batch is written only while the database still gives the
    /// table to that epoch (see [`super::cluster`]); `None` on a single node.
    pub fence: Option<i64>,
}

impl Batch {
    /// A batch that only brings the game row up to date.
    pub fn new(game_id: impl Into<String>, game: GameRow) -> Batch {
        Batch {
            game_id: game_id.into(),
            game,
            game_changed: true,
            settings: None,
            seats: Vec::new(),
            inputs: Vec::new(),
            events: Vec::new(),
            hands: Vec::new(),
            fence: None,
        }
    }

    /// The rows it adds or changes besides its game's own (which a group
    /// commit writes once for all the game's batches): each seat change,
    /// input and event, and each finished hand's rows (the hand, its
    /// players, its payments).
    pub fn rows(&self) -> usize {
        let hands: usize = self.hands.iter().map(|h| 1 + h.players.len() + h.payments.len()).sum();
        self.seats.len() + self.inputs.len() + self.events.len() + hands
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back() {
        for s in GameSource::ALL {
            assert_eq!(GameSource::from_name(s.as_str()), Some(s));
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
        }
        for o in HandOutcome::ALL {
            assert_eq!(HandOutcome::from_name(o.as_str()), Some(o));
            assert_eq!(serde_json::to_value(o).unwrap(), o.as_str());
        }
        assert_eq!(GameSource::from_name("mj_server"), None);
        assert_eq!(HandOutcome::from_name("abandoned"), None);
    }
}
