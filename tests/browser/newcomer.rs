//! What a newcomer meets at a table, in real headless Chromium: every claim
//! button, every move and the scoring window's buttons inside the window at
//! the desktop and phone sizes people use, without scrolling; a game where
//! the table passes for us whenever we cannot claim, so we are asked only
//! when a claim is legal, with a log that keeps up to the last line; a
//! refresh that keeps the log and the chat; a friend who joins by the
//! table's link and shows as connected to the host at once.
//!
//! Screenshots: `target/screenshots/browser/<test>/` (look at them).

use crate::common;

use std::time::Instant;

use crate::driver::{self as browser, Browser, UI_WAIT};
use crate::play::{GAME_WAIT, OFFER, Played, choose_rounds, click_next, enter_as_guest, flag, poll_pause, table_id};
use common::app::TestApp;
use serde_json::{Value, json};

/// The buttons matched by a CSS selector that are drawn but not wholly
/// inside the window: their text and box (empty when all are in view).
fn outside_the_window(css: &str) -> String {
    format!(
        r#"[...document.querySelectorAll({css:?})]
  .filter((b) => b.offsetParent !== null)
  .map((b) => [b.textContent.trim(), b.getBoundingClientRect()])
  .filter(([, r]) => r.top < 0 || r.left < 0 || r.bottom > innerHeight + 0.5 || r.right > innerWidth + 0.5)
  .map(([t, r]) => `${{t}} at ${{Math.round(r.left)}},${{Math.round(r.top)}}-${{Math.round(r.right)}},${{Math.round(r.bottom)}}`)"#
    )
}

/// How many buttons a selector matches that are drawn now.
fn drawn(css: &str) -> String {
    format!("[...document.querySelectorAll({css:?})].filter((b) => b.offsetParent !== null).length")
}

/// Plays one hand against robots in a window of `width` x `height`, asked
/// about every discard, and checks at each claim, each discard and the
/// scoring window that the buttons on offer are inside the window.
async fn buttons_in_view(width: u32, height: u32) {
    let app = browser::serve().await;
    let me = Browser::open(width, height).await;
    enter_as_guest(&me, &app, "Newcomer").await;
    me.eval("localStorage.setItem('mj.everyDiscard', '1')").await;
    me.click("#quick-play").await;
    table_id(&me).await;
    me.wait_for("#ready", UI_WAIT).await;
    assert_eq!(me.eval(&outside_the_window("#ready")).await, json!([]), "the Ready button");
    me.screenshot("ready").await;
    me.click("#ready").await;
    let mut played = Played::default();
    let (mut claims_seen, mut discards_seen) = (0, 0);
    let deadline = Instant::now() + GAME_WAIT;
    loop {
        assert!(Instant::now() < deadline, "the hand did not end in time: {played:?}");
        let offer = me.eval(OFFER).await;
        if flag(&offer, "scores_open") {
            break;
        }
        if flag(&offer, "claim") && me.eval(&drawn("#claim-panel button")).await.as_u64() > Some(0) {
            let outside = me.eval(&outside_the_window("#claim-panel button")).await;
            assert_eq!(outside, json!([]), "claim buttons outside the {width}x{height} window");
            if claims_seen == 0 {
                me.screenshot("claim").await;
            }
            claims_seen += 1;
        }
        if flag(&offer, "discard") {
            let outside = me.eval(&outside_the_window("#actions button, #my-hand button")).await;
            assert_eq!(outside, json!([]), "moves or our tiles outside the {width}x{height} window");
            if discards_seen == 0 {
                me.screenshot("discard").await;
            }
            discards_seen += 1;
        }
        if !click_next(&me, &offer, &mut played).await {
            poll_pause().await;
        }
    }
    assert!(claims_seen > 0 && discards_seen > 0, "a claim and a discard were checked: {played:?}");
    me.wait_until("document.querySelectorAll('#score-dialog .score-card').length === 4", UI_WAIT).await;
    let outside = me.eval(&outside_the_window("#score-dialog[open] .dialog-foot button")).await;
    assert_eq!(outside, json!([]), "the scoring window's buttons outside the {width}x{height} window");
    assert!(me.eval(&drawn("#score-dialog[open] .dialog-foot button")).await.as_u64() > Some(0));
    me.screenshot("scores").await;
    me.assert_no_console_errors().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn buttons_in_view_at_1280x720() {
    buttons_in_view(1280, 720).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn buttons_in_view_at_1366x768() {
    buttons_in_view(1366, 768).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn buttons_in_view_at_1920x1080() {
    buttons_in_view(1920, 1080).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn buttons_in_view_on_a_phone_upright_390x844() {
    buttons_in_view(390, 844).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn buttons_in_view_on_a_phone_on_its_side_844x390() {
    buttons_in_view(844, 390).await;
}

/// The log's last line (not the chat's) and how many lines it has been given.
const LOG_STATE: &str = r#"(() => {
  const lines = [...document.querySelectorAll('#game-log > p:not(.chat-line)')].map((p) => p.textContent);
  // A refusal of a click that came too late (the test clicks as fast as it can) is not the game's.
  const moves = lines.filter((l) => !l.startsWith('⚠'));
  return { last_move: moves[moves.length - 1] ?? null, shown: lines.length, written: mjTable.logVersion, kept: mjTable.log.length };
})()"#;

/// The claim dialog open now: its discard and the moves it offers (`null`
/// when none is open).
const ASKED: &str = r#"(() => {
  const p = mjTable.prompt;
  if (!document.querySelector('#claim-panel') || !['answer_discard', 'answer_kong'].includes(p?.decision)) return null;
  return [p.claimable?.discard ?? null, p.actions.map((a) => a.action)];
})()"#;

/// A whole two-round game at 1366x768 with the table passing for us: every claim
/// dialog offers a claim (never "No claim" alone), we are asked about fewer
/// discards than the robots made, and at the end the log's last line is the
/// game's end, however many lines it was given.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn asked_only_when_a_claim_is_legal_and_the_log_keeps_up() {
    let app = browser::serve().await;
    let me = Browser::open(1366, 768).await;
    enter_as_guest(&me, &app, "Auto").await;
    me.click("#quick-play").await;
    table_id(&me).await;
    choose_rounds(&me, 1).await;
    // The panel shows the value now in force, in words and with its description.
    me.wait_until("document.querySelector('#option-NumRounds')?.value === '1'", UI_WAIT).await;
    let panel = me.text("#options-form").await;
    assert!(panel.contains("Rounds to play") && panel.contains("Time to claim"), "{panel}");
    me.screenshot("options").await;
    // Then two rounds: eight hands at least (a whole game of four rounds
    // passes too, but takes CI twice as long).
    choose_rounds(&me, 2).await;
    assert_eq!(
        me.eval("document.querySelector('#every-discard').checked").await,
        json!(false),
        "asked only when we can claim"
    );

    let mut played = Played::default();
    let mut asked = 0;
    let mut last_asked = None;
    let mut hands = 0;
    let deadline = Instant::now() + GAME_WAIT;
    loop {
        assert!(Instant::now() < deadline, "the game did not end in time: {played:?}");
        let offer = me.eval(OFFER).await;
        hands = hands.max(offer["hand"].as_u64().unwrap_or(0));
        if flag(&offer, "over") && flag(&offer, "scores_open") {
            break;
        }
        // The prompt as it stands (the robots move on meanwhile): a claim
        // dialog's moves, when one is open.
        let prompt = me.eval(ASKED).await;
        if !prompt.is_null() {
            let actions = prompt[1].as_array().cloned().unwrap_or_default();
            assert!(actions.iter().any(|a| a == "claim"), "asked with nothing to claim: {prompt}");
            if last_asked != Some(prompt[0].clone()) {
                asked += 1;
                if last_asked.is_none() {
                    me.screenshot("claim").await;
                }
                last_asked = Some(prompt[0].clone());
            }
        }
        if !click_next(&me, &offer, &mut played).await {
            poll_pause().await;
        }
    }
    // The robots' discards, from the page's own log.
    let robots_discards =
        me.eval("mjTable.log.filter((l) => /^Robot \\d discarded/.test(l)).length + 0").await.as_u64().unwrap_or(0);
    eprintln!("asked about {asked} discards; the robots discarded at least {robots_discards} times: {played:?}");
    assert!(robots_discards as usize > asked, "asked {asked} times for {robots_discards} robot discards");
    assert!(hands >= 8, "two rounds have eight hands at least ({hands})");
    let log = me.eval(LOG_STATE).await;
    eprintln!("the log: {log}");
    let last = log["last_move"].as_str().unwrap_or_default();
    assert!(last.starts_with("Game over."), "the log's last line is the game's end: {log}");
    assert_eq!(log["shown"], log["kept"], "every line kept is shown: {log}");
    me.screenshot("game-over").await;
    me.assert_no_console_errors().await;
}

/// A refresh in the middle of a hand: the log comes back with what it held
/// (the lines of this hand so far) and the chat with our message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refresh_keeps_the_log_and_the_chat() {
    let app = browser::serve().await;
    let me = Browser::desktop().await;
    enter_as_guest(&me, &app, "Refresh").await;
    me.click("#quick-play").await;
    table_id(&me).await;
    me.click("#ready").await;
    // Play a few moves of the first hand.
    let mut played = Played::default();
    let deadline = Instant::now() + GAME_WAIT;
    while played.discards < 3 {
        assert!(Instant::now() < deadline, "three discards did not come: {played:?}");
        let offer = me.eval(OFFER).await;
        assert!(!flag(&offer, "scores_open"), "the hand ended before three discards of ours");
        if !click_next(&me, &offer, &mut played).await {
            poll_pause().await;
        }
    }
    me.type_into("#chat-input", "hello from before the refresh").await;
    me.press_key("Enter").await;
    me.wait_until("mjTable.state.chat.some((c) => c.text === 'hello from before the refresh')", UI_WAIT).await;
    let before: Value = me.eval("mjTable.log.filter((l) => !l.startsWith('⚠'))").await;
    let before: Vec<String> = serde_json::from_value(before).unwrap();
    assert!(before.iter().any(|l| l.starts_with("Hand 1, East round:")), "{before:?}");
    me.screenshot("before-refresh").await;

    me.client().refresh().await.unwrap();
    me.wait_until("mjTable?.state && mjTable.log.length > 0", UI_WAIT).await;
    me.wait_until("mjTable.log.some((l) => l.startsWith('Hand 1, East round:'))", UI_WAIT).await;
    let after: Vec<String> = serde_json::from_value(me.eval("mjTable.log").await).unwrap();
    // Every line the hand had before the refresh is there again, in order
    // (the robots may have added some since).
    let hand_lines: Vec<&String> = before.iter().skip_while(|l| !l.starts_with("Hand 1,")).collect();
    let mut rest = after.iter();
    for line in &hand_lines {
        assert!(rest.any(|l| l == *line), "{line:?} lost or out of order after the refresh:\n{after:#?}");
    }
    // The page draws the restored log on its next frame: wait for the box,
    // not the model (reading it at once raced the drawing).
    me.wait_until(
        "[...document.querySelectorAll('#game-log .chat-line')].some((p) => p.textContent.includes('hello from before the refresh'))",
        UI_WAIT,
    )
    .await;
    let shown = me.text("#game-log").await;
    assert!(shown.contains("Hand 1, East round:"), "the log after the refresh: {shown}");
    me.screenshot("after-refresh").await;
    me.assert_no_console_errors().await;
}

/// The host opens a table with two robots and copies its link; a friend on a
/// phone opens it, types a name and is seated; the host sees the friend
/// connected (not "away") without reloading, and the friend's page is a
/// player's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_friend_joins_by_the_link_and_shows_connected() {
    let app: TestApp = browser::serve().await;
    let (host, friend) = tokio::join!(Browser::desktop(), Browser::phone());
    enter_as_guest(&host, &app, "Host").await;
    host.type_into("#new-name", "Friends").await;
    host.client().find(fantoccini::Locator::Css("#robot-1")).await.unwrap().click().await.unwrap();
    host.click("#open-table button[type=submit]").await;
    let id = table_id(&host).await;
    host.wait_for("#invite", UI_WAIT).await;
    let link = host.eval("mjTable.invitation()").await;
    let link = link.as_str().unwrap().to_string();
    assert!(link.ends_with(&format!("#/table/{id}?join")), "{link}");
    host.screenshot("host-waiting").await;

    friend.goto(&link).await;
    friend.wait_for("#join-form #guest-name", UI_WAIT).await;
    friend.screenshot("invited").await;
    friend.type_into("#guest-name", "Friend").await;
    friend.click("#take-seat").await;
    friend.wait_until("mjTable?.state?.seat != null && mjTable.status === 'connected'", UI_WAIT).await;
    let seat = friend.eval("mjTable.state.seat").await;
    assert_eq!(friend.eval("location.hash").await, json!(format!("#/table/{id}")), "the invitation is spent");

    // The host, without reloading: the friend sat and is connected.
    host.wait_until(&format!("mjTable.state.table.seats[{seat}].name === 'Friend'"), UI_WAIT).await;
    host.wait_until(&format!("mjTable.state.table.seats[{seat}].connected === true"), UI_WAIT).await;
    let away = host.eval(&format!("!!document.querySelector('.player[data-player=\"{seat}\"] .offline')")).await;
    assert_eq!(away, json!(false), "the friend shows as connected to the host");
    host.wait_until("mjTable.log.includes('Friend joined the table.')", UI_WAIT).await;
    host.screenshot("friend-seated").await;
    friend.screenshot("seated").await;
    host.assert_no_console_errors().await;
    friend.assert_no_console_errors().await;
}

/// The first-game hints show until dismissed (and stay dismissed after a
/// reload); the settings menu asks to be asked about every discard (told to
/// the table: a claim dialog with nothing to claim comes), draws the wall as
/// xmj's --show-wall does, stack by stack, or not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hints_and_the_settings_menu() {
    let app = browser::serve().await;
    let me = Browser::open(1366, 768).await;
    enter_as_guest(&me, &app, "Settings").await;
    me.click("#quick-play").await;
    table_id(&me).await;
    me.wait_for("#hints:not([hidden]) #hints-done", UI_WAIT).await;
    me.screenshot("hints").await;
    me.click("#hints-done").await;
    me.wait_until("document.querySelector('#hints').hidden", UI_WAIT).await;
    me.client().refresh().await.unwrap();
    me.wait_for("#ready", UI_WAIT).await;
    assert_eq!(me.eval("document.querySelector('#hints').hidden").await, json!(true), "dismissed for good");

    me.click("#settings summary").await;
    me.wait_for("#settings[open] #every-discard", UI_WAIT).await;
    me.screenshot("settings").await;
    me.click("#every-discard").await;
    me.wait_until("localStorage.getItem('mj.everyDiscard') === '1'", UI_WAIT).await;
    me.wait_until(
        "document.querySelector('#settings')?.open && document.querySelector('#every-discard').checked",
        UI_WAIT,
    )
    .await;
    me.click("#ready").await;
    // Now a claim dialog comes for a discard we can only pass on.
    let mut played = Played::default();
    let deadline = Instant::now() + GAME_WAIT;
    loop {
        assert!(Instant::now() < deadline, "no claim dialog with only No claim came: {played:?}");
        let only_pass = me
            .eval("mjTable.prompt?.decision === 'answer_discard' && mjTable.prompt.actions.every((a) => a.action === 'pass') && !!document.querySelector('#no-claim')")
            .await;
        if only_pass == json!(true) {
            break;
        }
        let offer = me.eval(OFFER).await;
        if !click_next(&me, &offer, &mut played).await {
            poll_pause().await;
        }
    }
    // The wall, stack by stack: the live wall's and the dead wall's (drawn
    // a moment after the state it shows: a cold CI run once read both
    // between the two).
    me.wait_until(
        "(() => { const h = mjTable.state.game.hand; return document.querySelectorAll('#wall .live .stack').length === Math.ceil(h.live_tiles_left / 2); })()",
        UI_WAIT,
    )
    .await;
    me.screenshot("wall").await;
    // The menu stays open while it is used (it was left open above).
    me.wait_for("#settings[open] #view-showWall", UI_WAIT).await;
    me.click("#view-showWall").await;
    me.wait_until("!document.querySelector('#wall')", UI_WAIT).await;
    me.assert_no_console_errors().await;
}
