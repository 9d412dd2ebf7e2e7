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
