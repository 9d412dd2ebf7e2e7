//! Helpers shared by the integration tests.

use std::path::{Path, PathBuf};

/// The folder holding one sub-folder per corpus game.
///
/// The repository's own copy, `tests/data/conformance/games`, unless
/// `MAHJONG_CONFORMANCE_DIR` names another conformance folder (the one holding
/// `games/`) or a `games` folder itself: a corpus of games the repository has
/// not seen is tested the same way. Panics with a clear message when the
/// folder is missing: a missing corpus must fail the test, not skip it.
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
    let games = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/conformance/games");
    assert!(games.is_dir(), "conformance corpus not found at {}", games.display());
    games
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
pub mod classic;
pub mod db;
pub mod process;
/// The engine's scenario helpers (walls, moves, robot tables), shared with
/// the engine's own tests (a few serve only those).
#[path = "../../../crates/engine/tests/engine/scenario.rs"]
#[allow(dead_code)]
pub mod scenario;
