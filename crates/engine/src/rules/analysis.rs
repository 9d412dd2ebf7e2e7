//! Hand analysis: can these tiles be arranged into a complete Mah-Jong hand?
//!
//! A winning hand is four sets and a pair, Thirteen Unique Wonders, or (with
//! the `SevenPairs` option) any seven pairs. Declared sets count towards the
//! four sets and the pair; the concealed tiles must make up the rest. The
//! search works on per-face counts, trying the lowest remaining face as a
//! pung, as the lowest tile of a chow, or as a pair; that is a complete search,
//! so it gives the same answers as mj-server's exhaustive one.

use super::tile::{NORMAL_KINDS, Tile, TileCounts};

/// What the concealed tiles still have to supply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Need {
    /// Sets of three (pungs or chows).
    pub melds: u8,
    /// Pairs.
    pub pairs: u8,
}

/// True if `counts` (normal tiles only) splits exactly into `need.melds` sets
/// of three and `need.pairs` pairs.
pub fn decomposes(counts: &TileCounts, need: Need) -> bool {
    let mut c = [0u8; NORMAL_KINDS];
    c.copy_from_slice(&counts.0[..NORMAL_KINDS]);
    if counts.0[NORMAL_KINDS..].iter().any(|&n| n > 0) {
        return false; // a bonus tile can never be part of a set
    }
    let total: usize = c.iter().map(|&n| n as usize).sum();
    if total != 3 * need.melds as usize + 2 * need.pairs as usize {
        return false;
    }
    search(&mut c, 0, need.melds, need.pairs)
}

fn search(c: &mut [u8; NORMAL_KINDS], from: usize, melds: u8, pairs: u8) -> bool {
    let Some(i) = (from..NORMAL_KINDS).find(|&i| c[i] > 0) else {
        return melds == 0 && pairs == 0;
    };
    if melds > 0 && c[i] >= 3 {
        c[i] -= 3;
        let ok = search(c, i, melds - 1, pairs);
        c[i] += 3;
        if ok {
            return true;
        }
    }
    // The index layout keeps each numbered suit's 1-9 consecutive, and i < 27
    // means i is a numbered tile; a chow must not run past 9.
    if melds > 0 && i < 27 && i % 9 <= 6 && c[i + 1] > 0 && c[i + 2] > 0 {
        c[i] -= 1;
        c[i + 1] -= 1;
        c[i + 2] -= 1;
        let ok = search(c, i, melds - 1, pairs);
        c[i] += 1;
        c[i + 1] += 1;
        c[i + 2] += 1;
        if ok {
            return true;
        }
    }
    if pairs > 0 && c[i] >= 2 {
        c[i] -= 2;
        let ok = search(c, i, melds, pairs - 1);
        c[i] += 2;
        if ok {
            return true;
        }
    }
    false
}

/// True if exactly 14 tiles are one of each of the thirteen major tiles plus
/// a second copy of one of them.
pub fn is_thirteen_wonders(counts: &TileCounts) -> bool {
    let mut doubled = false;
    for t in Tile::thirteen_wonders() {
        match counts.get(t) {
            1 => {}
            2 if !doubled => doubled = true,
            _ => return false,
        }
    }
    doubled && counts.total() == 14
}

/// Faces that could possibly complete a hand whose concealed tiles are
/// `counts`: a face is only useful equal or next to a concealed tile, or (if
/// `thirteen_wonders` is possible) when it is major. Used to avoid testing all
/// 34 faces when looking for every tile that completes a hand.
pub fn candidate_faces(counts: TileCounts, thirteen_wonders: bool) -> impl Iterator<Item = Tile> {
    Tile::normal_faces().filter(move |&t| {
        if counts.get(t) > 0 || (thirteen_wonders && t.is_major()) {
            return true;
        }
        [t.down(2), t.down(1), t.up(1), t.up(2)].into_iter().flatten().any(|n| counts.get(n) > 0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::tile::parse_tiles;

    fn counts(s: &str) -> TileCounts {
        TileCounts::of(parse_tiles(s).unwrap())
    }

    #[test]
    fn standard_hands() {
        let hand = counts("1B 2B 3B 4B 5B 6B 7B 8B 9B EW EW EW RD RD");
        assert!(decomposes(&hand, Need { melds: 4, pairs: 1 }));
        assert!(!decomposes(&counts("1B 2B 4B EW EW"), Need { melds: 1, pairs: 1 }));
        // Neither 111+233 nor 123+113 are two sets.
        assert!(!decomposes(&counts("1C 1C 1C 2C 3C 3C"), Need { melds: 2, pairs: 0 }));
        assert!(!decomposes(&counts("1C 1C 2C 3C 3C 3C"), Need { melds: 2, pairs: 0 }));
        assert!(decomposes(&counts("1C 1C 2C 2C 3C 3C"), Need { melds: 2, pairs: 0 }));
        assert!(decomposes(&counts("1C 1C 1C 2C 3C"), Need { melds: 1, pairs: 1 }));
        // no chow across suits or out of 9
        assert!(!decomposes(&counts("8B 9B 1C"), Need { melds: 1, pairs: 0 }));
        assert!(!decomposes(&counts("EW SW WW"), Need { melds: 1, pairs: 0 }));
        assert!(!decomposes(&counts("1F 1F 1F"), Need { melds: 1, pairs: 0 }));
    }

    #[test]
    fn seven_pairs_shape() {
        let h = counts("1B 1B 3C 3C 5D 5D EW EW RD RD GD GD 9B 9B");
        assert!(decomposes(&h, Need { melds: 0, pairs: 7 }));
        let four_alike = counts("1B 1B 1B 1B 5D 5D EW EW RD RD GD GD 9B 9B");
        assert!(decomposes(&four_alike, Need { melds: 0, pairs: 7 }));
    }

    #[test]
    fn thirteen_wonders() {
        assert!(is_thirteen_wonders(&counts("1B 9B 1C 9C 1D 9D EW SW WW NW RD WD GD GD")));
        assert!(!is_thirteen_wonders(&counts("1B 9B 1C 9C 1D 9D EW SW WW NW RD WD GD")));
        assert!(!is_thirteen_wonders(&counts("1B 9B 1C 9C 1D 9D EW SW WW NW RD WD 5D 5D")));
    }

    #[test]
    fn candidates_cover_every_completing_tile() {
        let hand = counts("2B 3B 5C 5C 5C EW EW RD RD RD 7D 8D 9D");
        for t in Tile::normal_faces() {
            let mut h = hand;
            h.add(t);
            if decomposes(&h, Need { melds: 4, pairs: 1 }) {
                assert!(candidate_faces(hand, false).any(|c| c == t), "{t} missing");
            }
        }
    }
}
