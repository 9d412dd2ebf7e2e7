//! Every game of the reference conformance corpus, replayed through our
//! engine, must give the reference's results: each hand's wash-out, winner,
//! hand scores (with their breakdown lines) and settlement (with its text),
//! and the final scores.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use common::corpus_games;

fn expected(game: &Path) -> Value {
    let text = std::fs::read_to_string(game.join("expected.json")).expect("expected.json");
    serde_json::from_str(&text).expect("expected.json is JSON")
}

fn name(game: &Path) -> String {
    game.file_name().unwrap().to_string_lossy().into_owned()
}

fn ids_to_numbers(v: &Value) -> BTreeMap<String, i64> {
    v.as_object().map(|o| o.iter().map(|(k, v)| (k.clone(), v.as_i64().unwrap())).collect()).unwrap_or_default()
}

/// The `replay` command's output agrees with `expected.json` on every hand
/// and on the final scores, for every game.
#[test]
fn replay_command_reproduces_every_hand_of_every_game() {
    let mut hands_checked = 0;
    for game in corpus_games() {
        let out = Command::new(env!("CARGO_BIN_EXE_mahjong-server"))
            .args(["replay", "--reference-log"])
            .arg(game.join("game.log"))
            .output()
            .expect("run mahjong-server replay");
        assert!(out.status.success(), "{}: replay failed: {}", name(&game), String::from_utf8_lossy(&out.stderr));
        let lines: Vec<Value> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).expect("each output line is a JSON object"))
            .collect();
        let exp = expected(&game);
        let exp_hands = exp["hands"].as_array().unwrap();
        let (final_line, hands) = lines.split_last().expect("output has a final line");
        assert_eq!(hands.len(), exp_hands.len(), "{}: number of hands", name(&game));
        for (ours, theirs) in hands.iter().zip(exp_hands) {
            let at = format!("{} hand {}", name(&game), theirs["hand"]);
            assert_eq!(ours["hand"], theirs["hand"], "{at}: hand number");
            assert_eq!(ours["washout"], theirs["washout"], "{at}: wash-out");
            assert_eq!(ours["winner"], theirs["winner"], "{at}: winner");
            if theirs["washout"].as_bool().unwrap() {
                assert_eq!(ours["scores"], serde_json::json!({}), "{at}: a wash-out has no scores");
                assert!(ids_to_numbers(&ours["settlement"]).values().all(|&v| v == 0), "{at}: wash-out pays nothing");
            } else {
                let their_scores: BTreeMap<String, i64> = theirs["scores"]
                    .as_object()
                    .unwrap()
                    .iter()
                    .map(|(id, s)| (id.clone(), s["score"].as_i64().unwrap()))
                    .collect();
                assert_eq!(ids_to_numbers(&ours["scores"]), their_scores, "{at}: hand scores");
                assert_eq!(
                    ids_to_numbers(&ours["settlement"]),
                    ids_to_numbers(&theirs["settlement"]["by_id"]),
                    "{at}: settlement"
                );
            }
            hands_checked += 1;
        }
        assert_eq!(
            ids_to_numbers(&final_line["final"]),
            ids_to_numbers(&exp["final_scores"]),
            "{}: final scores",
            name(&game)
        );
    }
    assert!(hands_checked >= 531, "the corpus has 531 hands; checked {hands_checked}");
}

/// Beyond the numbers: every scoring breakdown and settlement text is the
/// reference's, line for line.
#[test]
fn breakdowns_and_settlement_texts_match_line_for_line() {
    for game in corpus_games() {
        let log = std::fs::read_to_string(game.join("game.log")).unwrap();
        let replay = mahjong::replay::replay_log(&log).unwrap_or_else(|e| panic!("{}: {e}", name(&game)));
        let exp = expected(&game);
        for (ours, theirs) in replay.hands.iter().zip(exp["hands"].as_array().unwrap()) {
            let at = format!("{} hand {}", name(&game), ours.hand);
            if ours.washout {
                continue;
            }
            for (id, s) in theirs["scores"].as_object().unwrap() {
                let their_lines: Vec<&str> =
                    s["lines"].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect();
                assert_eq!(ours.score_lines[id], their_lines, "{at}: breakdown of player {id}");
            }
            let their_lines: Vec<&str> =
                theirs["settlement"]["lines"].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect();
            assert_eq!(ours.settlement_lines, their_lines, "{at}: settlement text");
        }
    }
}

/// A log that makes an illegal move is refused, naming the line.
#[test]
fn an_illegal_logged_action_is_reported_with_its_line() {
    let game = &corpus_games()[0];
    let log = std::fs::read_to_string(game.join("game.log")).unwrap();
    // The first discard of the game, made with a tile East does not hold.
    let (at, line) = log.lines().enumerate().find(|(_, l)| l.starts_with("<cnx") && l.contains(" Discard ")).unwrap();
    let bad_line = format!("{} Discard 1F 0\r", line.split(" Discard ").next().unwrap());
    let tampered: String = log
        .split_inclusive('\n')
        .enumerate()
        .map(|(i, l)| if i == at { format!("{bad_line}\n") } else { l.to_string() })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("game.log");
    std::fs::write(&path, tampered).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mahjong-server"))
        .args(["replay", "--reference-log"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(!out.status.success(), "an illegal action must fail the replay");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("line {}", at + 1)), "the error names the line: {err}");
}

/// A request the reference refused (answering `Error`) and our engine
/// refuses too is passed over: the game goes on as the reference played it.
#[test]
fn a_request_both_servers_refuse_is_passed_over() {
    let game = &corpus_games()[0];
    let log = std::fs::read_to_string(game.join("game.log")).unwrap();
    let original = mahjong::replay::replay_log(&log).unwrap();
    // Before the first logged discard, the same player tries to discard a
    // tile it does not hold, and the reference answers with an error.
    let (at, line) = log.lines().enumerate().find(|(_, l)| l.starts_with("<cnx") && l.contains(" Discard ")).unwrap();
    let cnx = line.split(' ').next().unwrap().trim_start_matches('<');
    let inserted = format!("<{cnx} Discard 1F 0\r\n>{cnx} Error 0 You can't discard that tile\r\n");
    let tampered: String = log
        .split_inclusive('\n')
        .enumerate()
        .map(|(i, l)| if i == at { format!("{inserted}{l}") } else { l.to_string() })
        .collect();
    let replay = mahjong::replay::replay_log(&tampered).expect("an agreed refusal is passed over");
    assert_eq!(replay, original);
}

/// Every hand scored in the corpus is itemised consistently with the
/// reference's breakdown text, which the other tests check line for line:
/// each item's name is a reason of the text, the items' points add up to
/// `total pts` and their doubles to `total dbls` (a limited game's limit hand
/// shows only its limit items, as the text does), and every reason line of
/// the text is one item's.
#[test]
fn itemised_scores_agree_with_the_breakdown_text() {
    use mahjong::rules::Event;
    let mut scored = 0;
    for game in corpus_games() {
        let log = std::fs::read_to_string(game.join("game.log")).unwrap();
        let (_, capture) =
            mahjong::replay::replay_log_captured(&log).unwrap_or_else(|e| panic!("{}: {e}", name(&game)));
        for (_, emitted) in &capture.steps {
            for e in emitted {
                let Event::HandScored { score, player } = &e.event else { continue };
                let at = format!("{} player {}: {}", name(&game), player.0, score.text());
                scored += 1;
                let number = |label: &str| {
                    score
                        .lines()
                        .find(|l| l.starts_with(label))
                        .map(|l| l[label.len()..].split_whitespace().next().unwrap().parse::<i64>().unwrap())
                };
                let limit_only = number("total pts").is_none();
                let item_points: i64 = score.items.iter().map(|i| i.points).sum();
                let item_doubles: i64 = score.items.iter().map(|i| i.doubles).sum();
                if limit_only {
                    assert!(score.items.iter().all(|i| i.limit_percent > 0), "{at}: {:?}", score.items);
                } else {
                    assert_eq!(Some(item_points), number("total pts"), "{at}: points of {:?}", score.items);
                    assert_eq!(item_doubles, i64::from(score.doubles), "{at}: doubles of {:?}", score.items);
                    let shown = number("rounded pts").or(number("total pts")).unwrap();
                    assert_eq!(score.points, shown, "{at}: basic points");
                }
                // Each item writes one line per part it has (points, doubles, limit).
                let reasons: Vec<&str> = score
                    .lines()
                    .filter(|l| !l.contains("(over limit)") && !l.starts_with("penalty"))
                    .filter_map(|l| l.strip_suffix(')').and_then(|l| l.rsplit_once(" (")).map(|(_, r)| r))
                    .collect();
                let mut expected = Vec::new();
                for item in &score.items {
                    let parts = [item.points, item.doubles, item.limit_percent].iter().filter(|&&n| n != 0).count();
                    expected.extend(std::iter::repeat_n(item.name.as_ref(), parts));
                }
                let (mut a, mut b) = (reasons.clone(), expected.clone());
                a.sort_unstable();
                b.sort_unstable();
                assert_eq!(a, b, "{at}: the text's reasons and the items' names");
            }
        }
    }
    assert!(scored > 500, "the corpus scores many hands: {scored}");
}
