//! Wire formats: the classic text lines of mj-server's protocol.
//!
//! `classic` parses and prints the message lines of protocol version 1110;
//! `reference_log` reads the reference server's game logs into those messages.

pub mod classic;
pub mod reference_log;

pub use classic::{
    ClassicParseError, ControllerMessage, GameOptionEntry, PlayerMessage, PlayerOption, WireLineDecoder, encode_wire,
};
pub use reference_log::{Direction, LogError, LogMessage, LogRecord, read_log};
