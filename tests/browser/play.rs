//! Playing in the browser, in real headless Chromium (`tests/browser/driver.rs`),
//! as people would: by clicking, or with the keyboard only; two people at one
//! table with a spectator watching; a refresh and a dropped connection in the
//! middle of a hand; a stored hand replayed; the scoring calculator.
//!
//! Screenshots of every scenario: `target/screenshots/browser_play/<test>/`.

use crate::common;

use std::time::{Duration, Instant};

use crate::driver::{self as browser, Browser, UI_WAIT};
use common::app::TestApp;
use fantoccini::actions::InputSource;
use serde_json::{Value, json};

/// How long a scenario's game may take before the test gives up.
pub(crate) const GAME_WAIT: Duration = Duration::from_secs(420);

/// What the table screen offers now, read from the page: which moves are on
/// offer (the buttons shown), whether the scoring window is open, the hand
/// and its phase.
pub(crate) const OFFER: &str = r#"(() => {
  const t = window.mjTable;
  const q = (css) => document.querySelector(css);
  const hand = t?.state?.game?.hand;
  return {
    connected: t?.status === 'connected',
    scores_open: !!q('#score-dialog[open]'),
    score_ready: !!q('#score-dialog[open] #score-ready'),
    ready: !!q('#ready') && !!t?.prompt?.ready,
    claim: !!q('#claim-panel #no-claim') && ['answer_discard', 'answer_kong'].includes(t?.prompt?.decision),
    declare: !!q('#actions [data-action="declare_bonus"]'),
    finish: !!q('#finish-declaring'),
    discard: !!q('#discard:not([disabled])') && t?.prompt?.decision === 'discard',
    decision: t?.prompt?.decision ?? null,
    show: !!q('#show-tiles'),
    form: !!q('#actions [data-action="form_closed_set"]'),
    use: !!q('#actions [data-action="use_discard"]'),
    chow_position: !!q('#actions [data-action="choose_chow_position"]'),
    hand: hand?.number ?? 0,
    phase: hand?.phase ?? null,
    over: t?.state?.table?.state === 'over',
    tiles: document.querySelectorAll('#my-hand [data-tile]').length,
    prompt_current: (t?.prompt?.seq ?? -1) >= (t?.state?.seq ?? 0),
    wall: hand?.live_tiles_left ?? null,
  };
})()"#;

/// The spectator's rule, checked in a page: no concealed tile of any seat in
/// the page, nor in its picture of the game, until the hand's tiles are shown
/// (after a Mah-Jong). Answers the tiles that should not be there.
const HIDDEN_CHECK: &str = r#"(() => {
  const hand = window.mjTable?.state?.game?.hand;
  const shown = !hand || hand.phase === 'mah_jonging' || hand.phase === 'finished';
  if (shown) return [];
  const inPage = [...document.querySelectorAll('.hidden-hand [data-tile], #my-hand [data-tile]')].map((e) => e.dataset.tile);
  const inState = hand.seats.flatMap((s) => s.concealed ?? []);
  return inPage.concat(inState);
})()"#;

pub(crate) fn flag(offer: &Value, name: &str) -> bool {
    offer[name].as_bool().unwrap_or(false)
}

/// What a clicking player did in a hand.
#[derive(Default, Debug)]
pub(crate) struct Played {
    pub(crate) discards: usize,
    pub(crate) claims_answered: usize,
    pub(crate) declared_end: usize,
    pub(crate) ready: usize,
    pub(crate) steps: usize,
}

/// Clicks the element if the page shows it now: a real click, through the
/// WebDriver. The page moves on by itself (the robots play), so what was on
/// offer a moment ago may be gone; then nothing is clicked.
async fn try_click(b: &Browser, css: &str) -> bool {
    let Ok(element) = b.client().find(fantoccini::Locator::Css(css)).await else { return false };
    element.click().await.is_ok()
}

/// Makes the page's next move by clicking, as a player who passes every claim
/// and discards the tile offered (the drawn tile, else the rightmost). Answers
/// false when nothing was on offer.
pub(crate) async fn click_next(b: &Browser, offer: &Value, played: &mut Played) -> bool {
    played.steps += 1;
    if flag(offer, "scores_open") {
        if flag(offer, "score_ready") {
            if !try_click(b, "#score-ready").await {
                return false;
            }
            played.ready += 1;
        } else {
            if !try_click(b, "#score-close").await {
                return false;
            }
        }
    } else if flag(offer, "ready") {
        if !try_click(b, "#ready").await {
            return false;
        }
        played.ready += 1;
    } else if flag(offer, "claim") {
        if !try_click(b, "#no-claim").await {
            return false;
        }
        played.claims_answered += 1;
    } else if flag(offer, "declare") {
        if !try_click(b, "#actions [data-action=\"declare_bonus\"]").await {
            return false;
        }
    } else if flag(offer, "finish") {
        if !try_click(b, "#finish-declaring").await {
            return false;
        }
    } else if flag(offer, "discard") {
        // Every other discard by double-clicking the selected tile.
        if played.discards % 2 == 1 {
            let tile = "#my-hand button[aria-selected=\"true\"]";
            let Ok(element) = b.client().find(fantoccini::Locator::Css(tile)).await else { return false };
            // A double click, as the WebDriver's actions make it.
            let actions = fantoccini::actions::MouseActions::new("mouse".to_string())
                .then(fantoccini::actions::PointerAction::MoveToElement { element, duration: None, x: 0.0, y: 0.0 })
                .then(fantoccini::actions::PointerAction::Down { button: fantoccini::actions::MOUSE_BUTTON_LEFT })
                .then(fantoccini::actions::PointerAction::Up { button: fantoccini::actions::MOUSE_BUTTON_LEFT })
                .then(fantoccini::actions::PointerAction::Down { button: fantoccini::actions::MOUSE_BUTTON_LEFT })
                .then(fantoccini::actions::PointerAction::Up { button: fantoccini::actions::MOUSE_BUTTON_LEFT });
            if b.client().perform_actions(actions).await.is_err() {
                return false;
            }
        } else {
            if !try_click(b, "#discard").await {
                return false;
            }
        }
        played.discards += 1;
    } else if flag(offer, "use") {
        if !try_click(b, "#actions [data-action=\"use_discard\"]").await {
            return false;
        }
    } else if flag(offer, "chow_position") {
        if !try_click(b, "#actions [data-action=\"choose_chow_position\"]").await {
            return false;
        }
    } else if flag(offer, "form") {
        if !try_click(b, "#actions [data-action=\"form_closed_set\"]").await {
            return false;
        }
        played.declared_end += 1;
    } else if flag(offer, "show") {
        if !try_click(b, "#show-tiles").await {
            return false;
        }
        played.declared_end += 1;
    } else {
        return false;
    }
    true
}

/// The pause between two looks at the page in a playing loop. Nothing waits
/// on it to be done: each loop reads the page's offer again after it, and
/// ends by its deadline if what it waits for never comes.
pub(crate) async fn poll_pause() {
    tokio::time::sleep(Duration::from_millis(60)).await;
}

/// As the table's manager, chooses the game's length in the options panel
/// from the values the option allows (1, 2, 4, ...), and waits until the
/// table has told everyone.
pub(crate) async fn choose_rounds(b: &Browser, n: u32) {
    b.wait_for("#options-form #option-NumRounds", UI_WAIT).await;
    let allowed = b.eval("[...document.querySelectorAll('#option-NumRounds option')].map((o) => o.value)").await;
    assert_eq!(
        allowed.as_array().map(|a| a[..3].to_vec()),
        Some(vec![json!("1"), json!("2"), json!("4")]),
        "{allowed}"
    );
    b.eval(&format!(
        "(() => {{ const s = document.querySelector('#option-NumRounds'); s.value = '{n}'; s.dispatchEvent(new Event('change')); }})()"
    ))
    .await;
    b.wait_until(&format!("mjTable.log.some((l) => l.includes('NumRounds set to {n}'))"), UI_WAIT).await;
}

/// Seats a guest named `name` in the lobby's field.
pub(crate) async fn enter_as_guest(b: &Browser, app: &TestApp, name: &str) {
    b.goto(&app.url("/")).await;
    b.wait_for("#guest-name", UI_WAIT).await;
    b.type_into("#guest-name", name).await;
}

/// The table's id from the page's address (`#/table/ID`).
pub(crate) async fn table_id(b: &Browser) -> String {
    b.wait_until("location.hash.startsWith('#/table/')", UI_WAIT).await;
    b.eval("location.hash.split('/')[2]").await.as_str().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_guest_plays_a_hand_against_robots_by_clicking_while_a_spectator_watches() {
    let app = browser::serve().await;
    let (me, watcher) = tokio::join!(Browser::desktop(), Browser::desktop());
    enter_as_guest(&me, &app, "Ann").await;
    // Asked about every discard, to answer claim dialogs (by default the
    // table passes for us when we cannot claim: tests/browser/newcomer.rs).
    me.eval("localStorage.setItem('mj.everyDiscard', '1')").await;
    me.screenshot("lobby").await;
    me.click("#quick-play").await;
    let id = table_id(&me).await;
    watcher.goto(&app.url(&format!("/#/table/{id}"))).await;
    watcher.wait_for(".felt .player", UI_WAIT).await;
    me.wait_for("#ready", UI_WAIT).await;
    me.screenshot("ready").await;

    let mut played = Played::default();
    me.click("#ready").await;
    me.wait_until("document.querySelectorAll('#my-hand [data-tile]').length >= 13", UI_WAIT).await;
    me.screenshot("dealt").await;
    watcher.screenshot("spectator-dealt").await;
    let mut claim_shot = false;
    let deadline = Instant::now() + GAME_WAIT;
    loop {
        assert!(Instant::now() < deadline, "the hand did not end in time: {played:?}");
        assert_eq!(watcher.eval(HIDDEN_CHECK).await, json!([]), "the spectator's page holds concealed tiles");
        let offer = me.eval(OFFER).await;
        if flag(&offer, "scores_open") {
            break;
        }
        if flag(&offer, "claim") && !claim_shot {
            me.screenshot("claim").await;
            claim_shot = true;
        }
        if !click_next(&me, &offer, &mut played).await {
            poll_pause().await;
        }
    }
    assert!(played.discards >= 1, "{played:?}");
    assert!(played.claims_answered >= 1, "at least one claim dialog answered: {played:?}");
    // The hand's end: every hand is declared or shown (by us, when a robot won).
    let won = me.eval("mjTable.state.game.hand.outcome !== 'wash_out'").await == json!(true);
    let ours = me.eval("(mjTable.state.game.hand.winners ?? []).includes(0)").await == json!(true);
    if won && !ours {
        assert!(played.declared_end >= 1, "we showed our tiles: {played:?}");
    }
    // The scoring window: four hands, each scored, and (after a win) the settlement.
    me.wait_until("document.querySelectorAll('#score-dialog .score-card').length === 4", UI_WAIT).await;
    let scoring = me.text("#score-dialog").await;
    for name in ["Ann", "Robot 2", "Robot 3", "Robot 4"] {
        assert!(scoring.contains(name), "{name} in the scoring window:\n{scoring}");
    }
    if won {
        assert!(scoring.contains("Settlement"), "{scoring}");
        let totals = me.eval("mjTable.state.game.scores.reduce((a, b) => a + b, 0)").await;
        assert_eq!(totals, json!(0), "the settlement adds up");
        assert!(scoring.contains("went Mah-Jong"), "{scoring}");
    }
    me.screenshot("scores").await;
    watcher.screenshot("spectator-scores").await;
    // The window can be closed and opened again.
    me.click("#score-close").await;
    me.wait_until("!document.querySelector('#score-dialog[open]')", UI_WAIT).await;
    me.click("#show-scores").await;
    me.wait_for("#score-dialog[open]", UI_WAIT).await;
    me.assert_no_console_errors().await;
    watcher.assert_no_console_errors().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_game_played_with_the_keyboard_only() {
    let app = browser::serve().await;
    let me = Browser::desktop().await;
    enter_as_guest(&me, &app, "Keys").await;
    me.click("#quick-play").await;
    table_id(&me).await;
    // As the manager, before the first hand: a one-round game.
    choose_rounds(&me, 1).await;
    me.eval("document.activeElement.blur()").await;

    let deadline = Instant::now() + GAME_WAIT;
    let mut presses = 0;
    let mut moved = false;
    let mut hands = 0;
    loop {
        assert!(Instant::now() < deadline, "the game did not end in time ({presses} keys, {hands} hands)");
        let offer = me.eval(OFFER).await;
        if flag(&offer, "over") && flag(&offer, "scores_open") {
            break;
        }
        hands = offer["hand"].as_u64().unwrap_or(0);
        let key = if flag(&offer, "scores_open") {
            if flag(&offer, "score_ready") { Some("r") } else { None }
        } else if flag(&offer, "ready") {
            Some("r")
        } else if flag(&offer, "claim") {
            Some("n")
        } else if flag(&offer, "discard") && !moved {
            // Once: the selection moves with the arrows, and Shift moves the tile itself.
            let before = me.eval("mjTable.selected").await;
            me.press_key("ArrowLeft").await;
            me.wait_until(&format!("mjTable.selected !== {before} || {before} === 0"), UI_WAIT).await;
            // Shift moves the tile itself (two equal tiles may swap unseen: the index tells).
            let at = me.eval("mjTable.selected").await;
            me.press_key("Shift+ArrowLeft").await;
            me.wait_until(&format!("!mjTable.autoSort && (mjTable.selected === {at} - 1 || {at} === 0)"), UI_WAIT)
                .await;
            moved = true;
            Some("Enter")
        } else if flag(&offer, "declare") || flag(&offer, "finish") || flag(&offer, "discard") || flag(&offer, "show") {
            Some("Enter")
        } else {
            None
        };
        match key {
            Some(k) => {
                me.press_key(k).await;
                presses += 1;
                poll_pause().await;
            }
            None => poll_pause().await,
        }
    }
    assert!(moved, "the arrows moved the selection");
    assert!(hands >= 4, "a round has at least four hands ({hands})");
    let text = me.text("#score-dialog").await;
    assert!(text.contains("Final standings"), "{text}");
    me.screenshot("game-over").await;
    me.assert_no_console_errors().await;
}

/// The client's picture of the game against a fresh snapshot, asked for now:
/// our hand, every seat's sets and counts, the discards. The picture is taken
/// when the snapshot arrives, before it is applied: the events sent before
/// it have all been applied by then (a client still catching up on a busy
/// machine is not behind a snapshot that follows them).
async fn picture_matches_a_fresh_snapshot(b: &Browser) {
    let same = b
        .eval(
            r#"new Promise((resolve) => {
  const t = window.mjTable;
  const pic = (hand) => JSON.stringify(hand.seats.map((s) => [s.player, s.concealed_count, s.sets, s.bonus,
    s.concealed ? [...s.concealed].sort() : null]).concat([hand.discards, hand.live_tiles_left]));
  const original = t.onMessage.bind(t);
  t.onMessage = (m) => {
    if (m.type === 'snapshot') {
      const mine = pic(t.state.game.hand);
      t.onMessage = original;
      original(m);
      resolve([mine === pic(m.game.hand), mine, pic(m.game.hand)]);
      return;
    }
    original(m);
  };
  t.connection.send({ type: 'snapshot' });
})"#,
        )
        .await;
    assert_eq!(same[0], json!(true), "the client's picture is the server's: {same}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refresh_and_a_dropped_connection_in_the_middle_of_a_hand_miss_nothing() {
    let app = browser::serve().await;
    let me = Browser::desktop().await;
    enter_as_guest(&me, &app, "Bo").await;
    me.click("#quick-play").await;
    let id = table_id(&me).await;
    me.click("#ready").await;
    let mut played = Played::default();
    // Play to our second turn to discard (the wall shorter than at our first),
    // and stop there: the table waits for us. A flower or season drawn is
    // declared first: a refreshed page selects the tile just drawn, and a
    // bonus tile cannot be discarded.
    let deadline = Instant::now() + GAME_WAIT;
    let mut wall_at_first = None;
    loop {
        assert!(Instant::now() < deadline, "no second discard came: {played:?}");
        let offer = me.eval(OFFER).await;
        let ours = flag(&offer, "discard") && flag(&offer, "prompt_current") && !flag(&offer, "declare");
        if ours && wall_at_first.is_some_and(|w| offer["wall"].as_u64() < Some(w)) {
            break;
        }
        if ours && wall_at_first.is_none() {
            wall_at_first = offer["wall"].as_u64();
        }
        if !click_next(&me, &offer, &mut played).await {
            poll_pause().await;
        }
    }
    me.wait_for("#discard:not([disabled])", UI_WAIT).await;
    picture_matches_a_fresh_snapshot(&me).await;
    let before = me
        .eval(
            "[mjTable.state.seat, [...mjTable.arrangement].sort().join(' '), mjTable.state.game.hand.discards.length]",
        )
        .await;
    me.screenshot("before-refresh").await;

    // A refresh: the same seat, the same hand, our turn still.
    me.client().refresh().await.unwrap();
    me.wait_for("#discard:not([disabled])", UI_WAIT).await;
    assert_eq!(me.eval(&format!("location.hash === '#/table/{id}'")).await, json!(true));
    let after = me
        .eval(
            "[mjTable.state.seat, [...mjTable.arrangement].sort().join(' '), mjTable.state.game.hand.discards.length]",
        )
        .await;
    assert_eq!(before, after, "back in the same seat with the same hand");
    me.screenshot("after-refresh").await;

    // A dropped socket while the robots play: it reconnects with `since` by itself.
    me.click("#discard").await;
    // The old socket is kept aside: its close event comes later than
    // `drop()` returns, and until then the status still reads "connected".
    me.eval("(window.droppedSocket = mjTable.connection.ws, mjTable.connection.drop(), true)").await;
    me.wait_until(
        "mjTable.connection.ws !== window.droppedSocket && mjTable.status === 'connected' && mjTable.connection.attempt === 0",
        UI_WAIT,
    )
    .await;
    let resumed_from = me.eval("mjTable.connection.ws.url").await;
    assert!(resumed_from.as_str().unwrap().contains("since="), "resumed with since: {resumed_from}");
    let deadline = Instant::now() + GAME_WAIT;
    loop {
        assert!(Instant::now() < deadline, "no discard came after the drop");
        let offer = me.eval(OFFER).await;
        if offer["decision"] == "discard" && flag(&offer, "discard") && flag(&offer, "prompt_current") {
            break;
        }
        if flag(&offer, "scores_open") || offer["phase"] == "mah_jonging" {
            // The hand ended before our turn came back: the picture is checked there.
            break;
        }
        if !click_next(&me, &offer, &mut played).await {
            poll_pause().await;
        }
    }
    let offer = me.eval(OFFER).await;
    if offer["decision"] == "discard" && flag(&offer, "prompt_current") {
        picture_matches_a_fresh_snapshot(&me).await;
    }
    me.assert_no_console_errors().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_people_in_two_browsers_play_a_hand_one_of_them_on_a_phone() {
    let app = browser::serve().await;
    let (ann, bob, watcher) = tokio::join!(Browser::desktop(), Browser::phone(), Browser::desktop());
    // Ann registers, and opens a table with robots in two seats only.
    ann.goto(&app.url("/")).await;
    ann.wait_for("#account", UI_WAIT).await;
    ann.click("#account button:nth-of-type(2)").await;
    ann.wait_for("#auth-name", UI_WAIT).await;
    ann.type_into("#auth-name", "Ann").await;
    ann.type_into("#auth-password", "correct horse battery").await;
    ann.click("#auth-submit").await;
    ann.wait_until("document.querySelector('#me-name')?.textContent === 'Ann'", UI_WAIT).await;
    ann.type_into("#new-name", "Two of us").await;
    ann.client().find(fantoccini::Locator::Css("#robot-1")).await.unwrap().click().await.unwrap();
    ann.click("#open-table button[type=submit]").await;
    let id = table_id(&ann).await;
    // Bob, a guest on his phone, finds it in the lobby and sits.
    enter_as_guest(&bob, &app, "Bob").await;
    let sit = format!("li[data-table=\"{id}\"] button[data-table=\"{id}\"]");
    bob.wait_for(&sit, UI_WAIT).await;
    bob.screenshot("lobby").await;
    bob.click(&sit).await;
    table_id(&bob).await;
    // A spectator watches from the lobby's Watch link.
    watcher.goto(&app.url("/")).await;
    watcher.click(&format!("li[data-table=\"{id}\"] a[aria-label^=\"Watch\"]")).await;
    watcher.wait_for(".felt .player", UI_WAIT).await;
    ann.wait_for("#start:not([disabled])", UI_WAIT).await;
    ann.screenshot("seated").await;
    ann.click("#start").await;

    let mut a = Played::default();
    let mut b = Played::default();
    let mut phone_checked = false;
    let (mut done_a, mut done_b) = (false, false);
    let deadline = Instant::now() + GAME_WAIT;
    while !(done_a && done_b) {
        assert!(Instant::now() < deadline, "the hand did not end: {a:?} {b:?}");
        assert_eq!(watcher.eval(HIDDEN_CHECK).await, json!([]), "the spectator's page holds concealed tiles");
        let (oa, ob) = (ann.eval(OFFER).await, bob.eval(OFFER).await);
        // Each plays until the hand's scores are shown on its screen.
        done_a |= flag(&oa, "scores_open");
        done_b |= flag(&ob, "scores_open");
        if flag(&ob, "discard") && !phone_checked {
            // On the phone: the whole hand and every button within the screen's width.
            let outside = bob
                .eval(
                    "[...document.querySelectorAll('#my-hand button, #actions button')].filter((e) => { const r = \
                     e.getBoundingClientRect(); return r.left < 0 || r.right > innerWidth + 0.5; }).length",
                )
                .await;
            assert_eq!(outside, json!(0), "tiles or buttons outside the phone's screen");
            assert!(ob["tiles"].as_u64().unwrap() >= 11, "{ob}");
            bob.screenshot("phone-discard").await;
            phone_checked = true;
        }
        let moved_a = !done_a && click_next(&ann, &oa, &mut a).await;
        let moved_b = !done_b && click_next(&bob, &ob, &mut b).await;
        if !moved_a && !moved_b {
            poll_pause().await;
        }
    }
    assert!(a.discards + b.discards >= 1, "{a:?} {b:?}");
    assert!(phone_checked || b.discards == 0, "the phone's hand was checked");
    ann.screenshot("scores").await;
    bob.screenshot("phone-scores").await;
    watcher.screenshot("spectator-scores").await;

    // Ann, from another device, finds her unfinished game in the lobby.
    let elsewhere = Browser::desktop().await;
    elsewhere.goto(&app.url("/")).await;
    elsewhere.click("#account button:nth-of-type(1)").await;
    elsewhere.type_into("#auth-name", "Ann").await;
    elsewhere.type_into("#auth-password", "correct horse battery").await;
    elsewhere.click("#auth-submit").await;
    elsewhere.wait_for(&format!("#my-games a[href=\"#/table/{id}\"]"), UI_WAIT).await;
    elsewhere.screenshot("unfinished-games").await;
    for b in [&ann, &bob, &watcher, &elsewhere] {
        b.assert_no_console_errors().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_replay_viewer_steps_through_a_stored_hand() {
    let app = browser::serve().await;
    let id = app
        .api
        .create_table(json!({"name": "Stored", "robots": [{}, {}, {}, {}], "start": true, "options": {"NumRounds": 1}}))
        .await;
    app.api.wait_over(&id).await;
    let b = Browser::desktop().await;
    b.goto(&app.url("/#/games")).await;
    b.click(&format!("tr[data-game=\"{id}\"] a")).await;
    b.wait_for("#replay-forward", UI_WAIT).await;
    let step = || async { b.text("#replay-step").await };
    assert!(step().await.starts_with("Step 0 of"), "{}", step().await);
    assert_eq!(b.text(".table-bar .state").await.to_lowercase(), "replay", "a finished game's badge");
    let mut labels = Vec::new();
    for _ in 0..60 {
        b.click("#replay-forward").await;
        labels.push(step().await);
    }
    b.wait_until("document.querySelector('#replay-step').textContent.startsWith('Step 60 of')", UI_WAIT).await;
    // Every step is labelled with a sentence (a draw says who drew what), and
    // the log beside the table holds the lines up to it.
    for label in &labels {
        let sentence = label.split_once(": ").map(|(_, s)| s).unwrap_or_default();
        assert!(sentence.ends_with('.') || sentence.ends_with('!'), "a step labelled with a sentence: {label}");
    }
    assert!(labels.iter().any(|l| l.contains(" drew ")), "the draws are labelled: {labels:#?}");
    let log = b.eval("[...document.querySelectorAll('#game-log > p')].map((p) => p.textContent)").await;
    let log: Vec<String> = serde_json::from_value(log).unwrap();
    assert!(log.len() > 5, "the replay's log: {log:?}");
    let last = log.last().unwrap();
    assert!(labels.iter().any(|l| l.ends_with(last.as_str())), "the log's last line is a step's: {last} / {labels:#?}");
    // Every hand is shown in a replay of a finished game, and the discards are on the table.
    let faces = b.eval("document.querySelectorAll('.hidden-hand [data-tile]').length").await;
    assert!(faces.as_u64().unwrap() >= 30, "the concealed hands are shown: {faces}");
    let discards = b.eval("document.querySelectorAll('#discards [data-tile]').length").await.as_u64().unwrap();
    b.screenshot("step-60").await;
    for _ in 0..10 {
        b.click("#replay-back").await;
    }
    b.wait_until("document.querySelector('#replay-step').textContent.startsWith('Step 50 of')", UI_WAIT).await;
    let fewer = b.eval("document.querySelectorAll('#discards [data-tile]').length").await.as_u64().unwrap();
    assert!(fewer <= discards, "stepping back takes discards back ({fewer} after {discards})");
    b.click("#replay-scoring").await;
    b.wait_for("#score-dialog[open]", UI_WAIT).await;
    b.wait_until("document.querySelectorAll('#score-dialog .score-card').length === 4", UI_WAIT).await;
    b.screenshot("scoring").await;
    b.click("#score-close").await;
    // The next hand, from the hand chooser.
    b.eval("(() => { const s = document.querySelector('#replay-hand'); s.value = '2'; s.dispatchEvent(new Event('change')); })()")
        .await;
    b.wait_until(&format!("location.hash === '#/replay/{id}/2'"), UI_WAIT).await;
    b.wait_for("#replay-forward", UI_WAIT).await;
    b.wait_until("document.querySelector('.table-bar').textContent.includes('hand 2')", UI_WAIT).await;
    assert!(b.text(".centre").await.contains("Hand 2 is about to be dealt"), "{}", b.text(".centre").await);
    b.assert_no_console_errors().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_calculator_reproduces_seed_004s_worked_example() {
    let app = browser::serve().await;
    let b = Browser::desktop().await;
    b.goto(&app.url("/#/calculator")).await;
    b.click("#calc-example").await;
    b.click("#calc-score").await;
    // "(10 + 12) x 8 x 4 = 704": seed 004's Three Great Scholars with a chow.
    b.wait_until("document.querySelector('#calc-results')?.textContent.includes('704')", UI_WAIT).await;
    b.screenshot("seed-004").await;
    let phone = Browser::phone().await;
    phone.goto(&app.url("/#/calculator")).await;
    phone.click("#calc-example").await;
    phone.click("#calc-score").await;
    phone.wait_until("document.querySelector('#calc-results')?.textContent.includes('704')", UI_WAIT).await;
    phone.screenshot("seed-004-phone").await;
    b.assert_no_console_errors().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standings_list_the_players_of_stored_games() {
    let app = browser::serve().await;
    let id =
        app.api.create_table(json!({"robots": [{}, {}, {}, {}], "start": true, "options": {"NumRounds": 1}})).await;
    app.api.wait_over(&id).await;
    let b = Browser::phone().await;
    b.goto(&app.url("/#/standings")).await;
    b.wait_for("#standings", UI_WAIT).await;
    let text = b.text("#standings").await;
    for name in ["Robot 1", "Robot 2", "Robot 3", "Robot 4"] {
        assert!(text.contains(name), "{text}");
    }
    b.screenshot("standings").await;
    b.assert_no_console_errors().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_reaches_a_spectator_and_a_pause_waits_for_everyone() {
    let app = browser::serve().await;
    let (me, watcher) = tokio::join!(Browser::desktop(), Browser::phone());
    enter_as_guest(&me, &app, "Cy").await;
    me.click("#quick-play").await;
    let id = table_id(&me).await;
    watcher.goto(&app.url(&format!("/#/table/{id}"))).await;
    watcher.wait_for(".felt .player", UI_WAIT).await;
    me.click("#ready").await;
    me.wait_until("document.querySelectorAll('#my-hand [data-tile]').length >= 13", UI_WAIT).await;

    me.type_into("#chat-input", "Good luck, everyone").await;
    me.press_key("Enter").await;
    watcher
        .wait_until(
            "[...document.querySelectorAll('.chat-line')].some((p) => p.textContent === 'Cy: Good luck, everyone')",
            UI_WAIT,
        )
        .await;
    // A spectator reads the chat but has nothing to write it with (the server would refuse).
    assert_eq!(watcher.eval("document.querySelector('#chat-input').offsetParent === null").await, json!(true));

    me.click("#pause").await;
    me.type_into("#pause-reason", "phone call").await;
    me.click("#pause-submit").await;
    me.wait_for("#ready", UI_WAIT).await;
    assert!(me.text("#ready").await.contains("Ready to resume"), "{}", me.text("#ready").await);
    watcher.wait_until("document.querySelector('.table-bar').textContent.includes('Paused')", UI_WAIT).await;
    me.screenshot("paused").await;
    me.click("#ready").await;
    me.wait_until("!mjTable.state.table.paused", UI_WAIT).await;
    watcher.wait_until("!mjTable.state.table.paused", UI_WAIT).await;
    me.assert_no_console_errors().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn easts_tile_swap_is_played_from_the_page() {
    let app = browser::serve().await;
    let id = app
        .api
        .create_table(
            json!({"name": "Swap", "robots": [{"seat": 1}, {"seat": 2}, {"seat": 3}], "options": {"TileSwap": true}}),
        )
        .await;
    let me = Browser::desktop().await;
    enter_as_guest(&me, &app, "Di").await;
    me.click(&format!("li[data-table=\"{id}\"] button[data-table=\"{id}\"]")).await;
    table_id(&me).await;
    me.click("#start").await;
    me.click("#ready").await;
    let mut played = Played::default();
    let deadline = Instant::now() + GAME_WAIT;
    // Declare, then East (us) chooses how many lots to swap.
    loop {
        assert!(Instant::now() < deadline, "no swap came: {played:?}");
        let offer = me.eval(OFFER).await;
        if offer["decision"] == "choose_swap" {
            break;
        }
        if !click_next(&me, &offer, &mut played).await {
            poll_pause().await;
        }
    }
    me.screenshot("choose-swap").await;
    me.click("#actions [data-action=\"choose_swap\"][data-lots=\"2\"]").await;
    for lot in 1..=2 {
        me.wait_until("mjTable.prompt?.decision === 'pass_tile'", UI_WAIT).await;
        let tile = "#my-hand button:not([data-tile$=\"F\"]):not([data-tile$=\"S\"])";
        me.click(tile).await;
        me.screenshot(&format!("pass-tile-{lot}")).await;
        me.click("#pass-tile").await;
        me.wait_until(&format!("mjTable.state.seq > 0 && mjTable.prompt?.decision !== 'pass_tile' || mjTable.state.game.hand.swap?.lot > {lot}"), UI_WAIT)
            .await;
    }
    // After the swap, play starts: our picture is the server's.
    me.wait_until("mjTable.prompt?.decision === 'discard' && !mjTable.state.stale", UI_WAIT).await;
    picture_matches_a_fresh_snapshot(&me).await;
    me.assert_no_console_errors().await;
}
