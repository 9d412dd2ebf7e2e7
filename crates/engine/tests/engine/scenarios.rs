//! Scenarios the reference corpus never plays (its robots never make an
//! Original Call, never chow without naming the position, never hold the
//! Thirteen Unique Wonders), and the engine's refusals, each through
//! `Game::apply` with walls built to deal chosen hands.

use crate::scenario::{act, ok, pass_all, refused, start, t, tiles, wall};
use mahjong_engine::rules::*;

fn options() -> GameOptions {
    GameOptions { flowers: false, ..GameOptions::default() }
}

fn score_of(events: &[Event], player: u8) -> Option<&mahjong_engine::rules::scoring::HandScore> {
    events.iter().find_map(|e| match e {
        Event::HandScored { player: p, score } if p.0 == player => Some(score),
        _ => None,
    })
}

// Seats in the first hand: player 0 East, 1 South, 2 West, 3 North.
const FILLER_S: &str = "1C 1C 4C 7C 9C 2D 2D 5D 8D EW EW SW NW";
const FILLER_W: &str = "2C 2C 5C 8C 9C 3D 3D 6D 9D SW SW WW NW";
const FILLER_N: &str = "3C 3C 6C 7C 8C 4D 4D 7D 9D WW WW NW RD";

#[test]
fn original_call_restricts_the_caller_and_scores_a_double() {
    // East waits on 9B after discarding GD with an Original Call.
    let east = "1B 2B 3B 4B 5B 6B 7B 8B 5C 5C 6D 7D 8D";
    let mut g = start(options(), wall([east, FILLER_S, FILLER_W, FILLER_N], "GD", "RD RD RD 4B 9B", "", &options()));
    ok(&mut g, 0, Action::Discard { tile: t("GD"), calling: true });
    assert!(g.view(None).hand.unwrap().seats[0].calling);
    pass_all(&mut g, &[]);
    // South draws RD and discards it; East may only claim Mah-Jong.
    ok(&mut g, 1, Action::Discard { tile: t("RD"), calling: false });
    refused(&mut g, 0, Action::Claim { discard: 2, claim: Claim::Pung }, "calling player can only claim Mah-Jong");
    pass_all(&mut g, &[]);
    ok(&mut g, 2, Action::Discard { tile: t("RD"), calling: false });
    pass_all(&mut g, &[]);
    ok(&mut g, 3, Action::Discard { tile: t("RD"), calling: false });
    pass_all(&mut g, &[]);
    // East draws 4B: a calling hand can only discard the tile drawn.
    refused(&mut g, 0, Action::Discard { tile: t("1B"), calling: false }, "only discard the tile just drawn");
    refused(&mut g, 0, Action::Discard { tile: t("4B"), calling: true }, "already calling");
    ok(&mut g, 0, Action::Discard { tile: t("4B"), calling: false });
    pass_all(&mut g, &[]);
    ok(&mut g, 1, Action::Discard { tile: t("9B"), calling: false });
    ok(&mut g, 0, Action::Claim { discard: 6, claim: Claim::MahJong });
    pass_all(&mut g, &[0]);
    let mut events = ok(&mut g, 0, Action::UseDiscard { use_as: DiscardUse::Chow(Some(ChowPosition::Upper)) });
    for set in ["1B", "4B"] {
        events.extend(ok(&mut g, 0, Action::FormClosedSet { set: ClosedSet::Chow(t(set)) }));
    }
    events.extend(ok(&mut g, 0, Action::FormClosedSet { set: ClosedSet::Chow(t("6D")) }));
    events.extend(ok(&mut g, 0, Action::FormClosedSet { set: ClosedSet::Pair(t("5C")) }));
    let score = score_of(&events, 0).expect("East is scored once its hand is declared");
    assert!(score.lines().any(|l| l.contains("completing Original Call")), "{}", score.text());
}

/// Robbing: a direct scenario where the fourth tile is drawn by the konger.
#[test]
fn robbing_a_kong_pays_the_robber_with_the_robbing_double() {
    // East is dealt 5B 5B, South discards a 5B, East pungs it, and East's
    // next draw is the fourth 5B; West waits on 5B (4B 6B).
    let east = "5B 5B 1C 2C 3C 1D 2D 3D EW EW NW WD GD";
    let south = "5B 9C 9C 9D 9D 2B 3B 1B 1B 7B 8B 9B 4C";
    let west = "4B 6B 2D 3D 4D 6C 7C 8C RD RD 3B 3B 3B";
    let north = "2B 2B 6D 6D 8D 8D 5C 5C NW NW WD WD 7D";
    // Draws: South SW, South WW (after East's pung), West SW, North GD, East 5B.
    let w = wall([east, south, west, north], "GD", "SW WW SW GD 5B", "", &options());
    let mut g = start(options(), w);
    ok(&mut g, 0, Action::Discard { tile: t("NW"), calling: false });
    pass_all(&mut g, &[]);
    ok(&mut g, 1, Action::Discard { tile: t("5B"), calling: false });
    ok(&mut g, 0, Action::Claim { discard: 2, claim: Claim::Pung });
    pass_all(&mut g, &[0]);
    refused(&mut g, 0, Action::DeclareClosedKong { tile: t("EW") }, "after drawing");
    ok(&mut g, 0, Action::Discard { tile: t("WD"), calling: false });
    pass_all(&mut g, &[]);
    ok(&mut g, 1, Action::Discard { tile: t("WW"), calling: false });
    pass_all(&mut g, &[]);
    ok(&mut g, 2, Action::Discard { tile: t("SW"), calling: false });
    pass_all(&mut g, &[]);
    ok(&mut g, 3, Action::Discard { tile: t("GD"), calling: false });
    pass_all(&mut g, &[]);
    // East drew the fourth 5B and adds it to the pung: the kong can be robbed.
    let events = ok(&mut g, 0, Action::AddToPung { tile: t("5B") });
    let serial = match events.iter().find(|e| matches!(e, Event::AddedToPung { .. })) {
        Some(Event::AddedToPung { discard, .. }) => *discard,
        _ => panic!("no AddedToPung event"),
    };
    refused(&mut g, 0, Action::Discard { tile: t("GD"), calling: false }, "waiting for the other players");
    refused(&mut g, 1, Action::Claim { discard: serial, claim: Claim::Pung }, "only be robbed to go Mah-Jong");
    refused(&mut g, 1, Action::Claim { discard: serial, claim: Claim::MahJong }, "cannot go Mah-Jong");
    ok(&mut g, 1, Action::Pass { discard: serial });
    ok(&mut g, 3, Action::Pass { discard: serial });
    let events = ok(&mut g, 2, Action::Claim { discard: serial, claim: Claim::MahJong });
    assert!(events.iter().any(|e| matches!(e, Event::RobbedKong { player: PlayerId(2), .. })));
    assert_eq!(g.hand().unwrap().seat(Wind::East).sets[0].kind, SetKind::Pung, "the kong is a pung again");
    let mut events = ok(&mut g, 2, Action::UseDiscard { use_as: DiscardUse::Chow(Some(ChowPosition::Middle)) });
    for set in [ClosedSet::Chow(t("2D")), ClosedSet::Chow(t("6C")), ClosedSet::Pung(t("3B")), ClosedSet::Pair(t("RD"))]
    {
        events.extend(ok(&mut g, 2, Action::FormClosedSet { set }));
    }
    let score = score_of(&events, 2).unwrap();
    assert!(score.lines().any(|l| l.contains("robbing a kong")), "{}", score.text());
    for p in [0u8, 1, 3] {
        events.extend(ok(&mut g, p, Action::ShowTiles));
    }
    assert!(events.iter().any(|e| matches!(e, Event::Settled { .. })));
}

#[test]
fn thirteen_unique_wonders_on_a_discard_is_a_limit_hand() {
    let east = "1C 4C 7C 1D 4D 7D 2B 5B 8B 3C 6C 9D 8D";
    let south = "1B 9B 1C 9C 1D 9D EW SW WW NW RD WD WD";
    let west = "4B 6B 2D 3D 4D 6C 7C 8C 3B 3B 3B 2C 2C";
    let north = "2B 2B 6D 6D 8D 8D 5C 5C 7B 7B 3D 3D 4C";
    let w = wall([east, south, west, north], "GD", "", "", &options());
    let mut g = start(options(), w);
    ok(&mut g, 0, Action::Discard { tile: t("GD"), calling: false });
    ok(&mut g, 1, Action::Claim { discard: 1, claim: Claim::MahJong });
    pass_all(&mut g, &[1]);
    refused(&mut g, 1, Action::UseDiscard { use_as: DiscardUse::Pair }, "");
    refused(&mut g, 1, Action::ShowTiles, "winner must finish");
    let events = ok(&mut g, 1, Action::UseDiscard { use_as: DiscardUse::SpecialSet });
    let score = score_of(&events, 1).expect("the special set completes the hand");
    assert_eq!(score.score, 1000);
    assert!(score.lines().any(|l| l.contains("Thirteen Unique Wonders")), "{}", score.text());
}

#[test]
fn a_chow_claimed_without_a_position_asks_for_it() {
    let east = "1C 4C 7C 1D 4D 7D 2B 5B 8B 3C 6C 9D 8D";
    let south = "4B 5B 6B 7B 9C 9C 9D 1B 1B EW SW WW NW";
    let w = wall([east, south, FILLER_W, FILLER_N], "5B", "", "", &options());
    let mut g = start(options(), w);
    ok(&mut g, 0, Action::Discard { tile: t("5B"), calling: false });
    refused(&mut g, 2, Action::Claim { discard: 1, claim: Claim::Chow(None) }, "only the next player may chow");
    refused(&mut g, 1, Action::Claim { discard: 9, claim: Claim::Chow(None) }, "discard 9 is not the current one");
    ok(&mut g, 1, Action::Claim { discard: 1, claim: Claim::Chow(None) });
    refused(&mut g, 1, Action::Pass { discard: 1 }, "already answered");
    let mut events = Vec::new();
    for p in [2u8, 3] {
        events.extend(ok(&mut g, p, Action::Pass { discard: 1 }));
    }
    assert!(events.iter().any(|e| matches!(e, Event::ChowPositionNeeded { player: PlayerId(1), .. })));
    assert_eq!(
        g.view(Some(PlayerId(1))).hand.unwrap().my_decision,
        Some(mahjong_engine::rules::Decision::ChooseChowPosition)
    );
    refused(&mut g, 2, Action::ChooseChowPosition { position: ChowPosition::Lower }, "no chow claim waiting");
    refused(&mut g, 1, Action::ChooseChowPosition { position: ChowPosition::Upper }, "cannot make that chow");
    let events = ok(&mut g, 1, Action::ChooseChowPosition { position: ChowPosition::Middle });
    assert!(events.iter().any(|e| matches!(e, Event::Chowed { position: ChowPosition::Middle, .. })));
    assert_eq!(g.hand().unwrap().seat(Wind::South).sets[0].to_string(), "4B-5B-6B");
}

#[test]
fn heavens_blessing_and_a_closed_kong_robbed_only_for_the_wonders() {
    // East is dealt a complete hand.
    let east = "1B 1B 1B 2C 3C 4C 5D 6D 7D RD RD RD EW";
    let w = wall([east, FILLER_S, FILLER_W, FILLER_N], "EW", "", "", &options());
    let mut g = start(options(), w);
    let mut events = ok(&mut g, 0, Action::MahJong);
    for set in [ClosedSet::Pung(t("1B")), ClosedSet::Chow(t("2C")), ClosedSet::Chow(t("5D")), ClosedSet::Pung(t("RD"))]
    {
        events.extend(ok(&mut g, 0, Action::FormClosedSet { set }));
    }
    refused(&mut g, 0, Action::FormClosedSet { set: ClosedSet::Pung(t("EW")) }, "");
    events.extend(ok(&mut g, 0, Action::FormClosedSet { set: ClosedSet::Pair(t("EW")) }));
    let score = score_of(&events, 0).unwrap();
    assert!(score.lines().any(|l| l.contains("Heaven's Blessing")), "{}", score.text());
    assert_eq!(score.score, 1000);

    // A concealed kong may be robbed only for Thirteen Unique Wonders: North
    // could go out with the 1B (a chow) but may not rob; South may.
    let east = "1B 1B 1B 1B 1C 2C 3C 1D 2D 3D EW EW SW";
    let south = "9B 1C 9C 1D 9D EW SW WW NW RD WD GD GD";
    let north = "2B 3B 4D 5D 6D 6C 7C 8C 7B 8B 9B RD RD";
    let w = wall([east, south, FILLER_W, north], "9C", "", "", &options());
    let mut g = start(options(), w);
    let events = ok(&mut g, 0, Action::DeclareClosedKong { tile: t("1B") });
    assert!(events.iter().any(|e| matches!(e, Event::DeclaredClosedKong { discard: 1, .. })));
    refused(
        &mut g,
        3,
        Action::Claim { discard: 1, claim: Claim::MahJong },
        "only be robbed for Thirteen Unique Wonders",
    );
    ok(&mut g, 3, Action::Pass { discard: 1 });
    ok(&mut g, 2, Action::Pass { discard: 1 });
    let events = ok(&mut g, 1, Action::Claim { discard: 1, claim: Claim::MahJong });
    assert!(events.iter().any(|e| matches!(e, Event::RobbedKong { player: PlayerId(1), .. })));
    assert_eq!(g.hand().unwrap().seat(Wind::East).sets[0].kind, SetKind::ClosedPung);
    let events = ok(&mut g, 1, Action::UseDiscard { use_as: DiscardUse::SpecialSet });
    let score = score_of(&events, 1).unwrap();
    assert_eq!(score.score, 1000, "{}", score.text());
}

#[test]
fn refusals_are_specific_and_change_nothing() {
    let w = wall(["1C 4C 7C 1D 4D 7D 2B 5B 8B 3C 6C 9D 8D", FILLER_S, FILLER_W, FILLER_N], "5B", "", "", &options());
    let mut g = Game::new(options());
    let before = g.clone();
    let err = g.apply(Command::StartHand { dice: None, wall: WallSource::Tiles(tiles("1B 2B")) }).unwrap_err();
    assert!(err.to_string().contains("2 tiles given"), "{err}");
    assert!(g == before);
    assert_eq!(g.apply(Command::ClaimTimeout).unwrap_err(), GameError::NoHand);
    g.apply(Command::StartHand { dice: None, wall: WallSource::Tiles(w) }).unwrap();
    assert_eq!(
        g.apply(Command::StartHand { dice: None, wall: WallSource::Shuffled { seed: 1 } }).unwrap_err(),
        GameError::HandInProgress
    );
    refused(&mut g, 1, Action::FinishDeclaring, "not your turn to declare");
    // While declaring, a discard is refused for what it is, not as out of turn.
    refused(&mut g, 0, Action::Discard { tile: t("1C"), calling: false }, "cannot discard while declaring");
    refused(&mut g, 2, Action::Discard { tile: t("1C"), calling: false }, "still declaring");
    for p in PlayerId::ALL {
        ok(&mut g, p.0, Action::FinishDeclaring);
    }
    refused(&mut g, 0, Action::FinishDeclaring, "declaring is over");
    refused(&mut g, 1, Action::Discard { tile: t("1C"), calling: false }, "not your turn to discard");
    refused(&mut g, 0, Action::Discard { tile: t("9B"), calling: false }, "do not hold that tile");
    refused(&mut g, 0, Action::MahJong, "not complete");
    refused(&mut g, 0, Action::DeclareClosedKong { tile: t("1C") }, "four of that tile");
    refused(&mut g, 0, Action::DeclareBonus { tile: t("1C") }, "only flowers, seasons and animals");
    refused(&mut g, 2, Action::Pass { discard: 0 }, "no discard or kong to claim");
    refused(&mut g, 0, Action::ShowTiles, "only after Mah-Jong");
    ok(&mut g, 0, Action::Discard { tile: t("5B"), calling: false });
    refused(&mut g, 0, Action::Claim { discard: 1, claim: Claim::Pung }, "your own discard");
    refused(&mut g, 3, Action::Claim { discard: 1, claim: Claim::Kong }, "three matching tiles");
    refused(&mut g, 3, Action::Claim { discard: 1, claim: Claim::MahJong }, "cannot go Mah-Jong");
    refused(&mut g, 3, Action::Claim { discard: 2, claim: Claim::Pung }, "not the current one");
    assert_eq!(g.apply(act(7, Action::Pass { discard: 1 })).unwrap_err(), GameError::NoSuchPlayer(7));
    // The table's timeout passes for everyone who has not answered.
    let events = g.apply(Command::ClaimTimeout).unwrap();
    let timeouts = events.iter().filter(|e| matches!(e.event, Event::Passed { timeout: true, .. })).count();
    assert_eq!(timeouts, 3);
    assert_eq!(g.hand().unwrap().to_act(), Wind::South);
}

#[test]
fn a_table_may_abandon_a_hand_and_end_the_game_between_hands() {
    let mut g = Game::new(options());
    assert_eq!(g.apply(Command::AbandonHand).unwrap_err(), GameError::NoHand);
    g.apply(Command::StartHand { dice: None, wall: WallSource::Shuffled { seed: 3 } }).unwrap();
    assert_eq!(g.apply(Command::EndGame).unwrap_err(), GameError::HandInProgress);
    let events = g.apply(Command::AbandonHand).unwrap();
    assert!(events.iter().any(|e| matches!(&e.event, Event::WashedOut { reason } if reason == "abandoned")));
    assert!(!g.hand_in_progress() && !g.is_over());
    let events = g.apply(Command::EndGame).unwrap();
    assert!(events.iter().any(|e| matches!(e.event, Event::GameOver { .. })));
    assert_eq!(g.apply(Command::EndGame).unwrap_err(), GameError::GameOver);
}
