//! East's tile swap (seed 003, option `TileSwap`) through `Game::apply`: the
//! three lots go across, right and left; no lots change nothing; every wrong
//! move is refused with its own reason and changes nothing; a passed tile is
//! seen only by its giver and receiver; limit hands of the deal survive a
//! swap; robots swap and play whole games with no invariant broken.

use proptest::prelude::*;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use crate::scenario::{self, RobotTable, act, ok, ok_emitted, start, start_emitted, t, wall};
use mahjong_engine::bots::{Robot, Strategy};
use mahjong_engine::rules::swap::SwapDirection;
use mahjong_engine::rules::view::Decision;
use mahjong_engine::rules::*;
use mahjong_engine::sim::{SimConfig, simulate};
use serde_json::json;

fn swap_options() -> GameOptions {
    GameOptions { flowers: false, tile_swap: true, ..GameOptions::default() }
}

/// The command is refused as an illegal move with an error containing
/// `why`, and nothing changes.
fn refused(g: &mut Game, p: u8, action: Action, why: &str) {
    let err = scenario::refused(g, p, action.clone(), why);
    assert!(matches!(err, GameError::Illegal(_)), "{action:?}: {err:?}");
}

fn holds(g: &Game, seat: Wind, tile: &str) -> usize {
    g.hand().unwrap().seat(seat).count(t(tile))
}

fn decision_of(g: &Game, p: u8) -> Option<Decision> {
    g.view(Some(PlayerId(p))).hand.unwrap().my_decision
}

// Each player holds its three tiles to pass (East 1B 2B 3B, South 1D 2D 3D,
// West RD GD WD, North EW SW WW) and no other copy of them.
const MARKED: [&str; 4] = [
    "1B 2B 3B 5C 5C 5C 6C 6C 6C 7C 7C 7C 8C",
    "1D 2D 3D 4D 4D 4D 5D 5D 5D 6D 6D 6D 9C",
    "RD GD WD 7D 7D 7D 8D 8D 8D 9D 9D 9D 9C",
    "EW SW WW 4B 4B 4B 5B 5B 5B 6B 6B 6B 9C",
];

#[test]
fn three_lots_go_across_then_right_then_left() {
    let (mut g, events) = start_emitted(swap_options(), wall(MARKED, "8C", "", "", &swap_options()));
    assert!(events.iter().any(|e| e.event == Event::SwapStarted { east: PlayerId(0) }));
    assert!(!events.iter().any(|e| matches!(e.event, Event::PlayStarted { .. })), "play waits for the swap");
    assert_eq!(g.hand().unwrap().phase(), mahjong_engine::rules::hand::Phase::Swapping);
    assert_eq!(decision_of(&g, 0), Some(Decision::ChooseSwap));
    assert!((1..4).all(|p| decision_of(&g, p).is_none()), "only East decides first");
    let chosen = ok(&mut g, 0, Action::ChooseSwap { lots: 3 });
    assert_eq!(chosen, vec![Event::SwapChosen { player: PlayerId(0), lots: 3 }]);

    let lots = [
        (SwapDirection::Across, ["1B", "1D", "RD", "EW"]),
        (SwapDirection::Right, ["2B", "2D", "GD", "SW"]),
        (SwapDirection::Left, ["3B", "3D", "WD", "WW"]),
    ];
    for (lot, (direction, passes)) in (1u8..).zip(lots) {
        let view = g.view(None).hand.unwrap().swap.unwrap();
        assert_eq!((view.lot, view.direction, view.passed), (lot, Some(direction), [false; 4]));
        let mut emitted = Vec::new();
        // Players pass in an order other than East first: the tiles move
        // only once all four have chosen.
        for p in [2u8, 0, 3, 1] {
            assert_eq!(decision_of(&g, p), Some(Decision::PassTile));
            let before = g.hand().unwrap().seat(Wind::ALL[p as usize]).concealed.len();
            emitted.extend(ok_emitted(&mut g, p, Action::PassTile { tile: t(passes[p as usize]) }));
            if p != 1 {
                assert_eq!(decision_of(&g, p), None, "one tile per lot");
                let after = g.hand().unwrap().seat(Wind::ALL[p as usize]).concealed.len();
                assert_eq!(after, before - 1, "the tile lies face down until the lot moves");
            }
        }
        assert!(emitted.iter().any(|e| e.event == Event::LotPassed { lot, direction }));
        for from in Wind::ALL {
            let to = direction.receiver(from);
            let tile = t(passes[from.index()]);
            let received = Event::TileReceived {
                player: PlayerId(to.index() as u8),
                from: PlayerId(from.index() as u8),
                lot,
                tile,
            };
            assert!(emitted.iter().any(|e| e.event == received && e.to == Audience::Only(PlayerId(to.index() as u8))));
        }
    }
    // Lot 1 across: East and West trade, South and North.
    // Lot 2 to the right: East to South, South to West, West to North, North to East.
    // Lot 3 to the left: East to North, North to West, West to South, South to East.
    let expect: [(Wind, [&str; 3], [&str; 3]); 4] = [
        (Wind::East, ["RD", "SW", "3D"], ["1B", "2B", "3B"]),
        (Wind::South, ["EW", "2B", "WD"], ["1D", "2D", "3D"]),
        (Wind::West, ["1B", "2D", "WW"], ["RD", "GD", "WD"]),
        (Wind::North, ["1D", "GD", "3B"], ["EW", "SW", "WW"]),
    ];
    for (seat, got, gave) in expect {
        for x in got {
            assert_eq!(holds(&g, seat, x), 1, "{seat:?} should have received {x}");
        }
        for x in gave {
            assert_eq!(holds(&g, seat, x), 0, "{seat:?} should have passed {x}");
        }
        assert_eq!(g.hand().unwrap().seat(seat).concealed.len(), if seat == Wind::East { 14 } else { 13 });
    }
    // East plays: the tile it received last stands for its drawn tile.
    let h = g.hand().unwrap();
    assert_eq!(h.phase(), mahjong_engine::rules::hand::Phase::Discarding);
    assert!(h.swap().is_none());
    let view = g.view(Some(PlayerId(0))).hand.unwrap();
    assert_eq!((view.my_decision, view.drawn, view.swap), (Some(Decision::Discard), Some(t("3D")), None));
    assert!(Wind::ALL.iter().all(|&s| h.seat(s).no_discard), "passing is not discarding");
    mahjong_engine::rules::invariants::check(&g).unwrap();
    ok(&mut g, 0, Action::Discard { tile: t("3D"), calling: false });
}

#[test]
fn fewer_lots_stop_early_and_no_lots_change_nothing() {
    // One lot: only the trade across.
    let mut g = start(swap_options(), wall(MARKED, "8C", "", "", &swap_options()));
    ok(&mut g, 0, Action::ChooseSwap { lots: 1 });
    for (p, x) in ["1B", "1D", "RD", "EW"].into_iter().enumerate() {
        ok(&mut g, p as u8, Action::PassTile { tile: t(x) });
    }
    assert_eq!(decision_of(&g, 0), Some(Decision::Discard));
    assert_eq!((holds(&g, Wind::East, "RD"), holds(&g, Wind::West, "1B")), (1, 1));
    assert_eq!((holds(&g, Wind::East, "2B"), holds(&g, Wind::South, "2D")), (1, 1));

    // No lots: the hand is exactly the one a game without the swap has.
    let deal = wall(MARKED, "8C", "4C 1C", "", &swap_options());
    let (mut swapped, events) = start_emitted(swap_options(), deal.clone());
    let mut plain = start(GameOptions { tile_swap: false, ..swap_options() }, deal);
    assert!(events.iter().any(|e| matches!(e.event, Event::SwapStarted { .. })));
    let chosen = ok(&mut swapped, 0, Action::ChooseSwap { lots: 0 });
    assert_eq!(
        chosen,
        vec![Event::SwapChosen { player: PlayerId(0), lots: 0 }, Event::PlayStarted { east: PlayerId(0) }]
    );
    assert_eq!(swapped.hand(), plain.hand());
    for p in PlayerId::ALL {
        assert_eq!(swapped.view(Some(p)).hand, plain.view(Some(p)).hand);
    }
    let discard = Action::Discard { tile: t("8C"), calling: true };
    assert_eq!(ok_emitted(&mut swapped, 0, discard.clone()), ok_emitted(&mut plain, 0, discard));
    assert_eq!(swapped.hand(), plain.hand());
}

#[test]
fn wrong_moves_are_refused_and_change_nothing() {
    // Without the option there is no swap.
    let mut g = start(GameOptions { tile_swap: false, ..swap_options() }, wall(MARKED, "8C", "", "", &swap_options()));
    refused(&mut g, 0, Action::ChooseSwap { lots: 1 }, "there is no tile swap now");
    refused(&mut g, 0, Action::PassTile { tile: t("1B") }, "there is no tile swap now");

    // South keeps a flower in its hand instead of declaring it.
    let south = "1F 2D 3D 4D 4D 4D 5D 5D 5D 6D 6D 6D 9C";
    let options = GameOptions { flowers: true, ..swap_options() };
    let deal = wall([MARKED[0], south, MARKED[2], MARKED[3]], "8C", "", "", &options);
    let mut g = Game::new(options);
    g.apply(Command::StartHand { dice: None, wall: WallSource::Tiles(deal) }).unwrap();
    refused(&mut g, 0, Action::ChooseSwap { lots: 3 }, "there is no tile swap now");
    for p in PlayerId::ALL {
        ok(&mut g, p.0, Action::FinishDeclaring);
    }
    // Before East has chosen.
    refused(&mut g, 0, Action::Discard { tile: t("8C"), calling: false }, "East must first choose");
    refused(&mut g, 0, Action::MahJong, "East must first choose");
    refused(&mut g, 0, Action::DeclareClosedKong { tile: t("5C") }, "East must first choose");
    refused(&mut g, 1, Action::DeclareBonus { tile: t("1F") }, "East must first choose");
    refused(&mut g, 0, Action::FinishDeclaring, "East must first choose");
    refused(&mut g, 1, Action::ChooseSwap { lots: 1 }, "only East chooses");
    refused(&mut g, 1, Action::PassTile { tile: t("2D") }, "East has not yet chosen");
    refused(&mut g, 0, Action::PassTile { tile: t("1B") }, "East has not yet chosen");
    refused(&mut g, 0, Action::ChooseSwap { lots: 4 }, "at most 3 lots");
    assert!(g.apply(Command::ClaimTimeout).is_err());
    ok(&mut g, 0, Action::ChooseSwap { lots: 2 });
    refused(&mut g, 0, Action::ChooseSwap { lots: 1 }, "already chosen");
    // While the lots are passed.
    refused(&mut g, 0, Action::Discard { tile: t("8C"), calling: false }, "tile swap is not over");
    refused(&mut g, 0, Action::MahJong, "tile swap is not over");
    refused(&mut g, 2, Action::Pass { discard: 0 }, "tile swap is not over");
    refused(&mut g, 0, Action::PassTile { tile: t("9B") }, "do not hold that tile");
    refused(&mut g, 1, Action::PassTile { tile: t("1F") }, "bonus tiles");
    refused(&mut g, 1, Action::PassTile { tile: t("2F") }, "bonus tiles");
    assert_eq!(g.apply(act(9, Action::PassTile { tile: t("1B") })).unwrap_err(), GameError::NoSuchPlayer(9));
    ok(&mut g, 0, Action::PassTile { tile: t("1B") });
    refused(&mut g, 0, Action::PassTile { tile: t("2B") }, "already passed a tile in this lot");
    // The tile East put down is no longer in its hand.
    refused(&mut g, 0, Action::Discard { tile: t("1B"), calling: false }, "tile swap is not over");
    for (p, x) in [(1, "2D"), (2, "RD"), (3, "EW")] {
        ok(&mut g, p, Action::PassTile { tile: t(x) });
    }
    // The second lot: everyone may pass again, once.
    ok(&mut g, 3, Action::PassTile { tile: t("SW") });
    refused(&mut g, 3, Action::PassTile { tile: t("WW") }, "already passed a tile in this lot");
    for (p, x) in [(0, "2B"), (1, "3D"), (2, "GD")] {
        ok(&mut g, p, Action::PassTile { tile: t(x) });
    }
    // Play has started: no more swapping.
    refused(&mut g, 0, Action::PassTile { tile: t("3B") }, "there is no tile swap now");
    refused(&mut g, 0, Action::ChooseSwap { lots: 1 }, "there is no tile swap now");
    ok(&mut g, 0, Action::Discard { tile: t("3B"), calling: false });
}

/// Limit hands that depend on the deal survive a swap: a swap is not a
/// discard, so East going out before discarding is Heaven's Blessing, a
/// player going out on East's first discard is Earth's Blessing, and the
/// first discard may still be an Original Call.
#[test]
fn the_deal_limits_and_the_original_call_survive_a_swap() {
    let fill_s = "1C 1C 4C 7C 9C 2D 2D 5D 8D SW SW NW NW";
    let fill_w = "2C 2C 5C 8C 9C 3D 3D 6D 9D WW WW NW EW";
    let fill_n = "3C 3C 6C 7C 8C 4D 4D 7D 9D GD GD WD WD";
    // East is dealt a complete hand, swaps one lot and gets an EW back for its EW.
    let east = "1B 1B 1B 2C 3C 4C 5D 6D 7D RD RD RD EW";
    let mut g = start(swap_options(), wall([east, fill_s, fill_w, fill_n], "EW", "", "", &swap_options()));
    ok(&mut g, 0, Action::ChooseSwap { lots: 1 });
    for (p, x) in ["EW", "1C", "EW", "3C"].into_iter().enumerate() {
        ok(&mut g, p as u8, Action::PassTile { tile: t(x) });
    }
    let mut events = ok(&mut g, 0, Action::MahJong);
    assert!(events.contains(&Event::MahJong { player: PlayerId(0), tile: Some(t("EW")) }));
    for set in [ClosedSet::Pung(t("1B")), ClosedSet::Chow(t("2C")), ClosedSet::Chow(t("5D")), ClosedSet::Pung(t("RD"))]
    {
        events.extend(ok(&mut g, 0, Action::FormClosedSet { set }));
    }
    events.extend(ok(&mut g, 0, Action::FormClosedSet { set: ClosedSet::Pair(t("EW")) }));
    let score = events
        .iter()
        .find_map(|e| match e {
            Event::HandScored { player: PlayerId(0), score } => Some(score),
            _ => None,
        })
        .expect("East is scored");
    assert!(score.lines().any(|l| l.contains("Heaven's Blessing")), "{}", score.text());

    // South waits on GD; in the swap it passes 1B across and gets North's
    // 1B back. East discards the GD.
    let south = "1B 2B 3B 4C 5C 6C 7D 8D 9D RD RD RD GD";
    let east = "1C 4C 7C 1D 4D 7D 2B 5B 8B 3C 6C 9D GD";
    let north = "1B 3C 6C 7C 8C 4D 4D 7D 9D GD 8D WD WD";
    let mut g = start(swap_options(), wall([east, south, fill_w, north], "5B", "", "", &swap_options()));
    ok(&mut g, 0, Action::ChooseSwap { lots: 1 });
    for (p, x) in ["5B", "1B", "2C", "1B"].into_iter().enumerate() {
        ok(&mut g, p as u8, Action::PassTile { tile: t(x) });
    }
    // East's first discard may be an Original Call: it has not discarded yet.
    ok(&mut g, 0, Action::Discard { tile: t("GD"), calling: true });
    assert!(g.hand().unwrap().seat(Wind::East).calling);
    ok(&mut g, 1, Action::Claim { discard: 1, claim: Claim::MahJong });
    for p in [2u8, 3] {
        ok(&mut g, p, Action::Pass { discard: 1 });
    }
    let mut events = ok(&mut g, 1, Action::UseDiscard { use_as: DiscardUse::Pair });
    for set in [ClosedSet::Chow(t("1B")), ClosedSet::Chow(t("4C")), ClosedSet::Chow(t("7D")), ClosedSet::Pung(t("RD"))]
    {
        events.extend(ok(&mut g, 1, Action::FormClosedSet { set }));
    }
    let score = events
        .iter()
        .find_map(|e| match e {
            Event::HandScored { player: PlayerId(1), score } => Some(score),
            _ => None,
        })
        .expect("South is scored");
    assert!(score.lines().any(|l| l.contains("Earth's Blessing")), "{}", score.text());
}

/// Checks one command's events and every view during a swap: a passed tile
/// goes to its giver and its receiver only, and spectators see no tile.
fn check_swap_privacy(g: &Game, emitted: &[Emitted]) {
    for e in emitted {
        match &e.event {
            Event::TilePassed { player, tile: Some(_), .. } => assert_eq!(e.to, Audience::Only(*player), "{e:?}"),
            Event::TilePassed { player, tile: None, .. } => assert_eq!(e.to, Audience::AllBut(*player), "{e:?}"),
            Event::TileReceived { player, .. } => assert_eq!(e.to, Audience::Only(*player), "{e:?}"),
            _ => {}
        }
    }
    let h = g.hand().unwrap();
    for viewer in [None, Some(PlayerId(0)), Some(PlayerId(1)), Some(PlayerId(2)), Some(PlayerId(3))] {
        let v = g.view(viewer).hand.unwrap();
        for seat in &v.seats {
            if Some(seat.player) != viewer {
                assert!(seat.concealed.is_none(), "{viewer:?} sees {:?}'s tiles", seat.player);
            }
        }
        if let Some(s) = v.swap {
            let own = viewer.and_then(|p| h.swap().unwrap().passed_tile(h.seat_of(p)));
            assert_eq!(s.my_tile, own, "{viewer:?} is shown another's tile");
        }
    }
}

#[test]
fn a_passed_tile_is_seen_only_by_its_giver_and_receiver() {
    let mut g = start(swap_options(), wall(MARKED, "8C", "", "", &swap_options()));
    let mut all = Vec::new();
    all.extend(ok_emitted(&mut g, 0, Action::ChooseSwap { lots: 3 }));
    let passes = [["1B", "1D", "RD", "EW"], ["2B", "2D", "GD", "SW"], ["3B", "3D", "WD", "WW"]];
    for lot in passes {
        for (p, x) in lot.into_iter().enumerate() {
            let emitted = ok_emitted(&mut g, p as u8, Action::PassTile { tile: t(x) });
            check_swap_privacy(&g, &emitted);
            all.extend(emitted);
        }
    }
    // Every player learns exactly the three tiles it passed and the three it
    // received; a spectator learns none.
    for viewer in PlayerId::ALL {
        let mut learnt: Vec<Tile> = all
            .iter()
            .filter(|e| e.to.includes(Some(viewer)))
            .filter_map(|e| match e.event {
                Event::TilePassed { tile, .. } => tile,
                Event::TileReceived { tile, .. } => Some(tile),
                _ => None,
            })
            .collect();
        let i = viewer.index();
        let from = [(i + 2) % 4, (i + 3) % 4, (i + 1) % 4]; // across, from the left, from the right
        let mut want: Vec<Tile> = (0..3).flat_map(|lot| [t(passes[lot][i]), t(passes[lot][from[lot]])]).collect();
        learnt.sort();
        want.sort();
        assert_eq!(learnt, want, "{viewer:?}");
    }
    let public: Vec<&Event> = all.iter().filter(|e| e.to.includes(None)).map(|e| &e.event).collect();
    assert!(public.iter().all(|e| !matches!(e, Event::TilePassed { tile: Some(_), .. } | Event::TileReceived { .. })));
    assert_eq!(public.iter().filter(|e| matches!(e, Event::LotPassed { .. })).count(), 3);
}

/// Wall positions of the tiles dealt to seat `s` in the first hand.
fn dealt_positions(s: usize) -> Vec<usize> {
    let mut at: Vec<usize> = (0..3).flat_map(|r| (0..4).map(move |k| r * 16 + s * 4 + k)).collect();
    at.push(48 + s);
    if s == 0 {
        at.push(52);
    }
    at
}

/// Plays a deal with the given passes and returns what `viewer` and a
/// spectator saw: their events, and their views after every command.
///
/// Each lot, a player passes its tile reserved for `viewer` when `viewer`
/// receives its tile in that lot, and otherwise its first concealed tile of
/// another face.
fn swap_as_seen(wall: Vec<Tile>, viewer: PlayerId, reserved: [Tile; 4]) -> [(Vec<Event>, Vec<TableView>); 2] {
    let mut g = Game::new(swap_options());
    let mut seen: [(Vec<Event>, Vec<TableView>); 2] = Default::default();
    let mut record = |g: &Game, emitted: Vec<Emitted>| {
        for (k, who) in [Some(viewer), None].into_iter().enumerate() {
            seen[k].0.extend(emitted.iter().filter(|e| e.to.includes(who)).map(|e| e.event.clone()));
            seen[k].1.push(g.view(who));
        }
    };
    let emitted = g.apply(Command::StartHand { dice: None, wall: WallSource::Tiles(wall) }).unwrap();
    record(&g, emitted);
    let mut commands: Vec<Command> = PlayerId::ALL.iter().map(|p| act(p.0, Action::FinishDeclaring)).collect();
    commands.push(act(0, Action::ChooseSwap { lots: 3 }));
    for c in commands {
        let emitted = g.apply(c).unwrap();
        record(&g, emitted);
    }
    let me = viewer.index();
    for lot in 1..=3u8 {
        let direction = SwapDirection::of_lot(lot).unwrap();
        for p in PlayerId::ALL {
            let seat = Wind::ALL[p.index()];
            let hand = &g.hand().unwrap().seat(seat).concealed;
            let tile = if p == viewer {
                hand[0]
            } else if direction.receiver(seat).index() == me {
                reserved[p.index()]
            } else {
                *hand.iter().find(|&&x| x != reserved[p.index()]).unwrap()
            };
            let emitted = g.apply(act(p.0, Action::PassTile { tile })).unwrap();
            record(&g, emitted);
        }
    }
    seen
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// Two deals that differ in everything a player may not see (the other
    /// hands, the wall, and so the tiles the others pass among themselves)
    /// look exactly the same to that player through a whole swap, provided
    /// the tiles passed to it are the same; and a spectator sees no
    /// difference at all.
    #[test]
    fn a_swap_tells_a_player_nothing_but_its_own_tiles(seed in any::<u64>(), who in 0u8..4) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut wall = Tile::full_set(false, false);
        wall.shuffle(&mut rng);
        let viewer = PlayerId(who);
        // Each other player's first dealt tile is the one it passes to the viewer.
        let mut fixed = dealt_positions(who as usize);
        let mut reserved = [wall[0]; 4];
        for s in (0..4).filter(|&s| s != who as usize) {
            let at = dealt_positions(s)[0];
            reserved[s] = wall[at];
            fixed.push(at);
        }
        let mut free: Vec<usize> = (0..wall.len()).filter(|i| !fixed.contains(i)).collect();
        let mut moved: Vec<Tile> = free.iter().map(|&i| wall[i]).collect();
        moved.shuffle(&mut rng);
        let mut other = wall.clone();
        for (i, x) in free.drain(..).zip(moved) {
            other[i] = x;
        }
        let a = swap_as_seen(wall, viewer, reserved);
        let b = swap_as_seen(other, viewer, reserved);
        prop_assert_eq!(&a[0].0, &b[0].0, "the player's events differ");
        prop_assert_eq!(&a[0].1, &b[0].1, "the player's views differ");
        prop_assert_eq!(&a[1].0, &b[1].0, "the spectator's events differ");
        prop_assert_eq!(&a[1].1, &b[1].1, "the spectator's views differ");
    }
}

#[test]
fn robots_choose_and_pass_from_their_own_view() {
    let robot = Robot::new(Strategy::default(), swap_options());
    // East's NW is its only lonely tile: it swaps three lots and passes it.
    let east = "1B 2B 3B 4C 5C 6C 7D 8D 9D EW EW RD RD";
    let others = MARKED[1..].to_vec();
    let mut g = start(swap_options(), wall([east, others[0], others[1], others[2]], "NW", "", "", &swap_options()));
    let v = g.view(Some(PlayerId(0)));
    assert_eq!(robot.decide(&v), Some(Action::ChooseSwap { lots: 3 }));
    assert_eq!(robot.decide(&v), robot.decide(&v), "the same view gives the same move");
    assert_eq!(robot.decide(&g.view(Some(PlayerId(1)))), None);
    ok(&mut g, 0, Action::ChooseSwap { lots: 3 });
    assert_eq!(robot.decide(&g.view(Some(PlayerId(0)))), Some(Action::PassTile { tile: t("NW") }));
    // South (4D..6D pungs, 1D 2D 3D, 9C) passes its lonely 9C.
    assert_eq!(robot.decide(&g.view(Some(PlayerId(1)))), Some(Action::PassTile { tile: t("9C") }));

    // A dealt Mah-Jong keeps its Heaven's Blessing: no swap.
    let east = "1B 2B 3B 4C 5C 6C 7D 8D 9D EW EW RD RD";
    let g = start(swap_options(), wall([east, others[0], others[1], others[2]], "RD", "", "", &swap_options()));
    assert_eq!(robot.decide(&g.view(Some(PlayerId(0)))), Some(Action::ChooseSwap { lots: 0 }));
}

/// Robots play whole games with the swap, every move accepted and the
/// invariants checked after each; they do swap.
#[test]
fn robots_play_whole_games_with_the_swap() {
    let options = GameOptions { tile_swap: true, num_rounds: 1, ..GameOptions::default() };
    let table = RobotTable::new(&options).max_steps(100_000);
    let (mut lots, mut hands) = (0, 0);
    for g in 0..4u64 {
        hands += table.play(g, |m| {
            lots += m.emitted.iter().filter(|e| matches!(e.event, Event::LotPassed { .. })).count();
            if m.game.hand_in_progress() && m.game.hand().unwrap().swap().is_some() {
                check_swap_privacy(m.game, m.emitted);
            }
        });
    }
    assert!(lots >= 2 * hands, "robots should usually swap: {lots} lots in {hands} hands");
}

/// The simulator (invariants after every command, no robot move refused)
/// with the swap on, under several option sets.
#[test]
fn simulations_with_the_swap_break_no_invariant() {
    let base = GameOptions { tile_swap: true, ..GameOptions::default() };
    let variants = [
        base.clone(),
        GameOptions { seven_pairs: true, num_rounds: 1, ..base.clone() },
        GameOptions { flowers: false, dead_wall: false, num_rounds: 1, ..base.clone() },
        GameOptions { flowers_loose: true, kong_has_3_types: true, num_rounds: 1, ..base },
    ];
    for (i, options) in variants.into_iter().enumerate() {
        let games = if i == 0 { 20 } else { 6 };
        let summary = simulate(&SimConfig::new(games, 3 + i as u64, options.clone()))
            .unwrap_or_else(|e| panic!("{options:?}: {e}"));
        assert_eq!(summary.games, games);
        let won: u64 = summary.wins_by_player.iter().sum();
        assert_eq!(won + summary.washouts, summary.hands);
        assert!(won > 0);
    }
}

#[test]
fn the_swap_moves_and_events_have_snake_case_tags() {
    assert_eq!(
        serde_json::to_value(Action::ChooseSwap { lots: 2 }).unwrap(),
        json!({"action": "choose_swap", "lots": 2})
    );
    assert_eq!(
        serde_json::to_value(Action::PassTile { tile: t("RD") }).unwrap(),
        json!({"action": "pass_tile", "tile": "RD"})
    );
    let back: Action = serde_json::from_str(r#"{"action":"pass_tile","tile":"1B"}"#).unwrap();
    assert_eq!(back, Action::PassTile { tile: t("1B") });
    assert_eq!(
        serde_json::to_value(Event::LotPassed { lot: 2, direction: SwapDirection::Right }).unwrap(),
        json!({"type": "lot_passed", "lot": 2, "direction": "right"})
    );
    assert_eq!(
        serde_json::to_value(Event::TilePassed { player: PlayerId(3), lot: 1, tile: None }).unwrap(),
        json!({"type": "tile_passed", "player": 3, "lot": 1, "tile": null})
    );
    assert_eq!(serde_json::to_value(Decision::PassTile).unwrap(), json!("pass_tile"));
    assert_eq!(serde_json::to_value(mahjong_engine::rules::hand::Phase::Swapping).unwrap(), json!("swapping"));
}
