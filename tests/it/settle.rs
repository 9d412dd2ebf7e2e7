//! The worked examples of seeds 000-003, reproduced through the
//! `mahjong-server settle` calculator (JSON on stdin, JSON on stdout).

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

/// Runs `settle` on a request; returns (exit status, stdout, stderr).
fn run(request: &str) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mahjong-server"))
        .arg("settle")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    child.stdin.take().expect("stdin").write_all(request.as_bytes()).expect("request written");
    let out = child.wait_with_output().expect("settle finishes");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// Settles a request that must succeed.
fn settle(request: Value) -> Value {
    let (code, stdout, stderr) = run(&request.to_string());
    assert_eq!(code, 0, "{request}: {stderr}");
    serde_json::from_str(&stdout).expect("one JSON object")
}

fn net(request: Value) -> [i64; 4] {
    let answer = settle(request);
    let net: Vec<i64> = answer["net"].as_array().expect("net").iter().map(|v| v.as_i64().expect("int")).collect();
    assert_eq!(net.iter().sum::<i64>(), 0, "balances sum to zero");
    net.try_into().expect("four balances")
}

/// The amount `from` pays `to` (0 if no such payment; the sum if several).
fn paid(answer: &Value, from: u64, to: u64) -> i64 {
    answer["payments"]
        .as_array()
        .expect("payments")
        .iter()
        .filter(|p| p["from"] == from && p["to"] == to)
        .map(|p| p["amount"].as_i64().expect("amount"))
        .sum()
}

/// What each of players 1-3 pays player 0 when player 0 (`east` says whether
/// East) wins `score` self-drawn and the others score nothing.
fn winner_payments(options: Value, preset: &str, score: Value, winner_is_east: bool) -> [i64; 3] {
    let east = if winner_is_east { 0 } else { 1 };
    let a =
        settle(json!({"preset": preset, "options": options, "east": east, "winner": 0, "scores": [score, 0, 0, 0]}));
    [paid(&a, 1, 0), paid(&a, 2, 0), paid(&a, 3, 0)]
}

// ---------------------------------------------------------------- seed 000

#[test]
fn seed_000_rounding_the_score_off_and_up() {
    let plain = json!({"EastDoubles": false, "LosersSettle": false, "RoundMode": "off", "RoundUnit": 10});
    let pays = |opts: &Value, s: i64| winner_payments(opts.clone(), "chinese-classical", json!(s), false)[1];
    // "64 points is rounded off to 60 points, 65 points to 70 points"; "24 becomes 20 and 25 becomes 30".
    assert_eq!([pays(&plain, 64), pays(&plain, 65), pays(&plain, 24), pays(&plain, 25)], [60, 70, 20, 30]);
    // With the unit 100: "149 becomes 100 and 150 becomes 200".
    let hundred = json!({"EastDoubles": false, "LosersSettle": false, "RoundMode": "off", "RoundUnit": 100});
    assert_eq!([pays(&hundred, 149), pays(&hundred, 150)], [100, 200]);
    // Rounding up: "21 becomes 30, or 101 becomes 200".
    let up10 = json!({"EastDoubles": false, "LosersSettle": false, "RoundMode": "up", "RoundUnit": 10});
    let up100 = json!({"EastDoubles": false, "LosersSettle": false, "RoundMode": "up", "RoundUnit": 100});
    assert_eq!([pays(&up10, 21), pays(&up100, 101)], [30, 200]);
    // Round up from 6x: "25 is rounded down to 20 and only 26 up to 30, and 159 is rounded off to 100 and only 160 up to 200".
    let six10 =
        json!({"EastDoubles": false, "LosersSettle": false, "RoundMode": "off", "RoundUnit": 10, "RoundSixUp": true});
    let six100 =
        json!({"EastDoubles": false, "LosersSettle": false, "RoundMode": "off", "RoundUnit": 100, "RoundSixUp": true});
    assert_eq!([pays(&six10, 25), pays(&six10, 26), pays(&six100, 159), pays(&six100, 160)], [20, 30, 100, 200]);
}

#[test]
fn seed_000_rounding_before_doubles() {
    // American Modern: "the points are rounded up (e.g., 22 becomes 30) to nearest ten before doubles".
    let p =
        winner_payments(json!({"EastDoubles": false}), "american-modern", json!({"points": 22, "doubles": 1}), false);
    assert_eq!(p, [60, 60, 60]);
    let p =
        winner_payments(json!({"EastDoubles": false}), "chinese-classical", json!({"points": 22, "doubles": 1}), false);
    assert_eq!(p, [44, 44, 44]);
}

#[test]
fn seed_000_rounding_at_pay_time() {
    // "winner's (East) score is 360 points, and the East is paid double, each loser pays 720 points, rounded off
    // to 700 points ... Without the Round at paytime rule ... 400 points ... each loser paying 800 points."
    assert_eq!(winner_payments(json!({}), "australian-rounding", json!(360), true), [700, 700, 700]);
    assert_eq!(
        winner_payments(json!({"RoundAtPayTime": false}), "australian-rounding", json!(360), true),
        [800, 800, 800]
    );
    // Australian: "149 points becomes 100 points and 150 points becomes 200 points" at the time of payment.
    let opts = json!({"EastDoubles": false});
    assert_eq!(winner_payments(opts.clone(), "australian-rounding", json!(149), false), [100, 100, 100]);
    assert_eq!(winner_payments(opts, "australian-rounding", json!(150), false), [200, 200, 200]);
    // Japanese: "20 fu points with 2 han gives ... 320 points, which could be doubled to 640 points for East and
    // rounded only after that up to 700 points".
    assert_eq!(winner_payments(json!({}), "japanese-rounding", json!(320), true), [700, 700, 700]);
    // "the winner's score ... is 320 points and he is dealer ... multiplied by 6 ... rounded up to nearest 100,
    // which makes 2,000 points. This sum is paid by the discarder. Without this rule option the discarder would
    // have to pay 6 times 400 points."
    let on_discard = |opts: Value| {
        let a = settle(json!({"preset": "japanese-rounding", "options": opts, "east": 0, "winner": 0,
                              "discarder": 2, "scores": [320, 0, 0, 0]}));
        (paid(&a, 2, 0), paid(&a, 1, 0) + paid(&a, 3, 0))
    };
    assert_eq!(on_discard(json!({})), (2000, 0));
    assert_eq!(on_discard(json!({"RoundAtPayTime": false})), (2400, 0));
}

#[test]
fn seed_000_invalid_combinations_are_rejected() {
    let reject = |opts: Value, needle: &str| {
        let req = json!({"options": opts, "east": 0, "winner": 0, "scores": [10, 0, 0, 0]});
        let (code, stdout, stderr) = run(&req.to_string());
        assert_eq!(code, 2, "{req}");
        assert!(stdout.is_empty());
        assert!(stderr.contains(needle), "{stderr}");
    };
    // "the unit of 1 is meaningful only when used with the Round at paytime option".
    reject(json!({"RoundMode": "off", "RoundUnit": 1}), "the unit 1 needs RoundAtPayTime");
    // "available only if either of the rounding rules is specified with the 'rounding off' option enabled".
    reject(json!({"RoundMode": "up", "RoundSixUp": true}), "RoundSixUp: needs rounding off");
    reject(json!({"RoundSixUp": true}), "RoundSixUp: needs rounding off");
    // The unit 1 at pay time is allowed, and leaves whole numbers whole.
    let a = settle(json!({"options": {"RoundMode": "off", "RoundUnit": 1, "RoundAtPayTime": true},
                          "east": 0, "winner": 0, "scores": [37, 0, 0, 0]}));
    assert_eq!(paid(&a, 1, 0), 74);
}

// ---------------------------------------------------------------- seed 001

#[test]
fn seed_001_classical_payments() {
    // East goes Mah-Jong with 200: everyone pays him double; the losers settle differences, East not involved.
    let n = net(json!({"east": 0, "winner": 0, "scores": [200, 40, 20, 0]}));
    assert_eq!(n, [1200, -400 + 20 + 40, -400 - 20 + 20, -400 - 40 - 20]);
    // West goes Mah-Jong with 200: only East pays double; East pays or receives double the differences.
    let a = settle(json!({"east": 0, "winner": 2, "scores": [40, 20, 200, 0]}));
    assert_eq!([paid(&a, 0, 2), paid(&a, 1, 2), paid(&a, 3, 2)], [400, 200, 200]);
    assert_eq!([paid(&a, 1, 0), paid(&a, 3, 0), paid(&a, 3, 1)], [40, 80, 20]);
    // "the doubling is not affected by the limit ... players may have to pay out more than 1,000 points".
    let a = settle(json!({"east": 0, "winner": 1, "scores": [0, {"limit": true}, 0, 0]}));
    assert_eq!([paid(&a, 0, 1), paid(&a, 2, 1), paid(&a, 3, 1)], [2000, 1000, 1000]);
    // LosersSettle off: nothing between losers.
    let n = net(json!({"options": {"LosersSettle": false}, "east": 0, "winner": 2, "scores": [40, 20, 200, 0]}));
    assert_eq!(n, [-400, -200, 800, -200]);
}

#[test]
fn seed_001_alternative_itemisation_gives_the_same_balances() {
    for (east, winner, scores) in [(0, 0, [200, 40, 20, 0]), (0, 2, [40, 20, 200, 0]), (3, 1, [8, 100, 52, 36])] {
        let by = |itemisation: &str| {
            settle(json!({"options": {"PaymentItemisation": itemisation}, "east": east, "winner": winner,
                          "scores": scores}))
        };
        let (diff, gross) = (by("differences"), by("scores"));
        assert_eq!(diff["net"], gross["net"], "{scores:?}");
        // Each remaining player is given its own score by each other remaining player.
        let losers: Vec<u64> = (0..4).filter(|&i| i != winner).collect();
        for &i in &losers {
            for &j in &losers {
                if i != j {
                    let mult = if i == east || j == east { 2 } else { 1 };
                    assert_eq!(paid(&gross, j, i), scores[i as usize] * mult, "{j} pays {i}");
                }
            }
        }
    }
}

#[test]
fn discarder_doubles_and_discarder_pays_schemes() {
    // DiscDoubles: the discarder pays double; on a self-drawn win everybody does.
    let opts = json!({"DiscDoubles": true, "EastDoubles": false, "LosersSettle": false});
    assert_eq!(
        net(json!({"options": opts, "east": 0, "winner": 3, "discarder": 1, "scores": [10, 20, 30, 40]})),
        [-40, -80, -40, 160]
    );
    assert_eq!(net(json!({"options": opts, "east": 0, "winner": 3, "scores": [10, 20, 30, 40]})), [-80, -80, -80, 240]);
    // The discarder pays for all losers, or for himself alone.
    let scheme = |s: &str| json!({"DiscarderPays": s, "LosersSettle": false});
    assert_eq!(
        net(json!({"options": scheme("for-all"), "east": 0, "winner": 2, "discarder": 1, "scores": [0, 0, 50, 0]})),
        [0, -200, 200, 0]
    );
    assert_eq!(
        net(json!({"options": scheme("alone"), "east": 0, "winner": 2, "discarder": 1, "scores": [0, 0, 50, 0]})),
        [0, -50, 50, 0]
    );
    // Self-drawn, everybody pays under any scheme.
    assert_eq!(
        net(json!({"options": scheme("alone"), "east": 0, "winner": 2, "scores": [0, 0, 50, 0]})),
        [-100, -50, 200, -50]
    );
    // Letting off a cannon: the liable player pays everybody's share, losers do not settle.
    assert_eq!(
        net(json!({"east": 0, "winner": 1, "discarder": 2, "cannon": 2, "scores": [10, 100, 30, 2]})),
        [0, 400, -400, 0]
    );
}

#[test]
fn multiple_winners_are_each_paid_as_if_alone() {
    let opts = json!({"MultipleWinners": true, "LosersSettle": false, "EastDoubles": false});
    let n = net(json!({"options": opts, "east": 0, "winner": [1, 3], "discarder": 2, "scores": [0, 40, 0, 60]}));
    assert_eq!(n, [-100, 120 - 60, -100, 180 - 40]);
    let opts =
        json!({"MultipleWinners": true, "DiscarderPays": "for-all", "LosersSettle": false, "EastDoubles": false});
    let n = net(json!({"options": opts, "east": 0, "winner": [1, 3], "discarder": 2, "scores": [0, 40, 0, 60]}));
    assert_eq!(n, [0, 120, -300, 180]);
}

// ---------------------------------------------------------------- seed 002

/// The dealer bonus alone: the difference the extra-hand counter makes.
fn bonus(options: Value, east: u64, winner: u64, discarder: Option<u64>, extra: u32) -> [i64; 4] {
    let base = json!({"options": options, "east": east, "winner": winner, "discarder": discarder,
                      "scores": [10, 10, 10, 10]});
    let mut with = base.clone();
    with["extra_hands"] = json!(extra);
    let (a, b) = (net(with), net(base));
    std::array::from_fn(|i| a[i] - b[i])
}

#[test]
fn seed_002_japanese_dealer_bonus() {
    let japanese = json!({"DealerBonus": 100, "DealerBonusAnyWinner": true});
    // "the winner receives a total of 300 points from the losers on winning the 1st extra hand".
    assert_eq!(bonus(japanese.clone(), 0, 0, None, 1), [300, -100, -100, -100]);
    // "Winning the 2nd extra hand would give the winner a total of 600 points (200 points per loser)".
    assert_eq!(bonus(japanese.clone(), 0, 0, None, 2), [600, -200, -200, -200]);
    // "or the equivalent total sum from the discarder, since the Japanese specify that the discarder pays for all".
    let mut for_all = japanese.clone();
    for_all["DiscarderPays"] = json!("for-all");
    assert_eq!(bonus(for_all.clone(), 0, 0, Some(3), 1), [300, 0, 0, -300]);
    // Pay to any winner: a non-East winner gets it too; without the option only East does.
    assert_eq!(bonus(japanese.clone(), 0, 2, None, 1), [-100, -100, 300, -100]);
    assert_eq!(bonus(json!({"DealerBonus": 100}), 0, 2, None, 1), [0, 0, 0, 0]);
    // The discarder pays just for himself.
    assert_eq!(bonus(json!({"DealerBonus": 100, "DiscarderPays": "alone"}), 0, 0, Some(1), 2), [200, -200, 0, 0]);
    // "If multiple winners are allowed, each winner is paid as if he had won alone ... 300 points for the first".
    // (With the discarder paying for all, as in Japan; with everyone paying, each winner would also pay the other.)
    let mut multi = for_all;
    multi["MultipleWinners"] = json!(true);
    let base = json!({"options": multi, "east": 0, "winner": [1, 2], "discarder": 3, "scores": [10, 10, 10, 10]});
    let mut with = base.clone();
    with["extra_hands"] = json!(1);
    let (a, b) = (net(with), net(base));
    assert_eq!([a[1] - b[1], a[2] - b[2], a[3] - b[3]], [300, 300, -600]);
}

#[test]
fn seed_002_taiwanese_dealer_bonus() {
    let taiwan = json!({"DealerBonus": 2, "DealerBonusTaiwan": true});
    // "the East winner receives a total of 6 points from the losers (2 points from each) on winning the 1st extra
    // hand (or just 2 points from the discarder ...), a total of 12 points (4 points per loser) on the second".
    assert_eq!(bonus(taiwan.clone(), 0, 0, None, 1), [6, -2, -2, -2]);
    assert_eq!(bonus(taiwan.clone(), 0, 0, Some(2), 1), [2, 0, -2, 0]);
    assert_eq!(bonus(taiwan.clone(), 0, 0, None, 2), [12, -4, -4, -4]);
    assert_eq!(bonus(taiwan.clone(), 0, 0, Some(2), 2), [4, 0, -4, 0]);
    // "if East discards the winning tile, or if non-East wins self-drawn, East alone pays ... (2 points on losing the
    // 1st extra hand, 4 points on losing the 2nd ...). If non-East wins an extra hand on non-East's discard, bonus
    // points are not paid."
    assert_eq!(bonus(taiwan.clone(), 0, 1, None, 1), [-2, 2, 0, 0]);
    assert_eq!(bonus(taiwan.clone(), 0, 1, Some(0), 2), [-4, 4, 0, 0]);
    assert_eq!(bonus(taiwan, 0, 1, Some(3), 2), [0, 0, 0, 0]);
}

#[test]
fn seed_002_bonus_is_neither_doubled_nor_limited_nor_rounded() {
    // East's payments double, the bonus does not; 2000 x 3 extra hands is over the limit and paid in full.
    let opts = json!({"DealerBonus": 2000, "DealerBonusAnyWinner": true});
    assert_eq!(bonus(opts, 0, 1, None, 3), [-6000, 18000, -6000, -6000]);
    let opts = json!({"DealerBonus": 30, "RoundMode": "off", "RoundUnit": 100, "RoundAtPayTime": true});
    assert_eq!(bonus(opts, 0, 0, None, 1), [90, -30, -30, -30]);
}

// ---------------------------------------------------------------- seed 003

fn shanghai(east: u64, winner: u64, scores: Value, dice: bool) -> Value {
    settle(json!({"preset": "shanghai-expat", "east": east, "winner": winner, "scores": scores, "double_dice": dice}))
}

#[test]
fn seed_003_base_score_rounded_up_before_doubling() {
    // "12 goes to 20; 46 to 50", then doubled: 20 x 16 = 320 (paid 300) where 12 x 16 = 192 would be paid 200.
    let a = shanghai(0, 1, json!([0, {"points": 12, "doubles": 4}, 0, 0]), false);
    assert_eq!(paid(&a, 2, 1), 300);
    let a = shanghai(0, 1, json!([0, {"points": 46, "doubles": 4}, 0, 0]), false);
    assert_eq!(paid(&a, 2, 1), 800);
}

#[test]
fn seed_003_limit_and_east() {
    // "If the player who mahjongs scores 2280 - their payment would be the limit of 1000, but East Wind would pay
    // his/her limit of 2000."
    let a = shanghai(0, 1, json!([0, 2280, 0, 0]), false);
    assert_eq!([paid(&a, 0, 1), paid(&a, 2, 1), paid(&a, 3, 1)], [2000, 1000, 1000]);
    // Double dice: "Payment Limit is also doubled: 1000 to 2000 (2000 to 4000 for East Wind)".
    let a = shanghai(0, 1, json!([0, 2280, 0, 0]), true);
    assert_eq!([paid(&a, 0, 1), paid(&a, 2, 1), paid(&a, 3, 1)], [4000, 2000, 2000]);
}

#[test]
fn seed_003_payments_rounded_to_the_nearest_hundred() {
    // "160 rounds up to 200 and 240 rounds down to 200".
    assert_eq!(paid(&shanghai(0, 1, json!([0, 160, 0, 0]), false), 2, 1), 200);
    assert_eq!(paid(&shanghai(0, 1, json!([0, 240, 0, 0]), false), 2, 1), 200);
    // "a score of 370 becomes 400 for payment; but for East Wind a 370 becomes 740 (370 doubled) then rounded down
    // to 700 for payment."
    assert_eq!(paid(&shanghai(0, 1, json!([0, 370, 0, 0]), false), 2, 1), 400);
    assert_eq!(paid(&shanghai(0, 0, json!([370, 0, 0, 0]), false), 2, 0), 700);
    // "Double Double: score of 370, 740 for being East, 1480 for double dice; rounds to 1500".
    assert_eq!(paid(&shanghai(0, 0, json!([370, 0, 0, 0]), true), 2, 0), 1500);
}

#[test]
fn seed_003_losers_differences() {
    // "a player with a score of 100 deducts from player score of 320 which comes to 220, then rounded down to 200".
    let a = shanghai(0, 1, json!([0, 500, 320, 100]), false);
    assert_eq!(paid(&a, 3, 2), 200);
    // "East Wind's lower score of 100 is deducted from the higher score of 320 and the result of 220 is THEN doubled
    // to 440 before rounding down to 400".
    let a = shanghai(0, 1, json!([100, 500, 320, 0]), false);
    assert_eq!(paid(&a, 0, 2), 400);
    // "(for East double double: 100 from 320 is 220, double doubled to 880, rounds to 900)".
    let a = shanghai(0, 1, json!([100, 500, 320, 0]), true);
    assert_eq!(paid(&a, 0, 2), 900);
    // "If scores are identical or the difference is under 50 points they wash and no payment is made (including
    // East Wind)": 130 against 100 would be 60 for East, rounded to 100, without the wash.
    let a = shanghai(0, 1, json!([100, 500, 130, 130]), false);
    assert_eq!([paid(&a, 2, 0), paid(&a, 3, 0), paid(&a, 2, 3), paid(&a, 3, 2)], [0, 0, 0, 0]);
    let a = shanghai(0, 1, json!([100, 500, 150, 0]), false);
    assert_eq!(paid(&a, 0, 2), 100);
}

// ---------------------------------------------------------------- bad input

#[test]
fn bad_input_exits_2_with_a_message() {
    for (request, needle) in [
        ("not json", "bad request"),
        ("{}", "missing field"),
        (r#"{"east":0,"winner":0,"scores":[1,2,3,4],"options":{"RoundMode":"sideways"}}"#, "not one of none, off, up"),
        (r#"{"east":0,"winner":7,"scores":[1,2,3,4]}"#, "winner: player 7 does not exist"),
        (r#"{"east":0,"winner":0,"scores":[1,2,"x",4]}"#, "is not a score"),
    ] {
        let (code, stdout, stderr) = run(request);
        assert_eq!(code, 2, "{request}");
        assert!(stdout.is_empty(), "{request}");
        assert!(stderr.contains(needle), "{request}: {stderr}");
    }
    // A wash-out: nobody pays.
    assert_eq!(net(json!({"east": 0, "winner": null, "scores": [1, 2, 3, 4]})), [0, 0, 0, 0]);
}
