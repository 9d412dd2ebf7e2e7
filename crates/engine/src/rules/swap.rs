//! East's tile swap (seed 003, option `TileSwap`).
//!
//! After the deal and the declaring of bonus tiles, when East would make its
//! first discard, East decides how many lots of one tile each (0 to 3) the
//! four players swap. In each lot every player puts one concealed tile (not a
//! bonus tile) face down; once all four have, the tiles move at the same
//! time: the first lot across the table, the second to the right (each to
//! the next player in turn: East to South, South to West ...), the third to
//! the left (each to the previous player). Then East plays as usual.
//!
//! A passed tile is seen only by its giver and its receiver; everybody else,
//! spectators included, learns only who has put a tile down and that a lot
//! was passed. Passing is not discarding: the players' "no discard yet"
//! flags, on which Heaven's and Earth's Blessing and the Original Call
//! depend, are untouched.
//!
//! This module holds the swap's state; the hand plays it
//! (`rules/hand/swapping.rs`).

use serde::{Deserialize, Serialize};

use super::tile::{Tile, Wind};

/// The most lots East may swap.
pub const MAX_LOTS: u8 = 3;

/// Where the tiles of a lot go.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum SwapDirection {
    /// To the player opposite: East and West trade, and South and North.
    Across,
    /// To the player on one's right, the next in turn: East to South, South
    /// to West, West to North, North to East.
    Right,
    /// To the player on one's left, the previous in turn: East to North,
    /// North to West, West to South, South to East.
    Left,
}

impl SwapDirection {
    /// The direction of lot `lot` (1-based): across, then right, then left.
    pub fn of_lot(lot: u8) -> Option<SwapDirection> {
        match lot {
            1 => Some(SwapDirection::Across),
            2 => Some(SwapDirection::Right),
            3 => Some(SwapDirection::Left),
            _ => None,
        }
    }

    /// The seat that receives the tile the player at `from` passes.
    pub fn receiver(self, from: Wind) -> Wind {
        let steps = match self {
            SwapDirection::Across => 2,
            SwapDirection::Right => 1,
            SwapDirection::Left => 3,
        };
        Wind::from_index(from.index() + steps)
    }
}

/// A tile swap under way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SwapState {
    /// The lots East chose; `None` while East decides.
    pub(crate) lots: Option<u8>,
    /// The lot being passed, 1-based (0 while East decides).
    pub(crate) lot: u8,
    /// The tile each seat has put face down for the current lot.
    pub(crate) chosen: [Option<Tile>; 4],
}

impl SwapState {
    /// The lots East chose; `None` while East decides.
    pub fn lots(&self) -> Option<u8> {
        self.lots
    }

    /// The lot being passed, 1-based (0 while East decides).
    pub fn lot(&self) -> u8 {
        self.lot
    }

    /// Where the current lot goes (`None` while East decides).
    pub fn direction(&self) -> Option<SwapDirection> {
        SwapDirection::of_lot(self.lot)
    }

    /// True once the player at `seat` has put its tile down for the current lot.
    pub fn has_passed(&self, seat: Wind) -> bool {
        self.chosen[seat.index()].is_some()
    }

    /// The tile the player at `seat` has put down for the current lot: for
    /// the engine and that player only.
    pub fn passed_tile(&self, seat: Wind) -> Option<Tile> {
        self.chosen[seat.index()]
    }

    /// The tiles lying face down, not yet received.
    pub fn in_transit(&self) -> impl Iterator<Item = Tile> + '_ {
        self.chosen.iter().flatten().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lots_go_across_then_right_then_left() {
        use SwapDirection::*;
        assert_eq!([1, 2, 3, 0, 4].map(SwapDirection::of_lot), [Some(Across), Some(Right), Some(Left), None, None]);
        let to = |d: SwapDirection| Wind::ALL.map(|w| d.receiver(w));
        assert_eq!(to(Across), [Wind::West, Wind::North, Wind::East, Wind::South]);
        assert_eq!(to(Right), [Wind::South, Wind::West, Wind::North, Wind::East]);
        assert_eq!(to(Left), [Wind::North, Wind::East, Wind::South, Wind::West]);
    }
}
