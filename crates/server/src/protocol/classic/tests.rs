//! The message lines' tests: round trips of the lines seen in the corpus,
//! the errors, the wire's escaping, and properties over every message.

use super::*;
use crate::rules::tile::{Tile, Wind};
use crate::rules::tileset::ChowPosition;
use proptest::prelude::*;

fn t(code: &str) -> Tile {
    code.parse().expect("test tile code")
}

fn cround(line: &str) -> ControllerMessage {
    let m = ControllerMessage::parse(line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
    assert_eq!(m.to_string(), line, "round trip of {line:?}");
    m
}

fn pround(line: &str) -> PlayerMessage {
    let m = PlayerMessage::parse(line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
    assert_eq!(m.to_string(), line, "round trip of {line:?}");
    m
}

#[test]
fn every_move_is_written_as_the_message_that_reads_back_as_it() {
    use crate::rules::command::{Action, Claim, ClosedSet, DiscardUse};
    let tile = t("5D");
    let open = MoveContext { claim_window_open: true, ..MoveContext::default() };
    let going_out = MoveContext { mah_jonging: true, ..MoveContext::default() };
    let placing = MoveContext { chow_position_pending: true, ..MoveContext::default() };
    let plain = MoveContext::default();
    let moves = [
        (Action::DeclareBonus { tile: t("2F") }, plain, "DeclareSpecial 2F"),
        (Action::FinishDeclaring, plain, "DeclareSpecial --"),
        (Action::Discard { tile, calling: true }, plain, "Discard 5D 1"),
        (Action::Pass { discard: 7 }, open, "NoClaim 7"),
        (Action::Claim { discard: 7, claim: Claim::Chow(None) }, open, "Chow 7 AnyPos"),
        (Action::Claim { discard: 7, claim: Claim::Chow(Some(ChowPosition::Upper)) }, open, "Chow 7 Upper"),
        (Action::Claim { discard: 7, claim: Claim::Pung }, open, "Pung 7"),
        (Action::Claim { discard: 7, claim: Claim::Kong }, open, "Kong 7"),
        (Action::Claim { discard: 7, claim: Claim::MahJong }, open, "MahJong 7"),
        (Action::ChooseChowPosition { position: ChowPosition::Middle }, placing, "Chow 7 Middle"),
        (Action::MahJong, plain, "MahJong 0"),
        (Action::UseDiscard { use_as: DiscardUse::Chow(Some(ChowPosition::Lower)) }, going_out, "Chow 0 Lower"),
        (Action::UseDiscard { use_as: DiscardUse::Pung }, going_out, "Pung 0"),
        (Action::UseDiscard { use_as: DiscardUse::Pair }, going_out, "Pair"),
        (Action::UseDiscard { use_as: DiscardUse::SpecialSet }, going_out, "SpecialSet"),
        (Action::DeclareClosedKong { tile }, plain, "DeclareClosedKong 5D"),
        (Action::AddToPung { tile }, plain, "AddToPung 5D"),
        (Action::FormClosedSet { set: ClosedSet::Pung(tile) }, plain, "FormClosedPung 5D"),
        (Action::FormClosedSet { set: ClosedSet::Chow(tile) }, plain, "FormClosedChow 5D"),
        (Action::FormClosedSet { set: ClosedSet::Pair(tile) }, plain, "FormClosedPair 5D"),
        (Action::FormClosedSet { set: ClosedSet::SpecialSet }, plain, "FormClosedSpecialSet"),
        (Action::ShowTiles, plain, "ShowTiles"),
    ];
    for (action, context, line) in moves {
        let message = PlayerMessage::from_action(&action, 7).unwrap_or_else(|| panic!("{action:?}"));
        assert_eq!(message.to_string(), line, "{action:?}");
        assert_eq!(message.to_action(context), Some(action.clone()), "{line} in {context:?}");
    }
    assert_eq!(PlayerMessage::from_action(&Action::ChooseSwap { lots: 1 }, 7), None, "no words for the swap");
    assert_eq!(PlayerMessage::from_action(&Action::PassTile { tile }, 7), None);
}

#[test]
fn controller_messages_seen_in_the_corpus() {
    assert_eq!(
        cround("ConnectReply 1110 1 "),
        ControllerMessage::ConnectReply { pvers: 1110, id: 1, reason: String::new() }
    );
    assert_eq!(cround("Player 2 R2"), ControllerMessage::Player { id: 2, name: "R2".into() });
    assert_eq!(
        cround("Game 1 2 3 4 E 0 1 0 0 0 0 1110 1"),
        ControllerMessage::Game {
            east: 1,
            south: 2,
            west: 3,
            north: 4,
            round: Wind::East,
            hands_as_east: 0,
            firsteast: 1,
            east_score: 0,
            south_score: 0,
            west_score: 0,
            north_score: 0,
            protversion: 1110,
            manager: 1,
        }
    );
    assert_eq!(
        cround("GameOption 0 ScoreLimit nat 0 1 1000 limit on hand score"),
        ControllerMessage::GameOption {
            id: 0,
            optentry: GameOptionEntry {
                name: "ScoreLimit".into(),
                option_type: "nat".into(),
                protversion: 0,
                enabled: true,
                value: "1000".into(),
                desc: "limit on hand score".into(),
            },
        }
    );
    cround("GameOption 0 End bool 0 1 1 end of option list");
    cround("GameOption 0 LosersPurity bool 0 1 0 losing hands score doubles for pure, concealed etc.");
    assert_eq!(
        cround("Pause 3 0 to start play"),
        ControllerMessage::Pause { exempt: 3, requestor: 0, reason: "to start play".into() }
    );
    assert_eq!(cround("PlayerReady 2"), ControllerMessage::PlayerReady { id: 2 });
    assert_eq!(cround("StartPlay 0"), ControllerMessage::StartPlay { id: 0 });
    assert_eq!(cround("NewRound S"), ControllerMessage::NewRound { round: Wind::South });
    assert_eq!(cround("NewHand 1 2 14"), ControllerMessage::NewHand { east: 1, start_wall: 2, start_stack: 14 });
    assert_eq!(cround("PlayerDraws 1 5D"), ControllerMessage::PlayerDraws { id: 1, tile: Some(t("5D")) });
    assert_eq!(cround("PlayerDraws 3 --"), ControllerMessage::PlayerDraws { id: 3, tile: None });
    assert_eq!(cround("PlayerDrawsLoose 2 RD"), ControllerMessage::PlayerDrawsLoose { id: 2, tile: Some(t("RD")) });
    assert_eq!(
        cround("PlayerDeclaresSpecial 4 2S"),
        ControllerMessage::PlayerDeclaresSpecial { id: 4, tile: Some(t("2S")) }
    );
    assert_eq!(cround("PlayerDeclaresSpecial 4 --"), ControllerMessage::PlayerDeclaresSpecial { id: 4, tile: None });
    assert_eq!(
        cround("PlayerDiscards 2 NW 17 0"),
        ControllerMessage::PlayerDiscards { id: 2, tile: t("NW"), discard: 17, calling: false }
    );
    assert_eq!(
        cround("PlayerDoesntClaim 3 17 0"),
        ControllerMessage::PlayerDoesntClaim { id: 3, discard: 17, timeout: false }
    );
    assert_eq!(
        cround("PlayerClaimsChow 2 5 Middle"),
        ControllerMessage::PlayerClaimsChow { id: 2, discard: 5, cpos: Some(ChowPosition::Middle) }
    );
    assert_eq!(cround("PlayerClaimsPung 1 12"), ControllerMessage::PlayerClaimsPung { id: 1, discard: 12 });
    cround("PlayerClaimsKong 1 12");
    cround("PlayerClaimsMahJong 4 30");
    assert_eq!(
        cround("ClaimDenied 1 There was a prior claim"),
        ControllerMessage::ClaimDenied { id: 1, reason: "There was a prior claim".into() }
    );
    assert_eq!(
        cround("PlayerChows 2 7B Upper"),
        ControllerMessage::PlayerChows { id: 2, tile: t("7B"), cpos: Some(ChowPosition::Upper) }
    );
    assert_eq!(cround("PlayerPungs 1 WD"), ControllerMessage::PlayerPungs { id: 1, tile: t("WD") });
    cround("PlayerKongs 1 WD");
    cround("PlayerPairs 3 9C");
    assert_eq!(
        cround("PlayerDeclaresClosedKong 2 EW 33"),
        ControllerMessage::PlayerDeclaresClosedKong { id: 2, tile: t("EW"), discard: 33 }
    );
    cround("PlayerAddsToPung 2 6C 40");
    cround("PlayerRobsKong 4 6C");
    assert_eq!(
        cround("DangerousDiscard 3 41 1"),
        ControllerMessage::DangerousDiscard { id: 3, discard: 41, nochoice: true }
    );
    assert_eq!(cround("PlayerMahJongs 1 --"), ControllerMessage::PlayerMahJongs { id: 1, tile: None });
    cround("PlayerMahJongs 1 3B");
    cround("PlayerFormsClosedPung 1 RD");
    cround("PlayerFormsClosedChow 3 1D");
    cround("PlayerFormsClosedPair 1 RD");
    assert_eq!(
        cround("PlayerShowsTiles 3 3B 6B 5B 7D"),
        ControllerMessage::PlayerShowsTiles { id: 3, tiles: vec![t("3B"), t("6B"), t("5B"), t("7D")] }
    );
    assert_eq!(cround("WashOut wall exhausted"), ControllerMessage::WashOut { reason: "wall exhausted".into() });
    assert_eq!(cround("GameOver"), ControllerMessage::GameOver);
}

#[test]
fn multi_line_texts_keep_their_line_feeds() {
    let line = "HandScore 1 36 basic        20 (going Mah Jong)\n6C-6C-6C      2 (open pung of minors)\ntotal pts    36\ntotal dbls    0\nSCORE:       36";
    match cround(line) {
        ControllerMessage::HandScore { id, score, explanation } => {
            assert_eq!((id, score), (1, 36));
            assert_eq!(explanation.lines().count(), 5);
            assert!(explanation.ends_with("SCORE:       36"));
        }
        other => panic!("{other:?}"),
    }
    let line = "Settlement 216 -64 -76 -76 South pays East     72\nEast  GAINS   216\n\nNorth LOSES    76\n\n";
    match cround(line) {
        ControllerMessage::Settlement { east, south, west, north, explanation } => {
            assert_eq!([east, south, west, north], [216, -64, -76, -76]);
            assert!(explanation.ends_with("76\n\n"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn player_messages_seen_in_the_corpus() {
    assert_eq!(pround("Connect 1110 0 R1"), PlayerMessage::Connect { pvers: 1110, last_id: 0, name: "R1".into() });
    assert_eq!(pround("ListGameOptions 0"), PlayerMessage::ListGameOptions { include_disabled: false });
    assert_eq!(pround("Ready"), PlayerMessage::Ready);
    assert_eq!(pround("DeclareSpecial --"), PlayerMessage::DeclareSpecial { tile: None });
    assert_eq!(pround("DeclareSpecial 3F"), PlayerMessage::DeclareSpecial { tile: Some(t("3F")) });
    assert_eq!(pround("Discard 9D 0"), PlayerMessage::Discard { tile: t("9D"), calling: false });
    assert_eq!(pround("NoClaim 12"), PlayerMessage::NoClaim { discard: 12 });
    assert_eq!(pround("Chow 12 Lower"), PlayerMessage::Chow { discard: 12, cpos: Some(ChowPosition::Lower) });
    assert_eq!(pround("Chow 0 AnyPos"), PlayerMessage::Chow { discard: 0, cpos: None });
    assert_eq!(pround("Pung 0"), PlayerMessage::Pung { discard: 0 });
    assert_eq!(pround("Kong 31"), PlayerMessage::Kong { discard: 31 });
    assert_eq!(pround("MahJong 0"), PlayerMessage::MahJong { discard: 0 });
    assert_eq!(pround("DeclareClosedKong GD"), PlayerMessage::DeclareClosedKong { tile: t("GD") });
    assert_eq!(pround("AddToPung 4C"), PlayerMessage::AddToPung { tile: t("4C") });
    assert_eq!(pround("Pair"), PlayerMessage::Pair);
    assert_eq!(pround("FormClosedPung SW"), PlayerMessage::FormClosedPung { tile: t("SW") });
    assert_eq!(pround("FormClosedChow 1C"), PlayerMessage::FormClosedChow { tile: t("1C") });
    assert_eq!(pround("FormClosedPair 8B"), PlayerMessage::FormClosedPair { tile: t("8B") });
    assert_eq!(pround("ShowTiles"), PlayerMessage::ShowTiles);
}

#[test]
fn rarer_messages_round_trip() {
    for line in [
        "Error 7 You can't do that",
        "InfoTiles 2 1B 2B * 3C-3C-3C * 1F",
        "StateSaved 1 /tmp/game.mjs",
        "Reconnect",
        "AuthReqd basic ",
        "Redirect host:9000",
        "StopPlay lost connection",
        "CanMahJong -- 1",
        "CanMahJong 5D 0",
        "PlayerSpecialSet 1 NW 1B 9B 1C 9C",
        "PlayerFormsClosedSpecialSet 1 1B 9B",
        "PlayerOptionSet DelayTime 1 50 ",
        "ChangeManager 1 2",
        "Message 0 3 hello there",
        "Wall 1B 2B 3B",
        "# a comment",
        "SwapTile 2 1B 2B",
        "PlayerChows 2 7B AnyPos",
    ] {
        cround(line);
    }
    for line in [
        "SaveState ",
        "LoadState saved.mjs",
        "RequestReconnect",
        "AuthInfo basic secret",
        "NewAuthInfo basic newsecret",
        "Disconnect",
        "RequestPause tea",
        "QueryMahJong --",
        "DeclareWashOut",
        "SpecialSet",
        "FormClosedSpecialSet",
        "SetPlayerOption LocalTimeouts 0 1 ",
        "SetGameOption ScoreLimit 500",
        "QueryGameOption NumRounds",
        "ChangeManager 0",
        "SendMessage 0 good luck",
        "SwapTile 1 EW RD",
        "Discard 1F 1",
    ] {
        pround(line);
    }
}

#[test]
fn aliases_are_accepted_and_printed_in_full() {
    assert_eq!(PlayerMessage::parse("d 5D 0").map(|m| m.to_string()), Ok("Discard 5D 0".into()));
    assert_eq!(PlayerMessage::parse("n 3").map(|m| m.to_string()), Ok("NoClaim 3".into()));
    assert_eq!(PlayerMessage::parse("c 3 m").map(|m| m.to_string()), Ok("Chow 3 Middle".into()));
    assert_eq!(PlayerMessage::parse("ds --").map(|m| m.to_string()), Ok("DeclareSpecial --".into()));
    let c = ControllerMessage::parse("Comment hello").expect("comment alias");
    assert_eq!(c.to_string(), "# hello");
    assert_eq!(c.message_type(), "Comment");
}

#[test]
fn text_fields_escape_a_leading_space_or_backslash() {
    let m = ControllerMessage::Player { id: 1, name: " spaced".into() };
    assert_eq!(m.to_string(), "Player 1 \\ spaced");
    assert_eq!(ControllerMessage::parse(&m.to_string()), Ok(m));
    let m = PlayerMessage::Connect { pvers: 1110, last_id: 0, name: "\\back".into() };
    assert_eq!(m.to_string(), "Connect 1110 0 \\\\back");
    assert_eq!(PlayerMessage::parse(&m.to_string()), Ok(m));
    // A leading line feed is not escaped by the encoder and must survive.
    let m = ControllerMessage::HandScore { id: 1, score: 2, explanation: "\nx".into() };
    assert_eq!(ControllerMessage::parse(&m.to_string()), Ok(m));
    // An empty text still gets its separating space.
    assert_eq!(ControllerMessage::WashOut { reason: String::new() }.to_string(), "WashOut ");
    assert_eq!(ControllerMessage::parse("WashOut"), Ok(ControllerMessage::WashOut { reason: String::new() }));
}

#[test]
fn message_type_names() {
    assert_eq!(cround("PlayerDiscards 2 NW 17 1").message_type(), "PlayerDiscards");
    assert_eq!(cround("GameOver").message_type(), "GameOver");
    assert_eq!(pround("NoClaim 1").message_type(), "NoClaim");
}

#[test]
fn errors_are_specific() {
    use ClassicParseError as E;
    assert_eq!(ControllerMessage::parse(""), Err(E::Empty { side: "controller" }));
    assert_eq!(PlayerMessage::parse("  \t"), Err(E::Empty { side: "player" }));
    assert_eq!(
        ControllerMessage::parse("Discard 5D 0"),
        Err(E::UnknownMessageType { side: "controller", name: "Discard".into() })
    );
    assert_eq!(
        ControllerMessage::parse("PlayerDiscards 2 NW"),
        Err(E::MissingField { message: "PlayerDiscards", field: "discard" })
    );
    assert_eq!(
        ControllerMessage::parse("PlayerDiscards x NW 1 0"),
        Err(E::BadInteger { message: "PlayerDiscards", field: "id", value: "x".into() })
    );
    assert_eq!(
        ControllerMessage::parse("PlayerDiscards 99999999999 NW 1 0"),
        Err(E::BadInteger { message: "PlayerDiscards", field: "id", value: "99999999999".into() })
    );
    assert_eq!(
        ControllerMessage::parse("PlayerDiscards 1 0W 1 0"),
        Err(E::BadTile { message: "PlayerDiscards", field: "tile", value: "0W".into() })
    );
    assert_eq!(
        ControllerMessage::parse("PlayerDiscards 1 -- 1 0"),
        Err(E::HiddenTile { message: "PlayerDiscards", field: "tile" })
    );
    assert_eq!(
        ControllerMessage::parse("PlayerDiscards 1 1B 1 2"),
        Err(E::BadBool { message: "PlayerDiscards", field: "calling", value: "2".into() })
    );
    assert_eq!(
        ControllerMessage::parse("NewRound X"),
        Err(E::BadWind { message: "NewRound", field: "round", value: "X".into() })
    );
    assert_eq!(
        PlayerMessage::parse("Chow 3 Sideways"),
        Err(E::BadChowPosition { message: "Chow", field: "cpos", value: "Sideways".into() })
    );
    assert_eq!(
        PlayerMessage::parse("SetPlayerOption Volume 0 1 x"),
        Err(E::BadPlayerOption { message: "SetPlayerOption", field: "option", value: "Volume".into() })
    );
    assert_eq!(
        PlayerMessage::parse("QueryGameOption AVeryLongOptionName"),
        Err(E::WordTooLong { message: "QueryGameOption", field: "optname", value: "AVeryLongOptionName".into() })
    );
    assert_eq!(PlayerMessage::parse("Ready now"), Err(E::TrailingData { message: "Ready", extra: "now".into() }));
    assert_eq!(
        ControllerMessage::parse("PlayerShowsTiles 1 1B XX"),
        Err(E::BadTile { message: "PlayerShowsTiles", field: "tiles", value: "XX".into() })
    );
    let e = ControllerMessage::parse("GameOption 0 Timeout").expect_err("truncated option");
    assert_eq!(e, E::MissingField { message: "GameOption", field: "type" });
    assert_eq!(e.to_string(), "GameOption: missing field 'type'");
    let long = "Q".repeat(500);
    let e = PlayerMessage::parse(&long).expect_err("garbage");
    assert!(e.to_string().len() < 120, "{e}");
}

#[test]
fn lenient_spacing_and_trailing_whitespace() {
    assert_eq!(PlayerMessage::parse("Discard  5D\t0 "), Ok(PlayerMessage::Discard { tile: t("5D"), calling: false }));
    assert_eq!(PlayerMessage::parse("Ready\r"), Ok(PlayerMessage::Ready));
}

#[test]
fn wire_escaping_round_trips() {
    let line = "HandScore 1 2 a\\b\nc\n";
    let wire = encode_wire(line);
    assert_eq!(wire, "HandScore 1 2 a\\\\b\\\r\nc\\\r\n\r\n");
    let mut dec = WireLineDecoder::new();
    let mut got = None;
    for physical in wire.split_inclusive('\n') {
        assert!(got.is_none());
        got = dec.push_line(physical);
    }
    assert_eq!(got.as_deref(), Some(line));
    assert!(!dec.is_pending());
    // An escaped backslash at the end of a line does not continue it.
    assert_eq!(dec.push_line("Player 1 x\\\\\r\n").as_deref(), Some("Player 1 x\\"));
}

proptest! {
    #[test]
    fn garbage_never_panics(s in "\\PC*") {
        let _ = ControllerMessage::parse(&s);
        let _ = PlayerMessage::parse(&s);
        let mut dec = WireLineDecoder::new();
        let _ = dec.push_line(&s);
    }

    #[test]
    fn parsed_messages_print_to_a_fixed_point(
        name in prop::sample::select(vec![
            "PlayerDiscards", "HandScore", "GameOption", "PlayerShowsTiles", "Player",
            "Game", "PlayerChows", "Discard", "Chow", "Connect", "SetPlayerOption", "#",
            "DeclareSpecial", "CanMahJong", "NewRound", "AuthInfo",
        ]),
        fields in prop::collection::vec(
            prop::sample::select(vec![
                "1", "0", "-3", "5D", "--", "RD", "E", "Lower", "AnyPos", "nat", "bool",
                " ", "  ", "\\", "\n", "\t", "x", "é", "DelayTime", "2147483648",
            ]),
            0..10,
        ),
    ) {
        let line = format!("{name} {}", fields.concat());
        if let Ok(m) = ControllerMessage::parse(&line) {
            prop_assert_eq!(ControllerMessage::parse(&m.to_string()), Ok(m));
        }
        if let Ok(m) = PlayerMessage::parse(&line) {
            prop_assert_eq!(PlayerMessage::parse(&m.to_string()), Ok(m));
        }
    }

    #[test]
    fn any_text_survives_a_round_trip(text in "\\PC*") {
        let m = ControllerMessage::Settlement { east: 1, south: -1, west: 0, north: 0, explanation: text };
        prop_assert_eq!(ControllerMessage::parse(&m.to_string()), Ok(m));
    }

    #[test]
    fn wire_encoding_is_undone(text in "[ -~\n\\\\]*") {
        let wire = encode_wire(&text);
        let mut dec = WireLineDecoder::new();
        let mut out = Vec::new();
        for physical in wire.split_inclusive('\n') {
            out.extend(dec.push_line(physical));
        }
        prop_assert_eq!(out, vec![text]);
    }
}
