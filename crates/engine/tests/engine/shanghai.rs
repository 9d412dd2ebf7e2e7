//! The `shanghai-expat` preset in play (seed 003): claim precedence with the
//! whole preset on (animals in the wall, East's swap, one chow and one suit),
//! and robot games whose every settlement follows the house rules.

use crate::scenario::{ok, play_robot_game, start, t, wall};
use mahjong_engine::rules::presets::preset;
use mahjong_engine::rules::settlement::PaymentKind;
use mahjong_engine::rules::*;

const EAST: &str = "1C 4C 7C 1D 4D 7D 2B 5B 8B 3C 6C 9D 8D";

/// Deals the hands with the whole preset, East swaps nothing and discards 5B.
fn east_discards_5b(south: &str, west: &str, north: &str) -> Game {
    let options = preset("shanghai-expat").unwrap();
    let mut g = start(options.clone(), wall([EAST, south, west, north], "NW", "", "", &options));
    ok(&mut g, 0, Action::ChooseSwap { lots: 0 });
    ok(&mut g, 0, Action::Discard { tile: t("5B"), calling: false });
    g
}

#[test]
fn a_pung_overrides_a_chow() {
    let south = "4B 6B 1C 1C 9C 2D 2D 5D 8D EW EW SW NW";
    let west = "2C 2C 5C 8C 9C 3D 3D 6D 9D SW SW WW NW";
    let north = "5B 5B 3C 3C 6C 7C 8C 4D 4D 7D 9D WW RD";
    let mut g = east_discards_5b(south, west, north);
    let serial = g.hand().unwrap().serial();
    ok(&mut g, 1, Action::Claim { discard: serial, claim: Claim::Chow(Some(ChowPosition::Middle)) });
    ok(&mut g, 3, Action::Claim { discard: serial, claim: Claim::Pung });
    let events = ok(&mut g, 2, Action::Pass { discard: serial });
    assert!(events.iter().any(|e| matches!(e, Event::Punged { player: PlayerId(3), .. })), "{events:?}");
    assert_eq!(g.hand().unwrap().to_act(), Wind::North);
}

#[test]
fn mah_jong_from_any_discard_overrides_a_pung() {
    // West is not next after East, and goes out with its one chow (5B-6B-7B) in one suit.
    let south = "5B 5B 1C 1C 9C 2D 2D 5D 8D EW EW SW NW";
    let west = "1B 1B 1B 2B 2B 2B 3B 3B 3B 6B 7B RD RD";
    let north = "3C 3C 6C 7C 8C 4D 4D 7D 9D WW RD 2C 2C";
    let mut g = east_discards_5b(south, west, north);
    let serial = g.hand().unwrap().serial();
    ok(&mut g, 1, Action::Claim { discard: serial, claim: Claim::Pung });
    ok(&mut g, 2, Action::Claim { discard: serial, claim: Claim::MahJong });
    let events = ok(&mut g, 3, Action::Pass { discard: serial });
    assert!(events.iter().any(|e| matches!(e, Event::MahJong { player: PlayerId(2), .. })), "{events:?}");
    assert!(events.iter().any(|e| matches!(e, Event::ClaimDenied { player: PlayerId(1), .. })), "{events:?}");
    ok(&mut g, 2, Action::UseDiscard { use_as: DiscardUse::Chow(Some(ChowPosition::Lower)) });
    assert_eq!(g.hand().unwrap().to_act(), Wind::West);
}

#[test]
fn robot_games_under_the_whole_preset_settle_by_the_house_rules() {
    let options = preset("shanghai-expat").unwrap();
    let (mut settled, mut doubled, mut washed) = (0, 0, 0);
    for seed in 0..6 {
        play_robot_game(&options, seed, |m| {
            for e in m.emitted {
                let Event::Settled { settlement, .. } = &e.event else { continue };
                settled += 1;
                let hand = m.game.hand().unwrap();
                let raw: Vec<i64> = Wind::ALL.iter().map(|&s| hand.hand_score(s).unwrap().score).collect();
                let dice = hand.double_dice();
                doubled += usize::from(dice);
                for (seat, &score) in raw.iter().enumerate() {
                    // The limit is 1000 (2000 with double dice); double dice double every score.
                    let expected = score.min(1000) * if dice { 2 } else { 1 };
                    assert_eq!(settlement.scores[seat], expected, "seed {}", m.seed);
                }
                for p in &settlement.payments {
                    assert_eq!(p.amount % 100, 0, "seed {}: {p:?} is rounded to 100", m.seed);
                    if p.kind == PaymentKind::Losers {
                        let diff = (settlement.scores[p.from.index()] - settlement.scores[p.to.index()]).abs();
                        assert!(diff >= 50, "seed {}: {p:?} paid on a difference under 50", m.seed);
                    }
                }
                washed += settlement.lines.iter().filter(|l| l.contains("are even")).count();
            }
        });
    }
    assert!(settled > 20 && doubled > 0 && washed > 0, "settled {settled}, double dice {doubled}, washed {washed}");
}
