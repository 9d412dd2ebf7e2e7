//! After Mah-Jong: placing the tile the robot went out with (the view's
//! `pending_discard`), declaring the winning hand as sets the engine accepts,
//! and forming a loser's scoring sets.

use arrayvec::ArrayVec;

use super::seen::Seen;
use crate::rules::arrangement::{self, Completion, DISCARD_USES, GoingOut, Part, Shape};
use crate::rules::command::{Action, ClosedSet, DiscardUse};
use crate::rules::options::GameOptions;
use crate::rules::player_hand::PlayerHand;
use crate::rules::tile::{NORMAL_KINDS, Tile};
use crate::rules::tileset::{ChowPosition, SetKind};

/// The ways the winner may place tile `t`, in order of preference for
/// scoring: a special hand, a pung, the eyes ("fishing the eyes" scores), then
/// chows. Each is checked as the engine checks it, the restrictions on going
/// out included (`judge`, when they are in force).
fn uses_for(hand: &PlayerHand, t: Tile, seven_pairs: bool, judge: Option<&GoingOut<'_>>) -> ArrayVec<DiscardUse, 6> {
    DISCARD_USES
        .into_iter()
        .filter(|&u| {
            arrangement::place_discard(hand, t, u, seven_pairs).is_some_and(|h| judge.is_none_or(|j| j.allows(&h)))
        })
        .collect()
}

/// The judge of the robot's own going out after Mah-Jong (the view shows the
/// tile it went out with), when a restriction is in force.
fn winner_judge<'a>(seen: &'a Seen<'_>, options: &'a GameOptions) -> Option<GoingOut<'a>> {
    seen.going_out(options, seen.view.whence, seen.view.winning_tile)
}

/// Decision `UseDiscard`: the best-scoring way to place `tile`, the discard
/// (or robbed tile) the robot went out with.
pub(crate) fn use_discard(seen: &Seen<'_>, tile: Option<Tile>, options: &GameOptions) -> Action {
    let judge = winner_judge(seen, options);
    // The engine always shows the tile while it waits to be placed; without
    // it any answer is a guess, and the pair is the commonest way out.
    let use_as = tile
        .and_then(|t| uses_for(&seen.hand, t, options.seven_pairs, judge.as_ref()).first().copied())
        .unwrap_or(DiscardUse::Pair);
    Action::UseDiscard { use_as }
}

/// Decision `ChooseChowPosition` while Mah-Jonging (the winner asked to chow
/// `tile` "anywhere"): a position that completes the hand.
pub(crate) fn winning_chow_position(seen: &Seen<'_>, tile: Option<Tile>, options: &GameOptions) -> Action {
    let judge = winner_judge(seen, options);
    let position = tile
        .and_then(|t| {
            uses_for(&seen.hand, t, options.seven_pairs, judge.as_ref()).into_iter().find_map(|u| match u {
                DiscardUse::Chow(Some(p)) => Some(p),
                _ => None,
            })
        })
        .unwrap_or(ChowPosition::Lower);
    Action::ChooseChowPosition { position }
}

/// The face with normal-tile index `i` (always below 34 here).
fn tile(i: usize) -> Tile {
    Tile::from_index(i).unwrap_or(Tile::RED)
}

/// A rough score of a winning hand made of the declared sets and `parts`
/// (points for pungs and scoring pairs, doubles for honour pungs, no chows,
/// concealment), enough to prefer pungs to chows and scoring pairs.
fn rough_score(seen: &Seen<'_>, parts: &[Part], seven: bool) -> f64 {
    let mut points = 20.0 + if seven { 20.0 } else { 0.0 };
    let mut pair_points = 0.0;
    let mut doubles = 0;
    let mut chows = false;
    let mut pung = |t: Tile, concealed: bool, kong: bool| {
        let mut p: f64 = if t.is_major() { 4.0 } else { 2.0 };
        if concealed {
            p *= 2.0;
        }
        if kong {
            p *= 4.0;
        }
        points += p;
        if seen.is_scoring_honour(t) {
            doubles += 1;
        }
    };
    for s in &seen.hand.sets {
        match s.kind {
            SetKind::Chow | SetKind::ClosedChow => chows = true,
            SetKind::Pung => pung(s.tile, false, false),
            SetKind::ClosedPung => pung(s.tile, true, false),
            SetKind::Kong { .. } => pung(s.tile, false, true),
            SetKind::ClosedKong => pung(s.tile, true, true),
            SetKind::Pair | SetKind::ClosedPair => {}
        }
    }
    for &p in parts {
        match p {
            Part::Pung(t) => pung(t, true, false),
            Part::Chow(_) => chows = true,
            Part::Pair(t) => {
                if seen.is_scoring_honour(t) {
                    pair_points += 2.0;
                }
            }
        }
    }
    if !chows {
        doubles += 1;
    }
    if seen.concealed() {
        doubles += 1;
    }
    (points + pair_points) * f64::from(1u32 << doubles.min(10))
}

/// The action forming `part`.
fn form(p: Part) -> Action {
    Action::FormClosedSet { set: p.closed_set() }
}

/// True if the engine will accept the winner forming `p` now (the
/// restrictions on going out aside).
fn winner_may_form(hand: &PlayerHand, p: Part, seven_pairs: bool) -> bool {
    let mut h = hand.clone();
    p.form(&mut h).is_ok() && h.can_mah_jong(None, seven_pairs)
}

/// The best-scoring of `ways` whose first set the robot may form, among
/// those `fit` accepts; the first found among equals, deterministically.
fn best_way<'w>(
    seen: &Seen<'_>,
    ways: &'w [Completion],
    seven_pairs: bool,
    fit: impl Fn(&Completion) -> bool,
) -> Option<&'w Completion> {
    ways.iter()
        .filter(|w| fit(w) && w.parts.first().is_some_and(|&p| winner_may_form(&seen.hand, p, seven_pairs)))
        .map(|w| (rough_score(seen, &w.parts, w.shape == Shape::SevenPairs), w))
        .fold(None::<(f64, &Completion)>, |acc, x| if acc.is_none_or(|a| x.0 > a.0) { Some(x) } else { acc })
        .map(|(_, w)| w)
}

/// Decision `DeclareWinningHand`: the next set of the best-scoring way to
/// declare the rest of the hand, among the ways that may go out.
pub(crate) fn winning_set(seen: &Seen<'_>, options: &GameOptions) -> Action {
    let hand = &seen.hand;
    let seven_pairs = options.seven_pairs;
    if hand.sets.is_empty() && hand.can_thirteen_wonders(None) {
        return Action::FormClosedSet { set: ClosedSet::SpecialSet };
    }
    let ways = arrangement::completions(hand, seven_pairs);
    let judge = winner_judge(seen, options);
    // Under a restriction, a way the robot cannot be sure of is the last
    // choice: the engine knows more of the circumstances and may accept it.
    let best = best_way(seen, &ways, seven_pairs, |w| judge.as_ref().is_none_or(|j| j.qualifies(w)))
        .or_else(|| best_way(seen, &ways, seven_pairs, |_| true));
    if let Some(&p) = best.and_then(|w| w.parts.first()) {
        return form(p);
    }
    // The completions above cover every complete hand; this is a last
    // resort that still only offers a set the engine accepts if one exists.
    for i in 0..NORMAL_KINDS {
        for p in [Part::Pung(tile(i)), Part::Chow(tile(i)), Part::Pair(tile(i))] {
            if winner_may_form(hand, p, seven_pairs) {
                return form(p);
            }
        }
    }
    Action::FormClosedSet { set: ClosedSet::SpecialSet }
}

/// Decision `ShowHand`: a loser forms its concealed pungs (points, and
/// perhaps three concealed pungs) and scoring pairs, then shows the rest.
pub(crate) fn loser_set(seen: &Seen<'_>) -> Action {
    let hand = &seen.hand;
    for (i, &c) in seen.counts.iter().enumerate() {
        let t = tile(i);
        if c >= 3 && hand.clone().form_closed_pung(t).is_ok() {
            return Action::FormClosedSet { set: ClosedSet::Pung(t) };
        }
    }
    for (i, &c) in seen.counts.iter().enumerate() {
        let t = tile(i);
        if c >= 2 && seen.is_scoring_honour(t) && hand.clone().form_closed_pair(t).is_ok() {
            return Action::FormClosedSet { set: ClosedSet::Pair(t) };
        }
    }
    Action::ShowTiles
}
