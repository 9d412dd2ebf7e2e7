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
use crate::store::GameSource;
use crate::store::idempotency::{Once, Remembered, RequestKey};
use crate::store::{EventRow, GameRow, NewGame, Store, StoreError, new_seat_token, token_sha256};
use crate::table::recovery::Rebuilt;
use crate::table::{Lobby, SeatGrant};

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
    /// to the players). Empty for a game that is over, and in a repeated
    /// answer (the store keeps only the tokens' hashes).
    pub seats: Vec<SeatGrant>,
    /// Present, `true`, when this answer repeats the one given to an earlier
    /// request with the same `Idempotency-Key` (REST): this request stored
    /// nothing, and `state` and `hands` are as they were then.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replayed: bool,
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
    let (rows, Opening { state, hands, grants, .. }) = into_rows(checked, source);
    let id = store.import_game(rows).await?;
    Ok(Imported { id, state, hands, seats: grants, replayed: false })
}

/// Stores a checked game as a new game from `source` (as [`import`]); a
/// game not over is opened as a table at once, going on from the game the
/// check replayed, its people's seats waiting for them to connect with the
/// new tokens returned and say ready.
pub async fn load(lobby: &Lobby, checked: Checked, source: Source) -> Result<Imported, StoreError> {
    let (rows, opening) = into_rows(checked, source);
    let id = lobby.store().import_game(rows).await?;
    opening.open(lobby, id).await
}

/// What became of a game loaded with an idempotency key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoadedOnce {
    /// Stored (and opened as a table if it is not over), the key with it.
    Loaded(Imported),
    /// The key was taken by an earlier request: nothing was stored. Whether
    /// this request is the same one is the caller's to judge.
    Taken(Remembered),
}

/// As [`load`], the game stored together with `key` in one transaction;
/// unless the key is taken, when nothing is stored or opened.
pub async fn load_once(
    lobby: &Lobby,
    checked: Checked,
    source: Source,
    key: &RequestKey,
) -> Result<LoadedOnce, StoreError> {
    let (rows, opening) = into_rows(checked, source);
    match lobby.store().import_game_once(rows, key).await? {
        Once::Stored(id) => Ok(LoadedOnce::Loaded(opening.open(lobby, id).await?)),
        Once::Taken(remembered) => Ok(LoadedOnce::Taken(remembered)),
    }
}

/// The answer a request with a taken key gets: the first request's, without
/// its seat tokens (only their hashes are stored).
pub fn replayed(remembered: &Remembered) -> Imported {
    Imported {
        id: remembered.game_id.clone(),
        state: remembered.state,
        hands: remembered.hands,
        seats: Vec::new(),
        replayed: true,
    }
}

/// What a loaded game's table is opened from once its rows are stored, and
/// the answer.
struct Opening {
    state: TableState,
    hands: i64,
    grants: Vec<SeatGrant>,
    /// A game not over: what its table opens on, but for its id (known once
    /// it is stored).
    table: Option<Rebuilt>,
}

impl Opening {
    /// Opens the table of the game stored as `id`, if it is not over.
    async fn open(self, lobby: &Lobby, id: String) -> Result<Imported, StoreError> {
        if let Some(rebuilt) = self.table {
            lobby.reopen(Rebuilt { id: id.clone(), ..rebuilt }).await?;
        }
        Ok(Imported { id, state: self.state, hands: self.hands, seats: self.grants, replayed: false })
    }
}

/// A checked game's rows as stored from `source`, with a fresh seat token
/// for every person of a game not over (only its hash is stored); and what
/// its table is opened from once they are stored.
fn into_rows(checked: Checked, source: Source) -> (NewGame, Opening) {
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
    let (state, hands) = (rows.game.state, rows.game.hands);
    // What the table takes of the rows (the store takes the rows themselves):
    // the events of the previous and current hands are kept for resuming.
    let table = (state != TableState::Over).then(|| Rebuilt {
        id: String::new(),
        settings: checked.settings,
        game: rows.game.clone(),
        seats: rows.seats.clone(),
        rebuild: checked.rebuild,
        inputs: rows.inputs.len() as i64,
        events: rows.events.iter().filter(|e| e.hand >= rows.game.hands - 1).cloned().collect::<Vec<EventRow>>(),
    });
    (rows, Opening { state, hands, grants, table })
}
