//! The animal tiles of seed 003 (option `Animals`): in the wall, declared and
//! replaced like flowers, scoring `AnimalScore` each, and a hand still holding
//! one when anyone goes out scoring 0. Everything goes through `Game::apply`
//! with walls built to deal chosen hands, and through the robots and the
//! simulator.

use crate::scenario::{act, ok, pass_all, play_robot_game, t, tiles, wall};
use mahjong_engine::rules::scoring::HandScore;
use mahjong_engine::rules::tile::TileCounts;
use mahjong_engine::rules::wall::Wall;
use mahjong_engine::rules::*;
use mahjong_engine::sim::{SimConfig, simulate};

/// Animals on, flowers off (the two are independent), otherwise mj-server's defaults.
fn animal_options() -> GameOptions {
    GameOptions { flowers: false, animals: true, ..GameOptions::default() }
}

fn discard(g: &mut Game, p: u8, tile: &str) -> Vec<Event> {
    let events = ok(g, p, Action::Discard { tile: t(tile), calling: false });
    pass_all(g, &[]);
    events
}

fn scores(events: &[Event]) -> [Option<HandScore>; 4] {
    let mut out: [Option<HandScore>; 4] = Default::default();
    for e in events {
        if let Event::HandScored { player, score } = e {
            out[player.index()] = Some(score.clone());
        }
    }
    out
}

fn has_line(score: &HandScore, line: &str) -> bool {
    score.lines().any(|l| l == line)
}

/// Seats in the first hand: player 0 East, 1 South, 2 West, 3 North.
///
/// South holds the Cat, West the Mouse, North the Cockerel and the
/// Centipede. South, West and North declare theirs in the declaring phase,
/// except that North keeps the Cockerel. South then goes out on East's RD,
/// and every hand is declared and scored.
fn play_the_animal_hand(game: Game) -> [HandScore; 4] {
    let east = "1C 4C 7C 1D 4D 7D 2B 5B 8B 3C 6C 9D 8D";
    let south = "1A 2B 3B 4B 5C 5C 5C 6D 7D 8D RD RD 9B";
    let west = "2A WD WD WD 2C 2C 8C 9C 3D 3D 6D SW SW";
    let north = "3A 4A 3C 3C 3C 6C 7C 8C 4D 4D 9D WW NW";
    // Replacements for South's, West's and North's animals, then the draws
    // of South, West, North and East.
    let draws = "NW EW EW 9B 1B 1B RD";
    let w = wall([east, south, west, north], "GD", draws, "", game.options());
    let mut g = game;
    let mut events: Vec<Event> = g
        .apply(Command::StartHand { dice: None, wall: WallSource::Tiles(w) })
        .unwrap()
        .into_iter()
        .map(|e| e.event)
        .collect();
    ok(&mut g, 0, Action::FinishDeclaring);
    for (p, animal) in [(1u8, "1A"), (2, "2A"), (3, "4A")] {
        events.extend(ok(&mut g, p, Action::DeclareBonus { tile: t(animal) }));
        ok(&mut g, p, Action::FinishDeclaring);
    }
    // Everybody saw each declaration, and each declarer got a live tile.
    for (p, animal) in [(1u8, "1A"), (2, "2A"), (3, "4A")] {
        assert!(events.contains(&Event::DeclaredBonus { player: PlayerId(p), tile: t(animal) }));
    }
    let view = g.view(None).hand.unwrap();
    assert_eq!(view.seats[1].bonus, [t("1A")], "bonus tiles are shown to everyone");
    assert_eq!(view.seats[3].bonus, [t("4A")]);
    assert!(g.hand().unwrap().seat(Wind::North).concealed.contains(&t("3A")));

    discard(&mut g, 0, "GD");
    discard(&mut g, 1, "NW");
    discard(&mut g, 2, "1B");
    discard(&mut g, 3, "1B");
    ok(&mut g, 0, Action::Discard { tile: t("RD"), calling: false });
    let serial = g.hand().unwrap().serial();
    ok(&mut g, 1, Action::Claim { discard: serial, claim: Claim::MahJong });
    pass_all(&mut g, &[1]);
    let mut events = ok(&mut g, 1, Action::UseDiscard { use_as: DiscardUse::Pung });
    for set in [ClosedSet::Chow(t("2B")), ClosedSet::Pung(t("5C")), ClosedSet::Chow(t("6D")), ClosedSet::Pair(t("9B"))]
    {
        events.extend(ok(&mut g, 1, Action::FormClosedSet { set }));
    }
    events.extend(ok(&mut g, 2, Action::FormClosedSet { set: ClosedSet::Pung(t("WD")) }));
    events.extend(ok(&mut g, 3, Action::FormClosedSet { set: ClosedSet::Pung(t("3C")) }));
    for p in [0u8, 2, 3] {
        events.extend(ok(&mut g, p, Action::ShowTiles));
    }
    assert!(events.iter().any(|e| matches!(e, Event::Settled { .. })));
    let scores = scores(&events);
    scores.map(|s| s.expect("every hand is scored"))
}

#[test]
fn a_declared_animal_gives_its_double_to_winner_and_loser() {
    let [east, south, west, _] = play_the_animal_hand(Game::new(animal_options()));
    // South: 20 basic + 4 (RD pung) + 4 (5C pung) = 28 points, doubled for the
    // dragons and for the Cat.
    assert!(has_line(&south, "              1 dbl (animal Cat)"), "{}", south.text());
    assert!(has_line(&south, "total dbls    2"), "{}", south.text());
    assert_eq!(south.score, 112, "{}", south.text());
    assert!(!south.text().contains("special"), "animals are not 4-point specials: {}", south.text());
    // West, a loser: 8 for the closed pung of dragons, doubled for them and
    // for the Mouse.
    assert!(has_line(&west, "              1 dbl (animal Mouse)"), "{}", west.text());
    assert_eq!(west.score, 32, "{}", west.text());
    assert!(!east.text().contains("animal"), "{}", east.text());
}

#[test]
fn an_undeclared_animal_in_a_losers_hand_scores_nothing() {
    let [_, _, _, north] = play_the_animal_hand(Game::new(animal_options()));
    // 4 points for the 3C pung and a double for the declared Centipede would
    // be 8; the Cockerel still in hand makes it 0.
    assert!(has_line(&north, "              1 dbl (animal Centipede)"), "{}", north.text());
    assert!(has_line(&north, "penalty       0 (animal left in hand: Cockerel)"), "{}", north.text());
    assert_eq!(north.lines().last(), Some("SCORE:        0"));
    assert_eq!(north.score, 0);
}

#[test]
fn the_penalty_beats_a_limit_and_no_special_scores_keeps_animals() {
    // Each animal worth a whole limit: the declared ones score the limit,
    // North's kept Cockerel still makes its hand 0.
    let mut options = animal_options();
    options.set("AnimalScore", "100000000").unwrap();
    let [_, south, west, north] = play_the_animal_hand(Game::new(options));
    assert_eq!((south.score, west.score), (1000, 1000), "{}\n{}", south.text(), west.text());
    assert!(has_line(&west, "Limit Hand 1000 (animal Mouse)"), "{}", west.text());
    assert!(has_line(&north, "Limit Hand 1000 (animal Centipede)"), "{}", north.text());
    assert!(north.text().contains("penalty       0 (animal left in hand: Cockerel)"), "{}", north.text());
    assert_eq!(north.score, 0, "{}", north.text());

    // mj-server's --no-special-scores is about flowers and seasons only.
    let [_, south, _, north] = play_the_animal_hand(Game::new(animal_options()).with_no_special_scores(true));
    assert_eq!(south.score, 112, "{}", south.text());
    assert_eq!(north.score, 0, "{}", north.text());

    // Animals as points: a points line in the same style.
    let mut options = animal_options();
    options.set("AnimalScore", "6").unwrap();
    let [_, south, _, _] = play_the_animal_hand(Game::new(options));
    assert!(has_line(&south, "              6 (animal Cat)"), "{}", south.text());
    assert_eq!(south.score, (28 + 6) * 2, "{}", south.text());
}

#[test]
fn the_wall_holds_148_tiles_with_flowers_and_animals() {
    let options = GameOptions { animals: true, ..GameOptions::default() };
    let mut g = Game::new(options.clone());
    g.apply(Command::StartHand { dice: None, wall: WallSource::Shuffled { seed: 5 } }).unwrap();
    let w = g.hand().unwrap().wall().tiles().to_vec();
    assert_eq!(w.len(), 148);
    assert_eq!(TileCounts::of(w.iter().copied()), TileCounts::full_set(true, true));
    let animals: Vec<Tile> = {
        let mut a: Vec<Tile> = w.iter().copied().filter(|t| t.is_animal()).collect();
        a.sort();
        a
    };
    assert_eq!(animals, tiles("1A 2A 3A 4A"));
    invariants::check(&g).unwrap();
    // An explicit wall of the same set is accepted.
    let mut g = Game::new(options);
    g.apply(Command::StartHand { dice: None, wall: WallSource::Tiles(w) }).unwrap();
    invariants::check(&g).unwrap();
}

#[test]
fn a_wall_with_an_animal_is_refused_when_animals_are_off() {
    let options = GameOptions::default();
    let mut with_cat = Tile::full_set(true, false);
    with_cat[0] = t("1A");
    let mut g = Game::new(options.clone());
    let before = g.clone();
    let err = g.apply(Command::StartHand { dice: None, wall: WallSource::Tiles(with_cat.clone()) }).unwrap_err();
    assert!(err.to_string().contains("1A is not in the tile set (animals are in play only with"), "{err}");
    assert!(g == before, "a refused wall changes nothing");
    // The full set with animals, as a wall file.
    let text: Vec<&str> = Tile::full_set(true, true).iter().map(|t| t.code()).collect();
    let err = Wall::from_wall_file(&text.join(" "), &options).unwrap_err();
    assert!(err.to_string().contains("1A is not in the tile set"), "{err}");
    assert!(Wall::from_wall_file(&text.join(" "), &GameOptions { animals: true, ..options.clone() }).is_ok());
    // With Animals on, the animals must all be there.
    let err = Wall::from_tiles(Tile::full_set(true, false), &GameOptions { animals: true, ..options }).unwrap_err();
    assert!(err.to_string().contains("exactly the 148 tiles"), "{err}");
}

#[test]
fn an_animal_is_replaced_by_a_loose_tile_with_flowers_loose() {
    let options = GameOptions { flowers_loose: true, ..animal_options() };
    let east = "3A 4C 7C 1D 4D 7D 2B 5B 8B 3C 6C 9D 8D";
    let south = "1C 1C 4C 7C 9C 2D 2D 5D 8D EW EW SW NW";
    let west = "2C 2C 5C 8C 9C 3D 3D 6D 9D SW SW WW NW";
    let north = "3C 3C 6C 7C 8C 4D 4D 7D 9D WW WW NW RD";
    let w = wall([east, south, west, north], "GD", "", "RD", &options);
    let mut g = Game::new(options);
    g.apply(Command::StartHand { dice: None, wall: WallSource::Tiles(w) }).unwrap();
    let events = ok(&mut g, 0, Action::DeclareBonus { tile: t("3A") });
    assert!(events.contains(&Event::DeclaredBonus { player: PlayerId(0), tile: t("3A") }));
    // 140 tiles, 53 dealt, 14 in the dead wall: 73 live tiles, untouched by a loose draw.
    let drew = Event::Drew { player: PlayerId(0), tile: Some(t("RD")), loose: true, live_tiles_left: 73 };
    assert!(events.contains(&drew), "{events:?}");
    let hand = g.hand().unwrap();
    assert_eq!(hand.seat(Wind::East).bonus.as_slice(), [t("3A")]);
    assert_eq!(hand.seat(Wind::East).concealed.len(), 14);
    invariants::check(&g).unwrap();
    // An animal cannot be discarded, and only a held one can be declared.
    ok(&mut g, 0, Action::FinishDeclaring);
    for p in 1..4 {
        ok(&mut g, p, Action::FinishDeclaring);
    }
    let err = g.apply(act(0, Action::DeclareBonus { tile: t("1A") })).unwrap_err();
    assert!(err.to_string().contains("do not hold that bonus tile"), "{err}");
}

/// Robots declare animals like flowers, and whole games with animals keep
/// every invariant, with no robot move refused.
#[test]
fn robots_declare_animals_and_games_with_animals_run_clean() {
    let options = GameOptions { animals: true, num_rounds: 1, ..GameOptions::default() };
    let (mut declared, mut animal_lines, mut penalties) = (0, 0, 0);
    for g in 0..4u64 {
        play_robot_game(&options, 300 + g, |m| {
            for e in m.emitted {
                match &e.event {
                    Event::DeclaredBonus { tile, .. } if tile.is_animal() => declared += 1,
                    Event::HandScored { score, .. } => {
                        animal_lines += score.lines().filter(|l| l.contains("(animal ")).count();
                        penalties += score.lines().filter(|l| l.starts_with("penalty")).count();
                    }
                    _ => {}
                }
            }
        });
    }
    assert!(declared > 0, "robots declared no animal");
    assert!(animal_lines > 0, "no hand scored an animal");
    assert_eq!(penalties, 0, "robots declare every animal at once, so none is ever left in hand");

    // The simulator checks every command of every game.
    for options in [
        GameOptions { animals: true, ..GameOptions::default() },
        GameOptions { animals: true, flowers: false, dead_wall: false, ..GameOptions::default() },
        GameOptions { animals: true, flowers_loose: true, dead_wall_16: true, num_rounds: 1, ..GameOptions::default() },
    ] {
        let summary = simulate(&SimConfig::new(6, 17, options)).unwrap_or_else(|e| panic!("simulation failed: {e}"));
        assert_eq!(summary.games, 6);
        assert_eq!(summary.mean_final_score.iter().sum::<f64>().round(), 0.0);
    }
}
