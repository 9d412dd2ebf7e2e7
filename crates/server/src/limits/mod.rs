//! The one policy of what a client may hold and how fast it may ask, so
//! that no client, anonymous or not, can exhaust the service: connections,
//! WebSockets and classic connections per address; tables opened, tables
//! waiting to start, seats and games of robots per player (its account when
//! logged in, else its address); chat and other table requests per seat;
//! how much chat a table keeps in memory; when idle tables expire; how long
//! an HTTP client may take to send a request's head.
//!
//! Addresses are counted by [`address::AddressKey`] (IPv6 by /64).
//! [`Limits`] holds the settings (each a `serve` flag, listed with its
//! default in docs/protocol.md, "Limits"); [`quota::Quotas`] counts what is
//! held; [`rate`] has the token buckets. This module sits at the bottom of
//! the house beside `metrics`: it imports nothing of the product.

pub mod address;
pub mod budget;
pub mod ledger;
pub mod quota;
pub mod rate;

use std::time::Duration;

pub use address::{AddressKey, Exempt};
pub use budget::RobotBudget;
pub use quota::{Client, HandsPayer, Held, Holder, Paced, Permit, Quotas, Refusal};
pub use rate::Rate;

/// Every limit, with the defaults a public server runs with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// HTTP connections open at once from one address (WebSockets included
    /// while they are being opened).
    pub connections_per_address: u32,
    /// Table WebSockets (players' and spectators') open at once from one address.
    pub websockets_per_address: u32,
    /// Classic-protocol connections open at once from one address.
    pub classic_per_address: u32,
    /// Connections (HTTP and classic together) open at once in all; `None`:
    /// as many as the process's file descriptor limit allows, less a reserve.
    pub connections: Option<u32>,
    /// How long a client may take to send a request's head, and to begin
    /// the next request on a kept-alive connection.
    pub header_timeout: Duration,
    /// Tables one player may open.
    pub tables_opened: Rate,
    /// Seats one player may take (each seat taken and left is stored: a
    /// client sitting down and leaving over and over would fill the store).
    pub seats_taken: Rate,
    /// Table connections (WebSockets and classic logins) one address may
    /// open (each connection and disconnection of a seat is stored).
    pub connections_opened: Rate,
    /// Tables one player has opened that wait to start.
    pub waiting_tables: u32,
    /// Seats one player holds at games not over.
    pub seats: u32,
    /// Games of four robots one player has started that are still being played.
    pub robot_games: u32,
    /// Only logged-in players may start games of four robots.
    pub robot_games_need_account: bool,
    /// Rounds a game of four robots may play at most (its `NumRounds`): a
    /// game nobody plays costs the store all the same.
    pub robot_game_rounds: u32,
    /// Hands of robots alone per player per hour and per day, and how long
    /// their games are stored (an admin may change it while the server runs).
    pub robot_budget: RobotBudget,
    /// Chat messages one seat may send.
    pub chat: Rate,
    /// Other requests one seat may make that cost the table a write (pauses,
    /// the pause between actions, options, the manager).
    pub table_requests: Rate,
    /// Chat messages a table keeps in memory for clients that reconnect
    /// (the stored log keeps them all).
    pub chat_kept: usize,
    /// A table not started, with no person connected, closes after this long.
    pub idle_open_table: Duration,
    /// A game in play with no person connected (and at least one person
    /// seated) ends after this long.
    pub idle_game: Duration,
    /// Addresses no per-address limit or per-player quota applies to.
    pub exempt: Exempt,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            connections_per_address: 64,
            websockets_per_address: 32,
            classic_per_address: 8,
            connections: None,
            header_timeout: Duration::from_secs(15),
            tables_opened: Rate::new(10, Duration::from_secs(30)),
            seats_taken: Rate::new(20, Duration::from_secs(3)),
            connections_opened: Rate::new(30, Duration::from_secs(2)),
            waiting_tables: 4,
            seats: 8,
            robot_games: 2,
            robot_games_need_account: false,
            robot_game_rounds: 4,
            robot_budget: RobotBudget::default(),
            chat: Rate::new(10, Duration::from_secs(2)),
            table_requests: Rate::new(20, Duration::from_millis(500)),
            chat_kept: 200,
            idle_open_table: Duration::from_secs(10 * 60),
            idle_game: Duration::from_secs(30 * 60),
            exempt: Exempt::default(),
        }
    }
}

impl Limits {
    /// No limit on what one client holds or how fast it asks (for tests of
    /// other things); the timeouts and the memory bounds stay.
    pub fn unlimited() -> Limits {
        let many = u32::MAX;
        let fast = Rate::new(u32::MAX, Duration::from_millis(1));
        Limits {
            connections_per_address: many,
            websockets_per_address: many,
            classic_per_address: many,
            tables_opened: fast,
            seats_taken: fast,
            connections_opened: fast,
            waiting_tables: many,
            seats: many,
            robot_games: many,
            robot_game_rounds: 64,
            robot_budget: RobotBudget::unlimited(),
            chat: fast,
            table_requests: fast,
            ..Limits::default()
        }
    }
}

/// File descriptors kept back from connections for everything else (the
/// database pool, the store's files, the listeners, logs).
const RESERVED_DESCRIPTORS: u64 = 256;

/// How many connections the process can hold at once: its file descriptor
/// limit (raised to the hard limit first), less a reserve. A server that
/// refuses connections beyond this keeps accepting, and answering, instead
/// of failing every `accept` with "too many open files".
pub fn connection_budget(configured: Option<u32>) -> u32 {
    if let Some(n) = configured {
        return n.max(1);
    }
    let soft = rlimit::increase_nofile_limit(u64::MAX).unwrap_or(1024);
    u32::try_from(soft.saturating_sub(RESERVED_DESCRIPTORS).max(64)).unwrap_or(u32::MAX)
}
