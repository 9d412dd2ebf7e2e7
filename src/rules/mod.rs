//! The rules engine: a pure, deterministic library (no async, no I/O, no clock)
//! implementing the Chinese Classical game exactly as mj-server plays it.

pub mod options;
pub mod tile;
pub mod tileset;

pub use options::{GameOptions, ScoreValue};
pub use tile::{Suit, Tile, Wind};
pub use tileset::{ChowPosition, SetKind, TileSet};
