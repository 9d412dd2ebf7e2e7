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
//! with [`Display`](std::fmt::Display); printing a line that came from the
//! reference reproduces it byte for byte. The parser is as lenient as the
//! reference where that costs nothing (runs of whitespace between fields, the
//! short aliases such as `d` for `Discard`, `l`/`m`/`u`/`a` for chow
//! positions) and strict where the reference would silently misread (values
//! out of range, unknown words, extra fields).
//!
//! On a socket the reference additionally escapes message lines (see
//! [`encode_wire`] and [`WireLineDecoder`]); its game logs record the
//! unescaped message lines.
//!
//! The module by concern: `error` says why a line does not parse; `fields`
//! reads and writes each kind of field; `grammar` declares a message enum
//! with its parser and printer from one table of variants, which
//! `controller` and `player` fill in; `moves` translates between the
//! players' messages and the engine's moves; `wire` escapes lines for a
//! socket. Their public items are all here.

mod controller;
mod error;
mod fields;
mod grammar;
mod moves;
mod player;
mod wire;

pub use controller::ControllerMessage;
pub use error::ClassicParseError;
pub use fields::{GameOptionEntry, PlayerOption};
pub use moves::MoveContext;
pub use player::PlayerMessage;
pub use wire::{WireLineDecoder, encode_wire};

#[cfg(test)]
mod tests;
