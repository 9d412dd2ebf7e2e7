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

use serde::{Deserialize, Serialize};

use super::command::GameError;
use super::event::{Audience, Emitted, Event};
use super::hand::{Ctx, Hand, Phase};
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
    lots: Option<u8>,
    /// The lot being passed, 1-based (0 while East decides).
    lot: u8,
    /// The tile each seat has put face down for the current lot.
    chosen: [Option<Tile>; 4],
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

fn illegal(reason: &'static str) -> GameError {
    GameError::Illegal(reason)
}

fn emit(ctx: &mut Ctx<'_>, to: Audience, event: Event) {
    ctx.out.push(Emitted { to, event });
}

impl Hand {
    /// The tile swap under way, if any.
    pub fn swap(&self) -> Option<&SwapState> {
        self.swap.as_ref()
    }

    /// Declaring is over and `TileSwap` is on: East decides how many lots to
    /// swap before its first discard.
    pub(crate) fn start_swap(&mut self, ctx: &mut Ctx<'_>) {
        self.phase = Phase::Swapping;
        self.player = Wind::East;
        self.swap = Some(SwapState { lots: None, lot: 0, chosen: [None; 4] });
        emit(ctx, Audience::Everyone, Event::SwapStarted { east: self.east });
    }

    /// While the swap is under way nothing but the swap's own moves is
    /// allowed: East may not discard, kong or go Mah-Jong before it is over.
    pub(crate) fn check_not_swapping(&self) -> Result<(), GameError> {
        match self.swap {
            Some(s) if self.phase == Phase::Swapping => Err(illegal(if s.lots.is_none() {
                "East must first choose how many lots of tiles to swap"
            } else {
                "the tile swap is not over: every player must pass a tile"
            })),
            _ => Ok(()),
        }
    }

    fn swap_under_way(&self) -> Result<SwapState, GameError> {
        match self.swap {
            Some(s) if self.phase == Phase::Swapping => Ok(s),
            _ => Err(illegal("there is no tile swap now")),
        }
    }

    /// Checks East's choice of how many lots to swap.
    pub(crate) fn check_choose_swap(&self, seat: Wind, lots: u8) -> Result<(), GameError> {
        let state = self.swap_under_way()?;
        if seat != Wind::East {
            return Err(illegal("only East chooses how many lots of tiles to swap"));
        }
        if state.lots.is_some() {
            return Err(illegal("East has already chosen how many lots to swap"));
        }
        if lots > MAX_LOTS {
            return Err(illegal("East may swap at most 3 lots"));
        }
        Ok(())
    }

    /// East chooses how many lots to swap; with 0 play starts at once.
    pub(crate) fn choose_swap(&mut self, lots: u8, ctx: &mut Ctx<'_>) {
        let Some(mut state) = self.swap else { return };
        emit(ctx, Audience::Everyone, Event::SwapChosen { player: self.east, lots });
        if lots == 0 {
            self.end_swap(None, ctx);
        } else {
            state.lots = Some(lots);
            state.lot = 1;
            self.swap = Some(state);
        }
    }

    /// Checks a tile put down for the current lot.
    pub(crate) fn check_pass_tile(&self, seat: Wind, t: Tile) -> Result<(), GameError> {
        let state = self.swap_under_way()?;
        if state.lots.is_none() {
            return Err(illegal("East has not yet chosen how many lots to swap"));
        }
        if state.has_passed(seat) {
            return Err(illegal("you have already passed a tile in this lot"));
        }
        if t.is_bonus() {
            return Err(illegal("bonus tiles are declared, not passed"));
        }
        self.seats[seat.index()].clone().give(t).map_err(illegal)
    }

    /// A player puts a concealed tile face down for the current lot; when
    /// all four have, the lot moves.
    pub(crate) fn pass_tile(&mut self, seat: Wind, t: Tile, ctx: &mut Ctx<'_>) {
        let Some(mut state) = self.swap else { return };
        let _ = self.seats[seat.index()].give(t);
        state.chosen[seat.index()] = Some(t);
        let p = self.player_at(seat);
        let lot = state.lot;
        emit(ctx, Audience::Only(p), Event::TilePassed { player: p, lot, tile: Some(t) });
        emit(ctx, Audience::AllBut(p), Event::TilePassed { player: p, lot, tile: None });
        if Wind::ALL.iter().all(|&s| state.has_passed(s)) {
            self.move_lot(state, ctx);
        } else {
            self.swap = Some(state);
        }
    }

    /// Every player has put a tile down: all four move at once.
    fn move_lot(&mut self, mut state: SwapState, ctx: &mut Ctx<'_>) {
        let Some(direction) = state.direction() else { return };
        let lot = state.lot;
        emit(ctx, Audience::Everyone, Event::LotPassed { lot, direction });
        let mut east_received = None;
        for from in Wind::ALL {
            let Some(t) = state.chosen[from.index()].take() else { continue };
            let to = direction.receiver(from);
            // Each receiver gave its own tile first, so it has room.
            let _ = self.seats[to.index()].draw(t);
            let receiver = self.player_at(to);
            let event = Event::TileReceived { player: receiver, from: self.player_at(from), lot, tile: t };
            emit(ctx, Audience::Only(receiver), event);
            if to == Wind::East {
                east_received = Some(t);
            }
        }
        if Some(lot) == state.lots {
            self.end_swap(east_received, ctx);
        } else {
            state.lot += 1;
            self.swap = Some(state);
        }
    }

    /// The swap is over: East plays. The tile East received last stands for
    /// its drawn tile (the last tile it obtained), so that scoring a Mah-Jong
    /// East declares now looks at the hand just before that tile, as it does
    /// after a draw.
    fn end_swap(&mut self, east_received: Option<Tile>, ctx: &mut Ctx<'_>) {
        self.swap = None;
        self.phase = Phase::Discarding;
        self.player = Wind::East;
        if let Some(t) = east_received {
            let mut before = self.seats[Wind::East.index()].clone();
            let _ = before.give(t);
            self.before_last_tile = Some((Wind::East, before));
            self.tile = Some(t);
            self.last_drawn = Some((Wind::East, t));
        }
        emit(ctx, Audience::Everyone, Event::PlayStarted { east: self.east });
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
