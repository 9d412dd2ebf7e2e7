//! Hand evaluation for the robot: how good a set of concealed tiles is while
//! waiting for the next tile.
//!
//! The value is, in this order of importance:
//! - the distance to a winning shape (a standard hand, blended towards a
//!   pungs-only hand for a robot that dislikes chows; seven pairs when the
//!   game allows them; Thirteen Unique Wonders), worth [`STEP`] per tile;
//! - the acceptance: how many of the tiles the robot has not seen would bring
//!   the hand closer (each unseen copy counts), which breaks ties between
//!   hands at the same distance the way a human counts "outs";
//! - the strategy's per-tile bias (off-suit tiles for suitness, minor tiles
//!   for majorness, honours for a chow lover).
//!
//! All of it works on fixed-size per-face counts: no allocation.

use arrayvec::ArrayVec;

use super::shape::{
    Counts, GROUPS, GroupShape, PlacesProbe, adjust_key, group_len, group_of, group_shape, group_start, is_major_index,
    shapes_of, standard_distance,
};
use crate::rules::tile::NORMAL_KINDS;

/// The value of one tile of distance to a winning shape.
pub(crate) const STEP: f32 = 100.0;

/// Candidate discards whose distance and bias are this far behind the best
/// are not worth the cost of counting their acceptance: acceptance rarely
/// differs by more than this.
const ACCEPTANCE_WINDOW: f32 = 70.0;

/// Counts that the distance formulas for pungs-only, seven pairs and Thirteen
/// Unique Wonders need, kept incrementally.
#[derive(Clone, Copy, Debug, Default)]
struct Stats {
    pungs: i32,
    pairs: i32,
    /// Pairs as seven pairs counts them (four alike are two).
    seven: i32,
    major_kinds: i32,
    major_pairs: i32,
}

impl Stats {
    fn of(counts: &Counts) -> Stats {
        let mut s = Stats::default();
        for (i, &c) in counts.iter().enumerate() {
            s.add_face(i, c, 1);
        }
        s
    }

    /// Adds (`sign` 1) or removes (-1) the contribution of a face held `c` times.
    fn add_face(&mut self, i: usize, c: u8, sign: i32) {
        match c {
            2 => self.pairs += sign,
            c if c >= 3 => self.pungs += sign,
            _ => {}
        }
        self.seven += sign * (c / 2) as i32;
        if is_major_index(i) && c > 0 {
            self.major_kinds += sign;
            if c >= 2 {
                self.major_pairs += sign;
            }
        }
    }

    /// The stats after one more tile of face `i`, held `c` times before.
    fn with_one_more(mut self, i: usize, c: u8) -> Stats {
        self.add_face(i, c, -1);
        self.add_face(i, c + 1, 1);
        self
    }

    fn pung_distance(&self, need: u8) -> i32 {
        let need = need as i32;
        let melds = self.pungs.min(need);
        let eyes = (self.pairs > 0) as i32;
        let partials = (self.pairs - eyes).min(need - melds);
        2 * need - 2 * melds - partials - eyes
    }
}

/// For each group, the other three groups combined.
fn others_of(s: &[GroupShape; GROUPS]) -> [GroupShape; GROUPS] {
    let (ab, cd) = (s[0].combine(&s[1]), s[2].combine(&s[3]));
    [s[1].combine(&cd), s[0].combine(&cd), s[3].combine(&ab), s[2].combine(&ab)]
}

/// Evaluates hands for one decision: the rules and strategy in force and what
/// the robot has seen.
pub(crate) struct Evaluator<'a> {
    /// Sets the concealed tiles must still supply.
    pub need: u8,
    /// Seven pairs is a possible winning hand (the option is on and no set is
    /// declared).
    pub seven_pairs: bool,
    /// Thirteen Unique Wonders is possible (no set declared).
    pub wonders: bool,
    /// 0..1: how far the standard distance is blended towards pungs only.
    pub pung_weight: f32,
    /// Copies of each face the robot has not seen.
    pub unseen: &'a Counts,
    /// The strategy's penalty for holding one tile of each face.
    pub bias: &'a [f32; NORMAL_KINDS],
}

/// A hand's distance, with what is needed to evaluate neighbours cheaply.
struct Analysed {
    shapes: [GroupShape; GROUPS],
    keys: [u32; GROUPS],
    stats: Stats,
    standard: i32,
}

impl Evaluator<'_> {
    fn blend(&self, standard: i32, stats: &Stats) -> f32 {
        let mut d = standard as f32;
        if self.pung_weight > 0.0 {
            let w = self.pung_weight;
            d = (1.0 - w) * d + w * stats.pung_distance(self.need) as f32;
        }
        if self.seven_pairs {
            d = d.min((6 - stats.seven.min(7)) as f32);
        }
        if self.wonders {
            d = d.min((13 - stats.major_kinds - (stats.major_pairs > 0) as i32) as f32);
        }
        d
    }

    fn analyse(&self, counts: &Counts) -> Analysed {
        let (shapes, keys) = shapes_of(counts);
        Analysed { standard: standard_distance(&shapes, self.need), shapes, keys, stats: Stats::of(counts) }
    }

    /// The distance of `counts` to a winning shape (lower is better; -1 is complete).
    pub fn distance(&self, counts: &Counts) -> f32 {
        let a = self.analyse(counts);
        self.blend(a.standard, &a.stats)
    }

    /// The strategy's penalty for holding `counts`.
    pub fn bias_of(&self, counts: &Counts) -> f32 {
        counts.iter().zip(self.bias.iter()).map(|(&c, &b)| c as f32 * b).sum()
    }

    /// The value of a hand waiting for its next tile (higher is better).
    pub fn value(&self, counts: &Counts) -> f32 {
        let a = self.analyse(counts);
        let d = self.blend(a.standard, &a.stats);
        -STEP * d + self.acceptance(counts, &a, &others_of(&a.shapes), d, None) - self.bias_of(counts)
    }

    /// The faces (as bits by place in each group) whose drawing might bring
    /// the hand closer: for the standard and pungs-only distances only a face
    /// held or (in a suit) within two of one held can make a new set or
    /// partial set; for seven pairs a face held an odd number of times; for
    /// Thirteen Unique Wonders a major face. `live` says which of the last two
    /// count (see `acceptance`).
    fn helpful(&self, counts: &Counts, g: usize, seven: bool, wonders: bool) -> (u16, u16) {
        let start = group_start(g);
        let (mut held, mut odd, mut major) = (0u16, 0u16, 0u16);
        for k in 0..group_len(g) {
            let c = counts[start + k];
            held |= ((c > 0) as u16) << k;
            odd |= ((c % 2 == 1) as u16) << k;
            major |= (is_major_index(start + k) as u16) << k;
        }
        let near = if g < 3 { (held | held << 1 | held << 2 | held >> 1 | held >> 2) & 0x1FF } else { held };
        let special = if seven { odd } else { 0 } | if wonders { major } else { 0 };
        (near, special)
    }

    /// Which of seven pairs and Thirteen Unique Wonders could decide whether
    /// one more tile brings a hand at distance `d` closer: a shape more than
    /// one tile further than `d` cannot (one tile brings any shape at most one
    /// step closer), so leaving it out changes nothing.
    fn live_specials(&self, stats: &Stats, d: f32) -> (bool, bool) {
        let seven = self.seven_pairs && ((6 - stats.seven.min(7)) as f32 - 1.0) < d;
        let wonders = self.wonders && ((13 - stats.major_kinds - (stats.major_pairs > 0) as i32) as f32 - 1.0) < d;
        (seven, wonders)
    }

    /// An upper bound of [`Self::acceptance`]: one tile brings a hand at most
    /// one step closer, so every unseen tile that may help counts once.
    fn acceptance_bound(&self, counts: &Counts, stats: &Stats, d: f32) -> f32 {
        let (seven, wonders) = self.live_specials(stats, d);
        let mut total = 0u32;
        for g in 0..GROUPS {
            let (near, special) = self.helpful(counts, g, seven, wonders);
            let mut bits = near | special;
            while bits != 0 {
                let t = group_start(g) + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                if counts[t] < 4 {
                    total += self.unseen[t] as u32;
                }
            }
        }
        total as f32
    }

    /// Unseen tiles that would bring the hand closer, each weighted by how
    /// much closer. `others[g]` is the combined shape of the groups other
    /// than `g`.
    ///
    /// `reuse`, for the hands left by discards that kept every group's shape
    /// (a tile in no set or partial set), names the group discarded from and
    /// remembers the other groups' shares, which are then the same for all
    /// such hands while only the standard distance counts.
    fn acceptance(
        &self,
        counts: &Counts,
        a: &Analysed,
        others: &[GroupShape; GROUPS],
        d: f32,
        mut reuse: Option<(usize, &mut [Option<f32>; GROUPS])>,
    ) -> f32 {
        let (seven, wonders) = self.live_specials(&a.stats, d);
        let live = Evaluator { seven_pairs: seven, wonders, ..*self };
        // With the standard distance alone, each improving tile is one step.
        let simple = !seven && !wonders && self.pung_weight == 0.0;
        // First each group's helpful faces and, where its improving places
        // are needed, the look in their cache, all four looks together (see
        // `PlacesProbe`); then each group's share.
        let mut plan = [None; GROUPS];
        for (g, step) in plan.iter_mut().enumerate() {
            let remembered = match &reuse {
                Some((h, memo)) if simple && *h != g => memo[g],
                _ => None,
            };
            if remembered.is_none() {
                let (near, special) = self.helpful(counts, g, seven, wonders);
                let probe = (near != 0).then(|| PlacesProbe::new(a.keys[g], &others[g], self.need));
                *step = Some((near, special, probe));
            }
        }
        let mut total = 0.0;
        for g in 0..GROUPS {
            let shared = match &mut reuse {
                Some((h, memo)) if simple && *h != g => Some(&mut memo[g]),
                _ => None,
            };
            let Some((near, special, probe)) = plan[g] else {
                total += shared.and_then(|s| *s).unwrap_or(0.0);
                continue;
            };
            let improving = probe.map_or(0, |p| p.places(&others[g], self.need, near));
            let mut share = 0.0;
            let mut bits = if simple { improving } else { near | special };
            while bits != 0 {
                let at = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let t = group_start(g) + at;
                let c = counts[t];
                if self.unseen[t] == 0 || c >= 4 {
                    continue;
                }
                if simple {
                    share += self.unseen[t] as f32;
                    continue;
                }
                // One tile lowers the standard distance by one or not at all.
                let standard = a.standard - (improving >> at & 1) as i32;
                let after = live.blend(standard, &a.stats.with_one_more(t, c));
                if after < d {
                    share += self.unseen[t] as f32 * (d - after);
                }
            }
            if let Some(slot) = shared {
                *slot = Some(share);
            }
            total += share;
        }
        total
    }

    /// The distance left after the best discard from a hand that has just
    /// drawn (3n+2 tiles): a cheap first look before a full evaluation.
    pub fn best_discard_distance(&self, counts: &Counts) -> f32 {
        let base = self.analyse(counts);
        let mut best = f32::INFINITY;
        for (i, &c) in counts.iter().enumerate() {
            if c == 0 {
                continue;
            }
            let (g, at) = group_of(i);
            let mut shapes = base.shapes;
            shapes[g] = group_shape(adjust_key(base.keys[g], at, -1));
            let mut stats = base.stats;
            stats.add_face(i, c, -1);
            stats.add_face(i, c - 1, 1);
            best = best.min(self.blend(standard_distance(&shapes, self.need), &stats));
        }
        best
    }

    /// The best discard from a hand that has just drawn (3n+2 tiles), among
    /// the faces `allowed` lets through, with `bonus` (under 1) added to each
    /// face's value as a tie-break. Returns the face index and the value of
    /// the hand left; `None` if nothing may be discarded. Equal values go to
    /// the lowest face, so the answer is deterministic. Unless `exact`, the
    /// value returned is only good for ranking (a lone candidate is not
    /// evaluated further).
    pub fn best_discard(
        &self,
        counts: &Counts,
        allowed: impl Fn(usize) -> bool,
        bonus: impl Fn(usize) -> f32,
        exact: bool,
    ) -> Option<(usize, f32)> {
        let base = self.analyse(counts);
        let base_bias = self.bias_of(counts);
        // The other three groups of each group, combined once for all the
        // discards from that group.
        let others = others_of(&base.shapes);
        // First pass: distance and bias only. What it finds about each hand
        // left is kept for the second pass.
        let mut pre = [f32::NEG_INFINITY; NORMAL_KINDS];
        let mut left_hands: ArrayVec<(usize, Analysed, f32), NORMAL_KINDS> = ArrayVec::new();
        let mut best_pre = f32::NEG_INFINITY;
        for i in 0..NORMAL_KINDS {
            if counts[i] == 0 || !allowed(i) {
                continue;
            }
            let (g, at) = group_of(i);
            let mut a = Analysed { shapes: base.shapes, keys: base.keys, stats: base.stats, standard: 0 };
            a.keys[g] = adjust_key(base.keys[g], at, -1);
            a.shapes[g] = group_shape(a.keys[g]);
            a.standard = 2 * self.need as i32 - others[g].best_with(&a.shapes[g], self.need);
            a.stats.add_face(i, counts[i], -1);
            a.stats.add_face(i, counts[i] - 1, 1);
            let d = self.blend(a.standard, &a.stats);
            pre[i] = -STEP * d - (base_bias - self.bias[i]) + bonus(i);
            best_pre = best_pre.max(pre[i]);
            left_hands.push((i, a, d));
        }
        if best_pre == f32::NEG_INFINITY {
            return None;
        }
        let window = |i: usize| pre[i] >= best_pre - ACCEPTANCE_WINDOW;
        if !exact && (0..NORMAL_KINDS).filter(|&i| window(i)).count() == 1 {
            return (0..NORMAL_KINDS).find(|&i| window(i)).map(|i| (i, pre[i]));
        }
        // Second pass: acceptance, most promising first, skipping those that
        // cannot beat the best found even if every tile that may help did.
        let mut left = *counts;
        let mut order: ArrayVec<(usize, f32, usize), NORMAL_KINDS> = ArrayVec::new();
        for (k, (i, a, d)) in left_hands.iter().enumerate() {
            let i = *i;
            if window(i) {
                left[i] -= 1;
                order.push((i, pre[i] + self.acceptance_bound(&left, &a.stats, *d), k));
                left[i] += 1;
            }
        }
        order.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut best: Option<(usize, f32)> = None;
        let mut shares = [None; GROUPS];
        for &(i, bound, k) in &order {
            if let Some((bi, bv)) = best
                && (bound < bv || (bound == bv && i > bi))
            {
                continue;
            }
            let (_, a, d) = &left_hands[k];
            let g = group_of(i).0;
            // Discarding a tile that was in no set or partial set leaves its
            // group's shape, and so every group's complement, unchanged.
            let changed;
            let (others_left, reuse) = if a.shapes[g] == base.shapes[g] {
                (&others, Some((g, &mut shares)))
            } else {
                changed = others_of(&a.shapes);
                (&changed, None)
            };
            left[i] -= 1;
            let v = pre[i] + self.acceptance(&left, a, others_left, *d, reuse);
            left[i] += 1;
            if best.is_none_or(|(bi, bv)| v > bv || (v == bv && i < bi)) {
                best = Some((i, v));
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bots::shape::tests::counts;

    fn evaluator<'a>(unseen: &'a Counts, bias: &'a [f32; NORMAL_KINDS]) -> Evaluator<'a> {
        Evaluator { need: 4, seven_pairs: false, wonders: true, pung_weight: 0.0, unseen, bias }
    }

    #[test]
    fn discards_the_isolated_tile() {
        let unseen = [4u8; NORMAL_KINDS];
        let bias = [0.0; NORMAL_KINDS];
        let e = evaluator(&unseen, &bias);
        let hand = counts("1B 2B 3B 4B 5B 6B 7B 8B 9B EW EW RD RD NW");
        let (i, _) = e.best_discard(&hand, |_| true, |_| 0.0, true).unwrap();
        assert_eq!(i, "NW".parse::<crate::rules::Tile>().unwrap().index());
        // A two-sided wait accepts more than a closed one.
        let hand = counts("2C 3C 5D 7D EW EW EW RD RD RD 9B 9B 9B 1D");
        let (i, _) = e.best_discard(&hand, |_| true, |_| 0.0, true).unwrap();
        assert_eq!(i, "1D".parse::<crate::rules::Tile>().unwrap().index());
    }

    /// The incremental counts agree with the plain formulas of `shape`.
    #[test]
    fn special_distances_agree_with_the_formulas() {
        use crate::bots::shape::{pung_distance, seven_pairs_distance, wonders_distance};
        let unseen = [4u8; NORMAL_KINDS];
        let bias = [0.0; NORMAL_KINDS];
        for s in [
            "1B 1B 3C 3C 5D 5D EW EW RD RD GD GD 9B",
            "1B 9B 1C 9C 1D 9D EW SW WW NW RD WD WD",
            "1B 1B 1B 2B 2B 3C 3C EW EW EW RD RD 9D",
            "2B 2B 2B 2B 5C 5C 5C 5C 7D 7D 7D 7D 1D",
        ] {
            let c = counts(s);
            let mut e = evaluator(&unseen, &bias);
            e.wonders = false;
            e.pung_weight = 1.0;
            assert_eq!(e.distance(&c), pung_distance(&c, 4) as f32, "{s}");
            let e = Evaluator { pung_weight: 0.0, seven_pairs: true, wonders: false, ..e };
            assert!(e.distance(&c) <= seven_pairs_distance(&c) as f32, "{s}");
            let e = Evaluator { seven_pairs: false, wonders: true, ..e };
            assert!(e.distance(&c) <= wonders_distance(&c) as f32, "{s}");
        }
    }

    #[test]
    fn acceptance_counts_unseen_tiles() {
        let mut unseen = [4u8; NORMAL_KINDS];
        let bias = [0.0; NORMAL_KINDS];
        let hand = counts("2C 3C EW EW EW RD RD RD 9B 9B 9B 5D 5D");
        let open = evaluator(&unseen, &bias).value(&hand);
        unseen["1C".parse::<crate::rules::Tile>().unwrap().index()] = 0;
        unseen["4C".parse::<crate::rules::Tile>().unwrap().index()] = 0;
        let dead = evaluator(&unseen, &bias).value(&hand);
        assert!(open > dead, "{open} {dead}");
        assert_eq!(evaluator(&unseen, &bias).distance(&hand), 0.0);
    }
}
