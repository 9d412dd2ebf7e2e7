//! Why a message line could not be parsed: each error names the message and
//! the field, and shows at most a snippet of the offending text.

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
pub(super) fn snippet(s: &str) -> String {
    let mut chars = s.chars();
    let mut out: String = chars.by_ref().take(SNIPPET_CHARS).collect();
    if chars.next().is_some() {
        out.push('…');
    }
    out
}
