//! The restrictions on going out (seeds 002 and 003): `MinimumDoubles` and
//! `OneChowOneSuit`, through `Game::apply` with walls built to deal chosen
//! hands, and robots playing whole games under them.

use crate::scenario::{RobotTable, act, ok, pass_all, refused_with, start, t, tiles, wall, wall_filling};
use mahjong_engine::bots::Strategy;
use mahjong_engine::rules::arrangement;
use mahjong_engine::rules::hand::Outcome;
use mahjong_engine::rules::tile::TileCounts;
use mahjong_engine::rules::*;
use mahjong_engine::sim::{SimConfig, simulate};

fn options(minimum_doubles: u32, one_chow_one_suit: bool) -> GameOptions {
    GameOptions { flowers: false, minimum_doubles, one_chow_one_suit, ..GameOptions::default() }
}

fn score_of(events: &[Event], player: u8) -> Option<&scoring::HandScore> {
    events.iter().find_map(|e| match e {
        Event::HandScored { player: p, score } if p.0 == player => Some(score),
        _ => None,
    })
}

fn form(g: &mut Game, p: u8, sets: &[ClosedSet]) -> Vec<Event> {
    sets.iter().flat_map(|&set| ok(g, p, Action::FormClosedSet { set })).collect()
}

fn too_few(needed: u32, best: i64) -> GameError {
    GameError::TooFewDoubles { needed, best }
}

/// South (player 1) holds `south`; everybody discards once (the tile just
/// drawn; a first discard on which South went out would be Earth's
/// Blessing), then East discards `win`, which nobody has answered yet.
fn south_waits(options: GameOptions, south: &str, win: &str) -> Game {
    let held = TileCounts::of(tiles(south));
    // An honour if possible: nobody minds it.
    let faces: Vec<Tile> = Tile::normal_faces().collect();
    let junk = faces.into_iter().rev().find(|&f| held.get(f) == 0 && f != t(win)).unwrap().code();
    let draws = format!("{junk} {junk} {junk} {win}");
    let w = wall_filling([None, Some(south), None, None], junk, &draws, "", &options);
    let mut g = start(options, w);
    for p in [0, 1, 2, 3] {
        ok(&mut g, p, Action::Discard { tile: t(junk), calling: false });
        pass_all(&mut g, &[]);
    }
    ok(&mut g, 0, Action::Discard { tile: t(win), calling: false });
    g
}

/// A claim of the current discard for Mah-Jong.
fn mah_jong(g: &Game) -> Action {
    Action::Claim { discard: g.hand().unwrap().serial(), claim: Claim::MahJong }
}

fn claim_mah_jong(g: &mut Game, p: u8) {
    let claim = mah_jong(g);
    ok(g, p, claim);
}

// South's hands below wait on 1B or 4B (2B 3B) or on a pair.
/// Mixed suits, chows, a pung of minors and no scoring pair: no double at all
/// when it goes out on a discard.
const NO_DOUBLE: &str = "2B 3B 4C 5C 6C 7D 7D 7D 2D 3D 4D 5B 5B";
/// The same with a pung of Red Dragons: one double.
const ONE_DOUBLE: &str = "2B 3B 4C 5C 6C RD RD RD 2D 3D 4D 5B 5B";

#[test]
fn a_hand_without_enough_doubles_cannot_go_out_on_a_discard() {
    let mut g = south_waits(options(1, false), NO_DOUBLE, "1B");
    assert_eq!(g.hand().unwrap().minimum_doubles(), 1);
    assert_eq!(g.view(Some(PlayerId(1))).hand.unwrap().minimum_doubles, 1);
    let claim = mah_jong(&g);
    refused_with(&mut g, 1, claim.clone(), too_few(1, 0));
    assert_eq!(
        g.apply(act(1, claim)).unwrap_err().to_string(),
        "going out needs at least 1 double; this hand can make at most 0"
    );
    // Without the minimum the same claim goes out.
    let mut g = south_waits(options(0, false), NO_DOUBLE, "1B");
    assert_eq!(g.hand().unwrap().minimum_doubles(), 0);
    claim_mah_jong(&mut g, 1);
}

#[test]
fn a_hand_with_the_doubles_goes_out_and_is_scored() {
    let mut g = south_waits(options(1, false), ONE_DOUBLE, "1B");
    assert_eq!(g.view(Some(PlayerId(2))).hand.unwrap().winning_tile, None);
    claim_mah_jong(&mut g, 1);
    pass_all(&mut g, &[1]);
    assert_eq!(g.hand().unwrap().phase(), hand::Phase::MahJonging);
    assert_eq!(g.view(Some(PlayerId(2))).hand.unwrap().winning_tile, Some(t("1B")), "everybody saw it");
    let mut events = ok(&mut g, 1, Action::UseDiscard { use_as: DiscardUse::Chow(Some(ChowPosition::Lower)) });
    events.extend(form(
        &mut g,
        1,
        &[ClosedSet::Chow(t("4C")), ClosedSet::Pung(t("RD")), ClosedSet::Chow(t("2D")), ClosedSet::Pair(t("5B"))],
    ));
    let score = score_of(&events, 1).expect("South is scored once its hand is declared");
    assert_eq!(score.doubles, 1, "{}", score.text());
    assert!(!score.limit_hand);
    assert!(score.lines().any(|l| l.starts_with("total dbls") && l.ends_with(" 1")), "{}", score.text());
}

/// The brief's example: a concealed chicken hand drawn from the wall has one
/// double (the concealed hand), not two.
#[test]
fn going_out_self_drawn_is_judged_too() {
    let deal = |minimum| {
        let options = options(minimum, false);
        let w = wall_filling([None, Some(NO_DOUBLE), None, None], "GD", "1B", "", &options);
        let mut g = start(options, w);
        ok(&mut g, 0, Action::Discard { tile: t("GD"), calling: false });
        pass_all(&mut g, &[]);
        g
    };
    let mut g = deal(2);
    refused_with(&mut g, 1, Action::MahJong, too_few(2, 1));
    assert_eq!(
        g.apply(act(1, Action::MahJong)).unwrap_err().to_string(),
        "going out needs at least 2 doubles; this hand can make at most 1"
    );
    // South may discard instead and play on.
    ok(&mut g, 1, Action::Discard { tile: t("1B"), calling: false });

    let mut g = deal(1);
    let mut events = ok(&mut g, 1, Action::MahJong);
    events.extend(form(
        &mut g,
        1,
        &[
            ClosedSet::Chow(t("1B")),
            ClosedSet::Chow(t("4C")),
            ClosedSet::Pung(t("7D")),
            ClosedSet::Chow(t("2D")),
            ClosedSet::Pair(t("5B")),
        ],
    ));
    let score = score_of(&events, 1).unwrap();
    assert_eq!(score.doubles, 1, "{}", score.text());
    assert!(score.lines().any(|l| l.contains("concealed hand")), "{}", score.text());
}

#[test]
fn a_limit_hand_always_goes_out() {
    // Heaven's Blessing: two chows of two suits and two doubles, with three
    // doubles needed and OneChowOneSuit on.
    let east = "1B 1B 1B 2C 3C 4C 5D 6D 7D RD RD RD EW";
    let three_needed = options(3, true);
    let w = wall_filling([Some(east), None, None, None], "EW", "", "", &three_needed);
    let mut g = start(three_needed, w);
    let mut events = ok(&mut g, 0, Action::MahJong);
    events.extend(form(
        &mut g,
        0,
        &[
            ClosedSet::Chow(t("2C")),
            ClosedSet::Pung(t("1B")),
            ClosedSet::Chow(t("5D")),
            ClosedSet::Pung(t("RD")),
            ClosedSet::Pair(t("EW")),
        ],
    ));
    let score = score_of(&events, 0).unwrap();
    assert!(score.limit_hand && score.lines().any(|l| l.contains("Heaven's Blessing")), "{}", score.text());

    // Thirteen Unique Wonders on a discard.
    let wonders = "1B 9B 1C 9C 1D 9D EW SW WW NW RD WD WD";
    let mut g = south_waits(options(5, true), wonders, "GD");
    claim_mah_jong(&mut g, 1);
    pass_all(&mut g, &[1]);
    let events = ok(&mut g, 1, Action::UseDiscard { use_as: DiscardUse::SpecialSet });
    let score = score_of(&events, 1).unwrap();
    assert!(score.limit_hand && score.score == 1000, "{}", score.text());
}

#[test]
fn robbing_a_kong_needs_the_doubles_too() {
    // As in the engine scenarios: East pungs South's 5B, draws the fourth and
    // adds it; West waits on 5B (4B 6B). Robbing a kong is West's only
    // double.
    let east = "5B 5B 1C 2C 3C 1D 2D 3D EW EW NW WD GD";
    let south = "5B 9C 9C 9D 9D 2B 3B 1B 1B 7B 8B 9B 4C";
    let west = "4B 6B 2D 3D 4D 6C 7C 8C RD RD 3B 3B 3B";
    let north = "2B 2B 6D 6D 8D 8D 5C 5C NW NW WD WD 7D";
    let kong = |minimum| {
        let options = options(minimum, false);
        let w = wall([east, south, west, north], "GD", "SW WW SW GD 5B", "", &options);
        let mut g = start(options, w);
        ok(&mut g, 0, Action::Discard { tile: t("NW"), calling: false });
        pass_all(&mut g, &[]);
        ok(&mut g, 1, Action::Discard { tile: t("5B"), calling: false });
        ok(&mut g, 0, Action::Claim { discard: 2, claim: Claim::Pung });
        pass_all(&mut g, &[0]);
        ok(&mut g, 0, Action::Discard { tile: t("WD"), calling: false });
        pass_all(&mut g, &[]);
        for (p, tile) in [(1, "WW"), (2, "SW"), (3, "GD")] {
            ok(&mut g, p, Action::Discard { tile: t(tile), calling: false });
            pass_all(&mut g, &[]);
        }
        ok(&mut g, 0, Action::AddToPung { tile: t("5B") });
        g
    };
    let rob = Action::Claim { discard: 7, claim: Claim::MahJong };
    let mut g = kong(2);
    assert_eq!(g.hand().unwrap().serial(), 7);
    refused_with(&mut g, 2, rob.clone(), too_few(2, 1));
    pass_all(&mut g, &[]);
    assert_eq!(g.hand().unwrap().to_act(), Wind::East, "East draws its loose tile");

    let mut g = kong(1);
    ok(&mut g, 2, rob);
    pass_all(&mut g, &[2]);
    let mut events = ok(&mut g, 2, Action::UseDiscard { use_as: DiscardUse::Chow(Some(ChowPosition::Middle)) });
    events.extend(form(
        &mut g,
        2,
        &[ClosedSet::Chow(t("2D")), ClosedSet::Chow(t("6C")), ClosedSet::Pung(t("3B")), ClosedSet::Pair(t("RD"))],
    ));
    assert_eq!(score_of(&events, 2).unwrap().doubles, 1);
}

#[test]
fn one_chow_one_suit_refuses_two_chows_and_two_suits() {
    let two_chows = "2B 3B 5B 6B 7B 9B 9B 9B EW EW EW RD RD";
    let two_suits = "2B 3B 5C 5C 5C 9B 9B 9B EW EW EW RD RD";
    for south in [two_chows, two_suits] {
        let mut g = south_waits(options(0, true), south, "1B");
        let claim = mah_jong(&g);
        refused_with(&mut g, 1, claim.clone(), GameError::OneChowOneSuit);
        assert_eq!(
            g.apply(act(1, claim)).unwrap_err().to_string(),
            "with OneChowOneSuit a hand may have only one chow and one suit"
        );
        // Without the option both go out.
        let mut g = south_waits(options(0, false), south, "1B");
        claim_mah_jong(&mut g, 1);
    }
}

#[test]
fn one_chow_one_suit_accepts_one_chow_of_one_suit_and_the_wonders() {
    let south = "2B 3B 5B 5B 5B 9B 9B 9B EW EW EW RD RD";
    let mut g = south_waits(options(0, true), south, "4B");
    claim_mah_jong(&mut g, 1);
    pass_all(&mut g, &[1]);
    let mut events = ok(&mut g, 1, Action::UseDiscard { use_as: DiscardUse::Chow(None) });
    events.extend(ok(&mut g, 1, Action::ChooseChowPosition { position: ChowPosition::Upper }));
    events.extend(form(
        &mut g,
        1,
        &[ClosedSet::Pung(t("5B")), ClosedSet::Pung(t("9B")), ClosedSet::Pung(t("EW")), ClosedSet::Pair(t("RD"))],
    ));
    assert!(score_of(&events, 1).is_some());
    for p in [0, 2, 3] {
        ok(&mut g, p, Action::ShowTiles);
    }
    assert!(matches!(g.hand().unwrap().outcome(), Some(Outcome::Won { winner: Wind::South, .. })));

    let wonders = "1B 9B 1C 9C 1D 9D EW SW WW NW RD WD WD";
    let mut g = south_waits(options(0, true), wonders, "GD");
    claim_mah_jong(&mut g, 1);
    pass_all(&mut g, &[1]);
    let events = ok(&mut g, 1, Action::UseDiscard { use_as: DiscardUse::SpecialSet });
    assert!(score_of(&events, 1).unwrap().limit_hand);
}

/// 1B 2B 3B three times: three pungs keep the one chow (the exposed 7B-8B-9B);
/// declaring a concealed chow of them leaves only chows.
#[test]
fn a_declaration_that_breaks_one_chow_one_suit_is_refused() {
    let south = "1B 1B 1B 2B 2B 2B 3B 3B 3B 7B 8B RD RD";
    let mut g = south_waits(options(0, true), south, "9B");
    claim_mah_jong(&mut g, 1);
    pass_all(&mut g, &[1]);
    ok(&mut g, 1, Action::UseDiscard { use_as: DiscardUse::Chow(Some(ChowPosition::Upper)) });
    refused_with(&mut g, 1, Action::FormClosedSet { set: ClosedSet::Chow(t("1B")) }, GameError::OneChowOneSuit);
    let events = form(
        &mut g,
        1,
        &[ClosedSet::Pung(t("1B")), ClosedSet::Pung(t("2B")), ClosedSet::Pung(t("3B")), ClosedSet::Pair(t("RD"))],
    );
    assert!(score_of(&events, 1).is_some());
}

/// South's 1B 1B 1B 2B 3B with 2C and 6D pungs: the 1B discard in a chow
/// leaves three concealed pungs (a double); in a pung, two.
#[test]
fn a_declaration_that_loses_the_doubles_is_refused() {
    let south = "2C 2C 2C 6D 6D 6D 1B 1B 1B 2B 3B EW EW";
    let mut g = south_waits(options(1, false), south, "1B");
    claim_mah_jong(&mut g, 1);
    pass_all(&mut g, &[1]);
    refused_with(&mut g, 1, Action::UseDiscard { use_as: DiscardUse::Pung }, too_few(1, 0));
    ok(&mut g, 1, Action::UseDiscard { use_as: DiscardUse::Chow(Some(ChowPosition::Lower)) });
    // The concealed 1B 1B 1B are a pung: a chow would need a second 2B.
    let events = form(
        &mut g,
        1,
        &[ClosedSet::Pung(t("1B")), ClosedSet::Pung(t("2C")), ClosedSet::Pung(t("6D")), ClosedSet::Pair(t("EW"))],
    );
    let score = score_of(&events, 1).unwrap();
    assert!(score.lines().any(|l| l.contains("three concealed pungs")), "{}", score.text());

    // Pungs or chows of 1B 2B 3B: only the pungs make "no chows".
    let south = "1B 1B 1B 2B 2B 2B 3B 3B 3B 5C 5C 5C 7D";
    let mut g = south_waits(options(1, false), south, "7D");
    claim_mah_jong(&mut g, 1);
    pass_all(&mut g, &[1]);
    ok(&mut g, 1, Action::UseDiscard { use_as: DiscardUse::Pair });
    refused_with(&mut g, 1, Action::FormClosedSet { set: ClosedSet::Chow(t("1B")) }, too_few(1, 0));
    let events = form(
        &mut g,
        1,
        &[ClosedSet::Pung(t("1B")), ClosedSet::Pung(t("2B")), ClosedSet::Pung(t("3B")), ClosedSet::Pung(t("5C"))],
    );
    assert!(score_of(&events, 1).unwrap().lines().any(|l| l.contains("no chows")));
}

/// True if the winning hand of a finished hand meets the restrictions.
fn winner_qualifies(game: &Game) -> Result<(), String> {
    let Some(hand) = game.hand() else { return Ok(()) };
    let Some(Outcome::Won { winner, .. }) = hand.outcome() else { return Ok(()) };
    let score = hand.hand_score(*winner).ok_or("the winner has no score")?;
    let declared = hand.seat(*winner);
    let options = game.options();
    if score.limit_hand {
        return Ok(());
    }
    if i64::from(score.doubles) < i64::from(hand.minimum_doubles()) {
        return Err(format!("a winner with {} doubles:\n{}", score.doubles, score.text()));
    }
    let special = declared.sets.len() == 7 || declared.sets.is_empty();
    if options.one_chow_one_suit && !special && !arrangement::one_chow_one_suit(declared) {
        return Err(format!("a winner breaks OneChowOneSuit: {:?}", declared.sets));
    }
    Ok(())
}

/// Robots play whole games through `Game::apply` under the restrictions:
/// every move they make is accepted, every invariant holds, and every
/// winning hand meets the restrictions.
fn robots_play(options: GameOptions, strategies: [Strategy; 4], games: u64) -> usize {
    let table = RobotTable::with_strategies(&options, strategies).max_steps(100_000);
    let mut wins = 0;
    for g in 0..games {
        table.play(g, |m| {
            if !m.game.hand_in_progress() {
                winner_qualifies(m.game).unwrap_or_else(|e| panic!("game {g}: {e}"));
                wins += matches!(m.game.hand().unwrap().outcome(), Some(Outcome::Won { .. })) as usize;
            }
        });
    }
    wins
}

fn one_round(mut options: GameOptions) -> GameOptions {
    options.num_rounds = 1;
    options
}

#[test]
fn robots_play_under_a_minimum_of_doubles() {
    let options = one_round(GameOptions { minimum_doubles: 1, ..GameOptions::default() });
    let chow_lover = Strategy { chowness: 1.0, ..Strategy::default() };
    let wins = robots_play(options.clone(), [Strategy::default(), chow_lover, Strategy::default(), chow_lover], 6);
    assert!(wins > 0, "robots never went out");
    let summary = simulate(&SimConfig::new(4, 7, options)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(summary.games, 4);
}

#[test]
fn robots_play_under_one_chow_one_suit() {
    let options = one_round(GameOptions { one_chow_one_suit: true, ..GameOptions::default() });
    let chow_lover = Strategy { chowness: 1.0, ..Strategy::default() };
    let wins = robots_play(options.clone(), [Strategy::default(), chow_lover, Strategy::default(), chow_lover], 6);
    assert!(wins > 0, "robots never went out");
    let both = GameOptions { minimum_doubles: 2, ..options.clone() };
    robots_play(both, [Strategy::default(); 4], 3);
    let summary = simulate(&SimConfig::new(4, 7, options)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(summary.games, 4);
}
