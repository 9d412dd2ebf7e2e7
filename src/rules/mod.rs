//! The rules engine: a pure, deterministic library (no async, no I/O, no clock)
//! implementing the Chinese Classical game exactly as mj-server plays it.

pub mod analysis;
pub mod danger;
pub mod options;
pub mod player_hand;
pub mod scoring;
pub mod tile;
pub mod tileset;
pub mod wall;

pub use options::{GameOptions, ScoreValue};
pub use tile::{Suit, Tile, Wind};
pub use tileset::{ChowPosition, SetKind, TileSet};
