//! Scoring a hand: points for sets and bonuses, then doubles, then the limit,
//! with a breakdown of one line per item in the same text as mj-server's
//! `HandScore` message (seed 004, "Method of Scoring").
//!
//! Every item, its order and its wording follow the reference, because the
//! breakdown is shown to players and compared with the reference's games.

use std::borrow::Cow;

use arrayvec::ArrayVec;
use serde::{Deserialize, Serialize};

use super::danger::Danger;
use super::options::{GameOptions, ScoreValue};
use super::player_hand::PlayerHand;
use super::tile::{Suit, Tile, Wind};
use super::tileset::{SetKind, TileSet};

/// The reference's hard cap on any score, against arithmetic overflow.
const HARD_CAP: i64 = 100_000_000;

/// Where the tile that completed a hand (or the last tile a player obtained)
/// came from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Whence {
    /// Nothing yet.
    #[default]
    Nowhere,
    /// Drawn from the live wall.
    Wall,
    /// Claimed from a discard.
    Discard,
    /// A loose tile from the dead wall.
    Loose,
    /// Taken by robbing a kong.
    RobbedKong,
}

/// Everything scoring needs to know about one player's hand.
#[derive(Clone, Copy, Debug)]
pub struct ScoringInput<'a> {
    /// The game options.
    pub options: &'a GameOptions,
    /// The player's hand as declared.
    pub hand: &'a PlayerHand,
    /// The player's seat wind.
    pub seat: Wind,
    /// The prevailing wind.
    pub prevailing: Wind,
    /// Suppress points and doubles for flowers and seasons (mj-server's
    /// `--no-special-scores`).
    pub no_special_scores: bool,
    /// Present for the player who went Mah-Jong.
    pub win: Option<WinContext<'a>>,
}

/// What only matters for the winner.
#[derive(Clone, Copy, Debug)]
pub struct WinContext<'a> {
    /// Where the winning tile came from.
    pub whence: Whence,
    /// The winning tile.
    pub tile: Tile,
    /// How many of each face are visible on the table (discards, exposed
    /// sets, concealed kongs, bonus tiles).
    pub exposed: &'a [u8],
    /// No live tile is left.
    pub live_exhausted: bool,
    /// The live wall was drawn exactly to its end.
    pub live_exactly_exhausted: bool,
    /// The winner's hand just before obtaining the winning tile, if known.
    pub before_winning_tile: Option<&'a PlayerHand>,
    /// Nobody but East has discarded yet (for Earth's Blessing).
    pub only_east_discarded: bool,
    /// East's wins in an unbroken run before this hand.
    pub east_wins_before: u32,
    /// Kong upon kong was made this turn.
    pub kong_upon_kong: bool,
}

/// One item of a hand's score: a line of the breakdown as data. It names
/// what scores (in the breakdown's words), what it is worth, and the set or
/// tiles it comes from (none for what the whole hand is, such as "no chows").
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ScoreItem {
    /// What scores: "closed pung of majors", "no chows", "Heaven's Blessing"...
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub name: Cow<'static, str>,
    /// The points it adds (before doubling).
    pub points: i64,
    /// The doubles it adds.
    pub doubles: i64,
    /// For a limit item, its share of the limit in percent (100: a whole limit).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub limit_percent: i64,
    /// The declared set it comes from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set: Option<TileSet>,
    /// The tiles it comes from, when not a set (bonus tiles, the winning tile).
    #[serde(default, skip_serializing_if = "ArrayVec::is_empty")]
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<Tile>, max_items = 8))]
    pub tiles: ArrayVec<Tile, 8>,
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

/// A scored hand: the score, its breakdown as the reference's text, and the
/// same breakdown itemised.
///
/// The text is kept as one string (lines separated by `\n`), exactly the
/// text of the reference's `HandScore` message; it serialises as a list of
/// lines.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "HandScoreLines", from = "HandScoreLines")]
pub struct HandScore {
    /// The hand's score.
    pub score: i64,
    text: String,
    /// For the winner: the dangers the hand realises (for letting off a cannon).
    pub realised_danger: Danger,
    /// The doubles counted before doubling: the breakdown's `total dbls`
    /// (what `MinimumDoubles` asks of a winning hand). An `i32` keeps the
    /// score as small as it was: views copy scores around.
    pub doubles: i32,
    /// The hand scores a whole limit or more from limit items (one of the
    /// limit hands, or a score option worth a limit): such a hand may always
    /// go out, whatever the restrictions on going out.
    pub limit_hand: bool,
    /// The basic points after any rounding, before doubling (the
    /// breakdown's `total pts`, or `rounded pts`).
    pub points: i64,
    /// Every item that counted, in the breakdown's order (points, then
    /// doubles, then limits; in a limited game a limit hand shows only its
    /// limit items, as the text does).
    pub items: Vec<ScoreItem>,
}

impl HandScore {
    /// The breakdown as one text, as in the reference's `HandScore` message.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The breakdown, one line per item, ending with `SCORE:`.
    pub fn lines(&self) -> impl Iterator<Item = &str> {
        self.text.split('\n')
    }
}

/// A scored hand: its score, the breakdown as the reference's text, and the
/// same breakdown itemised. (The serialised form of a [`HandScore`]; its doc
/// comments describe the score in the API's schema.)
#[derive(Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
struct HandScoreLines {
    /// The hand's score.
    score: i64,
    /// The breakdown, one line per item, ending with `SCORE:` (the text of
    /// the reference's `HandScore` message).
    lines: Vec<String>,
    /// The doubles counted before doubling (the breakdown's `total dbls`).
    #[serde(default)]
    doubles: i32,
    /// The hand scores a whole limit or more from limit items.
    #[serde(default)]
    limit_hand: bool,
    /// The basic points after any rounding, before doubling.
    // Not in games stored before scores were itemised.
    #[serde(default)]
    points: i64,
    /// Every item that counted, in the breakdown's order.
    #[serde(default)]
    items: Vec<ScoreItem>,
}

/// A hand's score is described by the form it is written in.
#[cfg(feature = "openapi")]
impl utoipa::PartialSchema for HandScore {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        <HandScoreLines as utoipa::PartialSchema>::schema()
    }
}

#[cfg(feature = "openapi")]
impl utoipa::ToSchema for HandScore {
    fn schemas(schemas: &mut Vec<(String, utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>)>) {
        <HandScoreLines as utoipa::ToSchema>::schemas(schemas);
    }
}

impl From<HandScore> for HandScoreLines {
    fn from(h: HandScore) -> Self {
        HandScoreLines {
            score: h.score,
            lines: h.lines().map(str::to_string).collect(),
            doubles: h.doubles,
            limit_hand: h.limit_hand,
            points: h.points,
            items: h.items,
        }
    }
}

impl From<HandScoreLines> for HandScore {
    fn from(h: HandScoreLines) -> Self {
        HandScore {
            score: h.score,
            text: h.lines.join("\n"),
            realised_danger: Danger::NONE,
            doubles: h.doubles,
            limit_hand: h.limit_hand,
            points: h.points,
            items: h.items,
        }
    }
}

/// Appends `s` padded with spaces on the right to `width` (C's `%-Ns`).
fn pad_right(buf: &mut String, s: &str, width: usize) {
    buf.push_str(s);
    for _ in s.len()..width {
        buf.push(' ');
    }
}

/// Appends `n` padded with spaces on the left to `width` (C's `%Nd`).
fn pad_num(buf: &mut String, n: i64, width: usize) {
    let mut digits = [0u8; 24];
    let mut i = digits.len();
    let mut v = n.unsigned_abs();
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    if n < 0 {
        i -= 1;
        digits[i] = b'-';
    }
    let len = digits.len() - i;
    for _ in len..width {
        buf.push(' ');
    }
    // The digits are ASCII.
    buf.push_str(std::str::from_utf8(&digits[i..]).unwrap_or_default());
}

/// Appends a set as the reference prints it (see [`TileSet`]'s `Display`).
fn push_set(buf: &mut String, set: &TileSet) {
    use std::fmt::Write;
    let _ = write!(buf, "{set}");
}

/// Formats a number of hundredths of a limit as C's `%4g` of `c/100` would.
fn limit_fraction(centi: i64) -> String {
    let whole = centi / 100;
    let frac = centi % 100;
    let s = if frac == 0 {
        whole.to_string()
    } else {
        let f = format!("{:02}", frac);
        format!("{whole}.{}", f.trim_end_matches('0'))
    };
    format!("{s:>4}")
}

/// Accumulates points, doubles and limits as the reference's `doscore` does,
/// writing the breakdown lines as it goes.
struct Tally {
    limit: i64,
    no_limit: bool,
    points: i64,
    doubles: i64,
    centi_limits: i64,
    point_lines: String,
    double_lines: String,
    limit_lines: String,
    items: Vec<ScoreItem>,
}

/// A left-hand label: text, or a set printed in the reference's notation;
/// text may name the tiles the item comes from.
#[derive(Clone, Copy)]
enum Label<'a> {
    Text(&'a str),
    Set(&'a TileSet),
    Tiles(&'a str, &'a [Tile]),
}

impl Label<'_> {
    fn write(self, buf: &mut String, width: usize) {
        let start = buf.len();
        match self {
            Label::Text(t) | Label::Tiles(t, _) => buf.push_str(t),
            Label::Set(s) => push_set(buf, s),
        }
        for _ in buf.len() - start..width {
            buf.push(' ');
        }
    }
}

fn end_line(buf: &mut String, reason: &str) {
    buf.push_str(" (");
    buf.push_str(reason);
    buf.push_str(")\n");
}

impl Tally {
    fn score(&mut self, left: Label<'_>, value: ScoreValue, reason: &'static str) {
        let (pts, dbls, clims) = (value.points_part(), value.doubles_part(), value.centi_limits());
        let use_parts = clims == 0 || self.no_limit;
        let use_limit = clims != 0 && !(self.no_limit && (pts != 0 || dbls != 0));
        let item = ScoreItem {
            name: Cow::Borrowed(reason),
            points: if use_parts { pts } else { 0 },
            doubles: if use_parts { dbls } else { 0 },
            limit_percent: if use_limit { clims } else { 0 },
            set: match left {
                Label::Set(s) => Some(*s),
                _ => None,
            },
            tiles: match left {
                Label::Tiles(_, tiles) => tiles.iter().copied().take(8).collect(),
                _ => ArrayVec::new(),
            },
        };
        if item.points != 0 || item.doubles != 0 || item.limit_percent != 0 {
            self.items.push(item);
        }
        if use_parts && pts != 0 {
            self.points += pts;
            left.write(&mut self.point_lines, 12);
            self.point_lines.push(' ');
            pad_num(&mut self.point_lines, pts, 2);
            end_line(&mut self.point_lines, reason);
        }
        if use_parts && dbls != 0 {
            self.doubles += dbls;
            left.write(&mut self.double_lines, 12);
            self.double_lines.push_str("  ");
            pad_num(&mut self.double_lines, dbls, 1);
            self.double_lines.push_str(" dbl");
            end_line(&mut self.double_lines, reason);
        }
        if use_limit {
            self.centi_limits = self.centi_limits.max(clims);
            if clims == 100 {
                pad_right(&mut self.limit_lines, "Limit Hand", 10);
                self.limit_lines.push(' ');
                pad_num(&mut self.limit_lines, self.limit, 4);
            } else {
                self.limit_lines.push_str(&limit_fraction(clims));
                self.limit_lines.push_str(" Limit ");
                pad_num(&mut self.limit_lines, clims * self.limit / 100, 4);
            }
            end_line(&mut self.limit_lines, reason);
        }
    }

    fn points(&mut self, left: Label<'_>, n: i64, reason: &'static str) {
        self.score(left, ScoreValue::points(n), reason);
    }

    fn double(&mut self, left: Label<'_>, n: i64, reason: &'static str) {
        self.score(left, ScoreValue::doubles(n), reason);
    }

    fn limit_hand(&mut self, reason: &'static str) {
        self.score(Label::Text(""), ScoreValue::LIMIT, reason);
    }
}

/// The points of one declared set, with the reference's description.
fn set_points(set: &TileSet, kong_has_3_types: bool, own: Wind, prevailing: Wind) -> (i64, &'static str) {
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

/// Which "all of a kind" properties a hand has, tracked over its sets and
/// concealed tiles as the reference does (scoring, and the dangerous hands
/// of letting off a cannon).
pub(crate) struct Purity {
    pub(crate) honours: bool,
    pub(crate) terminals: bool,
    majors: bool,
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
    fn tile(&mut self, t: Tile, green: bool) {
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

    fn one_suit_with_honours(&self) -> bool {
        self.suit_with_honours.iter().any(|&b| b)
    }
}

/// The score items of the animals, in the order of `Tile::animals`.
const ANIMAL_ITEMS: [&str; 4] = ["animal Cat", "animal Mouse", "animal Cockerel", "animal Centipede"];

/// Scores one player's hand.
pub fn score_hand(input: &ScoringInput<'_>) -> HandScore {
    let opts = input.options;
    let hand = input.hand;
    let win = input.win.as_ref();
    let winner = win.is_some();
    let limit = opts.score_limit as i64;
    let mut tally = Tally {
        limit,
        no_limit: opts.no_limit,
        points: 0,
        doubles: 0,
        centi_limits: 0,
        point_lines: String::with_capacity(256),
        double_lines: String::with_capacity(128),
        limit_lines: String::new(),
        items: Vec::with_capacity(12),
    };
    let mut danger = Danger::NONE;

    if winner {
        tally.score(Label::Text("basic"), opts.mah_jong_score, "going Mah Jong");
        danger.insert(Danger::END);
    }

    let (mut chows, mut pairs, mut pungs, mut kongs, mut concealed_pungs_kongs) = (0, 0, 0, 0, 0);
    let (mut dragon_sets, mut wind_sets, mut dragon_pairs, mut wind_pairs) = (0, 0, 0, 0);
    let mut all_closed = true;
    let mut no_score = true;
    let mut claimed_pair = false;
    let mut eyes: Option<Tile> = None;
    let mut purity = Purity::new();

    for set in &hand.sets {
        let (pts, why) = set_points(set, opts.kong_has_3_types, input.seat, input.prevailing);
        if pts != 0 {
            no_score = false;
            tally.points(Label::Set(set), pts, why);
        }
        match set.kind {
            SetKind::Chow => {
                chows += 1;
                all_closed = false;
            }
            SetKind::ClosedChow => chows += 1,
            SetKind::Pung => {
                all_closed = false;
                pungs += 1;
            }
            SetKind::ClosedPung => {
                pungs += 1;
                concealed_pungs_kongs += 1;
            }
            SetKind::Kong { annexed } => {
                kongs += 1;
                // Millington: a claimed kong counts as concealed for doubling.
                if opts.kong_has_3_types && !annexed {
                    concealed_pungs_kongs += 1;
                } else {
                    all_closed = false;
                }
            }
            SetKind::ClosedKong => {
                kongs += 1;
                concealed_pungs_kongs += 1;
            }
            SetKind::Pair => {
                pairs += 1;
                all_closed = false;
                claimed_pair = true;
                eyes = Some(set.tile);
            }
            SetKind::ClosedPair => {
                pairs += 1;
                eyes = Some(set.tile);
            }
        }
        if set.kind.tile_count() >= 3 {
            dragon_sets += set.tile.is_dragon() as i64;
            wind_sets += set.tile.is_wind() as i64;
        } else {
            dragon_pairs += set.tile.is_dragon() as i64;
            wind_pairs += set.tile.is_wind() as i64;
        }
        purity.set(set);
    }
    // The concealed tiles count too: for losers under LosersPurity, and for
    // special hands whose tiles stay concealed.
    for &t in &hand.concealed {
        purity.tile(t, t.is_green());
    }

    if pairs == 7 {
        tally.score(Label::Text("basic points"), opts.seven_pairs_val, "seven pairs");
        no_score = false;
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

    if let Some(w) = win {
        if w.whence == Whence::Wall {
            tally.points(Label::Tiles("extra", &[w.tile]), 2, "winning from wall");
        }
        // Fishing the eyes: the single pair is of the winning tile, claimed
        // from the discard or completed by the player's own draw.
        if eyes == Some(w.tile) && pairs == 1 && (claimed_pair || matches!(w.whence, Whence::Wall | Whence::Loose)) {
            let value = if w.tile.is_major() { 4 } else { 2 };
            tally.points(Label::Tiles("extra", &[w.tile]), value, "fishing the eyes");
        }
        if pairs == 1
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

    for set in &hand.sets {
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

    if dragon_sets == 3 {
        tally.double(Label::Text(""), 2, "Big Three Dragons");
        danger.insert(Danger::DRAGONS);
    } else if dragon_sets == 2 && dragon_pairs > 0 {
        tally.double(Label::Text(""), 1, "Little Three Dragons");
        danger.insert(Danger::DRAGONS);
    }
    if wind_sets == 4 {
        tally.double(Label::Text(""), 2, "Big Four Joys");
        danger.insert(Danger::WINDS);
    } else if wind_sets == 3 && wind_pairs > 0 {
        tally.double(Label::Text(""), 1, "Little Four Joys");
        danger.insert(Danger::WINDS);
    }
    if concealed_pungs_kongs >= 3 {
        tally.double(Label::Text(""), 1, "three concealed pungs");
    }
    if winner {
        if chows == 0 && pairs == 1 {
            tally.double(Label::Text(""), 1, "no chows");
        }
        if no_score {
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
    if let Some(w) = win {
        // A special set may have been made with a claimed discard.
        if w.whence == Whence::Discard {
            all_closed = false;
        }
        if all_closed {
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
    } else if all_closed && opts.losers_purity {
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
    if let Some(w) = win {
        if w.whence == Whence::Loose {
            tally.double(Label::Text(""), 1, "winning with loose tile");
        }
        if w.live_exhausted {
            tally.double(Label::Text(""), 1, "winning with last tile");
        }
        if w.whence == Whence::RobbedKong {
            tally.double(Label::Text(""), 1, "robbing a kong");
        }
        if hand.original_call {
            tally.double(Label::Text(""), 1, "completing Original Call");
        }
    }

    if let Some(w) = win {
        let east = input.seat == Wind::East;
        if east && hand.no_discard {
            tally.limit_hand("Heaven's Blessing");
        }
        if !east && hand.no_discard && w.whence == Whence::Discard && w.only_east_discarded {
            tally.limit_hand("Earth's Blessing");
        }
        let five_circles = Tile::numbered(Suit::Circles, 5);
        if w.whence == Whence::Loose && Some(w.tile) == five_circles {
            tally.limit_hand("Gathering Plum Blossom from the Roof");
        }
        if Some(w.tile) == Tile::numbered(Suit::Circles, 1) && w.live_exactly_exhausted && w.whence == Whence::Wall {
            tally.limit_hand("Catching the Moon from the Bottom of the Sea");
        }
        if w.whence == Whence::RobbedKong && Some(w.tile) == Tile::numbered(Suit::Bamboo, 2) {
            tally.limit_hand("Scratching a Carrying Pole");
        }
        if w.kong_upon_kong {
            tally.limit_hand("Kong upon Kong");
        }
        if kongs == 4 {
            tally.limit_hand("Fourfold Plenty");
        }
        if all_closed && pungs + kongs == 4 {
            tally.limit_hand("Buried Treasure");
        }
        if hand.can_thirteen_wonders(None) {
            tally.limit_hand("Thirteen Unique Wonders");
        }
        if dragon_sets == 3 && chows == 0 {
            tally.limit_hand("Three Great Scholars");
        }
        if wind_sets == 4 {
            tally.limit_hand("Four Blessing o'er the Door");
        }
        if purity.honours {
            tally.limit_hand("All Honours");
        }
        if purity.terminals {
            tally.limit_hand("Heads and Tails");
        }
        if all_closed && purity.one_suit().is_some() {
            tally.limit_hand("Concealed Clear Suit");
        }
        if east && w.east_wins_before == 12 {
            tally.limit_hand("East's 13th consecutive win");
        }
        if purity.green {
            tally.limit_hand("Imperial Jade");
            danger.insert(Danger::GREEN);
        }
        if purity.one_suit().is_some() {
            if nine_gates(w) {
                tally.limit_hand("Nine Gates");
            }
            if wriggling_snake(hand) {
                tally.limit_hand("Wriggling Snake");
            }
        }
    }

    let mut text = tally.point_lines;
    pad_right(&mut text, "total pts", 11);
    text.push(' ');
    pad_num(&mut text, tally.points, 3);
    text.push('\n');
    let points = rounded_points(opts, tally.points);
    if points != tally.points {
        pad_right(&mut text, "rounded pts", 11);
        text.push(' ');
        pad_num(&mut text, points, 3);
        text.push('\n');
    }
    text.push_str(&tally.double_lines);
    pad_right(&mut text, "total dbls", 12);
    text.push(' ');
    pad_num(&mut text, tally.doubles, 2);
    text.push('\n');
    let mut score = doubled(points, tally.doubles);
    if !opts.no_limit && score > limit {
        pad_right(&mut text, "score:", 9);
        text.push(' ');
        pad_num(&mut text, score, 5);
        text.push_str(" (over limit)\n");
        score = limit;
    }
    text.push_str(&tally.limit_lines);
    let mut items = tally.items;
    if tally.centi_limits > 0 {
        let limit_score = tally.centi_limits * limit / 100;
        if opts.no_limit {
            score = score.max(limit_score);
        } else {
            score = limit_score;
            // In a limited game a limit hand's other items are irrelevant.
            text = tally.limit_lines;
            items.retain(|i| i.limit_percent != 0);
        }
    }
    // Seed 003: an animal left in the hand when anyone goes out scores 0,
    // whatever else the hand holds (a complete hand has no room for one).
    let kept: Vec<&str> =
        Tile::animals().filter(|t| hand.concealed.contains(t)).filter_map(Tile::animal_name).collect();
    if !kept.is_empty() {
        score = 0;
        pad_right(&mut text, "penalty", 9);
        text.push(' ');
        pad_num(&mut text, 0, 5);
        text.push_str(if kept.len() > 1 { " (animals left in hand: " } else { " (animal left in hand: " });
        text.push_str(&kept.join(", "));
        text.push_str(")\n");
        items.push(ScoreItem {
            name: Cow::Borrowed("penalty: animals left in hand score nothing"),
            points: 0,
            doubles: 0,
            limit_percent: 0,
            set: None,
            tiles: Tile::animals().filter(|t| hand.concealed.contains(t)).collect(),
        });
    }
    pad_right(&mut text, "SCORE:", 9);
    text.push(' ');
    pad_num(&mut text, score, 5);
    let doubles = tally.doubles.clamp(i32::MIN.into(), i32::MAX.into()) as i32;
    HandScore { score, text, realised_danger: danger, doubles, limit_hand: tally.centi_limits >= 100, points, items }
}

/// A hand's basic points after `RoundBeforeDoubles` (to ten, seeds 000 and 003).
pub fn rounded_points(options: &GameOptions, points: i64) -> i64 {
    super::options::round_to(points, 10, options.round_before_doubles, options.round_six_up)
}

/// `points` doubled `doubles` times, capped at mj-server's hard limit on any score.
pub fn doubled(points: i64, doubles: i64) -> i64 {
    let mut score = points.min(HARD_CAP);
    for _ in 0..doubles {
        score = (score * 2).min(HARD_CAP);
    }
    score
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions_print_like_c() {
        assert_eq!(limit_fraction(50), " 0.5");
        assert_eq!(limit_fraction(25), "0.25");
        assert_eq!(limit_fraction(150), " 1.5");
        assert_eq!(limit_fraction(200), "   2");
    }

    #[test]
    fn padding_is_c_like() {
        let mut b = String::new();
        pad_num(&mut b, 7, 3);
        pad_num(&mut b, -12, 4);
        pad_num(&mut b, 123456, 2);
        pad_right(&mut b, "ab", 4);
        pad_right(&mut b, "abcdef", 2);
        assert_eq!(b, "  7 -12123456ab  abcdef");
    }
}
