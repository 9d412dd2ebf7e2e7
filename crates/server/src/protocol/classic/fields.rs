//! The fields of a message line: how each kind is read from the line
//! ([`Cursor`], [`FieldCodec::parse`]) and written back
//! ([`FieldCodec::write`]), byte for byte as the reference writes it; and the
//! two values only the classic protocol has, [`PlayerOption`] and
//! [`GameOptionEntry`].

use std::fmt::{self, Write as _};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::error::{ClassicParseError, snippet};
use crate::rules::tile::{Tile, Wind};
use crate::rules::tileset::ChowPosition;

/// The reference tokenises with C's `isspace`, which in the C locale is
/// exactly these six ASCII characters (Rust's own notions differ: Unicode
/// spaces, and no vertical tab).
pub(super) fn is_c_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c')
}

/// Walks through the fields of one message line.
pub(super) struct Cursor<'a> {
    rest: &'a str,
    /// The message's name, for the errors.
    pub(super) message: &'static str,
}

impl<'a> Cursor<'a> {
    /// A cursor on `rest`, the fields of message `message` after its name.
    pub(super) fn new(rest: &'a str, message: &'static str) -> Cursor<'a> {
        Cursor { rest, message }
    }

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
    pub(super) fn finish(self) -> Result<(), ClassicParseError> {
        let s = self.rest.trim_matches(is_c_space);
        if s.is_empty() {
            Ok(())
        } else {
            Err(ClassicParseError::TrailingData { message: self.message, extra: snippet(s) })
        }
    }
}

/// How one kind of field is read from and written to a message line.
pub(super) trait FieldCodec {
    /// The Rust type of the field.
    type Value;
    /// Reads the field at the cursor.
    fn parse(cur: &mut Cursor<'_>, field: &'static str) -> Result<Self::Value, ClassicParseError>;
    /// Writes the field (without the separating space).
    fn write(value: &Self::Value, out: &mut fmt::Formatter<'_>) -> fmt::Result;
}

/// C `int`: a signed 32-bit decimal.
pub(super) struct Int;
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
pub(super) struct Flag;
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
pub(super) struct TileCode;
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
pub(super) struct MaybeTile;
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
pub(super) struct WindLetter;
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
pub(super) struct ChowPos;
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
pub(super) struct Text;
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
pub(super) struct Word16;
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
pub(super) struct TileList;
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

pub(super) struct PlayerOpt;
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

pub(super) struct OptionEntry;
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
