//! Where the counts live when several nodes serve one cluster: a
//! [`Ledger`] that every node consults, so that a client spreading its
//! requests over the nodes holds no more than from one. Cluster mode gives
//! [`super::Quotas`] and the accounts one (kept in the shared database);
//! a single server counts in its own memory.
//!
//! What goes to the ledger: the tables, seats and games of robots a player
//! holds, the rates of tables opened and seats taken, the hands of robots
//! alone it has had dealt (`super::budget`), and the accounts' rates and
//! strikes (logins, registrations, guesses). Connections are
//! counted where they arrive, each node allowing an address its share of
//! the cap (the cap divided by the live nodes): a round trip to the
//! database for every connection would cost more than the cap protects.

use std::time::Duration;

use futures_util::future::BoxFuture;

use super::rate::Rate;

/// A ledger's failure: the database is away, say. The caller then counts
/// in its own memory only (a node still limits what it serves itself).
#[derive(Debug, Clone, thiserror::Error)]
#[error("the cluster's limits cannot be read: {0}")]
pub struct LedgerError(pub String);

/// Counts shared by a cluster's nodes.
pub trait Ledger: Send + Sync + std::fmt::Debug {
    /// Takes one `kind` for `holder` if fewer than `cap` are held over the
    /// cluster; whether it was taken.
    fn hold<'a>(&'a self, holder: &'a str, kind: &'static str, cap: u32) -> BoxFuture<'a, Result<bool, LedgerError>>;

    /// Gives one back (in the background: called when a permit drops).
    fn release(&self, holder: String, kind: &'static str);

    /// Counts one attempt at `key` at `rate`: `None` if allowed, else how
    /// long to wait.
    fn pace<'a>(&'a self, key: &'a str, rate: Rate) -> BoxFuture<'a, Result<Option<Duration>, LedgerError>>;

    /// Pays one into `key`'s bucket, which holds `rate.burst` and drains one
    /// every `rate.every` (the rate of now applies to what is in it): `None`
    /// if there was room, else how long until there is.
    fn spend<'a>(&'a self, key: &'a str, rate: Rate) -> BoxFuture<'a, Result<Option<Duration>, LedgerError>>;

    /// The strikes against `key` now, forgiven at `rate.every`.
    fn strikes<'a>(&'a self, key: &'a str, rate: Rate) -> BoxFuture<'a, Result<f64, LedgerError>>;

    /// One more strike against `key`.
    fn strike<'a>(&'a self, key: &'a str, rate: Rate) -> BoxFuture<'a, Result<(), LedgerError>>;

    /// The live nodes sharing the ledger (at least 1): each allows an
    /// address its share of a connection cap.
    fn nodes(&self) -> u32;
}
