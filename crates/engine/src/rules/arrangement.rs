//! The ways a hand can be completed into sets, and the restrictions on going
//! out that depend on them: `MinimumDoubles` (seed 002) and `OneChowOneSuit`
//! (seed 003).
//!
//! A winning hand's score depends on how its concealed tiles are arranged
//! into sets (a chow or a pung, which pair), and the winner chooses that
//! arrangement only after declaring Mah-Jong, one declaration at a time. So a
//! restriction is judged over every arrangement still open to the winner: it
//! may go out (and make a declaration) only if at least one of them
//! qualifies. Each arrangement is scored by the scoring module itself, under
//! the same circumstances its final scoring will see, so the judgement and
//! the score can never disagree.
//!
//! None of this runs unless a restriction is in force (see
//! [`GoingOut::restricted`]): the default game never pays for it.

use arrayvec::ArrayVec;

use super::analysis;
use super::command::{ClosedSet, DiscardUse, GameError};
use super::options::GameOptions;
use super::player_hand::{HandError, MAX_SETS, PlayerHand};
use super::scoring::{self, ScoringInput, WinContext};
use super::tile::{NORMAL_KINDS, Tile, TileCounts, Wind};
use super::tileset::ChowPosition;

/// A set formed from concealed tiles after Mah-Jong (a `FormClosedSet`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// A concealed pung of this tile.
    Pung(Tile),
    /// A concealed chow whose lowest tile is this one.
    Chow(Tile),
    /// A concealed pair of this tile.
    Pair(Tile),
}

impl Part {
    /// The `FormClosedSet` that forms this part.
    pub fn closed_set(self) -> ClosedSet {
        match self {
            Part::Pung(t) => ClosedSet::Pung(t),
            Part::Chow(t) => ClosedSet::Chow(t),
            Part::Pair(t) => ClosedSet::Pair(t),
        }
    }

    /// Forms this part from the concealed tiles of `hand`, as the engine does.
    pub fn form(self, hand: &mut PlayerHand) -> Result<(), HandError> {
        match self {
            Part::Pung(t) => hand.form_closed_pung(t),
            Part::Chow(t) => hand.form_closed_chow(t),
            Part::Pair(t) => hand.form_closed_pair(t),
        }
    }

    /// Order of the kinds at one face, to generate each split only once.
    fn rank(self) -> u8 {
        match self {
            Part::Pung(_) => 0,
            Part::Chow(_) => 1,
            Part::Pair(_) => 2,
        }
    }
}

/// The parts of one split of concealed tiles (at most seven pairs).
pub type Parts = ArrayVec<Part, MAX_SETS>;

/// Every way of splitting `counts` exactly into `melds` pungs or chows and
/// `pairs` pairs, each split once (the parts in order of their lowest tile).
/// A bonus tile can never be part of a set, so counts holding one split no way.
pub fn splits(counts: &TileCounts, melds: u8, pairs: u8) -> Vec<Parts> {
    let mut out = Vec::new();
    if counts.0[NORMAL_KINDS..].iter().any(|&n| n > 0) {
        return out;
    }
    let total: usize = counts.0.iter().map(|&n| n as usize).sum();
    if total != 3 * melds as usize + 2 * pairs as usize {
        return out;
    }
    let mut c = [0u8; NORMAL_KINDS];
    c.copy_from_slice(&counts.0[..NORMAL_KINDS]);
    split(&mut c, melds, pairs, &mut Parts::new(), &mut out);
    out
}

fn split(c: &mut [u8; NORMAL_KINDS], melds: u8, pairs: u8, parts: &mut Parts, out: &mut Vec<Parts>) {
    let Some(i) = c.iter().position(|&n| n > 0) else {
        if melds == 0 && pairs == 0 {
            out.push(parts.clone());
        }
        return;
    };
    let Some(t) = Tile::from_index(i) else { return };
    // Sets starting at the same face are taken in the order pung, chow,
    // pair, so that 1111-2-3 is not found both as pung+chow and chow+pung.
    let min_rank = match parts.last() {
        Some(&p @ (Part::Pung(u) | Part::Chow(u) | Part::Pair(u))) if u == t => p.rank(),
        _ => 0,
    };
    if melds > 0 && c[i] >= 3 && min_rank == 0 {
        c[i] -= 3;
        parts.push(Part::Pung(t));
        split(c, melds - 1, pairs, parts, out);
        parts.pop();
        c[i] += 3;
    }
    // The index layout keeps each numbered suit's 1-9 consecutive, and i < 27
    // means i is a numbered tile; a chow must not run past 9.
    if melds > 0 && min_rank <= 1 && i < 27 && i % 9 <= 6 && c[i + 1] > 0 && c[i + 2] > 0 {
        c[i] -= 1;
        c[i + 1] -= 1;
        c[i + 2] -= 1;
        parts.push(Part::Chow(t));
        split(c, melds - 1, pairs, parts, out);
        parts.pop();
        c[i] += 1;
        c[i + 1] += 1;
        c[i + 2] += 1;
    }
    if pairs > 0 && c[i] >= 2 {
        c[i] -= 2;
        parts.push(Part::Pair(t));
        split(c, melds, pairs - 1, parts, out);
        parts.pop();
        c[i] += 2;
    }
}

/// The shape of a complete hand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Shape {
    /// Four sets and a pair.
    Standard,
    /// Seven pairs (with the `SevenPairs` option).
    SevenPairs,
    /// Thirteen Unique Wonders, declared as one special set.
    ThirteenWonders,
}

impl Shape {
    /// Seven pairs and Thirteen Unique Wonders are special hands.
    pub fn is_special(self) -> bool {
        self != Shape::Standard
    }
}

/// One way of declaring the rest of a hand.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Completion {
    /// The shape of the complete hand.
    pub shape: Shape,
    /// The sets still to form from the concealed tiles, in order of their
    /// lowest tile (none for Thirteen Unique Wonders: a `SpecialSet`).
    pub parts: Parts,
    /// The hand once they are all formed, as it will be scored.
    pub hand: PlayerHand,
}

/// Every way of finishing the declaration of `hand`, whose tiles are all in
/// it (no discard waiting to be placed): the same complete hands
/// [`PlayerHand::can_mah_jong`] recognises, one entry per arrangement.
pub fn completions(hand: &PlayerHand, seven_pairs: bool) -> Vec<Completion> {
    let counts = hand.concealed_counts();
    let mut out = Vec::new();
    let pairs = hand.sets.iter().filter(|s| s.kind.is_pair()).count();
    let melds = hand.sets.len() - pairs;
    let finish = |shape: Shape, parts: Parts| {
        let mut h = hand.clone();
        // The parts come from the concealed tiles, so forming them succeeds.
        let formed = parts.iter().all(|p| p.form(&mut h).is_ok());
        formed.then_some(Completion { shape, parts, hand: h })
    };
    if pairs <= 1 && melds <= 4 {
        let ways = splits(&counts, (4 - melds) as u8, (1 - pairs) as u8);
        out.extend(ways.into_iter().filter_map(|p| finish(Shape::Standard, p)));
    }
    if seven_pairs && melds == 0 && pairs <= 7 {
        let ways = splits(&counts, 0, (7 - pairs) as u8);
        out.extend(ways.into_iter().filter_map(|p| finish(Shape::SevenPairs, p)));
    }
    if hand.sets.is_empty() && counts.total() == 14 && analysis::is_thirteen_wonders(&counts) {
        let mut h = hand.clone();
        h.hand_declared = true;
        out.push(Completion { shape: Shape::ThirteenWonders, parts: Parts::new(), hand: h });
    }
    out
}

/// Every way the winner may use a discard (or robbed tile) to go out, in the
/// order the robots prefer them: a special hand, a pung, the eyes, chows.
pub const DISCARD_USES: [DiscardUse; 6] = [
    DiscardUse::SpecialSet,
    DiscardUse::Pung,
    DiscardUse::Pair,
    DiscardUse::Chow(Some(ChowPosition::Lower)),
    DiscardUse::Chow(Some(ChowPosition::Middle)),
    DiscardUse::Chow(Some(ChowPosition::Upper)),
];

/// `hand` with the discard `t` placed as `use_as` says, as the engine places
/// it, if that is possible and leaves a complete hand; `None` otherwise (and
/// for a chow whose position is not given).
pub fn place_discard(hand: &PlayerHand, t: Tile, use_as: DiscardUse, seven_pairs: bool) -> Option<PlayerHand> {
    let mut h = hand.clone();
    let placed = match use_as {
        DiscardUse::Chow(None) => return None,
        DiscardUse::Chow(Some(pos)) => h.chow(t, pos),
        DiscardUse::Pung => h.pung(t),
        DiscardUse::Pair => h.pair(t),
        DiscardUse::SpecialSet => {
            if !hand.can_thirteen_wonders(Some(t)) {
                return None;
            }
            h.hand_declared = true;
            h.draw(t)
        }
    };
    (placed.is_ok() && h.can_mah_jong(None, seven_pairs)).then_some(h)
}

/// What going out is judged under: the restrictions in force and the
/// winner's circumstances, exactly as its hand will be scored.
#[derive(Clone, Copy, Debug)]
pub struct GoingOut<'a> {
    /// The game options (`OneChowOneSuit`, `SevenPairs` and the scoring).
    pub options: &'a GameOptions,
    /// The least number of doubles a winning hand needs in this hand (the
    /// hand's own figure: it may be higher than `MinimumDoubles`).
    pub minimum_doubles: u32,
    /// The winner's seat wind.
    pub seat: Wind,
    /// The prevailing wind.
    pub prevailing: Wind,
    /// Flowers and seasons score nothing (mj-server's `--no-special-scores`).
    pub no_special_scores: bool,
    /// How the winner goes out.
    pub win: WinContext<'a>,
}

/// How one complete hand fares.
enum Verdict {
    /// It may go out.
    Qualifies,
    /// Two chows or two suits under `OneChowOneSuit`.
    WrongShape,
    /// Too few doubles: the hand's doubles.
    TooFew(i64),
}

impl GoingOut<'_> {
    /// True when a restriction on going out is in force; when false every
    /// complete hand may go out and nothing need be judged at all.
    pub fn restricted(options: &GameOptions, minimum_doubles: u32) -> bool {
        minimum_doubles > 0 || options.one_chow_one_suit
    }

    /// A complete hand, as declared, under the restrictions. A limit hand
    /// always qualifies; so do special hands under `OneChowOneSuit`.
    fn verdict(&self, hand: &PlayerHand, shape: Shape) -> Verdict {
        let shape_ok = !self.options.one_chow_one_suit || shape.is_special() || one_chow_one_suit(hand);
        if shape_ok && self.minimum_doubles == 0 {
            return Verdict::Qualifies;
        }
        let score = scoring::score_hand(&ScoringInput {
            options: self.options,
            hand,
            seat: self.seat,
            prevailing: self.prevailing,
            no_special_scores: self.no_special_scores,
            win: Some(self.win),
        });
        let doubles = i64::from(score.doubles);
        if score.limit_hand || (shape_ok && doubles >= i64::from(self.minimum_doubles)) {
            Verdict::Qualifies
        } else if shape_ok {
            Verdict::TooFew(doubles)
        } else {
            Verdict::WrongShape
        }
    }

    /// True if `completion` may go out.
    pub fn qualifies(&self, completion: &Completion) -> bool {
        matches!(self.verdict(&completion.hand, completion.shape), Verdict::Qualifies)
    }

    /// True if some way of declaring the rest of `hand` (all of whose tiles
    /// are in it) qualifies.
    pub fn allows(&self, hand: &PlayerHand) -> bool {
        self.judge(std::iter::once(hand)).is_ok()
    }

    /// Ok if the winner may go out with `hand` and, when given, `pending`
    /// (the discard or robbed tile it has yet to place, in any way it may be
    /// placed): some arrangement qualifies. Otherwise the error says which
    /// restriction stands in the way.
    pub fn check(&self, hand: &PlayerHand, pending: Option<Tile>) -> Result<(), GameError> {
        let seven = self.options.seven_pairs;
        match pending {
            None => self.judge(std::iter::once(hand)),
            Some(t) => {
                let placed: ArrayVec<PlayerHand, 6> =
                    DISCARD_USES.iter().filter_map(|&u| place_discard(hand, t, u, seven)).collect();
                self.judge(placed.iter())
            }
        }
    }

    /// Ok if some completion of one of `hands` qualifies; otherwise the
    /// error of the restriction that the best of them fails.
    pub fn judge<'h>(&self, hands: impl IntoIterator<Item = &'h PlayerHand>) -> Result<(), GameError> {
        let mut complete = false;
        let mut best: Option<i64> = None;
        for hand in hands {
            for c in completions(hand, self.options.seven_pairs) {
                complete = true;
                match self.verdict(&c.hand, c.shape) {
                    Verdict::Qualifies => return Ok(()),
                    Verdict::WrongShape => {}
                    Verdict::TooFew(d) => best = Some(best.map_or(d, |b| b.max(d))),
                }
            }
        }
        match best {
            // Some arrangement has the shape but not the doubles.
            Some(best) => Err(GameError::TooFewDoubles { needed: self.minimum_doubles, best }),
            None if complete => Err(GameError::OneChowOneSuit),
            None => Err(GameError::Illegal("your hand is not complete")),
        }
    }
}

/// `OneChowOneSuit` for a hand of four sets and a pair: at most one chow,
/// exposed or concealed, and every numbered tile of one suit (honours may be
/// added). Bonus tiles are not suit tiles.
pub fn one_chow_one_suit(hand: &PlayerHand) -> bool {
    if chows(hand) > 1 {
        return false;
    }
    let mut suit = None;
    let tiles = hand.all_tiles().filter(|t| t.is_numbered());
    for t in tiles {
        match suit {
            None => suit = Some(t.suit()),
            Some(s) if s != t.suit() => return false,
            Some(_) => {}
        }
    }
    true
}

/// The number of chows among declared sets (used by robots to avoid a
/// second chow under `OneChowOneSuit`).
pub fn chows(hand: &PlayerHand) -> usize {
    hand.sets.iter().filter(|s| s.kind.is_chow()).count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::scoring::Whence;
    use crate::rules::testing::{hand, t};
    use crate::rules::tile::parse_tiles;
    use crate::rules::tileset::{SetKind, TileSet};

    fn counts(s: &str) -> TileCounts {
        TileCounts::of(parse_tiles(s).unwrap())
    }

    #[test]
    fn splits_are_each_found_once() {
        // 111 222 333 as three pungs or three chows; 1111 2 3 only one way.
        let w = splits(&counts("1B 1B 1B 2B 2B 2B 3B 3B 3B"), 3, 0);
        assert_eq!(w.len(), 2, "{w:?}");
        let w = splits(&counts("1B 1B 1B 1B 2B 3B"), 2, 0);
        assert_eq!(w, vec![Parts::from_iter([Part::Pung(t("1B")), Part::Chow(t("1B"))])]);
        assert!(splits(&counts("1B 2B 4B"), 1, 0).is_empty());
        assert!(splits(&counts("1F 1F 1F"), 1, 0).is_empty());
        // 11 22 33 as two chows or three pairs.
        assert_eq!(splits(&counts("1C 1C 2C 2C 3C 3C"), 2, 0).len(), 1);
        assert_eq!(splits(&counts("1C 1C 2C 2C 3C 3C"), 0, 3).len(), 1);
    }

    #[test]
    fn completions_match_can_mah_jong() {
        let h = hand("1B 1B 1B 2B 2B 2B 3B 3B 3B EW EW EW RD RD");
        let c = completions(&h, false);
        assert_eq!(c.len(), 2);
        assert!(c.iter().all(|c| c.hand.is_complete(false) && c.shape == Shape::Standard));
        let pairs = hand("1B 1B 2B 2B 3B 3B 5C 5C 7D 7D EW EW RD RD");
        assert_eq!(completions(&pairs, false).len(), 0);
        let c = completions(&pairs, true);
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!(c[0].shape, Shape::SevenPairs);
        let wonders = hand("1B 9B 1C 9C 1D 9D EW SW WW NW RD WD GD GD");
        let c = completions(&wonders, false);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].shape, Shape::ThirteenWonders);
        // Declared sets count.
        let mut h = hand("5C 5C 5C EW EW 7D 8D 9D RD RD RD");
        h.sets.push(TileSet::new(SetKind::Chow, t("2B")));
        assert_eq!(completions(&h, false).len(), 1);
        h.sets.push(TileSet::new(SetKind::Chow, t("2B")));
        assert!(completions(&h, false).is_empty());
    }

    #[test]
    fn discards_are_placed_as_the_engine_places_them() {
        let h = hand("2B 3B 4C 5C 6C 7D 8D 9D EW EW EW RD RD");
        assert!(place_discard(&h, t("1B"), DiscardUse::Chow(Some(ChowPosition::Lower)), false).is_some());
        assert!(place_discard(&h, t("1B"), DiscardUse::Chow(Some(ChowPosition::Upper)), false).is_none());
        assert!(place_discard(&h, t("1B"), DiscardUse::Chow(None), false).is_none());
        assert!(place_discard(&h, t("1B"), DiscardUse::Pung, false).is_none());
        let h = hand("1B 9B 1C 9C 1D 9D EW SW WW NW RD WD GD");
        let w = place_discard(&h, t("GD"), DiscardUse::SpecialSet, false).unwrap();
        assert!(w.hand_declared && w.concealed.len() == 14);
    }

    #[test]
    fn one_chow_one_suit_reading() {
        let mut h = hand("2B 3B 4B 5B 5B 5B EW EW EW RD RD");
        h.sets.push(TileSet::new(SetKind::Pung, t("7B")));
        h.form_closed_chow(t("2B")).unwrap();
        assert!(one_chow_one_suit(&h));
        h.sets.push(TileSet::new(SetKind::Chow, t("1C")));
        assert!(!one_chow_one_suit(&h), "two chows");
        let mut h = hand("2B 3B 4B 5C 5C 5C EW EW EW RD RD");
        h.sets.push(TileSet::new(SetKind::Pung, t("7B")));
        assert!(!one_chow_one_suit(&h), "two suits");
        assert_eq!(chows(&h), 0);
    }

    #[test]
    fn judging_picks_the_best_arrangement() {
        let options = GameOptions { minimum_doubles: 1, ..GameOptions::default() };
        let exposed = [0u8; crate::rules::tile::ALL_KINDS];
        let judge = |options: &GameOptions, h: &PlayerHand, pending: Option<Tile>| {
            let win = WinContext {
                whence: Whence::Discard,
                tile: pending.unwrap_or(t("RD")),
                exposed: &exposed,
                live_exhausted: false,
                live_exactly_exhausted: false,
                before_winning_tile: None,
                only_east_discarded: false,
                east_wins_before: 0,
                kong_upon_kong: false,
            };
            let going_out = GoingOut {
                options,
                minimum_doubles: options.minimum_doubles,
                seat: Wind::South,
                prevailing: Wind::East,
                no_special_scores: false,
                win,
            };
            going_out.check(h, pending)
        };
        // All bamboo: one suit only (3 doubles) however it is arranged.
        let mut h = hand("1B 1B 1B 2B 2B 2B 3B 3B 3B 5B");
        h.sets.push(TileSet::new(SetKind::Chow, t("6B")));
        assert_eq!(judge(&options, &h, Some(t("5B"))), Ok(()));
        // Mixed suits, chows and a pung of minors (which spoils "no score
        // hand"): no double.
        let mut h = hand("1B 2B 3B 4C 5C 6C 7D 7D 7D 5B");
        h.sets.push(TileSet::new(SetKind::Chow, t("2D")));
        assert_eq!(judge(&options, &h, Some(t("5B"))), Err(GameError::TooFewDoubles { needed: 1, best: 0 }));
        let ocos = GameOptions { one_chow_one_suit: true, ..GameOptions::default() };
        assert_eq!(judge(&ocos, &h, Some(t("5B"))), Err(GameError::OneChowOneSuit));
        // 111 222 333 as three chows makes four chows, as three pungs only
        // one (the exposed one): that arrangement qualifies.
        let mut h = hand("1B 1B 1B 2B 2B 2B 3B 3B 3B 5B");
        h.sets.push(TileSet::new(SetKind::Chow, t("6B")));
        assert_eq!(judge(&ocos, &h, Some(t("5B"))), Ok(()));
        assert_eq!(judge(&ocos, &h, None), Err(GameError::Illegal("your hand is not complete")));
    }
}
