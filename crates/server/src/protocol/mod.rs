//! Wire formats: the classic text lines of mj-server's protocol, and the JSON
//! messages of the WebSocket protocol.
//!
//! `classic` parses and prints the message lines of protocol version 1110;
//! `printer` turns a table's stream into those messages for one player (the
//! classic sessions, and the export of a game as an mj-server log);
//! `reference_log` reads the reference server's game logs into those messages;
//! `ws` is the WebSocket protocol (docs/protocol.md).

pub mod classic;
pub mod json;
pub mod printer;
pub mod reference_log;
pub mod ws;

pub use classic::{
    ClassicParseError, ControllerMessage, GameOptionEntry, PlayerMessage, PlayerOption, WireLineDecoder, encode_wire,
};
pub use reference_log::{Direction, LogError, LogMessage, LogRecord, read_log};
