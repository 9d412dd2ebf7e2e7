//! Real headless Chromium for the browser client's tests, driven through
//! chromedriver (WebDriver) with fantoccini.
//!
//! ```ignore
//! let app = browser::serve().await;
//! let b = Browser::desktop().await;
//! b.goto(&app.url("/")).await;
//! b.click("#quick-play").await;
//! b.wait_until("document.querySelectorAll('.hand .tile').length === 13", UI_WAIT).await;
//! b.press_key("ArrowRight").await;
//! b.screenshot("dealt").await; // target/screenshots/<test binary>/<test>/dealt.png
//! b.assert_no_console_errors().await;
//! ```
//!
//! Each [`Browser`] is one person: its own chromedriver (on a port it picks
//! itself) and its own Chromium with a fresh profile, so two Browsers share no
//! cookies or storage. Tests run in parallel, each with its own server and
//! browsers. Dropping a Browser ends its session (Chromium quits and
//! chromedriver removes the profile) and kills its chromedriver; if the test
//! is failing at that moment, it first saves `failure-browserN.png` and
//! `failure-browserN.html` beside the test's screenshots. Should the test
//! process die without dropping it, the shell chromedriver runs under sees
//! its standard input close and kills the whole process group, Chromium
//! included: nothing outlives the tests.
//!
//! A test's screenshots go to a folder named after its thread, which libtest
//! names after the test: open Browsers on the test's own task (in the test
//! function, or in `tokio::join!`), not inside `tokio::spawn`.
//!
//! Every helper panics, naming what it was doing, on a failure: these are
//! tests. `click`, `text` and `type_into` first wait (up to [`UI_WAIT`]) for
//! their element to be shown.
//!
//! Chromium and chromedriver come from `CHROME_BIN` and `CHROMEDRIVER`, or
//! else `/usr/bin/chromium` and `chromedriver` on the `PATH`; when missing,
//! the test fails saying what to install (never skipped).

use std::cell::Cell;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use base64::Engine;
use fantoccini::actions::{InputSource, KeyAction, KeyActions};
use fantoccini::elements::Element;
use fantoccini::key::Key;
use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use mahjong::table::TableDefaults;
use serde_json::{Value, json};

use crate::common::app::TestApp;

/// How long the helpers wait for the page by default; what a test passes to
/// [`Browser::wait_for`] and [`Browser::wait_until`] unless it needs longer
/// (a robot's turn, the end of a hand).
pub const UI_WAIT: Duration = Duration::from_secs(20);

/// The portrait phone [`Browser::phone`] emulates: CSS pixels.
pub const PHONE: (u32, u32) = (390, 844);

/// The desktop window of [`Browser::desktop`].
pub const DESKTOP: (u32, u32) = (1366, 900);

/// Between two looks at the page while waiting.
const POLL: Duration = Duration::from_millis(50);

/// What to do when Chromium or chromedriver is missing.
const MISSING: &str = "the browser tests need Debian's chromium and chromium-driver: \
     apt-get install chromium chromium-driver (or set CHROME_BIN and CHROMEDRIVER)";

/// A server for a browser test: the real router on a random port over an
/// SQLite database in memory, in the test's runtime. `app.url("/")` is the
/// client's page.
pub async fn serve() -> TestApp {
    TestApp::spawn("memory", TableDefaults::default()).await
}

thread_local! {
    /// How many Browsers the test running on this thread has opened (libtest
    /// runs each test on a thread of its own, named after it).
    static OPENED: Cell<u32> = const { Cell::new(0) };
}

/// One person's headless Chromium (see the module's documentation).
pub struct Browser {
    client: Client,
    session: String,
    driver: Driver,
    /// The test's screenshot folder.
    dir: PathBuf,
    /// `browserN`: the Nth Browser of its test.
    label: String,
    /// The browser's log, read so far (chromedriver hands each entry out once).
    log: Mutex<Vec<LogEntry>>,
    /// How long opening the session took (chromedriver and Chromium started).
    pub opened_in: Duration,
}

/// One line of the browser's console log.
#[derive(Clone, Debug)]
pub struct LogEntry {
    /// `SEVERE` (errors: uncaught exceptions, `console.error`, failed loads,
    /// CSP refusals), `WARNING`, `INFO`, `DEBUG`.
    pub level: String,
    /// Where it came from: `javascript`, `console-api`, `network`, `security`...
    pub source: String,
    /// What it says.
    pub message: String,
}

impl LogEntry {
    /// Is this one of [`Browser::console_errors`]?
    fn is_page_error(&self) -> bool {
        self.level == "SEVERE" && !(self.source == "network" && is_api_refusal(&self.message))
    }
}

/// Is this network error (`URL - Failed to load resource: the server
/// responded with a status of 401 (Unauthorized)`) a `4xx` of the REST API?
fn is_api_refusal(message: &str) -> bool {
    let Some((url, what)) = message.split_once(" - ") else { return false };
    let path = url.split_once("://").and_then(|(_, rest)| rest.find('/').map(|i| &rest[i..]));
    path.is_some_and(|p| p.starts_with("/api/")) && what.contains("with a status of 4")
}

impl Browser {
    /// A desktop browser whose page is `width` x `height` CSS pixels.
    pub async fn open(width: u32, height: u32) -> Browser {
        Browser::launch(width, height, None).await
    }

    /// A portrait phone ([`PHONE`], 390 x 844 at 3 device pixels per CSS pixel):
    /// Chromium's mobile emulation, with touch events, a coarse pointer and a
    /// phone's user agent; the page's `<meta name="viewport">` is honoured.
    pub async fn phone() -> Browser {
        let (width, height) = PHONE;
        let emulation = json!({
            "deviceMetrics": {"width": width, "height": height, "pixelRatio": 3.0, "touch": true, "mobile": true},
            "userAgent": "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) \
                          Chrome/156.0.0.0 Mobile Safari/537.36",
        });
        Browser::launch(width, height, Some(emulation)).await
    }

    /// A desktop window ([`DESKTOP`], 1366 x 900).
    pub async fn desktop() -> Browser {
        Browser::open(DESKTOP.0, DESKTOP.1).await
    }

    async fn launch(width: u32, height: u32, mobile: Option<Value>) -> Browser {
        let started = Instant::now();
        let chrome = program("CHROME_BIN", &["/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome"]);
        let driver = tokio::task::spawn_blocking(Driver::start_retrying)
            .await
            .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
        let mut options = json!({
            "binary": chrome,
            "args": [
                "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                format!("--window-size={width},{height}"),
                "--no-first-run", "--no-default-browser-check", "--disable-extensions",
                "--mute-audio", "--lang=en-US", "--hide-scrollbars",
            ],
        });
        let emulated = mobile.is_some();
        if let Some(emulation) = mobile {
            options["mobileEmulation"] = emulation;
        }
        let capabilities = json!({
            "browserName": "chrome",
            "goog:chromeOptions": options,
            "goog:loggingPrefs": {"browser": "ALL"},
            "timeouts": {"script": 30_000, "pageLoad": 60_000, "implicit": 0},
        });
        let Value::Object(capabilities) = capabilities else { unreachable!() };
        let client = ClientBuilder::new(HttpConnector::new())
            .capabilities(capabilities)
            .connect(&format!("http://127.0.0.1:{}", driver.port))
            .await
            .unwrap_or_else(|e| {
                panic!("cannot open a Chromium session ({}) through chromedriver: {e}", chrome.display())
            });
        let session =
            client.session_id().await.ok().flatten().unwrap_or_else(|| panic!("chromedriver gave no session id"));
        if !emulated {
            // `--window-size` is the window's, browser's bars included: make
            // the page's viewport the size asked for.
            // A resize is applied when the browser gets to it: measure again,
            // a few times, until the viewport is the size asked for.
            let mut sizes = window_sizes(&client).await;
            for _ in 0..20 {
                let (inner_w, inner_h, outer_w, outer_h) = sizes;
                if (inner_w, inner_h) == (width, height) {
                    break;
                }
                let (w, h) = (width + outer_w.saturating_sub(inner_w), height + outer_h.saturating_sub(inner_h));
                client.set_window_size(w, h).await.unwrap_or_else(|e| panic!("resize the window to {w}x{h}: {e}"));
                tokio::time::sleep(Duration::from_millis(50)).await;
                sizes = window_sizes(&client).await;
            }
            assert_eq!((sizes.0, sizes.1), (width, height), "the viewport after resizing the window");
        }
        let n = OPENED.with(|opened| {
            opened.set(opened.get() + 1);
            opened.get()
        });
        let dir = test_dir();
        if n == 1 {
            // The test's artifacts of an earlier run would mislead.
            let _ = std::fs::remove_dir_all(&dir);
        }
        Browser {
            client,
            session,
            driver,
            dir,
            label: format!("browser{n}"),
            log: Mutex::new(Vec::new()),
            opened_in: started.elapsed(),
        }
    }

    /// Loads `url` and waits for its `load` event.
    pub async fn goto(&self, url: &str) {
        self.client.goto(url).await.unwrap_or_else(|e| panic!("goto {url}: {e}"));
    }

    /// Waits until an element matching `css` is shown, or panics after `timeout`.
    pub async fn wait_for(&self, css: &str, timeout: Duration) {
        self.shown(css, timeout).await;
    }

    /// Waits until the JavaScript expression `js` is truthy, or panics after
    /// `timeout`. An expression that throws counts as false (the element it
    /// reads may not be there yet); the last error is in the panic message.
    pub async fn wait_until(&self, js: &str, timeout: Duration) {
        let script = format!("return !!(\n{}\n);", expression(js));
        let deadline = Instant::now() + timeout;
        let mut last_error = None;
        loop {
            match self.client.execute(&script, vec![]).await {
                Ok(Value::Bool(true)) => return,
                Ok(_) => {}
                Err(e) => last_error = Some(e.to_string()),
            }
            if Instant::now() >= deadline {
                let error = last_error.map(|e| format!("; it last threw: {e}")).unwrap_or_default();
                self.fail(format!("`{js}` still false after {timeout:?}{error}")).await;
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// The value of the JavaScript expression `js` in the page (awaited if it
    /// is a promise), as JSON: `b.eval("document.title")`. For statements,
    /// an immediately called function: `b.eval("(() => { ...; return x; })()")`.
    pub async fn eval(&self, js: &str) -> Value {
        let script = format!("return (\n{}\n);", expression(js));
        self.client.execute(&script, vec![]).await.unwrap_or_else(|e| panic!("eval `{js}`: {e}"))
    }

    /// Clicks the first shown element matching `css`, waiting up to
    /// [`UI_WAIT`] for one that is shown and can take the click (not covered
    /// by another).
    pub async fn click(&self, css: &str) {
        let deadline = Instant::now() + UI_WAIT;
        loop {
            let element = self.shown(css, deadline.saturating_duration_since(Instant::now())).await;
            let error = match element.click().await {
                Ok(()) => return,
                Err(e) => e,
            };
            if Instant::now() >= deadline {
                self.fail(format!("click `{css}`: {error}")).await;
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// The text shown by the first shown element matching `css` (as a person
    /// sees it: rendered, hidden descendants left out), waiting up to
    /// [`UI_WAIT`] for it.
    pub async fn text(&self, css: &str) -> String {
        let element = self.shown(css, UI_WAIT).await;
        element.text().await.unwrap_or_else(|e| panic!("the text of `{css}`: {e}"))
    }

    /// Replaces the value of the field `css` by typing `text` into it,
    /// waiting up to [`UI_WAIT`] for it to be shown.
    pub async fn type_into(&self, css: &str, text: &str) {
        let element = self.shown(css, UI_WAIT).await;
        element.clear().await.unwrap_or_else(|e| panic!("clear `{css}`: {e}"));
        element.send_keys(text).await.unwrap_or_else(|e| panic!("type into `{css}`: {e}"));
    }

    /// Presses and releases a key on whatever has the focus: a character
    /// (`"a"`, `"7"`, `" "`) or a key's name as `KeyboardEvent.key` gives it
    /// (`ArrowLeft`, `ArrowRight`, `ArrowUp`, `ArrowDown`, `Enter`, `Space`,
    /// `Escape`, `Tab`, `Backspace`, `Delete`, `Home`, `End`, `PageUp`,
    /// `PageDown`), after modifiers joined by `+` (`"Shift+Tab"`,
    /// `"Control+a"`; `Shift`, `Control`, `Alt`, `Meta`).
    pub async fn press_key(&self, key: &str) {
        let (modifiers, last) = match key.rsplit_once('+') {
            Some((modifiers, "")) => (modifiers.strip_suffix('+').unwrap_or(modifiers), "+"),
            Some((modifiers, last)) => (modifiers, last),
            None => ("", key),
        };
        let modifiers: Vec<char> = modifiers.split('+').filter(|m| !m.is_empty()).map(|m| key_char(m, key)).collect();
        let last = key_char(last, key);
        let mut actions = KeyActions::new("keyboard".to_string());
        for &m in &modifiers {
            actions = actions.then(KeyAction::Down { value: m });
        }
        actions = actions.then(KeyAction::Down { value: last }).then(KeyAction::Up { value: last });
        for &m in modifiers.iter().rev() {
            actions = actions.then(KeyAction::Up { value: m });
        }
        self.client.perform_actions(actions).await.unwrap_or_else(|e| panic!("press {key}: {e}"));
    }

    /// The whole document as the page has it now (`outerHTML` of `<html>`,
    /// after scripts changed it).
    pub async fn html(&self) -> String {
        match self.eval("document.documentElement.outerHTML").await {
            Value::String(html) => html,
            other => panic!("outerHTML is not a string: {other}"),
        }
    }

    /// Saves what the page shows now as
    /// `target/screenshots/<test binary>/<test>/<name>.png`; its path.
    pub async fn screenshot(&self, name: &str) -> PathBuf {
        let png = self.client.screenshot().await.unwrap_or_else(|e| panic!("screenshot {name}: {e}"));
        self.save(&format!("{name}.png"), &png)
    }

    /// The page's errors since the browser opened: uncaught exceptions and
    /// rejections, `console.error`, what the Content-Security-Policy refused,
    /// the client's files that failed to load, and any `5xx` answer. The REST
    /// API's `4xx` refusals are not errors of the page but answers it handles
    /// (a guest's `401` from `/api/v1/me`, a seat already taken), though
    /// Chromium logs them as errors too: they are in [`Browser::console_log`].
    pub async fn console_errors(&self) -> Vec<String> {
        self.console_log().await.into_iter().filter(LogEntry::is_page_error).map(|e| e.message).collect()
    }

    /// Panics, listing them, if the page has had any [`Browser::console_errors`].
    pub async fn assert_no_console_errors(&self) {
        let errors = self.console_errors().await;
        assert!(errors.is_empty(), "the page had errors:\n  {}", errors.join("\n  "));
    }

    /// Everything the browser logged since it opened (`console.log` included).
    pub async fn console_log(&self) -> Vec<LogEntry> {
        let port = self.driver.port;
        let path = format!("/session/{}/se/log", self.session);
        let answer =
            tokio::task::spawn_blocking(move || driver_call(port, "POST", &path, Some(r#"{"type":"browser"}"#)))
                .await
                .expect("reading the browser log");
        let Some(Value::Array(entries)) = answer.map(|a| a["value"].clone()) else {
            panic!("chromedriver did not give the browser log");
        };
        let mut log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        log.extend(entries.iter().map(|e| LogEntry {
            level: e["level"].as_str().unwrap_or_default().to_string(),
            source: e["source"].as_str().unwrap_or_default().to_string(),
            message: e["message"].as_str().unwrap_or_default().to_string(),
        }));
        log.clone()
    }

    /// The underlying WebDriver client, for what the helpers do not cover.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The first shown element matching `css`, waiting up to `timeout`.
    async fn shown(&self, css: &str, timeout: Duration) -> Element {
        let deadline = Instant::now() + timeout;
        loop {
            match self.client.find_all(Locator::Css(css)).await {
                Ok(elements) => {
                    for element in elements {
                        // An element replaced meanwhile is "stale": look again.
                        if element.is_displayed().await.unwrap_or(false) {
                            return element;
                        }
                    }
                }
                Err(e) if e.to_string().contains("invalid selector") => panic!("`{css}` is not a CSS selector: {e}"),
                Err(_) => {}
            }
            if Instant::now() >= deadline {
                self.fail(format!("nothing matching `{css}` shown after {timeout:?}")).await;
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// Panics with `what`, the page's URL and its errors so far.
    async fn fail(&self, what: String) -> ! {
        let url = self.client.current_url().await.map(|u| u.to_string()).unwrap_or_else(|e| format!("unknown: {e}"));
        let errors = self.console_errors().await;
        let errors = if errors.is_empty() { "none".to_string() } else { errors.join("\n  ") };
        panic!(
            "{what}\n  page: {url}\n  console errors: {errors}\n  the page as it was: failure-{}.png and .html in {}",
            self.label,
            self.dir.display()
        );
    }

    /// Writes `bytes` as `name` in the test's folder; its path.
    fn save(&self, name: &str, bytes: &[u8]) -> PathBuf {
        std::fs::create_dir_all(&self.dir).unwrap_or_else(|e| panic!("create {}: {e}", self.dir.display()));
        let path = self.dir.join(name);
        std::fs::write(&path, bytes).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
        path
    }

    /// A failing test's last view of the page, taken with blocking calls
    /// (drop cannot wait for the async client).
    fn save_failure(&self) {
        let port = self.driver.port;
        let session = &self.session;
        if let Some(png) = driver_call(port, "GET", &format!("/session/{session}/screenshot"), None)
            .and_then(|a| a["value"].as_str().map(str::to_string))
            .and_then(|b64| base64::engine::general_purpose::STANDARD.decode(b64).ok())
        {
            self.save(&format!("failure-{}.png", self.label), &png);
        }
        let script = r#"{"script":"return document.documentElement.outerHTML","args":[]}"#;
        if let Some(html) = driver_call(port, "POST", &format!("/session/{session}/execute/sync"), Some(script))
            .and_then(|a| a["value"].as_str().map(str::to_string))
        {
            self.save(&format!("failure-{}.html", self.label), html.as_bytes());
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.save_failure();
        }
        // Chromium quits and chromedriver removes its profile; then the
        // driver's own drop kills chromedriver.
        driver_call(self.driver.port, "DELETE", &format!("/session/{}", self.session), None);
    }
}

/// The page's viewport and the window: `innerWidth`, `innerHeight`,
/// `outerWidth`, `outerHeight`.
async fn window_sizes(client: &Client) -> (u32, u32, u32, u32) {
    let script = "return [innerWidth, innerHeight, outerWidth, outerHeight]";
    let sizes = client.execute(script, vec![]).await.unwrap_or_else(|e| panic!("the window's size: {e}"));
    let n = |i: usize| {
        sizes[i].as_u64().and_then(|n| u32::try_from(n).ok()).unwrap_or_else(|| panic!("the window's size: {sizes}"))
    };
    (n(0), n(1), n(2), n(3))
}

/// `js` without the blanks and semicolons that would end the expression early.
fn expression(js: &str) -> &str {
    js.trim().trim_end_matches(|c: char| c == ';' || c.is_whitespace())
}

/// The WebDriver character of a key named as `KeyboardEvent.key` names it.
fn key_char(name: &str, whole: &str) -> char {
    let key = match name {
        "ArrowLeft" => Key::Left,
        "ArrowRight" => Key::Right,
        "ArrowUp" => Key::Up,
        "ArrowDown" => Key::Down,
        "Enter" => Key::Enter,
        "Space" | "Spacebar" => return ' ',
        "Escape" | "Esc" => Key::Escape,
        "Tab" => Key::Tab,
        "Backspace" => Key::Backspace,
        "Delete" => Key::Delete,
        "Home" => Key::Home,
        "End" => Key::End,
        "PageUp" => Key::PageUp,
        "PageDown" => Key::PageDown,
        "Shift" => Key::Shift,
        "Control" | "Ctrl" => Key::Control,
        "Alt" => Key::Alt,
        "Meta" => Key::Meta,
        _ => {
            let mut chars = name.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => return c,
                _ => panic!("press_key({whole:?}): `{name}` is not a key this helper knows"),
            }
        }
    };
    key.into()
}

/// `target/screenshots/<test binary>/<test>`: the test's artifacts.
fn test_dir() -> PathBuf {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).parent().expect("the target folder holds tmp/");
    let exe = std::env::current_exe().expect("the test binary's path");
    let stem = exe.file_stem().and_then(|s| s.to_str()).unwrap_or("tests");
    // Cargo names test binaries `<name>-<hash>`.
    let binary = stem.rsplit_once('-').map_or(stem, |(name, _)| name);
    let test = std::thread::current().name().unwrap_or("main").replace("::", "-");
    target.join("screenshots").join(binary).join(test)
}

/// The program `env` names, or else the first of `names` found (a path, or
/// a name looked up on the `PATH`).
fn program(env: &str, names: &[&str]) -> PathBuf {
    if let Some(path) = std::env::var_os(env) {
        let path = PathBuf::from(path);
        assert!(path.is_file(), "{env}={} is not a file; {MISSING}", path.display());
        return path;
    }
    let dirs: Vec<PathBuf> = std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default();
    names
        .iter()
        .find_map(|name| {
            if name.starts_with('/') {
                Some(PathBuf::from(name)).filter(|p| p.is_file())
            } else {
                dirs.iter().map(|d| d.join(name)).find(|p| p.is_file())
            }
        })
        .unwrap_or_else(|| panic!("{MISSING}: found none of {names:?}"))
}

/// A chromedriver of one Browser, with the Chromium it starts: a session
/// (and process group) of their own, watched by a shell.
struct Driver {
    /// The shell that started chromedriver; when its standard input closes
    /// (the test drops the driver, or dies), it kills chromedriver's process
    /// group and removes `tmp`.
    shell: Child,
    /// Held open while the driver is wanted.
    stdin: Option<ChildStdin>,
    /// chromedriver's process id, and so its process group's.
    pid: i32,
    port: u16,
    /// The `TMPDIR` of chromedriver and Chromium: the profile and whatever
    /// else they leave in a temporary folder (Chromium leaves some even when
    /// it quits in order).
    tmp: PathBuf,
}

/// The watching shell: starts chromedriver (`$0`, on a port it chooses) in a
/// session of its own, says its pid, gives its standard output to
/// chromedriver alone (so that the pipe ends when chromedriver does), then
/// waits for its standard input to close.
const WATCH: &str =
    r#"setsid "$0" --port=0 & echo "pid $!"; exec >/dev/null; read -r _; kill -KILL -$!; rm -rf "$TMPDIR""#;

impl Driver {
    /// Starts chromedriver and reads its pid and port from what it prints.
    /// [`Driver::start`], tried three times: chromedriver, asked for any free
    /// port, now and then says "IPv4 port not available" and exits.
    fn start_retrying() -> Driver {
        for attempt in 1.. {
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(Driver::start)) {
                Ok(driver) => return driver,
                Err(e) if attempt >= 3 => std::panic::resume_unwind(e),
                Err(_) => std::thread::sleep(Duration::from_millis(200)),
            }
        }
        unreachable!()
    }

    fn start() -> Driver {
        let chromedriver = program("CHROMEDRIVER", &["chromedriver", "/usr/bin/chromedriver"]);
        static STARTED: AtomicU32 = AtomicU32::new(0);
        let n = STARTED.fetch_add(1, Ordering::Relaxed);
        // Short: Chromium puts a socket in it, whose path may not be long.
        let tmp = std::env::temp_dir().join(format!("mahjong-browser-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp).unwrap_or_else(|e| panic!("create {}: {e}", tmp.display()));
        let mut shell = Command::new("sh")
            .arg("-c")
            .arg(WATCH)
            .arg(&chromedriver)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .env("TMPDIR", &tmp)
            // Out of the test's group: a Ctrl-C reaches the test alone, which
            // then dies and so closes the shell's input.
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run sh to start {}: {e}", chromedriver.display()));
        let stdout = shell.stdout.take().expect("chromedriver's output");
        let stdin = shell.stdin.take();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            // The shell's line and chromedriver's, in either order.
            let mut lines = BufReader::new(stdout).lines().map_while(Result::ok);
            let (mut pid, mut port, mut said) = (None, None, Vec::new());
            for line in lines.by_ref() {
                if let Some(n) = line.strip_prefix("pid ") {
                    pid = n.parse::<i32>().ok();
                } else if let Some(n) = line.split("started successfully on port ").nth(1) {
                    port = Some(n.trim_end_matches('.').parse::<u16>().map_err(|e| format!("{line}: {e}")));
                } else {
                    said.push(line);
                }
                if pid.is_some() && port.is_some() {
                    break;
                }
            }
            let _ = tx.send((pid, port.unwrap_or_else(|| Err(said.join("\n")))));
            // Keep reading, so that chromedriver's writes never block.
            lines.for_each(drop);
        });
        let mut driver = Driver { shell, stdin, pid: 0, port: 0, tmp };
        match rx.recv_timeout(Duration::from_secs(30)) {
            Ok((Some(pid), Ok(port))) => (driver.pid, driver.port) = (pid, port),
            Ok((_, Err(said))) => panic!("{} did not start: {said}", chromedriver.display()),
            Ok((None, _)) => panic!("the shell starting {} did not say its pid", chromedriver.display()),
            Err(_) => panic!("{} did not say its port in 30 s", chromedriver.display()),
        }
        driver
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        if self.pid > 0 {
            // SAFETY: kill(2) on the process group of chromedriver, the child
            // of our shell, which is still waiting for its input and so has
            // not reaped it: the id is still chromedriver's.
            unsafe { libc::kill(-self.pid, libc::SIGKILL) };
        }
        // The shell kills that group again, cleans up and ends.
        drop(self.stdin.take());
        let _ = self.shell.wait();
        let _ = std::fs::remove_dir_all(&self.tmp);
    }
}

/// A blocking WebDriver call to the chromedriver at `port`: its JSON answer,
/// `None` if it could not be had.
fn driver_call(port: u16, method: &str, path: &str, body: Option<&str>) -> Option<Value> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(30))).ok()?;
    let body = body.unwrap_or("");
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).ok()?;
    // chromedriver says `Connection: close` but keeps the connection open:
    // the body is as long as its head says.
    let mut reader = BufReader::new(stream);
    let mut length = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse::<usize>().ok();
        }
    }
    let mut body = vec![0; length?];
    reader.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

impl TestApp {
    /// The URL of `path` on this server, for a browser: `app.url("/")` is
    /// the client's page.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}
