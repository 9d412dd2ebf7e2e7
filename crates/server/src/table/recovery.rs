//! A table opened again on a stored game: after a restart ([`recover`]) or
//! for a checked game file ([`reopen`]).

use tokio::sync::Semaphore;
use tokio::time::Instant;

use super::actor::{Actor, Restored};
use super::record::Record;
use super::seats::{Seat, Seats};
use super::stream::Stream;
use super::{TableHandle, TableLimits, TableSettings};
use crate::bots::Robot;
use crate::bots::strategy::Strategy;
use crate::protocol::ws::{ServerMessage, StreamEvent};
use crate::rules::game::Game;
use crate::rules::rebuild::Rebuild;
use crate::store::{EventRow, GameRow, SavedGame, SeatRow, Store, StoreError};

/// Why a stored game could not be opened as a table.
#[derive(Debug, thiserror::Error)]
pub enum RecoverError {
    /// The stored game does not read or does not replay: it is left in the
    /// store as it is.
    #[error("game {game}: {why}")]
    Corrupt {
        /// The game.
        game: String,
        /// What is wrong.
        why: String,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A game to be played on as a table again: its rows as stored, and the
/// game its inputs rebuild.
pub struct Rebuilt {
    /// The game's id.
    pub id: String,
    /// The table's settings when it opened.
    pub settings: TableSettings,
    /// The game row.
    pub game: GameRow,
    /// The seats, with their token hashes.
    pub seats: Vec<SeatRow>,
    /// The inputs replayed (see [`crate::rules::rebuild`]).
    pub rebuild: Rebuild,
    /// How many inputs are stored.
    pub inputs: i64,
    /// The events of the previous and current hands (earlier ones are
    /// ignored), for clients that resume.
    pub events: Vec<EventRow>,
}

/// Rebuilds a table from its stored game and starts it. The game is replayed
/// input by input through the engine and the table is set up on it on a
/// blocking thread (a long game replays for a while, and the async threads
/// serve the tables already back), holding one of `cpus`' permits: many games
/// recovered at once replay only as many at a time as it has. Then the
/// table's task starts at once: its first act is to store what setting it
/// up changed (the wait for its people), before it answers anything, so
/// that a restart does not wait for the store to commit each table in turn.
///
/// `recovering` is `true` while the restart brings tables back: the table's
/// robots wait for it to turn `false` (see [`Actor::restored`]).
pub async fn recover(
    saved: SavedGame,
    store: Store,
    limits: TableLimits,
    cpus: &Semaphore,
    recovering: tokio::sync::watch::Receiver<bool>,
) -> Result<TableHandle, RecoverError> {
    let id = saved.id.clone();
    let corrupt = |why: String| RecoverError::Corrupt { game: id.clone(), why };
    let permit = cpus.acquire().await.map_err(|e| corrupt(format!("waiting to replay: {e}")))?;
    let actor = tokio::task::spawn_blocking(move || set_up(rebuild(saved)?, store, limits, Some(recovering)))
        .await
        .map_err(|e| corrupt(format!("replaying the inputs: {e}")))??;
    drop(permit);
    tracing::info!(table = %actor.id(), hands = actor.hand_number(), seq = actor.seq(), "table recovered");
    Ok(actor.start_task())
}

/// A stored game replayed through the engine, input by input: CPU work
/// (a blocking thread's, in async code).
pub fn rebuild(saved: SavedGame) -> Result<Rebuilt, RecoverError> {
    let SavedGame { id, game, settings, seats, inputs, events } = saved;
    let corrupt = |why: String| RecoverError::Corrupt { game: id.clone(), why };
    let settings: TableSettings = serde_json::from_str(&settings).map_err(|e| corrupt(format!("settings: {e}")))?;
    let mut rebuild = Rebuild::new(settings.options.clone(), settings.no_special_scores);
    for row in &inputs {
        rebuild.apply(&row.input).map_err(|e| corrupt(format!("input {}: {e}", row.n)))?;
    }
    let inputs = inputs.len() as i64;
    Ok(Rebuilt { id, settings, game, seats, rebuild, inputs, events })
}

/// Opens a table again on a game already rebuilt from its inputs (checked
/// against the stored scores) and starts it: the seats, the manager, the
/// random stream and the event stream's position come back, with the recent
/// events for clients that resume. The players are away until they reconnect
/// with their seat tokens; a game in play waits, paused, until every person
/// is ready again. The game's rows must already be stored.
pub async fn reopen(saved: Rebuilt, store: Store, limits: TableLimits) -> Result<TableHandle, RecoverError> {
    open(set_up(saved, store, limits, None)?).await
}

/// The table of a rebuilt game, as [`reopen`] opens it, before anything is
/// stored or started: CPU work only (the robots, the recent events read
/// again), so that recovery may do it on a blocking thread. `robots_wait`:
/// see [`Actor::restored`].
pub(super) fn set_up(
    saved: Rebuilt,
    store: Store,
    limits: TableLimits,
    robots_wait: Option<tokio::sync::watch::Receiver<bool>>,
) -> Result<Actor, RecoverError> {
    let Rebuilt { id, mut settings, game: row, seats: seat_rows, rebuild, inputs, events } = saved;
    let corrupt = |why: String| RecoverError::Corrupt { game: id.clone(), why };
    let mut seats = Seats::default();
    seats.manager = row.manager.and_then(|m| u8::try_from(m).ok());
    for seat_row in &seat_rows {
        let seat = u8::try_from(seat_row.seat).ok().filter(|&s| s < 4);
        let seat = seat.ok_or_else(|| corrupt(format!("there is no seat {}", seat_row.seat)))?;
        let robot = match &seat_row.robot {
            Some(json) => {
                let strategy: Strategy = serde_json::from_str(json).map_err(|e| corrupt(format!("robot: {e}")))?;
                Some((strategy, Robot::new(strategy, settings.options.clone())))
            }
            None => None,
        };
        let person = robot.is_none();
        seats.restore(
            seat,
            Seat {
                name: seat_row.name.clone(),
                token_sha256: seat_row.token_sha256.clone(),
                account: seat_row.user_id,
                session: None,
                // Who held it is not stored: a restart's tables count against no quota.
                hold: None,
                robot,
                connection: None,
                disconnected_at: person.then(Instant::now),
                ready: !person,
                pause_request: u32::try_from(seat_row.pause_request).unwrap_or(0),
                penalty: seat_row.penalty,
                // Each connection says what it wants (see `Actor::connect`).
                ask_every_discard: false,
            },
        );
    }
    // The game, as its inputs rebuild it.
    settings.options = rebuild.options;
    let game = rebuild.game;
    if let Some(game) = &game {
        if game.scores() != row.scores || i64::from(game.hands_started()) != row.hands {
            return Err(corrupt(format!(
                "replaying the inputs gives scores {:?} after {} hands; the store says {:?} after {}",
                game.scores(),
                game.hands_started(),
                row.scores,
                row.hands
            )));
        }
        if game.hands_started() > 0 {
            settings.first_wall = None;
        }
    }
    // The stream: its position, and the recent events for resuming.
    let current = game.as_ref().map_or(0, |g| i64::from(g.hands_started()));
    let seq = u64::try_from(row.last_seq).unwrap_or(0);
    let recent = events.iter().filter(|e| e.hand >= current - 1);
    let stream = Stream::resumed(
        settings.subscriber_queue,
        limits.chat_kept,
        seq,
        recent.clone().map(|e| (e.seq as u64, e.audience, e.body.as_str().into(), e.hand)),
        current,
    );
    // The hand being played is followed again, for its row when it ends.
    let in_progress = game.as_ref().is_some_and(Game::hand_in_progress);
    let hand_events = recent
        .filter(|e| in_progress && e.hand == current)
        .filter_map(|e| match serde_json::from_str(&e.body) {
            Ok(ServerMessage::Event { event: StreamEvent::Game(event), .. }) => Some((e.seq, e.at_us, event)),
            _ => None,
        })
        .collect();
    Ok(Actor::restored(Restored {
        id,
        settings,
        store,
        limits,
        record: Record::stored(row.source, row.created_us, row.finished_us, inputs),
        seats,
        state: row.state,
        game,
        rng_pos: row.rng_pos,
        stream,
        hand_events,
        robots_wait,
    }))
}

/// Stores what setting the table up changed (the wait for everybody's
/// `ready`), then starts its task.
async fn open(mut actor: Actor) -> Result<TableHandle, RecoverError> {
    actor.flush().await?;
    tracing::info!(table = %actor.id(), hands = actor.hand_number(), seq = actor.seq(), "table reopened");
    Ok(actor.start_task())
}
