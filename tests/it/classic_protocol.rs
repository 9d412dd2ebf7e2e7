//! Every record of every game of the reference conformance corpus must parse,
//! and printing the parsed message must give back the logged text exactly.

use crate::common;

use common::corpus_games;

use mahjong::protocol::classic::ControllerMessage;
use mahjong::protocol::reference_log::{Direction, LogMessage, read_log};

/// Counts records independently of the reader: one per physical line that
/// starts a record, plus one per record glued to the end of a `(null)`.
fn count_record_starts(text: &str) -> usize {
    let line_starts = text.split('\n').filter(|l| l.starts_with("<cnx") || l.starts_with(">cnx")).count();
    let glued = text.matches("(null)<cnx").count() + text.matches("(null)>cnx").count();
    line_starts + glued
}

#[test]
fn every_corpus_record_parses_and_prints_back_exactly() {
    let mut total = 0usize;
    for game in corpus_games() {
        let name = game.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let path = game.join("game.log");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let records = read_log(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(records.len(), count_record_starts(&text), "{name}: number of records");

        let mut closed = 0;
        let mut game_over = 0;
        for r in &records {
            let printed = match (&r.message, r.direction) {
                (LogMessage::Player(m), Direction::Received) => m.to_string(),
                (LogMessage::Controller(m), Direction::Sent) => {
                    if matches!(m, ControllerMessage::GameOver) {
                        game_over += 1;
                    }
                    m.to_string()
                }
                (LogMessage::Closed, Direction::Received) => {
                    closed += 1;
                    "(null)".to_string()
                }
                (m, d) => panic!("{name} line {}: {m:?} recorded as {d:?}", r.line),
            };
            assert_eq!(printed, r.raw, "{name} line {}: round trip", r.line);
        }
        assert!(closed >= 1, "{name}: no closed-connection record");
        assert_eq!(game_over, 1, "{name}: GameOver records");
        total += records.len();
    }
    assert!(total > 0);
}

#[test]
fn corpus_connect_replies_give_each_connection_an_id() {
    for game in corpus_games() {
        let text = std::fs::read_to_string(game.join("game.log")).unwrap_or_else(|e| panic!("{}: {e}", game.display()));
        let records = read_log(&text).unwrap_or_else(|e| panic!("{}: {e}", game.display()));
        let mut ids: Vec<(u32, i32)> = records
            .iter()
            .filter_map(|r| match &r.message {
                LogMessage::Controller(ControllerMessage::ConnectReply { pvers, id, .. }) => {
                    assert_eq!(*pvers, 1110);
                    Some((r.connection, *id))
                }
                _ => None,
            })
            .collect();
        ids.sort();
        assert_eq!(ids.len(), 4, "{}: four players connect", game.display());
        assert!(ids.iter().all(|&(_, id)| id > 0), "{}: no refused connection", game.display());
    }
}

/// The settlement variants travel in the same `GameOption` messages as seed
/// 004's options: every option of every preset is a message that parses,
/// prints back exactly, and sets the same value.
#[test]
fn every_option_of_every_preset_is_a_classic_game_option_message() {
    use mahjong::rules::GameOptions;
    use mahjong::rules::option_file::OptionLine;
    use mahjong::rules::presets::{PRESETS, preset};
    for p in PRESETS {
        let options = preset(p.name).unwrap();
        let mut rebuilt = GameOptions::default();
        for line in options.to_option_file(false).lines() {
            let message = ControllerMessage::parse(line).unwrap_or_else(|e| panic!("{line}: {e}"));
            assert_eq!(message.to_string(), line);
            let ControllerMessage::GameOption { optentry, .. } = message else { panic!("{line} is not a GameOption") };
            let entry = OptionLine {
                name: optentry.name,
                kind: optentry.option_type,
                min_protocol: optentry.protversion as u32,
                value: optentry.value,
                description: optentry.desc,
            };
            rebuilt.apply_line(&entry).unwrap();
        }
        assert_eq!(rebuilt, options, "{}", p.name);
    }
}
