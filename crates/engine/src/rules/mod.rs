//! The rules engine: a pure, deterministic library (no async, no I/O, no clock)
//! implementing the Chinese Classical game exactly as mj-server plays it.

pub mod analysis;
pub mod arrangement;
pub mod calculator;
pub mod command;
pub mod danger;
pub mod event;
pub mod game;
pub mod hand;
pub mod invariants;
pub mod legal;
pub mod option_file;
pub mod option_guide;
pub mod options;
pub mod player_hand;
pub mod preset_book;
pub mod presets;
mod purity;
pub mod rebuild;
pub mod scoring;
pub mod scoring_calculator;
pub mod settlement;
pub mod swap;
pub mod tile;
pub mod tileset;
pub mod view;
pub mod wall;

pub use command::{Action, Claim, ClosedSet, Command, DiscardUse, GameError, PlayerId, WallSource};
pub use event::{Audience, Emitted, Event};
pub use game::Game;
pub use options::{GameOptions, ScoreValue};
pub use tile::{Suit, Tile, Wind};
pub use tileset::{ChowPosition, SetKind, TileSet};
pub use view::{Decision, TableView};

/// Helpers for the engine's unit tests.
#[cfg(test)]
pub(crate) mod testing {
    use super::player_hand::PlayerHand;
    use super::tile::{Tile, parse_tiles};

    /// A tile from its code; panics on a bad code (tests only).
    pub fn t(code: &str) -> Tile {
        code.parse().unwrap()
    }

    /// A hand holding these concealed tiles (space-separated codes).
    pub fn hand(codes: &str) -> PlayerHand {
        let mut h = PlayerHand::new();
        for t in parse_tiles(codes).unwrap() {
            h.draw(t).unwrap();
        }
        h
    }
}
