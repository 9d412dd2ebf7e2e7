//! One player's tiles in a hand: concealed tiles, declared sets and bonus
//! tiles, with the moves that change them. Every move checks first and
//! changes nothing when it is not possible.

use arrayvec::ArrayVec;
use serde::{Deserialize, Serialize};

use super::analysis::{self, Need};
use super::danger::Danger;
use super::tile::{Tile, TileCounts};
use super::tileset::{ChowPosition, SetKind, TileSet};

/// The most concealed tiles a player can hold (13 plus a drawn tile).
pub const MAX_CONCEALED: usize = 14;
/// The most declared sets (seven pairs).
pub const MAX_SETS: usize = 7;
/// The most bonus tiles one player can set aside: every flower, season and animal.
pub const MAX_BONUS: usize = 12;

/// A player's tiles and per-hand flags.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlayerHand {
    /// Concealed tiles, in the order they were received.
    pub concealed: ArrayVec<Tile, MAX_CONCEALED>,
    /// Declared sets in the order they were declared.
    pub sets: ArrayVec<TileSet, MAX_SETS>,
    /// Bonus tiles set aside: flowers, seasons and animals.
    pub bonus: ArrayVec<Tile, MAX_BONUS>,
    /// True until the player's first discard.
    pub no_discard: bool,
    /// The player has declared a calling hand.
    pub calling: bool,
    /// The calling declaration was an Original Call.
    pub original_call: bool,
    /// The player has finished declaring after Mah-Jong: remaining concealed
    /// tiles are shown.
    pub hand_declared: bool,
    /// Danger signals for letting off a cannon: at the player's own seat, the
    /// dangerous hand the player shows; at another seat, the dangerous
    /// discards that seat supplied to this player without excuse.
    pub danger: [Danger; 4],
}

/// The reason a move on a hand is impossible.
pub type HandError = &'static str;

impl PlayerHand {
    /// A fresh hand at the start of a deal.
    pub fn new() -> PlayerHand {
        PlayerHand { no_discard: true, ..PlayerHand::default() }
    }

    /// How many copies of `t` are concealed.
    pub fn count(&self, t: Tile) -> usize {
        self.concealed.iter().filter(|&&c| c == t).count()
    }

    /// The concealed tiles as counts.
    pub fn concealed_counts(&self) -> TileCounts {
        TileCounts::of(self.concealed.iter().copied())
    }

    fn remove(&mut self, t: Tile, n: usize) {
        for _ in 0..n {
            if let Some(i) = self.concealed.iter().position(|&c| c == t) {
                self.concealed.remove(i);
            }
        }
    }

    fn need(&self, t: Tile, n: usize) -> Result<(), HandError> {
        if self.count(t) >= n { Ok(()) } else { Err("not enough matching tiles") }
    }

    fn push_set(&mut self, kind: SetKind, tile: Tile) -> Result<(), HandError> {
        self.sets.try_push(TileSet::new(kind, tile)).map_err(|_| "too many sets")
    }

    /// Adds a drawn tile.
    pub fn draw(&mut self, t: Tile) -> Result<(), HandError> {
        self.concealed.try_push(t).map_err(|_| "too many tiles in hand")
    }

    /// Sets aside a flower, season or animal held in the hand.
    pub fn declare_bonus(&mut self, t: Tile) -> Result<(), HandError> {
        if !t.is_bonus() {
            return Err("only flowers, seasons and animals can be declared as bonus tiles");
        }
        self.need(t, 1).map_err(|_| "you do not hold that bonus tile")?;
        self.bonus.try_push(t).map_err(|_| "too many bonus tiles")?;
        self.remove(t, 1);
        Ok(())
    }

    /// Discards a concealed tile.
    pub fn discard(&mut self, t: Tile) -> Result<(), HandError> {
        self.need(t, 1).map_err(|_| "you do not hold that tile")?;
        self.remove(t, 1);
        self.no_discard = false;
        Ok(())
    }

    /// Hands a concealed tile to another player face down (East's tile swap).
    /// Unlike a discard it leaves the "no discard yet" flag alone: the
    /// player's first discard is still to come.
    pub fn give(&mut self, t: Tile) -> Result<(), HandError> {
        self.need(t, 1).map_err(|_| "you do not hold that tile")?;
        self.remove(t, 1);
        Ok(())
    }

    /// Checks a pung with the claimed tile `d`.
    pub fn can_pung(&self, d: Tile) -> bool {
        self.count(d) >= 2 && self.sets.len() < MAX_SETS
    }

    /// Makes an exposed pung with the claimed tile `d`.
    pub fn pung(&mut self, d: Tile) -> Result<(), HandError> {
        self.need(d, 2)?;
        self.push_set(SetKind::Pung, d)?;
        self.remove(d, 2);
        Ok(())
    }

    /// Checks a kong with the claimed tile `d`.
    pub fn can_kong(&self, d: Tile) -> bool {
        self.count(d) >= 3 && self.sets.len() < MAX_SETS
    }

    /// Makes an exposed kong with the claimed tile `d`.
    pub fn kong(&mut self, d: Tile) -> Result<(), HandError> {
        self.need(d, 3)?;
        self.push_set(SetKind::Kong { annexed: false }, d)?;
        self.remove(d, 3);
        Ok(())
    }

    /// The chow `d` would make at `pos`, if the other two tiles are held.
    fn chow_tiles(&self, d: Tile, pos: ChowPosition) -> Option<(Tile, [Tile; 2])> {
        let low = pos.lowest_tile(d)?;
        let all = [low, low.up(1)?, low.up(2)?];
        let mut others = all.iter().copied().filter(|&t| t != d);
        let others = [others.next()?, others.next()?];
        let ok = if others[0] == others[1] {
            self.count(others[0]) >= 2
        } else {
            others.iter().all(|&t| self.count(t) >= 1)
        };
        ok.then_some((low, others))
    }

    /// Checks a chow with the claimed tile `d` at `pos` (any position if `None`).
    pub fn can_chow(&self, d: Tile, pos: Option<ChowPosition>) -> bool {
        let positions: &[ChowPosition] = match &pos {
            Some(p) => std::slice::from_ref(p),
            None => &ChowPosition::ALL,
        };
        self.sets.len() < MAX_SETS && positions.iter().any(|&p| self.chow_tiles(d, p).is_some())
    }

    /// Makes an exposed chow with the claimed tile `d` at `pos`.
    pub fn chow(&mut self, d: Tile, pos: ChowPosition) -> Result<(), HandError> {
        let (low, others) = self.chow_tiles(d, pos).ok_or("you do not hold the other tiles of that chow")?;
        self.push_set(SetKind::Chow, low)?;
        self.remove(others[0], 1);
        self.remove(others[1], 1);
        Ok(())
    }

    /// Pairs the claimed tile `d` with a concealed one (only to go out).
    pub fn pair(&mut self, d: Tile) -> Result<(), HandError> {
        self.need(d, 1)?;
        self.push_set(SetKind::Pair, d)?;
        self.remove(d, 1);
        Ok(())
    }

    /// Checks a concealed kong of `t`.
    pub fn can_declare_closed_kong(&self, t: Tile) -> bool {
        self.count(t) >= 4 && self.sets.len() < MAX_SETS
    }

    /// Declares a concealed kong of four concealed `t`.
    pub fn declare_closed_kong(&mut self, t: Tile) -> Result<(), HandError> {
        self.need(t, 4).map_err(|_| "you do not hold four of that tile")?;
        self.push_set(SetKind::ClosedKong, t)?;
        self.remove(t, 4);
        Ok(())
    }

    /// Checks adding a concealed `t` to an exposed pung of `t`.
    pub fn can_add_to_pung(&self, t: Tile) -> bool {
        self.count(t) >= 1 && self.sets.iter().any(|s| s.kind == SetKind::Pung && s.tile == t)
    }

    /// Adds a concealed `t` to an exposed pung, making an annexed kong.
    pub fn add_to_pung(&mut self, t: Tile) -> Result<(), HandError> {
        let i = self
            .sets
            .iter()
            .position(|s| s.kind == SetKind::Pung && s.tile == t)
            .ok_or("you have no exposed pung of that tile")?;
        self.need(t, 1).map_err(|_| "you do not hold that tile")?;
        self.sets[i].kind = SetKind::Kong { annexed: true };
        self.remove(t, 1);
        Ok(())
    }

    /// The kong of `t` was robbed: it goes back to being a pung.
    pub fn kong_robbed(&mut self, t: Tile) -> Result<(), HandError> {
        let set = self.sets.iter_mut().find(|s| s.tile == t && s.kind.is_kong()).ok_or("no kong of that tile")?;
        set.kind = if set.kind == SetKind::ClosedKong { SetKind::ClosedPung } else { SetKind::Pung };
        Ok(())
    }

    /// Forms a concealed pung after Mah-Jong.
    pub fn form_closed_pung(&mut self, t: Tile) -> Result<(), HandError> {
        self.need(t, 3).map_err(|_| "you do not hold three of that tile")?;
        self.push_set(SetKind::ClosedPung, t)?;
        self.remove(t, 3);
        Ok(())
    }

    /// Forms a concealed chow whose lowest tile is `low`, after Mah-Jong.
    pub fn form_closed_chow(&mut self, low: Tile) -> Result<(), HandError> {
        let tiles = [Some(low), low.up(1), low.up(2)];
        let [Some(a), Some(b), Some(c)] = tiles else {
            return Err("no chow starts with that tile");
        };
        if self.count(a) < 1 || self.count(b) < 1 || self.count(c) < 1 {
            return Err("you do not hold the tiles of that chow");
        }
        self.push_set(SetKind::ClosedChow, low)?;
        self.remove(a, 1);
        self.remove(b, 1);
        self.remove(c, 1);
        Ok(())
    }

    /// Forms a concealed pair after Mah-Jong.
    pub fn form_closed_pair(&mut self, t: Tile) -> Result<(), HandError> {
        self.need(t, 2).map_err(|_| "you do not hold two of that tile")?;
        self.push_set(SetKind::ClosedPair, t)?;
        self.remove(t, 2);
        Ok(())
    }

    /// What the concealed tiles must still supply for a standard hand, given
    /// the declared sets; `None` if the declared sets already rule it out.
    fn standard_need(&self) -> Option<Need> {
        let pairs = self.sets.iter().filter(|s| s.kind.is_pair()).count();
        let melds = self.sets.len() - pairs;
        (pairs <= 1 && melds <= 4).then(|| Need { melds: (4 - melds) as u8, pairs: (1 - pairs) as u8 })
    }

    /// True if the hand, with the extra tile `extra` if given, is a complete
    /// Mah-Jong hand (four sets and a pair; seven pairs when allowed;
    /// Thirteen Unique Wonders).
    pub fn can_mah_jong(&self, extra: Option<Tile>, seven_pairs: bool) -> bool {
        let mut counts = self.concealed_counts();
        if let Some(t) = extra {
            counts.add(t);
        }
        self.completes(&counts, seven_pairs)
    }

    /// True if these concealed `counts`, with the declared sets, make a
    /// complete hand.
    fn completes(&self, counts: &TileCounts, seven_pairs: bool) -> bool {
        if let Some(need) = self.standard_need()
            && analysis::decomposes(counts, need)
        {
            return true;
        }
        if seven_pairs && self.sets.iter().all(|s| s.kind.is_pair()) {
            let need = Need { melds: 0, pairs: (7 - self.sets.len()) as u8 };
            if analysis::decomposes(counts, need) {
                return true;
            }
        }
        self.sets.is_empty() && counts.total() == 14 && analysis::is_thirteen_wonders(counts)
    }

    /// Every face that would complete this hand (the tiles it is waiting for).
    pub fn waits(&self, seven_pairs: bool) -> impl Iterator<Item = Tile> + '_ {
        let base = self.concealed_counts();
        let thirteen =
            self.sets.is_empty() && self.concealed.len() == 13 && self.concealed.iter().all(|t| t.is_major());
        analysis::candidate_faces(base, thirteen).filter(move |&t| {
            let mut counts = base;
            counts.add(t);
            self.completes(&counts, seven_pairs)
        })
    }

    /// True if the concealed tiles (with `extra`) are Thirteen Unique Wonders.
    pub fn can_thirteen_wonders(&self, extra: Option<Tile>) -> bool {
        let mut counts = self.concealed_counts();
        if let Some(t) = extra {
            counts.add(t);
        }
        analysis::is_thirteen_wonders(&counts)
    }

    /// True when every tile is in a declared set forming a complete hand (the
    /// winner has finished declaring).
    pub fn is_complete(&self, seven_pairs: bool) -> bool {
        let pairs = self.sets.iter().filter(|s| s.kind.is_pair()).count();
        self.concealed.is_empty()
            && ((self.sets.len() == 5 && pairs == 1) || (seven_pairs && self.sets.len() == 7 && pairs == 7))
    }

    /// Every tile the player holds or has declared (not bonus tiles).
    pub fn all_tiles(&self) -> impl Iterator<Item = Tile> + '_ {
        self.concealed.iter().copied().chain(self.sets.iter().flat_map(TileSet::tiles))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testing::{hand, t};

    #[test]
    fn claims_check_the_tiles() {
        let mut h = hand("2B 3B 5C 5C 5C EW EW RD 7D 8D 9D 1F 4S");
        assert!(h.can_chow(t("1B"), Some(ChowPosition::Lower)));
        assert!(h.can_chow(t("4B"), None));
        assert!(!h.can_chow(t("4B"), Some(ChowPosition::Lower)));
        assert!(h.can_pung(t("EW")) && !h.can_pung(t("RD")));
        assert!(h.can_kong(t("5C")) && !h.can_kong(t("EW")));
        let before = h.clone();
        assert!(h.chow(t("4B"), ChowPosition::Lower).is_err());
        assert_eq!(h, before, "a failed move changes nothing");
        h.chow(t("4B"), ChowPosition::Upper).unwrap();
        assert_eq!(h.sets[0].to_string(), "2B-3B-4B");
        assert_eq!(h.concealed.len(), 11);
        h.declare_bonus(t("1F")).unwrap();
        assert!(h.declare_bonus(t("EW")).is_err());
        assert!(h.declare_bonus(t("2F")).is_err());
    }

    #[test]
    fn the_tiles_a_hand_waits_on() {
        let tiles = |ts: &mut dyn Iterator<Item = Tile>| ts.map(|t| t.to_string()).collect::<Vec<_>>().join(" ");
        // Two pairs waiting for a pung (either), and an open-ended chow.
        assert_eq!(tiles(&mut hand("1B 2B 3B 4C 5C 6C 7D 8D 9D EW EW RD RD").waits(false)), "EW RD");
        assert_eq!(tiles(&mut hand("1B 2B 3B 4C 5C 6C 7D 8D 9D EW EW 5B 6B").waits(false)), "4B 7B");
        // One tile short of a pair: the tile itself (seven pairs only when allowed).
        let pairs = hand("1B 1B 3C 3C 5D 5D 7D 7D EW EW RD RD GD");
        assert_eq!(tiles(&mut pairs.waits(true)), "GD");
        assert_eq!(pairs.waits(false).count(), 0);
        // Thirteen Unique Wonders with its pair: any of the thirteen.
        assert_eq!(hand("1B 9B 1C 9C 1D 9D EW SW WW NW RD WD GD").waits(false).count(), 13);
        // Nowhere near: nothing.
        assert_eq!(hand("1B 3B 5B 7C 9C 2D 4D 6D EW SW WW RD GD").waits(false).count(), 0);
    }

    #[test]
    fn mah_jong_with_declared_sets() {
        let mut h = hand("5C 5C 5C EW EW RD RD 7D 8D 9D");
        h.sets.push(TileSet::new(SetKind::Chow, t("2B")));
        assert_eq!(h.waits(false).collect::<Vec<_>>(), [t("EW"), t("RD")]);
        let tw = hand("1B 9B 1C 9C 1D 9D EW SW WW NW RD WD GD");
        assert_eq!(tw.waits(false).count(), 13, "thirteen wonders waits on every major");
        assert!(h.can_mah_jong(Some(t("RD")), false));
        assert!(h.can_mah_jong(Some(t("EW")), false));
        assert!(!h.can_mah_jong(Some(t("6D")), false));
        assert!(!h.can_mah_jong(None, false));
    }

    #[test]
    fn special_hands() {
        let sp = hand("1B 1B 3C 3C 5D 5D EW EW RD RD GD GD 9B");
        assert!(!sp.can_mah_jong(Some(t("9B")), false));
        assert!(sp.can_mah_jong(Some(t("9B")), true));
        let tw = hand("1B 9B 1C 9C 1D 9D EW SW WW NW RD WD GD");
        assert!(tw.can_mah_jong(Some(t("GD")), false));
        assert!(tw.can_thirteen_wonders(Some(t("1B"))));
        assert!(!tw.can_mah_jong(Some(t("5D")), false));
    }

    #[test]
    fn forming_sets_after_mah_jong() {
        let mut h = hand("5C 5C 5C EW EW 7D 8D 9D RD RD RD 2B 3B 4B");
        h.form_closed_pung(t("5C")).unwrap();
        h.form_closed_chow(t("7D")).unwrap();
        assert!(h.form_closed_chow(t("8D")).is_err());
        h.form_closed_pung(t("RD")).unwrap();
        h.form_closed_chow(t("2B")).unwrap();
        assert!(!h.is_complete(false));
        h.form_closed_pair(t("EW")).unwrap();
        assert!(h.is_complete(false));
    }

    #[test]
    fn kongs_and_robbing() {
        let mut h = hand("RD RD RD RD EW");
        assert!(h.can_declare_closed_kong(t("RD")));
        h.declare_closed_kong(t("RD")).unwrap();
        assert_eq!(h.sets[0].kind, SetKind::ClosedKong);
        h.kong_robbed(t("RD")).unwrap();
        assert_eq!(h.sets[0].kind, SetKind::ClosedPung);
        let mut h = hand("EW");
        h.sets.push(TileSet::new(SetKind::Pung, t("EW")));
        assert!(h.can_add_to_pung(t("EW")));
        h.add_to_pung(t("EW")).unwrap();
        assert_eq!(h.sets[0].to_string(), "EW-EW-EW-EW");
    }
}
