//! Going out: a player's Mah-Jong, laying out the hand (the discard used,
//! the concealed sets formed), the others showing their tiles, then every
//! hand scored and the hand settled, or washed out.

use super::*;

impl Hand {
    /// The player to move goes out with the tile it has just drawn.
    pub(crate) fn mah_jong(&mut self, seat: Wind, ctx: &mut Ctx<'_>) {
        self.mj_pending = false;
        self.chow_pending = false;
        self.winners = vec![seat];
        self.phase = Phase::MahJonging;
        ctx.all(Event::MahJong { player: self.player_at(seat), tile: self.tile });
    }

    /// The winner on a discard says how it uses the discard.
    pub(crate) fn use_discard(&mut self, seat: Wind, use_as: DiscardUse, ctx: &mut Ctx<'_>) {
        let Some(t) = self.tile else { return };
        let p = self.player_at(seat);
        match use_as {
            DiscardUse::Chow(None) => {
                self.chow_pending = true;
                ctx.only(p, Event::ChowPositionNeeded { player: p, tile: t });
            }
            DiscardUse::Chow(Some(pos)) => {
                self.place_discard(seat, |h| h.chow(t, pos), Event::Chowed { player: p, tile: t, position: pos }, ctx)
            }
            DiscardUse::Pung => self.place_discard(seat, |h| h.pung(t), Event::Punged { player: p, tile: t }, ctx),
            DiscardUse::Pair => self.place_discard(seat, |h| h.pair(t), Event::Paired { player: p, tile: t }, ctx),
            DiscardUse::SpecialSet => {
                let h = &mut self.seats[seat.index()];
                let _ = h.draw(t);
                h.hand_declared = true;
                let tiles = h.concealed.to_vec();
                self.mj_pending = false;
                ctx.all(Event::DeclaredSpecialSet { player: p, tiles });
                self.score_player(seat, ctx);
            }
        }
    }

    /// The winner places the discard it went out with in a set (`make`); the
    /// discard is then judged for danger like any claimed discard.
    pub(super) fn place_discard(
        &mut self,
        seat: Wind,
        make: impl FnOnce(&mut PlayerHand) -> Result<(), &'static str>,
        event: Event,
        ctx: &mut Ctx<'_>,
    ) {
        let _ = make(&mut self.seats[seat.index()]);
        self.chow_pending = false;
        self.mj_pending = false;
        // The winner's own danger signals are not refreshed: scoring replaces
        // them with the dangers its hand realises.
        self.mark_dangerous_discard();
        ctx.all(event);
        self.announce_danger(ctx);
        self.score_if_declared(seat, ctx);
    }

    /// After Mah-Jong a player forms a set from its concealed tiles (the
    /// winner's whole hand, for a special hand).
    pub(crate) fn form_closed_set(&mut self, seat: Wind, set: ClosedSet, ctx: &mut Ctx<'_>) {
        let p = self.player_at(seat);
        let h = &mut self.seats[seat.index()];
        let formed = match set {
            ClosedSet::Pung(t) => h.form_closed_pung(t).map(|_| TileSet::new(SetKind::ClosedPung, t)),
            ClosedSet::Chow(t) => h.form_closed_chow(t).map(|_| TileSet::new(SetKind::ClosedChow, t)),
            ClosedSet::Pair(t) => h.form_closed_pair(t).map(|_| TileSet::new(SetKind::ClosedPair, t)),
            ClosedSet::SpecialSet => {
                h.hand_declared = true;
                let tiles = h.concealed.to_vec();
                ctx.all(Event::DeclaredSpecialSet { player: p, tiles });
                self.score_player(seat, ctx);
                return;
            }
        };
        let Ok(formed) = formed else { return };
        ctx.all(Event::FormedClosedSet { player: p, set: formed });
        // Losers too: one whose sets use up every concealed tile (three
        // exposed sets and two pairs, say) has nothing left to show.
        self.score_if_declared(seat, ctx);
    }

    /// After Mah-Jong a loser shows its remaining concealed tiles; its hand is scored.
    pub(crate) fn show_tiles(&mut self, seat: Wind, ctx: &mut Ctx<'_>) {
        let tiles = self.seats[seat.index()].concealed.to_vec();
        self.seats[seat.index()].hand_declared = true;
        ctx.all(Event::ShowedTiles { player: self.player_at(seat), tiles });
        self.score_player(seat, ctx);
    }

    pub(super) fn score_if_declared(&mut self, seat: Wind, ctx: &mut Ctx<'_>) {
        if self.seats[seat.index()].concealed.is_empty() {
            self.seats[seat.index()].hand_declared = true;
            self.score_player(seat, ctx);
        }
    }

    /// How the winner at `seat` goes out, for scoring: the tile it went out
    /// with, where it came from, and the table as it is.
    pub(crate) fn win_context(&self, seat: Wind) -> Option<WinContext<'_>> {
        let before = self.before_last_tile.as_ref().and_then(|(who, h)| (*who == seat).then_some(h));
        Some(self.context(self.whence, self.tile?, before, self.kong_upon_kong))
    }

    pub(crate) fn context<'a>(
        &'a self,
        whence: Whence,
        tile: Tile,
        before: Option<&'a PlayerHand>,
        kong_upon_kong: bool,
    ) -> WinContext<'a> {
        WinContext {
            whence,
            tile,
            exposed: &self.exposed,
            live_exhausted: self.wall.live_exhausted(),
            live_exactly_exhausted: self.wall.live_exactly_exhausted(),
            before_winning_tile: before,
            only_east_discarded: Wind::ALL[1..].iter().all(|s| self.seats[s.index()].no_discard),
            east_wins_before: self.east_wins_before,
            kong_upon_kong,
        }
    }

    pub(super) fn score_player(&mut self, seat: Wind, ctx: &mut Ctx<'_>) {
        let winner = seat == self.player;
        let win = if winner { self.win_context(seat) } else { None };
        let score = scoring::score_hand(&ScoringInput {
            options: ctx.options,
            hand: &self.seats[seat.index()],
            seat,
            prevailing: self.round,
            no_special_scores: ctx.no_special_scores,
            win,
        });
        if winner {
            self.seats[seat.index()].danger[seat.index()] = score.realised_danger;
        }
        ctx.all(Event::HandScored { player: self.player_at(seat), score: score.clone() });
        self.scores[seat.index()] = Some(score);
        if winner && self.winner_turn + 1 < self.winners.len() {
            // The next winner on the same discard places it in its own hand.
            self.winner_turn += 1;
            let next = self.winners[self.winner_turn];
            self.snapshot(next);
            self.player = next;
            self.mj_pending = true;
            self.chow_pending = false;
        }
        if self.scores.iter().all(Option::is_some) {
            self.settle(ctx);
        }
    }

    pub(super) fn settle(&mut self, ctx: &mut Ctx<'_>) {
        let winners = if self.winners.is_empty() { vec![self.player] } else { self.winners.clone() };
        let w = winners[0];
        let scores = std::array::from_fn(|i| self.scores[i].as_ref().map_or(0, |s| s.score));
        let winner_hand = &self.seats[w.index()];
        let own = winner_hand.danger[w.index()];
        // A cannon is paid to a single winner (rules-notes: several winners).
        let cannon = (winners.len() == 1)
            .then(|| Wind::ALL.into_iter().find(|&i| i != w && winner_hand.danger[i.index()].intersects(own)))
            .flatten();
        let settlement = settlement::settle(&SettlementInput {
            options: ctx.options,
            scores,
            winners: &winners,
            discarder: self.supplier.filter(|_| matches!(self.whence, Whence::Discard | Whence::RobbedKong)),
            robbed_kong: self.whence == Whence::RobbedKong,
            cannon,
            extra_hands: self.extra_hands,
            double_dice: self.double_dice(),
        });
        self.phase = Phase::Finished;
        self.outcome = Some(Outcome::Won { winner: w, winners, settlement });
    }
}
