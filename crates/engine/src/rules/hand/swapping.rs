//! East's tile swap as the hand plays it (seed 003, option `TileSwap`; the
//! rules in [`crate::rules::swap`]): East chooses the lots, each player puts
//! a tile down, each lot moves when all four have, then East plays.

use super::*;
use crate::rules::swap::{MAX_LOTS, SwapState};

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

    pub(super) fn swap_under_way(&self) -> Result<SwapState, GameError> {
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
    pub(super) fn move_lot(&mut self, mut state: SwapState, ctx: &mut Ctx<'_>) {
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
    pub(super) fn end_swap(&mut self, east_received: Option<Tile>, ctx: &mut Ctx<'_>) {
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
