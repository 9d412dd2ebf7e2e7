//! The scoring calculator, `POST /api/v1/score`, through the real server: the
//! worked examples of the seeds, special hands, losers' hands, the choice of
//! arrangement, the restrictions on going out, bad requests, and every hand
//! of the reference games scored again from what lay on the table.

use crate::common;

use common::app::{Api, TestApp};
use common::corpus_games;
use mahjong::rules::rebuild::Rebuild;
use mahjong::rules::scoring::Whence;
use mahjong::rules::view::SeatView;
use mahjong::rules::{Audience, ChowPosition, Event, PlayerId, SetKind, TileSet, Wind};
use mahjong::table::TableDefaults;
use mahjong_tools::client::http_raw;
use serde_json::{Value, json};

async fn app() -> TestApp {
    TestApp::spawn("memory", TableDefaults::default()).await
}

/// Scores a hand that must be scored; the answer.
async fn score(api: Api, body: Value) -> Value {
    let a = api.request("POST", "/api/v1/score", Some(&body), None).await;
    assert_eq!(a.status, 200, "{body}: {}", a.body);
    a.body
}

/// Scores a hand that must be refused; the error message.
async fn refused(api: Api, body: Value) -> String {
    let a = api.request("POST", "/api/v1/score", Some(&body), None).await;
    assert_eq!((a.status, a.body["error"]["code"].as_str()), (400, Some("bad_request")), "{body}: {}", a.body);
    a.body["error"]["message"].as_str().unwrap_or_default().to_string()
}

fn lines(answer: &Value) -> Vec<&str> {
    answer["score"]["lines"].as_array().expect("lines").iter().map(|l| l.as_str().expect("a line")).collect()
}

fn item_names(answer: &Value) -> Vec<&str> {
    answer["score"]["items"].as_array().expect("items").iter().map(|i| i["name"].as_str().expect("a name")).collect()
}

fn score_of(answer: &Value) -> i64 {
    answer["score"]["score"].as_i64().expect("a score")
}

/// Seed 004, on The Three Great Scholars: "in M's rules, three sets and a
/// chow scores at least (10 (M has 10 for Mah Jong) + 12 (at least 3 pungs))
/// times 8 (2 for each set of dragons) times 4 (for Big Three Dragons) = 704
/// ... For us, with 20 for going out, Big Three Dragons is over the default
/// limit anyway."
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seed_004_big_three_dragons_with_a_chow() {
    let app = app().await;
    let hand = |options: Value| {
        json!({
            "options": options,
            "seat_wind": "South",
            "sets": [{"kind": "pung", "tile": "RD"}, {"kind": "pung", "tile": "WD"}, {"kind": "pung", "tile": "GD"}],
            "concealed": ["2C", "3C", "4C", "5B", "5B"],
            // Waiting on 1C or 4C: no "filling the only place".
            "win": {"tile": "4C", "from": "discard"}
        })
    };
    let m = score(app.api, hand(json!({"MahJongScore": 10}))).await;
    assert_eq!(
        lines(&m),
        [
            "basic        10 (going Mah Jong)",
            "RD-RD-RD      4 (open pung of majors)",
            "WD-WD-WD      4 (open pung of majors)",
            "GD-GD-GD      4 (open pung of majors)",
            "total pts    22",
            "RD-RD-RD      1 dbl (pung/kong of dragons)",
            "WD-WD-WD      1 dbl (pung/kong of dragons)",
            "GD-GD-GD      1 dbl (pung/kong of dragons)",
            "              2 dbl (Big Three Dragons)",
            "total dbls    5",
            "SCORE:      704",
        ]
    );
    assert_eq!((score_of(&m), m["score"]["points"].as_i64(), m["score"]["doubles"].as_i64()), (704, Some(22), Some(5)));
    // The discard made the chow; the pair stays concealed.
    assert_eq!(
        m["sets"],
        json!([
            {"kind": "pung", "tile": "RD"}, {"kind": "pung", "tile": "WD"}, {"kind": "pung", "tile": "GD"},
            {"kind": "chow", "tile": "2C"}, {"kind": "closed_pair", "tile": "5B"}
        ])
    );
    assert_eq!(
        (m["shape"].as_str(), m["arrangements"].as_u64(), m["concealed"].clone()),
        (Some("standard"), Some(1), json!([]))
    );
    let ours = score(app.api, hand(json!({}))).await;
    assert_eq!(score_of(&ours), 1000, "(20 + 12) x 32 = 1024 is over the limit");
    assert!(lines(&ours).contains(&"score:     1024 (over limit)"), "{:?}", lines(&ours));
    // Without the chow it is The Three Great Scholars, a limit hand.
    let mut scholars = hand(json!({"MahJongScore": 10}));
    scholars["concealed"] = json!(["2C", "2C", "2C", "5B", "5B"]);
    scholars["win"] = json!({"tile": "5B", "from": "wall"});
    let s = score(app.api, scholars).await;
    assert_eq!(score_of(&s), 1000);
    assert!(item_names(&s).contains(&"Three Great Scholars"), "{:?}", item_names(&s));
    app.finish().await;
}

/// Seed 003 (Shanghai Expat): "if it is not a multiple of 10, it is brought
/// up to the next highest unit of 10 before doubling. Ex: 12 goes to 20; 46
/// to 50"; "each animal gives 1 double"; "an animal tile left in your hand
/// when anyone mahjongs means 0 score".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seed_003_base_score_rounded_up_and_animals() {
    let app = app().await;
    let twelve = json!({
        "preset": "shanghai-expat",
        "seat_wind": "West",
        "sets": [{"kind": "pung", "tile": "9D"}, {"kind": "pung", "tile": "5C"}],
        "concealed": ["3B", "3B", "3B", "RD", "RD", "1C", "4D"]
    });
    let a = score(app.api, twelve.clone()).await;
    assert_eq!(
        lines(&a),
        [
            "9D-9D-9D      4 (open pung of majors)",
            "5C-5C-5C      2 (open pung of minors)",
            "3B+3B+3B      4 (closed pung of minors)",
            "RD+RD         2 (pair of dragons)",
            "total pts    12",
            "rounded pts  20",
            "total dbls    0",
            "SCORE:       20",
        ]
    );
    let forty_six = json!({
        "preset": "shanghai-expat",
        "seat_wind": "West",
        "sets": [{"kind": "closed_kong", "tile": "9B"}, {"kind": "pung", "tile": "9D"}],
        "concealed": ["1C", "1C", "1C", "RD", "RD", "3C", "5D"]
    });
    let a = score(app.api, forty_six.clone()).await;
    assert_eq!((a["score"]["points"].as_i64(), score_of(&a)), (Some(50), 50));
    assert!(lines(&a).contains(&"total pts    46"), "{:?}", lines(&a));
    let mut with_animal = forty_six.clone();
    with_animal["bonus"] = json!(["2A"]);
    let a = score(app.api, with_animal).await;
    assert_eq!((a["score"]["doubles"].as_i64(), score_of(&a)), (Some(1), 100), "{:?}", lines(&a));
    assert!(item_names(&a).contains(&"animal Mouse"));
    let mut penalised = forty_six;
    penalised["concealed"] = json!(["1C", "1C", "1C", "RD", "RD", "3C", "1A"]);
    let a = score(app.api, penalised).await;
    assert_eq!(score_of(&a), 0);
    assert_eq!(lines(&a).last(), Some(&"SCORE:        0"));
    assert!(lines(&a).contains(&"penalty       0 (animal left in hand: Cat)"), "{:?}", lines(&a));
    // Animals are no tiles of the default game.
    let mut classical = twelve;
    classical["preset"] = json!("chinese-classical");
    classical["bonus"] = json!(["1A"]);
    let why = refused(app.api, classical).await;
    assert!(why.contains("1A: there are no animal tiles in this game (the Animals option is off)"), "{why}");
    app.finish().await;
}

/// The manual: "if waiting on 5677, and 7 is discarded, the player must
/// claim for the pair, not the chow" to score fishing the eyes. The
/// calculator scores both ways and keeps the better; asked for the chow, it
/// scores the chow.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_best_way_to_use_a_discard_is_chosen() {
    let app = app().await;
    let hand = |used_as: Value| {
        json!({
            "seat_wind": "North",
            "sets": [{"kind": "pung", "tile": "1B"}, {"kind": "pung", "tile": "9D"}, {"kind": "chow", "tile": "2C"}],
            "concealed": ["5D", "6D", "7D", "7D", "7D"],
            "win": {"tile": "7D", "from": "discard", "used_as": used_as}
        })
    };
    let best = score(app.api, hand(Value::Null)).await;
    assert_eq!(best["arrangements"].as_u64(), Some(2), "as the pair or in the chow");
    assert!(item_names(&best).contains(&"fishing the eyes"), "{:?}", lines(&best));
    assert_eq!(best["sets"][3], json!({"kind": "pair", "tile": "7D"}));
    assert_eq!(best["sets"][4], json!({"kind": "closed_chow", "tile": "5D"}));
    let chow = score(app.api, hand(json!({"chow": "Upper"}))).await;
    assert!(!item_names(&chow).contains(&"fishing the eyes"), "{:?}", lines(&chow));
    assert_eq!(chow["sets"][3], json!({"kind": "chow", "tile": "5D"}));
    assert!(score_of(&best) > score_of(&chow));
    let why = refused(app.api, hand(json!("pung"))).await;
    assert!(why.contains("win.used_as: the hand is not complete with 7D used that way"), "{why}");
    // "given": the hand must be complete as listed.
    let mut given = hand(json!("pair"));
    given["arrange"] = json!("given");
    let why = refused(app.api, given.clone()).await;
    assert!(why.contains("as given the hand is not complete"), "{why}");
    given["sets"].as_array_mut().unwrap().push(json!({"kind": "closed_chow", "tile": "5D"}));
    given["concealed"] = json!(["7D", "7D"]);
    let given = score(app.api, given).await;
    assert_eq!(
        (&given["score"], &given["sets"], given["arrangements"].as_u64()),
        (&best["score"], &best["sets"], Some(1))
    );
    app.finish().await;
}

/// Losers are scored too: their concealed pungs and scoring pairs are formed
/// (or not, as given), and the purity doubles count only under LosersPurity.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn losing_hands() {
    let app = app().await;
    let loser = json!({
        "seat_wind": "East",
        "prevailing_wind": "South",
        "sets": [{"kind": "pung", "tile": "EW"}],
        "concealed": ["SW", "SW", "SW", "RD", "RD", "GD", "GD", "GD", "GD", "1B"],
        "bonus": ["1F", "1S"]
    });
    let a = score(app.api, loser.clone()).await;
    // EW own wind pung (4, 1 dbl), SW prevailing wind closed pung (8, 1 dbl),
    // GD closed pung (8, 1 dbl) rather than two pairs, RD pair (2), two
    // specials (8) with own flower and season (1 dbl).
    assert_eq!((a["score"]["points"].as_i64(), a["score"]["doubles"].as_i64()), (Some(30), Some(4)), "{:?}", lines(&a));
    assert_eq!(score_of(&a), 480);
    assert_eq!(a["concealed"], json!(["1B", "GD"]), "the fourth GD and the odd tile are shown");
    assert_eq!(a["shape"], Value::Null);
    let mut given = loser.clone();
    given["arrange"] = json!("given");
    let g = score(app.api, given).await;
    assert_eq!((g["sets"].as_array().map(Vec::len), g["arrangements"].as_u64()), (Some(1), Some(1)));
    assert!(score_of(&g) < score_of(&a));
    // One suit: no double for a loser, unless LosersPurity.
    let pure = json!({
        "seat_wind": "South",
        "sets": [{"kind": "chow", "tile": "1B"}],
        "concealed": ["2B", "3B", "4B", "5B", "5B", "5B", "7B", "8B", "8B", "9B"]
    });
    let a = score(app.api, pure.clone()).await;
    assert!(!item_names(&a).contains(&"one suit only"), "{:?}", lines(&a));
    let mut purity = pure;
    purity["options"] = json!({"LosersPurity": true});
    let a = score(app.api, purity).await;
    assert!(item_names(&a).contains(&"one suit only"), "{:?}", lines(&a));
    app.finish().await;
}

/// The special hands the engine knows, with the circumstances that make them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn special_hands_and_circumstances() {
    let app = app().await;
    let limit = |answer: &Value, name: &str| {
        assert_eq!(score_of(answer), 1000, "{name}: {:?}", lines(answer));
        assert!(item_names(answer).contains(&name), "{name}: {:?}", item_names(answer));
    };
    let wonders = json!({
        "seat_wind": "West",
        "concealed": ["1B", "9B", "1C", "9C", "1D", "9D", "EW", "SW", "WW", "NW", "RD", "WD", "GD", "GD"],
        "win": {"tile": "GD", "from": "discard"}
    });
    let a = score(app.api, wonders).await;
    limit(&a, "Thirteen Unique Wonders");
    assert_eq!((a["shape"].as_str(), a["concealed"].as_array().map(Vec::len)), (Some("thirteen_wonders"), Some(14)));

    let pairs = json!({
        "options": {"SevenPairs": true},
        "seat_wind": "South",
        "concealed": ["1B", "1B", "3C", "3C", "5D", "5D", "7D", "7D", "RD", "RD", "EW", "EW", "8B", "8B"],
        "win": {"tile": "8B", "from": "wall"}
    });
    let a = score(app.api, pairs.clone()).await;
    assert_eq!(a["shape"].as_str(), Some("seven_pairs"));
    assert!(item_names(&a).contains(&"seven pairs"), "{:?}", lines(&a));
    let mut no_option = pairs;
    no_option["options"] = json!({});
    let why = refused(app.api, no_option).await;
    assert!(why.contains("neither four sets and a pair nor Thirteen Unique Wonders"), "{why}");

    let heaven = json!({
        "seat_wind": "East",
        "concealed": ["1B", "2B", "3B", "4C", "5C", "6C", "7D", "8D", "9D", "2D", "2D", "2D", "WD", "WD"],
        "win": {"tile": "WD", "from": "wall", "no_discard": true}
    });
    limit(&score(app.api, heaven.clone()).await, "Heaven's Blessing");
    let mut earth = heaven.clone();
    earth["seat_wind"] = json!("South");
    earth["win"] = json!({"tile": "WD", "from": "discard", "no_discard": true, "only_east_discarded": true});
    limit(&score(app.api, earth).await, "Earth's Blessing");
    let mut moon = heaven.clone();
    moon["concealed"] = json!(["1B", "2B", "3B", "4C", "5C", "6C", "7D", "8D", "9D", "1D", "1D", "1D", "WD", "WD"]);
    moon["win"] = json!({"tile": "1D", "from": "wall", "last_tile": true});
    let a = score(app.api, moon).await;
    limit(&a, "Catching the Moon from the Bottom of the Sea");

    let pole = json!({
        "seat_wind": "North",
        "sets": [{"kind": "pung", "tile": "RD"}],
        "concealed": ["1B", "3B", "4C", "5C", "6C", "7D", "8D", "9D", "WD", "WD", "2B"],
        "visible": ["2B", "2B", "2B"],
        "win": {"tile": "2B", "from": "robbed_kong"}
    });
    let a = score(app.api, pole.clone()).await;
    limit(&a, "Scratching a Carrying Pole");
    let mut greedy = pole;
    greedy["concealed"] = json!(["2B", "3B", "4C", "5C", "6C", "7D", "8D", "9D", "WD", "WD", "2B"]);
    greedy["visible"] = json!([]);
    let why = refused(app.api, greedy).await;
    assert!(why.contains("the hand holds only the one robbed, not 2"), "{why}");

    let kongs = json!({
        "seat_wind": "South",
        "sets": [{"kind": "closed_kong", "tile": "RD"}, {"kind": {"kong": {"annexed": false}}, "tile": "5B"}],
        "concealed": ["1C", "2C", "3C", "7D", "8D", "9D", "EW", "EW"],
        "win": {"tile": "9D", "from": "loose", "kong_upon_kong": true}
    });
    limit(&score(app.api, kongs.clone()).await, "Kong upon Kong");
    let mut drawn = kongs.clone();
    drawn["win"] = json!({"tile": "9D", "from": "loose"});
    let a = score(app.api, drawn).await;
    assert!(item_names(&a).contains(&"winning with loose tile"), "{:?}", lines(&a));
    let mut wrong = kongs;
    wrong["win"] = json!({"tile": "9D", "from": "wall", "kong_upon_kong": true});
    let why = refused(app.api, wrong).await;
    assert!(why.contains("Kong upon Kong is won with the loose tile"), "{why}");

    // Completing Original Call; filling the only place (the hand waited on
    // 5C alone) and fishing the eyes.
    let call = json!({
        "seat_wind": "West",
        "sets": [{"kind": "pung", "tile": "9B"}],
        "concealed": ["1C", "2C", "3C", "4D", "5D", "6D", "6B", "7B", "8B", "5C", "5C"],
        "win": {"tile": "5C", "from": "wall", "original_call": true}
    });
    let a = score(app.api, call).await;
    for item in ["completing Original Call", "filling the only place", "fishing the eyes", "winning from wall"] {
        assert!(item_names(&a).contains(&item), "{item}: {:?}", item_names(&a));
    }
    // Waiting on 4D or 7D is not the only place; it is when the four 4D
    // are all in sight.
    let open = json!({
        "seat_wind": "West",
        "sets": [{"kind": "pung", "tile": "9B"}],
        "concealed": ["1C", "2C", "3C", "6B", "7B", "8B", "EW", "EW", "5D", "6D", "7D"],
        "win": {"tile": "7D", "from": "wall"}
    });
    let a = score(app.api, open.clone()).await;
    assert!(!item_names(&a).contains(&"filling the only place"), "{:?}", item_names(&a));
    let mut dead = open;
    dead["visible"] = json!(["4D", "4D", "4D", "4D", "EW"]);
    let a = score(app.api, dead).await;
    assert!(item_names(&a).contains(&"filling the only place"), "{:?}", item_names(&a));
    app.finish().await;
}

/// The restrictions on going out, judged as the engine judges them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hands_that_may_not_go_out_are_refused() {
    let app = app().await;
    let two_chows = json!({
        "preset": "shanghai-expat",
        "seat_wind": "South",
        "sets": [{"kind": "chow", "tile": "1B"}, {"kind": "chow", "tile": "4B"}],
        "concealed": ["7B", "7B", "7B", "9B", "9B", "9B", "5B", "5B"],
        "win": {"tile": "5B", "from": "discard"}
    });
    let why = refused(app.api, two_chows).await;
    assert!(why.contains("may not go out under these rules: with OneChowOneSuit"), "{why}");
    let plain = json!({
        "options": {"MinimumDoubles": 1},
        "seat_wind": "South",
        "sets": [{"kind": "chow", "tile": "1B"}, {"kind": "chow", "tile": "4C"}],
        "concealed": ["7D", "8D", "9D", "2C", "2C", "2C", "5B", "5B"],
        "win": {"tile": "5B", "from": "discard"}
    });
    let why = refused(app.api, plain.clone()).await;
    assert!(why.contains("going out needs at least 1 double; this hand can make at most 0"), "{why}");
    let mut allowed = plain;
    allowed["options"] = json!({});
    assert!(score_of(&score(app.api, allowed).await) > 0);
    app.finish().await;
}

/// Every kind of bad request gets its own 400, and nothing panics.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_are_refused_with_their_reason() {
    let app = app().await;
    let winner = json!({
        "seat_wind": "South",
        "sets": [{"kind": "pung", "tile": "RD"}],
        "concealed": ["1B", "2B", "3B", "4C", "5C", "6C", "7D", "8D", "9D", "EW", "EW"],
        "win": {"tile": "EW", "from": "wall"}
    });
    assert!(score_of(&score(app.api, winner.clone()).await) > 0);
    let with = |path: &str, value: Value| {
        let mut r = winner.clone();
        let mut at = &mut r;
        let parts: Vec<&str> = path.split('.').collect();
        for p in &parts[..parts.len() - 1] {
            at = &mut at[*p];
        }
        at[parts[parts.len() - 1]] = value;
        r
    };
    let cases: Vec<(Value, &str)> = vec![
        (with("preset", json!("no-such")), "unknown preset 'no-such'"),
        (with("options", json!({"Nope": 1})), "unknown game option 'Nope'"),
        (with("options", json!({"ScoreLimit": "lots"})), "ScoreLimit"),
        (with("seat_wind", json!("Up")), "unknown variant `Up`"),
        (with("bogus", json!(1)), "unknown field `bogus`"),
        (with("concealed", json!(["1B", "2B"])), "the hand holds 5 tiles"),
        (with("concealed", json!(["ZZ"])), "ZZ"),
        (with("win", Value::Null), "a winning hand holds 14, a losing hand 13, and this is a losing hand"),
        (with("win.tile", json!("5D")), "the winning tile 5D is neither among the concealed tiles"),
        (with("win.from", json!("nowhere")), "unknown variant `nowhere`"),
        (with("win.used_as", json!("pung")), "win.used_as: only a discard or a robbed kong"),
        (
            with("concealed", json!(["1B", "1B", "1B", "1B", "1B", "6C", "7D", "8D", "9D", "EW", "EW"])),
            "there are only 4 of 1B: the hand and the visible tiles hold 5",
        ),
        (with("visible", json!(["EW", "EW", "EW"])), "there are only 4 of EW"),
        (with("bonus", json!(["5B"])), "bonus: 5B is not a flower, season or animal"),
        (with("bonus", json!(["1F", "1F"])), "there is only one 1F: the hand and the visible tiles hold 2"),
        // Strict JSON: an array where an object belongs.
        (with("sets", json!([["pung", "RD"]])), "expected an object at $.sets[0], found an array"),
        (with("win", json!(["EW", "wall"])), "expected an object at $.win, found an array"),
    ];
    for (body, expected) in &cases {
        let why = refused(app.api, body.clone()).await;
        assert!(why.contains(expected), "{body}: {why}");
    }
    let flowers_off = with("options", json!({"Flowers": false}));
    let mut flowered = flowers_off;
    flowered["bonus"] = json!(["2F"]);
    let why = refused(app.api, flowered).await;
    assert!(why.contains("2F: there are no flowers or seasons in this game (the Flowers option is off)"), "{why}");
    let call = with("win.original_call", json!(true));
    let mut both = call;
    both["win"]["no_discard"] = json!(true);
    assert!(refused(app.api, both).await.contains("Original Call is made with the player's first discard"));
    let chow = with("sets", json!([{"kind": "chow", "tile": "EW"}]));
    assert!(refused(app.api, chow).await.contains("no chow starts with EW"));
    let pair = with("sets", json!([{"kind": "pair", "tile": "RD"}]));
    assert!(refused(app.api, pair).await.contains("an exposed pair (RD-RD) is made only with the discard"));
    let flower_set = with("sets", json!([{"kind": "pung", "tile": "1F"}]));
    assert!(refused(app.api, flower_set).await.contains("never made into sets"));
    let eight = with("sets", json!(vec![json!({"kind": "closed_pair", "tile": "1B"}); 8]));
    assert!(refused(app.api, eight).await.contains("at most 7 sets, not 8"));
    let incomplete = with("concealed", json!(["1B", "2B", "4B", "4C", "5C", "6C", "7D", "8D", "9D", "EW", "EW"]));
    assert!(refused(app.api, incomplete).await.contains("the hand is not complete"));
    let flower_in_hand = with("concealed", json!(["1B", "2B", "3B", "4C", "5C", "6C", "7D", "8D", "9D", "EW", "1F"]));
    let mut flower_in_hand = flower_in_hand;
    flower_in_hand["win"]["tile"] = json!("9D");
    assert!(refused(app.api, flower_in_hand).await.contains("a winning hand holds no flower, season or animal"));
    // Many tiles: counted, never overflowing.
    let flood = with("visible", json!(vec!["1B"; 5000]));
    assert!(refused(app.api, flood).await.contains("there are only 4 of 1B"));
    let a = app.api.request("GET", "/api/v1/score", None, None).await;
    assert_eq!((a.status, a.body["error"]["code"].as_str()), (405, Some("method_not_allowed")), "{}", a.body);
    // Not JSON, an empty body, not an object.
    for raw in ["", "{", "[]", "\"x\"", "\u{0}"] {
        let head = format!(
            "POST /api/v1/score HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            raw.len()
        );
        let a = http_raw(app.addr, &[head.as_bytes(), raw.as_bytes()].concat()).await.expect("an answer");
        assert_eq!((a.status, a.body["error"]["code"].as_str()), (400, Some("bad_request")), "{raw:?}: {}", a.body);
    }
    app.finish().await;
}

/// A custom preset of the server's is known to the calculator.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn custom_presets_are_known() {
    let app = app().await;
    let admin = app.admin_token().await;
    let preset = json!({"name": "ten-for-going-out", "based_on": "chinese-classical", "options": {"MahJongScore": 10}});
    let a = app.api.request("POST", "/api/v1/admin/presets", Some(&preset), Some(&admin)).await;
    assert_eq!(a.status, 201, "{}", a.body);
    let hand = json!({
        "preset": "ten-for-going-out",
        "seat_wind": "South",
        "sets": [{"kind": "pung", "tile": "RD"}, {"kind": "pung", "tile": "WD"}, {"kind": "pung", "tile": "GD"}],
        "concealed": ["2C", "3C", "4C", "5B", "5B"],
        "win": {"tile": "4C", "from": "discard"}
    });
    assert_eq!(score_of(&score(app.api, hand).await), 704);
    app.finish().await;
}

// ------------------------------------------------- the reference games

/// What a person at the table saw of the hand so far, from the public events.
#[derive(Default)]
struct Watch {
    /// The hand's East, prevailing wind and number in the game (0-based
    /// among hands). (The game's round may move on as the hand is settled.)
    east: Option<PlayerId>,
    round: Option<Wind>,
    hand_index: Option<usize>,
    /// East's wins in an unbroken run before this hand.
    run: (Option<PlayerId>, u32),
    east_won: bool,
    /// Who has discarded, and whether a player's first discard called.
    discarded: [bool; 4],
    original_call: [bool; 4],
    kongs_since_discard: u32,
    /// The winners, with how many sets each had before going out.
    sets_before: [Option<usize>; 4],
    kong_upon_kong: bool,
    special: [bool; 4],
}

impl Watch {
    fn see(&mut self, event: &Event, view: impl Fn(PlayerId) -> SeatView) {
        match event {
            Event::HandStarted { east, round, .. } => {
                let run = if self.run.0 == Some(*east) { self.run.1 } else { 0 };
                *self = Watch {
                    east: Some(*east),
                    round: Some(*round),
                    hand_index: Some(self.hand_index.map_or(0, |i| i + 1)),
                    run: (Some(*east), run),
                    ..Watch::default()
                };
            }
            Event::Discarded { player, calling, .. } => {
                let p = player.index();
                if !self.discarded[p] {
                    self.original_call[p] = *calling;
                }
                self.discarded[p] = true;
                self.kongs_since_discard = 0;
            }
            Event::Konged { .. } | Event::DeclaredClosedKong { .. } | Event::AddedToPung { .. } => {
                self.kongs_since_discard += 1;
            }
            Event::MahJong { player, .. } | Event::RobbedKong { player, .. } => {
                self.sets_before[player.index()] = Some(view(*player).sets.len());
                self.kong_upon_kong = self.kongs_since_discard >= 2 && matches!(event, Event::MahJong { .. });
                if Some(*player) == self.east {
                    self.east_won = true;
                }
            }
            Event::DeclaredSpecialSet { player, .. } => self.special[player.index()] = true,
            Event::Settled { .. } if self.east_won => self.run.1 += 1,
            _ => {}
        }
    }
}

fn tiles_of(set: &TileSet) -> Vec<Value> {
    set.tiles().map(|t| json!(t)).collect()
}

/// A set laid on the table in play (not formed after Mah-Jong).
fn of_play(set: &TileSet) -> bool {
    matches!(set.kind, SetKind::Chow | SetKind::Pung | SetKind::Kong { .. } | SetKind::ClosedKong)
}

/// The request describing `player`'s hand as it lies on the table when it
/// is scored; `arrange` is `given` (exactly as declared) or `best`.
fn described(game: &mahjong::rules::Game, player: PlayerId, watch: &Watch, arrange: &str) -> Value {
    let view = game.view(Some(player));
    let hand = view.hand.as_ref().expect("a hand");
    let seat = hand.seats.iter().find(|s| s.player == player).expect("the seat");
    let mut concealed: Vec<Value> = seat.concealed.clone().expect("its own tiles").iter().map(|t| json!(t)).collect();
    let mut visible: Vec<Value> = hand.discards.iter().map(|(_, t)| json!(t)).collect();
    for other in hand.seats.iter().filter(|s| s.player != player) {
        visible.extend(other.sets.iter().filter(|s| of_play(s)).flat_map(tiles_of));
        visible.extend(other.bonus.iter().map(|t| json!(t)));
    }
    let mut request = json!({
        "options": view.options.to_json_map(),
        "seat_wind": seat.wind,
        "prevailing_wind": watch.round.expect("a hand"),
        "bonus": seat.bonus,
        "visible": visible,
        "arrange": arrange,
    });
    let Some(before) = watch.sets_before[player.index()] else {
        request["sets"] = json!(seat.sets);
        request["concealed"] = json!(concealed);
        return request;
    };
    let tile = hand.winning_tile.expect("the winning tile");
    let from = match hand.whence {
        Whence::Wall => "wall",
        Whence::Discard => "discard",
        Whence::Loose => "loose",
        Whence::RobbedKong => "robbed_kong",
        Whence::Nowhere => panic!("a winner's tile comes from somewhere"),
    };
    let mut sets: Vec<TileSet> = seat.sets[..before].to_vec();
    let mut formed = &seat.sets[before..];
    let mut used_as = Value::Null;
    if matches!(hand.whence, Whence::Discard | Whence::RobbedKong) {
        if watch.special[player.index()] {
            used_as = json!("special_set");
        } else {
            let placed = formed[0];
            formed = &formed[1..];
            concealed.extend(tiles_of(&placed));
            used_as = match placed.kind {
                SetKind::Chow => {
                    let position = ChowPosition::ALL
                        .into_iter()
                        .find(|p| p.lowest_tile(tile) == Some(placed.tile))
                        .expect("the chow holds the tile");
                    json!({"chow": position})
                }
                SetKind::Pung => json!("pung"),
                SetKind::Pair => json!("pair"),
                other => panic!("a discard made a {other:?}"),
            };
        }
    }
    sets.extend_from_slice(formed);
    let no_discard = !watch.discarded[player.index()];
    let others_discarded = Wind::ALL[1..].iter().any(|w| {
        let p = hand.seats[w.index()].player;
        watch.discarded[p.index()]
    });
    request["sets"] = json!(sets);
    request["concealed"] = json!(concealed);
    request["win"] = json!({
        "tile": tile,
        "from": from,
        "used_as": if arrange == "given" { used_as } else { Value::Null },
        "last_tile": hand.live_tiles_left == 0,
        "kong_upon_kong": watch.kong_upon_kong && hand.whence == Whence::Loose,
        "original_call": watch.original_call[player.index()],
        "no_discard": no_discard,
        "only_east_discarded": !others_discarded,
        "east_wins_before": watch.run.1,
    });
    request
}

/// Every hand of the reference games, each player's hand described from
/// what lay on the table once it was declared (the sets, the tiles shown,
/// the bonus tiles, the discards, how the winner went out), scored through
/// the endpoint: exactly the reference's breakdown, line for line, and the
/// engine's itemised score. Arranged by the calculator instead, no hand
/// scores less than it did (the robots do not always declare the best way).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_hand_of_the_reference_games_scores_as_logged() {
    let app = app().await;
    let (mut hands, mut better, mut logged) = (0, 0, 0);
    for dir in corpus_games() {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let log = std::fs::read_to_string(dir.join("game.log")).unwrap();
        let expected: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
        let won = expected["hands"].as_array().expect("hands").iter().filter(|h| h["washout"] == false).count();
        logged += 4 * won;
        let (_, capture) = mahjong::replay::replay_log_captured(&log).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut rebuild = Rebuild::new(capture.options.clone(), false);
        let mut watch = Watch::default();
        for (input, _) in &capture.steps {
            let events = rebuild.apply(input).unwrap_or_else(|e| panic!("{name}: {e}"));
            let game = rebuild.game.as_ref().expect("started");
            let view = |p: PlayerId| {
                let v = game.view(Some(p));
                v.hand.and_then(|h| h.seats.into_iter().find(|s| s.player == p)).expect("the seat")
            };
            for e in events.iter().filter(|e| e.to == Audience::Everyone) {
                watch.see(&e.event, view);
                let Event::HandScored { player, score: in_play } = &e.event else { continue };
                let k = watch.hand_index.expect("a hand");
                let at = format!("{name} hand {} player {}", k + 1, player.index());
                let request = described(game, *player, &watch, "given");
                let answer = score(app.api, request.clone()).await;
                assert_eq!(answer["score"], json!(in_play), "{at}: {request}");
                // The corpus seats player id N in seat N-1 for the first hand.
                let id = (player.index() + 1).to_string();
                let logged = &expected["hands"][k]["scores"][&id]["lines"];
                assert_eq!(answer["score"]["lines"], *logged, "{at}: the logged breakdown");
                let best = score(app.api, described(game, *player, &watch, "best")).await;
                assert!(score_of(&best) >= score_of(&answer), "{at}: {} < {}", score_of(&best), score_of(&answer));
                better += usize::from(score_of(&best) > score_of(&answer));
                hands += 1;
            }
        }
    }
    assert_eq!(hands, logged, "every player's hand of every hand won");
    assert!(hands >= 1400, "the corpus has 371 hands won; {hands} players' hands scored");
    eprintln!("{hands} hands scored as logged; {better} of them score more arranged by the calculator");
    app.finish().await;
}
