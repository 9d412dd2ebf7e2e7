//! Game files: a game exported as one JSON document, and loaded back as a
//! new game; and logs of the original mj-server, imported as games.
//!
//! This module sits above the tables and the store: the store only writes a
//! game's rows at once and reads them back ([`Store::import_game`],
//! [`Store::load_game`]); the format ([`format`](mod@format)), its checking by replay
//! through the engine ([`check()`]) and the reading of mj-server logs
//! ([`mj_server`]) are here. A file is never trusted: see [`check()`].
//! Loading a checked game stores its rows once and, when it is not over,
//! opens its table on the game the check replayed ([`load`]); nothing is
//! read back or replayed again. See docs/protocol.md, "Game files".

pub mod check;
pub mod format;
pub mod mj_server;

use serde::{Deserialize, Serialize};

pub use check::{Checked, check};
pub use format::{ArchiveError, FORMAT, FileEvent, FileGame, FileInput, FileSeat, GameFile, VERSION, parse};

use crate::protocol::ws::TableState;
use crate::rules::rebuild::Rebuild;
use crate::store::GameSource;
use crate::store::{EventRow, GameRow, NewGame, Store, StoreError, new_seat_token, token_sha256};
use crate::table::recovery::Rebuilt;
use crate::table::{Lobby, SeatGrant, TableSettings};

/// Where a loaded game comes from: a game file, or an mj-server log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// Our own game file (stored with source `loaded`).
    GameFile,
    /// A log of the original mj-server (stored with source `mj-server`).
    MjServer,
}

impl Source {
    /// The game's source in the store.
    pub fn stored_as(self) -> GameSource {
        match self {
            Source::GameFile => GameSource::Loaded,
            Source::MjServer => GameSource::MjServer,
        }
    }
}

/// Reads and checks either kind of file, told apart by how it begins: a
/// game file is a JSON object, an mj-server log a record `<cnxN ...` or
/// `>cnxN ...`. An mj-server game is stamped `now_us`. This replays the
/// game: from async code, call it off the async threads
/// (`tokio::task::spawn_blocking`).
pub fn read_any(text: &str, now_us: i64) -> Result<(Checked, Source), ArchiveError> {
    let start = text.trim_start_matches('\u{feff}').trim_start();
    if start.starts_with('{') {
        Ok((check(&parse(text)?)?, Source::GameFile))
    } else if start.starts_with("<cnx") || start.starts_with(">cnx") {
        Ok((check(&mj_server::game_file(text, now_us)?)?, Source::MjServer))
    } else {
        Err(ArchiveError::Format(
            "neither a game file (a JSON object) nor an mj-server log (<cnxN and >cnxN records)".into(),
        ))
    }
}

/// What became of a loaded game.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Imported {
    /// The new game's id (its table's id too, when it is played on).
    pub id: String,
    /// `open`, `playing` or `over`.
    pub state: TableState,
    /// Hands dealt.
    pub hands: i64,
    /// A game not over: each person's seat with its new token (hand them
    /// to the players). Empty for a game that is over.
    pub seats: Vec<SeatGrant>,
}

/// A stored game as a game file; `None` if there is no such game.
pub async fn export(store: &Store, id: &str) -> Result<Option<GameFile>, StoreError> {
    match store.load_game(id, 0).await? {
        Some(saved) => GameFile::from_saved(saved).map(Some),
        None => Ok(None),
    }
}

/// Stores a checked game as a new game from `source`, in one transaction,
/// without opening its table: a game not over resumes as a table when a
/// server starts on the store (the `import` command). Its people's new seat
/// tokens are returned.
pub async fn import(store: &Store, checked: Checked, source: Source) -> Result<Imported, StoreError> {
    let (rows, grants, _) = into_rows(checked, source);
    let (state, hands) = (rows.game.state, rows.game.hands);
    let id = store.import_game(rows).await?;
    Ok(Imported { id, state, hands, seats: grants })
}

/// Stores a checked game as a new game from `source` (as [`import`]); a
/// game not over is opened as a table at once, going on from the game the
/// check replayed, its people's seats waiting for them to connect with the
/// new tokens returned and say ready.
pub async fn load(lobby: &Lobby, checked: Checked, source: Source) -> Result<Imported, StoreError> {
    let (rows, grants, (settings, rebuild)) = into_rows(checked, source);
    let (state, hands) = (rows.game.state, rows.game.hands);
    // What the table takes of the rows (the store takes the rows themselves):
    // the events of the previous and current hands are kept for resuming.
    let table = (state != TableState::Over).then(|| {
        let recent = rows.events.iter().filter(|e| e.hand >= rows.game.hands - 1).cloned().collect::<Vec<EventRow>>();
        (rows.game.clone(), rows.seats.clone(), rows.inputs.len() as i64, recent)
    });
    let id = lobby.store().import_game(rows).await?;
    if let Some((game, seats, inputs, events)) = table {
        lobby.reopen(Rebuilt { id: id.clone(), settings, game, seats, rebuild, inputs, events }).await?;
    }
    Ok(Imported { id, state, hands, seats: grants })
}

/// A checked game's rows as stored from `source`, with a fresh seat token
/// for every person of a game not over (only its hash is stored); and what
/// a table is opened from besides its rows.
fn into_rows(checked: Checked, source: Source) -> (NewGame, Vec<SeatGrant>, (TableSettings, Rebuild)) {
    let over = checked.is_over();
    let mut grants = Vec::new();
    let mut seats = checked.seats;
    for seat in seats.iter_mut().filter(|s| !over && s.robot.is_none()) {
        let token = new_seat_token();
        seat.token_sha256 = Some(token_sha256(&token));
        grants.push(SeatGrant { seat: seat.seat as u8, token });
    }
    let rows = NewGame {
        game: GameRow { source: source.stored_as(), ..checked.game },
        // Our own type always serialises.
        settings: serde_json::to_string(&checked.settings).unwrap_or_default(),
        seats,
        inputs: checked.inputs,
        events: checked.events,
        hands: checked.hands,
    };
    (rows, grants, (checked.settings, checked.rebuild))
}
