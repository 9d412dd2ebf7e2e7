//! The simulator and the robots through their real interfaces: the library
//! API (`sim::simulate`, `sim::play_game`, `bots::Robot`) and the
//! `mahjong-server simulate` command.
//!
//! Debug builds play a game in roughly a tenth of a second, so these tests
//! use tens to a couple of hundred games; `simulate --games 1000` is for
//! release builds.

use crate::common;

use std::process::Command as Process;

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

use common::scenario::RobotTable;
use mahjong::bots::{Robot, Strategy};
use mahjong::rules::view::{Decision, TableView, decision};
use mahjong::rules::{Action, Claim, Command, Game, GameOptions, PlayerId, Tile, WallSource};
use mahjong::sim::{SimConfig, SimError, SimSummary, play_game, simulate};

fn run(config: &SimConfig) -> SimSummary {
    simulate(config).unwrap_or_else(|e| panic!("simulation failed: {e}"))
}

fn option_file(lines: &[(&str, &str, &str)]) -> GameOptions {
    let text: String =
        lines.iter().map(|(name, kind, value)| format!("GameOption 0 {name} {kind} 0 1 {value} test\n")).collect();
    GameOptions::from_option_file(&text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

#[test]
fn the_same_seed_plays_the_same_games_and_another_seed_others() {
    let a = run(&SimConfig::new(25, 42, GameOptions::default()));
    let b = run(&SimConfig::new(25, 42, GameOptions::default()));
    let c = run(&SimConfig::new(25, 43, GameOptions::default()));
    assert_eq!(a.without_timing(), b.without_timing());
    assert_ne!(a.without_timing(), c.without_timing());
    assert_eq!(a.games, 25);
    assert!(a.hands >= 25 * 16, "a 4-round game has at least 16 hands: {a:?}");
    let won: u64 = a.wins_by_player.iter().sum();
    let by_seat = a.wins_by_seat;
    assert_eq!(won, by_seat.east + by_seat.south + by_seat.west + by_seat.north);
    assert_eq!(won + a.washouts, a.hands);
    assert!(a.mean_winning_hand_score > 0.0);
    // Scores sum to zero in every game, so their means do too.
    assert!(a.mean_final_score.iter().sum::<f64>().abs() < 1e-6, "{:?}", a.mean_final_score);
}

/// Every command of 200 games is checked by the simulator: tile
/// conservation, zero-sum scores and settlements, and no robot move refused.
#[test]
fn two_hundred_games_break_no_invariant() {
    let s = run(&SimConfig::new(200, 2024, GameOptions::default()));
    assert_eq!(s.games, 200);
    let won: u64 = s.wins_by_player.iter().sum();
    assert!(won > s.hands / 2, "robots should win most hands: {s:?}");
    assert!(s.self_drawn_wins > 0 && s.self_drawn_wins < won);
}

#[test]
fn games_run_under_other_options() {
    let variants: [&[(&str, &str, &str)]; 6] = [
        &[("SevenPairs", "bool", "1")],
        &[("Flowers", "bool", "0"), ("DeadWall", "bool", "0")],
        &[("DeadWall16", "bool", "1"), ("FlowersLoose", "bool", "1")],
        &[("NumRounds", "nat", "1"), ("NoLimit", "bool", "1")],
        &[("SevenPairs", "bool", "1"), ("ShowOnWashout", "bool", "1"), ("KongHas3Types", "bool", "1")],
        &[("DiscDoubles", "bool", "1"), ("EastDoubles", "bool", "0"), ("LosersSettle", "bool", "0")],
    ];
    for lines in variants {
        let options = option_file(lines);
        let s = run(&SimConfig::new(12, 7, options));
        assert_eq!(s.games, 12, "{lines:?}");
    }
    let one_round = option_file(&[("NumRounds", "nat", "1")]);
    let s = run(&SimConfig::new(10, 7, one_round));
    assert!(s.hands < 10 * 16, "one round is shorter than four: {s:?}");
}

#[test]
fn every_strategy_extreme_plays_complete_games() {
    let one_round = option_file(&[("NumRounds", "nat", "1")]);
    let extremes = [
        Strategy { chowness: -1.0, ..Strategy::default() },
        Strategy { chowness: 1.0, ..Strategy::default() },
        Strategy { hiddenness: 1.0, ..Strategy::default() },
        Strategy { majorness: 1.0, ..Strategy::default() },
        Strategy { suitness: 1.0, ..Strategy::default() },
    ];
    for s in extremes {
        // The extreme robot against three default ones, and four of a kind.
        for strategies in [[s, Strategy::default(), Strategy::default(), Strategy::default()], [s; 4]] {
            let config = SimConfig { strategies, ..SimConfig::new(3, 11, one_round.clone()) };
            let summary = simulate(&config).unwrap_or_else(|e| panic!("{s:?}: {e}"));
            assert_eq!(summary.games, 3);
        }
    }
    let record = play_game(&one_round, &[extremes[2], extremes[3], extremes[4], extremes[0]], 5).unwrap();
    assert_eq!(record.final_scores.iter().sum::<i64>(), 0);
    assert_eq!(record.hands, record.washouts + record.wins_by_player.iter().sum::<u32>());
}

#[test]
fn bad_strategies_are_refused_with_a_clear_error() {
    let config = SimConfig {
        strategies: [
            Strategy::default(),
            Strategy { hiddenness: 1.5, ..Strategy::default() },
            Strategy::default(),
            Strategy::default(),
        ],
        ..SimConfig::new(1, 1, GameOptions::default())
    };
    let e = simulate(&config).unwrap_err();
    assert!(matches!(e, SimError::Strategy { player: 1, .. }));
    assert_eq!(e.to_string(), "strategy of player 1: hiddenness must be between 0 and 1, not 1.5");
}

/// Drives games directly with `Robot::decide` on each player's view, outside
/// the simulator: every move must be accepted, and robots do go out on
/// discards (placing the tile the view shows them).
#[test]
fn robots_deciding_from_views_alone_always_move_legally() {
    let options = GameOptions { num_rounds: 1, ..GameOptions::default() };
    let table = RobotTable::new(&options).max_steps(100_000);
    let mut discard_wins = 0;
    for g in 0..15u64 {
        table.play(g, |m| {
            if m.decision == Decision::AnswerDiscard && matches!(m.action, Action::Claim { claim: Claim::MahJong, .. })
            {
                discard_wins += 1;
            }
        });
    }
    assert!(discard_wins > 0);
}

/// True if `view`, given to `viewer`, shows no tile it may not see: the
/// concealed tiles of the other seats stay hidden until they are revealed
/// after Mah-Jong (ShowOnWashout, which also reveals them, is off here).
fn hides_others(view: &TableView, viewer: PlayerId) -> bool {
    let Some(h) = &view.hand else { return true };
    h.seats.iter().all(|s| s.player == viewer || s.concealed.is_none() || s.score.is_some())
}

/// The robot decides from its view alone: (1) the views it is given never
/// carry another seat's hidden tiles; (2) two deals that differ only in the
/// other seats' concealed tiles give the same view and so the same move; and
/// the robot's inputs are only its strategy, the game options and the view
/// (its type holds nothing else and `decide` takes nothing else).
#[test]
fn the_robot_sees_only_what_its_seat_may_see() {
    let options = GameOptions { flowers: false, num_rounds: 1, ..GameOptions::default() };
    let robot = Robot::new(Strategy::default(), options.clone());
    // (1) over whole games.
    for g in 0..3u64 {
        let mut walls = ChaCha8Rng::seed_from_u64(100 + g);
        let mut game = Game::new(options.clone());
        while !game.is_over() {
            if !game.hand_in_progress() {
                game.apply(Command::StartHand { dice: None, wall: WallSource::Shuffled { seed: walls.next_u64() } })
                    .unwrap();
                continue;
            }
            let hand = game.hand().unwrap();
            let p = PlayerId::ALL.into_iter().find(|&p| decision(hand, hand.seat_of(p)).is_some()).unwrap();
            let view = game.view(Some(p));
            assert!(hides_others(&view, p), "view of {p:?} shows hidden tiles");
            let action = robot.decide(&view).unwrap();
            game.apply(Command::Act { player: p, action }).unwrap();
        }
    }
    // (2) swap South's and West's dealt tiles: East's first decisions see
    // and do the same.
    let mut compared = 0;
    for seed in 0..20u64 {
        let mut tiles = Tile::full_set(false, false);
        rand::seq::SliceRandom::shuffle(tiles.as_mut_slice(), &mut ChaCha8Rng::seed_from_u64(seed));
        let mut swapped = tiles.clone();
        for r in 0..3 {
            for k in 0..4 {
                swapped.swap(16 * r + 4 + k, 16 * r + 8 + k);
            }
        }
        swapped.swap(49, 50);
        let mut games = [tiles, swapped].map(|wall| {
            let mut game = Game::new(options.clone());
            game.apply(Command::StartHand { dice: None, wall: WallSource::Tiles(wall) }).unwrap();
            game
        });
        let mover = |game: &Game| {
            let hand = game.hand()?;
            PlayerId::ALL.into_iter().find(|&p| decision(hand, hand.seat_of(p)).is_some())
        };
        // Play on (the robots declaring, then East's first discard) while
        // the two deals look the same from East's seat.
        for _ in 0..12 {
            let (Some(p), Some(q)) = (mover(&games[0]), mover(&games[1])) else { break };
            if p != q {
                break; // something public differs (a concealed kong in South or West)
            }
            let (va, vb) = (games[0].view(Some(p)), games[1].view(Some(p)));
            if p == PlayerId(0) {
                let (ea, eb) = (games[0].view(Some(p)), games[1].view(Some(p)));
                if ea != eb {
                    break;
                }
                assert_eq!(robot.decide(&ea), robot.decide(&eb), "deal {seed}");
                compared += 1;
                if ea.hand.as_ref().and_then(|h| h.my_decision) == Some(Decision::Discard) {
                    break;
                }
            }
            for (game, view) in games.iter_mut().zip([va, vb]) {
                let action = robot.decide(&view).unwrap();
                game.apply(Command::Act { player: p, action }).unwrap();
            }
        }
    }
    assert!(compared >= 20, "only {compared} decisions compared");
}

fn bin() -> Process {
    Process::new(env!("CARGO_BIN_EXE_mahjong-server"))
}

#[test]
fn the_command_prints_text_or_json_and_is_repeatable() {
    let out = bin().args(["simulate", "--games", "3", "--seed", "9"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("Simulated 3 games (seed 9)"), "{text}");
    assert!(text.contains("Wins by seat:") && text.contains("games/s"), "{text}");

    let json = |args: &[&str]| {
        let out = bin().args(["simulate", "--json"]).args(args).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let mut v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        for timing in ["games_per_second", "elapsed_seconds", "median_game_ms"] {
            assert!(v[timing].is_number(), "{timing} missing: {v}");
            v[timing] = serde_json::Value::Null;
        }
        v
    };
    let a = json(&["--games", "3", "--seed", "9"]);
    assert_eq!(a, json(&["--games", "3", "--seed", "9"]));
    assert_eq!(a["games"], 3);
    assert!(a["wins_by_seat"]["E"].is_u64() && a["wins_by_seat"]["N"].is_u64(), "{a}");
    let mixed = json(&["--games", "2", "--seed", "9", "--chowness", "-1,1,0,0.5", "--suitness", "0.5"]);
    assert_eq!(mixed["games"], 2);
}

#[test]
fn the_command_reads_option_files_and_refuses_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let good = dir.join("good.opt");
    std::fs::write(&good, "GameOption 0 NumRounds nat 0 1 1 number of rounds to play\n").unwrap();
    let out = bin().args(["simulate", "--games", "2", "--json", "--option-file"]).arg(&good).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["hands"].as_u64().unwrap() < 2 * 16, "one round each: {v}");

    let bad = dir.join("bad.opt");
    std::fs::write(&bad, "GameOption 0 NoSuchOption bool 0 1 1 what\n").unwrap();
    let out = bin().args(["simulate", "--games", "1", "--option-file"]).arg(&bad).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "bad input exits with status 2");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.opt") && err.contains("NoSuchOption"), "{err}");

    let missing = dir.join("missing.opt");
    let out = bin().args(["simulate", "--games", "1", "--option-file"]).arg(&missing).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "bad input exits with status 2");
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read"), "{}", String::from_utf8_lossy(&out.stderr));

    let out = bin().args(["simulate", "--games", "1", "--hiddenness", "2"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "bad input exits with status 2");
    assert!(String::from_utf8_lossy(&out.stderr).contains("hiddenness must be between 0 and 1"));

    let out = bin().args(["simulate", "--games", "0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "bad input exits with status 2");
    assert!(String::from_utf8_lossy(&out.stderr).contains("at least 1"));
}
