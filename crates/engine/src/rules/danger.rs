//! Letting off a cannon: dangerous hands and dangerous discards.
//!
//! A player showing three or more exposed sets of one suit (or wind sets,
//! dragon sets, all honours, all terminals, all green) has a dangerous hand,
//! and so does everyone late in the hand, when at most four live tiles
//! remain. A discard that feeds such a hand is dangerous; if the discarder
//! had a safe alternative and the claimant goes out with a hand realising the
//! danger, the discarder pays for everybody (seed 004, "Letting off a Cannon";
//! the details follow mj-server).

use serde::{Deserialize, Serialize};

use super::purity::Purity;
use super::tile::{Suit, Tile};
use super::tileset::{SetKind, TileSet};

/// A set of danger signals.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Danger(pub u16);

impl Danger {
    /// Collecting bamboo.
    pub const BAMBOO: Danger = Danger(1);
    /// Collecting characters.
    pub const CHARACTERS: Danger = Danger(2);
    /// Collecting circles.
    pub const CIRCLES: Danger = Danger(4);
    /// Collecting winds.
    pub const WINDS: Danger = Danger(8);
    /// Collecting dragons.
    pub const DRAGONS: Danger = Danger(16);
    /// Collecting honours only.
    pub const HONOURS: Danger = Danger(32);
    /// Collecting green tiles (Imperial Jade).
    pub const GREEN: Danger = Danger(64);
    /// Collecting terminals only.
    pub const TERMINALS: Danger = Danger(128);
    /// The wall is nearly exhausted.
    pub const END: Danger = Danger(256);
    /// No signal.
    pub const NONE: Danger = Danger(0);

    /// True if no signal is set.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// True if any of `other`'s signals is set.
    pub fn intersects(self, other: Danger) -> bool {
        self.0 & other.0 != 0
    }
    /// Adds `other`'s signals.
    pub fn insert(&mut self, other: Danger) {
        self.0 |= other.0;
    }
    /// The signal for collecting one numbered suit.
    pub fn of_suit(suit: Suit) -> Danger {
        match suit {
            Suit::Bamboo => Danger::BAMBOO,
            Suit::Characters => Danger::CHARACTERS,
            Suit::Circles => Danger::CIRCLES,
            _ => Danger::NONE,
        }
    }
}

/// The dangers a player's declared sets signal, re-evaluated whenever the
/// player declares a set. The end-of-wall signal is always included: it is a
/// property of the game, applied only when a dangerous discard is made.
pub fn hand_danger(declared: &[TileSet]) -> Danger {
    let mut sets = 0;
    let (mut dragon_sets, mut wind_sets) = (0, 0);
    let mut purity = Purity::new();
    for set in declared {
        // Only the exposed kinds count towards the three sets shown; a
        // concealed kong still tells which tiles are collected.
        if matches!(set.kind, SetKind::Chow | SetKind::Pung | SetKind::Kong { .. }) {
            sets += 1;
        }
        dragon_sets += set.tile.is_dragon() as usize;
        wind_sets += set.tile.is_wind() as usize;
        purity.set(set);
    }
    let mut d = Danger::END;
    if sets >= 3 {
        if let Some(suit) = purity.one_suit() {
            d.insert(Danger::of_suit(suit));
        }
        if purity.honours {
            d.insert(Danger::HONOURS);
        }
        if purity.green {
            d.insert(Danger::GREEN);
        }
        if purity.terminals {
            d.insert(Danger::TERMINALS);
        }
    }
    if wind_sets >= 3 {
        d.insert(Danger::WINDS);
    }
    if dragon_sets >= 2 {
        d.insert(Danger::DRAGONS);
    }
    d
}

/// The dangers signalled by `shown` that the tile `t` feeds (the end-of-wall
/// signal aside).
pub fn tile_feeds(shown: Danger, t: Tile) -> Danger {
    let mut d = Danger::NONE;
    let suit_signal = Danger::of_suit(t.suit());
    if shown.intersects(suit_signal) {
        d.insert(suit_signal);
    }
    if shown.intersects(Danger::WINDS) && t.is_wind() {
        d.insert(Danger::WINDS);
    }
    if shown.intersects(Danger::DRAGONS) && t.is_dragon() {
        d.insert(Danger::DRAGONS);
    }
    if shown.intersects(Danger::HONOURS) && t.is_honour() {
        d.insert(Danger::HONOURS);
    }
    if shown.intersects(Danger::TERMINALS) && t.is_terminal() {
        d.insert(Danger::TERMINALS);
    }
    if shown.intersects(Danger::GREEN) && t.is_green() {
        d.insert(Danger::GREEN);
    }
    d
}

/// Late in the hand every tile not yet discarded more than once (counting
/// this discard) is dangerous.
pub fn end_danger(live_remaining: usize, times_discarded: u8) -> bool {
    live_remaining <= 4 && times_discarded <= 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_sets(sets: &[(SetKind, &str)]) -> Vec<TileSet> {
        sets.iter().map(|(k, t)| TileSet::new(*k, t.parse().unwrap())).collect()
    }

    #[test]
    fn one_suit_needs_three_exposed_sets() {
        let two = with_sets(&[(SetKind::Pung, "2B"), (SetKind::Chow, "4B")]);
        assert_eq!(hand_danger(&two), Danger::END);
        let three =
            with_sets(&[(SetKind::Pung, "2B"), (SetKind::Chow, "4B"), (SetKind::Kong { annexed: false }, "8B")]);
        assert!(hand_danger(&three).intersects(Danger::BAMBOO));
        assert!(!hand_danger(&three).intersects(Danger::CIRCLES));
        let concealed_kong = with_sets(&[(SetKind::Pung, "2B"), (SetKind::Chow, "4B"), (SetKind::ClosedKong, "8B")]);
        assert_eq!(hand_danger(&concealed_kong), Danger::END, "a concealed kong is not an exposed set");
    }

    #[test]
    fn honours() {
        let h = with_sets(&[(SetKind::Pung, "RD"), (SetKind::ClosedKong, "GD")]);
        assert!(hand_danger(&h).intersects(Danger::DRAGONS));
        let w = with_sets(&[(SetKind::Pung, "EW"), (SetKind::Pung, "SW"), (SetKind::Pung, "NW")]);
        let d = hand_danger(&w);
        assert!(d.intersects(Danger::WINDS) && d.intersects(Danger::HONOURS));
        assert_eq!(tile_feeds(d, "WW".parse().unwrap()), Danger(Danger::WINDS.0 | Danger::HONOURS.0));
        assert_eq!(tile_feeds(d, "5D".parse().unwrap()), Danger::NONE);
    }

    #[test]
    fn end_of_wall() {
        assert!(end_danger(4, 1));
        assert!(!end_danger(5, 1));
        assert!(!end_danger(2, 2));
    }
}
