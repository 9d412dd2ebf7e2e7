//! The classic text-line protocol of mj-server (protocol version 1110).
//!
//! Every message is one *message line*: the message name (the C type name
//! without its `CMsg`/`PMsg` prefix) followed by its fields, each preceded by
//! one space, in the order of the C structs in the reference's `protocol.h`.
//! Integers are decimal, booleans `0`/`1`, tiles two-character codes (`--`
//! for a hidden or absent tile), winds one letter, chow positions
//! `Lower`/`Middle`/`Upper`/`AnyPos`. At most one free-text field exists per
//! message and it is always the last; it runs to the end of the line and may
//! contain line feeds (hand-score and settlement explanations do).
//!
//! [`ControllerMessage`] covers the server's messages and [`PlayerMessage`]
//! the clients'. Both parse a message line with `parse` and print it back
//! with [`Display`](fmt::Display); printing a line that came from the
//! reference reproduces it byte for byte. The parser is as lenient as the
//! reference where that costs nothing (runs of whitespace between fields, the
//! short aliases such as `d` for `Discard`, `l`/`m`/`u`/`a` for chow
//! positions) and strict where the reference would silently misread (values
//! out of range, unknown words, extra fields).
//!
//! On a socket the reference additionally escapes message lines (see
//! [`encode_wire`] and [`WireLineDecoder`]); its game logs record the
//! unescaped message lines.

use std::fmt::{self, Write as _};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::rules::command::{Action, Claim, ClosedSet, DiscardUse};
use crate::rules::tile::{Tile, Wind};
use crate::rules::tileset::ChowPosition;

/// Longest value shown verbatim inside an error message; longer input is cut
/// so that a hostile or garbled line cannot blow up the logs.
const SNIPPET_CHARS: usize = 40;

/// Why a message line could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ClassicParseError {
    /// The line holds no message name at all.
    #[error("empty line: expected a {side} message name")]
    Empty {
        /// `"controller"` or `"player"`.
        side: &'static str,
    },
    /// The first word is not the name of a message of this side.
    #[error("unknown {side} message type '{name}'")]
    UnknownMessageType {
        /// `"controller"` or `"player"`.
        side: &'static str,
        /// The offending word (possibly shortened).
        name: String,
    },
    /// The line ended before a required field.
    #[error("{message}: missing field '{field}'")]
    MissingField {
        /// The message name.
        message: &'static str,
        /// The field that is missing.
        field: &'static str,
    },
    /// A field that must be an integer is not one (or does not fit in 32 bits).
    #[error("{message}: field '{field}' must be a 32-bit decimal integer, not '{value}'")]
    BadInteger {
        /// The message name.
        message: &'static str,
        /// The field concerned.
        field: &'static str,
        /// The offending text (possibly shortened).
        value: String,
    },
    /// A boolean field is neither `0` nor `1`.
    #[error("{message}: field '{field}' must be 0 or 1, not '{value}'")]
    BadBool {
        /// The message name.
        message: &'static str,
        /// The field concerned.
        field: &'static str,
        /// The offending text (possibly shortened).
        value: String,
    },
    /// A tile field holds something that is not a tile code.
    #[error("{message}: field '{field}': '{value}' is not a tile code (expected e.g. 1B, 9C, 5D, EW, RD, 1F, 4S)")]
    BadTile {
        /// The message name.
        message: &'static str,
        /// The field concerned.
        field: &'static str,
        /// The offending text (possibly shortened).
        value: String,
    },
    /// A tile field that must name a real tile holds the hidden tile `--`.
    #[error("{message}: field '{field}' must name a tile; the hidden tile '--' is not allowed here")]
    HiddenTile {
        /// The message name.
        message: &'static str,
        /// The field concerned.
        field: &'static str,
    },
    /// A wind field is not one of `E`, `S`, `W`, `N`.
    #[error("{message}: field '{field}' must be a wind letter E, S, W or N, not '{value}'")]
    BadWind {
        /// The message name.
        message: &'static str,
        /// The field concerned.
        field: &'static str,
        /// The offending text (possibly shortened).
        value: String,
    },
    /// A chow-position field is not a known position word.
    #[error("{message}: field '{field}' must be Lower, Middle, Upper or AnyPos, not '{value}'")]
    BadChowPosition {
        /// The message name.
        message: &'static str,
        /// The field concerned.
        field: &'static str,
        /// The offending text (possibly shortened).
        value: String,
    },
    /// A player-option field names no known player option.
    #[error(
        "{message}: field '{field}': unknown player option '{value}' (expected InfoTiles, DelayTime, LocalTimeouts or Unknown)"
    )]
    BadPlayerOption {
        /// The message name.
        message: &'static str,
        /// The field concerned.
        field: &'static str,
        /// The offending text (possibly shortened).
        value: String,
    },
    /// A single-word field is longer than the protocol's 15 characters.
    #[error("{message}: field '{field}' is limited to 15 bytes, but '{value}' is longer")]
    WordTooLong {
        /// The message name.
        message: &'static str,
        /// The field concerned.
        field: &'static str,
        /// The offending text (possibly shortened).
        value: String,
    },
    /// Text remains after the last field of a message that has no text field.
    #[error("{message}: unexpected text after the last field: '{extra}'")]
    TrailingData {
        /// The message name.
        message: &'static str,
        /// The surplus text (possibly shortened).
        extra: String,
    },
}

/// A short, printable excerpt of untrusted input for error messages.
fn snippet(s: &str) -> String {
    let mut chars = s.chars();
    let mut out: String = chars.by_ref().take(SNIPPET_CHARS).collect();
    if chars.next().is_some() {
        out.push('…');
    }
    out
}

/// The reference tokenises with C's `isspace`, which in the C locale is
/// exactly these six ASCII characters (Rust's own notions differ: Unicode
/// spaces, and no vertical tab).
fn is_c_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c')
}

/// Walks through the fields of one message line.
struct Cursor<'a> {
    rest: &'a str,
    message: &'static str,
}

impl<'a> Cursor<'a> {
    /// The next whitespace-delimited word; runs of whitespace are skipped as
    /// `sscanf` does, so hand-typed lines with double spaces still parse.
    fn token(&mut self, field: &'static str) -> Result<&'a str, ClassicParseError> {
        let s = self.rest.trim_start_matches(is_c_space);
        if s.is_empty() {
            return Err(ClassicParseError::MissingField { message: self.message, field });
        }
        let end = s.find(is_c_space).unwrap_or(s.len());
        let (word, rest) = s.split_at(end);
        self.rest = rest;
        Ok(word)
    }

    /// The final free-text field. Only spaces are skipped before it: the
    /// encoder escapes a text that starts with a space (so none is lost), but
    /// not one that starts with a line feed or tab, which must survive.
    fn text(&mut self) -> &'a str {
        let s = self.rest.trim_start_matches(' ');
        self.rest = "";
        s.strip_prefix('\\').unwrap_or(s)
    }

    /// Everything after exactly one separating space, unescaped. Used for the
    /// description of a game option, which the reference writes without the
    /// text-field escape.
    fn raw_rest(&mut self) -> &'a str {
        let s = self.rest.strip_prefix(' ').unwrap_or(self.rest);
        self.rest = "";
        s
    }

    /// Checks that nothing but whitespace is left.
    fn finish(self) -> Result<(), ClassicParseError> {
        let s = self.rest.trim_matches(is_c_space);
        if s.is_empty() {
            Ok(())
        } else {
            Err(ClassicParseError::TrailingData { message: self.message, extra: snippet(s) })
        }
    }
}

/// How one kind of field is read from and written to a message line.
trait FieldCodec {
    /// The Rust type of the field.
    type Value;
    /// Reads the field at the cursor.
    fn parse(cur: &mut Cursor<'_>, field: &'static str) -> Result<Self::Value, ClassicParseError>;
    /// Writes the field (without the separating space).
    fn write(value: &Self::Value, out: &mut fmt::Formatter<'_>) -> fmt::Result;
}

/// C `int`: a signed 32-bit decimal.
struct Int;
impl FieldCodec for Int {
    type Value = i32;
    fn parse(cur: &mut Cursor<'_>, field: &'static str) -> Result<i32, ClassicParseError> {
        let word = cur.token(field)?;
        word.parse::<i32>().map_err(|_| ClassicParseError::BadInteger {
            message: cur.message,
            field,
            value: snippet(word),
        })
    }
    fn write(value: &i32, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(out, "{value}")
    }
}

/// C `bool`: an integer that must be 0 or 1 (the reference rejects others).
struct Flag;
impl FieldCodec for Flag {
    type Value = bool;
    fn parse(cur: &mut Cursor<'_>, field: &'static str) -> Result<bool, ClassicParseError> {
        let word = cur.token(field)?;
        let bad = || ClassicParseError::BadBool { message: cur.message, field, value: snippet(word) };
        match word.parse::<i32>().map_err(|_| bad())? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(bad()),
        }
    }
    fn write(value: &bool, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        out.write_char(if *value { '1' } else { '0' })
    }
}

fn parse_tile_word(word: &str, message: &'static str, field: &'static str) -> Result<Option<Tile>, ClassicParseError> {
    if word == "--" {
        return Ok(None);
    }
    Tile::from_str(word).map(Some).map_err(|_| ClassicParseError::BadTile { message, field, value: snippet(word) })
}

/// A tile that must be real.
struct TileCode;
impl FieldCodec for TileCode {
    type Value = Tile;
    fn parse(cur: &mut Cursor<'_>, field: &'static str) -> Result<Tile, ClassicParseError> {
        let word = cur.token(field)?;
        parse_tile_word(word, cur.message, field)?.ok_or(ClassicParseError::HiddenTile { message: cur.message, field })
    }
    fn write(value: &Tile, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        out.write_str(value.code())
    }
}

/// A tile that may be hidden or absent (`--`).
struct MaybeTile;
impl FieldCodec for MaybeTile {
    type Value = Option<Tile>;
    fn parse(cur: &mut Cursor<'_>, field: &'static str) -> Result<Option<Tile>, ClassicParseError> {
        let word = cur.token(field)?;
        parse_tile_word(word, cur.message, field)
    }
    fn write(value: &Option<Tile>, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        out.write_str(value.map_or("--", Tile::code))
    }
}

/// A wind written as one letter.
struct WindLetter;
impl FieldCodec for WindLetter {
    type Value = Wind;
    fn parse(cur: &mut Cursor<'_>, field: &'static str) -> Result<Wind, ClassicParseError> {
        let word = cur.token(field)?;
        Wind::from_letter(word).ok_or_else(|| ClassicParseError::BadWind {
            message: cur.message,
            field,
            value: snippet(word),
        })
    }
    fn write(value: &Wind, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        out.write_char(value.letter())
    }
}

/// A chow position; `None` is the protocol's `AnyPos`.
struct ChowPos;
impl FieldCodec for ChowPos {
    type Value = Option<ChowPosition>;
    fn parse(cur: &mut Cursor<'_>, field: &'static str) -> Result<Option<ChowPosition>, ClassicParseError> {
        let word = cur.token(field)?;
        // The one-letter forms are an undocumented convenience of the reference
        // for people typing the protocol by hand.
        match word {
            "Lower" | "l" => Ok(Some(ChowPosition::Lower)),
            "Middle" | "m" => Ok(Some(ChowPosition::Middle)),
            "Upper" | "u" => Ok(Some(ChowPosition::Upper)),
            "AnyPos" | "a" => Ok(None),
            _ => Err(ClassicParseError::BadChowPosition { message: cur.message, field, value: snippet(word) }),
        }
    }
    fn write(value: &Option<ChowPosition>, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        out.write_str(value.map_or("AnyPos", ChowPosition::name))
    }
}

/// Writes a free-text field, escaping a leading space or backslash so that
/// the reader (which skips spaces and drops one leading backslash) gets it back.
fn write_text(text: &str, out: &mut fmt::Formatter<'_>) -> fmt::Result {
    if text.starts_with([' ', '\\']) {
        out.write_char('\\')?;
    }
    out.write_str(text)
}

/// The final free-text field (`char *` in the C structs).
struct Text;
impl FieldCodec for Text {
    type Value = String;
    fn parse(cur: &mut Cursor<'_>, _field: &'static str) -> Result<String, ClassicParseError> {
        Ok(cur.text().to_string())
    }
    fn write(value: &String, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_text(value, out)
    }
}

/// A word of at most 15 bytes without white space (`word16` in the C structs).
struct Word16;
impl FieldCodec for Word16 {
    type Value = String;
    fn parse(cur: &mut Cursor<'_>, field: &'static str) -> Result<String, ClassicParseError> {
        let word = cur.token(field)?;
        if word.len() > 15 {
            return Err(ClassicParseError::WordTooLong { message: cur.message, field, value: snippet(word) });
        }
        Ok(word.to_string())
    }
    fn write(value: &String, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        out.write_str(value)
    }
}

/// A text field holding space-separated tile codes (concealed tiles shown,
/// the wall).
struct TileList;
impl FieldCodec for TileList {
    type Value = Vec<Tile>;
    fn parse(cur: &mut Cursor<'_>, field: &'static str) -> Result<Vec<Tile>, ClassicParseError> {
        let message = cur.message;
        cur.text()
            .split(is_c_space)
            .filter(|w| !w.is_empty())
            .map(|w| parse_tile_word(w, message, field)?.ok_or(ClassicParseError::HiddenTile { message, field }))
            .collect()
    }
    fn write(value: &Vec<Tile>, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, t) in value.iter().enumerate() {
            if i > 0 {
                out.write_char(' ')?;
            }
            out.write_str(t.code())?;
        }
        Ok(())
    }
}

/// Options a player can ask the server to apply to its own connection
/// (`PlayerOption` in the reference's `player.h`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PlayerOption {
    /// Option 0 of the reference: no option.
    Unknown,
    /// Send `InfoTiles` messages after every change of the player's hand.
    InfoTiles,
    /// Minimum delay between actions, in deciseconds (the server may ignore it).
    DelayTime,
    /// The client handles claim timeouts itself.
    LocalTimeouts,
}

impl PlayerOption {
    /// The protocol word for this option.
    pub fn name(self) -> &'static str {
        match self {
            PlayerOption::Unknown => "Unknown",
            PlayerOption::InfoTiles => "InfoTiles",
            PlayerOption::DelayTime => "DelayTime",
            PlayerOption::LocalTimeouts => "LocalTimeouts",
        }
    }

    /// Parses a protocol word; `None` if it names no option.
    pub fn from_name(word: &str) -> Option<PlayerOption> {
        match word {
            "Unknown" => Some(PlayerOption::Unknown),
            "InfoTiles" => Some(PlayerOption::InfoTiles),
            "DelayTime" => Some(PlayerOption::DelayTime),
            "LocalTimeouts" => Some(PlayerOption::LocalTimeouts),
            _ => None,
        }
    }
}

struct PlayerOpt;
impl FieldCodec for PlayerOpt {
    type Value = PlayerOption;
    fn parse(cur: &mut Cursor<'_>, field: &'static str) -> Result<PlayerOption, ClassicParseError> {
        let word = cur.token(field)?;
        PlayerOption::from_name(word).ok_or_else(|| ClassicParseError::BadPlayerOption {
            message: cur.message,
            field,
            value: snippet(word),
        })
    }
    fn write(value: &PlayerOption, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        out.write_str(value.name())
    }
}

/// One game option as carried by a `GameOption` message, with its fields kept
/// as written: interpreting the value depends on the type word and is the job
/// of [`crate::rules::options`].
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GameOptionEntry {
    /// Short option name, e.g. `ScoreLimit`; the pseudo-option `End` closes a list.
    pub name: String,
    /// The type word: `bool`, `int`, `nat`, `score` or `string`.
    pub option_type: String,
    /// Lowest protocol version a client needs to use this option.
    pub protversion: i32,
    /// Whether the option is understood in this game.
    pub enabled: bool,
    /// The value exactly as written (a decimal integer, or a word for strings).
    pub value: String,
    /// Short human-readable description; may be empty.
    pub desc: String,
}

struct OptionEntry;
impl FieldCodec for OptionEntry {
    type Value = GameOptionEntry;
    fn parse(cur: &mut Cursor<'_>, _field: &'static str) -> Result<GameOptionEntry, ClassicParseError> {
        let name = cur.token("name")?.to_string();
        let option_type = cur.token("type")?.to_string();
        let protversion = Int::parse(cur, "protversion")?;
        let enabled = Flag::parse(cur, "enabled")?;
        let value = cur.token("value")?.to_string();
        let desc = cur.raw_rest().to_string();
        Ok(GameOptionEntry { name, option_type, protversion, enabled, value, desc })
    }
    fn write(e: &GameOptionEntry, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(out, "{} {} {} ", e.name, e.option_type, e.protversion)?;
        Flag::write(&e.enabled, out)?;
        write!(out, " {} {}", e.value, e.desc)
    }
}

/// The name a message has on the wire: its variant name unless overridden.
macro_rules! wire_name {
    ($variant:ident) => {
        stringify!($variant)
    };
    ($variant:ident $wire:literal) => {
        $wire
    };
}

/// Declares a message enum together with its parser, printer and names, from
/// one table of variants and typed fields (`field: RustType = Codec`).
macro_rules! messages {
    (
        $(#[$enum_meta:meta])*
        pub enum $Enum:ident ($side:literal) {
            $(
                $(#[$var_meta:meta])*
                $Variant:ident $([wire $wire:literal])? $([alias $($alias:literal),+])?
                $({
                    $( $(#[$f_meta:meta])* $field:ident : $ty:ty = $codec:ident ),* $(,)?
                })?
            ),* $(,)?
        }
    ) => {
        $(#[$enum_meta])*
        #[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
        pub enum $Enum {
            $(
                $(#[$var_meta])*
                $Variant $({ $( $(#[$f_meta])* $field: $ty ),* })?,
            )*
        }

        impl $Enum {
            /// Parses one message line (without its CR LF; a multi-line text
            /// field keeps its inner line feeds). Never panics.
            pub fn parse(line: &str) -> Result<Self, ClassicParseError> {
                let start = line.trim_start_matches(is_c_space);
                let end = start.find(is_c_space).unwrap_or(start.len());
                let (name, rest) = start.split_at(end);
                if name.is_empty() {
                    return Err(ClassicParseError::Empty { side: $side });
                }
                match name {
                    $(
                        wire_name!($Variant $($wire)?) $($(| $alias)+)? => {
                            #[allow(unused_mut)]
                            let mut cur = Cursor { rest, message: stringify!($Variant) };
                            let msg = $Enum::$Variant $({
                                $( $field: $codec::parse(&mut cur, stringify!($field))? ),*
                            })?;
                            cur.finish()?;
                            Ok(msg)
                        }
                    )*
                    _ => Err(ClassicParseError::UnknownMessageType { side: $side, name: snippet(name) }),
                }
            }

            /// The message name, e.g. `"PlayerDiscards"` (the C type name
            /// without its prefix; `Comment` for the message written `#`).
            pub fn message_type(&self) -> &'static str {
                match self {
                    $( $Enum::$Variant { .. } => stringify!($Variant), )*
                }
            }
        }

        impl fmt::Display for $Enum {
            /// Prints the message line exactly as the reference encodes it
            /// (without CR LF).
            fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self {
                    $(
                        $Enum::$Variant $({ $($field),* })? => {
                            out.write_str(wire_name!($Variant $($wire)?))?;
                            $($(
                                out.write_char(' ')?;
                                $codec::write($field, out)?;
                            )*)?
                            Ok(())
                        }
                    )*
                }
            }
        }

        impl FromStr for $Enum {
            type Err = ClassicParseError;
            fn from_str(line: &str) -> Result<Self, ClassicParseError> {
                $Enum::parse(line)
            }
        }
    };
}

messages! {
    /// A message from the server (the controller) to a player: the `CMsg`
    /// types of the reference. Fields are named as in the C structs.
    pub enum ControllerMessage ("controller") {
        /// A request was refused; `error` says why.
        Error {
            /// Sequence number of the player message that caused the error, or 0.
            seqno: i32 = Int,
            /// Human-readable explanation.
            error: String = Text,
        },
        /// Informational, human-readable view of a player's tiles.
        InfoTiles {
            /// Player concerned.
            id: i32 = Int,
            /// The tiles, in the reference's free display format.
            tileinfo: String = Text,
        },
        /// The game state was saved.
        StateSaved {
            /// Player who asked for the save.
            id: i32 = Int,
            /// File the server saved to.
            filename: String = Text,
        },
        /// Answer to `Connect`.
        ConnectReply {
            /// Protocol version of the server.
            pvers: i32 = Int,
            /// Id assigned to the player; 0 means the connection is refused.
            id: i32 = Int,
            /// Why the connection was refused (empty otherwise).
            reason: String = Text,
        },
        /// A reconnection request was granted.
        Reconnect,
        /// The server requires authentication.
        AuthReqd {
            /// Kind of authentication, currently `basic`.
            authtype: String = Word16,
            /// Extra data for the authentication.
            authdata: String = Text,
        },
        /// The client should reconnect elsewhere (`host:port`).
        Redirect {
            /// The new address.
            dest: String = Text,
        },
        /// Introduces a player (or renames it; an empty name deletes it).
        Player {
            /// Player id.
            id: i32 = Int,
            /// Player name.
            name: String = Text,
        },
        /// The prevailing wind changes.
        NewRound {
            /// Wind of the new round.
            round: Wind = WindLetter,
        },
        /// Starts (or resumes) a game: seating, round and scores.
        Game {
            /// Id of the player in the East seat.
            east: i32 = Int,
            /// Id of South.
            south: i32 = Int,
            /// Id of West.
            west: i32 = Int,
            /// Id of North.
            north: i32 = Int,
            /// Prevailing wind.
            round: Wind = WindLetter,
            /// Hands already completed with this dealer.
            hands_as_east: i32 = Int,
            /// Id of the first East of the game.
            firsteast: i32 = Int,
            /// East's score so far.
            east_score: i32 = Int,
            /// South's score so far.
            south_score: i32 = Int,
            /// West's score so far.
            west_score: i32 = Int,
            /// North's score so far.
            north_score: i32 = Int,
            /// Protocol version used in this game.
            protversion: i32 = Int,
            /// Id of the player managing the game (0 for none).
            manager: i32 = Int,
        },
        /// A new hand starts.
        NewHand {
            /// Id of this hand's East.
            east: i32 = Int,
            /// Wall (as a seat number) where the live wall notionally starts.
            start_wall: i32 = Int,
            /// Stack (from the right) where the live wall notionally starts.
            start_stack: i32 = Int,
        },
        /// A player sets a flower or season aside; `None` means it has no more.
        PlayerDeclaresSpecial {
            /// Player declaring.
            id: i32 = Int,
            /// The bonus tile, or `None` (`--`) when finished.
            tile: Option<Tile> = MaybeTile,
        },
        /// Play may start (or resume).
        StartPlay {
            /// Player due to act.
            id: i32 = Int,
        },
        /// Play is stopped.
        StopPlay {
            /// Why.
            reason: String = Text,
        },
        /// The server asks the players to confirm with `Ready`.
        Pause {
            /// 0, or the one player not asked to confirm.
            exempt: i32 = Int,
            /// 0, or the player who asked for the pause.
            requestor: i32 = Int,
            /// Why, phrased as an infinitive (`to start play`).
            reason: String = Text,
        },
        /// A player has confirmed a pause.
        PlayerReady {
            /// That player.
            id: i32 = Int,
        },
        /// A draw from the live wall (`None` in the copies for other players).
        PlayerDraws {
            /// Player drawing.
            id: i32 = Int,
            /// The tile drawn, hidden (`--`) from everybody but the drawer.
            tile: Option<Tile> = MaybeTile,
        },
        /// A draw of a loose tile from the dead wall.
        PlayerDrawsLoose {
            /// Player drawing.
            id: i32 = Int,
            /// The tile drawn, hidden (`--`) from everybody but the drawer.
            tile: Option<Tile> = MaybeTile,
        },
        /// A discard.
        PlayerDiscards {
            /// Player discarding.
            id: i32 = Int,
            /// The tile discarded.
            tile: Tile = TileCode,
            /// Serial number of the discard within the hand.
            discard: i32 = Int,
            /// The player declares Calling.
            calling: bool = Flag,
        },
        /// A claim was refused.
        ClaimDenied {
            /// Player whose claim was refused.
            id: i32 = Int,
            /// Why.
            reason: String = Text,
        },
        /// Acknowledges a `NoClaim`.
        PlayerDoesntClaim {
            /// Player.
            id: i32 = Int,
            /// Serial of the current discard.
            discard: i32 = Int,
            /// The server generated it on a timeout.
            timeout: bool = Flag,
        },
        /// The claimed discard was dangerous.
        DangerousDiscard {
            /// The discarder.
            id: i32 = Int,
            /// Serial of the dangerous discard.
            discard: i32 = Int,
            /// The discarder had no safe alternative.
            nochoice: bool = Flag,
        },
        /// A pung claim was made (not yet granted).
        PlayerClaimsPung {
            /// Claimant.
            id: i32 = Int,
            /// Serial of the discard claimed.
            discard: i32 = Int,
        },
        /// A pung claim was granted.
        PlayerPungs {
            /// Claimant.
            id: i32 = Int,
            /// Tile of the pung.
            tile: Tile = TileCode,
        },
        /// A concealed pung formed after Mah-Jong.
        PlayerFormsClosedPung {
            /// Player.
            id: i32 = Int,
            /// Tile of the pung.
            tile: Tile = TileCode,
        },
        /// A kong claim was made (not yet granted).
        PlayerClaimsKong {
            /// Claimant.
            id: i32 = Int,
            /// Serial of the discard claimed.
            discard: i32 = Int,
        },
        /// A kong claim was granted.
        PlayerKongs {
            /// Claimant.
            id: i32 = Int,
            /// Tile of the kong.
            tile: Tile = TileCode,
        },
        /// A concealed kong was declared; it may still be robbed.
        PlayerDeclaresClosedKong {
            /// Player.
            id: i32 = Int,
            /// Tile of the kong.
            tile: Tile = TileCode,
            /// Serial given to the kong (for robbing claims).
            discard: i32 = Int,
        },
        /// A drawn tile was added to an exposed pung; the kong may be robbed.
        PlayerAddsToPung {
            /// Player.
            id: i32 = Int,
            /// The tile added.
            tile: Tile = TileCode,
            /// Serial given to the kong (for robbing claims).
            discard: i32 = Int,
        },
        /// The kong just declared is robbed: this player goes out with it.
        PlayerRobsKong {
            /// The robber.
            id: i32 = Int,
            /// The tile robbed.
            tile: Tile = TileCode,
        },
        /// Answer to `QueryMahJong`.
        CanMahJong {
            /// The tile asked about (`None`: no extra tile).
            tile: Option<Tile> = MaybeTile,
            /// Whether that makes a Mah-Jong hand.
            answer: bool = Flag,
        },
        /// A chow claim was made (not yet granted).
        PlayerClaimsChow {
            /// Claimant.
            id: i32 = Int,
            /// Serial of the discard claimed.
            discard: i32 = Int,
            /// Position of the discard in the chow; `None` is `AnyPos`.
            cpos: Option<ChowPosition> = ChowPos,
        },
        /// A chow claim was granted (also used for the Mah-Jong discard).
        PlayerChows {
            /// Claimant.
            id: i32 = Int,
            /// The claimed tile.
            tile: Tile = TileCode,
            /// Its position in the chow; `None` (`AnyPos`) asks the claimant to choose.
            cpos: Option<ChowPosition> = ChowPos,
        },
        /// A concealed chow formed after Mah-Jong.
        PlayerFormsClosedChow {
            /// Player.
            id: i32 = Int,
            /// Lowest tile of the chow.
            tile: Tile = TileCode,
        },
        /// The hand is void.
        WashOut {
            /// Why (`wall exhausted`).
            reason: String = Text,
        },
        /// A Mah-Jong claim was made (not yet granted).
        PlayerClaimsMahJong {
            /// Claimant.
            id: i32 = Int,
            /// Serial of the discard or kong claimed.
            discard: i32 = Int,
        },
        /// A player goes out.
        PlayerMahJongs {
            /// The winner.
            id: i32 = Int,
            /// The tile just drawn, or `None` (`--`) when going out on the discard.
            tile: Option<Tile> = MaybeTile,
        },
        /// The Mah-Jong discard was taken for a pair.
        PlayerPairs {
            /// Player.
            id: i32 = Int,
            /// Tile of the pair.
            tile: Tile = TileCode,
        },
        /// A concealed pair formed after Mah-Jong.
        PlayerFormsClosedPair {
            /// Player.
            id: i32 = Int,
            /// Tile of the pair.
            tile: Tile = TileCode,
        },
        /// A player reveals its remaining concealed tiles.
        PlayerShowsTiles {
            /// Player.
            id: i32 = Int,
            /// The concealed tiles, in the order given.
            tiles: Vec<Tile> = TileList,
        },
        /// The discard was claimed to form a special hand with all concealed tiles.
        PlayerSpecialSet {
            /// Player.
            id: i32 = Int,
            /// The discard.
            tile: Tile = TileCode,
            /// The concealed tiles.
            tiles: Vec<Tile> = TileList,
        },
        /// A special hand was formed from the concealed tiles.
        PlayerFormsClosedSpecialSet {
            /// Player.
            id: i32 = Int,
            /// The concealed tiles.
            tiles: Vec<Tile> = TileList,
        },
        /// A player option was set (or the server asks for it to be acknowledged).
        PlayerOptionSet {
            /// The option.
            option: PlayerOption = PlayerOpt,
            /// This acknowledges a client request.
            ack: bool = Flag,
            /// Value of an integer or boolean option.
            value: i32 = Int,
            /// Value of a string option.
            text: String = Text,
        },
        /// The score of one player's hand, with its explanation.
        HandScore {
            /// Player.
            id: i32 = Int,
            /// Score of the hand.
            score: i32 = Int,
            /// Multi-line breakdown; ends with the `SCORE:` line.
            explanation: String = Text,
        },
        /// Change of each seat's score at the end of a hand.
        Settlement {
            /// Change for the East seat of the hand (by seat, not id).
            east: i32 = Int,
            /// Change for South.
            south: i32 = Int,
            /// Change for West.
            west: i32 = Int,
            /// Change for North.
            north: i32 = Int,
            /// Multi-line list of payments.
            explanation: String = Text,
        },
        /// The game is over.
        GameOver,
        /// The value of one game option (lists end with the pseudo-option `End`).
        GameOption {
            /// Player who set it, or 0.
            id: i32 = Int,
            /// The option.
            optentry: GameOptionEntry = OptionEntry,
        },
        /// The game has a new manager.
        ChangeManager {
            /// Player who asked for the change.
            id: i32 = Int,
            /// New manager, or 0 for none.
            manager: i32 = Int,
        },
        /// A chat message.
        Message {
            /// Sender id, or 0 for the server.
            sender: i32 = Int,
            /// Addressee id, or 0 for everybody.
            addressee: i32 = Int,
            /// The message.
            text: String = Text,
        },
        /// Sets up the wall (used by the server internally and for testing).
        Wall {
            /// The wall, as space-separated tile codes.
            wall: Vec<Tile> = TileList,
        },
        /// A comment in a file of protocol commands; written `#` on the wire.
        Comment [wire "#"] [alias "Comment"] {
            /// The comment.
            comment: String = Text,
        },
        /// Debugging: the server swapped a tile of a player's hand with one in the wall.
        SwapTile {
            /// Player concerned.
            id: i32 = Int,
            /// Tile taken out of the hand.
            oldtile: Tile = TileCode,
            /// Tile put in its place.
            newtile: Tile = TileCode,
        },
    }
}

messages! {
    /// A message from a player to the server: the `PMsg` types of the
    /// reference. Fields are named as in the C structs. The reference's short
    /// aliases (`ds`, `d`, `n`, `p`, `k`, `ck`, `c`, `st`) are accepted when
    /// parsing; printing always uses the full name.
    pub enum PlayerMessage ("player") {
        /// Asks the server to save the game.
        SaveState {
            /// Suggested file name (may be empty).
            filename: String = Text,
        },
        /// Asks the server to load a saved game.
        LoadState {
            /// File to load.
            filename: String = Text,
        },
        /// First message of a connection.
        Connect {
            /// Protocol version of the client.
            pvers: i32 = Int,
            /// Id from a previous session, or 0.
            last_id: i32 = Int,
            /// Player name.
            name: String = Text,
        },
        /// Asks to reconnect without dropping the connection.
        RequestReconnect,
        /// Authentication data.
        AuthInfo {
            /// Kind of authentication, currently `basic`.
            authtype: String = Word16,
            /// The data.
            authdata: String = Text,
        },
        /// New authentication data.
        NewAuthInfo {
            /// Kind of authentication, currently `basic`.
            authtype: String = Word16,
            /// The data.
            authdata: String = Text,
        },
        /// Leaves the game.
        Disconnect,
        /// Declares a flower or season; `None` (`--`) means none left.
        DeclareSpecial [alias "ds"] {
            /// The bonus tile, or `None` when finished.
            tile: Option<Tile> = MaybeTile,
        },
        /// Asks for a pause.
        RequestPause {
            /// Why.
            reason: String = Text,
        },
        /// Confirms a pause.
        Ready,
        /// Discards a tile.
        Discard [alias "d"] {
            /// The tile.
            tile: Tile = TileCode,
            /// Declares Calling.
            calling: bool = Flag,
        },
        /// No claim on the discard (or kong) with this serial.
        NoClaim [alias "n"] {
            /// Serial of the discard.
            discard: i32 = Int,
        },
        /// Claims a pung.
        Pung [alias "p"] {
            /// Serial of the discard (0 after Mah-Jong).
            discard: i32 = Int,
        },
        /// Forms a concealed pung after Mah-Jong.
        FormClosedPung {
            /// Tile of the pung.
            tile: Tile = TileCode,
        },
        /// Claims a kong.
        Kong [alias "k"] {
            /// Serial of the discard.
            discard: i32 = Int,
        },
        /// Declares a concealed kong.
        DeclareClosedKong [alias "ck"] {
            /// Tile of the kong.
            tile: Tile = TileCode,
        },
        /// Adds the drawn tile to an exposed pung.
        AddToPung {
            /// Tile of the pung.
            tile: Tile = TileCode,
        },
        /// Asks whether the hand (plus a tile) is Mah-Jong.
        QueryMahJong {
            /// The extra tile, or `None` for the hand as it is.
            tile: Option<Tile> = MaybeTile,
        },
        /// Claims a chow (or, after Mah-Jong with serial 0, uses the discard in one).
        Chow [alias "c"] {
            /// Serial of the discard.
            discard: i32 = Int,
            /// Where the discard goes in the chow; `None` is `AnyPos`.
            cpos: Option<ChowPosition> = ChowPos,
        },
        /// Forms a concealed chow after Mah-Jong.
        FormClosedChow {
            /// Lowest tile of the chow.
            tile: Tile = TileCode,
        },
        /// Declares the hand void.
        DeclareWashOut,
        /// Claims Mah-Jong.
        MahJong {
            /// Serial of the discard or kong claimed; 0 when going out on one's own draw.
            discard: i32 = Int,
        },
        /// Takes the Mah-Jong discard for a pair.
        Pair,
        /// Forms a concealed pair after Mah-Jong.
        FormClosedPair {
            /// Tile of the pair.
            tile: Tile = TileCode,
        },
        /// Reveals the concealed tiles and asks for the hand to be scored.
        ShowTiles,
        /// Claims the discard to form a special hand.
        SpecialSet,
        /// Forms a special hand from the concealed tiles.
        FormClosedSpecialSet,
        /// Sets (or acknowledges) a player option.
        SetPlayerOption {
            /// The option.
            option: PlayerOption = PlayerOpt,
            /// This acknowledges a server request.
            ack: bool = Flag,
            /// Value of an integer or boolean option.
            value: i32 = Int,
            /// Value of a string option.
            text: String = Text,
        },
        /// Sets a game option.
        SetGameOption {
            /// Option name.
            optname: String = Word16,
            /// Text form of the new value.
            optvalue: String = Text,
        },
        /// Asks for one game option.
        QueryGameOption {
            /// Option name.
            optname: String = Word16,
        },
        /// Asks for all game options.
        ListGameOptions {
            /// Also list disabled options.
            include_disabled: bool = Flag,
        },
        /// Asks for a new manager.
        ChangeManager {
            /// New manager, or 0 for none.
            manager: i32 = Int,
        },
        /// Sends a chat message.
        SendMessage {
            /// Addressee id, or 0 for everybody.
            addressee: i32 = Int,
            /// The message.
            text: String = Text,
        },
        /// Debugging: swap a tile of a player's hand with one from the wall.
        SwapTile [alias "st"] {
            /// Player concerned.
            id: i32 = Int,
            /// Tile to take out of the hand.
            oldtile: Tile = TileCode,
            /// Tile to put in its place.
            newtile: Tile = TileCode,
        },
    }
}

/// What a move's meaning depends on, in the hand's state: mj-server reads
/// `Chow`, `Pung` and `MahJong` differently at different moments.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MoveContext {
    /// The player has gone out on a discard and is saying how it uses it.
    pub mah_jonging: bool,
    /// A chow of the player's was granted without a position.
    pub chow_position_pending: bool,
    /// A discard (or a kong) is open to claims.
    pub claim_window_open: bool,
}

impl PlayerMessage {
    /// The engine's move this message makes in `context`; `None` for a
    /// message that is not a move (`Ready`, option queries...).
    pub fn to_action(&self, context: MoveContext) -> Option<Action> {
        use PlayerMessage as P;
        let serial = |d: &i32| u32::try_from(*d).unwrap_or(0);
        Some(match self {
            P::DeclareSpecial { tile: Some(t) } => Action::DeclareBonus { tile: *t },
            P::DeclareSpecial { tile: None } => Action::FinishDeclaring,
            P::Discard { tile, calling } => Action::Discard { tile: *tile, calling: *calling },
            P::NoClaim { discard } => Action::Pass { discard: serial(discard) },
            P::Chow { cpos, .. } if context.mah_jonging => Action::UseDiscard { use_as: DiscardUse::Chow(*cpos) },
            P::Chow { cpos: Some(position), .. } if context.chow_position_pending => {
                Action::ChooseChowPosition { position: *position }
            }
            P::Chow { discard, cpos } => Action::Claim { discard: serial(discard), claim: Claim::Chow(*cpos) },
            P::Pung { .. } if context.mah_jonging => Action::UseDiscard { use_as: DiscardUse::Pung },
            P::Pung { discard } => Action::Claim { discard: serial(discard), claim: Claim::Pung },
            P::Kong { discard } => Action::Claim { discard: serial(discard), claim: Claim::Kong },
            P::MahJong { discard } if context.claim_window_open => {
                Action::Claim { discard: serial(discard), claim: Claim::MahJong }
            }
            P::MahJong { .. } => Action::MahJong,
            P::DeclareClosedKong { tile } => Action::DeclareClosedKong { tile: *tile },
            P::AddToPung { tile } => Action::AddToPung { tile: *tile },
            P::Pair => Action::UseDiscard { use_as: DiscardUse::Pair },
            P::SpecialSet => Action::UseDiscard { use_as: DiscardUse::SpecialSet },
            P::FormClosedPung { tile } => Action::FormClosedSet { set: ClosedSet::Pung(*tile) },
            P::FormClosedChow { tile } => Action::FormClosedSet { set: ClosedSet::Chow(*tile) },
            P::FormClosedPair { tile } => Action::FormClosedSet { set: ClosedSet::Pair(*tile) },
            P::FormClosedSpecialSet => Action::FormClosedSet { set: ClosedSet::SpecialSet },
            P::ShowTiles => Action::ShowTiles,
            _ => return None,
        })
    }

    /// The message an mj-server client sends for the engine's move: the
    /// inverse of [`PlayerMessage::to_action`] in the move's own context
    /// (`discard` is the serial of the discard open to claims, which a chow's
    /// position refers to). `None` for East's tile swap, which the protocol
    /// cannot say.
    pub fn from_action(action: &Action, discard: u32) -> Option<PlayerMessage> {
        use PlayerMessage as P;
        let serial = |d: u32| i32::try_from(d).unwrap_or(i32::MAX);
        Some(match action {
            Action::DeclareBonus { tile } => P::DeclareSpecial { tile: Some(*tile) },
            Action::FinishDeclaring => P::DeclareSpecial { tile: None },
            Action::Discard { tile, calling } => P::Discard { tile: *tile, calling: *calling },
            Action::Pass { discard } => P::NoClaim { discard: serial(*discard) },
            Action::Claim { discard, claim } => {
                let discard = serial(*discard);
                match claim {
                    Claim::Chow(cpos) => P::Chow { discard, cpos: *cpos },
                    Claim::Pung => P::Pung { discard },
                    Claim::Kong => P::Kong { discard },
                    Claim::MahJong => P::MahJong { discard },
                }
            }
            Action::ChooseChowPosition { position } => P::Chow { discard: serial(discard), cpos: Some(*position) },
            // Going out on one's own draw, and using the Mah-Jong discard:
            // serial 0, as mj-server's clients send them.
            Action::MahJong => P::MahJong { discard: 0 },
            Action::UseDiscard { use_as } => match use_as {
                DiscardUse::Chow(cpos) => P::Chow { discard: 0, cpos: *cpos },
                DiscardUse::Pung => P::Pung { discard: 0 },
                DiscardUse::Pair => P::Pair,
                DiscardUse::SpecialSet => P::SpecialSet,
            },
            Action::DeclareClosedKong { tile } => P::DeclareClosedKong { tile: *tile },
            Action::AddToPung { tile } => P::AddToPung { tile: *tile },
            Action::FormClosedSet { set } => match set {
                ClosedSet::Pung(tile) => P::FormClosedPung { tile: *tile },
                ClosedSet::Chow(tile) => P::FormClosedChow { tile: *tile },
                ClosedSet::Pair(tile) => P::FormClosedPair { tile: *tile },
                ClosedSet::SpecialSet => P::FormClosedSpecialSet,
            },
            Action::ShowTiles => P::ShowTiles,
            Action::ChooseSwap { .. } | Action::PassTile { .. } => return None,
        })
    }
}

/// Escapes one message line for a socket and appends CR LF, as the reference
/// server writes it: backslashes are doubled and every inner line feed
/// becomes backslash CR LF, so a multi-line message is sent as several
/// physical lines each ending in a backslash except the last.
pub fn encode_wire(line: &str) -> String {
    let mut out = String::with_capacity(line.len() + 2);
    for c in line.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\\r\n"),
            c => out.push(c),
        }
    }
    out.push_str("\r\n");
    out
}

/// Reassembles message lines from the physical lines of a socket, undoing
/// [`encode_wire`] the way the reference's `get_line` does: a physical line
/// ending in an odd number of backslashes continues on the next one (the
/// backslash standing for a line feed), and any other backslash is dropped
/// while the character after it is kept.
#[derive(Clone, Debug, Default)]
pub struct WireLineDecoder {
    pending: String,
}

impl WireLineDecoder {
    /// A decoder with nothing pending.
    pub fn new() -> WireLineDecoder {
        WireLineDecoder::default()
    }

    /// Feeds one physical line (with or without its LF / CR LF). Returns the
    /// complete message line once its last physical line has arrived.
    pub fn push_line(&mut self, physical: &str) -> Option<String> {
        let line = physical.strip_suffix('\n').unwrap_or(physical);
        let line = line.strip_suffix('\r').unwrap_or(line);
        let trailing = line.len() - line.trim_end_matches('\\').len();
        if trailing % 2 == 1 {
            // The odd backslash is the continuation mark: it stands for the
            // line feed, and must not take part in unescaping.
            self.pending.push_str(&line[..line.len() - 1]);
            self.pending.push('\n');
            return None;
        }
        self.pending.push_str(line);
        let raw = std::mem::take(&mut self.pending);
        let mut out = String::with_capacity(raw.len());
        let mut chars = raw.chars();
        while let Some(c) = chars.next() {
            if c == '\\' {
                if let Some(next) = chars.next() {
                    out.push(next);
                }
            } else {
                out.push(c);
            }
        }
        Some(out)
    }

    /// True while a multi-line message is only partly received.
    pub fn is_pending(&self) -> bool {
        !self.pending.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn t(code: &str) -> Tile {
        code.parse().expect("test tile code")
    }

    fn cround(line: &str) -> ControllerMessage {
        let m = ControllerMessage::parse(line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
        assert_eq!(m.to_string(), line, "round trip of {line:?}");
        m
    }

    fn pround(line: &str) -> PlayerMessage {
        let m = PlayerMessage::parse(line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
        assert_eq!(m.to_string(), line, "round trip of {line:?}");
        m
    }

    #[test]
    fn every_move_is_written_as_the_message_that_reads_back_as_it() {
        use crate::rules::command::{Action, Claim, ClosedSet, DiscardUse};
        let tile = t("5D");
        let open = MoveContext { claim_window_open: true, ..MoveContext::default() };
        let going_out = MoveContext { mah_jonging: true, ..MoveContext::default() };
        let placing = MoveContext { chow_position_pending: true, ..MoveContext::default() };
        let plain = MoveContext::default();
        let moves = [
            (Action::DeclareBonus { tile: t("2F") }, plain, "DeclareSpecial 2F"),
            (Action::FinishDeclaring, plain, "DeclareSpecial --"),
            (Action::Discard { tile, calling: true }, plain, "Discard 5D 1"),
            (Action::Pass { discard: 7 }, open, "NoClaim 7"),
            (Action::Claim { discard: 7, claim: Claim::Chow(None) }, open, "Chow 7 AnyPos"),
            (Action::Claim { discard: 7, claim: Claim::Chow(Some(ChowPosition::Upper)) }, open, "Chow 7 Upper"),
            (Action::Claim { discard: 7, claim: Claim::Pung }, open, "Pung 7"),
            (Action::Claim { discard: 7, claim: Claim::Kong }, open, "Kong 7"),
            (Action::Claim { discard: 7, claim: Claim::MahJong }, open, "MahJong 7"),
            (Action::ChooseChowPosition { position: ChowPosition::Middle }, placing, "Chow 7 Middle"),
            (Action::MahJong, plain, "MahJong 0"),
            (Action::UseDiscard { use_as: DiscardUse::Chow(Some(ChowPosition::Lower)) }, going_out, "Chow 0 Lower"),
            (Action::UseDiscard { use_as: DiscardUse::Pung }, going_out, "Pung 0"),
            (Action::UseDiscard { use_as: DiscardUse::Pair }, going_out, "Pair"),
            (Action::UseDiscard { use_as: DiscardUse::SpecialSet }, going_out, "SpecialSet"),
            (Action::DeclareClosedKong { tile }, plain, "DeclareClosedKong 5D"),
            (Action::AddToPung { tile }, plain, "AddToPung 5D"),
            (Action::FormClosedSet { set: ClosedSet::Pung(tile) }, plain, "FormClosedPung 5D"),
            (Action::FormClosedSet { set: ClosedSet::Chow(tile) }, plain, "FormClosedChow 5D"),
            (Action::FormClosedSet { set: ClosedSet::Pair(tile) }, plain, "FormClosedPair 5D"),
            (Action::FormClosedSet { set: ClosedSet::SpecialSet }, plain, "FormClosedSpecialSet"),
            (Action::ShowTiles, plain, "ShowTiles"),
        ];
        for (action, context, line) in moves {
            let message = PlayerMessage::from_action(&action, 7).unwrap_or_else(|| panic!("{action:?}"));
            assert_eq!(message.to_string(), line, "{action:?}");
            assert_eq!(message.to_action(context), Some(action.clone()), "{line} in {context:?}");
        }
        assert_eq!(PlayerMessage::from_action(&Action::ChooseSwap { lots: 1 }, 7), None, "no words for the swap");
        assert_eq!(PlayerMessage::from_action(&Action::PassTile { tile }, 7), None);
    }

    #[test]
    fn controller_messages_seen_in_the_corpus() {
        assert_eq!(
            cround("ConnectReply 1110 1 "),
            ControllerMessage::ConnectReply { pvers: 1110, id: 1, reason: String::new() }
        );
        assert_eq!(cround("Player 2 R2"), ControllerMessage::Player { id: 2, name: "R2".into() });
        assert_eq!(
            cround("Game 1 2 3 4 E 0 1 0 0 0 0 1110 1"),
            ControllerMessage::Game {
                east: 1,
                south: 2,
                west: 3,
                north: 4,
                round: Wind::East,
                hands_as_east: 0,
                firsteast: 1,
                east_score: 0,
                south_score: 0,
                west_score: 0,
                north_score: 0,
                protversion: 1110,
                manager: 1,
            }
        );
        assert_eq!(
            cround("GameOption 0 ScoreLimit nat 0 1 1000 limit on hand score"),
            ControllerMessage::GameOption {
                id: 0,
                optentry: GameOptionEntry {
                    name: "ScoreLimit".into(),
                    option_type: "nat".into(),
                    protversion: 0,
                    enabled: true,
                    value: "1000".into(),
                    desc: "limit on hand score".into(),
                },
            }
        );
        cround("GameOption 0 End bool 0 1 1 end of option list");
        cround("GameOption 0 LosersPurity bool 0 1 0 losing hands score doubles for pure, concealed etc.");
        assert_eq!(
            cround("Pause 3 0 to start play"),
            ControllerMessage::Pause { exempt: 3, requestor: 0, reason: "to start play".into() }
        );
        assert_eq!(cround("PlayerReady 2"), ControllerMessage::PlayerReady { id: 2 });
        assert_eq!(cround("StartPlay 0"), ControllerMessage::StartPlay { id: 0 });
        assert_eq!(cround("NewRound S"), ControllerMessage::NewRound { round: Wind::South });
        assert_eq!(cround("NewHand 1 2 14"), ControllerMessage::NewHand { east: 1, start_wall: 2, start_stack: 14 });
        assert_eq!(cround("PlayerDraws 1 5D"), ControllerMessage::PlayerDraws { id: 1, tile: Some(t("5D")) });
        assert_eq!(cround("PlayerDraws 3 --"), ControllerMessage::PlayerDraws { id: 3, tile: None });
        assert_eq!(cround("PlayerDrawsLoose 2 RD"), ControllerMessage::PlayerDrawsLoose { id: 2, tile: Some(t("RD")) });
        assert_eq!(
            cround("PlayerDeclaresSpecial 4 2S"),
            ControllerMessage::PlayerDeclaresSpecial { id: 4, tile: Some(t("2S")) }
        );
        assert_eq!(
            cround("PlayerDeclaresSpecial 4 --"),
            ControllerMessage::PlayerDeclaresSpecial { id: 4, tile: None }
        );
        assert_eq!(
            cround("PlayerDiscards 2 NW 17 0"),
            ControllerMessage::PlayerDiscards { id: 2, tile: t("NW"), discard: 17, calling: false }
        );
        assert_eq!(
            cround("PlayerDoesntClaim 3 17 0"),
            ControllerMessage::PlayerDoesntClaim { id: 3, discard: 17, timeout: false }
        );
        assert_eq!(
            cround("PlayerClaimsChow 2 5 Middle"),
            ControllerMessage::PlayerClaimsChow { id: 2, discard: 5, cpos: Some(ChowPosition::Middle) }
        );
        assert_eq!(cround("PlayerClaimsPung 1 12"), ControllerMessage::PlayerClaimsPung { id: 1, discard: 12 });
        cround("PlayerClaimsKong 1 12");
        cround("PlayerClaimsMahJong 4 30");
        assert_eq!(
            cround("ClaimDenied 1 There was a prior claim"),
            ControllerMessage::ClaimDenied { id: 1, reason: "There was a prior claim".into() }
        );
        assert_eq!(
            cround("PlayerChows 2 7B Upper"),
            ControllerMessage::PlayerChows { id: 2, tile: t("7B"), cpos: Some(ChowPosition::Upper) }
        );
        assert_eq!(cround("PlayerPungs 1 WD"), ControllerMessage::PlayerPungs { id: 1, tile: t("WD") });
        cround("PlayerKongs 1 WD");
        cround("PlayerPairs 3 9C");
        assert_eq!(
            cround("PlayerDeclaresClosedKong 2 EW 33"),
            ControllerMessage::PlayerDeclaresClosedKong { id: 2, tile: t("EW"), discard: 33 }
        );
        cround("PlayerAddsToPung 2 6C 40");
        cround("PlayerRobsKong 4 6C");
        assert_eq!(
            cround("DangerousDiscard 3 41 1"),
            ControllerMessage::DangerousDiscard { id: 3, discard: 41, nochoice: true }
        );
        assert_eq!(cround("PlayerMahJongs 1 --"), ControllerMessage::PlayerMahJongs { id: 1, tile: None });
        cround("PlayerMahJongs 1 3B");
        cround("PlayerFormsClosedPung 1 RD");
        cround("PlayerFormsClosedChow 3 1D");
        cround("PlayerFormsClosedPair 1 RD");
        assert_eq!(
            cround("PlayerShowsTiles 3 3B 6B 5B 7D"),
            ControllerMessage::PlayerShowsTiles { id: 3, tiles: vec![t("3B"), t("6B"), t("5B"), t("7D")] }
        );
        assert_eq!(cround("WashOut wall exhausted"), ControllerMessage::WashOut { reason: "wall exhausted".into() });
        assert_eq!(cround("GameOver"), ControllerMessage::GameOver);
    }

    #[test]
    fn multi_line_texts_keep_their_line_feeds() {
        let line = "HandScore 1 36 basic        20 (going Mah Jong)\n6C-6C-6C      2 (open pung of minors)\ntotal pts    36\ntotal dbls    0\nSCORE:       36";
        match cround(line) {
            ControllerMessage::HandScore { id, score, explanation } => {
                assert_eq!((id, score), (1, 36));
                assert_eq!(explanation.lines().count(), 5);
                assert!(explanation.ends_with("SCORE:       36"));
            }
            other => panic!("{other:?}"),
        }
        let line = "Settlement 216 -64 -76 -76 South pays East     72\nEast  GAINS   216\n\nNorth LOSES    76\n\n";
        match cround(line) {
            ControllerMessage::Settlement { east, south, west, north, explanation } => {
                assert_eq!([east, south, west, north], [216, -64, -76, -76]);
                assert!(explanation.ends_with("76\n\n"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn player_messages_seen_in_the_corpus() {
        assert_eq!(pround("Connect 1110 0 R1"), PlayerMessage::Connect { pvers: 1110, last_id: 0, name: "R1".into() });
        assert_eq!(pround("ListGameOptions 0"), PlayerMessage::ListGameOptions { include_disabled: false });
        assert_eq!(pround("Ready"), PlayerMessage::Ready);
        assert_eq!(pround("DeclareSpecial --"), PlayerMessage::DeclareSpecial { tile: None });
        assert_eq!(pround("DeclareSpecial 3F"), PlayerMessage::DeclareSpecial { tile: Some(t("3F")) });
        assert_eq!(pround("Discard 9D 0"), PlayerMessage::Discard { tile: t("9D"), calling: false });
        assert_eq!(pround("NoClaim 12"), PlayerMessage::NoClaim { discard: 12 });
        assert_eq!(pround("Chow 12 Lower"), PlayerMessage::Chow { discard: 12, cpos: Some(ChowPosition::Lower) });
        assert_eq!(pround("Chow 0 AnyPos"), PlayerMessage::Chow { discard: 0, cpos: None });
        assert_eq!(pround("Pung 0"), PlayerMessage::Pung { discard: 0 });
        assert_eq!(pround("Kong 31"), PlayerMessage::Kong { discard: 31 });
        assert_eq!(pround("MahJong 0"), PlayerMessage::MahJong { discard: 0 });
        assert_eq!(pround("DeclareClosedKong GD"), PlayerMessage::DeclareClosedKong { tile: t("GD") });
        assert_eq!(pround("AddToPung 4C"), PlayerMessage::AddToPung { tile: t("4C") });
        assert_eq!(pround("Pair"), PlayerMessage::Pair);
        assert_eq!(pround("FormClosedPung SW"), PlayerMessage::FormClosedPung { tile: t("SW") });
        assert_eq!(pround("FormClosedChow 1C"), PlayerMessage::FormClosedChow { tile: t("1C") });
        assert_eq!(pround("FormClosedPair 8B"), PlayerMessage::FormClosedPair { tile: t("8B") });
        assert_eq!(pround("ShowTiles"), PlayerMessage::ShowTiles);
    }

    #[test]
    fn rarer_messages_round_trip() {
        for line in [
            "Error 7 You can't do that",
            "InfoTiles 2 1B 2B * 3C-3C-3C * 1F",
            "StateSaved 1 /tmp/game.mjs",
            "Reconnect",
            "AuthReqd basic ",
            "Redirect host:9000",
            "StopPlay lost connection",
            "CanMahJong -- 1",
            "CanMahJong 5D 0",
            "PlayerSpecialSet 1 NW 1B 9B 1C 9C",
            "PlayerFormsClosedSpecialSet 1 1B 9B",
            "PlayerOptionSet DelayTime 1 50 ",
            "ChangeManager 1 2",
            "Message 0 3 hello there",
            "Wall 1B 2B 3B",
            "# a comment",
            "SwapTile 2 1B 2B",
            "PlayerChows 2 7B AnyPos",
        ] {
            cround(line);
        }
        for line in [
            "SaveState ",
            "LoadState saved.mjs",
            "RequestReconnect",
            "AuthInfo basic secret",
            "NewAuthInfo basic newsecret",
            "Disconnect",
            "RequestPause tea",
            "QueryMahJong --",
            "DeclareWashOut",
            "SpecialSet",
            "FormClosedSpecialSet",
            "SetPlayerOption LocalTimeouts 0 1 ",
            "SetGameOption ScoreLimit 500",
            "QueryGameOption NumRounds",
            "ChangeManager 0",
            "SendMessage 0 good luck",
            "SwapTile 1 EW RD",
            "Discard 1F 1",
        ] {
            pround(line);
        }
    }

    #[test]
    fn aliases_are_accepted_and_printed_in_full() {
        assert_eq!(PlayerMessage::parse("d 5D 0").map(|m| m.to_string()), Ok("Discard 5D 0".into()));
        assert_eq!(PlayerMessage::parse("n 3").map(|m| m.to_string()), Ok("NoClaim 3".into()));
        assert_eq!(PlayerMessage::parse("c 3 m").map(|m| m.to_string()), Ok("Chow 3 Middle".into()));
        assert_eq!(PlayerMessage::parse("ds --").map(|m| m.to_string()), Ok("DeclareSpecial --".into()));
        let c = ControllerMessage::parse("Comment hello").expect("comment alias");
        assert_eq!(c.to_string(), "# hello");
        assert_eq!(c.message_type(), "Comment");
    }

    #[test]
    fn text_fields_escape_a_leading_space_or_backslash() {
        let m = ControllerMessage::Player { id: 1, name: " spaced".into() };
        assert_eq!(m.to_string(), "Player 1 \\ spaced");
        assert_eq!(ControllerMessage::parse(&m.to_string()), Ok(m));
        let m = PlayerMessage::Connect { pvers: 1110, last_id: 0, name: "\\back".into() };
        assert_eq!(m.to_string(), "Connect 1110 0 \\\\back");
        assert_eq!(PlayerMessage::parse(&m.to_string()), Ok(m));
        // A leading line feed is not escaped by the encoder and must survive.
        let m = ControllerMessage::HandScore { id: 1, score: 2, explanation: "\nx".into() };
        assert_eq!(ControllerMessage::parse(&m.to_string()), Ok(m));
        // An empty text still gets its separating space.
        assert_eq!(ControllerMessage::WashOut { reason: String::new() }.to_string(), "WashOut ");
        assert_eq!(ControllerMessage::parse("WashOut"), Ok(ControllerMessage::WashOut { reason: String::new() }));
    }

    #[test]
    fn message_type_names() {
        assert_eq!(cround("PlayerDiscards 2 NW 17 1").message_type(), "PlayerDiscards");
        assert_eq!(cround("GameOver").message_type(), "GameOver");
        assert_eq!(pround("NoClaim 1").message_type(), "NoClaim");
    }

    #[test]
    fn errors_are_specific() {
        use ClassicParseError as E;
        assert_eq!(ControllerMessage::parse(""), Err(E::Empty { side: "controller" }));
        assert_eq!(PlayerMessage::parse("  \t"), Err(E::Empty { side: "player" }));
        assert_eq!(
            ControllerMessage::parse("Discard 5D 0"),
            Err(E::UnknownMessageType { side: "controller", name: "Discard".into() })
        );
        assert_eq!(
            ControllerMessage::parse("PlayerDiscards 2 NW"),
            Err(E::MissingField { message: "PlayerDiscards", field: "discard" })
        );
        assert_eq!(
            ControllerMessage::parse("PlayerDiscards x NW 1 0"),
            Err(E::BadInteger { message: "PlayerDiscards", field: "id", value: "x".into() })
        );
        assert_eq!(
            ControllerMessage::parse("PlayerDiscards 99999999999 NW 1 0"),
            Err(E::BadInteger { message: "PlayerDiscards", field: "id", value: "99999999999".into() })
        );
        assert_eq!(
            ControllerMessage::parse("PlayerDiscards 1 0W 1 0"),
            Err(E::BadTile { message: "PlayerDiscards", field: "tile", value: "0W".into() })
        );
        assert_eq!(
            ControllerMessage::parse("PlayerDiscards 1 -- 1 0"),
            Err(E::HiddenTile { message: "PlayerDiscards", field: "tile" })
        );
        assert_eq!(
            ControllerMessage::parse("PlayerDiscards 1 1B 1 2"),
            Err(E::BadBool { message: "PlayerDiscards", field: "calling", value: "2".into() })
        );
        assert_eq!(
            ControllerMessage::parse("NewRound X"),
            Err(E::BadWind { message: "NewRound", field: "round", value: "X".into() })
        );
        assert_eq!(
            PlayerMessage::parse("Chow 3 Sideways"),
            Err(E::BadChowPosition { message: "Chow", field: "cpos", value: "Sideways".into() })
        );
        assert_eq!(
            PlayerMessage::parse("SetPlayerOption Volume 0 1 x"),
            Err(E::BadPlayerOption { message: "SetPlayerOption", field: "option", value: "Volume".into() })
        );
        assert_eq!(
            PlayerMessage::parse("QueryGameOption AVeryLongOptionName"),
            Err(E::WordTooLong { message: "QueryGameOption", field: "optname", value: "AVeryLongOptionName".into() })
        );
        assert_eq!(PlayerMessage::parse("Ready now"), Err(E::TrailingData { message: "Ready", extra: "now".into() }));
        assert_eq!(
            ControllerMessage::parse("PlayerShowsTiles 1 1B XX"),
            Err(E::BadTile { message: "PlayerShowsTiles", field: "tiles", value: "XX".into() })
        );
        let e = ControllerMessage::parse("GameOption 0 Timeout").expect_err("truncated option");
        assert_eq!(e, E::MissingField { message: "GameOption", field: "type" });
        assert_eq!(e.to_string(), "GameOption: missing field 'type'");
        let long = "Q".repeat(500);
        let e = PlayerMessage::parse(&long).expect_err("garbage");
        assert!(e.to_string().len() < 120, "{e}");
    }

    #[test]
    fn lenient_spacing_and_trailing_whitespace() {
        assert_eq!(
            PlayerMessage::parse("Discard  5D\t0 "),
            Ok(PlayerMessage::Discard { tile: t("5D"), calling: false })
        );
        assert_eq!(PlayerMessage::parse("Ready\r"), Ok(PlayerMessage::Ready));
    }

    #[test]
    fn wire_escaping_round_trips() {
        let line = "HandScore 1 2 a\\b\nc\n";
        let wire = encode_wire(line);
        assert_eq!(wire, "HandScore 1 2 a\\\\b\\\r\nc\\\r\n\r\n");
        let mut dec = WireLineDecoder::new();
        let mut got = None;
        for physical in wire.split_inclusive('\n') {
            assert!(got.is_none());
            got = dec.push_line(physical);
        }
        assert_eq!(got.as_deref(), Some(line));
        assert!(!dec.is_pending());
        // An escaped backslash at the end of a line does not continue it.
        assert_eq!(dec.push_line("Player 1 x\\\\\r\n").as_deref(), Some("Player 1 x\\"));
    }

    proptest! {
        #[test]
        fn garbage_never_panics(s in "\\PC*") {
            let _ = ControllerMessage::parse(&s);
            let _ = PlayerMessage::parse(&s);
            let mut dec = WireLineDecoder::new();
            let _ = dec.push_line(&s);
        }

        #[test]
        fn parsed_messages_print_to_a_fixed_point(
            name in prop::sample::select(vec![
                "PlayerDiscards", "HandScore", "GameOption", "PlayerShowsTiles", "Player",
                "Game", "PlayerChows", "Discard", "Chow", "Connect", "SetPlayerOption", "#",
                "DeclareSpecial", "CanMahJong", "NewRound", "AuthInfo",
            ]),
            fields in prop::collection::vec(
                prop::sample::select(vec![
                    "1", "0", "-3", "5D", "--", "RD", "E", "Lower", "AnyPos", "nat", "bool",
                    " ", "  ", "\\", "\n", "\t", "x", "é", "DelayTime", "2147483648",
                ]),
                0..10,
            ),
        ) {
            let line = format!("{name} {}", fields.concat());
            if let Ok(m) = ControllerMessage::parse(&line) {
                prop_assert_eq!(ControllerMessage::parse(&m.to_string()), Ok(m));
            }
            if let Ok(m) = PlayerMessage::parse(&line) {
                prop_assert_eq!(PlayerMessage::parse(&m.to_string()), Ok(m));
            }
        }

        #[test]
        fn any_text_survives_a_round_trip(text in "\\PC*") {
            let m = ControllerMessage::Settlement { east: 1, south: -1, west: 0, north: 0, explanation: text };
            prop_assert_eq!(ControllerMessage::parse(&m.to_string()), Ok(m));
        }

        #[test]
        fn wire_encoding_is_undone(text in "[ -~\n\\\\]*") {
            let wire = encode_wire(&text);
            let mut dec = WireLineDecoder::new();
            let mut out = Vec::new();
            for physical in wire.split_inclusive('\n') {
                out.extend(dec.push_line(physical));
            }
            prop_assert_eq!(out, vec![text]);
        }
    }
}
