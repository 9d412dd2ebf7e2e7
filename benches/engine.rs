//! Benchmarks of the rules engine: scoring one finished hand, replaying one
//! whole reference game, simulating one four-round robot game.
//!
//! Targets on one core: a hand scored in under 2 µs, a whole game simulated
//! in under 10 ms.

use std::hint::black_box;
use std::path::{Path, PathBuf};

use criterion::{Criterion, criterion_group, criterion_main};

use mahjong::rules::player_hand::PlayerHand;
use mahjong::rules::scoring::{ScoringInput, Whence, WinContext, score_hand};
use mahjong::rules::tile::parse_tiles;
use mahjong::rules::{GameOptions, SetKind, Tile, TileSet, Wind};

fn hand(concealed: &str, sets: &[(SetKind, &str)], bonus: &str) -> PlayerHand {
    let mut h = PlayerHand::new();
    for t in parse_tiles(concealed).unwrap() {
        h.draw(t).unwrap();
    }
    for (kind, t) in sets {
        h.sets.push(TileSet::new(*kind, t.parse().unwrap()));
    }
    for t in parse_tiles(bonus).unwrap() {
        h.bonus.push(t);
    }
    h.no_discard = false;
    h
}

/// A typical winning hand, self-drawn: an exposed pung and chow, the rest
/// declared after Mah-Jong; with the hand before the winning tile, so that
/// "filling the only place" has to look for every tile that could complete it.
fn bench_scoring(c: &mut Criterion) {
    let options = GameOptions::default();
    let winner = hand(
        "",
        &[
            (SetKind::Pung, "6C"),
            (SetKind::Chow, "2B"),
            (SetKind::ClosedChow, "3D"),
            (SetKind::ClosedPung, "WD"),
            (SetKind::ClosedPair, "RD"),
        ],
        "2F 3S",
    );
    let before = hand("3D 4D 5D WD WD WD RD", &[(SetKind::Pung, "6C"), (SetKind::Chow, "2B")], "2F 3S");
    let exposed = [0u8; 42];
    let win = WinContext {
        whence: Whence::Wall,
        tile: "RD".parse::<Tile>().unwrap(),
        exposed: &exposed,
        live_exhausted: false,
        live_exactly_exhausted: false,
        before_winning_tile: Some(&before),
        only_east_discarded: false,
        east_wins_before: 0,
        kong_upon_kong: false,
    };
    let input = ScoringInput {
        options: &options,
        hand: &winner,
        seat: Wind::South,
        prevailing: Wind::East,
        no_special_scores: false,
        win: Some(win),
    };
    assert_eq!(score_hand(&input).score, 96);
    c.bench_function("score a winning hand", |b| b.iter(|| score_hand(black_box(&input))));

    let loser = hand("1B 5C 9D", &[(SetKind::Pung, "EW"), (SetKind::Kong { annexed: false }, "8B")], "1F");
    let loser_input = ScoringInput { hand: &loser, win: None, ..input };
    c.bench_function("score a losing hand", |b| b.iter(|| score_hand(black_box(&loser_input))));
}

fn corpus_game(name: &str) -> PathBuf {
    let base = std::env::var_os("MAHJONG_CONFORMANCE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/conformance"));
    base.join("games").join(name).join("game.log")
}

/// Replaying s0001-default (21 hands, 11 000 log records), log parsing included.
fn bench_replay(c: &mut Criterion) {
    let log = std::fs::read_to_string(corpus_game("s0001-default")).unwrap();
    let records = mahjong::protocol::read_log(&log).unwrap().len();
    assert!(records > 10_000);
    c.bench_function("replay reference game s0001 (parse + play + score)", |b| {
        b.iter(|| mahjong::replay::replay_log(black_box(&log)).unwrap())
    });
}

/// One four-round game of four default robots, invariants checked after
/// every command, as `simulate` plays it.
fn bench_simulation(c: &mut Criterion) {
    let options = GameOptions::default();
    let strategies = [mahjong::bots::Strategy::default(); 4];
    let mut seed = 0u64;
    c.bench_function("simulate one 4-round robot game", |b| {
        b.iter(|| {
            seed += 1;
            mahjong::sim::play_game(&options, &strategies, mahjong::sim::game_seed(1, seed)).unwrap()
        })
    });
}

fn bench_settlement(c: &mut Criterion) {
    use mahjong::rules::settlement::{SettlementInput, settle};
    let classical = mahjong::rules::GameOptions::default();
    let shanghai = mahjong::rules::presets::preset("shanghai-expat").expect("a preset");
    for (name, options) in [("chinese-classical", &classical), ("shanghai-expat", &shanghai)] {
        let input = SettlementInput {
            options,
            scores: [36, 220, 8, 100],
            winners: &[mahjong::rules::Wind::South],
            discarder: Some(mahjong::rules::Wind::West),
            robbed_kong: false,
            cannon: None,
            extra_hands: 0,
            double_dice: true,
        };
        c.bench_function(&format!("settle a hand ({name})"), |b| b.iter(|| settle(black_box(&input))));
    }
    let request =
        r#"{"preset":"shanghai-expat","east":0,"winner":1,"discarder":2,"scores":[36,220,8,100],"double_dice":true}"#;
    c.bench_function("settle calculator request (JSON in, answer out)", |b| {
        b.iter(|| mahjong::rules::calculator::settle_json(black_box(request)))
    });
}

criterion_group!(benches, bench_scoring, bench_replay, bench_simulation, bench_settlement);
criterion_main!(benches);
