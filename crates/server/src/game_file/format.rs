//! The game file's format: one versioned JSON document holding what the
//! store holds of a game (its row, the table's settings, the seats, every
//! input and every event with its audience), but never a seat token or its
//! hash. See docs/protocol.md, "Game files".

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::bots::strategy::Strategy;
use crate::rules::rebuild::Input;
use crate::store::records::audience_columns;
use crate::store::{SavedGame, StoreError};

/// The `format` of a game file.
pub const FORMAT: &str = "mahjong-server game";

/// The version of the format this server writes and reads.
pub const VERSION: u64 = 1;

/// A game file (see the module's documentation).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GameFile {
    /// Always [`FORMAT`].
    pub format: String,
    /// Always [`VERSION`].
    pub version: u64,
    /// The game's row.
    pub game: FileGame,
    /// The table's settings when it opened (later option changes are inputs).
    pub settings: Value,
    /// Who sat where.
    pub seats: Vec<FileSeat>,
    /// The inputs that rebuild the game, in order.
    pub inputs: Vec<FileInput>,
    /// Every event of the table's stream, in order.
    pub events: Vec<FileEvent>,
}

/// A game file's game row.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FileGame {
    /// The game's id where it was exported (a loaded game gets a new one).
    pub id: String,
    /// The table's name.
    pub name: String,
    /// The preset the options started from.
    pub preset: String,
    /// Where the game came from: `live`, `loaded` or `mj-server`.
    pub source: String,
    /// `open`, `playing` or `over`.
    pub state: String,
    /// When the table opened (µs since the epoch).
    pub created_us: i64,
    /// When the game ended.
    pub finished_us: Option<i64>,
    /// Hands dealt.
    pub hands: i64,
    /// Cumulative scores by player id.
    pub scores: [i64; 4],
    /// The manager's seat.
    pub manager: Option<i64>,
    /// The stream's last sequence number.
    pub last_seq: i64,
    /// The table's random stream position, in decimal: a 128-bit number is
    /// beyond what JSON readers keep exactly.
    pub rng_pos: String,
}

/// A seat in a game file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FileSeat {
    /// 0-3 (the player id).
    pub seat: i64,
    /// The name shown.
    pub name: String,
    /// A robot's strategy; `null` for a person.
    pub robot: Option<Strategy>,
}

/// An input in a game file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct FileInput {
    /// The stream's last sequence number before the input's events.
    pub seq: i64,
    /// The input.
    #[serde(flatten)]
    pub input: Input,
}

/// An event in a game file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FileEvent {
    /// Its sequence number (1, 2, ... in order).
    pub seq: i64,
    /// When it was sent (µs since the epoch).
    pub at_us: i64,
    /// The hand it belongs to (0: before the first deal).
    pub hand: i64,
    /// `everyone`, `only` or `all_but`.
    pub audience: String,
    /// The player of `only` and `all_but`.
    pub audience_player: Option<i64>,
    /// The message as sent: a `ServerMessage` of type `event`.
    pub body: Value,
}

/// Why a game file (or an mj-server log) was refused. Nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    /// The text is not JSON (or not UTF-8).
    #[error("the game file is not JSON: {0}")]
    Json(String),
    /// JSON, but not a game file of this server.
    #[error("not a game file: {0}")]
    Format(String),
    /// A game file of a version this server does not read.
    #[error("game file version {0} is not supported: this server reads version {VERSION}")]
    Version(String),
    /// A game file whose content is malformed or does not add up.
    #[error("the game file is refused: {0}")]
    Invalid(String),
    /// An mj-server log that does not replay.
    #[error("the mj-server log is refused: {0}")]
    Log(String),
    /// A game an mj-server log cannot record (its export as one is refused).
    #[error("{0}")]
    Unrecordable(String),
}

pub(super) fn invalid(why: impl Into<String>) -> ArchiveError {
    ArchiveError::Invalid(why.into())
}

/// Reads a game file: the format and version are checked first, so that a
/// file of another version says so rather than failing on some field. The
/// content is checked by [`super::check()`].
pub fn parse(text: &str) -> Result<GameFile, ArchiveError> {
    let value: Value = serde_json::from_str(text).map_err(|e| ArchiveError::Json(e.to_string()))?;
    let Some(object) = value.as_object() else {
        return Err(ArchiveError::Format("the document is not a JSON object".into()));
    };
    match object.get("format") {
        Some(Value::String(f)) if f == FORMAT => {}
        Some(other) => return Err(ArchiveError::Format(format!("its format is {other}, not \"{FORMAT}\""))),
        None => return Err(ArchiveError::Format(format!("it has no \"format\": \"{FORMAT}\""))),
    }
    match object.get("version") {
        Some(v) if v.as_u64() == Some(VERSION) => {}
        Some(other) => return Err(ArchiveError::Version(other.to_string())),
        None => return Err(ArchiveError::Version("(none)".into())),
    }
    crate::protocol::json::from_value(value).map_err(|e| invalid(e.to_string()))
}

impl GameFile {
    /// A stored game, read back whole, as a game file (without its seat
    /// tokens' hashes). Stored JSON that no longer reads is
    /// `StoreError::Corrupt`.
    pub fn from_saved(saved: SavedGame) -> Result<GameFile, StoreError> {
        let id = saved.id;
        let corrupt = |why: String| StoreError::Corrupt { game: id.clone(), why };
        let g = saved.game;
        let seats = saved
            .seats
            .iter()
            .map(|s| {
                let robot = s.robot.as_deref().map(serde_json::from_str).transpose();
                let robot = robot.map_err(|e| corrupt(format!("seat {}: {e}", s.seat)))?;
                Ok(FileSeat { seat: s.seat, name: s.name.clone(), robot })
            })
            .collect::<Result<_, StoreError>>()?;
        let events = saved
            .events
            .iter()
            .map(|e| {
                let body = serde_json::from_str(&e.body).map_err(|err| corrupt(format!("event {}: {err}", e.seq)))?;
                let (audience, audience_player) = audience_columns(e.audience);
                Ok(FileEvent {
                    seq: e.seq,
                    at_us: e.at_us,
                    hand: e.hand,
                    audience: audience.into(),
                    audience_player,
                    body,
                })
            })
            .collect::<Result<_, StoreError>>()?;
        let settings = serde_json::from_str(&saved.settings).map_err(|e| corrupt(format!("settings: {e}")))?;
        Ok(GameFile {
            format: FORMAT.into(),
            version: VERSION,
            game: FileGame {
                id,
                name: g.name,
                preset: g.preset,
                source: g.source.as_str().to_string(),
                state: g.state.as_str().to_string(),
                created_us: g.created_us,
                finished_us: g.finished_us,
                hands: g.hands,
                scores: g.scores,
                manager: g.manager,
                last_seq: g.last_seq,
                rng_pos: g.rng_pos.to_string(),
            },
            settings,
            seats,
            inputs: saved.inputs.into_iter().map(|r| FileInput { seq: r.seq, input: r.input }).collect(),
            events,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_format_and_version_are_read_before_anything_else() {
        assert!(matches!(parse("{\"format\":"), Err(ArchiveError::Json(_))));
        assert!(matches!(parse("[1, 2]"), Err(ArchiveError::Format(_))));
        assert!(matches!(parse(r#"{"format": "zip", "version": 1}"#), Err(ArchiveError::Format(_))));
        let later = parse(r#"{"format": "mahjong-server game", "version": 2, "game": 7}"#).unwrap_err();
        assert_eq!(later.to_string(), "game file version 2 is not supported: this server reads version 1");
        let broken = parse(r#"{"format": "mahjong-server game", "version": 1, "game": 7}"#).unwrap_err();
        assert!(matches!(broken, ArchiveError::Invalid(_)), "{broken}");
    }
}
