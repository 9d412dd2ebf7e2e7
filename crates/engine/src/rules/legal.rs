//! What a player may do now: the check every move passes before it changes
//! anything, and the complete list of the moves that pass it.
//!
//! [`Game::apply`](super::game::Game::apply) runs [`Hand::check`] on a move and
//! then performs it; the moves themselves (in `hand.rs` and `swap.rs`) never
//! refuse. [`Hand::legal_actions`] offers the check every candidate move of
//! the hand's phase, and keeps those it accepts. Candidates are built from the
//! player's own concealed tiles, the current discard's serial number and the
//! small fixed choices (claims, chow positions, lots): no move outside them
//! can pass a check. So a move is accepted exactly when it is listed, which
//! `crates/engine/tests/engine/legal_actions.rs` shows over random games under every preset.

use super::arrangement::GoingOut;
use super::command::{Action, Claim, ClosedSet, DiscardUse, GameError};
use super::hand::{Answer, Hand, Konging, Phase, Rules};
use super::player_hand::PlayerHand;
use super::scoring::Whence;
use super::tile::{Tile, Wind};
use super::tileset::ChowPosition;

fn illegal(reason: &'static str) -> GameError {
    GameError::Illegal(reason)
}

/// The claims a player may try on a discard, in the order they are listed.
const CLAIMS: [Claim; 7] = [
    Claim::MahJong,
    Claim::Kong,
    Claim::Pung,
    Claim::Chow(None),
    Claim::Chow(Some(ChowPosition::Lower)),
    Claim::Chow(Some(ChowPosition::Middle)),
    Claim::Chow(Some(ChowPosition::Upper)),
];

/// The ways a winner may use the discard it went out with, in listed order.
const DISCARD_USES: [DiscardUse; 7] = [
    DiscardUse::Pung,
    DiscardUse::Pair,
    DiscardUse::Chow(None),
    DiscardUse::Chow(Some(ChowPosition::Lower)),
    DiscardUse::Chow(Some(ChowPosition::Middle)),
    DiscardUse::Chow(Some(ChowPosition::Upper)),
    DiscardUse::SpecialSet,
];

impl Hand {
    /// Why the player at `seat` may not make `action` now, or `Ok` if it may.
    /// This is the only judgement of a move: what it accepts, the engine
    /// performs without further refusal.
    pub(crate) fn check(&self, seat: Wind, action: &Action, rules: Rules<'_>) -> Result<(), GameError> {
        if !action.is_tile_swap() {
            self.check_not_swapping()?;
        }
        match *action {
            Action::DeclareBonus { tile } => self.check_declare_bonus(seat, tile),
            Action::FinishDeclaring => self.check_finish_declaring(seat),
            Action::Discard { tile, calling } => self.check_discard(seat, tile, calling),
            Action::Pass { discard } => self.check_answer(seat, discard),
            Action::Claim { discard, claim } => self.check_claim(seat, discard, claim, rules),
            Action::ChooseChowPosition { position } => self.check_chow_position(seat, position, rules),
            Action::MahJong => self.check_mah_jong(seat, rules),
            Action::DeclareClosedKong { tile } => self.check_closed_kong(seat, tile),
            Action::AddToPung { tile } => self.check_add_to_pung(seat, tile),
            Action::UseDiscard { use_as } => self.check_use_discard(seat, use_as, rules),
            Action::FormClosedSet { set } => self.check_closed_set(seat, set, rules),
            Action::ShowTiles => self.check_show_tiles(seat),
            Action::ChooseSwap { lots } => self.check_choose_swap(seat, lots),
            Action::PassTile { tile } => self.check_pass_tile(seat, tile),
        }
    }

    /// Every move the player at `seat` may make now, in a stable order: the
    /// most consequential first (Mah-Jong, claims), then declarations, then
    /// discards by tile.
    /// The moves are appended to `out`.
    pub(crate) fn legal_actions(&self, seat: Wind, rules: Rules<'_>, out: &mut Vec<Action>) {
        let mut offer = |action: Action| {
            if self.check(seat, &action, rules).is_ok() {
                out.push(action);
            }
        };
        let faces = distinct_faces(&self.seats[seat.index()]);
        let serial = self.serial;
        if self.claim_window_open() {
            offer(Action::Pass { discard: serial });
            for claim in CLAIMS {
                offer(Action::Claim { discard: serial, claim });
            }
        }
        match self.phase {
            Phase::Declaring | Phase::Discarding => {
                offer(Action::MahJong);
                for &tile in faces.iter().filter(|t| t.is_bonus()) {
                    offer(Action::DeclareBonus { tile });
                }
                for &tile in &faces {
                    offer(Action::DeclareClosedKong { tile });
                }
                for &tile in &faces {
                    offer(Action::AddToPung { tile });
                }
                offer(Action::FinishDeclaring);
                // Calling discards are tried only from a hand that may still
                // call (`check_discard` refuses every other one): only a
                // concealed hand's first discard may.
                let may_call = calling_refusal(&self.seats[seat.index()]).is_none();
                for calling in [false, true].into_iter().filter(|&c| !c || may_call) {
                    for &tile in &faces {
                        offer(Action::Discard { tile, calling });
                    }
                }
            }
            Phase::Swapping => {
                for lots in 0..=super::swap::MAX_LOTS {
                    offer(Action::ChooseSwap { lots });
                }
                for &tile in &faces {
                    offer(Action::PassTile { tile });
                }
            }
            Phase::Discarded => {
                for position in ChowPosition::ALL {
                    offer(Action::ChooseChowPosition { position });
                }
            }
            Phase::MahJonging => {
                for use_as in DISCARD_USES {
                    offer(Action::UseDiscard { use_as });
                }
                for position in ChowPosition::ALL {
                    offer(Action::ChooseChowPosition { position });
                }
                offer(Action::FormClosedSet { set: ClosedSet::SpecialSet });
                for &tile in &faces {
                    offer(Action::FormClosedSet { set: ClosedSet::Pung(tile) });
                }
                for &tile in &faces {
                    offer(Action::FormClosedSet { set: ClosedSet::Chow(tile) });
                }
                for &tile in &faces {
                    offer(Action::FormClosedSet { set: ClosedSet::Pair(tile) });
                }
                offer(Action::ShowTiles);
            }
            Phase::Finished => {}
        }
    }

    // ----- the checks, one per move ------------------------------------------

    /// Bonus tiles and concealed kongs are declared while declaring, or on
    /// one's turn after drawing (not after claiming a discard).
    fn declaring_allowed(&self) -> bool {
        self.phase == Phase::Declaring || (self.phase == Phase::Discarding && self.whence != Whence::Discard)
    }

    fn check_no_kong_pending(&self) -> Result<(), GameError> {
        if self.konging.is_some() {
            return Err(illegal("a kong is waiting for the other players to rob it or pass"));
        }
        Ok(())
    }

    fn check_declare_bonus(&self, seat: Wind, t: Tile) -> Result<(), GameError> {
        if !self.declaring_allowed() {
            return Err(illegal("bonus tiles can only be declared at the start of the hand or after drawing a tile"));
        }
        if self.player != seat {
            return Err(illegal("it is not your turn to declare"));
        }
        self.check_no_kong_pending()?;
        if !t.is_bonus() {
            return Err(illegal("only flowers, seasons and animals are bonus tiles"));
        }
        self.seats[seat.index()].clone().declare_bonus(t).map_err(illegal)
    }

    fn check_finish_declaring(&self, seat: Wind) -> Result<(), GameError> {
        if self.phase != Phase::Declaring {
            return Err(illegal("declaring is over: play has started"));
        }
        if self.player != seat {
            return Err(illegal("it is not your turn to declare"));
        }
        self.check_no_kong_pending()
    }

    fn check_closed_kong(&self, seat: Wind, t: Tile) -> Result<(), GameError> {
        if !self.declaring_allowed() || self.player != seat {
            return Err(illegal("a concealed kong can only be declared on your turn, after drawing a tile"));
        }
        self.check_no_kong_pending()?;
        if !self.seats[seat.index()].can_declare_closed_kong(t) {
            return Err(illegal("you do not hold four of that tile"));
        }
        Ok(())
    }

    fn check_add_to_pung(&self, seat: Wind, t: Tile) -> Result<(), GameError> {
        // Since mj-server 1.11 a pung just claimed may be made a kong at once
        // with the fourth tile from the hand.
        let just_punged = self.answers[seat.index()] == Answer::Claim(Claim::Pung) && self.tile == Some(t);
        let allowed = self.phase == Phase::Discarding && (self.whence != Whence::Discard || just_punged);
        if !allowed || self.player != seat {
            return Err(illegal("you can only add to a pung on your turn, after drawing a tile"));
        }
        self.check_no_kong_pending()?;
        if !self.seats[seat.index()].can_add_to_pung(t) {
            return Err(illegal("you need an exposed pung of that tile and the fourth tile in your hand"));
        }
        Ok(())
    }

    fn check_discard(&self, seat: Wind, t: Tile, calling: bool) -> Result<(), GameError> {
        if self.phase != Phase::Discarding || self.player != seat {
            return Err(illegal(match self.phase {
                Phase::Declaring if self.player == seat => {
                    "you cannot discard while declaring: declare your bonus tiles and kongs, then finish declaring"
                }
                Phase::Declaring => "you cannot discard yet: the players are still declaring bonus tiles and kongs",
                Phase::MahJonging => "the hand has been won: nobody discards any more",
                _ => "it is not your turn to discard",
            }));
        }
        self.check_no_kong_pending()?;
        let hand = &self.seats[seat.index()];
        if calling && let Some(why) = calling_refusal(hand) {
            return Err(illegal(why));
        }
        if hand.calling && self.tile != Some(t) {
            return Err(illegal("a calling hand can only discard the tile just drawn"));
        }
        if t.is_bonus() {
            return Err(illegal("bonus tiles are declared, not discarded"));
        }
        if hand.count(t) == 0 {
            return Err(illegal("you do not hold that tile"));
        }
        Ok(())
    }

    /// A pass or a claim must answer the current discard or kong, once.
    fn check_answer(&self, seat: Wind, discard: u32) -> Result<(), GameError> {
        if !self.claim_window_open() {
            return Err(illegal("there is no discard or kong to claim"));
        }
        if discard != self.serial {
            return Err(GameError::StaleDiscard { given: discard, current: self.serial });
        }
        if seat == self.player {
            return Err(illegal("you cannot claim your own discard or kong"));
        }
        if self.chow_pending {
            return Err(illegal("the claims on this discard have been decided"));
        }
        if self.answers[seat.index()] != Answer::Waiting {
            return Err(illegal("you have already answered this discard; claims are irrevocable"));
        }
        Ok(())
    }

    fn check_claim(&self, seat: Wind, discard: u32, claim: Claim, rules: Rules<'_>) -> Result<(), GameError> {
        self.check_answer(seat, discard)?;
        let hand = &self.seats[seat.index()];
        let Some(t) = self.tile else { return Err(illegal("there is no discard to claim")) };
        let seven = rules.options.seven_pairs;
        if self.konging.is_some() {
            if claim != Claim::MahJong {
                return Err(illegal("a kong can only be robbed to go Mah-Jong"));
            }
            if !hand.can_mah_jong(Some(t), seven) {
                return Err(illegal("you cannot go Mah-Jong with that tile"));
            }
            if self.konging == Some(Konging::DeclaringKong) && !hand.can_thirteen_wonders(Some(t)) {
                return Err(illegal("a concealed kong can only be robbed for Thirteen Unique Wonders"));
            }
            return self.check_claimed_mah_jong(seat, t, Whence::RobbedKong, rules);
        }
        if hand.calling && claim != Claim::MahJong {
            return Err(illegal("a calling player can only claim Mah-Jong"));
        }
        let ok = match claim {
            Claim::Chow(pos) => {
                if seat != self.player.next() {
                    return Err(illegal("only the next player may chow"));
                }
                hand.can_chow(t, pos)
            }
            Claim::Pung => hand.can_pung(t),
            Claim::Kong => hand.can_kong(t),
            Claim::MahJong => hand.can_mah_jong(Some(t), seven),
        };
        if !ok {
            return Err(illegal(match claim {
                Claim::Chow(_) => "you cannot make that chow with this tile",
                Claim::Pung => "you need two matching tiles to pung",
                Claim::Kong => "you need three matching tiles to kong",
                Claim::MahJong => "you cannot go Mah-Jong with that tile",
            }));
        }
        if claim == Claim::MahJong {
            self.check_claimed_mah_jong(seat, t, Whence::Discard, rules)?;
        }
        Ok(())
    }

    fn check_chow_position(&self, seat: Wind, pos: ChowPosition, rules: Rules<'_>) -> Result<(), GameError> {
        if self.phase == Phase::MahJonging {
            return self.check_use_discard(seat, DiscardUse::Chow(Some(pos)), rules);
        }
        if !(self.phase == Phase::Discarded && self.chow_pending) || seat != self.player.next() {
            return Err(illegal("you have no chow claim waiting for its position"));
        }
        let Some(t) = self.tile else { return Err(illegal("there is no discard")) };
        if !self.seats[seat.index()].can_chow(t, Some(pos)) {
            return Err(illegal("you cannot make that chow with this tile"));
        }
        Ok(())
    }

    fn check_mah_jong(&self, seat: Wind, rules: Rules<'_>) -> Result<(), GameError> {
        if self.claim_window_open() {
            return Err(illegal("claim Mah-Jong on the discard or kong with its serial number"));
        }
        if self.phase != Phase::Discarding || self.player != seat {
            return Err(illegal("you can only go Mah-Jong on your own turn or by claiming a discard"));
        }
        if !self.seats[seat.index()].can_mah_jong(None, rules.options.seven_pairs) {
            return Err(illegal("your hand is not complete"));
        }
        self.check_declaration(seat, &self.seats[seat.index()], rules)
    }

    fn check_use_discard(&self, seat: Wind, use_as: DiscardUse, rules: Rules<'_>) -> Result<(), GameError> {
        if self.phase != Phase::MahJonging || !self.mj_pending || seat != self.player {
            return Err(illegal("there is no discard waiting to be placed in your hand"));
        }
        let Some(t) = self.tile else { return Err(illegal("there is no discard")) };
        let seven = rules.options.seven_pairs;
        let current = &self.seats[seat.index()];
        match use_as {
            DiscardUse::Chow(None) => {
                let chowed = |pos: ChowPosition| {
                    let mut h = current.clone();
                    (h.chow(t, pos).is_ok() && h.can_mah_jong(None, seven)).then_some(h)
                };
                if !ChowPosition::ALL.into_iter().any(|pos| chowed(pos).is_some()) {
                    return Err(illegal("you cannot go out by chowing that tile"));
                }
                // Some position must leave a way to go out.
                if self.going_out_restricted(rules)
                    && let Some(judge) = self.going_out(seat, rules)
                {
                    let chows: Vec<PlayerHand> = ChowPosition::ALL.into_iter().filter_map(chowed).collect();
                    judge.judge(&chows)?;
                }
                Ok(())
            }
            DiscardUse::Chow(Some(pos)) => {
                self.check_placed(seat, |h| h.chow(t, pos), "you cannot go out with that chow", rules)
            }
            DiscardUse::Pung => self.check_placed(seat, |h| h.pung(t), "you cannot go out with that pung", rules),
            DiscardUse::Pair => self.check_placed(seat, |h| h.pair(t), "you cannot go out with that pair", rules),
            DiscardUse::SpecialSet => {
                if !current.can_thirteen_wonders(Some(t)) {
                    return Err(illegal("you have no special hand to form with that tile"));
                }
                let mut h = current.clone();
                h.draw(t).map_err(illegal)?;
                h.hand_declared = true;
                self.check_declaration(seat, &h, rules)
            }
        }
    }

    /// The winner's set made with the discard (`make`) must leave a complete
    /// hand that may go out.
    fn check_placed(
        &self,
        seat: Wind,
        make: impl FnOnce(&mut PlayerHand) -> Result<(), &'static str>,
        cannot: &'static str,
        rules: Rules<'_>,
    ) -> Result<(), GameError> {
        let mut h = self.seats[seat.index()].clone();
        make(&mut h).map_err(illegal)?;
        if !h.can_mah_jong(None, rules.options.seven_pairs) {
            return Err(illegal(cannot));
        }
        self.check_declaration(seat, &h, rules)
    }

    fn check_closed_set(&self, seat: Wind, set: ClosedSet, rules: Rules<'_>) -> Result<(), GameError> {
        if self.phase != Phase::MahJonging {
            return Err(illegal("sets are formed from the concealed tiles only after Mah-Jong"));
        }
        let current = &self.seats[seat.index()];
        if current.hand_declared {
            return Err(illegal("your hand is already declared"));
        }
        let winner = seat == self.player;
        if !winner && self.winners.contains(&seat) {
            return Err(illegal("you went out too: wait until the winners before you have declared"));
        }
        let mut h = current.clone();
        match set {
            ClosedSet::Pung(t) => h.form_closed_pung(t),
            ClosedSet::Chow(t) => h.form_closed_chow(t),
            ClosedSet::Pair(t) => h.form_closed_pair(t),
            ClosedSet::SpecialSet => {
                if !winner || self.mj_pending || !h.can_thirteen_wonders(None) {
                    return Err(illegal("you have no special hand to declare"));
                }
                h.hand_declared = true;
                return self.check_declaration(seat, &h, rules);
            }
        }
        .map_err(illegal)?;
        if winner && !h.can_mah_jong(None, rules.options.seven_pairs) {
            return Err(illegal("that set does not leave a complete hand"));
        }
        if winner {
            self.check_declaration(seat, &h, rules)?;
        }
        Ok(())
    }

    fn check_show_tiles(&self, seat: Wind) -> Result<(), GameError> {
        if self.phase != Phase::MahJonging {
            return Err(illegal("tiles are shown only after Mah-Jong"));
        }
        if self.seats[seat.index()].hand_declared || self.scores[seat.index()].is_some() {
            return Err(illegal("your hand is already declared"));
        }
        if seat == self.player {
            return Err(illegal("the winner must finish making its sets"));
        }
        if self.winners.contains(&seat) {
            return Err(illegal("you went out too: you will declare your winning hand in turn"));
        }
        Ok(())
    }

    // ----- restrictions on going out ---------------------------------------

    /// True when a restriction on going out is in force in this hand; when
    /// false nothing about going out needs judging (the default game).
    fn going_out_restricted(&self, rules: Rules<'_>) -> bool {
        GoingOut::restricted(rules.options, self.minimum_doubles)
    }

    /// The judge of the winner at `seat` going out as it stands now.
    fn going_out<'a>(&'a self, seat: Wind, rules: Rules<'a>) -> Option<GoingOut<'a>> {
        let win = self.win_context(seat)?;
        Some(self.judge_with(seat, win, rules))
    }

    fn judge_with<'a>(&self, seat: Wind, win: super::scoring::WinContext<'a>, rules: Rules<'a>) -> GoingOut<'a> {
        GoingOut {
            options: rules.options,
            minimum_doubles: self.minimum_doubles,
            seat,
            prevailing: self.round,
            no_special_scores: rules.no_special_scores,
            win,
        }
    }

    /// Under a restriction on going out, the winner at `seat` (going out
    /// self-drawn, or declaring after Mah-Jong) must keep at least one
    /// qualifying way of completing `hand`.
    fn check_declaration(&self, seat: Wind, hand: &PlayerHand, rules: Rules<'_>) -> Result<(), GameError> {
        if !self.going_out_restricted(rules) {
            return Ok(());
        }
        match self.going_out(seat, rules) {
            Some(judge) => judge.check(hand, None),
            None => Ok(()),
        }
    }

    /// Under a restriction on going out, a claim of Mah-Jong on the discard
    /// or robbed kong `t` must have a qualifying way of placing it and
    /// completing the hand, judged as the hand will be once the claim is
    /// granted (the claimant's hand now is its hand before the winning tile;
    /// a kong made before the discard is no kong upon kong).
    fn check_claimed_mah_jong(&self, seat: Wind, t: Tile, whence: Whence, rules: Rules<'_>) -> Result<(), GameError> {
        if !self.going_out_restricted(rules) {
            return Ok(());
        }
        let hand = &self.seats[seat.index()];
        let win = self.context(whence, t, Some(hand), false);
        self.judge_with(seat, win, rules).check(hand, Some(t))
    }
}

/// Why `hand` may not declare a calling hand with its discard now, if it
/// may not (whatever the tile).
fn calling_refusal(hand: &PlayerHand) -> Option<&'static str> {
    if hand.concealed.len() < 14 {
        Some("a calling declaration needs a fully concealed hand")
    } else if hand.calling {
        Some("you are already calling")
    } else if !hand.no_discard {
        Some("only an Original Call, with your first discard, is allowed")
    } else {
        None
    }
}

/// The faces among a player's concealed tiles, each once, in tile order.
fn distinct_faces(hand: &PlayerHand) -> arrayvec::ArrayVec<Tile, { super::player_hand::MAX_CONCEALED }> {
    // A bit per face (46 of them), read back in tile order: no sort.
    let mut held = 0u64;
    for t in &hand.concealed {
        held |= 1 << t.index();
    }
    let mut unique = arrayvec::ArrayVec::new();
    while held != 0 {
        unique.push(Tile::from_index(held.trailing_zeros() as usize).expect("a face's bit"));
        held &= held - 1;
    }
    unique
}
