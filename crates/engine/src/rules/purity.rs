//! Which "all of a kind" properties a hand has (one suit, all honours, all
//! terminals, all green, ...), tracked over its sets and concealed tiles:
//! what scoring doubles for and what letting off a cannon watches for.

use super::tile::{Suit, Tile};
use super::tileset::TileSet;

/// Which "all of a kind" properties a hand has, tracked over its sets and
/// concealed tiles as the reference does (scoring, and the dangerous hands
/// of letting off a cannon).
pub(crate) struct Purity {
    pub(crate) honours: bool,
    pub(crate) terminals: bool,
    pub(crate) majors: bool,
    pub(crate) green: bool,
    suit_only: [bool; 3],
    suit_with_honours: [bool; 3],
}

impl Purity {
    pub(crate) fn new() -> Purity {
        Purity {
            honours: true,
            terminals: true,
            majors: true,
            green: true,
            suit_only: [true; 3],
            suit_with_honours: [true; 3],
        }
    }

    /// Records a declared set: a chow is never all honours, terminals or
    /// majors, and is green only if all three tiles are.
    pub(crate) fn set(&mut self, set: &TileSet) {
        let green = if set.kind.is_chow() {
            self.terminals = false;
            self.honours = false;
            self.majors = false;
            set.tiles().all(Tile::is_green)
        } else {
            set.tile.is_green()
        };
        self.tile(set.tile, green);
    }

    /// Records one tile (the representative tile of a set, or a concealed tile).
    pub(crate) fn tile(&mut self, t: Tile, green: bool) {
        let suit = t.suit();
        if t.is_bonus() {
            // An undeclared bonus tile left in a losing hand: the reference
            // only lets it spoil the honours, terminals and majors tests.
            self.honours = false;
            self.terminals = false;
            self.majors = false;
            return;
        }
        for (i, s) in Suit::NUMBERED.iter().enumerate() {
            if suit != *s {
                self.suit_only[i] = false;
                if suit.is_numbered() {
                    self.suit_with_honours[i] = false;
                }
            }
        }
        if !green {
            self.green = false;
        }
        self.honours &= t.is_honour();
        self.terminals &= t.is_terminal();
        self.majors &= t.is_major();
    }

    /// The numbered suit the hand is entirely of, if any.
    pub(crate) fn one_suit(&self) -> Option<Suit> {
        (0..3).find(|&i| self.suit_only[i]).map(|i| Suit::NUMBERED[i])
    }

    /// Whether the hand is of one numbered suit and honours.
    pub(crate) fn one_suit_with_honours(&self) -> bool {
        self.suit_with_honours.iter().any(|&b| b)
    }
}
