//! Cluster mode (`serve --database postgres://... --nats nats://...`):
//! several nodes on one database and one NATS play as one service.
//!
//! - **Membership** is a lease per node in Postgres (`store::cluster`),
//!   renewed every [`ClusterConfig::heartbeat`] and expiring by the
//!   database's clock after [`ClusterConfig::lease`].
//! - **Ownership**: each table has one owner row with a fencing epoch. The
//!   node that opens a table owns it; when a node's lease expires (or it
//!   leaves), the live nodes take its tables over, each a share, and bring
//!   them back from the log as a restart does. The journal's writes carry
//!   the epoch and the database refuses a stale one, so a node that lost a
//!   table shows nothing more of it (it stops the table and sends its
//!   clients to reconnect). The lease, takeovers, rebalancing and leaving
//!   are in `ownership.rs`.
//! - **Routing**: a table of another node is reached through a stand-in
//!   ([`relay::Remote`]) that relays its commands and streams over NATS,
//!   so every node serves every table (REST, WebSocket, classic).
//! - **The lobby** lists every node's tables: each node answers
//!   `mj.<cluster id>.lobby` with its own.
//!
//! Nothing of a game is kept in NATS: it only carries commands and the
//! messages of streams already stored. Nothing heard there is trusted
//! either: every message is sealed with a key only the nodes hold
//! ([`seal`], through [`bus::Bus`]), and the node reaches NATS with its own
//! credentials and TLS ([`access`]).

pub mod access;
pub mod balance;
pub mod bus;
pub mod feed;
mod ownership;
pub mod relay;
pub mod seal;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use tokio::sync::{Notify, watch};

use self::access::NatsAccess;
use self::bus::{Bus, Heard};
use self::seal::Seal;
use crate::limits::Rate;
use crate::limits::ledger::{Ledger, LedgerError};
use crate::protocol::ws::TableInfo;
use crate::store::cluster::NodeRow;
use crate::store::{Store, StoreError};
use crate::table::actor::OpenError;
use crate::table::lobby::Elsewhere;
use crate::table::{Lobby, TableCommand, TableError, TableHandle, TableSetup};

/// The subjects every node of one cluster shares, under the cluster's id
/// (`store::cluster`'s `cluster_id`: another cluster on the same NATS has
/// its own).
#[derive(Debug)]
struct Shared {
    /// Every node answers it with its tables.
    lobby: String,
    /// Ended sessions, whose seat tokens end at every node's tables.
    revoked: String,
    /// Tables wait to be taken over.
    orphans: String,
}

impl Shared {
    fn of(cluster: &str) -> Shared {
        Shared {
            lobby: format!("mj.{cluster}.lobby"),
            revoked: format!("mj.{cluster}.revoked"),
            orphans: format!("mj.{cluster}.orphans"),
        }
    }
}

/// How long a new cluster key is announced before nodes seal with it: more
/// than the longest heartbeat (a fifth of the longest lease, 24 s), so that
/// every live node has read it first.
pub const KEY_ANNOUNCED: Duration = Duration::from_secs(30);

/// Keys replaced this long ago are forgotten at the next rotation.
const KEY_FORGOTTEN_AFTER: Duration = Duration::from_secs(3600);

/// Makes the cluster's next key (`mahjong-server cluster-key rotate`); its number.
pub async fn rotate_key(store: &Store) -> Result<u32, String> {
    if store.backend() != crate::store::Backend::Postgres {
        return Err("cluster keys live in a cluster's Postgres database (--database postgres://...)".into());
    }
    // The first key too, if no node has made it yet.
    store.cluster_keys(&seal::new_secret()).await.map_err(|e| e.to_string())?;
    store.rotate_cluster_key(&seal::new_secret(), KEY_ANNOUNCED, KEY_FORGOTTEN_AFTER).await.map_err(|e| e.to_string())
}

/// How long a listing waits for the other nodes' answers.
const LIST_WITHIN: Duration = Duration::from_millis(500);

/// A dead node's row is removed this long after its lease expired, once
/// its tables are taken over.
const FORGET_DEAD_AFTER: Duration = Duration::from_secs(60);

/// How a node joins the cluster.
#[derive(Clone, Debug)]
pub struct ClusterConfig {
    /// The NATS servers and how to get in (`--nats` and its companions).
    pub nats: NatsAccess,
    /// The node's name (`--node-name`).
    pub node_name: String,
    /// Where this node's HTTP listener is, as it sees it.
    pub address: String,
    /// How long a lease lasts without a heartbeat: a dead node's tables are
    /// taken over this long after its last one.
    pub lease: Duration,
    /// How often the lease is renewed and the tables waiting to be taken
    /// over are looked for.
    pub heartbeat: Duration,
    /// The messages a relayed stream may hold for a slow socket.
    pub relay_queue: usize,
    /// How long joining waits for a NATS server that does not answer yet
    /// (`--wait-for-services`).
    pub join_within: Duration,
    /// Rebalancing: how many of its tables the most loaded node may have on
    /// their way to another node at once (`--rebalance-at-once`; 0: none
    /// move, only new tables go to a node that joins).
    pub rebalance_at_once: usize,
}

impl ClusterConfig {
    /// The default lease (5 s) and heartbeat (1 s): a dead node's tables are
    /// playing again elsewhere within about 7 s (docs/architecture.md).
    pub fn new(nats: NatsAccess, node_name: String, address: String) -> ClusterConfig {
        ClusterConfig {
            nats,
            node_name,
            address,
            lease: Duration::from_secs(5),
            heartbeat: Duration::from_secs(1),
            relay_queue: 1024,
            join_within: Duration::ZERO,
            rebalance_at_once: 4,
        }
    }

    /// The same with a lease of `lease` (`--lease-seconds`), renewed five
    /// times in it, as the defaults are (5 s, renewed every second).
    pub fn with_lease(self, lease: Duration) -> ClusterConfig {
        ClusterConfig { lease, heartbeat: lease / 5, ..self }
    }
}

/// Why a node could not join.
#[derive(Debug, thiserror::Error)]
pub enum JoinError {
    /// NATS could not be reached.
    #[error("cannot connect to NATS at {servers}: {why}")]
    Nats {
        /// `--nats`, without its secrets.
        servers: String,
        /// Why.
        why: String,
    },
    /// The store refused.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// How long a leaving node waits for its tables to store what they have
/// and be released.
const HAND_OVER_WITHIN: Duration = Duration::from_secs(10);

/// The notice on `mj.<cluster>.orphans`: node `from` let tables go, for
/// node `to` to take (rebalancing), or for any (`None`).
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct TablesWait {
    from: String,
    #[serde(default)]
    to: Option<String>,
}

/// This node's part in the cluster.
#[derive(Debug)]
pub struct Cluster {
    node_id: String,
    config: ClusterConfig,
    bus: Bus,
    store: Store,
    lobby: Arc<Lobby>,
    owner: Arc<relay::Owner>,
    /// Stand-ins of the other nodes' tables, by table id.
    remotes: Mutex<HashMap<String, relay::Remote>>,
    /// The live members at the last heartbeat.
    members: Mutex<Vec<NodeRow>>,
    /// The nodes whose lease had lapsed at the last heartbeat (dead, or
    /// paused): their tables are about to move, and they are not asked.
    lapsed: Mutex<HashSet<String>>,
    /// Nodes that did not answer lately.
    unanswering: relay::Unanswering,
    /// `true` while this node holds a live lease.
    member: watch::Sender<bool>,
    /// Wakes the takeover at once (a node left).
    orphans: Notify,
    /// This node's tables on their way to another node (rebalancing), each
    /// at its hand's end.
    moving: Mutex<HashSet<String>>,
    /// When this node last sent a table to another (rebalancing).
    last_sent: Mutex<Option<Instant>>,
    /// When this node last joined again after its lease lapsed.
    rejoined: Mutex<Option<Instant>>,
    /// Held while taking tables over and while joining again, so that a
    /// takeover never runs with a lease renewed under it by a rejoin.
    taking: tokio::sync::Mutex<()>,
    leaving: AtomicBool,
    /// Ends the node's tasks once it has left.
    stop: tokio_util::sync::CancellationToken,
    /// The subjects of this cluster's nodes.
    shared: Shared,
    /// Sessions other nodes ended.
    revoked_elsewhere: tokio::sync::broadcast::Sender<crate::store::Revoked>,
}

impl Cluster {
    /// Connects to NATS, takes this node's lease and joins `lobby` to the
    /// cluster; then heartbeats, takes over tables nobody plays, and
    /// answers the other nodes until `shutdown`.
    pub async fn join(config: ClusterConfig, store: Store, lobby: Arc<Lobby>) -> Result<Arc<Cluster>, JoinError> {
        let node_id = uuid::Uuid::new_v4().simple().to_string();
        let servers = config.nats.shown();
        let unreachable = |why: String| JoinError::Nats { servers: servers.clone(), why };
        let addresses = config.nats.addresses().map_err(unreachable)?;
        // A NATS server starting beside this node is waited for, with
        // back-off; one that refuses (credentials, TLS) is not.
        let waiting_until = Instant::now() + config.join_within;
        let mut wait = Duration::from_millis(250);
        let nats = loop {
            let connected = config
                .nats
                .options()
                .await
                .map_err(unreachable)?
                .name(format!("mahjong-server {}", config.node_name))
                .request_timeout(Some(relay::ANSWER_WITHIN))
                .connect(addresses.clone())
                .await;
            match connected {
                Ok(nats) => break nats,
                Err(e) if nats_not_there_yet(&e) && Instant::now() + wait < waiting_until => {
                    tracing::warn!("NATS at {servers} does not answer yet ({e}): trying again in {wait:?}");
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(Duration::from_secs(8));
                }
                Err(e) => return Err(unreachable(e.to_string())),
            }
        };
        // The cluster's keys (the first node makes one): nothing is said on
        // NATS, or heard, without them.
        let keys = store.cluster_keys(&seal::new_secret()).await?;
        let bus = Bus::new(nats, Arc::new(Seal::new(&keys)));
        let subscribe = |subject: String| {
            let bus = bus.clone();
            let unreachable = &unreachable;
            async move { bus.subscribe(subject).await.map_err(|e| unreachable(e.to_string())) }
        };
        let shared = Shared::of(&store.cluster_id().await?);
        let commands = subscribe(relay::node_subject(&node_id)).await?;
        let listings = subscribe(shared.lobby.clone()).await?;
        let orphans = subscribe(shared.orphans.clone()).await?;
        let revoked = subscribe(shared.revoked.clone()).await?;
        store.join_cluster(&node_id, &config.node_name, &config.address, config.lease).await?;
        crate::metrics::cluster_member(true);
        crate::metrics::nats_connected(true);
        let owner = relay::Owner::new(bus.clone(), lobby.clone());
        let cluster = Arc::new(Cluster {
            node_id,
            config,
            bus,
            store,
            lobby: lobby.clone(),
            owner: owner.clone(),
            remotes: Mutex::default(),
            members: Mutex::default(),
            lapsed: Mutex::default(),
            unanswering: Default::default(),
            member: watch::Sender::new(true),
            orphans: Notify::new(),
            moving: Mutex::default(),
            last_sent: Mutex::default(),
            rejoined: Mutex::default(),
            taking: tokio::sync::Mutex::new(()),
            leaving: AtomicBool::new(false),
            stop: Default::default(),
            shared,
            revoked_elsewhere: tokio::sync::broadcast::channel(1024).0,
        });
        lobby.join(cluster.clone());
        tracing::info!(
            node = %cluster.config.node_name,
            id = %cluster.node_id,
            nats = %servers,
            key = ?cluster.bus.seal().sealing_key(),
            "joined the cluster"
        );
        cluster.spawn(owner.serve(commands));
        cluster.spawn(cluster.clone().answer_listings(listings));
        cluster.spawn(cluster.clone().hear_orphans(orphans));
        cluster.spawn(cluster.clone().hear_revoked(revoked));
        cluster.spawn(cluster.clone().keep_lease());
        cluster.spawn(cluster.clone().take_over_orphans());
        cluster.spawn(cluster.clone().rebalance());
        Ok(cluster)
    }

    /// Runs one of the node's tasks until it has left the cluster (not until
    /// the server's stop signal: the node hands its tables over first).
    fn spawn(&self, task: impl Future<Output = ()> + Send + 'static) {
        let stop = self.stop.clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = task => {}
                _ = stop.cancelled() => {}
            }
        });
    }

    /// This node's id (its lease's).
    pub fn node_id(&self) -> &str {
        &self.node_id
    }

    /// Whether this node holds a live lease now (`/readyz`).
    pub fn is_member(&self) -> bool {
        *self.member.borrow() && !self.leaving.load(Ordering::SeqCst)
    }

    /// Whether this node is connected to NATS now (`/readyz`): without it
    /// the other nodes' tables cannot be reached from here.
    pub fn nats_connected(&self) -> bool {
        self.bus.connected()
    }

    /// Every node with a lease row (`GET /api/v1/cluster`).
    pub async fn nodes(&self) -> Result<Vec<NodeRow>, StoreError> {
        self.store.nodes().await
    }

    // ----- ended sessions --------------------------------------------------------------

    /// Tells the other nodes that sessions ended here: the seat tokens given
    /// with them end at their tables too.
    pub async fn revoked(&self, revoked: &crate::store::Revoked) {
        let payload = serde_json::to_vec(&(&self.node_id, revoked)).unwrap_or_default();
        if let Err(e) = self.bus.publish(self.shared.revoked.clone(), &payload).await {
            tracing::warn!("cannot tell the other nodes of ended sessions: {e}");
        }
    }

    /// News of sessions other nodes ended: the connections made here with
    /// them close too.
    pub fn revocations_heard(&self) -> tokio::sync::broadcast::Receiver<crate::store::Revoked> {
        self.revoked_elsewhere.subscribe()
    }

    async fn hear_revoked(self: Arc<Self>, mut news: Heard) {
        while let Some(message) = news.next().await {
            let Ok((from, revoked)) = serde_json::from_slice::<(String, crate::store::Revoked)>(&message.payload)
            else {
                continue;
            };
            if from == self.node_id {
                continue;
            }
            let _ = self.revoked_elsewhere.send(revoked.clone());
            for table in self.lobby.handles() {
                let _ = table.send(TableCommand::EndSeatTokens(revoked.clone())).await;
            }
        }
    }

    // ----- placing new tables ------------------------------------------------------------

    /// The live node with the fewest tables, when it has fewer than this
    /// one (ties stay here), by their last heartbeats; counted as one more
    /// at once, so that a burst of new tables spreads.
    fn least_loaded(&self) -> Option<String> {
        let mine = self.store.fences().len() as i64;
        let mut members = self.members.lock().unwrap_or_else(|e| e.into_inner());
        let least = members
            .iter_mut()
            .filter(|n| n.id != self.node_id && n.state == "member" && n.expires_in_ms > 0)
            .min_by_key(|n| n.tables)?;
        if least.tables >= mine {
            return None;
        }
        least.tables += 1;
        Some(least.id.clone())
    }

    async fn place_table(&self, setup: TableSetup) -> Result<Result<TableHandle, OpenError>, TableSetup> {
        let Some(node) = self.least_loaded() else { return Err(setup) };
        match relay::open_on(&self.bus, &node, &setup).await {
            Ok(id) => {
                let mut remotes = self.remotes.lock().unwrap_or_else(|e| e.into_inner());
                let mut remote = self.stand_in(&id, node);
                let handle = remote.handle.clone();
                remote.held.push(setup.hold);
                remotes.insert(id, remote);
                Ok(Ok(handle))
            }
            // That node does not answer: the table opens here.
            Err(OpenError::Table(TableError::Recovering)) => Err(setup),
            Err(refused) => Ok(Err(refused)),
        }
    }

    fn stand_in(&self, id: &str, owner: String) -> relay::Remote {
        relay::Remote::start(
            self.bus.clone(),
            id.to_string(),
            owner,
            self.node_id.clone(),
            self.config.relay_queue,
            self.unanswering.clone(),
        )
    }

    // ----- the others' tables ---------------------------------------------------------------

    /// Ends the stand-ins of tables whose node `gone` says has let them go
    /// (the next request looks the table up again).
    fn forget_stand_ins(&self, gone: impl Fn(&str) -> bool) {
        let mut remotes = self.remotes.lock().unwrap_or_else(|e| e.into_inner());
        remotes.retain(|_, remote| {
            let keep = !gone(&remote.owner) && !remote.gone.is_cancelled();
            if !keep {
                remote.gone.cancel();
            }
            keep
        });
    }

    async fn find_elsewhere(&self, id: &str) -> Result<TableHandle, TableError> {
        if let Some(remote) = self.remotes.lock().unwrap_or_else(|e| e.into_inner()).get(id)
            && !remote.gone.is_cancelled()
        {
            return Ok(remote.handle.clone());
        }
        // Where the table is cannot be read (the database restarting, say):
        // not "no such table", which clients take as final, but "come back
        // shortly".
        let owner = self.store.owner(id).await.map_err(|e| {
            tracing::warn!(table = %id, "cannot read the table's owner: {e}");
            TableError::Recovering
        })?;
        match owner {
            None => Err(TableError::NoSuchTable(id.to_string())),
            // Nobody plays it now, or this node is bringing it back.
            Some(o) if o.node_id.is_none() || o.node_id.as_deref() == Some(&self.node_id) => {
                Err(TableError::Recovering)
            }
            Some(o) => {
                let owner = o.node_id.unwrap_or_default();
                // A node that did not answer within a lease, or whose lease
                // has lapsed (as of the last heartbeat), is dead or paused:
                // its tables are about to move. Not asked (an answer it
                // cannot give would be waited for).
                let silent = self.unanswering.lock().unwrap_or_else(|e| e.into_inner()).get(&owner).copied();
                let lapsed = self.lapsed.lock().unwrap_or_else(|e| e.into_inner()).contains(&owner);
                if lapsed || silent.is_some_and(|at| at.elapsed() < self.config.lease * 2) {
                    return Err(TableError::Recovering);
                }
                let mut remotes = self.remotes.lock().unwrap_or_else(|e| e.into_inner());
                let remote = remotes.entry(id.to_string()).or_insert_with(|| self.stand_in(id, owner.clone()));
                if remote.gone.is_cancelled() || remote.owner != owner {
                    remote.gone.cancel();
                    *remote = self.stand_in(id, owner);
                }
                Ok(remote.handle.clone())
            }
        }
    }

    /// Asks every other live node for its tables; waits for them all, at
    /// most [`LIST_WITHIN`].
    async fn list_others(&self) -> Vec<TableInfo> {
        // Only the members' answers count (each once).
        let others: HashSet<String> = self
            .members
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter(|n| n.id != self.node_id)
            .map(|n| n.id.clone())
            .collect();
        if others.is_empty() {
            return Vec::new();
        }
        let inbox = self.bus.new_inbox();
        let Ok(mut answers) = self.bus.subscribe(inbox.clone()).await else { return Vec::new() };
        if self.bus.publish_with_reply(self.shared.lobby.clone(), inbox, self.node_id.as_bytes()).await.is_err() {
            return Vec::new();
        }
        let mut tables = Vec::new();
        let mut heard = HashSet::new();
        let deadline = tokio::time::Instant::now() + LIST_WITHIN;
        while heard.len() < others.len() {
            let Ok(Some(answer)) = tokio::time::timeout_at(deadline, answers.next()).await else { break };
            match serde_json::from_slice::<(String, Vec<TableInfo>)>(&answer.payload) {
                Ok((node, listed)) => {
                    if others.contains(&node) && heard.insert(node) {
                        tables.extend(listed);
                    }
                }
                Err(e) => tracing::warn!("another node's tables do not read: {e}"),
            }
        }
        let _ = answers.unsubscribe().await;
        tables
    }

    /// Answers the other nodes' listings with this node's tables.
    async fn answer_listings(self: Arc<Self>, mut listings: Heard) {
        while let Some(ask) = listings.next().await {
            // Our own question: we list ourselves without it.
            if ask.payload == self.node_id.as_bytes() {
                continue;
            }
            let Some(reply) = ask.reply else { continue };
            let cluster = self.clone();
            tokio::spawn(async move {
                let tables = cluster.lobby.list_here().await;
                let payload = serde_json::to_vec(&(&cluster.node_id, tables)).unwrap_or_default();
                let _ = cluster.bus.publish(reply.to_string(), &payload).await;
            });
        }
    }
}

impl Elsewhere for Cluster {
    fn node_id(&self) -> String {
        self.node_id.clone()
    }

    fn node_name(&self) -> &str {
        &self.config.node_name
    }

    fn find<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<TableHandle, TableError>> {
        Box::pin(self.find_elsewhere(id))
    }

    fn others(&self) -> BoxFuture<'_, Vec<TableInfo>> {
        Box::pin(self.list_others())
    }

    fn place(&self, setup: TableSetup) -> BoxFuture<'_, Result<Result<TableHandle, OpenError>, TableSetup>> {
        Box::pin(self.place_table(setup))
    }
}

/// Whether a NATS connection failed for want of a server (not there yet,
/// or not answering), not because it refused this node.
fn nats_not_there_yet(e: &async_nats::ConnectError) -> bool {
    use async_nats::ConnectErrorKind as K;
    use std::io::ErrorKind as Io;
    match e.kind() {
        K::TimedOut | K::Dns | K::MaxReconnects => true,
        // An I/O failure of the connection itself, not of TLS (an unknown
        // certificate is an I/O error too, and final).
        K::Io => {
            let mut source = std::error::Error::source(e);
            while let Some(cause) = source {
                if let Some(io) = cause.downcast_ref::<std::io::Error>() {
                    return matches!(
                        io.kind(),
                        Io::ConnectionRefused
                            | Io::ConnectionReset
                            | Io::ConnectionAborted
                            | Io::NotConnected
                            | Io::TimedOut
                            | Io::AddrNotAvailable
                            | Io::BrokenPipe
                            | Io::UnexpectedEof
                    );
                }
                source = cause.source();
            }
            false
        }
        _ => false,
    }
}

/// The limits every node shares: counted in the cluster's database, so that
/// a client spreading its requests over the nodes holds no more than from
/// one (`limits::ledger`).
impl Ledger for Cluster {
    fn hold<'a>(&'a self, holder: &'a str, kind: &'static str, cap: u32) -> BoxFuture<'a, Result<bool, LedgerError>> {
        Box::pin(async move {
            self.store.hold_shared(&self.node_id, holder, kind, cap).await.map_err(|e| LedgerError(e.to_string()))
        })
    }

    fn release(&self, holder: String, kind: &'static str) {
        let (store, node) = (self.store.clone(), self.node_id.clone());
        tokio::spawn(async move {
            if let Err(e) = store.release_shared(&node, &holder, kind).await {
                // The row goes with this node's lease at the latest.
                tracing::warn!("cannot give a {kind} back in the cluster's limits: {e}");
            }
        });
    }

    fn pace<'a>(&'a self, key: &'a str, rate: Rate) -> BoxFuture<'a, Result<Option<Duration>, LedgerError>> {
        Box::pin(async move {
            self.store.pace_shared(key, rate.burst, rate.every).await.map_err(|e| LedgerError(e.to_string()))
        })
    }

    fn spend<'a>(&'a self, key: &'a str, rate: Rate) -> BoxFuture<'a, Result<Option<Duration>, LedgerError>> {
        Box::pin(async move {
            self.store.spend_shared(key, rate.burst, rate.every).await.map_err(|e| LedgerError(e.to_string()))
        })
    }

    fn strikes<'a>(&'a self, key: &'a str, rate: Rate) -> BoxFuture<'a, Result<f64, LedgerError>> {
        Box::pin(
            async move { self.store.strikes_shared(key, rate.every).await.map_err(|e| LedgerError(e.to_string())) },
        )
    }

    fn strike<'a>(&'a self, key: &'a str, rate: Rate) -> BoxFuture<'a, Result<(), LedgerError>> {
        Box::pin(async move { self.store.strike_shared(key, rate.every).await.map_err(|e| LedgerError(e.to_string())) })
    }

    fn nodes(&self) -> u32 {
        let members = self.members.lock().unwrap_or_else(|e| e.into_inner());
        u32::try_from(members.len()).unwrap_or(u32::MAX).max(1)
    }
}
