//! The browser client in real headless Chromium (`tests/browser/driver.rs`):
//! the server serves it, it loads without errors and shows the lobby, on a
//! desktop and on a phone; and the HTTP answers for its files (types, ETag,
//! Content-Security-Policy, `304` on revalidation).
//!
//! Needs Debian's `chromium` and `chromium-driver` (`.ci/run` installs them).
//! Screenshots: `target/screenshots/browser/<test>/`.

use crate::common;

use crate::driver::{self as browser, Browser, UI_WAIT};

/// The lobby at `/`, loaded in `b`: shown, with no error on the way.
async fn lobby(b: &Browser, app: &common::app::TestApp) {
    b.goto(&app.url("/")).await;
    b.wait_for("#quick-play", UI_WAIT).await;
    assert_eq!(b.eval("document.title").await, "Mah-Jong");
    assert!(b.html().await.contains(r#"id="quick-play""#), "the DOM as the page built it has the button");
    b.assert_no_console_errors().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lobby_on_a_desktop() {
    let app = browser::serve().await;
    let b = Browser::desktop().await;
    eprintln!("a desktop browser opened in {:?}", b.opened_in);
    lobby(&b, &app).await;
    let size = b.eval("[innerWidth, innerHeight]").await;
    assert_eq!(size, serde_json::json!([1366, 900]), "the window's viewport");
    let shot = b.screenshot("lobby").await;
    assert!(std::fs::metadata(&shot).unwrap().len() > 1000, "{} is a picture", shot.display());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lobby_on_a_phone() {
    let app = browser::serve().await;
    let b = Browser::phone().await;
    eprintln!("a phone browser opened in {:?}", b.opened_in);
    lobby(&b, &app).await;
    let (width, height) = browser::PHONE;
    let phone = b.eval("[innerWidth, innerHeight, matchMedia('(pointer: coarse)').matches]").await;
    assert_eq!(phone, serde_json::json!([width, height, true]), "a portrait phone's viewport, touch first");
    b.screenshot("lobby").await;
}

/// The harness itself: two Browsers are two people (no shared storage), keys
/// reach the focused element, typing replaces a field's value, and the
/// page's errors are collected.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn harness() {
    let app = browser::serve().await;
    let (one, two) = tokio::join!(Browser::desktop(), Browser::desktop());
    for b in [&one, &two] {
        b.goto(&app.url("/")).await;
    }
    one.eval("localStorage.setItem('harness', 'one')").await;
    assert_eq!(one.eval("localStorage.getItem('harness')").await, "one");
    assert_eq!(two.eval("localStorage.getItem('harness')").await, serde_json::Value::Null, "two profiles");

    // A field to type in and keys to press, on a page of the server's origin.
    one.eval(
        "(() => {
            const input = document.createElement('input');
            input.id = 'harness-input';
            input.value = 'old';
            window.harnessKeys = [];
            input.addEventListener('keydown', (e) => {
                if (e.key !== 'Shift') harnessKeys.push((e.shiftKey ? 'Shift+' : '') + e.key);
            });
            document.body.prepend(input);
        })()",
    )
    .await;
    one.type_into("#harness-input", "East").await;
    assert_eq!(one.eval("document.querySelector('#harness-input').value").await, "East");
    one.eval("harnessKeys.length = 0").await;
    for key in ["ArrowLeft", "ArrowRight", "Enter", "Space", "x", "Shift+Tab"] {
        one.press_key(key).await;
    }
    assert_eq!(
        one.eval("harnessKeys").await,
        serde_json::json!(["ArrowLeft", "ArrowRight", "Enter", " ", "x", "Shift+Tab"]),
        "keydowns on the focused field"
    );
    one.wait_until("document.activeElement.id !== 'harness-input'", UI_WAIT).await;

    // Errors of every kind are collected, and the other person saw none.
    one.eval("(setTimeout(() => { throw new Error('harness uncaught'); }), console.error('harness console'))").await;
    let deadline = std::time::Instant::now() + UI_WAIT;
    let errors = loop {
        let errors = one.console_errors().await;
        if errors.len() >= 2 || std::time::Instant::now() > deadline {
            break errors;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert!(errors.iter().any(|e| e.contains("harness uncaught")), "{errors:?}");
    assert!(errors.iter().any(|e| e.contains("harness console")), "{errors:?}");
    two.assert_no_console_errors().await;
}

/// The client's files over plain HTTP: their types, an ETag to revalidate
/// with (`304`, no body), `no-cache` and the Content-Security-Policy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_files_over_http() {
    let app = browser::serve().await;
    for (path, mime) in [
        ("/", "text/html; charset=utf-8"),
        ("/app.css", "text/css; charset=utf-8"),
        ("/js/main.js", "text/javascript; charset=utf-8"),
    ] {
        let a = app.api.request_with("GET", path, None, &[]).await;
        assert_eq!(a.status, 200, "GET {path}");
        assert_eq!(a.header("content-type"), Some(mime), "GET {path}");
        assert_eq!(a.header("cache-control"), Some("no-cache"), "GET {path}");
        assert_eq!(a.header("x-content-type-options"), Some("nosniff"), "GET {path}");
        let csp = a.header("content-security-policy").unwrap_or_else(|| panic!("GET {path}: no CSP"));
        for directive in ["default-src 'self'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"] {
            assert!(csp.contains(directive), "GET {path}: CSP `{csp}` lacks `{directive}`");
        }
        let body = a.body.as_str().unwrap_or_else(|| panic!("GET {path}: not text: {}", a.body));
        assert!(!body.is_empty(), "GET {path}: empty");
        let etag = a.header("etag").unwrap_or_else(|| panic!("GET {path}: no ETag")).to_string();
        assert!(etag.starts_with('"') && etag.ends_with('"') && etag.len() > 2, "GET {path}: ETag {etag}");

        let again = app.api.request_with("GET", path, None, &[("if-none-match", &etag)]).await;
        assert_eq!(again.status, 304, "GET {path} with its ETag");
        assert_eq!(again.body, serde_json::Value::Null, "GET {path}: a 304 has no body");
        assert_eq!(again.header("etag"), Some(etag.as_str()), "GET {path}: 304 repeats the ETag");

        let stale = app.api.request_with("GET", path, None, &[("if-none-match", "\"stale\"")]).await;
        assert_eq!(stale.status, 200, "GET {path} with another ETag");
    }
    let missing = app.api.ask("/js/no-such-module.js", None).await;
    assert_eq!(missing.status, 404);
}

/// Every name the engine gives an item of a hand's score (crates/engine/src/rules/scoring.rs),
/// as the scoring window shows it and links it to the rules page.
const SCORING_ITEMS: &[&str] = &[
    "going Mah Jong",
    "open pung of majors",
    "open pung of minors",
    "closed pung of majors",
    "closed pung of minors",
    "open kong of majors",
    "open kong of minors",
    "annexed kong of majors",
    "annexed kong of minors",
    "claimed kong of majors",
    "claimed kong of minors",
    "closed kong of majors",
    "closed kong of minors",
    "pair of dragons",
    "pair of own wind",
    "pair of own and prevailing wind",
    "pair of prevailing wind",
    "seven pairs",
    "flowers and seasons",
    "winning from wall",
    "fishing the eyes",
    "filling the only place",
    "pung/kong of dragons",
    "pung/kong of own wind",
    "pung/kong of prevailing wind",
    "own flower",
    "own season",
    "own flower and season",
    "all four flowers",
    "all four seasons",
    "animal Cat",
    "animal Mouse",
    "animal Cockerel",
    "animal Centipede",
    "Big Three Dragons",
    "Little Three Dragons",
    "Big Four Joys",
    "Little Four Joys",
    "three concealed pungs",
    "no chows",
    "no score hand",
    "all honours",
    "all terminals",
    "all majors",
    "concealed hand",
    "almost concealed hand",
    "one suit only",
    "one suit with honours",
    "winning with loose tile",
    "winning with last tile",
    "robbing a kong",
    "completing Original Call",
    "Heaven's Blessing",
    "Earth's Blessing",
    "Gathering Plum Blossom from the Roof",
    "Catching the Moon from the Bottom of the Sea",
    "Scratching a Carrying Pole",
    "Kong upon Kong",
    "Fourfold Plenty",
    "Buried Treasure",
    "Thirteen Unique Wonders",
    "Three Great Scholars",
    "Four Blessing o'er the Door",
    "All Honours",
    "Heads and Tails",
    "Concealed Clear Suit",
    "East's 13th consecutive win",
    "Imperial Jade",
    "Nine Gates",
    "Wriggling Snake",
    "penalty: animals left in hand score nothing",
];

/// The sections of the rules page, each linked from its contents.
const RULES_SECTIONS: &[&str] = &[
    "tiles",
    "deal",
    "turn",
    "sets",
    "claiming",
    "going-out",
    "showing",
    "scoring",
    "points",
    "doubles",
    "limits",
    "settlement",
    "rounds",
    "variants",
    "keys",
];

/// Is the element with this id (or the scoring item holding it) inside the viewport?
fn in_view(id: &str) -> String {
    format!(
        "(() => {{ const e = document.getElementById('{id}'); const r = (e.closest('.help-item, tr') ?? e).getBoundingClientRect();
            return r.top >= -1 && r.top < innerHeight && r.bottom <= innerHeight + 1; }})()"
    )
}

/// The rules page (`#/help`): its contents, an entry for every item of a
/// score under the anchor the scoring window links to, and `#/help/ANCHOR`
/// scrolling to the entry (on a hash change, from the contents, and on
/// loading the page), on a desktop and on a phone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rules_page() {
    let app = browser::serve().await;
    let b = Browser::desktop().await;
    b.goto(&app.url("/#/help")).await;
    b.wait_for("#help-page .help-toc", UI_WAIT).await;
    assert_eq!(
        b.eval("document.querySelector('header.site nav a[aria-current=\"page\"]')?.textContent").await,
        "Rules"
    );

    // The contents link to each section, which is on the page.
    let contents = b.eval("[...document.querySelectorAll('.help-toc a')].map((a) => a.getAttribute('href'))").await;
    for section in RULES_SECTIONS {
        let href = format!("#/help/{section}");
        assert!(
            contents.as_array().is_some_and(|links| links.iter().any(|l| *l == href)),
            "the contents link to {href}: {contents}"
        );
        assert_eq!(
            b.eval(&format!("!!document.querySelector('section#{section} h2, section#{section} h3')")).await,
            true,
            "section {section}"
        );
    }

    // Every item of a score has its entry, under the anchor help.js makes of its name.
    let names = serde_json::to_string(SCORING_ITEMS).unwrap();
    let missing = b
        .eval(&format!(
            "import('/js/help.js').then((m) => {names}.filter((n) => !document.getElementById(m.scoringAnchor(n))))"
        ))
        .await;
    assert_eq!(missing, serde_json::json!([]), "scoring items without an entry on the rules page");
    let anchors = b
        .eval(
            "import('/js/help.js').then((m) => [\"Heaven's Blessing\", 'pung/kong of dragons', \
             'penalty: animals left in hand score nothing'].map(m.scoringAnchor))",
        )
        .await;
    assert_eq!(
        anchors,
        serde_json::json!(["heaven-s-blessing", "pung-kong-of-dragons", "penalty-animals-left-in-hand-score-nothing"])
    );
    // A sample of the entries' headings, as the scoring window names the items.
    for (id, heading) in [
        ("going-mah-jong", "going Mah Jong"),
        ("fishing-the-eyes", "fishing the eyes"),
        ("little-three-dragons", "Little Three Dragons"),
        ("one-suit-only", "one suit only"),
        ("buried-treasure", "Buried Treasure"),
        ("thirteen-unique-wonders", "Thirteen Unique Wonders"),
    ] {
        let text = b.text(&format!("#{id} h4")).await;
        assert!(text.contains(heading), "#{id}: {text}");
    }
    assert!(b.text("#closed-kong-of-majors th").await.contains("closed kong of majors"));
    let example = b.eval("document.querySelectorAll('#buried-treasure .tile').length").await;
    assert!(example.as_u64().unwrap_or(0) >= 14, "an example in tiles: {example}");
    b.screenshot("rules").await;

    // A scoring item's anchor scrolls it into view and takes the focus.
    assert_eq!(b.eval(&in_view("buried-treasure")).await, false, "a limit hand is far down the page");
    b.eval("location.hash = '#/help/buried-treasure'").await;
    b.wait_until(&in_view("buried-treasure"), UI_WAIT).await;
    b.wait_until("document.activeElement?.id === 'buried-treasure'", UI_WAIT).await;
    b.screenshot("rules-buried-treasure").await;
    // So does a section's, from the contents.
    b.eval("scrollTo(0, 0)").await;
    b.click(".help-toc a[href='#/help/settlement']").await;
    b.wait_until(&in_view("settlement-title"), UI_WAIT).await;
    b.assert_no_console_errors().await;

    // On a phone, opened at an item's anchor (as the scoring window's links
    // open it, in a new tab); an item's second name finds it too.
    let phone = Browser::phone().await;
    phone.goto(&app.url("/#/help/thirteen-unique-wonders")).await;
    phone.wait_for("#help-page", UI_WAIT).await;
    phone.wait_until(&in_view("thirteen-unique-wonders"), UI_WAIT).await;
    assert_eq!(
        phone.eval("document.documentElement.scrollWidth <= innerWidth").await,
        true,
        "nothing wider than the phone"
    );
    phone.screenshot("rules-phone").await;
    phone.eval("location.hash = '#/help/animal-mouse'").await;
    phone.wait_until(&in_view("animal-mouse"), UI_WAIT).await;
    phone.screenshot("rules-phone-animals").await;
    phone.assert_no_console_errors().await;
}
