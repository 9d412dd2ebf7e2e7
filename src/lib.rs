//! An online Mah-Jong server for the Chinese Classical game.
//!
//! `rules` is the pure game engine; `protocol` holds the wire formats.

pub mod bots;
pub mod protocol;
pub mod replay;
pub mod rules;
pub mod sim;
