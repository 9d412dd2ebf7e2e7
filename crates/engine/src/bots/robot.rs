//! The robot player: a fast, deterministic greedy player in the spirit of
//! mj-player, deciding from its [`TableView`] alone.
//!
//! Every decision evaluates the hands it could lead to (see the evaluation
//! module: distance to a winning shape, unseen tiles that would help, the
//! strategy's bias) and takes the best; every move is checked beforehand
//! with the engine's own [`PlayerHand`](crate::rules::player_hand::PlayerHand)
//! rules, so the engine never has reason to refuse it.

use std::cell::OnceCell;

use super::declare;
use super::eval::Evaluator;
use super::seen::Seen;
use super::shape::{Counts, is_major_index};
use super::strategy::Strategy;
use crate::rules::arrangement;
use crate::rules::command::{Action, Claim};
use crate::rules::hand::Phase;
use crate::rules::options::GameOptions;
use crate::rules::scoring::Whence;
use crate::rules::swap::MAX_LOTS;
use crate::rules::tile::{NORMAL_KINDS, Suit, Tile};
use crate::rules::tileset::{ChowPosition, SetKind, TileSet};
use crate::rules::view::{Decision, TableView};

// Values are in the evaluation's units: one tile of distance to a winning
// shape is worth `eval::STEP` (100), one unseen helpful tile 1.

/// Extra value of a kong over the pung it replaces: its points and the loose
/// tile it brings.
const KONG_BONUS: f32 = 25.0;
/// The least gain a claim must bring: an exposed set is a commitment.
const CLAIM_BASE: f32 = 15.0;
/// What a first exposed set costs a concealed hand (the concealed double,
/// and the freedom to rearrange).
const CONCEALED_COST: f32 = 25.0;
/// What an exposed set costs at full hiddenness.
const HIDDEN_COST: f32 = 200.0;
/// The value of a pung of dragons or of the seat or prevailing wind (a double).
const SCORING_PUNG_BONUS: f32 = 40.0;
/// The value of a pung of terminals or honours (double points).
const MAJOR_PUNG_BONUS: f32 = 8.0;
/// The penalty per unwanted tile at full suitness or majorness.
const SOFT_BIAS: f32 = 80.0;
/// The penalty per honour tile at full chowness (honours make no chows).
const HONOUR_BIAS: f32 = 15.0;
/// How much a chow lover (or hater) adjusts the value of claims.
const CHOW_TASTE: f32 = 40.0;
/// Under `OneChowOneSuit` the robot likes chows at most this much: it plays
/// for pungs (one chow is still allowed, so not -1, which never chows). The
/// figures were chosen by simulation: robots go out most often with them.
const OCOS_CHOWNESS: f64 = -0.75;
/// Under `OneChowOneSuit` the robot throws away the tiles of the other
/// numbered suits whenever it can, as at full suitness: a mixed hand cannot
/// go out.
const OCOS_SUITNESS: f64 = 1.0;

/// A robot player. It holds no state between decisions: the same view gives
/// the same decision.
#[derive(Clone, Debug, PartialEq)]
pub struct Robot {
    /// The robot's personality.
    pub strategy: Strategy,
    /// The game's options (a remote player is told them too): the robot needs
    /// to know, for one, whether seven pairs go out.
    pub options: GameOptions,
}

/// What one decision works with; the parts only some decisions need are
/// worked out when first asked for (most decisions are passes on discards
/// nobody wants).
struct Ctx<'v> {
    seen: Seen<'v>,
    /// The moves the engine lists for the robot's seat: it chooses among them.
    legal: &'v [Action],
    strategy: Strategy,
    unseen: OnceCell<Counts>,
    bias: OnceCell<[f32; NORMAL_KINDS]>,
    target: OnceCell<Option<Suit>>,
}

impl Ctx<'_> {
    /// True if the engine lists this move.
    fn listed(&self, action: &Action) -> bool {
        self.legal.contains(action)
    }

    /// The faces the engine lists to discard (without a call) or to pass in
    /// the tile swap, as bits by tile index.
    fn listed_tiles(&self) -> u64 {
        self.legal.iter().fold(0, |bits, a| match a {
            Action::Discard { tile, calling: false } | Action::PassTile { tile } => bits | 1 << tile.index(),
            _ => bits,
        })
    }

    fn unseen(&self) -> &Counts {
        self.unseen.get_or_init(|| self.seen.unseen())
    }

    /// The numbered suit a one-suit hand would be in.
    fn target(&self) -> Option<Suit> {
        *self.target.get_or_init(|| self.seen.target_suit())
    }

    /// The strategy's penalty per tile of each face.
    fn bias(&self) -> &[f32; NORMAL_KINDS] {
        self.bias.get_or_init(|| {
            let s = &self.strategy;
            if s.suitness == 0.0 && s.majorness == 0.0 && s.chowness <= 0.0 {
                return [0.0; NORMAL_KINDS]; // the default robot has no bias
            }
            let target = self.target();
            std::array::from_fn(|i| {
                let mut b = 0.0;
                if let Some(suit) = target
                    && i < 27
                    && Suit::NUMBERED[i / 9] != suit
                {
                    b += s.suitness as f32 * SOFT_BIAS;
                }
                if !is_major_index(i) {
                    b += s.majorness as f32 * SOFT_BIAS;
                }
                if i >= 27 && s.chowness > 0.0 {
                    // Scoring honours still make doubles; the others are dead weight.
                    let scoring = Tile::from_index(i).is_some_and(|t| self.seen.is_scoring_honour(t));
                    b += s.chowness as f32 * if scoring { HONOUR_BIAS / 3.0 } else { HONOUR_BIAS };
                }
                b
            })
        })
    }
}

impl Robot {
    /// A robot with this strategy for a game with these options.
    pub fn new(strategy: Strategy, options: GameOptions) -> Robot {
        Robot { strategy, options }
    }

    /// The robot's move for the view of its seat: `None` when the engine
    /// awaits nothing from it, otherwise a move the engine accepts.
    ///
    /// Only the view is consulted (the robot sees exactly what a remote
    /// player sees), and nothing random: the same view gives the same move.
    pub fn decide(&self, view: &TableView) -> Option<Action> {
        let hv = view.hand.as_ref()?;
        let decision = hv.my_decision?;
        let legal = hv.my_actions.as_slice();
        if legal.is_empty() {
            return None;
        }
        let Some(seen) = Seen::read(view) else { return Some(fallback(legal)) };
        let ctx = Ctx {
            seen,
            legal,
            strategy: self.playing_strategy(),
            unseen: OnceCell::new(),
            bias: OnceCell::new(),
            target: OnceCell::new(),
        };
        let options = &self.options;
        let action = match decision {
            Decision::Declare => self.declare(&ctx),
            Decision::Discard => self.play_turn(&ctx),
            Decision::AnswerDiscard => self.answer_discard(&ctx),
            Decision::AnswerKong => self.answer_kong(&ctx),
            Decision::ChooseChowPosition if hv.phase == Phase::MahJonging => {
                declare::winning_chow_position(&ctx.seen, hv.pending_discard, options)
            }
            Decision::ChooseChowPosition => self.choose_chow_position(&ctx),
            Decision::UseDiscard => declare::use_discard(&ctx.seen, hv.pending_discard, options),
            Decision::DeclareWinningHand => declare::winning_set(&ctx.seen, options),
            Decision::ShowHand => declare::loser_set(&ctx.seen),
            Decision::ChooseSwap => self.choose_swap(&ctx),
            // The tile passed is the one the robot would discard.
            Decision::PassTile => Action::PassTile { tile: self.choose_discard(&ctx) },
        };
        // The robot's judgement works within the list; should it ever pick
        // a move the engine does not list, a listed one is made instead.
        Some(if ctx.listed(&action) { action } else { fallback(legal) })
    }

    /// The strategy the robot plays: its own, except that under
    /// `OneChowOneSuit` (at most one chow, one suit) it plays for pungs and
    /// for one suit, however much it likes chows or mixed suits.
    fn playing_strategy(&self) -> Strategy {
        let mut s = self.strategy;
        if self.options.one_chow_one_suit {
            s.chowness = s.chowness.min(OCOS_CHOWNESS);
            s.suitness = s.suitness.max(OCOS_SUITNESS);
        }
        s
    }

    /// Under `OneChowOneSuit`, true if a set of `set` can still be part of a
    /// hand that may go out as an ordinary hand: no second chow, and no
    /// second numbered suit.
    fn set_keeps_one_chow_one_suit(&self, ctx: &Ctx<'_>, set: TileSet) -> bool {
        if !self.options.one_chow_one_suit {
            return true;
        }
        if set.kind.is_chow() && arrangement::chows(&ctx.seen.hand) > 0 {
            return false;
        }
        !set.tile.is_numbered() || ctx.target() == Some(set.tile.suit())
    }

    fn evaluator<'a>(&self, ctx: &'a Ctx<'_>, need: u8) -> Evaluator<'a> {
        Evaluator {
            need,
            seven_pairs: self.options.seven_pairs && need == 4,
            wonders: need == 4,
            pung_weight: (-ctx.strategy.chowness).max(0.0) as f32,
            unseen: ctx.unseen(),
            bias: ctx.bias(),
        }
    }

    /// The value of a hand that needs `need` sets: a waiting hand as it
    /// stands, a hand that has just drawn after its best discard.
    fn hand_value(&self, ctx: &Ctx<'_>, counts: &Counts, need: u8) -> f32 {
        let ev = self.evaluator(ctx, need);
        let n: u32 = counts.iter().map(|&c| c as u32).sum();
        if n % 3 == 2 {
            let allowed = self.discardable(ctx, counts);
            ev.best_discard(counts, |i| allowed >> i & 1 == 1, |_| 0.0, true).map_or(f32::NEG_INFINITY, |b| b.1)
        } else {
            ev.value(counts)
        }
    }

    /// The hard rules of the strategy extremes: at full suitness only
    /// off-suit tiles, at full majorness only minor tiles are discarded while
    /// there are any. The faces that may be discarded from `counts`, as bits.
    fn discardable(&self, ctx: &Ctx<'_>, counts: &Counts) -> u64 {
        let mut held = 0u64;
        let mut unwanted = 0u64;
        for (i, &c) in counts.iter().enumerate() {
            if c == 0 {
                continue;
            }
            held |= 1 << i;
            let off_suit =
                ctx.strategy.suitness >= 1.0 && ctx.target().is_some_and(|s| i < 27 && Suit::NUMBERED[i / 9] != s);
            if off_suit || (ctx.strategy.majorness >= 1.0 && !is_major_index(i)) {
                unwanted |= 1 << i;
            }
        }
        if unwanted != 0 { unwanted } else { held }
    }

    /// Decision `Declare`: bonus tiles, then useful concealed kongs, then done.
    fn declare(&self, ctx: &Ctx<'_>) -> Action {
        if let Some(&tile) = ctx.seen.hand.concealed.iter().find(|t| t.is_bonus()) {
            return Action::DeclareBonus { tile };
        }
        if let Some(tile) = self.kong_to_declare(ctx) {
            return Action::DeclareClosedKong { tile };
        }
        Action::FinishDeclaring
    }

    /// A concealed kong that does not make the hand worse.
    fn kong_to_declare(&self, ctx: &Ctx<'_>) -> Option<Tile> {
        let need = ctx.seen.need();
        if need == 0 {
            return None;
        }
        let counts = &ctx.seen.counts;
        let mut before = None;
        for (i, &c) in counts.iter().enumerate() {
            let Some(t) = Tile::from_index(i) else { continue };
            if c < 4
                || !ctx.listed(&Action::DeclareClosedKong { tile: t })
                || !self.set_keeps_one_chow_one_suit(ctx, TileSet::new(SetKind::ClosedKong, t))
            {
                continue;
            }
            let before = *before.get_or_insert_with(|| self.hand_value(ctx, counts, need));
            let mut after = *counts;
            after[i] = 0;
            if self.evaluator(ctx, need - 1).value(&after) + KONG_BONUS >= before {
                return Some(t);
            }
        }
        None
    }

    /// A pung to turn into a kong with the tile just drawn, if that does not
    /// make the hand worse.
    fn pung_to_extend(&self, ctx: &Ctx<'_>) -> Option<Tile> {
        let need = ctx.seen.need();
        let counts = &ctx.seen.counts;
        let mut before = None;
        for s in &ctx.seen.hand.sets {
            if s.tile.is_bonus() || !ctx.listed(&Action::AddToPung { tile: s.tile }) {
                continue;
            }
            let before = *before.get_or_insert_with(|| self.hand_value(ctx, counts, need));
            let mut after = *counts;
            after[s.tile.index()] = after[s.tile.index()].saturating_sub(1);
            if self.evaluator(ctx, need).value(&after) + KONG_BONUS >= before {
                return Some(s.tile);
            }
        }
        None
    }

    /// Decision `Discard`: go out, declare, or discard.
    fn play_turn(&self, ctx: &Ctx<'_>) -> Action {
        let seen = &ctx.seen;
        if ctx.listed(&Action::MahJong) {
            return Action::MahJong;
        }
        // Bonus tiles and kongs only after drawing, not after claiming.
        if seen.view.whence != Whence::Discard {
            if let Some(bonus) = ctx.legal.iter().find(|a| matches!(a, Action::DeclareBonus { .. })) {
                return bonus.clone();
            }
            if let Some(tile) = self.kong_to_declare(ctx) {
                return Action::DeclareClosedKong { tile };
            }
            if let Some(tile) = self.pung_to_extend(ctx) {
                return Action::AddToPung { tile };
            }
        }
        Action::Discard { tile: self.choose_discard(ctx), calling: false }
    }

    /// Decision `ChooseSwap` (East): a dealt Mah-Jong keeps its Heaven's
    /// Blessing; any other hand swaps every lot it may, since each lot only
    /// gives away its least useful tile, and a tile received that does not
    /// help can be discarded in turn.
    fn choose_swap(&self, ctx: &Ctx<'_>) -> Action {
        let complete = ctx.seen.hand.can_mah_jong(None, self.options.seven_pairs);
        Action::ChooseSwap { lots: if complete { 0 } else { MAX_LOTS } }
    }

    /// The least useful concealed tile (never a bonus tile): the discard, or
    /// the tile passed in East's tile swap.
    fn choose_discard(&self, ctx: &Ctx<'_>) -> Tile {
        let seen = &ctx.seen;
        let counts = &seen.counts;
        // Tie-breaks worth less than one unseen tile: tiles already on the
        // table are less use to anybody, and one the next player threw away
        // will not be chowed (mj-player's rule).
        let next = &seen.view.seats[(seen.me + 1) % 4];
        let mut tie = [0.0f32; NORMAL_KINDS];
        for &(p, t) in &seen.view.discards {
            if let Some(x) = tie.get_mut(t.index()) {
                *x += if p == next.player { 0.3 } else { 0.1 };
            }
        }
        let ev = self.evaluator(ctx, seen.need());
        let listed = ctx.listed_tiles();
        let allowed = match self.discardable(ctx, counts) & listed {
            0 => listed,
            wanted => wanted,
        };
        let best = ev.best_discard(counts, |i| allowed >> i & 1 == 1, |i| tie[i].min(0.9), false);
        best.and_then(|(i, _)| Tile::from_index(i))
            .or_else(|| seen.hand.concealed.iter().copied().find(|t| !t.is_bonus()))
            .unwrap_or(Tile::RED)
    }

    /// mj-player's hiddenness rule: a concealed hand with good chances of
    /// going out from the wall lets a winning discard go by.
    fn declines_discard_win(&self, ctx: &Ctx<'_>) -> bool {
        let h = ctx.strategy.hiddenness;
        if h <= 0.0 || !ctx.seen.concealed() {
            return false;
        }
        let chances: u32 = Tile::normal_faces()
            .filter(|&t| ctx.seen.hand.can_mah_jong(Some(t), self.options.seven_pairs))
            .map(|t| ctx.unseen()[t.index()] as u32)
            .sum();
        let (live, dead) = (ctx.seen.view.live_tiles_left as f64, ctx.seen.view.dead_tiles_left as f64);
        let ratio = if live + dead > 0.0 { live / (live + dead) } else { 0.0 };
        h * chances as f64 * ratio >= 1.5
    }

    /// Decision `AnswerDiscard`.
    fn answer_discard(&self, ctx: &Ctx<'_>) -> Action {
        let seen = &ctx.seen;
        let Some(c) = seen.view.claimable else { return Action::Pass { discard: 0 } };
        let (t, serial) = (c.tile, c.discard);
        let pass = Action::Pass { discard: serial };
        if t.is_bonus() {
            return pass; // the engine never offers one; nothing could use it
        }
        let mah_jong = Action::Claim { discard: serial, claim: Claim::MahJong };
        if ctx.listed(&mah_jong) {
            if !self.declines_discard_win(ctx) {
                return mah_jong;
            }
            return pass;
        }
        if seen.hand.calling || ctx.strategy.hiddenness >= 1.0 {
            return pass;
        }
        match self.best_claim(ctx, t, serial) {
            Some(claim) => Action::Claim { discard: serial, claim },
            None => pass,
        }
    }

    /// The most valuable listed claim on `t` (discard number `serial`), if
    /// any is worth its cost.
    fn best_claim(&self, ctx: &Ctx<'_>, t: Tile, serial: u32) -> Option<Claim> {
        let seen = &ctx.seen;
        let need = seen.need();
        let listed = |claim: Claim| ctx.listed(&Action::Claim { discard: serial, claim });
        let can_pung = listed(Claim::Pung);
        let may_chow = ctx.strategy.chowness > -1.0;
        let chows = ChowPosition::ALL.map(|p| {
            may_chow
                && listed(Claim::Chow(Some(p)))
                && p.lowest_tile(t)
                    .is_some_and(|low| self.set_keeps_one_chow_one_suit(ctx, TileSet::new(SetKind::Chow, low)))
        });
        let can_pung = can_pung && self.set_keeps_one_chow_one_suit(ctx, TileSet::new(SetKind::Pung, t));
        if need == 0 || (!can_pung && !chows.contains(&true)) {
            return None;
        }
        let s = &ctx.strategy;
        let cost = CLAIM_BASE + if seen.concealed() { CONCEALED_COST } else { 0.0 } + s.hiddenness as f32 * HIDDEN_COST;
        let set_bias = |set: TileSet| set.tiles().map(|x| ctx.bias()[x.index()]).sum::<f32>();
        let pung_bonus = if seen.is_scoring_honour(t) {
            SCORING_PUNG_BONUS
        } else if t.is_major() {
            MAJOR_PUNG_BONUS
        } else {
            0.0
        };
        let counts = &seen.counts;
        // A claim that does not bring the hand closer is seldom worth an
        // exposed set; a cheap look at the distance spares most full
        // evaluations (a scoring pung or a chow lover's chow may still be).
        let distance_before = self.evaluator(ctx, need).distance(counts);
        let closer = |after: &Counts, eager: bool| {
            let d = self.evaluator(ctx, need - 1).best_discard_distance(after);
            d < distance_before || (eager && d <= distance_before)
        };
        let mut before = None;
        let mut best: Option<(Claim, f32)> = None;
        let mut consider = |claim: Claim, value: f32, before: f32| {
            if value > before && best.is_none_or(|(_, b)| value > b) {
                best = Some((claim, value));
            }
        };
        if can_pung && listed(Claim::Kong) {
            let mut after = *counts;
            after[t.index()] = after[t.index()].saturating_sub(3);
            let kong = TileSet::new(SetKind::Kong { annexed: false }, t);
            let v = self.evaluator(ctx, need - 1).value(&after) + KONG_BONUS + pung_bonus - set_bias(kong) - cost;
            let b = *before.get_or_insert_with(|| self.hand_value(ctx, counts, need));
            consider(Claim::Kong, v, b);
        }
        if can_pung {
            let mut after = *counts;
            after[t.index()] = after[t.index()].saturating_sub(2);
            if closer(&after, pung_bonus >= SCORING_PUNG_BONUS || s.chowness < -0.5) {
                let pung = TileSet::new(SetKind::Pung, t);
                let taste = -(s.chowness as f32) * CHOW_TASTE / 2.0;
                let v = self.hand_value(ctx, &after, need - 1) + pung_bonus + taste - set_bias(pung) - cost;
                let b = *before.get_or_insert_with(|| self.hand_value(ctx, counts, need));
                consider(Claim::Pung, v, b);
            }
        }
        for (k, pos) in ChowPosition::ALL.into_iter().enumerate() {
            let Some(low) = pos.lowest_tile(t).filter(|_| chows[k]) else { continue };
            let mut after = *counts;
            for x in (0..3).filter_map(|d| low.up(d)).filter(|&x| x != t) {
                after[x.index()] = after[x.index()].saturating_sub(1);
            }
            if !closer(&after, s.chowness >= 0.5) {
                continue;
            }
            let chow = TileSet::new(SetKind::Chow, low);
            let taste = s.chowness as f32 * CHOW_TASTE;
            let v = self.hand_value(ctx, &after, need - 1) + taste - set_bias(chow) - cost;
            let b = *before.get_or_insert_with(|| self.hand_value(ctx, counts, need));
            consider(Claim::Chow(Some(pos)), v, b);
        }
        best.map(|(c, _)| c)
    }

    /// Decision `AnswerKong`: rob it when that goes out.
    fn answer_kong(&self, ctx: &Ctx<'_>) -> Action {
        let Some(c) = ctx.seen.view.claimable else { return Action::Pass { discard: 0 } };
        let rob = Action::Claim { discard: c.discard, claim: Claim::MahJong };
        if ctx.listed(&rob) { rob } else { Action::Pass { discard: c.discard } }
    }

    /// Decision `ChooseChowPosition` for a chow claimed without a position
    /// (the robot always names one, but a seat it takes over may not have).
    fn choose_chow_position(&self, ctx: &Ctx<'_>) -> Action {
        let seen = &ctx.seen;
        let t = seen.view.claimable.map(|c| c.tile);
        let need = seen.need().max(1);
        let mut best: Option<(ChowPosition, f32)> = None;
        for pos in ChowPosition::ALL {
            let (Some(t), Some(low)) = (t, t.and_then(|t| pos.lowest_tile(t))) else { continue };
            if !ctx.listed(&Action::ChooseChowPosition { position: pos }) {
                continue;
            }
            let mut after = seen.counts;
            for x in (0..3).filter_map(|d| low.up(d)).filter(|&x| x != t) {
                after[x.index()] = after[x.index()].saturating_sub(1);
            }
            let v = self.hand_value(ctx, &after, need - 1);
            if best.is_none_or(|(_, b)| v > b) {
                best = Some((pos, v));
            }
        }
        Action::ChooseChowPosition { position: best.map_or(ChowPosition::Lower, |b| b.0) }
    }
}

/// A listed move for a view the robot cannot read (no seat or no tiles of
/// its own): passing, showing and finishing first, else the first listed.
fn fallback(legal: &[Action]) -> Action {
    let safe = |a: &&Action| matches!(a, Action::Pass { .. } | Action::ShowTiles | Action::FinishDeclaring);
    legal.iter().find(safe).or(legal.first()).cloned().unwrap_or(Action::ShowTiles)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::command::{Command, DiscardUse, PlayerId, WallSource};
    use crate::rules::game::Game;
    use crate::rules::hand::Outcome;
    use crate::rules::invariants;
    use crate::rules::tile::{Wind, parse_tiles};
    use crate::rules::view;

    fn tiles(s: &str) -> Vec<Tile> {
        parse_tiles(s).unwrap()
    }

    fn t(s: &str) -> Tile {
        s.parse().unwrap()
    }

    /// A wall dealing these hands (East 14 tiles, the others 13), then the
    /// `next` tiles, then the rest of the set in order.
    fn wall(hands: [&str; 4], next: &str, flowers: bool) -> Vec<Tile> {
        let hands = hands.map(tiles);
        let mut out = Vec::new();
        for r in 0..3 {
            for h in &hands {
                out.extend_from_slice(&h[4 * r..4 * r + 4]);
            }
        }
        for h in &hands {
            out.push(h[12]);
        }
        out.push(hands[0][13]);
        out.extend(tiles(next));
        let mut rest = crate::rules::tile::TileCounts::of(Tile::full_set(flowers, false));
        for &x in &out {
            assert!(rest.remove(x), "too many {x}");
        }
        out.extend(Tile::all_faces().flat_map(|f| std::iter::repeat_n(f, rest.get(f) as usize)));
        out
    }

    fn options(text: &str) -> GameOptions {
        let mut o = GameOptions { flowers: false, ..GameOptions::default() };
        o.apply_option_file(text).unwrap();
        o
    }

    /// Plays the first hand to its end: robots for everybody, except that
    /// `script` may answer for a player first. Every command must be accepted.
    fn play_hand(
        options: &GameOptions,
        wall: Vec<Tile>,
        mut script: impl FnMut(PlayerId, Decision) -> Option<Action>,
    ) -> (Game, Vec<(PlayerId, Action)>) {
        let mut game = Game::new(options.clone());
        game.apply(Command::StartHand { dice: None, wall: WallSource::Tiles(wall) }).unwrap();
        let robot = Robot::new(Strategy::default(), options.clone());
        let mut log = Vec::new();
        while game.hand_in_progress() {
            let hand = game.hand().unwrap();
            let (p, d) =
                PlayerId::ALL.into_iter().find_map(|p| view::decision(hand, hand.seat_of(p)).map(|d| (p, d))).unwrap();
            let v = game.view(Some(p));
            let action = script(p, d).unwrap_or_else(|| robot.decide(&v).unwrap());
            log.push((p, action.clone()));
            if let Err(e) = game.apply(Command::Act { player: p, action: action.clone() }) {
                panic!("{p:?} {d:?}: {action:?} refused: {e}\n{log:?}");
            }
            invariants::check(&game).unwrap();
        }
        (game, log)
    }

    fn winner(game: &Game) -> Option<Wind> {
        match game.hand().unwrap().outcome() {
            Some(Outcome::Won { winner, .. }) => Some(*winner),
            _ => None,
        }
    }

    const FILLER: [&str; 3] = [
        "2C 2C 7C 7C 3D 3D 3D 6B 6B 8C SW SW NW",
        "4B 4B 5B 5B 5B 9C 9C 6D 6D GD GD 1C 1C",
        "2D 2D 7B 7B 8B 8B 3C 3C 8C 6D WW WW NW",
    ];

    #[test]
    fn goes_out_with_a_dealt_hand_and_declares_it() {
        let east = "1B 2B 3B 4C 5C 6C 7D 8D 9D EW EW EW RD RD";
        let (game, log) =
            play_hand(&options(""), wall([east, FILLER[0], FILLER[1], FILLER[2]], "", false), |_, _| None);
        assert_eq!(winner(&game), Some(Wind::East));
        assert!(log.contains(&(PlayerId(0), Action::MahJong)));
        let east = game.hand().unwrap().seat(Wind::East);
        assert!(east.is_complete(false), "{east:?}");
        // Pungs rather than chows where there is a choice: EW EW EW stays a pung.
        assert!(east.sets.iter().any(|s| s.kind == SetKind::ClosedPung && s.tile == t("EW")));
        // A loser forms its concealed pung and its scoring pair of dragons.
        let west = game.hand().unwrap().seat(Wind::West);
        assert!(west.sets.iter().any(|s| s.kind == SetKind::ClosedPung && s.tile == t("5B")), "{west:?}");
        assert!(west.sets.iter().any(|s| s.kind == SetKind::ClosedPair && s.tile == t("GD")), "{west:?}");
    }

    #[test]
    fn declares_seven_pairs() {
        let east = "1B 1B 3C 3C 5D 5D EW EW RD RD GD GD 9B 9B";
        let others = ["2C 2C 7C 7C 3D 3D 3D 6B 6B 8C SW SW NW", "4B 4B 5B 5B 5B 9C 9C 6D 6D 1C 1C 2B 2B", FILLER[2]];
        let opts = options("GameOption 0 SevenPairs bool 1020 1 1 seven pairs hand allowed\n");
        let (game, _) = play_hand(&opts, wall([east, others[0], others[1], others[2]], "", false), |_, _| None);
        assert_eq!(winner(&game), Some(Wind::East));
        let east = game.hand().unwrap().seat(Wind::East);
        assert_eq!(east.sets.len(), 7);
        assert!(east.sets.iter().all(|s| s.kind == SetKind::ClosedPair));
    }

    #[test]
    fn declares_thirteen_unique_wonders() {
        let east = "1B 9B 1C 9C 1D 9D EW SW WW NW RD WD GD GD";
        let others = [
            "2C 2C 7C 7C 3D 3D 3D 6B 6B 8C 2B 3B 4B",
            "4B 4B 5B 5B 5B 6C 6C 6D 6D 7D 7D 2D 2D",
            "5C 5C 7B 7B 8B 8B 3C 3C 8C 6D 4D 4D 5D",
        ];
        let (game, log) =
            play_hand(&options(""), wall([east, others[0], others[1], others[2]], "", false), |_, _| None);
        assert_eq!(winner(&game), Some(Wind::East));
        assert!(log.contains(&(PlayerId(0), Action::FormClosedSet { set: crate::rules::ClosedSet::SpecialSet })));
    }

    /// South waits on 1B or 4B (a chow either way, in different places);
    /// East throws one of them: the robot claims and places the tile the
    /// view shows it went out with.
    #[test]
    fn wins_on_a_discard_and_places_the_tile() {
        let east = "1B 4B 5C 6C 8D 9D SW NW NW WD WD 2D 7B 4D";
        let south = "2B 3B 4C 5C 6C 7D 8D 9D EW EW EW RD RD";
        let west = "1B 4B 5B 5B 5B 9C 9C 6D 6D GD GD 1C 1C";
        let north = "2D 2D 7B 7B 8B 8B 3C 3C 8C 6D WW WW NW";
        for (tile, position) in [("1B", ChowPosition::Lower), ("4B", ChowPosition::Upper)] {
            {
                let mut discarded = false;
                let deal = wall([east, south, west, north], "", false);
                let (game, log) = play_hand(&options(""), deal, |p, d| {
                    (p == PlayerId(0) && d == Decision::Discard && !std::mem::replace(&mut discarded, true))
                        .then(|| Action::Discard { tile: t(tile), calling: false })
                });
                let claim = log
                    .iter()
                    .find(|(p, a)| *p == PlayerId(1) && matches!(a, Action::Claim { .. } | Action::Pass { .. }));
                let claimed = matches!(claim, Some((_, Action::Claim { claim: Claim::MahJong, .. })));
                assert!(claimed, "{tile}: {claim:?}");
                if claimed {
                    assert_eq!(winner(&game), Some(Wind::South));
                    let use_as = DiscardUse::Chow(Some(position));
                    assert!(log.contains(&(PlayerId(1), Action::UseDiscard { use_as })), "{log:?}");
                }
            }
        }
    }

    #[test]
    fn wins_seven_pairs_and_wonders_on_discards() {
        let seven = "GameOption 0 SevenPairs bool 1020 1 1 seven pairs hand allowed\n";
        let cases = [
            ("1B 1B 3C 3C 5D 5D EW EW RD RD GD GD 9B", "9B", seven, DiscardUse::Pair),
            ("1B 9B 1C 9C 1D 9D EW SW WW NW RD WD GD", "GD", "", DiscardUse::SpecialSet),
        ];
        for (south, win, opts, use_as) in cases {
            let east = format!("{win} 2C 5C 6C 8D 7D SW 4B 4B WD 2D 7B 4D 6D");
            let west = "5B 5B 5B 6B 6B 9C 9C 6D 6D 7C 7C 1C 3B";
            let north = "2D 2D 7B 7B 8B 8B 3C 3C 8C 6D 2B 2B 4C";
            let mut discarded = false;
            let (game, log) = play_hand(&options(opts), wall([&east, south, west, north], "", false), |p, d| {
                (p == PlayerId(0) && d == Decision::Discard && !std::mem::replace(&mut discarded, true))
                    .then(|| Action::Discard { tile: t(win), calling: false })
            });
            assert_eq!(winner(&game), Some(Wind::South), "{south}: {log:?}");
            assert!(log.contains(&(PlayerId(1), Action::UseDiscard { use_as })), "{log:?}");
        }
    }

    #[test]
    fn declares_bonus_tiles_at_once() {
        let opts = GameOptions::default();
        let east = "1F 2B 3B 4C 5C 6C 7D 8D 9D EW EW EW RD RD";
        let mut game = Game::new(opts.clone());
        game.apply(Command::StartHand {
            dice: None,
            wall: WallSource::Tiles(wall([east, FILLER[0], FILLER[1], FILLER[2]], "", true)),
        })
        .unwrap();
        let robot = Robot::new(Strategy::default(), opts);
        let v = game.view(Some(PlayerId(0)));
        assert_eq!(robot.decide(&v), Some(Action::DeclareBonus { tile: t("1F") }));
        // The same view gives the same move; a player with nothing to do gets none.
        assert_eq!(robot.decide(&v), robot.decide(&v));
        assert_eq!(robot.decide(&game.view(Some(PlayerId(2)))), None);
        assert_eq!(robot.decide(&game.view(None)), None);
    }
}
