//! The browser client's pure-logic unit tests: `tests/web/*.test.mjs`, run
//! by Node's own test runner (`node --test`), importing the client's modules
//! from `crates/server/src/web/js/` as the browser does. Fails with Node's report when one
//! of them fails, and says what to install when Node is missing.

use std::path::{Path, PathBuf};
use std::process::Command;

/// What to do when Node is missing or too old.
const INSTALL: &str = "the client's unit tests (tests/web) need Node.js: install Node.js 18 or later \
     (18.19 at least; Debian: apt-get install nodejs)";

/// The oldest Node whose `--import` and `module.register` the test run uses.
const OLDEST: (u32, u32) = (18, 19);

#[test]
fn client_unit_tests() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let version = node_version();
    assert!(version >= OLDEST, "found Node.js {}.{}; {INSTALL}", version.0, version.1);

    let files = test_files(&crate_dir.join("tests/web"));
    // Each file by name: `node --test DIR` searched DIR before Node 21 and
    // takes it as a pattern since.
    let output = Command::new("node")
        .arg("--import")
        .arg("./tests/web/register.mjs")
        .arg("--test")
        .arg("--test-reporter=spec")
        .args(files.iter().map(|f| f.strip_prefix(crate_dir).unwrap_or(f)))
        .current_dir(crate_dir)
        .output()
        .unwrap_or_else(|e| panic!("cannot run node: {e}; {INSTALL}"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "node --test {} failed ({}):\n{stdout}{stderr}",
        files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>().join(" "),
        output.status
    );
    // The summary's `ℹ pass N`.
    let passed = stdout
        .lines()
        .filter_map(|l| l.trim_start_matches(|c: char| !c.is_ascii_alphanumeric()).strip_prefix("pass "))
        .find_map(|n| n.trim().parse::<u32>().ok());
    assert!(passed.is_some_and(|n| n > 0), "node --test ran no test:\n{stdout}{stderr}");
    // Shown with `--nocapture`.
    println!("{stdout}{stderr}");
}

/// Node's version (major, minor); panics saying what to install when there
/// is no `node`.
fn node_version() -> (u32, u32) {
    let output = Command::new("node").arg("--version").output().unwrap_or_else(|e| panic!("no node ({e}); {INSTALL}"));
    let text = String::from_utf8_lossy(&output.stdout);
    let mut numbers = text.trim().trim_start_matches('v').split('.').map(|n| n.parse::<u32>().ok());
    match (output.status.success(), numbers.next().flatten(), numbers.next().flatten()) {
        (true, Some(major), Some(minor)) => (major, minor),
        _ => panic!("`node --version` said {text:?}; {INSTALL}"),
    }
}

/// The `*.test.mjs` files of `dir`, sorted; there must be some.
fn test_files(dir: &Path) -> Vec<PathBuf> {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()));
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display())).path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with(".test.mjs")))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no *.test.mjs in {}", dir.display());
    files
}
