//! One hand's history for replay: its events from the log, as far as the
//! requester may see them.
//!
//! A finished game hides nothing: every event of every audience is given,
//! each with its audience, so a replay can show every concealed hand. While
//! the game is live the log is filtered exactly as the table's stream is
//! ([`Audience::includes`]): a spectator gets what a spectator's socket got,
//! a player with its seat token what its own socket got. A concealed tile is
//! thus never shown early through the archive.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::json;
use crate::rules::PlayerId;
use crate::rules::event::Audience;
use crate::store::records::audience_from_columns;
use crate::store::row::from_row;
use crate::store::{Store, StoreError};

/// Who is asking, which decides what is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Viewer {
    /// Anyone, once the game is over: every event.
    Everything,
    /// The player in this seat (its token was given) while the game is live.
    Player(u8),
    /// Anyone else while the game is live.
    Spectator,
}

/// How a history was filtered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SeenAs {
    /// Unfiltered (the game is over).
    Everything,
    /// As the seat's own stream showed it.
    Player,
    /// As a spectator's stream showed it.
    Spectator,
}

/// One event of a hand's history.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ReplayEvent {
    /// Its sequence number in the table's stream.
    pub seq: i64,
    /// When the table sent it, in µs since the epoch.
    pub at_us: i64,
    /// Who could see it.
    pub audience: Audience,
    /// The game or table event, exactly as the stream's `event` message had it.
    #[schema(schema_with = stream_event)]
    pub event: Value,
}

/// An event's schema: the WebSocket stream's `StreamEvent`, named, not
/// imported: the store keeps each event as the stream wrote it and never
/// reads one (the document's components hold the schema, see
/// `http::openapi::ApiDoc`).
fn stream_event() -> utoipa::openapi::schema::RefBuilder {
    utoipa::openapi::schema::RefBuilder::new()
        .ref_location_from_schema_name("StreamEvent")
        .description(Some("The game or table event, exactly as the stream's `event` message had it."))
}

/// A hand's history.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct HandHistory {
    /// The game's id.
    pub game: String,
    /// The hand's number, from 1.
    pub hand: i64,
    /// The hand has ended (won and settled, or washed out); otherwise it is
    /// being played and more events will follow.
    pub finished: bool,
    /// How the events were filtered.
    pub seen_as: SeenAs,
    /// The requester's seat, when it gave its token.
    pub seat: Option<u8>,
    /// The events, in order.
    pub events: Vec<ReplayEvent>,
}

from_row! {
    /// An `events` row, as stored.
    struct EventColumns {
        seq: i64,
        at_us: i64,
        audience: String,
        audience_player: Option<i64>,
        body: String,
    }
}

impl Store {
    /// The events of hand `hand` as `viewer` may see them: from its deal to
    /// its end for a finished hand, every event numbered with the hand so
    /// far for one being played. `None` if the game has no such hand (the
    /// caller checks that the game exists).
    pub async fn hand_history(&self, id: &str, hand: i64, viewer: Viewer) -> Result<Option<HandHistory>, StoreError> {
        self.file_tail(&[id.to_string()]).await?;
        let range: Option<(i64, i64)> =
            sqlx::query_as("SELECT first_seq, last_seq FROM hands WHERE game_id = $1 AND hand = $2")
                .bind(id)
                .bind(hand)
                .fetch_optional(self.pool())
                .await?;
        let rows = match range {
            Some((first, last)) => {
                sqlx::query_as::<_, EventColumns>(
                    "SELECT seq, at_us, audience, audience_player, body FROM events \
                     WHERE game_id = $1 AND seq >= $2 AND seq <= $3 ORDER BY seq",
                )
                .bind(id)
                .bind(first)
                .bind(last)
                .fetch_all(self.pool())
                .await?
            }
            None => {
                // A hand without a row has not ended (or was cut short): its
                // events are those numbered with it, if it was ever dealt.
                let dealt: Option<i64> = sqlx::query_scalar("SELECT hands FROM games WHERE id = $1")
                    .bind(id)
                    .fetch_optional(self.pool())
                    .await?;
                if hand < 1 || hand > dealt.unwrap_or(0) {
                    return Ok(None);
                }
                sqlx::query_as::<_, EventColumns>(
                    "SELECT seq, at_us, audience, audience_player, body FROM events \
                     WHERE game_id = $1 AND hand = $2 ORDER BY seq",
                )
                .bind(id)
                .bind(hand)
                .fetch_all(self.pool())
                .await?
            }
        };
        let (seen_as, seat) = match viewer {
            Viewer::Everything => (SeenAs::Everything, None),
            Viewer::Player(s) => (SeenAs::Player, Some(s)),
            Viewer::Spectator => (SeenAs::Spectator, None),
        };
        let mut events = Vec::with_capacity(rows.len());
        for r in rows {
            let audience = audience_from_columns(&r.audience, r.audience_player).ok_or_else(|| {
                StoreError::Corrupt { game: id.to_string(), why: format!("audience '{}'", r.audience) }
            })?;
            if viewer != Viewer::Everything && !audience.includes(seat.map(PlayerId)) {
                continue;
            }
            let mut message: Value = json(id, "event", &r.body)?;
            let event = message.get_mut("event").map(Value::take).ok_or_else(|| StoreError::Corrupt {
                game: id.to_string(),
                why: "a stored event without its event".into(),
            })?;
            events.push(ReplayEvent { seq: r.seq, at_us: r.at_us, audience, event });
        }
        Ok(Some(HandHistory { game: id.to_string(), hand, finished: range.is_some(), seen_as, seat, events }))
    }
}
