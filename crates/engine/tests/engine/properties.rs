//! Property tests over random games driven by random moves, legal and not:
//! - every tile is conserved after every accepted command;
//! - every settlement sums to zero (and so do cumulative scores);
//! - every refused command leaves the game exactly as it was;
//! - no player ever receives another player's concealed tiles or the wall,
//!   in events or in its view, and spectators see only what is public.

use proptest::prelude::*;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use mahjong_engine::rules::view::Decision;
use mahjong_engine::rules::*;

/// Option sets the random games are played under.
fn options(variant: u8) -> GameOptions {
    let mut o = GameOptions { num_rounds: 1, ..GameOptions::default() };
    match variant % 7 {
        0 => {}
        1 => {
            o.seven_pairs = true;
            o.tile_swap = true;
        }
        2 => {
            o.flowers = false;
            o.animals = true;
            o.dead_wall = false;
            o.show_on_washout = true;
        }
        3 => {
            o.dead_wall_16 = true;
            o.flowers_loose = true;
            o.animals = true;
        }
        4 => {
            o.no_limit = true;
            o.kong_has_3_types = true;
            o.losers_purity = true;
        }
        5 => {
            o.disc_doubles = true;
            o.east_doubles = false;
            o.losers_settle = false;
        }
        _ => {
            // The restrictions on going out: claims and declarations they
            // refuse must change nothing either.
            o.seven_pairs = true;
            o.minimum_doubles = 1;
            o.one_chow_one_suit = true;
        }
    }
    o
}

fn random_tile(rng: &mut ChaCha8Rng) -> Tile {
    Tile::from_index(rng.gen_range(0..tile::ALL_KINDS)).unwrap()
}

/// An arbitrary move, often illegal, with a random serial now and then.
fn junk_action(view: &TableView, rng: &mut ChaCha8Rng) -> Action {
    let serial = view.hand.as_ref().and_then(|h| h.claimable).map_or(0, |c| c.discard);
    let serial = if rng.gen_bool(0.5) { serial } else { rng.gen_range(0..200) };
    let position = *ChowPosition::ALL.choose(rng).unwrap();
    match rng.gen_range(0..17) {
        0 => Action::DeclareBonus { tile: random_tile(rng) },
        1 => Action::FinishDeclaring,
        2 => Action::Discard { tile: random_tile(rng), calling: rng.gen_bool(0.3) },
        3 => Action::Pass { discard: serial },
        4 => Action::Claim { discard: serial, claim: Claim::Pung },
        5 => Action::Claim { discard: serial, claim: Claim::Chow(Some(position)) },
        6 => Action::Claim { discard: serial, claim: Claim::MahJong },
        7 => Action::MahJong,
        8 => Action::DeclareClosedKong { tile: random_tile(rng) },
        9 => Action::AddToPung { tile: random_tile(rng) },
        10 => Action::UseDiscard { use_as: DiscardUse::Pair },
        11 => Action::FormClosedSet { set: ClosedSet::Pung(random_tile(rng)) },
        12 => Action::ChooseChowPosition { position },
        13 => Action::UseDiscard { use_as: DiscardUse::SpecialSet },
        14 => Action::ChooseSwap { lots: rng.gen_range(0..5) },
        15 => Action::PassTile { tile: random_tile(rng) },
        _ => Action::ShowTiles,
    }
}

/// Sensible moves for the decision the player's view shows, best first, with
/// some randomness: going out whenever possible, claiming often, discarding
/// lonely tiles first. The driver plays the first one the engine accepts.
fn sensible_actions(view: &TableView, rng: &mut ChaCha8Rng) -> Vec<Action> {
    let Some(h) = &view.hand else { return vec![] };
    let me = view.viewer.unwrap();
    let own: Vec<Tile> = h.seats.iter().find(|s| s.player == me).and_then(|s| s.concealed.clone()).unwrap_or_default();
    let serial = h.claimable.map_or(0, |c| c.discard);
    let mut positions = ChowPosition::ALL;
    positions.shuffle(rng);
    let mut out = Vec::new();
    match h.my_decision {
        Some(Decision::Declare) => {
            out.extend(own.iter().filter(|t| t.is_bonus()).map(|&tile| Action::DeclareBonus { tile }));
            if rng.gen_bool(0.5) {
                out.extend(own.iter().map(|&tile| Action::DeclareClosedKong { tile }));
            }
            out.push(Action::FinishDeclaring);
        }
        Some(Decision::Discard) => {
            out.push(Action::MahJong);
            out.extend(own.iter().filter(|t| t.is_bonus()).map(|&tile| Action::DeclareBonus { tile }));
            if rng.gen_bool(0.7) {
                out.extend(own.iter().map(|&tile| Action::DeclareClosedKong { tile }));
                out.extend(own.iter().map(|&tile| Action::AddToPung { tile }));
            }
            // Lonely tiles (no copy, no neighbour in hand) go first.
            let lonely = |t: &Tile| {
                own.iter().filter(|&&o| o == *t).count() == 1
                    && ![t.down(2), t.down(1), t.up(1), t.up(2)].into_iter().flatten().any(|n| own.contains(&n))
            };
            let mut discards: Vec<Tile> = own.clone();
            discards.shuffle(rng);
            discards.sort_by_key(|t| !lonely(t));
            let calling = rng.gen_bool(0.05);
            out.extend(discards.into_iter().map(|tile| Action::Discard { tile, calling }));
        }
        Some(Decision::AnswerDiscard) | Some(Decision::AnswerKong) => {
            out.push(Action::Claim { discard: serial, claim: Claim::MahJong });
            for (claim, p) in [
                (Claim::Kong, 0.6),
                (Claim::Pung, 0.6),
                (Claim::Chow(Some(positions[0])), 0.4),
                (Claim::Chow(None), 0.2),
            ] {
                if rng.gen_bool(p) {
                    out.push(Action::Claim { discard: serial, claim });
                }
            }
            out.push(Action::Pass { discard: serial });
        }
        Some(Decision::ChooseChowPosition) => {
            out.extend(positions.map(|position| Action::ChooseChowPosition { position }));
        }
        Some(Decision::UseDiscard) => {
            let mut uses = vec![DiscardUse::Pair, DiscardUse::Pung, DiscardUse::SpecialSet, DiscardUse::Chow(None)];
            uses.extend(positions.map(|p| DiscardUse::Chow(Some(p))));
            uses.shuffle(rng);
            out.extend(uses.into_iter().map(|use_as| Action::UseDiscard { use_as }));
        }
        Some(Decision::ChooseSwap) => {
            out.push(Action::ChooseSwap { lots: rng.gen_range(0..=4) });
            out.extend((0..=3).map(|lots| Action::ChooseSwap { lots }));
        }
        Some(Decision::PassTile) => {
            // Sometimes a bonus tile first, which must be refused.
            let mut tiles = own.clone();
            tiles.shuffle(rng);
            tiles.sort_by_key(|t| !(t.is_bonus() && rng.gen_bool(0.5)));
            out.extend(tiles.into_iter().map(|tile| Action::PassTile { tile }));
        }
        Some(Decision::DeclareWinningHand) | Some(Decision::ShowHand) => {
            let mut sets: Vec<ClosedSet> =
                own.iter().flat_map(|&t| [ClosedSet::Pung(t), ClosedSet::Chow(t), ClosedSet::Pair(t)]).collect();
            sets.shuffle(rng);
            sets.push(ClosedSet::SpecialSet);
            out.extend(sets.into_iter().map(|set| Action::FormClosedSet { set }));
            out.push(Action::ShowTiles);
        }
        None => {}
    }
    out
}

/// Checks what `viewer` may learn from events and its view.
fn check_privacy(game: &Game, events: &[Emitted], revealing: &mut bool) -> Result<(), TestCaseError> {
    for e in events {
        match &e.event {
            Event::HandStarted { .. } => *revealing = false,
            Event::MahJong { .. } | Event::RobbedKong { .. } | Event::WashedOut { .. } => *revealing = true,
            Event::ShowedTiles { .. } | Event::DeclaredSpecialSet { .. } => {
                prop_assert!(*revealing, "tiles revealed before the hand was won or washed out: {e:?}")
            }
            Event::Drew { player, tile: Some(_), .. } => {
                prop_assert_eq!(e.to, Audience::Only(*player), "a drawn tile is shown to someone else: {:?}", e);
            }
            Event::TilePassed { player, tile: Some(_), .. } | Event::TileReceived { player, .. } => {
                prop_assert_eq!(e.to, Audience::Only(*player), "a swapped tile is shown to someone else: {:?}", e);
            }
            _ => {}
        }
    }
    let Some(h) = game.hand() else { return Ok(()) };
    let washout_shown =
        game.options().show_on_washout && matches!(h.outcome(), Some(mahjong_engine::rules::hand::Outcome::WashOut));
    for viewer in [None, Some(PlayerId(0)), Some(PlayerId(1)), Some(PlayerId(2)), Some(PlayerId(3))] {
        let v = game.view(viewer);
        let hv = v.hand.as_ref().unwrap();
        if let Some(s) = hv.swap {
            let own = viewer.and_then(|p| h.swap().and_then(|s| s.passed_tile(h.seat_of(p))));
            prop_assert_eq!(s.my_tile, own, "{:?} is shown a tile passed in the swap", viewer);
        }
        if let Some(t) = hv.drawn {
            let me = viewer.map(|p| h.seat_of(p));
            prop_assert!(me.is_some() && h.last_drawn() == Some((me.unwrap(), t)), "{viewer:?} is shown {t} as drawn");
        }
        for seat in &hv.seats {
            let revealed = h.seat(seat.wind).hand_declared || washout_shown;
            if viewer != Some(seat.player) && !revealed {
                prop_assert!(seat.concealed.is_none(), "{viewer:?} sees {:?}'s concealed tiles", seat.player);
            }
            if let Some(tiles) = &seat.concealed {
                prop_assert_eq!(tiles.as_slice(), h.seat(seat.wind).concealed.as_slice());
            }
        }
    }
    Ok(())
}

/// Applies `command`; a refusal must leave the game exactly as it was.
fn attempt(game: &mut Game, command: Command, revealing: &mut bool, stats: &mut Stats) -> Result<bool, TestCaseError> {
    let before = game.clone();
    match game.apply(command.clone()) {
        Ok(events) => {
            if let Err(e) = mahjong_engine::rules::invariants::check(game) {
                return Err(TestCaseError::fail(format!("after {command:?}: {e}")));
            }
            for e in &events {
                match &e.event {
                    Event::Settled { settlement, deltas, scores } => {
                        stats.wins += 1;
                        prop_assert_eq!(settlement.deltas.iter().sum::<i64>(), 0);
                        prop_assert_eq!(deltas.iter().sum::<i64>(), 0);
                        prop_assert_eq!(*scores, game.scores());
                    }
                    Event::WashedOut { .. } => stats.washouts += 1,
                    _ => {}
                }
            }
            check_privacy(game, &events, revealing)?;
            Ok(true)
        }
        Err(_) => {
            stats.refused += 1;
            prop_assert!(*game == before, "refused {:?} changed the game", command);
            Ok(false)
        }
    }
}

#[derive(Default, Debug)]
struct Stats {
    game_over: bool,
    wins: usize,
    washouts: usize,
    refused: usize,
}

fn play_random_game(seed: u64, variant: u8, max_steps: usize) -> Result<Stats, TestCaseError> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut game = Game::new(options(variant));
    let mut revealing = false;
    let mut stats = Stats::default();
    for _ in 0..max_steps {
        if game.is_over() {
            break;
        }
        if !game.hand_in_progress() {
            let wall = WallSource::Shuffled { seed: rng.r#gen() };
            attempt(&mut game, Command::StartHand { wall, dice: None }, &mut revealing, &mut stats)?;
            continue;
        }
        if rng.gen_bool(0.01) {
            attempt(&mut game, Command::ClaimTimeout, &mut revealing, &mut stats)?;
            continue;
        }
        let player = PlayerId(rng.gen_range(0..4));
        let view = game.view(Some(player));
        if rng.gen_bool(0.1) || view.hand.as_ref().is_none_or(|h| h.my_decision.is_none()) {
            let action = junk_action(&view, &mut rng);
            attempt(&mut game, Command::Act { player, action }, &mut revealing, &mut stats)?;
            continue;
        }
        for action in sensible_actions(&view, &mut rng) {
            if attempt(&mut game, Command::Act { player, action }, &mut revealing, &mut stats)? {
                break;
            }
        }
    }
    prop_assert!(stats.refused > 0, "the random driver should also try illegal moves");
    stats.game_over = game.is_over();
    Ok(stats)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn random_games_keep_every_invariant(seed in any::<u64>(), variant in 0u8..7) {
        play_random_game(seed, variant, 3000)?;
    }

    /// Two deals that differ in everything a player may not see (the other
    /// hands and the wall) look exactly the same to that player, event by
    /// event and in its view; and the same holds for a spectator.
    #[test]
    fn a_player_cannot_tell_deals_apart_by_hidden_tiles(seed in any::<u64>(), who in 0u8..4) {
        let options = GameOptions { flowers: false, ..GameOptions::default() };
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut wall = Tile::full_set(false, false);
        wall.shuffle(&mut rng);
        // Wall positions dealt to seat `who` in the first hand (player = seat).
        let s = who as usize;
        let mut mine: Vec<usize> = (0..3).flat_map(|r| (0..4).map(move |k| r * 16 + s * 4 + k)).collect();
        mine.push(48 + s);
        if s == 0 {
            mine.push(52);
        }
        let mut others: Vec<usize> = (0..wall.len()).filter(|i| !mine.contains(i)).collect();
        let mut shuffled_tiles: Vec<Tile> = others.iter().map(|&i| wall[i]).collect();
        shuffled_tiles.shuffle(&mut rng);
        let mut other_wall = wall.clone();
        for (i, t) in others.drain(..).zip(shuffled_tiles) {
            other_wall[i] = t;
        }
        let viewer = PlayerId(who);
        let mut seen = Vec::new();
        for w in [wall, other_wall] {
            let mut g = Game::new(options.clone());
            let mut events = g.apply(Command::StartHand { dice: None, wall: WallSource::Tiles(w) }).unwrap();
            for p in PlayerId::ALL {
                events.extend(g.apply(Command::Act { player: p, action: Action::FinishDeclaring }).unwrap());
            }
            let mine: Vec<Event> = events.iter().filter(|e| e.to.includes(Some(viewer))).map(|e| e.event.clone()).collect();
            let public: Vec<Event> = events.iter().filter(|e| e.to.includes(None)).map(|e| e.event.clone()).collect();
            seen.push((mine, public, g.view(Some(viewer)), g.view(None)));
        }
        prop_assert_eq!(&seen[0].0, &seen[1].0, "the player's events differ");
        prop_assert_eq!(&seen[0].1, &seen[1].1, "the spectator's events differ");
        prop_assert_eq!(&seen[0].2, &seen[1].2, "the player's view differs");
        prop_assert_eq!(&seen[0].3, &seen[1].3, "the spectator's view differs");
    }
}

/// The random games do reach Mah-Jong, settlements and wash-outs (a property
/// test that never gets there would prove little).
#[test]
fn random_games_reach_settlements_and_wash_outs() {
    let (mut wins, mut washouts, mut over) = (0, 0, 0);
    for seed in 0..12 {
        let stats = play_random_game(seed, (seed % 6) as u8, 20_000).unwrap();
        wins += stats.wins;
        washouts += stats.washouts;
        over += stats.game_over as usize;
    }
    assert!(over == 12 && wins >= 20 && washouts >= 1, "games over {over}/12, wins {wins}, wash-outs {washouts}");
}
