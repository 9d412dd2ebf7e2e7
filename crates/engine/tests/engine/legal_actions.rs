//! "Legality is a list": over random games under every preset (and the
//! option variants that change what may be done), at every state of the
//! game and for every player, a move is accepted exactly when
//! `Game::legal_actions` lists it.
//!
//! The moves tried are every move the protocol can express for this game
//! (every action with every tile face, with the current serial number and
//! its neighbours), not the engine's own candidates: a move the engine
//! forgot to list, or one it lists but refuses, fails the test.
//!
//! The games are played by robots choosing from the list, with random
//! listed moves mixed in, so that they reach claims, kongs, Mah-Jong and the
//! declarations after it, the tile swap and wash-outs.

use proptest::prelude::*;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use mahjong_engine::bots::{Robot, Strategy};
use mahjong_engine::rules::presets::{PRESETS, preset};
use mahjong_engine::rules::*;

/// A change to the default options.
type Variant = fn(&mut GameOptions);

/// The option sets played: every preset, then variants of the default game
/// that change what may be done.
fn option_sets() -> Vec<(String, GameOptions)> {
    let mut out: Vec<(String, GameOptions)> =
        PRESETS.iter().map(|p| (p.name.to_string(), preset(p.name).expect("a preset"))).collect();
    let base = GameOptions::default();
    let variants: [(&str, Variant); 5] = [
        ("seven pairs and the tile swap", |o| {
            o.seven_pairs = true;
            o.tile_swap = true;
        }),
        ("restrictions on going out", |o| {
            o.seven_pairs = true;
            o.minimum_doubles = 1;
            o.one_chow_one_suit = true;
        }),
        ("animals, no dead wall, several winners", |o| {
            o.flowers = false;
            o.animals = true;
            o.dead_wall = false;
            o.multiple_winners = true;
        }),
        ("16-tile dead wall, flowers loose", |o| {
            o.dead_wall_16 = true;
            o.flowers_loose = true;
        }),
        ("shown on wash-out, millington kongs", |o| {
            o.show_on_washout = true;
            o.kong_has_3_types = true;
        }),
    ];
    for (name, change) in variants {
        let mut o = base.clone();
        change(&mut o);
        out.push((name.to_string(), o));
    }
    out
}

/// Every move a client could send for `game`: each kind of action with
/// every tile face, each claim and discard use, the lots 0-4, and serial
/// numbers around the current one.
fn every_move(game: &Game) -> Vec<Action> {
    let serial = game.hand().map_or(0, |h| h.serial());
    let serials = [serial.saturating_sub(1), serial, serial + 1];
    let mut out = vec![Action::FinishDeclaring, Action::MahJong, Action::ShowTiles];
    for tile in Tile::all_faces() {
        out.extend([
            Action::DeclareBonus { tile },
            Action::Discard { tile, calling: false },
            Action::Discard { tile, calling: true },
            Action::DeclareClosedKong { tile },
            Action::AddToPung { tile },
            Action::PassTile { tile },
            Action::FormClosedSet { set: ClosedSet::Pung(tile) },
            Action::FormClosedSet { set: ClosedSet::Chow(tile) },
            Action::FormClosedSet { set: ClosedSet::Pair(tile) },
        ]);
    }
    out.push(Action::FormClosedSet { set: ClosedSet::SpecialSet });
    let positions = ChowPosition::ALL;
    for discard in serials {
        out.push(Action::Pass { discard });
        let mut claims = vec![Claim::MahJong, Claim::Kong, Claim::Pung, Claim::Chow(None)];
        claims.extend(positions.map(|p| Claim::Chow(Some(p))));
        out.extend(claims.into_iter().map(|claim| Action::Claim { discard, claim }));
    }
    out.extend(positions.map(|position| Action::ChooseChowPosition { position }));
    let mut uses = vec![DiscardUse::Pair, DiscardUse::Pung, DiscardUse::SpecialSet, DiscardUse::Chow(None)];
    uses.extend(positions.map(|p| DiscardUse::Chow(Some(p))));
    out.extend(uses.into_iter().map(|use_as| Action::UseDiscard { use_as }));
    out.extend((0..=4).map(|lots| Action::ChooseSwap { lots }));
    out
}

#[derive(Default, Debug)]
struct Seen {
    states: usize,
    moves_listed: usize,
    mah_jongs: usize,
    claims_granted: usize,
}

/// At this state, for every player: each move is accepted by `apply` (on a
/// copy of the game) exactly when it is listed, and `check_action` agrees.
fn check_state(game: &Game, rng: &mut ChaCha8Rng, seen: &mut Seen) -> Result<(), TestCaseError> {
    seen.states += 1;
    let moves = every_move(game);
    for player in PlayerId::ALL {
        let listed = game.legal_actions(player);
        seen.moves_listed += listed.len();
        let view = game.view(Some(player));
        let decision = view.hand.as_ref().and_then(|h| h.my_decision);
        prop_assert_eq!(
            decision.is_some(),
            !listed.is_empty(),
            "{:?}: decision {:?} but {:?} listed",
            player,
            decision,
            listed
        );
        prop_assert_eq!(&view.hand.as_ref().unwrap().my_actions, &listed, "the view lists other moves");
        for action in &listed {
            prop_assert!(moves.contains(action), "{player:?} is offered {action:?}, which no client could send");
        }
        let mut unique = listed.clone();
        unique.dedup();
        prop_assert_eq!(unique.len(), listed.len(), "a move is listed twice: {:?}", listed);
        for action in &moves {
            let is_listed = listed.contains(action);
            let checked = game.check_action(player, action);
            prop_assert_eq!(
                checked.is_ok(),
                is_listed,
                "{:?} {:?}: listed {} but the check says {:?}",
                player,
                action,
                is_listed,
                checked
            );
            // The real `apply` on a copy: every listed move, and a sample of
            // the others (all of them would make the test slow).
            if is_listed || rng.gen_bool(0.02) {
                let accepted = game.clone().apply(Command::Act { player, action: action.clone() });
                prop_assert_eq!(
                    accepted.is_ok(),
                    is_listed,
                    "{:?} {:?}: listed {} but apply says {:?}",
                    player,
                    action,
                    is_listed,
                    accepted.err()
                );
                if let Err(e) = checked {
                    let refused = game.clone().apply(Command::Act { player, action: action.clone() }).unwrap_err();
                    prop_assert_eq!(refused, e, "apply and check_action give different reasons");
                }
            }
        }
    }
    Ok(())
}

/// Plays one game (one round), checking every state; returns what it saw.
fn play(options: &GameOptions, seed: u64, max_hands: u32) -> Result<Seen, TestCaseError> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let options = GameOptions { num_rounds: 1, ..options.clone() };
    let robots: Vec<Robot> = (0..4)
        .map(|i| {
            let strategy = Strategy { chowness: [0.0, 0.8, -0.8, 0.3][i], ..Strategy::default() };
            Robot::new(strategy, options.clone())
        })
        .collect();
    let mut game = Game::new(options);
    let mut seen = Seen::default();
    for _ in 0..5_000 {
        if game.is_over() || (game.hands_started() >= max_hands && !game.hand_in_progress()) {
            break;
        }
        if !game.hand_in_progress() {
            let wall = WallSource::Shuffled { seed: rng.r#gen() };
            game.apply(Command::StartHand { wall, dice: None }).expect("a hand is dealt");
            continue;
        }
        check_state(&game, &mut rng, &mut seen)?;
        let due: Vec<PlayerId> = PlayerId::ALL.into_iter().filter(|&p| !game.legal_actions(p).is_empty()).collect();
        prop_assert!(!due.is_empty(), "a hand in play awaits nobody");
        // Now and then the claim window times out.
        let window_open = game.hand().is_some_and(|h| h.claim_window_open() && !h.chow_position_pending());
        if window_open && rng.gen_bool(0.05) {
            game.apply(Command::ClaimTimeout).expect("a timeout closes an open claim window");
            continue;
        }
        let player = *due.choose(&mut rng).unwrap();
        let listed = game.legal_actions(player);
        let action = if rng.gen_bool(0.15) {
            listed.choose(&mut rng).unwrap().clone()
        } else {
            let robot = robots[player.index()].decide(&game.view(Some(player))).expect("a robot moves when due");
            prop_assert!(listed.contains(&robot), "the robot chose {robot:?}, which is not listed: {listed:?}");
            robot
        };
        let events = game.apply(Command::Act { player, action: action.clone() });
        let events = events.map_err(|e| TestCaseError::fail(format!("listed {action:?} refused: {e}")))?;
        for e in &events {
            match e.event {
                Event::MahJong { .. } => seen.mah_jongs += 1,
                Event::Chowed { .. } | Event::Punged { .. } | Event::Konged { .. } => seen.claims_granted += 1,
                _ => {}
            }
        }
        mahjong_engine::rules::invariants::check(&game)
            .map_err(|e| TestCaseError::fail(format!("after {action:?}: {e}")))?;
    }
    Ok(seen)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Under every preset and variant, in every state, listed == accepted.
    #[test]
    fn a_move_is_accepted_exactly_when_listed(seed in any::<u64>(), which in 0usize..10) {
        let sets = option_sets();
        let (_, options) = &sets[which % sets.len()];
        play(options, seed, 3)?;
    }
}

/// Every option set, one game each, so that no preset is left to chance;
/// and the games reach what matters (claims, Mah-Jong).
#[test]
fn every_preset_and_variant_lists_exactly_what_is_accepted() {
    let mut total = Seen::default();
    for (i, (name, options)) in option_sets().iter().enumerate() {
        let seen = play(options, 1000 + i as u64, 3).unwrap_or_else(|e| panic!("{name}: {e}"));
        total.states += seen.states;
        total.moves_listed += seen.moves_listed;
        total.mah_jongs += seen.mah_jongs;
        total.claims_granted += seen.claims_granted;
    }
    eprintln!("{total:?}");
    assert!(total.mah_jongs >= 5, "the games should reach Mah-Jong: {total:?}");
    assert!(total.claims_granted >= 20, "the games should grant claims: {total:?}");
}
