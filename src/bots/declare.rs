//! After Mah-Jong: placing the tile the robot went out with (the view's
//! `pending_discard`), declaring the winning hand as sets the engine accepts,
//! and forming a loser's scoring sets.

use arrayvec::ArrayVec;

use super::seen::Seen;
use super::shape::Counts;
use crate::rules::command::{Action, ClosedSet, DiscardUse};
use crate::rules::player_hand::PlayerHand;
use crate::rules::tile::{NORMAL_KINDS, Tile};
use crate::rules::tileset::{ChowPosition, SetKind};

/// The ways the winner may place tile `t`, in order of preference for
/// scoring: a special hand, a pung, the eyes ("fishing the eyes" scores), then
/// chows. Each is checked as the engine checks it.
fn uses_for(hand: &PlayerHand, t: Tile, seven_pairs: bool) -> ArrayVec<DiscardUse, 6> {
    let mut out = ArrayVec::new();
    if hand.sets.is_empty() && hand.can_thirteen_wonders(Some(t)) {
        out.push(DiscardUse::SpecialSet);
    }
    let mut h = hand.clone();
    if h.pung(t).is_ok() && h.can_mah_jong(None, seven_pairs) {
        out.push(DiscardUse::Pung);
    }
    let mut h = hand.clone();
    if h.pair(t).is_ok() && h.can_mah_jong(None, seven_pairs) {
        out.push(DiscardUse::Pair);
    }
    for pos in ChowPosition::ALL {
        let mut h = hand.clone();
        if h.chow(t, pos).is_ok() && h.can_mah_jong(None, seven_pairs) {
            out.push(DiscardUse::Chow(Some(pos)));
        }
    }
    out
}

/// Decision `UseDiscard`: the best-scoring way to place `tile`, the discard
/// (or robbed tile) the robot went out with.
pub(crate) fn use_discard(seen: &Seen<'_>, tile: Option<Tile>, seven_pairs: bool) -> Action {
    // The engine always shows the tile while it waits to be placed; without
    // it any answer is a guess, and the pair is the commonest way out.
    let use_as = tile.and_then(|t| uses_for(&seen.hand, t, seven_pairs).first().copied()).unwrap_or(DiscardUse::Pair);
    Action::UseDiscard { use_as }
}

/// Decision `ChooseChowPosition` while Mah-Jonging (the winner asked to chow
/// `tile` "anywhere"): a position that completes the hand.
pub(crate) fn winning_chow_position(seen: &Seen<'_>, tile: Option<Tile>, seven_pairs: bool) -> Action {
    let position = tile
        .and_then(|t| {
            uses_for(&seen.hand, t, seven_pairs).into_iter().find_map(|u| match u {
                DiscardUse::Chow(Some(p)) => Some(p),
                _ => None,
            })
        })
        .unwrap_or(ChowPosition::Lower);
    Action::ChooseChowPosition { position }
}

/// A concealed set of a winning decomposition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    Pung(usize),
    Chow(usize),
    Pair(usize),
}

/// Every way of splitting `c` into `melds` pungs or chows and `pairs` pairs.
fn splits(c: &mut Counts, melds: u8, pairs: u8, parts: &mut ArrayVec<Part, 7>, out: &mut Vec<ArrayVec<Part, 7>>) {
    let Some(i) = c.iter().position(|&n| n > 0) else {
        if melds == 0 && pairs == 0 {
            out.push(parts.clone());
        }
        return;
    };
    if melds > 0 && c[i] >= 3 {
        c[i] -= 3;
        parts.push(Part::Pung(i));
        splits(c, melds - 1, pairs, parts, out);
        parts.pop();
        c[i] += 3;
    }
    if melds > 0 && i < 27 && i % 9 <= 6 && c[i + 1] > 0 && c[i + 2] > 0 {
        c[i] -= 1;
        c[i + 1] -= 1;
        c[i + 2] -= 1;
        parts.push(Part::Chow(i));
        splits(c, melds - 1, pairs, parts, out);
        parts.pop();
        c[i] += 1;
        c[i + 1] += 1;
        c[i + 2] += 1;
    }
    if pairs > 0 && c[i] >= 2 {
        c[i] -= 2;
        parts.push(Part::Pair(i));
        splits(c, melds, pairs - 1, parts, out);
        parts.pop();
        c[i] += 2;
    }
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
            Part::Pung(i) => pung(tile(i), true, false),
            Part::Chow(_) => chows = true,
            Part::Pair(i) => {
                if seen.is_scoring_honour(tile(i)) {
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
    let set = match p {
        Part::Pung(i) => ClosedSet::Pung(tile(i)),
        Part::Chow(i) => ClosedSet::Chow(tile(i)),
        Part::Pair(i) => ClosedSet::Pair(tile(i)),
    };
    Action::FormClosedSet { set }
}

/// True if the engine will accept the winner forming `p` now.
fn winner_may_form(hand: &PlayerHand, p: Part, seven_pairs: bool) -> bool {
    let mut h = hand.clone();
    let ok = match p {
        Part::Pung(i) => h.form_closed_pung(tile(i)),
        Part::Chow(i) => h.form_closed_chow(tile(i)),
        Part::Pair(i) => h.form_closed_pair(tile(i)),
    };
    ok.is_ok() && h.can_mah_jong(None, seven_pairs)
}

/// Decision `DeclareWinningHand`: the next set of the best-scoring way to
/// declare the rest of the hand.
pub(crate) fn winning_set(seen: &Seen<'_>, seven_pairs: bool) -> Action {
    let hand = &seen.hand;
    if hand.sets.is_empty() && hand.can_thirteen_wonders(None) {
        return Action::FormClosedSet { set: ClosedSet::SpecialSet };
    }
    let pairs_declared = hand.sets.iter().filter(|s| s.kind.is_pair()).count() as u8;
    let melds_declared = hand.sets.len() as u8 - pairs_declared;
    let mut ways: Vec<ArrayVec<Part, 7>> = Vec::new();
    let mut c = seen.counts;
    if pairs_declared <= 1 && melds_declared <= 4 {
        splits(&mut c, 4 - melds_declared, 1 - pairs_declared, &mut ArrayVec::new(), &mut ways);
    }
    let standard_ways = ways.len();
    if seven_pairs && melds_declared == 0 {
        splits(&mut c, 0, 7 - pairs_declared, &mut ArrayVec::new(), &mut ways);
    }
    let best = ways
        .iter()
        .enumerate()
        .filter(|(_, w)| w.first().is_some_and(|&p| winner_may_form(hand, p, seven_pairs)))
        .map(|(k, w)| (rough_score(seen, w, k >= standard_ways), k))
        // Highest score; among equals the first found, deterministically.
        .fold(None::<(f64, usize)>, |acc, x| if acc.is_none_or(|a| x.0 > a.0) { Some(x) } else { acc });
    if let Some((_, k)) = best
        && let Some(&p) = ways[k].first()
    {
        return form(p);
    }
    // The decompositions above cover every complete hand; this is a last
    // resort that still only offers a set the engine accepts if one exists.
    for i in 0..NORMAL_KINDS {
        for p in [Part::Pung(i), Part::Chow(i), Part::Pair(i)] {
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
