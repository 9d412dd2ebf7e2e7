//! How far a set of concealed tiles is from a winning shape: the number of
//! tiles that must still be exchanged ("shanten": 0 means one tile from
//! Mah-Jong, -1 means complete).
//!
//! For a standard hand that needs `M` more sets from the concealed tiles the
//! distance is `2M - 2*melds - partials - eyes`, maximised over the ways of
//! splitting the tiles into complete sets, partial sets (a pair, two
//! neighbours, two with a gap) and at most one pair of eyes, with no more than
//! `M` sets and partial sets together. The suits are independent, so each
//! suit's pattern (and the honours') is analysed once into a small table,
//! kept in a process-wide table indexed by the pattern: the robot evaluates
//! hundreds of thousands of hands per thousand games, and the same suit
//! patterns come back again and again.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use crate::rules::tile::NORMAL_KINDS;

/// Per-face counts of the 34 normal tiles.
pub(crate) type Counts = [u8; NORMAL_KINDS];

/// Number of tile groups: bamboo, characters, circles, honours.
pub(crate) const GROUPS: usize = 4;

/// Powers of five: a group pattern is written in base five, one digit (0-4
/// tiles) per face.
const POW5: [u32; 10] = [1, 5, 25, 125, 625, 3_125, 15_625, 78_125, 390_625, 1_953_125];
/// Honours patterns are numbered after all the suit patterns.
const HONOURS_BASE: u32 = POW5[9];
/// Every suit pattern and every honours pattern.
const TABLE_SIZE: usize = (POW5[9] + POW5[7]) as usize;

/// What one group of tiles can contribute: for `eyes` (0 or 1) and `melds`
/// (0..=4), the most partial sets possible alongside, capped at 4, or -1 when
/// the group cannot be split that way. `mask` has bit `5*eyes + melds` set
/// for the possible splits, so that loops visit only those.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct GroupShape {
    t: [[i8; 5]; 2],
    mask: u16,
}

const IMPOSSIBLE: GroupShape = GroupShape { t: [[-1; 5]; 2], mask: 0 };
const EMPTY: GroupShape = GroupShape { t: [[0, -1, -1, -1, -1], [-1; 5]], mask: 1 };

impl GroupShape {
    fn set(&mut self, e: usize, m: usize, t: i8) {
        if t > self.t[e][m] {
            self.t[e][m] = t;
            self.mask |= 1 << (5 * e + m);
        }
    }

    /// Adds the splits of `sub` extended by `melds`, `partials` and `eyes` more.
    fn absorb(&mut self, sub: &GroupShape, melds: usize, partials: i8, eyes: usize) {
        let mut bits = sub.mask;
        while bits != 0 {
            let k = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let (e, m) = (k / 5, k % 5);
            let (ne, nm) = (e + eyes, m + melds);
            if ne <= 1 && nm <= 4 {
                self.set(ne, nm, (sub.t[e][m] + partials).min(4));
            }
        }
    }

    /// The splits of two groups' tiles taken together.
    pub(crate) fn combine(&self, other: &GroupShape) -> GroupShape {
        let mut out = IMPOSSIBLE;
        let mut a = self.mask;
        while a != 0 {
            let ka = a.trailing_zeros() as usize;
            a &= a - 1;
            let (e1, m1) = (ka / 5, ka % 5);
            let t1 = self.t[e1][m1];
            let mut b = other.mask;
            while b != 0 {
                let kb = b.trailing_zeros() as usize;
                b &= b - 1;
                let (e2, m2) = (kb / 5, kb % 5);
                if e1 + e2 <= 1 && m1 + m2 <= 4 {
                    out.set(e1 + e2, m1 + m2, (t1 + other.t[e2][m2]).min(4));
                }
            }
        }
        out
    }

    /// The best `2*melds + partials + eyes` of the two groups together, for
    /// a hand that needs `need` more sets (partial sets beyond `need` minus
    /// the melds do not help).
    pub(crate) fn best_with(&self, other: &GroupShape, need: u8) -> i32 {
        let need = need as i32;
        let mut best = 0;
        let mut a = self.mask;
        while a != 0 {
            let ka = a.trailing_zeros() as usize;
            a &= a - 1;
            let (e1, m1) = (ka / 5, ka % 5);
            let t1 = self.t[e1][m1] as i32;
            let mut b = other.mask;
            while b != 0 {
                let kb = b.trailing_zeros() as usize;
                b &= b - 1;
                let (e2, m2) = (kb / 5, kb % 5);
                let m = (m1 + m2) as i32;
                if e1 + e2 <= 1 && m <= need {
                    let v = 2 * m + (t1 + other.t[e2][m2] as i32).min(need - m) + (e1 + e2) as i32;
                    best = best.max(v);
                }
            }
        }
        best
    }

    /// Packs the shape into 31 bits (3 per split: partials + 1, 0 for
    /// impossible) with bit 31 set to mark a computed entry.
    fn pack(&self) -> u32 {
        let mut v = 1u32 << 31;
        for k in 0..10 {
            v |= ((self.t[k / 5][k % 5] + 1) as u32) << (3 * k);
        }
        v
    }

    fn unpack(v: u32) -> GroupShape {
        let mut s = IMPOSSIBLE;
        for k in 0..10 {
            let t = ((v >> (3 * k)) & 7) as i8 - 1;
            if t >= 0 {
                s.t[k / 5][k % 5] = t;
                s.mask |= 1 << k;
            }
        }
        s
    }
}

/// The group of a normal tile index and its place in the group.
pub(crate) fn group_of(i: usize) -> (usize, usize) {
    if i < 27 { (i / 9, i % 9) } else { (3, i - 27) }
}

/// The first tile index of a group.
pub(crate) fn group_start(g: usize) -> usize {
    g * 9
}

/// The number of faces in a group.
pub(crate) fn group_len(g: usize) -> usize {
    if g == 3 { 7 } else { 9 }
}

/// The table key of a group's counts.
pub(crate) fn group_key(counts: &Counts, g: usize) -> u32 {
    let start = group_start(g);
    let mut key = if g == 3 { HONOURS_BASE } else { 0 };
    for (i, &c) in counts[start..start + group_len(g)].iter().enumerate() {
        key += c.min(4) as u32 * POW5[i];
    }
    key
}

/// The key after adding (`delta` = 1) or removing (`delta` = -1) one tile at
/// place `i` of the group; the caller keeps counts within 0..=4.
pub(crate) fn adjust_key(key: u32, i: usize, delta: i32) -> u32 {
    if delta >= 0 { key + POW5[i] } else { key - POW5[i] }
}

/// The table of analysed patterns, shared by all threads: entries are
/// written once with the same value whoever computes them, so relaxed
/// atomics suffice.
fn table() -> &'static [AtomicU32] {
    static TABLE: OnceLock<Box<[AtomicU32]>> = OnceLock::new();
    TABLE.get_or_init(|| (0..TABLE_SIZE).map(|_| AtomicU32::new(0)).collect())
}

/// The shape table of a group pattern.
pub(crate) fn group_shape(key: u32) -> GroupShape {
    let Some(slot) = table().get(key as usize) else { return compute(key) };
    let v = slot.load(Ordering::Relaxed);
    if v != 0 {
        return GroupShape::unpack(v);
    }
    let s = compute(key);
    slot.store(s.pack(), Ordering::Relaxed);
    s
}

/// Splits a pattern by what its lowest tile is used for, each alternative
/// looked up (and recorded) in turn: every split of the pattern uses its
/// lowest tile in exactly one of these ways.
fn compute(key: u32) -> GroupShape {
    let seq = key < HONOURS_BASE;
    let (n, local) = if seq { (9, key) } else { (7, key - HONOURS_BASE) };
    let count = |i: usize| (local / POW5[i]) % 5;
    let Some(i) = (0..n).find(|&i| count(i) > 0) else { return EMPTY };
    let mut out = IMPOSSIBLE;
    let c = count(i);
    if c >= 3 {
        out.absorb(&group_shape(key - 3 * POW5[i]), 1, 0, 0);
    }
    if c >= 2 {
        let sub = group_shape(key - 2 * POW5[i]);
        out.absorb(&sub, 0, 0, 1);
        out.absorb(&sub, 0, 1, 0);
    }
    if seq && i + 2 < n && count(i + 1) > 0 && count(i + 2) > 0 {
        out.absorb(&group_shape(key - POW5[i] - POW5[i + 1] - POW5[i + 2]), 1, 0, 0);
    }
    if seq && i + 1 < n && count(i + 1) > 0 {
        out.absorb(&group_shape(key - POW5[i] - POW5[i + 1]), 0, 1, 0);
    }
    if seq && i + 2 < n && count(i + 2) > 0 {
        out.absorb(&group_shape(key - POW5[i] - POW5[i + 2]), 0, 1, 0);
    }
    out.absorb(&group_shape(key - POW5[i]), 0, 0, 0);
    out
}

/// The cache's slots: 2^18 words (2 MiB).
const PLACES_CACHE_BITS: u32 = 18;

fn places_cache() -> &'static [AtomicU64] {
    static CACHE: OnceLock<Box<[AtomicU64]>> = OnceLock::new();
    CACHE.get_or_init(|| (0..1usize << PLACES_CACHE_BITS).map(|_| AtomicU64::new(u64::MAX)).collect())
}

/// The places of a group pattern where one more tile lowers the standard
/// distance of a hand made of this group and the other groups combined.
///
/// Remembered in a process-wide direct-mapped cache: the same group patterns
/// meet the same shapes of the rest of the hand again and again, and the
/// cached answer (9 bits) fits in the same word as its key. A look in the
/// cache is split from its use so that a caller can look for several groups
/// before it uses any answer: the cache is far larger than the processor's
/// caches, and looks made one after the other, none waiting for another,
/// wait for memory together rather than in turn.
#[derive(Clone, Copy)]
pub(crate) struct PlacesProbe {
    key: u32,
    tag: u64,
    slot: usize,
    entry: u64,
}

impl PlacesProbe {
    /// Reads the cache's slot for `key` with `others` and `need`.
    pub(crate) fn new(key: u32, others: &GroupShape, need: u8) -> PlacesProbe {
        let honours = (key >= HONOURS_BASE) as u64;
        let local = if honours == 1 { key - HONOURS_BASE } else { key };
        // 21 bits of pattern, 30 of shape, 3 of need, 1 of group kind: 55 bits,
        // and the 9 bits of the answer make 64.
        let tag =
            (local as u64) | ((others.pack() as u64 & 0x3FFF_FFFF) << 21) | ((need as u64) << 51) | (honours << 54);
        let slot = (tag.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - PLACES_CACHE_BITS)) as usize;
        let entry = places_cache().get(slot).map_or(u64::MAX, |e| e.load(Ordering::Relaxed));
        PlacesProbe { key, tag, slot, entry }
    }

    /// The improving places among `near` (only those are asked for: no other
    /// can help), as bits: from the slot read if it held them,
    /// else worked out and remembered. `others` and `need` are those given
    /// to [`PlacesProbe::new`].
    pub(crate) fn places(self, others: &GroupShape, need: u8, near: u16) -> u16 {
        let PlacesProbe { key, tag, slot, entry } = self;
        if entry != u64::MAX && entry & ((1 << 55) - 1) == tag {
            return (entry >> 55) as u16 & near;
        }
        let (n, local) = if key >= HONOURS_BASE { (7, key - HONOURS_BASE) } else { (9, key) };
        let before = others.best_with(&group_shape(key), need);
        let mut bits = 0u16;
        for (at, &unit) in POW5.iter().enumerate().take(n) {
            // Every place that may help with any `near`, so the entry serves all callers.
            if (local / unit) % 5 < 4 && others.best_with(&group_shape(key + unit), need) > before {
                bits |= 1 << at;
            }
        }
        if let Some(e) = places_cache().get(slot) {
            e.store(tag | ((bits as u64) << 55), Ordering::Relaxed);
        }
        bits & near
    }
}

/// The standard-hand distance of the four groups together.
pub(crate) fn standard_distance(shapes: &[GroupShape; GROUPS], need: u8) -> i32 {
    let ab = shapes[0].combine(&shapes[1]);
    let cd = shapes[2].combine(&shapes[3]);
    2 * need as i32 - ab.best_with(&cd, need)
}

/// The distance of a hand that may only make pungs (no chows).
#[cfg(test)]
pub(crate) fn pung_distance(counts: &Counts, need: u8) -> i32 {
    let (mut melds, mut pairs) = (0i32, 0i32);
    for &c in counts {
        match c {
            2 => pairs += 1,
            c if c >= 3 => melds += 1,
            _ => {}
        }
    }
    let need = need as i32;
    let melds = melds.min(need);
    let eyes = (pairs > 0) as i32;
    let partials = (pairs - eyes).min(need - melds);
    2 * need - 2 * melds - partials - eyes
}

/// The distance to seven pairs (any seven pairs; four alike are two pairs,
/// as the engine counts them).
#[cfg(test)]
pub(crate) fn seven_pairs_distance(counts: &Counts) -> i32 {
    let pairs: i32 = counts.iter().map(|&c| (c / 2) as i32).sum();
    6 - pairs.min(7)
}

/// The distance to Thirteen Unique Wonders.
#[cfg(test)]
pub(crate) fn wonders_distance(counts: &Counts) -> i32 {
    let (mut kinds, mut pair) = (0, 0);
    for (i, &c) in counts.iter().enumerate() {
        if is_major_index(i) && c > 0 {
            kinds += 1;
            if c >= 2 {
                pair = 1;
            }
        }
    }
    13 - kinds - pair
}

/// True for the index of a terminal or honour.
pub(crate) fn is_major_index(i: usize) -> bool {
    i >= 27 || i.is_multiple_of(9) || i % 9 == 8
}

/// The shapes of all four groups of `counts`.
pub(crate) fn shapes_of(counts: &Counts) -> ([GroupShape; GROUPS], [u32; GROUPS]) {
    let keys = std::array::from_fn(|g| group_key(counts, g));
    (keys.map(group_shape), keys)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::rules::analysis::{Need, decomposes};
    use crate::rules::tile::{TileCounts, parse_tiles};

    /// Per-face counts of a list of tile codes (shared with eval's tests).
    pub(crate) fn counts(s: &str) -> Counts {
        let mut c = [0u8; NORMAL_KINDS];
        for t in parse_tiles(s).unwrap() {
            c[t.index()] += 1;
        }
        c
    }

    fn dist(s: &str, need: u8) -> i32 {
        standard_distance(&shapes_of(&counts(s)).0, need)
    }

    #[test]
    fn known_distances() {
        assert_eq!(dist("1B 2B 3B 4B 5B 6B 7B 8B 9B EW EW EW RD RD", 4), -1);
        assert_eq!(dist("1B 2B 3B 4B 5B 6B 7B 8B 9B EW EW EW RD", 4), 0);
        assert_eq!(dist("1B 2B 3B 4B 5B 6B 7B 8B 9B EW EW RD RD", 4), 0);
        assert_eq!(dist("1B 4B 7B 1C 4C 7C 1D 4D 7D EW SW WW NW", 4), 8);
        assert_eq!(dist("5C 5C 5C EW EW 7D 8D 9D RD RD", 3), 0);
        assert_eq!(dist("2B 3B 5D 5D", 1), 0);
        assert_eq!(dist("2B 3B 3B 3B", 1), 0);
        assert_eq!(dist("2B 5B 5D 8D", 1), 2);
        assert_eq!(dist("1B 1B 1B 1B", 1), 0);
        assert_eq!(seven_pairs_distance(&counts("1B 1B 3C 3C 5D 5D EW EW RD RD GD GD 9B")), 0);
        assert_eq!(wonders_distance(&counts("1B 9B 1C 9C 1D 9D EW SW WW NW RD WD GD")), 0);
        assert_eq!(wonders_distance(&counts("1B 9B 1C 9C 1D 9D EW SW WW NW RD WD GD GD")), -1);
        assert_eq!(pung_distance(&counts("1B 1B 1B 2B 2B 3C 3C EW EW EW RD RD 9D"), 4), 1);
        assert_eq!(pung_distance(&counts("1B 1B 1B 2B 2B 3C 3C EW EW EW RD RD RD"), 4), 0);
        assert_eq!(pung_distance(&counts("1B 2B 3B 4B 5B 6B 7B 8B 9B EW EW EW RD"), 4), 6);
    }

    /// Complete (distance -1) exactly when the engine's analysis says so, over
    /// many pseudo-random hands: the memoised tables agree with the reference
    /// search.
    #[test]
    fn complete_exactly_when_the_engine_agrees() {
        let mut x: u64 = 0x1234_5678;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for round in 0..20_000 {
            let need = (round % 5) as u8;
            let n = 3 * need as usize + 2;
            let mut c = [0u8; NORMAL_KINDS];
            // Concentrate on one or two suits so that complete hands are common.
            let span = if round % 3 == 0 { 9 } else { 18 };
            let mut placed = 0;
            while placed < n {
                let i = (next() % span as u64) as usize + if round % 2 == 0 { 0 } else { 16 };
                let i = i.min(NORMAL_KINDS - 1);
                if c[i] < 4 {
                    c[i] += 1;
                    placed += 1;
                }
            }
            let mut tc = TileCounts::default();
            tc.0[..NORMAL_KINDS].copy_from_slice(&c);
            let engine = decomposes(&tc, Need { melds: need, pairs: 1 });
            let ours = standard_distance(&shapes_of(&c).0, need) == -1;
            assert_eq!(engine, ours, "{c:?} need {need}");
        }
    }
}
