//! The elements of a hand's score, in the order the reference writes them:
//! the points (the sets, seven pairs, flowers and seasons, what the winning
//! tile adds), then the doubles (sets of dragons and winds, flowers and
//! seasons of one's own, animals, the hand's make-up, how it was won).
//! Each adds to the [`Tally`], which writes its line.

use arrayvec::ArrayVec;

use super::tally::{Label, Tally, pad_num};
use super::{ScoringInput, Whence};
use crate::rules::danger::Danger;
use crate::rules::purity::Purity;
use crate::rules::tile::{Suit, Tile, Wind};
use crate::rules::tileset::{SetKind, TileSet};

/// What a hand is made of, counted once over its declared sets (and its
/// concealed tiles, for purity): what the doubles and limit hands ask.
pub(super) struct Shape {
    pub(super) chows: i64,
    pub(super) pairs: i64,
    pub(super) pungs: i64,
    pub(super) kongs: i64,
    pub(super) concealed_pungs_kongs: i64,
    pub(super) dragon_sets: i64,
    pub(super) wind_sets: i64,
    pub(super) dragon_pairs: i64,
    pub(super) wind_pairs: i64,
    /// No set was made with a claimed tile (before the winning tile is
    /// looked at: see [`Shape::concealed`]).
    pub(super) all_closed: bool,
    /// The hand's pair was made with a claimed tile.
    pub(super) claimed_pair: bool,
    /// The tile of the hand's (last) pair.
    pub(super) eyes: Option<Tile>,
    /// No set scores a point and it is not seven pairs.
    pub(super) no_score: bool,
    pub(super) purity: Purity,
}

impl Shape {
    /// Counts what `input`'s hand is made of.
    pub(super) fn of(input: &ScoringInput<'_>) -> Shape {
        let opts = input.options;
        let hand = input.hand;
        let mut shape = Shape {
            chows: 0,
            pairs: 0,
            pungs: 0,
            kongs: 0,
            concealed_pungs_kongs: 0,
            dragon_sets: 0,
            wind_sets: 0,
            dragon_pairs: 0,
            wind_pairs: 0,
            all_closed: true,
            claimed_pair: false,
            eyes: None,
            no_score: true,
            purity: Purity::new(),
        };
        for set in &hand.sets {
            if set_points(set, opts.kong_has_3_types, input.seat, input.prevailing).0 != 0 {
                shape.no_score = false;
            }
            match set.kind {
                SetKind::Chow => {
                    shape.chows += 1;
                    shape.all_closed = false;
                }
                SetKind::ClosedChow => shape.chows += 1,
                SetKind::Pung => {
                    shape.all_closed = false;
                    shape.pungs += 1;
                }
                SetKind::ClosedPung => {
                    shape.pungs += 1;
                    shape.concealed_pungs_kongs += 1;
                }
                SetKind::Kong { annexed } => {
                    shape.kongs += 1;
                    // Millington: a claimed kong counts as concealed for doubling.
                    if opts.kong_has_3_types && !annexed {
                        shape.concealed_pungs_kongs += 1;
                    } else {
                        shape.all_closed = false;
                    }
                }
                SetKind::ClosedKong => {
                    shape.kongs += 1;
                    shape.concealed_pungs_kongs += 1;
                }
                SetKind::Pair => {
                    shape.pairs += 1;
                    shape.all_closed = false;
                    shape.claimed_pair = true;
                    shape.eyes = Some(set.tile);
                }
                SetKind::ClosedPair => {
                    shape.pairs += 1;
                    shape.eyes = Some(set.tile);
                }
            }
            if set.kind.tile_count() >= 3 {
                shape.dragon_sets += set.tile.is_dragon() as i64;
                shape.wind_sets += set.tile.is_wind() as i64;
            } else {
                shape.dragon_pairs += set.tile.is_dragon() as i64;
                shape.wind_pairs += set.tile.is_wind() as i64;
            }
            shape.purity.set(set);
        }
        // The concealed tiles count too: for losers under LosersPurity, and for
        // special hands whose tiles stay concealed.
        for &t in &hand.concealed {
            shape.purity.tile(t, t.is_green());
        }
        if shape.pairs == 7 {
            shape.no_score = false;
        }
        shape
    }

    /// A concealed hand: no set made with a claimed tile, nor (for the
    /// winner) won with a claimed discard, which a special set may hide.
    pub(super) fn concealed(&self, input: &ScoringInput<'_>) -> bool {
        self.all_closed && input.win.is_none_or(|w| w.whence != Whence::Discard)
    }
}

/// The points of one declared set, with the reference's description.
pub(super) fn set_points(set: &TileSet, kong_has_3_types: bool, own: Wind, prevailing: Wind) -> (i64, &'static str) {
    let t = set.tile;
    let major = t.is_major();
    let d = if major { 2 } else { 1 };
    let pick = |majors: &'static str, minors: &'static str| if major { majors } else { minors };
    match set.kind {
        SetKind::Chow | SetKind::ClosedChow => (0, ""),
        SetKind::Pung => (2 * d, pick("open pung of majors", "open pung of minors")),
        SetKind::ClosedPung => (4 * d, pick("closed pung of majors", "closed pung of minors")),
        SetKind::Kong { annexed } => {
            let why = match (kong_has_3_types, annexed) {
                (false, _) => pick("open kong of majors", "open kong of minors"),
                (true, true) => pick("annexed kong of majors", "annexed kong of minors"),
                (true, false) => pick("claimed kong of majors", "claimed kong of minors"),
            };
            (8 * d, why)
        }
        SetKind::ClosedKong => (16 * d, pick("closed kong of majors", "closed kong of minors")),
        SetKind::Pair | SetKind::ClosedPair => {
            if t.is_dragon() {
                (2, "pair of dragons")
            } else if t.is_wind() && t.wind_of() == Some(own) {
                if own == prevailing { (4, "pair of own and prevailing wind") } else { (2, "pair of own wind") }
            } else if t.is_wind() && t.wind_of() == Some(prevailing) {
                (2, "pair of prevailing wind")
            } else {
                (0, "")
            }
        }
    }
}

/// The score items of the animals, in the order of `Tile::animals`.
const ANIMAL_ITEMS: [&str; 4] = ["animal Cat", "animal Mouse", "animal Cockerel", "animal Centipede"];

/// The points: going out, each set, seven pairs, flowers and seasons, and
/// what the winning tile adds.
pub(super) fn points(tally: &mut Tally, input: &ScoringInput<'_>, shape: &Shape) {
    let opts = input.options;
    let hand = input.hand;
    if input.win.is_some() {
        tally.score(Label::Text("basic"), opts.mah_jong_score, "going Mah Jong");
    }
    for set in &hand.sets {
        let (pts, why) = set_points(set, opts.kong_has_3_types, input.seat, input.prevailing);
        if pts != 0 {
            tally.points(Label::Set(set), pts, why);
        }
    }
    if shape.pairs == 7 {
        tally.score(Label::Text("basic points"), opts.seven_pairs_val, "seven pairs");
    }

    // The 4 points of a bonus tile are for flowers and seasons; animals
    // score `AnimalScore` instead (seed 003: "each animal gives 1 double").
    let nbonus = hand.bonus.iter().filter(|t| !t.is_animal()).count() as i64;
    if nbonus > 0 && !input.no_special_scores {
        let mut left = String::with_capacity(12);
        pad_num(&mut left, nbonus, 1);
        left.push_str(if nbonus > 1 { " specials" } else { " special" });
        let specials: ArrayVec<Tile, 8> = hand.bonus.iter().copied().filter(|t| !t.is_animal()).take(8).collect();
        tally.points(Label::Tiles(&left, &specials), 4 * nbonus, "flowers and seasons");
    }

    if let Some(w) = &input.win {
        if w.whence == Whence::Wall {
            tally.points(Label::Tiles("extra", &[w.tile]), 2, "winning from wall");
        }
        // Fishing the eyes: the single pair is of the winning tile, claimed
        // from the discard or completed by the player's own draw.
        if shape.eyes == Some(w.tile)
            && shape.pairs == 1
            && (shape.claimed_pair || matches!(w.whence, Whence::Wall | Whence::Loose))
        {
            let value = if w.tile.is_major() { 4 } else { 2 };
            tally.points(Label::Tiles("extra", &[w.tile]), value, "fishing the eyes");
        }
        if shape.pairs == 1
            && let Some(before) = w.before_winning_tile
        {
            // A face whose four copies are all on the table cannot be waited
            // on, unless it is the very tile taken.
            let ways = before.waits(opts.seven_pairs).filter(|&t| !(w.exposed[t.index()] == 4 && t != w.tile)).count();
            if ways <= 1 {
                tally.points(Label::Tiles("extra", &[w.tile]), 2, "filling the only place");
            }
        }
    }
}

/// The doubles of sets of dragons and of one's own or the prevailing wind,
/// set by set.
pub(super) fn set_doubles(tally: &mut Tally, input: &ScoringInput<'_>) {
    for set in &input.hand.sets {
        if set.kind.tile_count() >= 3 {
            let t = set.tile;
            if t.is_dragon() {
                tally.double(Label::Set(set), 1, "pung/kong of dragons");
            }
            if t.is_wind() && t.wind_of() == Some(input.seat) {
                tally.double(Label::Set(set), 1, "pung/kong of own wind");
            }
            if t.is_wind() && t.wind_of() == Some(input.prevailing) {
                tally.double(Label::Set(set), 1, "pung/kong of prevailing wind");
            }
        }
    }
}

/// One's own flower and season, all four of either, and the animals.
pub(super) fn bonus_tiles(tally: &mut Tally, input: &ScoringInput<'_>) {
    let opts = input.options;
    let hand = input.hand;
    if !input.no_special_scores {
        let own_flower = hand.bonus.contains(&Tile::flower(input.seat));
        let own_season = hand.bonus.contains(&Tile::season(input.seat));
        let flowers = hand.bonus.iter().filter(|t| t.suit() == Suit::Flowers).count();
        let seasons = hand.bonus.iter().filter(|t| t.suit() == Suit::Seasons).count();
        let (flower, season) = (Tile::flower(input.seat), Tile::season(input.seat));
        if own_flower {
            tally.score(Label::Tiles("", &[flower]), opts.flowers_own_each, "own flower");
        }
        if own_season {
            tally.score(Label::Tiles("", &[season]), opts.flowers_own_each, "own season");
        }
        if own_flower && own_season {
            tally.score(Label::Tiles("", &[flower, season]), opts.flowers_own_both, "own flower and season");
        }
        if flowers == 4 {
            tally.score(Label::Text(""), opts.flowers_bouquet, "all four flowers");
        }
        if seasons == 4 {
            tally.score(Label::Text(""), opts.flowers_bouquet, "all four seasons");
        }
    }
    // Animals are not "special scores": `--no-special-scores` leaves them be.
    for (animal, reason) in Tile::animals().zip(ANIMAL_ITEMS).filter(|(t, _)| hand.bonus.contains(t)) {
        tally.score(Label::Tiles("", &[animal]), opts.animal_score, reason);
    }
}

/// The doubles of the hand as a whole: its dragons and winds, concealed
/// pungs, no chows or no score, its purity, its concealment, and how it was
/// won. Adds to `danger` what the hand realises (letting off a cannon).
pub(super) fn hand_doubles(tally: &mut Tally, input: &ScoringInput<'_>, shape: &Shape, danger: &mut Danger) {
    let opts = input.options;
    let winner = input.win.is_some();
    let purity = &shape.purity;
    if shape.dragon_sets == 3 {
        tally.double(Label::Text(""), 2, "Big Three Dragons");
        danger.insert(Danger::DRAGONS);
    } else if shape.dragon_sets == 2 && shape.dragon_pairs > 0 {
        tally.double(Label::Text(""), 1, "Little Three Dragons");
        danger.insert(Danger::DRAGONS);
    }
    if shape.wind_sets == 4 {
        tally.double(Label::Text(""), 2, "Big Four Joys");
        danger.insert(Danger::WINDS);
    } else if shape.wind_sets == 3 && shape.wind_pairs > 0 {
        tally.double(Label::Text(""), 1, "Little Four Joys");
        danger.insert(Danger::WINDS);
    }
    if shape.concealed_pungs_kongs >= 3 {
        tally.double(Label::Text(""), 1, "three concealed pungs");
    }
    if winner {
        if shape.chows == 0 && shape.pairs == 1 {
            tally.double(Label::Text(""), 1, "no chows");
        }
        if shape.no_score {
            tally.double(Label::Text(""), 1, "no score hand");
        }
    }
    let purity_scores = winner || opts.losers_purity;
    if purity_scores {
        if purity.honours {
            tally.double(Label::Text(""), 2, "all honours");
            danger.insert(Danger::HONOURS);
        } else if purity.terminals {
            tally.double(Label::Text(""), 2, "all terminals");
            danger.insert(Danger::TERMINALS);
        }
        if purity.majors {
            tally.double(Label::Text(""), 1, "all majors");
        }
    }
    if let Some(w) = &input.win {
        if shape.concealed(input) {
            tally.score(Label::Text(""), opts.concealed_fully, "concealed hand");
        } else {
            let concealed_before = w.before_winning_tile.is_some_and(|b| {
                b.sets
                    .iter()
                    .all(|s| !matches!(s.kind, SetKind::Chow | SetKind::Pung | SetKind::Kong { .. } | SetKind::Pair))
            });
            if concealed_before {
                tally.score(Label::Text(""), opts.concealed_almost, "almost concealed hand");
            }
        }
    } else if shape.all_closed && opts.losers_purity {
        tally.score(Label::Text(""), opts.concealed_almost, "almost concealed hand");
    }
    if purity_scores {
        if let Some(suit) = purity.one_suit() {
            tally.double(Label::Text(""), 3, "one suit only");
            danger.insert(Danger::of_suit(suit));
        } else if !purity.honours && purity.one_suit_with_honours() {
            tally.double(Label::Text(""), 1, "one suit with honours");
        }
    }
    if let Some(w) = &input.win {
        if w.whence == Whence::Loose {
            tally.double(Label::Text(""), 1, "winning with loose tile");
        }
        if w.live_exhausted {
            tally.double(Label::Text(""), 1, "winning with last tile");
        }
        if w.whence == Whence::RobbedKong {
            tally.double(Label::Text(""), 1, "robbing a kong");
        }
        if input.hand.original_call {
            tally.double(Label::Text(""), 1, "completing Original Call");
        }
    }
}
