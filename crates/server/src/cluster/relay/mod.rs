//! Tables of other nodes, reached over NATS.
//!
//! - **Commands** go by request-reply to the owner's subject
//!   (`mj.node.<node id>`), one JSON [`Ask`] each; a client's moves and its
//!   disconnection are published there without a reply, in order.
//! - **A seat's stream** (everything its table queues for it, already cut
//!   to what it may see: the owner's table does that, exactly as for a
//!   socket of its own) is published by the owner on the connection's relay
//!   subject (`mj.relay.<node id>.<n>`), each message numbered. The node of
//!   the socket subscribes to it before it asks to connect, so nothing is
//!   missed between the answer and the first event.
//! - **Spectators** of a table at one node share one such stream, the
//!   node's feed of the table (see [`super::feed`]): the owner publishes each
//!   event once for them all.
//! - **A gap** (NATS core delivers at most once: a message lost while it
//!   reconnected, say) is filled from the stored log: the socket's node
//!   attaches the stream again after the last event it gave the socket
//!   (`since`), and the socket sees nothing of it. Only when that fails does
//!   the socket close as fallen behind (4000), its client then resuming with
//!   `since` itself: a lost NATS message loses nothing and duplicates nothing.
//!
//! The hidden-information rule holds across nodes because the only thing
//! that crosses for a connection is what the table cut for it (for a feed,
//! for a spectator).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, oneshot, watch};
use tokio_util::sync::CancellationToken;

use super::bus::{Bus, Heard};
use super::feed::Feed;
use crate::bots::strategy::Strategy;
use crate::limits::{Client, HandsPayer, Permit};
use crate::protocol::ws::{ClientMessage, ServerMessage, WsErrorCode};
use crate::table::actor::OpenError;
mod owner;
mod stand_in;

pub use owner::Owner;
pub use stand_in::{Remote, Unanswering};

use crate::table::{
    Asker, Connection, Farewell, Lobby, RobotSeat, SeatGrant, TableCommand, TableError, TableHandle, TableSettings,
    TableSetup,
};

/// A command for a table, sent to the node that plays it.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Ask {
    /// Opens a new table here (placed by the node that was asked); the
    /// answer is its id. Its quota is counted on the node that was asked.
    /// `starter`: started at once, who pays for its robots' hands.
    Open { settings: Box<TableSettings>, robots: Vec<RobotSeat>, start: bool, starter: Option<Client> },
    /// [`TableCommand::Info`].
    Info { table: String },
    /// [`TableCommand::Options`].
    Options { table: String },
    /// [`TableCommand::Sit`] (the seat is counted against the client's
    /// quota on the node it asked, not the owner's).
    Sit { table: String, name: String, seat: Option<u8>, account: Option<i64>, session: Option<String> },
    /// [`TableCommand::Leave`].
    Leave { table: String, asker: Asker },
    /// [`TableCommand::AddRobot`].
    AddRobot { table: String, seat: Option<u8>, strategy: Strategy, asker: Asker },
    /// [`TableCommand::RemoveRobot`].
    RemoveRobot { table: String, seat: u8, asker: Asker },
    /// [`TableCommand::Start`]; `robot_game`: the asker holds a game of
    /// robots; `starter`: who pays for its hands.
    Start { table: String, asker: Asker, robot_game: bool, starter: Option<Client> },
    /// [`TableCommand::Abort`].
    Abort { table: String },
    /// [`TableCommand::Connect`], its stream relayed on `relay`; `from`:
    /// the node of the socket. `share`: a spectator's stream is not relayed
    /// but shared (the node of the socket has one feed per table, see
    /// `feed`): only its start is answered, [`Connected::glimpse`].
    Connect {
        table: String,
        token: Option<String>,
        account: Option<i64>,
        since: Option<u64>,
        replay_hand: bool,
        relay: String,
        from: String,
        #[serde(default)]
        share: bool,
    },
    /// [`TableCommand::Watching`] (no reply): the feed relayed as
    /// `connection` stands for `count` spectators.
    Watching { table: String, connection: u64, count: usize },
    /// [`TableCommand::Message`] (no reply).
    Message { table: String, connection: u64, message: ClientMessage },
    /// [`TableCommand::BadMessage`] (no reply).
    BadMessage { table: String, connection: u64, code: WsErrorCode, reason: String },
    /// [`TableCommand::Disconnect`] (no reply): the relayed socket closed.
    Disconnect { table: String, connection: u64, relay: String },
}

/// The owner's answer to [`Ask::Connect`].
#[derive(Debug, Serialize, Deserialize)]
pub struct Connected {
    /// The connection's id at the table.
    pub connection: u64,
    /// Its seat (`None`: a spectator).
    pub seat: Option<u8>,
    /// A spectator asked to `share`: what its stream started with (its
    /// snapshot, or the events it missed after `since`); nothing more is
    /// relayed for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub glimpse: Option<Vec<String>>,
}

/// Asks node `owner` to open a table as `setup` says; its id.
pub async fn open_on(bus: &Bus, owner: &str, setup: &TableSetup) -> Result<String, OpenError> {
    let ask = Ask::Open {
        settings: Box::new(setup.settings.clone()),
        robots: setup.robots.clone(),
        start: setup.start,
        starter: setup.payer.as_ref().map(HandsPayer::starter),
    };
    let payload = serde_json::to_vec(&ask).unwrap_or_default();
    let Ok(answer) = bus.request(node_subject(owner), &payload, ANSWER_WITHIN).await else {
        return Err(OpenError::Table(TableError::Recovering));
    };
    let answer: Result<String, TableError> = serde_json::from_slice(&answer)
        .unwrap_or_else(|e| Err(TableError::Invalid(format!("the table's node answered oddly: {e}"))));
    answer.map_err(OpenError::Table)
}

/// The subject of a node's commands.
pub fn node_subject(node_id: &str) -> String {
    format!("mj.node.{node_id}")
}

/// How long a node waits for another's answer.
pub const ANSWER_WITHIN: Duration = Duration::from_secs(5);

/// The reason a relayed stream ended, as its last message says it.
fn farewell_word(farewell: Option<Farewell>, closed: bool) -> &'static str {
    match farewell {
        Some(Farewell::Moved) => "moved",
        Some(Farewell::Replaced) => "replaced",
        Some(Farewell::SeatLeft) => "seat_left",
        Some(Farewell::Closed) => "closed",
        Some(Farewell::SessionEnded) => "session_ended",
        _ if closed => "closed",
        Some(Farewell::FellBehind) | None => "fell_behind",
    }
}

fn farewell_of(word: &str) -> Farewell {
    match word {
        "moved" => Farewell::Moved,
        "replaced" => Farewell::Replaced,
        "seat_left" => Farewell::SeatLeft,
        "closed" => Farewell::Closed,
        "session_ended" => Farewell::SessionEnded,
        _ => Farewell::FellBehind,
    }
}

/// A frame of a relayed stream: `N m<text>` (a message) or `N e<word>` (the end).
fn frame(n: u64, kind: char, body: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + 24);
    out.extend_from_slice(n.to_string().as_bytes());
    out.push(b' ');
    out.push(kind as u8);
    out.extend_from_slice(body.as_bytes());
    out
}

fn read_frame(payload: &[u8]) -> Option<(u64, char, &str)> {
    let text = std::str::from_utf8(payload).ok()?;
    let (n, rest) = text.split_once(' ')?;
    let mut chars = rest.chars();
    let kind = chars.next()?;
    Some((n.parse().ok()?, kind, chars.as_str()))
}

#[cfg(test)]
mod tests {
    use super::stand_in::event_seq;
    use super::*;

    #[test]
    fn a_frame_reads_back() {
        assert_eq!(read_frame(&frame(7, 'm', "{\"a\":1}")), Some((7, 'm', "{\"a\":1}")));
        assert_eq!(read_frame(&frame(8, 'e', "moved")), Some((8, 'e', "moved")));
        assert_eq!(read_frame(b"x m{}"), None);
        assert_eq!(farewell_of(farewell_word(Some(Farewell::Moved), false)), Farewell::Moved);
        assert_eq!(farewell_of(farewell_word(None, true)), Farewell::Closed);
        for why in [Farewell::Replaced, Farewell::SeatLeft, Farewell::SessionEnded, Farewell::FellBehind] {
            assert_eq!(farewell_of(farewell_word(Some(why), false)), why);
        }
    }

    #[test]
    fn an_event_s_number_is_read_from_its_text() {
        let event = crate::protocol::ws::ServerMessage::Event {
            seq: 1234,
            at_us: 1,
            event: crate::protocol::ws::StreamEvent::Table(crate::protocol::ws::TableEvent::Closed {
                reason: "idle".into(),
            }),
        };
        let text = serde_json::to_string(&event).unwrap();
        assert_eq!(event_seq(&text), Some(1234), "{text}");
        assert_eq!(event_seq(r#"{"type":"pong"}"#), None);
    }
}
