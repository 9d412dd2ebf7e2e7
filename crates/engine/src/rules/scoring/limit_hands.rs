//! The limit hands: each a row of [`LIMIT_HANDS`], its name as the
//! breakdown writes it and what makes a winning hand one, in the order the
//! reference tests them (docs/rules-notes.md names them; the help page
//! explains each). A winning hand scores the limit for the largest it is.

use super::elements::Shape;
use super::{ScoringInput, Whence, WinContext};
use crate::rules::danger::Danger;
use crate::rules::player_hand::PlayerHand;
use crate::rules::tile::{Suit, Tile, Wind};

/// What a limit hand's test looks at: the hand, how it was won, and what it
/// is made of.
pub(super) struct Winning<'a> {
    pub(super) input: &'a ScoringInput<'a>,
    pub(super) win: &'a WinContext<'a>,
    pub(super) shape: &'a Shape,
    /// A concealed hand ([`Shape::concealed`]).
    pub(super) concealed: bool,
}

impl Winning<'_> {
    fn east(&self) -> bool {
        self.input.seat == Wind::East
    }

    fn hand(&self) -> &PlayerHand {
        self.input.hand
    }
}

/// A limit hand.
pub(super) struct LimitHand {
    /// Its name in the breakdown (the reference's words).
    pub(super) name: &'static str,
    /// Whether a winning hand is one.
    pub(super) is: fn(&Winning<'_>) -> bool,
    /// What it realises for letting off a cannon, beyond what its doubles did.
    pub(super) realises: Danger,
}

/// Every limit hand, in the reference's order.
pub(super) const LIMIT_HANDS: &[LimitHand] = &[
    LimitHand { name: "Heaven's Blessing", is: |h| h.east() && h.hand().no_discard, realises: Danger::NONE },
    LimitHand {
        name: "Earth's Blessing",
        is: |h| !h.east() && h.hand().no_discard && h.win.whence == Whence::Discard && h.win.only_east_discarded,
        realises: Danger::NONE,
    },
    LimitHand {
        name: "Gathering Plum Blossom from the Roof",
        is: |h| h.win.whence == Whence::Loose && Some(h.win.tile) == Tile::numbered(Suit::Circles, 5),
        realises: Danger::NONE,
    },
    LimitHand {
        name: "Catching the Moon from the Bottom of the Sea",
        is: |h| {
            Some(h.win.tile) == Tile::numbered(Suit::Circles, 1)
                && h.win.live_exactly_exhausted
                && h.win.whence == Whence::Wall
        },
        realises: Danger::NONE,
    },
    LimitHand {
        name: "Scratching a Carrying Pole",
        is: |h| h.win.whence == Whence::RobbedKong && Some(h.win.tile) == Tile::numbered(Suit::Bamboo, 2),
        realises: Danger::NONE,
    },
    LimitHand { name: "Kong upon Kong", is: |h| h.win.kong_upon_kong, realises: Danger::NONE },
    LimitHand { name: "Fourfold Plenty", is: |h| h.shape.kongs == 4, realises: Danger::NONE },
    LimitHand {
        name: "Buried Treasure",
        is: |h| h.concealed && h.shape.pungs + h.shape.kongs == 4,
        realises: Danger::NONE,
    },
    LimitHand { name: "Thirteen Unique Wonders", is: |h| h.hand().can_thirteen_wonders(None), realises: Danger::NONE },
    LimitHand {
        name: "Three Great Scholars",
        is: |h| h.shape.dragon_sets == 3 && h.shape.chows == 0,
        realises: Danger::NONE,
    },
    LimitHand { name: "Four Blessing o'er the Door", is: |h| h.shape.wind_sets == 4, realises: Danger::NONE },
    LimitHand { name: "All Honours", is: |h| h.shape.purity.honours, realises: Danger::NONE },
    LimitHand { name: "Heads and Tails", is: |h| h.shape.purity.terminals, realises: Danger::NONE },
    LimitHand {
        name: "Concealed Clear Suit",
        is: |h| h.concealed && h.shape.purity.one_suit().is_some(),
        realises: Danger::NONE,
    },
    LimitHand {
        name: "East's 13th consecutive win",
        is: |h| h.east() && h.win.east_wins_before == 12,
        realises: Danger::NONE,
    },
    LimitHand { name: "Imperial Jade", is: |h| h.shape.purity.green, realises: Danger::GREEN },
    LimitHand {
        name: "Nine Gates",
        is: |h| h.shape.purity.one_suit().is_some() && nine_gates(h.win),
        realises: Danger::NONE,
    },
    LimitHand {
        name: "Wriggling Snake",
        is: |h| h.shape.purity.one_suit().is_some() && wriggling_snake(h.hand()),
        realises: Danger::NONE,
    },
];

/// Nine Gates: the hand before the winning tile was 1112345678999 of the
/// winning tile's suit.
fn nine_gates(w: &WinContext<'_>) -> bool {
    let Some(before) = w.before_winning_tile else { return false };
    if !w.tile.is_numbered() || before.concealed.len() < 13 {
        return false;
    }
    let mut tiles: Vec<Tile> = before.concealed.to_vec();
    tiles.sort();
    let suit = w.tile.suit();
    let want = [1, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 9];
    want.iter().enumerate().all(|(i, &v)| Tile::numbered(suit, v) == Some(tiles[i]))
}

/// Wriggling Snake: a pung or kong of 1 and of 9, and 2-3-4-5-6-7-8 of the
/// suit made with chows and a pair of 2, 5 or 8.
fn wriggling_snake(hand: &PlayerHand) -> bool {
    let (mut set1, mut set9) = (false, false);
    let (mut pair2, mut pair5, mut pair8) = (false, false, false);
    let (mut chow2, mut chow3, mut chow5, mut chow6) = (false, false, false, false);
    for s in &hand.sets {
        let v = s.tile.value();
        if s.kind.is_chow() {
            chow2 |= v == 2;
            chow3 |= v == 3;
            chow5 |= v == 5;
            chow6 |= v == 6;
        } else if s.kind.is_pair() {
            pair2 |= v == 2;
            pair5 |= v == 5;
            pair8 |= v == 8;
        } else {
            set1 |= v == 1;
            set9 |= v == 9;
        }
    }
    set1 && set9 && ((pair2 && chow3 && chow6) || (pair5 && chow2 && chow6) || (pair8 && chow2 && chow5))
}
