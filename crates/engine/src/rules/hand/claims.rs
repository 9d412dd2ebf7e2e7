//! Claims of a discard or a kong being added to: each player's answer, the
//! choice among them when all have answered (or the time ran out), and the
//! set the winning claim makes.

use super::*;

impl Hand {
    /// The player at `seat` does not claim the current discard or kong.
    pub(crate) fn pass(&mut self, seat: Wind, discard: u32, ctx: &mut Ctx<'_>) {
        self.answers[seat.index()] = Answer::NoClaim;
        ctx.only(self.player_at(seat), Event::Passed { player: self.player_at(seat), discard, timeout: false });
        self.resolve_claims(ctx);
    }

    /// The player at `seat` claims the current discard or kong; claims are
    /// resolved once everybody has answered.
    pub(crate) fn claim(&mut self, seat: Wind, discard: u32, claim: Claim, ctx: &mut Ctx<'_>) {
        self.answers[seat.index()] = Answer::Claim(claim);
        ctx.all(Event::Claimed { player: self.player_at(seat), discard, claim });
        self.resolve_claims(ctx);
    }

    pub(crate) fn claim_timeout(&mut self, ctx: &mut Ctx<'_>) -> Result<(), GameError> {
        if !self.claim_window_open() || self.chow_pending {
            return Err(illegal("no claim window is open"));
        }
        for seat in Wind::ALL {
            if seat != self.player && self.answers[seat.index()] == Answer::Waiting {
                self.answers[seat.index()] = Answer::NoClaim;
                let p = self.player_at(seat);
                ctx.only(p, Event::Passed { player: p, discard: self.serial, timeout: true });
            }
        }
        self.resolve_claims(ctx);
        Ok(())
    }

    /// Once everybody has answered, grants the best claim: Mah-Jong, then
    /// kong, then pung (the first in turn after the discarder), then a chow
    /// by the next player; or, with no claim, play goes on.
    pub(super) fn resolve_claims(&mut self, ctx: &mut Ctx<'_>) {
        let ds = self.player;
        if Wind::ALL.iter().any(|&s| s != ds && self.answers[s.index()] == Answer::Waiting) {
            return;
        }
        let in_turn = |i: usize| Wind::from_index(ds.index() + i);
        let find = |want: fn(Answer) -> bool| (1..4).map(in_turn).find(|s| want(self.answers[s.index()]));
        let winner = find(|a| a == Answer::Claim(Claim::MahJong))
            .or_else(|| find(|a| a == Answer::Claim(Claim::Kong)))
            .or_else(|| find(|a| a == Answer::Claim(Claim::Pung)))
            .or_else(|| Some(ds.next()).filter(|s| matches!(self.answers[s.index()], Answer::Claim(Claim::Chow(_)))));
        let Some(s) = winner else {
            self.no_claims(ctx);
            return;
        };
        let Answer::Claim(claim) = self.answers[s.index()] else { return };
        let Some(t) = self.tile else { return };
        if claim == Claim::MahJong {
            // Several players may go out on the same discard (not on a robbed
            // kong), each paid as if alone (seed 002).
            self.winners = if ctx.options.multiple_winners && self.konging.is_none() {
                (1..4).map(in_turn).filter(|s| self.answers[s.index()] == Answer::Claim(Claim::MahJong)).collect()
            } else {
                vec![s]
            };
        }
        if !matches!(claim, Claim::Chow(_)) {
            for other in Wind::ALL {
                let answered = self.answers[other.index()] != Answer::NoClaim;
                if other != ds && other != s && answered && !self.winners.contains(&other) {
                    let p = self.player_at(other);
                    ctx.only(p, Event::ClaimDenied { player: p, reason: "There was a prior claim".into() });
                }
            }
        }
        match claim {
            Claim::Chow(None) => {
                self.chow_pending = true;
                let p = self.player_at(s);
                ctx.only(p, Event::ChowPositionNeeded { player: p, tile: t });
            }
            Claim::Chow(Some(pos)) => self.grant_chow(s, pos, ctx),
            Claim::Pung => self.grant_pung(s, ctx),
            Claim::Kong => self.grant_kong(s, ctx),
            Claim::MahJong => self.grant_mah_jong(s, ctx),
        }
    }

    pub(super) fn no_claims(&mut self, ctx: &mut Ctx<'_>) {
        let ds = self.player;
        if self.konging.is_none() {
            let next = ds.next();
            if self.wall.peek_live().is_none() {
                self.wash_out(ctx);
                return;
            }
            self.snapshot(next);
            self.draw_live(next, ctx);
        } else {
            if self.wall.peek_loose().is_none() {
                self.wash_out(ctx);
                return;
            }
            self.snapshot(ds);
            self.draw_loose(ds, ctx);
        }
    }

    /// After a claimed discard is placed in a set: the claimant takes the turn.
    pub(super) fn take_turn_with_discard(&mut self, s: Wind) {
        self.discards.pop();
        self.phase = Phase::Discarding;
        self.konging = None;
        self.supplier = Some(self.player);
        self.player = s;
        self.whence = Whence::Discard;
    }

    pub(super) fn grant_chow(&mut self, s: Wind, pos: ChowPosition, ctx: &mut Ctx<'_>) {
        let Some(t) = self.tile else { return };
        let mut after = self.seats[s.index()].clone();
        if after.chow(t, pos).is_err() {
            return;
        }
        self.snapshot(s);
        self.seats[s.index()] = after;
        self.chow_pending = false;
        self.take_turn_with_discard(s);
        if let Some(low) = pos.lowest_tile(t) {
            for other in (0..3).filter_map(|i| low.up(i)).filter(|&x| x != t) {
                self.exposed[other.index()] += 1;
            }
        }
        self.mark_dangerous_discard();
        self.refresh_danger(s);
        ctx.all(Event::Chowed { player: self.player_at(s), tile: t, position: pos });
        self.announce_danger(ctx);
    }

    pub(super) fn grant_pung(&mut self, s: Wind, ctx: &mut Ctx<'_>) {
        let Some(t) = self.tile else { return };
        self.snapshot(s);
        let _ = self.seats[s.index()].pung(t);
        self.take_turn_with_discard(s);
        self.exposed[t.index()] += 2;
        self.mark_dangerous_discard();
        self.refresh_danger(s);
        ctx.all(Event::Punged { player: self.player_at(s), tile: t });
        self.announce_danger(ctx);
    }

    pub(super) fn grant_kong(&mut self, s: Wind, ctx: &mut Ctx<'_>) {
        let Some(t) = self.tile else { return };
        let _ = self.seats[s.index()].kong(t);
        self.take_turn_with_discard(s);
        self.note_kong();
        self.exposed[t.index()] += 3;
        self.refresh_danger(s);
        ctx.all(Event::Konged { player: self.player_at(s), tile: t });
        if self.wall.peek_loose().is_none() {
            self.wash_out(ctx);
            return;
        }
        self.snapshot(s);
        self.draw_loose(s, ctx);
    }

    pub(super) fn grant_mah_jong(&mut self, s: Wind, ctx: &mut Ctx<'_>) {
        self.snapshot(s);
        if self.konging.is_none() {
            self.discards.pop();
            self.supplier = Some(self.player);
            self.whence = Whence::Discard;
            self.player = s;
            self.mj_pending = true;
            self.chow_pending = false;
            self.phase = Phase::MahJonging;
            for &w in &self.winners {
                ctx.all(Event::MahJong { player: self.player_at(w), tile: None });
            }
        } else {
            let p = self.player_at(s);
            let Some(t) = self.tile else { return };
            let _ = self.seats[self.player.index()].kong_robbed(t);
            self.phase = Phase::MahJonging;
            self.whence = Whence::RobbedKong;
            self.supplier = Some(self.player);
            self.player = s;
            self.mj_pending = true;
            self.chow_pending = false;
            self.konging = None;
            self.kong_made = false;
            self.kong_upon_kong = false;
            ctx.all(Event::RobbedKong { player: p, tile: t });
        }
    }

    /// The claimant of a chow granted without a position says where the
    /// tile goes (or the winner, for the chow it goes out with).
    pub(crate) fn choose_chow_position(&mut self, seat: Wind, pos: ChowPosition, ctx: &mut Ctx<'_>) {
        if self.phase == Phase::MahJonging {
            return self.use_discard(seat, DiscardUse::Chow(Some(pos)), ctx);
        }
        self.grant_chow(seat, pos, ctx);
    }
}
