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
use super::options::GameOptions;
use super::player_hand::PlayerHand;
use super::tile::{Tile, Wind};
use super::tileset::TileSet;

mod elements;
mod limit_hands;
mod tally;

use self::elements::Shape;
use self::limit_hands::{LIMIT_HANDS, Winning};
use self::tally::{Tally, pad_num, pad_right};

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

/// Scores one player's hand: the points, the doubles, the limit hands, in
/// the reference's order (its lines are compared with its games'), then the
/// total.
pub fn score_hand(input: &ScoringInput<'_>) -> HandScore {
    let mut tally = Tally::new(input.options);
    let mut danger = Danger::NONE;
    if input.win.is_some() {
        danger.insert(Danger::END);
    }
    let shape = Shape::of(input);
    elements::points(&mut tally, input, &shape);
    elements::set_doubles(&mut tally, input);
    elements::bonus_tiles(&mut tally, input);
    elements::hand_doubles(&mut tally, input, &shape, &mut danger);
    if let Some(win) = &input.win {
        let winning = Winning { input, win, shape: &shape, concealed: shape.concealed(input) };
        for limit_hand in LIMIT_HANDS.iter().filter(|l| (l.is)(&winning)) {
            tally.limit_hand(limit_hand.name);
            danger.insert(limit_hand.realises);
        }
    }
    total(tally, input, danger)
}

/// The breakdown's totals and the score: points rounded, doubled, held to
/// the limit; a limit hand's limit; and seed 003's penalty for an animal
/// left in the hand.
fn total(tally: Tally, input: &ScoringInput<'_>, danger: Danger) -> HandScore {
    let opts = input.options;
    let hand = input.hand;
    let limit = tally.limit;
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
