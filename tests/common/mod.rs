//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The folder holding one sub-folder per corpus game.
///
/// `MAHJONG_CONFORMANCE_DIR` may name the conformance folder (the one holding
/// `games/`) or the `games` folder itself; otherwise the crate directory and
/// its ancestors are searched for `shared/conformance/games`. Panics with a
/// clear message when the corpus cannot be found: a missing corpus must fail
/// the test, not skip it.
pub fn corpus_games_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("MAHJONG_CONFORMANCE_DIR") {
        let dir = PathBuf::from(dir);
        let games = dir.join("games");
        if games.is_dir() {
            return games;
        }
        assert!(
            dir.is_dir(),
            "MAHJONG_CONFORMANCE_DIR={} is not a directory (it should name the conformance folder holding games/)",
            dir.display()
        );
        return dir;
    }
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    for ancestor in manifest.ancestors() {
        let games = ancestor.join("shared/conformance/games");
        if games.is_dir() {
            return games;
        }
    }
    panic!(
        "conformance corpus not found: no shared/conformance/games above {}; \
         set MAHJONG_CONFORMANCE_DIR to the conformance folder",
        manifest.display()
    );
}

/// The game folders of the corpus (those holding a `game.log`), sorted.
pub fn corpus_games() -> Vec<PathBuf> {
    let dir = corpus_games_dir();
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()));
    let mut games: Vec<PathBuf> = entries
        .map(|entry| entry.unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display())).path())
        .filter(|p| p.join("game.log").is_file())
        .collect();
    games.sort();
    assert!(!games.is_empty(), "no game folder with a game.log in {}", dir.display());
    games
}

/// Writes, for each scenario `async fn scenario(backend: &str)` named, the
/// tests `scenario::sqlite` and `scenario::postgres`: every store test runs
/// on both databases.
#[allow(unused_macros)]
macro_rules! on_both_backends {
    ($($scenario:ident),* $(,)?) => {$(
        mod $scenario {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                super::$scenario("sqlite").await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                super::$scenario("postgres").await;
            }
        }
    )*};
}
#[allow(unused_imports)]
pub(crate) use on_both_backends;

pub mod app;
pub mod browser;
pub mod classic;
pub mod db;
pub mod process;
pub mod scenario;
