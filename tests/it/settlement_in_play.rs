//! The settlement options of seeds 000-003 inside played hands: the engine
//! settles every hand with the same function as the `settle` calculator, and
//! the course of the game follows the deal-passing and extra-hand options.

use crate::common;

use common::scenario::{ok, pass_all, play_robot_game, t, wall};
use mahjong::bots::robot::Robot;
use mahjong::bots::strategy::Strategy;
use mahjong::rules::calculator::{SettleRequest, calculate};
use mahjong::rules::presets::{PRESETS, preset};
use mahjong::rules::settlement::Settlement;
use mahjong::rules::view::decision;
use mahjong::rules::*;
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::json;

const EAST: &str = "1C 4C 7C 1D 4D 7D 2B 5B 8B 3C 6C 9D 8D";
/// South waits on GD or 2C.
const SOUTH: &str = "1B 1B 1B 4C 5C 6C 7D 8D 9D GD GD 2C 2C";
const WEST: &str = "3B 3B 6B 6B 9B 9B 2D 2D 5D 5D SW SW WW";
const NORTH: &str = "4B 4B 7B 7B 3D 3D 6D 6D EW EW NW RD RD";

/// The options of a preset without the Shanghai rules that change play
/// (they have their own tests); flowers off so that the walls are exact.
fn settlement_options(name: &str) -> GameOptions {
    let mut o = preset(name).unwrap();
    o.flowers = false;
    o.animals = false;
    o.tile_swap = false;
    o.one_chow_one_suit = false;
    o
}

/// Plays one hand in which South goes out with 2C, drawn from the wall
/// (`self_drawn`) or discarded by East, after one round of discards.
/// Returns the settlement and each seat's hand score.
fn south_wins(g: &mut Game, self_drawn: bool, dice: Option<[u8; 2]>) -> (Settlement, [i64; 4]) {
    let sets = [ClosedSet::Pung(t("1B")), ClosedSet::Chow(t("4C")), ClosedSet::Chow(t("7D")), ClosedSet::Pair(t("GD"))];
    south_wins_with(g, [SOUTH, NORTH], sets, self_drawn, dice)
}

/// As [`south_wins`], with another South hand waiting on 2C (and a North
/// hand that leaves room for it), declared as `sets` after the 2C pung.
fn south_wins_with(
    g: &mut Game,
    [south, north]: [&str; 2],
    sets: [ClosedSet; 4],
    self_drawn: bool,
    dice: Option<[u8; 2]>,
) -> (Settlement, [i64; 4]) {
    let draws = if self_drawn { "9C 9C 9C 1B 2C" } else { "9C 9C 9C 2C" };
    let w = wall([EAST, south, WEST, north], "NW", draws, "", g.options());
    g.apply(Command::StartHand { wall: WallSource::Tiles(w), dice }).unwrap();
    for p in 0..4 {
        ok(g, p, Action::FinishDeclaring);
    }
    ok(g, 0, Action::Discard { tile: t("NW"), calling: false });
    pass_all(g, &[]);
    for p in 1..4 {
        ok(g, p, Action::Discard { tile: t("9C"), calling: false });
        pass_all(g, &[]);
    }
    let mut events = if self_drawn {
        ok(g, 0, Action::Discard { tile: t("1B"), calling: false });
        pass_all(g, &[]);
        let mut e = ok(g, 1, Action::MahJong);
        e.extend(ok(g, 1, Action::FormClosedSet { set: ClosedSet::Pung(t("2C")) }));
        e
    } else {
        ok(g, 0, Action::Discard { tile: t("2C"), calling: false });
        let serial = g.hand().unwrap().serial();
        let mut e = ok(g, 1, Action::Claim { discard: serial, claim: Claim::MahJong });
        for p in [2, 3] {
            e.extend(ok(g, p, Action::Pass { discard: serial }));
        }
        e.extend(ok(g, 1, Action::UseDiscard { use_as: DiscardUse::Pung }));
        e
    };
    for set in sets {
        events.extend(ok(g, 1, Action::FormClosedSet { set }));
    }
    for p in [0, 2, 3] {
        events.extend(ok(g, p, Action::ShowTiles));
    }
    let mut scores = [0; 4];
    let mut settlement = None;
    for e in events {
        match e {
            Event::HandScored { player, score } => scores[player.index()] = score.score,
            Event::Settled { settlement: s, .. } => settlement = Some(s),
            _ => {}
        }
    }
    (settlement.expect("the hand is settled"), scores)
}

/// What the calculator says for the same hand (players are seats here: the
/// first hand's East is player 0).
fn calculator(
    name: &str,
    options: &GameOptions,
    scores: [i64; 4],
    self_drawn: bool,
    extra: u32,
    dice: bool,
) -> [i64; 4] {
    // Every option where the game's options differ from the preset.
    let base = preset(name).unwrap();
    let overrides: serde_json::Map<String, serde_json::Value> = mahjong::rules::options::CATALOGUE
        .iter()
        .filter(|spec| options.get(spec.name).unwrap() != base.get(spec.name).unwrap())
        .map(|spec| (spec.name.to_string(), json!(options.get(spec.name).unwrap())))
        .collect();
    let request: SettleRequest = serde_json::from_value(json!({
        "preset": name, "options": overrides, "east": 0, "winner": 1,
        "discarder": if self_drawn { None } else { Some(0) }, "scores": scores,
        "extra_hands": extra, "double_dice": dice,
    }))
    .unwrap();
    calculate(&request).unwrap().net
}

#[test]
fn the_engine_settles_every_preset_as_the_calculator_does() {
    for p in PRESETS {
        for self_drawn in [true, false] {
            for dice in [None, Some([3, 3]), Some([2, 5])] {
                let options = settlement_options(p.name);
                let mut g = Game::new(options.clone());
                let (s, scores) = south_wins(&mut g, self_drawn, dice);
                let double = options.double_dice && dice == Some([3, 3]);
                let expected = calculator(p.name, &options, scores, self_drawn, 0, double);
                assert_eq!(s.deltas, expected, "{} self-drawn {self_drawn} dice {dice:?}", p.name);
                assert_eq!(g.scores(), expected);
            }
        }
    }
}

#[test]
fn double_dice_double_every_score_and_payments_round_to_hundreds_in_play() {
    let options = settlement_options("shanghai-expat");
    let mut plain = Game::new(options.clone());
    let (s1, scores) = south_wins(&mut plain, true, Some([1, 2]));
    let mut doubled = Game::new(options.clone());
    let (s2, scores2) = south_wins(&mut doubled, true, Some([4, 4]));
    assert_eq!(scores, scores2, "the hands score the same");
    assert!(scores[1] > 0);
    for seat in 0..4 {
        assert_eq!(s2.scores[seat], 2 * s1.scores[seat].min(1000), "seat {seat}");
    }
    for p in s1.payments.iter().chain(&s2.payments) {
        assert_eq!(p.amount % 100, 0, "{p:?} is rounded to 100");
    }
    // Seed 003's numbers in a played hand. South's 36 basic points are brought up to 40 before its double
    // ("12 goes to 20; 46 to 50"): 80. East pays double, 160, "rounded up to 200"; the others pay 80, 100.
    let hand = plain.hand().unwrap();
    let text = hand.hand_score(Wind::South).unwrap().text().to_string();
    assert!(text.contains("total pts    36\nrounded pts  40\n"), "{text}");
    assert_eq!(scores[1], 80);
    assert_eq!(s1.deltas, [-200, 400, -100, -100]);
    // Double dice: 160 each; East's 320 rounds down to 300, the others' 160 up to 200.
    assert_eq!(s2.deltas, [-300, 700, -200, -200]);
    let bad =
        Game::new(options).apply(Command::StartHand { wall: WallSource::Shuffled { seed: 1 }, dice: Some([0, 7]) });
    assert_eq!(bad.unwrap_err().to_string(), "bad dice: 0 and 7; each die shows 1 to 6");
}

#[test]
fn discarder_pays_for_all_in_play() {
    let mut options = settlement_options("japanese-rounding");
    options.round_mode = mahjong::rules::options::Rounding::None;
    let mut g = Game::new(options);
    let (s, scores) = south_wins(&mut g, false, None);
    // East discarded: East pays South's score for all three, doubled for itself.
    assert_eq!(s.deltas, [-4 * scores[1], 4 * scores[1], 0, 0]);
    assert_eq!(s.payments.len(), 1);
    assert_eq!(s.payments[0].on_behalf_of, vec![Wind::West, Wind::North]);
}

/// East wins the hand with Heaven's Blessing (a limit hand, 1000).
fn east_wins(g: &mut Game) -> Settlement {
    let east = "1B 1B 1B 2C 3C 4C 5D 6D 7D RD RD RD EW";
    let south = "2B 2B 5B 8B 9C 3D 3D 6D 9D SW SW WW NW";
    let west = "3B 3B 6B 6B 9B 9B 1D 1D 5D 5D SW SW WW";
    let north = "4B 4B 7B 7B 4D 4D 8D 8D 5C 5C NW GD GD";
    let w = wall([east, south, west, north], "EW", "", "", g.options());
    g.apply(Command::StartHand { wall: WallSource::Tiles(w), dice: None }).unwrap();
    for p in 0..4 {
        ok(g, p, Action::FinishDeclaring);
    }
    let mut events = ok(g, 0, Action::MahJong);
    for set in [ClosedSet::Pung(t("1B")), ClosedSet::Chow(t("2C")), ClosedSet::Chow(t("5D")), ClosedSet::Pung(t("RD"))]
    {
        events.extend(ok(g, 0, Action::FormClosedSet { set }));
    }
    events.extend(ok(g, 0, Action::FormClosedSet { set: ClosedSet::Pair(t("EW")) }));
    for p in 1..4 {
        events.extend(ok(g, p, Action::ShowTiles));
    }
    events
        .into_iter()
        .find_map(|e| match e {
            Event::Settled { settlement, .. } => Some(settlement),
            _ => None,
        })
        .expect("settled")
}

#[test]
fn extra_hands_count_and_the_dealer_bonus_is_paid_in_play() {
    let mut options = settlement_options("chinese-classical");
    options.dealer_bonus = 100;
    // Without the losers' payments, a limit hand's settlement is plain to read.
    options.losers_settle = false;
    let mut g = Game::new(options.clone());
    // First hand: not an extra hand; East wins and keeps the deal.
    let s = east_wins(&mut g);
    assert_eq!(s.deltas, [6000, -2000, -2000, -2000]);
    assert_eq!((g.east(), g.extra_hands()), (PlayerId(0), 1));
    // Second hand, the first extra hand: 100 from each loser on top.
    let s = east_wins(&mut g);
    assert_eq!(s.deltas, [6300, -2100, -2100, -2100]);
    assert_eq!(g.extra_hands(), 2);
    // Third hand: South wins, so nothing is paid (the bonus goes to East only) and the deal passes.
    let (s, scores) = south_wins(&mut g, true, None);
    assert_eq!(s.deltas, calculator("chinese-classical", &options, scores, true, 0, false));
    assert_eq!((g.east(), g.extra_hands()), (PlayerId(1), 0));

    // With DealPassesOnEastWin the deal passes at once and no hand is an extra hand.
    options.deal_passes_on_east_win = true;
    let mut g = Game::new(options.clone());
    east_wins(&mut g);
    assert_eq!((g.east(), g.extra_hands()), (PlayerId(1), 0));

    // Paid to any winner, Taiwanese style: South wins self-drawn, East alone pays 2 x 2.
    options.deal_passes_on_east_win = false;
    options.dealer_bonus = 2;
    options.dealer_bonus_taiwan = true;
    let mut g = Game::new(options.clone());
    east_wins(&mut g);
    east_wins(&mut g);
    assert_eq!(g.extra_hands(), 2);
    let (s, scores) = south_wins(&mut g, true, None);
    let without = calculator("chinese-classical", &options, scores, true, 0, false);
    assert_eq!(s.deltas, [without[0] - 4, without[1] + 4, without[2], without[3]]);
}

#[test]
fn the_minimum_doubles_rise_from_the_fifth_extra_hand_and_fall_back() {
    let mut options = settlement_options("chinese-classical");
    options.minimum_doubles = 1;
    options.raise_minimum_on_5th_extra = true;
    options.check().unwrap();
    let mut g = Game::new(options);
    for hand in 0..5 {
        east_wins(&mut g);
        assert_eq!(g.hand().unwrap().minimum_doubles(), 1, "hand {hand}");
    }
    assert_eq!(g.extra_hands(), 5);
    // The 5th extra hand: South needs two doubles, and has them (a pung of Red Dragons, a concealed hand).
    let south = "RD RD RD 4C 5C 6C 7D 8D 9D 1B 1B 2C 2C";
    let north = "4B 4B 7B 7B 3D 3D 6D 6D EW EW NW WD WD";
    let sets = [ClosedSet::Pung(t("RD")), ClosedSet::Chow(t("4C")), ClosedSet::Chow(t("7D")), ClosedSet::Pair(t("1B"))];
    south_wins_with(&mut g, [south, north], sets, true, None);
    assert_eq!(g.hand().unwrap().minimum_doubles(), 2);
    let score = g.hand().unwrap().hand_score(Wind::South).unwrap().clone();
    assert!(score.doubles >= 2, "{}", score.text());
    // The deal passed: the counter and the minimum are back.
    assert_eq!(g.extra_hands(), 0);
    g.apply(Command::StartHand { wall: WallSource::Shuffled { seed: 9 }, dice: None }).unwrap();
    assert_eq!(g.hand().unwrap().minimum_doubles(), 1);
}

/// Plays robot games and checks, hand by hand, who deals and the extra-hand
/// counter against the previous hand's outcome.
fn check_rotation(options: &GameOptions, games: u64) -> (u32, u32) {
    let robot = Robot::new(Strategy::default(), options.clone());
    let (mut washouts, mut kept) = (0, 0);
    for seed in 0..games {
        let mut walls = ChaCha8Rng::seed_from_u64(seed);
        let mut game = Game::new(options.clone());
        let mut expected: Option<(PlayerId, u32)> = Some((PlayerId(0), 0));
        while !game.is_over() {
            if !game.hand_in_progress() {
                let events = game
                    .apply(Command::StartHand { wall: WallSource::Shuffled { seed: walls.next_u64() }, dice: None })
                    .unwrap();
                let Some(Event::HandStarted { east, extra_hands, dice, .. }) =
                    events.iter().map(|e| &e.event).find(|e| matches!(e, Event::HandStarted { .. }))
                else {
                    panic!("no HandStarted")
                };
                assert!(dice.is_some_and(|d| d.iter().all(|x| (1..=6).contains(x))));
                if let Some(exp) = expected {
                    assert_eq!((*east, *extra_hands), exp);
                }
                continue;
            }
            let hand = game.hand().unwrap();
            let p = PlayerId::ALL.into_iter().find(|&p| decision(hand, hand.seat_of(p)).is_some()).unwrap();
            let action = robot.decide(&game.view(Some(p))).unwrap();
            game.apply(Command::Act { player: p, action }).unwrap();
            if !game.hand_in_progress() && !game.is_over() {
                let hand = game.hand().unwrap();
                let (east, extra) = (hand.east, hand.extra_hands);
                let next = PlayerId((east.0 + 1) % 4);
                expected = Some(match hand.outcome() {
                    Some(hand::Outcome::Won { winner: Wind::East, .. }) if !options.deal_passes_on_east_win => {
                        kept += 1;
                        (east, extra + 1)
                    }
                    Some(hand::Outcome::WashOut) => {
                        washouts += 1;
                        if options.deal_passes_on_washout {
                            (next, 0)
                        } else {
                            kept += 1;
                            (east, extra + 1)
                        }
                    }
                    _ => (next, 0),
                });
                // East's 13th straight win passes the deal anyway; too rare to model here.
                if hand.east_wins_before >= 12 {
                    expected = None;
                }
            }
        }
    }
    (washouts, kept)
}

#[test]
fn the_deal_passes_as_the_options_say() {
    let base = GameOptions { num_rounds: 1, ..GameOptions::default() };
    let (_, kept) = check_rotation(&base, 6);
    assert!(kept > 0, "East kept the deal at least once");
    let passes = GameOptions { deal_passes_on_east_win: true, deal_passes_on_washout: true, ..base };
    let (washouts, kept) = check_rotation(&passes, 6);
    assert_eq!(kept, 0);
    // Robots claim a lot, so wash-outs are rare; the counter is still checked after each one that happens.
    let _ = washouts;
}

#[test]
fn several_winners_on_one_discard_each_declare_and_are_paid_as_if_alone() {
    // West also waits on 2C (a chow 2C-3C-4C).
    let west = "3B 3B 3B 6B 6B 6B 9B 9B 9B 5D 5D 3C 4C";
    let play = |options: GameOptions| {
        let mut g = Game::new(options);
        let w = wall([EAST, SOUTH, west, NORTH], "NW", "9C 9C 9C 2C", "", g.options());
        g.apply(Command::StartHand { wall: WallSource::Tiles(w), dice: None }).unwrap();
        for p in 0..4 {
            ok(&mut g, p, Action::FinishDeclaring);
        }
        ok(&mut g, 0, Action::Discard { tile: t("NW"), calling: false });
        pass_all(&mut g, &[]);
        for p in 1..4 {
            ok(&mut g, p, Action::Discard { tile: t("9C"), calling: false });
            pass_all(&mut g, &[]);
        }
        ok(&mut g, 0, Action::Discard { tile: t("2C"), calling: false });
        let serial = g.hand().unwrap().serial();
        ok(&mut g, 1, Action::Claim { discard: serial, claim: Claim::MahJong });
        ok(&mut g, 2, Action::Claim { discard: serial, claim: Claim::MahJong });
        ok(&mut g, 3, Action::Pass { discard: serial });
        g
    };
    let mut options = settlement_options("chinese-classical");
    options.multiple_winners = true;
    let mut g = play(options.clone());
    assert_eq!(g.hand().unwrap().winners(), [Wind::South, Wind::West]);
    // West waits for South to declare first.
    assert_eq!(g.view(Some(PlayerId(2))).hand.unwrap().my_decision, None);
    let before = g.clone();
    let e = g.apply(Command::Act { player: PlayerId(2), action: Action::ShowTiles }).unwrap_err();
    assert!(e.to_string().contains("you went out too"), "{e}");
    let e =
        g.apply(Command::Act { player: PlayerId(2), action: Action::FormClosedSet { set: ClosedSet::Pair(t("5D")) } });
    assert!(e.unwrap_err().to_string().contains("you went out too"));
    assert!(g == before, "refusals change nothing");
    ok(&mut g, 1, Action::UseDiscard { use_as: DiscardUse::Pung });
    for set in [ClosedSet::Pung(t("1B")), ClosedSet::Chow(t("4C")), ClosedSet::Chow(t("7D")), ClosedSet::Pair(t("GD"))]
    {
        ok(&mut g, 1, Action::FormClosedSet { set });
    }
    // Now West places the same discard in its own hand.
    assert_eq!(g.view(Some(PlayerId(2))).hand.unwrap().my_decision, Some(Decision::UseDiscard));
    mahjong::rules::invariants::check(&g).unwrap();
    ok(&mut g, 2, Action::UseDiscard { use_as: DiscardUse::Chow(Some(ChowPosition::Lower)) });
    for set in [ClosedSet::Pung(t("3B")), ClosedSet::Pung(t("6B")), ClosedSet::Pung(t("9B")), ClosedSet::Pair(t("5D"))]
    {
        ok(&mut g, 2, Action::FormClosedSet { set });
    }
    let mut events = Vec::new();
    for p in [0, 3] {
        events.extend(ok(&mut g, p, Action::ShowTiles));
    }
    mahjong::rules::invariants::check(&g).unwrap();
    let (settlement, scores) = events
        .iter()
        .find_map(|e| match e {
            Event::Settled { settlement, .. } => Some(settlement.clone()),
            _ => None,
        })
        .map(|s| {
            let scores: [i64; 4] =
                std::array::from_fn(|i| g.hand().unwrap().hand_score(Wind::from_index(i)).unwrap().score);
            (s, scores)
        })
        .expect("settled");
    let request: SettleRequest = serde_json::from_value(json!({
        "options": {"MultipleWinners": true, "Flowers": false}, "east": 0, "winner": [1, 2], "discarder": 0,
        "scores": scores,
    }))
    .unwrap();
    assert_eq!(settlement.deltas, calculate(&request).unwrap().net);
    let v = g.view(None).hand.unwrap();
    assert!(
        matches!(v.outcome, Some(view::HandOutcome::Won { ref winners, .. }) if winners == &[PlayerId(1), PlayerId(2)])
    );

    // Without the option, the first in turn after the discarder wins alone.
    let g = play(settlement_options("chinese-classical"));
    assert_eq!(g.hand().unwrap().winners(), [Wind::South]);
}

#[test]
fn robots_play_with_several_winners_and_the_tiles_add_up() {
    let options = GameOptions { multiple_winners: true, num_rounds: 1, ..GameOptions::default() };
    let mut shared_wins = 0;
    for seed in 0..40u64 {
        play_robot_game(&options, seed, |m| {
            if let Some(hand::Outcome::Won { winners, settlement, .. }) = m.game.hand().unwrap().outcome()
                && winners.len() > 1
                && !m.game.hand_in_progress()
                && settlement
                    .payments
                    .iter()
                    .filter(|p| p.kind == mahjong::rules::settlement::PaymentKind::Winner)
                    .count()
                    >= 6
            {
                shared_wins += 1;
            }
        });
    }
    assert!(shared_wins > 0, "robots went out together on some discard");
}
