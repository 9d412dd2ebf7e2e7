//! The browser client in real headless Chromium, driven through chromedriver
//! (`driver`): the pages and their files (`pages`), whole games played by
//! clicking (`play`), what a newcomer meets at a table (`newcomer`). Needs
//! Debian's `chromium` and `chromium-driver` (`.ci/run` installs them).

// The browser tests start servers as the integration tests do, with the same
// helpers, and use only some of them.
#[allow(dead_code)]
#[path = "../it/common/mod.rs"]
mod common;
mod driver;
mod newcomer;
mod pages;
mod play;
