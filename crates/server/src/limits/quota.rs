//! What each client holds at once, counted: connections, WebSockets,
//! classic connections, tables waiting to start, seats, robot-only games.
//!
//! A client takes a [`Permit`] for each thing it holds; the count goes down
//! when the permit is dropped (the connection closes, the seat is left, the
//! game ends, the table closes), so nothing has to remember to give it back.
//! A permit is taken before the thing is made, which makes the count exact
//! even when one client asks many times at once.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;

use super::Limits;
use super::address::AddressKey;
use super::budget::{RobotBudget, Tally};
use super::ledger::{Ledger, LedgerError};
use super::rate::Limit;

/// Who holds something: an account (a logged-in player), or else the
/// client's address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Holder {
    /// A logged-in player: its account's number.
    Account(i64),
    /// A guest: its address (IPv6 by /64).
    Address(AddressKey),
}

/// Who asks for something.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Client {
    /// The address the request came from.
    pub address: IpAddr,
    /// Its account, if logged in.
    pub account: Option<i64>,
    /// An admin: no quota on tables, seats or games applies.
    pub admin: bool,
}

impl Client {
    /// A guest at `address`.
    pub fn guest(address: IpAddr) -> Client {
        Client { address, account: None, admin: false }
    }

    /// Its account if logged in, else its address.
    pub fn holder(&self) -> Holder {
        match self.account {
            Some(account) => Holder::Account(account),
            None => Holder::Address(AddressKey::of(self.address)),
        }
    }
}

/// What is counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Held {
    /// An HTTP connection (by address).
    Connection,
    /// A table WebSocket, a player's or a spectator's (by address).
    WebSocket,
    /// A classic-protocol connection (by address).
    Classic,
    /// A table opened and not started yet (by holder).
    WaitingTable,
    /// A person's seat at a table whose game is not over (by holder).
    Seat,
    /// A game of four robots being played (by holder).
    RobotGame,
}

impl Holder {
    /// Whose it is, as a refusal tells the client.
    fn whose(self) -> &'static str {
        match self {
            Holder::Account(_) => "your account",
            Holder::Address(_) => "your address",
        }
    }
}

impl std::fmt::Display for Holder {
    /// As the cluster's ledger keys it: `account:7`, `address:192.0.2.1`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Holder::Account(n) => write!(f, "account:{n}"),
            Holder::Address(a) => write!(f, "address:{a}"),
        }
    }
}

impl Held {
    /// Its name in the cluster's ledger.
    fn key(self) -> &'static str {
        match self {
            Held::Connection => "connection",
            Held::WebSocket => "websocket",
            Held::Classic => "classic",
            Held::WaitingTable => "waiting_table",
            Held::Seat => "seat",
            Held::RobotGame => "robot_game",
        }
    }

    /// Its name in refusals and in the docs.
    pub fn describe(self) -> &'static str {
        match self {
            Held::Connection => "open connections from one address",
            Held::WebSocket => "open WebSockets from one address",
            Held::Classic => "open classic-protocol connections from one address",
            Held::WaitingTable => "tables opened and not started yet",
            Held::Seat => "seats held at games not over",
            Held::RobotGame => "games of robots alone being played",
        }
    }

    /// Counted by address alone, whoever is logged in.
    fn by_address(self) -> bool {
        matches!(self, Held::Connection | Held::WebSocket | Held::Classic)
    }

    /// How long a refused client is told to wait: connections close within
    /// seconds, seats and games take minutes.
    fn retry_after(self) -> Duration {
        match self {
            Held::Connection | Held::WebSocket | Held::Classic => Duration::from_secs(10),
            Held::WaitingTable | Held::Seat | Held::RobotGame => Duration::from_secs(60),
        }
    }
}

/// What is paced: how fast a client may ask for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Paced {
    /// Tables opened (by player).
    TablesOpened,
    /// Seats taken (by player).
    SeatsTaken,
    /// Table connections opened: WebSockets and classic logins (by address).
    ConnectionsOpened,
}

/// A quota refused a request.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Refusal {
    /// Why, for the client.
    pub message: String,
    /// When to try again.
    pub retry_after: Duration,
}

impl Refusal {
    /// Whole seconds to wait, at least 1 (for `Retry-After`).
    pub fn retry_after_secs(&self) -> u64 {
        (self.retry_after.as_secs() + u64::from(self.retry_after.subsec_nanos() > 0)).max(1)
    }
}

/// The counts and the rates, for the whole server.
#[derive(Debug)]
pub struct Quotas {
    limits: Limits,
    counts: Mutex<HashMap<(Holder, Held), u32>>,
    tables_opened: Limit<Holder>,
    seats_taken: Limit<Holder>,
    connections_opened: Limit<Holder>,
    /// Connections the process may hold at once, HTTP and classic together
    /// ([`super::connection_budget`]): exempt addresses count here too.
    connections: Arc<tokio::sync::Semaphore>,
    /// Cluster mode: the counts every node shares ([`Quotas::share`]).
    ledger: std::sync::OnceLock<Arc<dyn Ledger>>,
    /// The budget of robots' play in force: the flags', or an admin's.
    robot_budget: std::sync::RwLock<RobotBudget>,
    /// The hands of robots alone paid for at this node (one node, or the
    /// cluster's ledger away).
    robot_hands: Tally,
}

/// Who pays for the hands of a game of robots alone: its starter, from its
/// budget ([`super::budget`]).
#[derive(Clone, Debug)]
pub struct HandsPayer {
    quotas: Arc<Quotas>,
    starter: Client,
}

impl HandsPayer {
    /// Pays for one more hand, or says why not (the game ends after the
    /// hand being played).
    pub async fn pay(&self) -> Result<(), Refusal> {
        self.quotas.pay_robot_hand(&self.starter).await
    }

    /// Who started the game (a table played at another node pays there).
    pub fn starter(&self) -> Client {
        self.starter
    }
}

/// One thing held: its count goes down when this is dropped. A permit of
/// an exempt client counts nothing.
#[derive(Debug)]
#[must_use = "the thing counts as held only while its permit is kept"]
pub struct Permit {
    counted: Option<(Arc<Quotas>, Holder, Held)>,
    /// Counted in the cluster's ledger too (given back there when dropped).
    shared: Option<(Arc<dyn Ledger>, String, &'static str)>,
    /// A connection's share of the process's connections.
    _budget: Option<tokio::sync::OwnedSemaphorePermit>,
}

impl Permit {
    /// A permit that counts nothing (tables brought back by a restart,
    /// whose holders are not known, and exempt clients).
    pub fn uncounted() -> Permit {
        Permit { counted: None, shared: None, _budget: None }
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        if let Some((ledger, holder, kind)) = self.shared.take() {
            ledger.release(holder, kind);
        }
        if let Some((quotas, holder, held)) = self.counted.take() {
            let mut counts = quotas.counts.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(n) = counts.get_mut(&(holder, held)) {
                *n -= 1;
                if *n == 0 {
                    counts.remove(&(holder, held));
                }
            }
        }
    }
}

impl Quotas {
    /// The quotas of `limits`.
    pub fn new(limits: Limits) -> Arc<Quotas> {
        let connections = super::connection_budget(limits.connections) as usize;
        let limits_budget = limits.robot_budget;
        Arc::new(Quotas {
            tables_opened: Limit::new(limits.tables_opened),
            seats_taken: Limit::new(limits.seats_taken),
            connections_opened: Limit::new(limits.connections_opened),
            connections: Arc::new(tokio::sync::Semaphore::new(connections.min(tokio::sync::Semaphore::MAX_PERMITS))),
            limits,
            counts: Mutex::default(),
            ledger: std::sync::OnceLock::new(),
            robot_budget: std::sync::RwLock::new(limits_budget),
            robot_hands: Tally::default(),
        })
    }

    /// Cluster mode: from now on every limit counts over the cluster, in
    /// `ledger` (HTTP connections: each node allows an address its share).
    pub fn share(&self, ledger: Arc<dyn Ledger>) {
        let _ = self.ledger.set(ledger);
    }

    /// No limit at all (tests of other things, tools).
    pub fn unlimited() -> Arc<Quotas> {
        Quotas::new(Limits::unlimited())
    }

    /// The limits in force.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Who answers for what `client` asks: its address for what is counted
    /// by address (connections), else the player (its account, or its
    /// address); `None` when no limit applies: its address is exempt, or
    /// (for tables, seats and games) it is an admin.
    fn holder(&self, client: &Client, by_address: bool) -> Option<Holder> {
        if self.limits.exempt.contains(client.address) || (client.admin && !by_address) {
            return None;
        }
        Some(if by_address { Holder::Address(AddressKey::of(client.address)) } else { client.holder() })
    }

    /// How many of `held` one holder may have (over the cluster).
    fn cap(&self, held: Held) -> u32 {
        let l = &self.limits;
        match held {
            Held::Connection => l.connections_per_address,
            Held::WebSocket => l.websockets_per_address,
            Held::Classic => l.classic_per_address,
            Held::WaitingTable => l.waiting_tables,
            Held::Seat => l.seats,
            Held::RobotGame => l.robot_games,
        }
    }

    /// How many of `held` one holder may have at this node: all of them,
    /// except HTTP connections in a cluster, of which each node allows its
    /// share (they are not counted in the ledger).
    fn cap_here(&self, held: Held) -> u32 {
        match (held, self.ledger.get()) {
            (Held::Connection, Some(ledger)) => self.cap(held).div_ceil(ledger.nodes().max(1)),
            _ => self.cap(held),
        }
    }

    fn refusal(holder: Holder, held: Held, n: Option<u32>, cap: u32) -> Refusal {
        let whose = holder.whose();
        let has = match n {
            Some(n) => format!("{whose} has {n} of at most {cap}"),
            None => format!("{whose} has the most the cluster's servers allow together, {cap}"),
        };
        let message = format!("too many {}: {has}; close or finish one first", held.describe());
        Refusal { message, retry_after: held.retry_after() }
    }

    /// Takes one `held` for `client`, or says why not; in a cluster, counted
    /// over every node (except HTTP connections: see [`Quotas::share`]).
    pub async fn hold(self: &Arc<Self>, client: &Client, held: Held) -> Result<Permit, Refusal> {
        let mut permit = self.hold_here(client, held)?;
        let (Some(ledger), Some((_, holder, _))) = (self.ledger.get(), &permit.counted) else { return Ok(permit) };
        if held == Held::Connection {
            return Ok(permit);
        }
        let holder = *holder;
        let key = holder.to_string();
        match ledger.hold(&key, held.key(), self.cap(held)).await {
            Ok(true) => permit.shared = Some((ledger.clone(), key, held.key())),
            Ok(false) => return Err(Quotas::refusal(holder, held, None, self.cap(held))),
            // The cluster's counts are away: this node still counts its own.
            Err(e) => tracing::warn!("{e}"),
        }
        Ok(permit)
    }

    /// A connection of a trusted reverse proxy: only its share of what the
    /// process can hold (its clients are counted by the addresses it
    /// forwards), or why not.
    pub fn hold_proxied(&self) -> Result<Permit, Refusal> {
        Ok(Permit { counted: None, shared: None, _budget: Some(self.connection_budget(Held::Connection)?) })
    }

    /// A connection's share of what the process can hold.
    fn connection_budget(&self, held: Held) -> Result<tokio::sync::OwnedSemaphorePermit, Refusal> {
        self.connections.clone().try_acquire_owned().map_err(|_| Refusal {
            message: "the server holds as many connections as it can: try again shortly".into(),
            retry_after: held.retry_after(),
        })
    }

    /// Takes one `held` for `client` at this node, or says why not.
    fn hold_here(self: &Arc<Self>, client: &Client, held: Held) -> Result<Permit, Refusal> {
        // A connection first takes its share of what the process can hold
        // (a WebSocket takes its own: once upgraded it no longer counts as
        // the HTTP connection it came from).
        let budget = match held {
            Held::Connection | Held::Classic | Held::WebSocket => Some(self.connection_budget(held)?),
            _ => None,
        };
        let Some(holder) = self.holder(client, held.by_address()) else {
            return Ok(Permit { counted: None, shared: None, _budget: budget });
        };
        if held == Held::RobotGame && self.limits.robot_games_need_account && client.account.is_none() {
            return Err(Refusal {
                message: "only logged-in players may start games of robots alone here: log in".into(),
                retry_after: held.retry_after(),
            });
        }
        let cap = self.cap_here(held);
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        let n = counts.get(&(holder, held)).copied().unwrap_or(0);
        if n >= cap {
            return Err(Quotas::refusal(holder, held, Some(n), cap));
        }
        counts.insert((holder, held), n + 1);
        Ok(Permit { counted: Some((self.clone(), holder, held)), shared: None, _budget: budget })
    }

    /// Counts one `what` asked for by `client`, or says how long to wait
    /// (the rates `--tables-rate`, `--seats-rate`, `--connections-rate`); in
    /// a cluster, over every node.
    pub async fn pace(&self, client: &Client, what: Paced) -> Result<(), Refusal> {
        let Some(holder) = self.holder(client, what == Paced::ConnectionsOpened) else { return Ok(()) };
        let (limit, rate, name) = match what {
            Paced::TablesOpened => (&self.tables_opened, self.limits.tables_opened, "tables opened"),
            Paced::SeatsTaken => (&self.seats_taken, self.limits.seats_taken, "seats taken"),
            Paced::ConnectionsOpened => {
                (&self.connections_opened, self.limits.connections_opened, "connections opened")
            }
        };
        let key = format!("{name} {holder}");
        let checked = self.counted(|ledger| ledger.pace(&key, rate), || limit.check(&holder)).await;
        checked.map_err(|wait| Refusal {
            message: format!(
                "too many {name}: at most {} at once, then one every {} s",
                rate.burst,
                rate.every.as_secs_f64()
            ),
            retry_after: wait,
        })
    }

    /// The budget of robots' play in force.
    pub fn robot_budget(&self) -> RobotBudget {
        *self.robot_budget.read().unwrap_or_else(|e| e.into_inner())
    }

    /// From now on, an admin's budget (`None`: the flags' again).
    pub fn set_robot_budget(&self, budget: Option<RobotBudget>) {
        *self.robot_budget.write().unwrap_or_else(|e| e.into_inner()) = budget.unwrap_or(self.limits.robot_budget);
    }

    /// Who pays for the hands of a game of robots alone `starter` starts.
    pub fn hands_payer(self: &Arc<Self>, starter: Client) -> HandsPayer {
        HandsPayer { quotas: self.clone(), starter }
    }

    /// Pays for one hand of robots alone dealt for `client` from its budget
    /// per hour and per day, or says how long until it may have another; in
    /// a cluster, counted over every node.
    pub async fn pay_robot_hand(&self, client: &Client) -> Result<(), Refusal> {
        let Some(holder) = self.holder(client, false) else { return Ok(()) };
        let budget = self.robot_budget();
        for (window, hands, rate) in budget.windows() {
            if hands == 0 {
                return Err(Refusal {
                    message: "this server plays no games of robots alone: sit at a table".into(),
                    retry_after: Duration::from_secs(3600),
                });
            }
            let key = format!("robot hands per {window} {holder}");
            let paid = self.counted(|ledger| ledger.spend(&key, rate), || self.robot_hands.spend(&key, rate)).await;
            if let Err(wait) = paid {
                return Err(Refusal {
                    message: format!(
                        "{} has had its budget of hands of robots alone: at most {hands} a{} {window}; the next \
                         in {} s",
                        holder.whose(),
                        if window == "hour" { "n" } else { "" },
                        wait.as_secs().max(1)
                    ),
                    retry_after: wait,
                });
            }
        }
        Ok(())
    }

    /// Counts one attempt in the cluster's ledger (`shared`) when there is
    /// one and it answers, else at this node (`here`, when there is no
    /// cluster or its counts are away): `Err(wait)` when refused.
    async fn counted<'a>(
        &'a self,
        shared: impl FnOnce(&'a dyn Ledger) -> BoxFuture<'a, Result<Option<Duration>, LedgerError>>,
        here: impl FnOnce() -> Result<(), Duration>,
    ) -> Result<(), Duration> {
        if let Some(ledger) = self.ledger.get() {
            match shared(ledger.as_ref()).await {
                Ok(None) => return Ok(()),
                Ok(Some(wait)) => return Err(wait),
                Err(e) => tracing::warn!("{e}"),
            }
        }
        here()
    }

    /// How many of `held` `holder` has now (for tests and metrics).
    pub fn count(&self, holder: Holder, held: Held) -> u32 {
        self.counts.lock().unwrap_or_else(|e| e.into_inner()).get(&(holder, held)).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits { seats: 2, ..Limits::default() }
    }

    #[tokio::test]
    async fn a_permit_counts_until_it_is_dropped() {
        let quotas = Quotas::new(limits());
        let ann = Client::guest("192.0.2.1".parse().unwrap());
        let first = quotas.hold(&ann, Held::Seat).await.unwrap();
        let second = quotas.hold(&ann, Held::Seat).await.unwrap();
        let refused = quotas.hold(&ann, Held::Seat).await.unwrap_err();
        assert!(refused.message.contains("at most 2"), "{}", refused.message);
        assert_eq!(refused.retry_after_secs(), 60);
        // Another address, and an account at the same address, hold their own.
        assert!(quotas.hold(&Client::guest("192.0.2.2".parse().unwrap()), Held::Seat).await.is_ok());
        let account = Client { account: Some(7), ..ann };
        let _kept = quotas.hold(&account, Held::Seat).await.unwrap();
        drop(first);
        let third = quotas.hold(&ann, Held::Seat).await.unwrap();
        assert_eq!(quotas.count(ann.holder(), Held::Seat), 2);
        drop((second, third));
        assert_eq!(quotas.count(ann.holder(), Held::Seat), 0);
        assert!(quotas.counts.lock().unwrap().len() == 1, "only the account's count is left");
    }

    #[tokio::test]
    async fn paces_count_by_player_or_by_address() {
        let quotas = Quotas::new(Limits {
            seats_taken: super::super::Rate::new(2, Duration::from_secs(60)),
            connections_opened: super::super::Rate::new(1, Duration::from_secs(60)),
            ..Limits::default()
        });
        let ann = Client::guest("192.0.2.1".parse().unwrap());
        assert!(
            quotas.pace(&ann, Paced::SeatsTaken).await.is_ok() && quotas.pace(&ann, Paced::SeatsTaken).await.is_ok()
        );
        let refused = quotas.pace(&ann, Paced::SeatsTaken).await.unwrap_err();
        assert!(refused.message.contains("seats taken") && refused.retry_after_secs() > 1, "{refused:?}");
        let account = Client { account: Some(3), ..ann };
        assert!(quotas.pace(&account, Paced::SeatsTaken).await.is_ok(), "an account has its own");
        assert!(quotas.pace(&account, Paced::ConnectionsOpened).await.is_ok());
        assert!(
            quotas.pace(&ann, Paced::ConnectionsOpened).await.is_err(),
            "connections go by address, whoever logs in"
        );
    }

    #[tokio::test]
    async fn connections_take_a_share_of_what_the_process_holds() {
        let quotas = Quotas::new(Limits { connections: Some(2), ..Limits::unlimited() });
        let a = Client::guest("192.0.2.1".parse().unwrap());
        let b = Client::guest("192.0.2.2".parse().unwrap());
        let first = quotas.hold(&a, Held::Connection).await.unwrap();
        let _second = quotas.hold(&b, Held::Classic).await.unwrap();
        assert!(quotas.hold(&b, Held::Connection).await.unwrap_err().message.contains("as many connections"));
        assert!(quotas.hold(&b, Held::WebSocket).await.is_err(), "a WebSocket too");
        assert!(quotas.hold(&b, Held::Seat).await.is_ok(), "a seat is no connection");
        drop(first);
        assert!(quotas.hold(&b, Held::Connection).await.is_ok());
    }

    #[tokio::test]
    async fn connections_count_by_address_and_admins_and_exempt_addresses_are_spared() {
        let quotas = Quotas::new(Limits {
            websockets_per_address: 1,
            seats: 0,
            exempt: super::super::Exempt::new(vec!["10.0.0.0/8".parse().unwrap()]),
            ..Limits::default()
        });
        let admin = Client { address: "192.0.2.1".parse().unwrap(), account: Some(1), admin: true };
        let _ws = quotas.hold(&admin, Held::WebSocket).await.unwrap();
        assert!(quotas.hold(&admin, Held::WebSocket).await.is_err(), "an admin's sockets count by address too");
        assert!(quotas.hold(&admin, Held::Seat).await.is_ok(), "an admin holds any number of seats");
        let exempt = Client::guest("10.1.2.3".parse().unwrap());
        let permits: Vec<Permit> = {
            let mut v = Vec::new();
            for _ in 0..10 {
                v.push(quotas.hold(&exempt, Held::WebSocket).await.unwrap());
            }
            v
        };
        assert_eq!(permits.len(), 10);
        assert!(quotas.pace(&exempt, Paced::TablesOpened).await.is_ok());
    }
}
