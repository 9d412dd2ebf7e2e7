//! The scoring calculator: scores a hand described by a person playing with
//! real tiles (its sets, concealed tiles, bonus tiles, winds and how it went
//! out) under any preset and options, without playing, with the engine's own
//! [`scoring::score_hand`], so that the calculator and the game cannot
//! disagree. `POST /api/v1/score` serves it.
//!
//! The described hand is put together as the engine would hold it at the end
//! of a hand: the sets declared in play (exposed sets and concealed kongs)
//! first, then for a winner the set made with the discard it went out on,
//! then the sets formed from the concealed tiles after Mah-Jong. A winner's
//! concealed tiles are arranged with the engine's own arrangement code
//! ([`arrangement::completions`], [`arrangement::place_discard`]): every way
//! of completing the hand is scored and the best is kept, among the ways the
//! restrictions on going out (`MinimumDoubles`, `OneChowOneSuit`) allow, as
//! the engine judges them. A loser's scoring sets (concealed pungs and pairs)
//! are found the same way, by scoring every way of forming them. Either may
//! instead be given set by set.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::arrangement::{self, Completion, DISCARD_USES, GoingOut, Part, Shape};
use super::calculator::{CalcError, field, request_options};
use super::command::DiscardUse;
use super::options::GameOptions;
use super::player_hand::{MAX_BONUS, MAX_SETS, PlayerHand};
use super::preset_book::PresetBook;
use super::scoring::{self, HandScore, ScoringInput, Whence, WinContext};
use super::tile::{ALL_KINDS, NORMAL_KINDS, Tile, TileCounts, Wind};
use super::tileset::{ChowPosition, SetKind, TileSet};

/// The scoring calculator's input: one player's hand, as it lies on the
/// table once somebody has gone Mah-Jong.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ScoreRequest {
    /// A rule preset (default `chinese-classical`).
    #[serde(default)]
    pub preset: Option<String>,
    /// Options set over the preset, by catalogue name; booleans as
    /// true/false (or 0/1), numbers as numbers, words as strings.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = HashMap<String, crate::rules::options::OptionValue>))]
    pub options: serde_json::Map<String, Value>,
    /// Flowers and seasons score nothing (mj-server's `--no-special-scores`).
    #[serde(default)]
    pub no_special_scores: bool,
    /// The player's seat wind.
    pub seat_wind: Wind,
    /// The prevailing wind (default `East`).
    #[serde(default = "east")]
    pub prevailing_wind: Wind,
    /// The player's sets: those declared in play (`chow`, `pung`, a `kong`,
    /// `closed_kong`), and any formed from the concealed tiles after Mah-Jong
    /// (`closed_chow`, `closed_pung`, `closed_pair`). Each group is kept in
    /// the order given, the sets of play first. A winner's set made with the
    /// discard it went out on is not listed: its tiles are concealed tiles.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(max_items = 7))]
    pub sets: Vec<TileSet>,
    /// The tiles in no set: for a winner, the winning tile included.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(max_items = 14))]
    pub concealed: Vec<Tile>,
    /// The flowers, seasons and animals the player has set aside.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(max_items = 12))]
    pub bonus: Vec<Tile>,
    /// Every other tile face up on the table: the discards lying there, the
    /// other players' exposed sets (a robbed kong's pung among them),
    /// concealed kongs and bonus tiles; not the winning discard, which is in
    /// the hand. Only "filling the only place" looks at them: a face whose
    /// four tiles are all in sight cannot be waited on.
    #[serde(default)]
    pub visible: Vec<Tile>,
    /// How the player went out; absent (or `null`) for a losing hand.
    #[serde(default)]
    pub win: Option<WinRequest>,
    /// How the concealed tiles not in a listed set are formed into sets:
    /// `best` (the default) scores every way the engine allows and keeps the
    /// best; `given` forms none (a winner must then list every set and, on a
    /// discard, say how the discard was used).
    #[serde(default)]
    pub arrange: Arrange,
    /// Which of the dealer's extra hands this is (0: none): from the 5th,
    /// `RaiseMinimumOn5thExtra` raises `MinimumDoubles` by one.
    #[serde(default)]
    pub extra_hands: u32,
}

fn east() -> Wind {
    Wind::East
}

/// How a winning hand went out.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct WinRequest {
    /// The tile that completed the hand.
    pub tile: Tile,
    /// Where it came from.
    pub from: WinFrom,
    /// For a discard or a robbed kong: how the winner used the tile (a
    /// [discard use](DiscardUse): `{"chow": POSITION}`, `{"chow": null}` for
    /// any position, `"pung"`, `"pair"`, `"special_set"`); by default the
    /// best-scoring way.
    #[serde(default)]
    pub used_as: Option<DiscardUse>,
    /// No live tile was left: the winning tile was the last of the live wall,
    /// or the discard after it ("winning with last tile").
    #[serde(default)]
    pub last_tile: bool,
    /// The loose tile came after a kong made with the loose tile of another
    /// kong ("Kong upon Kong").
    #[serde(default)]
    pub kong_upon_kong: bool,
    /// The player's first discard declared a calling hand ("completing
    /// Original Call").
    #[serde(default)]
    pub original_call: bool,
    /// The player had made no discard yet (East: Heaven's Blessing).
    #[serde(default)]
    pub no_discard: bool,
    /// Nobody but East had discarded yet (with `no_discard` and a discard:
    /// Earth's Blessing).
    #[serde(default)]
    pub only_east_discarded: bool,
    /// East's wins in an unbroken run before this hand (the 13th is a limit).
    #[serde(default)]
    pub east_wins_before: u32,
}

/// Where the winning tile came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum WinFrom {
    /// Drawn from the live wall.
    Wall,
    /// Claimed from a discard.
    Discard,
    /// A loose tile, drawn after a kong (or a bonus tile with `FlowersLoose`).
    Loose,
    /// Taken by robbing a kong.
    RobbedKong,
}

impl WinFrom {
    fn whence(self) -> Whence {
        match self {
            WinFrom::Wall => Whence::Wall,
            WinFrom::Discard => Whence::Discard,
            WinFrom::Loose => Whence::Loose,
            WinFrom::RobbedKong => Whence::RobbedKong,
        }
    }

    /// The tile was another player's: the winner places it in a set.
    fn claimed(self) -> bool {
        matches!(self, WinFrom::Discard | WinFrom::RobbedKong)
    }
}

/// How the concealed tiles not in a listed set are formed into sets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Arrange {
    /// Every way the engine allows is scored; the best is kept.
    #[default]
    Best,
    /// As given: no further set is formed.
    Given,
}

/// The scoring calculator's answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ScoreResponse {
    /// The hand's score, exactly as the engine scores it in play (the
    /// `score` of a `hand_scored` event).
    pub score: HandScore,
    /// The hand's sets as scored, in the order scored: the sets of play, the
    /// winner's set made with the discard, the sets formed from the
    /// concealed tiles.
    pub sets: Vec<TileSet>,
    /// The tiles left in no set: a loser's shown tiles, or the fourteen
    /// tiles of Thirteen Unique Wonders; in tile order.
    pub concealed: Vec<Tile>,
    /// The shape of a winning hand; `null` for a losing hand.
    pub shape: Option<Shape>,
    /// How many ways of arranging the hand were scored to find this one
    /// (for a winner, those that may go out; 1 when all were given).
    pub arrangements: u32,
}

/// Parses a JSON request and scores it under the built-in presets (the
/// server's REST calculator reads the request strictly first, with
/// `protocol::json`, and uses its own presets).
pub fn score_json(text: &str) -> Result<ScoreResponse, CalcError> {
    let request: ScoreRequest = serde_json::from_str(text).map_err(|e| CalcError::Json(e.to_string()))?;
    score(&request)
}

/// Scores a request under the built-in presets.
pub fn score(request: &ScoreRequest) -> Result<ScoreResponse, CalcError> {
    score_with(&PresetBook::built_in_only(), request)
}

/// Scores a request whose preset may be one of `book`'s custom presets.
pub fn score_with(book: &PresetBook, request: &ScoreRequest) -> Result<ScoreResponse, CalcError> {
    let options = request_options(book, request.preset.as_deref(), &request.options)?;
    let described = Described::check(request, &options)?;
    let rules = Rules {
        options: &options,
        seat: request.seat_wind,
        prevailing: request.prevailing_wind,
        no_special_scores: request.no_special_scores,
    };
    match &request.win {
        None => Ok(rules.loser(described, request.arrange)),
        Some(win) => rules.winner(described, win, request.arrange, options.minimum_doubles_in(request.extra_hands)),
    }
}

/// A request's hand, checked: the sets of play and the sets formed after
/// Mah-Jong apart, and the faces in sight on the table.
struct Described {
    /// The sets of play, the formed sets' tiles back among the concealed
    /// tiles (as the hand was before anything was formed), bonus tiles aside.
    hand: PlayerHand,
    /// The sets formed from the concealed tiles, in order.
    formed: Vec<Part>,
    /// How many of each face are visible on the table, as the engine counts
    /// them for the winner: every exposed set and concealed kong, bonus
    /// tiles, discards.
    exposed: [u8; ALL_KINDS],
}

impl Described {
    /// Every check of the hand's tiles; each refusal names what is wrong.
    fn check(r: &ScoreRequest, options: &GameOptions) -> Result<Described, CalcError> {
        if r.sets.len() > MAX_SETS {
            return Err(field("sets", format!("a hand has at most {MAX_SETS} sets, not {}", r.sets.len())));
        }
        for set in &r.sets {
            check_set(set)?;
        }
        if let Some(&t) = r.bonus.iter().find(|t| !t.is_bonus()) {
            return Err(field("bonus", format!("{t} is not a flower, season or animal")));
        }
        if r.bonus.len() > MAX_BONUS {
            return Err(field("bonus", format!("there are only {MAX_BONUS} bonus tiles, not {}", r.bonus.len())));
        }
        // A kong's fourth tile is over and above the hand's count.
        let held: usize = r.sets.iter().map(|s| s.kind.tile_count().min(3)).sum::<usize>() + r.concealed.len();
        let (wanted, who) = if r.win.is_some() { (14, "winning") } else { (13, "losing") };
        if held != wanted {
            return Err(field(
                "concealed",
                format!(
                    "the hand holds {held} tiles (sets and concealed tiles, a kong counted as three): a winning hand \
                     holds 14, a losing hand 13, and this is a {who} hand"
                ),
            ));
        }
        let win = r.win.as_ref();
        let robbed = win.filter(|w| w.from == WinFrom::RobbedKong).map(|w| w.tile);
        check_counts(r, options, robbed)?;

        let mut hand = PlayerHand::default();
        let mut formed = Vec::new();
        let mut exposed = [0u8; ALL_KINDS];
        let mut show = |t: Tile, n: u8| exposed[t.index()] = exposed[t.index()].saturating_add(n);
        for set in &r.sets {
            match set.kind {
                SetKind::ClosedChow => formed.push(Part::Chow(set.tile)),
                SetKind::ClosedPung => formed.push(Part::Pung(set.tile)),
                SetKind::ClosedPair => formed.push(Part::Pair(set.tile)),
                // A pair is refused by `check_set`; the rest are sets of play.
                _ => {
                    set.tiles().for_each(|t| show(t, 1));
                    hand.sets.try_push(*set).map_err(|_| field("sets", "too many sets"))?;
                }
            }
        }
        // The counts above keep every push within the hand's bounds.
        let concealed =
            r.concealed.iter().copied().chain(r.sets.iter().filter(|s| is_formed(s.kind)).flat_map(TileSet::tiles));
        for t in concealed {
            hand.draw(t).map_err(|e| field("concealed", e))?;
        }
        for &t in &r.bonus {
            hand.bonus.try_push(t).map_err(|_| field("bonus", "too many bonus tiles"))?;
            show(t, 1);
        }
        for &t in &r.visible {
            show(t, 1);
        }
        if let Some(w) = win {
            match w.from {
                // The discard, or the tile added to the pung, was in sight.
                WinFrom::Discard | WinFrom::RobbedKong => show(w.tile, 1),
                WinFrom::Wall | WinFrom::Loose => {}
            }
        }
        Ok(Described { hand, formed, exposed })
    }
}

/// A set formed from the concealed tiles after Mah-Jong.
fn is_formed(kind: SetKind) -> bool {
    matches!(kind, SetKind::ClosedChow | SetKind::ClosedPung | SetKind::ClosedPair)
}

/// A listed set must be a set of real tiles that a hand can hold.
fn check_set(set: &TileSet) -> Result<(), CalcError> {
    let t = set.tile;
    if t.is_bonus() {
        return Err(field("sets", format!("{t}: flowers, seasons and animals are set aside, never made into sets")));
    }
    if set.kind.is_chow() && !(t.is_numbered() && t.up(2).is_some()) {
        return Err(field(
            "sets",
            format!("no chow starts with {t}: a chow is named by its lowest tile, 1 to 7 of a suit"),
        ));
    }
    if set.kind == SetKind::Pair {
        return Err(field(
            "sets",
            format!(
                "an exposed pair ({set}) is made only with the discard a winner goes out on: list its tiles among \
                 the concealed tiles"
            ),
        ));
    }
    Ok(())
}

/// No face may appear more often than the game has it: the hand, its bonus
/// tiles and the tiles in sight together; and a robbed kong leaves the
/// winner only the tile robbed.
fn check_counts(r: &ScoreRequest, options: &GameOptions, robbed: Option<Tile>) -> Result<(), CalcError> {
    // Counted wide: a request may list any number of tiles.
    let mut counts = [0usize; ALL_KINDS];
    let hand = r.sets.iter().flat_map(|s| s.tiles().collect::<Vec<_>>()).chain(r.concealed.iter().copied());
    for t in hand.chain(r.bonus.iter().copied()).chain(r.visible.iter().copied()) {
        counts[t.index()] += 1;
    }
    if let Some(t) = robbed {
        // The pung the tile was added to stays on the table: the winner
        // holds the one tile robbed.
        let held = r.concealed.iter().filter(|&&c| c == t).count()
            + r.sets.iter().flat_map(|s| s.tiles().collect::<Vec<_>>()).filter(|&c| c == t).count();
        if held > 1 {
            return Err(field(
                "win",
                format!(
                    "a kong of {t} was robbed: its other three tiles are on the table, so the hand holds only the \
                     one robbed, not {held}"
                ),
            ));
        }
    }
    let full = TileCounts::full_set(options.flowers, options.animals);
    for t in Tile::all_faces() {
        let (n, most) = (counts[t.index()], usize::from(full.get(t)));
        if n <= most {
            continue;
        }
        let reason = match t {
            t if most == 0 && t.is_animal() => {
                format!("{t}: there are no animal tiles in this game (the Animals option is off)")
            }
            t if most == 0 => format!("{t}: there are no flowers or seasons in this game (the Flowers option is off)"),
            t if most == 1 => format!("there is only one {t}: the hand and the visible tiles hold {n}"),
            t => format!("there are only {most} of {t}: the hand and the visible tiles hold {n}"),
        };
        return Err(field("tiles", reason));
    }
    Ok(())
}

/// What every scoring of the request shares.
struct Rules<'a> {
    options: &'a GameOptions,
    seat: Wind,
    prevailing: Wind,
    no_special_scores: bool,
}

impl Rules<'_> {
    fn score(&self, hand: &PlayerHand, win: Option<WinContext<'_>>) -> HandScore {
        scoring::score_hand(&ScoringInput {
            options: self.options,
            hand,
            seat: self.seat,
            prevailing: self.prevailing,
            no_special_scores: self.no_special_scores,
            win,
        })
    }

    /// A losing hand: its formed sets, then (with `Arrange::Best`) the best
    /// of every way of forming concealed pungs and pairs from the rest.
    fn loser(&self, described: Described, arrange: Arrange) -> ScoreResponse {
        let mut hand = described.hand;
        for part in &described.formed {
            // The part's tiles were put among the concealed tiles, and the
            // sets are within bounds: forming it cannot fail.
            let _ = part.form(&mut hand);
        }
        let ways = match arrange {
            Arrange::Given => Vec::new(),
            Arrange::Best => loser_ways(&hand),
        };
        // The hand as formed is always a way (the first of `loser_ways`).
        let mut best = self.score(&hand, None);
        let arrangements = ways.len().max(1) as u32;
        for way in ways {
            let score = self.score(&way, None);
            if loser_better(&score, &way, &best, &hand) {
                (best, hand) = (score, way);
            }
        }
        answer(best, &hand, None, arrangements)
    }

    /// A winning hand: every way of placing the winning tile and completing
    /// the hand that may go out, scored; the best is the answer.
    fn winner(
        &self,
        described: Described,
        w: &WinRequest,
        arrange: Arrange,
        minimum_doubles: u32,
    ) -> Result<ScoreResponse, CalcError> {
        if w.kong_upon_kong
            && (w.from != WinFrom::Loose || described.hand.sets.iter().filter(|s| s.kind.is_kong()).count() < 2)
        {
            return Err(field(
                "win",
                "Kong upon Kong is won with the loose tile after a second kong: `from` is `loose` and the hand has \
                 two kongs",
            ));
        }
        if w.original_call && w.no_discard {
            return Err(field("win", "an Original Call is made with the player's first discard: no_discard cannot be"));
        }
        if w.used_as.is_some() && !w.from.claimed() {
            return Err(field(
                "win.used_as",
                "only a discard or a robbed kong's tile is placed in a set by the winner",
            ));
        }
        let t = w.tile;
        let mut before = described.hand;
        let Some(i) = before.concealed.iter().position(|&c| c == t) else {
            return Err(field(
                "win",
                format!("the winning tile {t} is neither among the concealed tiles nor in a set formed from them"),
            ));
        };
        before.concealed.remove(i);
        before.original_call = w.original_call;
        before.calling = w.original_call;
        before.no_discard = w.no_discard;
        let seven_pairs = self.options.seven_pairs;
        if !before.can_mah_jong(Some(t), seven_pairs) {
            let reason = if before.concealed.iter().any(|t| t.is_bonus()) {
                "a winning hand holds no flower, season or animal: list them under bonus".to_string()
            } else {
                format!(
                    "the hand is not complete: its tiles make neither four sets and a pair{} nor Thirteen Unique \
                     Wonders",
                    if seven_pairs { ", seven pairs" } else { "" }
                )
            };
            return Err(field("concealed", reason));
        }
        // The hand with the winning tile in it, each way it may be placed.
        let placed: Vec<PlayerHand> = if w.from.claimed() {
            let uses: Vec<DiscardUse> = match w.used_as {
                Some(DiscardUse::Chow(None)) => ChowPosition::ALL.iter().map(|&p| DiscardUse::Chow(Some(p))).collect(),
                Some(u) => vec![u],
                None => DISCARD_USES.to_vec(),
            };
            let placed: Vec<PlayerHand> =
                uses.iter().filter_map(|&u| arrangement::place_discard(&before, t, u, seven_pairs)).collect();
            if placed.is_empty() {
                return Err(field("win.used_as", format!("the hand is not complete with {t} used that way")));
            }
            placed
        } else {
            let mut h = before.clone();
            h.draw(t).map_err(|e| field("concealed", e))?;
            vec![h]
        };
        // Then the sets listed as formed from the concealed tiles.
        let formed: Vec<PlayerHand> = placed
            .into_iter()
            .filter_map(|mut h| described.formed.iter().all(|p| p.form(&mut h).is_ok()).then_some(h))
            .collect();
        let ways: Vec<Completion> = formed
            .iter()
            .flat_map(|h| arrangement::completions(h, seven_pairs))
            .filter(|c| arrange == Arrange::Best || c.parts.is_empty())
            .collect();
        if ways.is_empty() {
            let reason = match arrange {
                Arrange::Best => "the sets formed from the concealed tiles leave no complete hand".to_string(),
                Arrange::Given => "as given the hand is not complete: form every concealed tile into a set (and say \
                                   how a discard was used), or let the server arrange them (\"arrange\": \"best\")"
                    .to_string(),
            };
            return Err(field("sets", reason));
        }
        let win = WinContext {
            whence: w.from.whence(),
            tile: t,
            exposed: &described.exposed,
            live_exhausted: w.last_tile,
            live_exactly_exhausted: w.last_tile,
            before_winning_tile: Some(&before),
            only_east_discarded: w.only_east_discarded,
            east_wins_before: w.east_wins_before,
            kong_upon_kong: w.kong_upon_kong,
        };
        let judge = GoingOut {
            options: self.options,
            minimum_doubles,
            seat: self.seat,
            prevailing: self.prevailing,
            no_special_scores: self.no_special_scores,
            win,
        };
        let restricted = GoingOut::restricted(self.options, minimum_doubles);
        let allowed: Vec<&Completion> = ways.iter().filter(|c| !restricted || judge.qualifies(c)).collect();
        if allowed.is_empty() {
            // The engine's own refusal, naming the restriction in the way.
            let why = judge
                .judge(formed.iter())
                .err()
                .map_or_else(|| "no arrangement qualifies".to_string(), |e| e.to_string());
            return Err(field("win", format!("this hand may not go out under these rules: {why}")));
        }
        let mut best: Option<(HandScore, &Completion)> = None;
        for way in &allowed {
            let score = self.score(&way.hand, Some(win));
            if best.as_ref().is_none_or(|(b, _)| score.score > b.score) {
                best = Some((score, way));
            }
        }
        let Some((score, way)) = best else {
            return Err(field("win", "no arrangement qualifies"));
        };
        Ok(answer(score, &way.hand, Some(way.shape), allowed.len() as u32))
    }
}

/// The answer for a scored hand.
fn answer(score: HandScore, hand: &PlayerHand, shape: Option<Shape>, arrangements: u32) -> ScoreResponse {
    let mut concealed: Vec<Tile> = hand.concealed.to_vec();
    concealed.sort();
    ScoreResponse { score, sets: hand.sets.to_vec(), concealed, shape, arrangements }
}

/// Which of two ways of forming a loser's sets is the better: the higher
/// score, then the more points and doubles before rounding and the limit
/// (a set that scores is formed even when the score does not show it), then
/// the fewer sets (a pair that scores nothing is left unformed).
fn loser_better(score: &HandScore, hand: &PlayerHand, best: &HandScore, best_hand: &PlayerHand) -> bool {
    let key = |s: &HandScore, h: &PlayerHand| {
        let points: i64 = s.items.iter().map(|i| i.points).sum();
        (s.score, points, s.doubles, std::cmp::Reverse(h.sets.len()))
    };
    key(score, hand) > key(best, best_hand)
}

/// Every way a loser may form concealed pungs and pairs from its concealed
/// tiles, the hand as it is first. (Chows score nothing for a loser, and
/// change none of its doubles: they are never formed.)
fn loser_ways(hand: &PlayerHand) -> Vec<PlayerHand> {
    let counts = hand.concealed_counts();
    let faces: Vec<Tile> = (0..NORMAL_KINDS).filter(|&i| counts.0[i] >= 2).filter_map(Tile::from_index).collect();
    let mut out = vec![hand.clone()];
    form_from(hand, &faces, &mut out);
    out
}

/// Adds to `out` every hand made from `hand` by forming, at each of `faces`
/// in turn, a pung, a pair or two pairs (or nothing, the hand already in
/// `out`).
fn form_from(hand: &PlayerHand, faces: &[Tile], out: &mut Vec<PlayerHand>) {
    let Some((&t, rest)) = faces.split_first() else { return };
    form_from(hand, rest, out);
    let ways: [&[Part]; 3] = [&[Part::Pung(t)], &[Part::Pair(t)], &[Part::Pair(t), Part::Pair(t)]];
    for parts in ways {
        let mut h = hand.clone();
        if parts.iter().all(|p| p.form(&mut h).is_ok()) {
            out.push(h.clone());
            form_from(&h, rest, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scored(json: &str) -> ScoreResponse {
        score_json(json).unwrap_or_else(|e| panic!("{json}: {e}"))
    }

    fn refused(json: &str) -> String {
        match score_json(json) {
            Ok(a) => panic!("{json} was scored: {a:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn loser_ways_are_each_found_once() {
        let mut h = PlayerHand::default();
        for t in ["RD", "RD", "RD", "RD", "5B", "5B", "1C"] {
            h.draw(t.parse().unwrap()).unwrap();
        }
        let ways = loser_ways(&h);
        // RD: nothing, pung, pair, two pairs; 5B: nothing, pair.
        assert_eq!(ways.len(), 8);
        let distinct: std::collections::BTreeSet<String> = ways.iter().map(|w| format!("{:?}", w.sets)).collect();
        assert_eq!(distinct.len(), 8);
    }

    #[test]
    fn a_loser_forms_its_scoring_sets() {
        let a = scored(
            r#"{"seat_wind": "South", "concealed": ["RD","RD","RD","5B","5B","5B","GD","GD","1C","2C","3C","7D","8D"]}"#,
        );
        let sets: Vec<String> = a.sets.iter().map(ToString::to_string).collect();
        assert_eq!(sets, ["5B+5B+5B", "RD+RD+RD", "GD+GD"], "{:?}", a.score.lines().collect::<Vec<_>>());
        assert_eq!(a.score.score, (4 + 8 + 2) * 2);
        let given = scored(
            r#"{"seat_wind": "South", "arrange": "given",
                "concealed": ["RD","RD","RD","5B","5B","5B","GD","GD","1C","2C","3C","7D","8D"]}"#,
        );
        assert_eq!((given.score.score, given.sets.len(), given.concealed.len()), (0, 0, 13));
    }

    #[test]
    fn bad_hands_are_refused_with_their_reason() {
        assert!(refused(r#"{"seat_wind": "East", "concealed": ["1B"]}"#).contains("holds 1 tiles"));
        let thirteen = r#""concealed": ["1B","1B","1B","1B","1B","2B","3B","4B","5B","6B","7B","8B","9B"]"#;
        assert!(refused(&format!(r#"{{"seat_wind": "East", {thirteen}}}"#)).contains("only 4 of 1B"));
        let chow = r#"{"seat_wind": "East", "sets": [{"kind": "chow", "tile": "8B"}],
                      "concealed": ["1C","1C","1C","2C","2C","2C","3C","3C","3C","4C"]}"#;
        assert!(refused(chow).contains("no chow starts with 8B"));
        let pair = r#"{"seat_wind": "East", "sets": [{"kind": "pair", "tile": "8B"}],
                      "concealed": ["1C","1C","1C","2C","2C","2C","3C","3C","3C","4C","5C"]}"#;
        assert!(refused(pair).contains("exposed pair"));
        assert!(refused(r#"{"seat_wind": "Up"}"#).starts_with("bad request:"));
        assert!(refused(r#"{"seat_wind": "East", "extra": 1}"#).contains("unknown field `extra`"));
    }

    use proptest::prelude::*;

    /// A meld of a complete hand: a pung (or kong) of a face, or a chow from
    /// a face; and how it lies: 0 concealed, 1 declared in play, 2 a kong.
    fn meld() -> impl Strategy<Value = (bool, usize, u8)> {
        (any::<bool>(), 0..34usize, 0..3u8)
    }

    fn tile(i: usize) -> Tile {
        Tile::from_index(i).unwrap_or(Tile::RED)
    }

    fn sorted(mut tiles: Vec<Tile>) -> Vec<Tile> {
        tiles.sort();
        tiles
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// Every complete hand of four sets and a pair, its sets declared or
        /// concealed, won from anywhere with any of its concealed tiles, is
        /// scored; the answer holds exactly the tiles it was given.
        #[test]
        fn complete_hands_are_scored_with_their_own_tiles(
            melds in proptest::collection::vec(meld(), 4),
            pair in 0..34usize,
            from in 0..4usize,
            pick in any::<proptest::sample::Index>(),
        ) {
            let mut request = ScoreRequest {
                preset: None, options: Default::default(), no_special_scores: false, seat_wind: Wind::South,
                prevailing_wind: Wind::East, sets: vec![], concealed: vec![], bonus: vec![], visible: vec![],
                win: None, arrange: Arrange::Best, extra_hands: 0,
            };
            for &(chow, face, how) in &melds {
                // A chow starts at 1-7 of a suit.
                let chow = chow && face < 27 && face % 9 <= 6;
                let t = tile(face);
                match (chow, how) {
                    (true, 0) | (false, 0) => {
                        let tiles = if chow { vec![t, tile(face + 1), tile(face + 2)] } else { vec![t; 3] };
                        request.concealed.extend(tiles);
                    }
                    (true, _) => request.sets.push(TileSet::new(SetKind::Chow, t)),
                    (false, 1) => request.sets.push(TileSet::new(SetKind::Pung, t)),
                    (false, _) => request.sets.push(TileSet::new(SetKind::ClosedKong, t)),
                }
            }
            request.concealed.extend([tile(pair), tile(pair)]);
            let given: Vec<Tile> = request.sets.iter().flat_map(TileSet::tiles).chain(request.concealed.iter().copied()).collect();
            prop_assume!(Tile::normal_faces().all(|t| given.iter().filter(|&&g| g == t).count() <= 4));
            let t = *pick.get(&request.concealed);
            let from = [WinFrom::Wall, WinFrom::Discard, WinFrom::Loose, WinFrom::RobbedKong][from];
            request.win = Some(WinRequest {
                tile: t, from, used_as: None, last_tile: false, kong_upon_kong: false, original_call: false,
                no_discard: false, only_east_discarded: false, east_wins_before: 0,
            });
            let answer = score(&request);
            if from == WinFrom::RobbedKong && given.iter().filter(|&&g| g == t).count() > 1 {
                let refused = answer.err().map(|e| e.to_string()).unwrap_or_default();
                prop_assert!(refused.contains("robbed"), "{refused}");
                return Ok(());
            }
            let answer = answer.map_err(|e| TestCaseError::fail(format!("{request:?}: {e}")))?;
            let out: Vec<Tile> = answer.sets.iter().flat_map(TileSet::tiles).chain(answer.concealed.iter().copied()).collect();
            prop_assert_eq!(sorted(out), sorted(given));
            prop_assert_eq!(answer.shape, Some(Shape::Standard));
            prop_assert!(answer.score.score >= 20 && answer.arrangements >= 1, "{:?}", answer);
        }

        /// Any request at all is answered or refused; nothing panics.
        #[test]
        fn any_request_is_answered_or_refused(
            sets in proptest::collection::vec((0..9usize, 0..34usize), 0..6),
            pool in proptest::collection::vec(0..40usize, 16),
            short in 0..3usize,
            bonus in proptest::collection::vec(34..46usize, 0..4),
            visible in proptest::collection::vec(0..46usize, 0..8),
            win in proptest::option::of((0..46usize, 0..4usize, any::<[bool; 5]>(), 0..15u32, 0..7usize)),
            given in any::<bool>(),
            preset in 0..3usize,
        ) {
            let kinds = [SetKind::Chow, SetKind::Pung, SetKind::Kong { annexed: false }, SetKind::Kong { annexed: true },
                SetKind::ClosedChow, SetKind::ClosedPung, SetKind::ClosedKong, SetKind::Pair, SetKind::ClosedPair];
            let uses = [None, Some(DiscardUse::Pung), Some(DiscardUse::Pair), Some(DiscardUse::SpecialSet),
                Some(DiscardUse::Chow(None)), Some(DiscardUse::Chow(Some(ChowPosition::Middle))), None];
            // Mostly as many tiles as the hand needs, so that more than the
            // count is looked at.
            let sets: Vec<TileSet> = sets.iter().map(|&(k, t)| TileSet::new(kinds[k], tile(t))).collect();
            let held: usize = sets.iter().map(|s| s.kind.tile_count().min(3)).sum();
            let wanted = if win.is_some() { 14 } else { 13 };
            let concealed: Vec<Tile> = pool.iter().cycle().take((wanted + short).saturating_sub(held + 1)).map(|&t| tile(t)).collect();
            let request = ScoreRequest {
                preset: Some(["chinese-classical", "shanghai-expat", "american-modern"][preset].to_string()),
                options: serde_json::from_str(r#"{"SevenPairs": true}"#).unwrap_or_default(),
                no_special_scores: false,
                seat_wind: Wind::West,
                prevailing_wind: Wind::South,
                sets,
                concealed,
                bonus: bonus.into_iter().map(tile).collect(),
                visible: visible.into_iter().map(tile).collect(),
                win: win.map(|(t, from, flags, east_wins_before, used)| WinRequest {
                    tile: tile(t),
                    from: [WinFrom::Wall, WinFrom::Discard, WinFrom::Loose, WinFrom::RobbedKong][from],
                    used_as: uses[used],
                    last_tile: flags[0],
                    kong_upon_kong: flags[1],
                    original_call: flags[2],
                    no_discard: flags[3],
                    only_east_discarded: flags[4],
                    east_wins_before,
                }),
                arrange: if given { Arrange::Given } else { Arrange::Best },
                extra_hands: 0,
            };
            if let Ok(answer) = score(&request) {
                prop_assert!(answer.score.score >= 0);
            }
        }
    }
}
