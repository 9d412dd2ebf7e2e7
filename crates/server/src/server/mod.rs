//! The server's life: built from typed settings ([`ServerConfig`]), it
//! serves until its stop signal, then shuts down in order. The flags that
//! give the settings are the binary's (`mahjong-server serve`, `src/serve/`);
//! what the settings name is read and checked in [`settings`], the tasks that
//! run beside the tables are `housekeeping`.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use tokio::net::TcpListener;

use crate::auth::{AccountSettings, Accounts};
use crate::cluster::{Cluster, ClusterConfig};
use crate::game_file::{self, Checked, Source};
use crate::http::{AppState, Timeouts, router};
use crate::limits::{Limits, Quotas};
use crate::rules::wall::Wall;
use crate::shutdown::Shutdown;
use crate::store::Store;
use crate::table::lobby::Returning;
use crate::table::{Lobby, Rulebook, TableDefaults, TableLimits};

mod housekeeping;
pub mod settings;

pub use settings::{ConfigError, TableSources, check_cluster_database, preset_with_option_file};

/// A game file (or mj-server log) to load when the server starts
/// (`--load-game`), read and checked.
pub struct LoadGame {
    /// The file it was read from (for the log).
    pub path: PathBuf,
    /// The game, checked.
    pub checked: Checked,
    /// What kind of file it was.
    pub source: Source,
}

/// How the server serves: its time limits, its accounts, its policy, and
/// the classic protocol's listener if any.
#[derive(Debug, Default)]
pub struct Serving {
    /// What one client may hold and how fast it may ask.
    pub limits: Limits,
    /// `--classic-guest-passwords`: classic guests give a password.
    pub classic_guest_passwords: bool,
    /// `--allowed-origin`: other origins whose pages may open a WebSocket
    /// authenticated by the session cookie.
    pub allowed_origins: Vec<String>,
    /// The REST requests' time limits.
    pub timeouts: Timeouts,
    /// The accounts' hashing cost and rate limits.
    pub accounts: AccountSettings,
    /// `--require-accounts`: guests may not sit.
    pub require_accounts: bool,
    /// `--classic-listen`: where xmj and mj-player connect (bound already).
    pub classic: Option<crate::classic::ClassicListener>,
    /// `--classic-no-accounts`: classic logins naming an account are refused.
    pub classic_refuses_accounts: bool,
    /// `--metrics-token`: `/metrics` asks for it.
    pub metrics_token: Option<String>,
    /// `--metrics-listen`: `/metrics` is served there (bound already), and
    /// not beside the API.
    pub metrics_listener: Option<TcpListener>,
    /// `--trusted-proxy`, `--client-address-header`: whose forwarding header
    /// says the client's address.
    pub trusted_proxies: crate::http::forwarded::TrustedProxies,
}

/// What a server is made of: the listener it answers on (bound already:
/// `--listen 127.0.0.1:0` takes any free port, and [`Server::local_addr`]
/// says which), its store, the settings of its tables, how it serves, and a
/// game to load at start.
pub struct ServerConfig {
    /// Where it answers HTTP and WebSockets.
    pub listener: TcpListener,
    /// Its games.
    pub store: Store,
    /// The settings of new tables (from the flags).
    pub defaults: TableDefaults,
    /// Its limits, accounts, policy and classic listener.
    pub serving: Serving,
    /// `--load-game`.
    pub load: Option<LoadGame>,
    /// `--nats`: the cluster to join (Postgres only).
    pub cluster: Option<ClusterConfig>,
}

impl ServerConfig {
    /// A server on `listener` and `store` with every default.
    pub fn new(listener: TcpListener, store: Store) -> ServerConfig {
        ServerConfig {
            listener,
            store,
            defaults: TableDefaults::default(),
            serving: Serving::default(),
            load: None,
            cluster: None,
        }
    }
}

/// A server built and ready to answer: the binary's and every test's.
///
/// ```ignore
/// let server = Server::build(ServerConfig::new(listener, store)).await?;
/// let addr = server.local_addr();
/// let stop = server.shutdown(); // stop.stop() from anywhere ends it
/// server.run_until_stopped().await?;
/// ```
pub struct Server {
    listener: TcpListener,
    addr: SocketAddr,
    router: axum::Router,
    lobby: Arc<Lobby>,
    store: Store,
    quotas: Arc<Quotas>,
    shutdown: Shutdown,
    cluster: Option<Arc<Cluster>>,
    /// Whose forwarding header says the client's address.
    proxies: Arc<crate::http::forwarded::TrustedProxies>,
}

/// What [`Server::build`] has opened so far, released in one place
/// ([`Opened::release`]) when a later step fails: every step before the
/// server is whole returns its error with `?`, and `build` releases.
///
/// Not a guard that releases on drop: closing the store is async (the
/// journal commits what it was given, then the pool's connections close)
/// and `drop` cannot wait for it. A close spawned from `drop` would race the
/// runtime's end (`serve` returns at once on a failed build, and its runtime
/// goes with it), so the store might never be closed.
struct Opened {
    /// The store (fenced, in a cluster).
    store: Store,
    /// The lobby, once made: what tables it has end before the store closes.
    lobby: Option<Arc<Lobby>>,
}

impl Opened {
    /// Ends the lobby, if any, then closes the store.
    async fn release(self) {
        if let Some(lobby) = self.lobby {
            lobby.shutdown().await;
        }
        self.store.close().await;
    }
}

/// What [`Server::assemble`] has made by the time nothing more can fail.
struct Assembled {
    addr: SocketAddr,
    store: Store,
    lobby: Arc<Lobby>,
    rulebook: Arc<Rulebook>,
    quotas: Arc<Quotas>,
    accounts: Arc<Accounts>,
    cluster: Option<Arc<Cluster>>,
    returning: Returning,
    metrics: crate::metrics::Metrics,
    shutdown: Shutdown,
}

impl Server {
    /// Builds the server. First it reads which stored games come back as
    /// tables (every unfinished game, and those finished within the time a
    /// finished table stays) and where the numbering of new tables goes on,
    /// and the game to load is stored as a new game (a table at once if it
    /// is not over; the game's id and its people's new seat tokens are
    /// printed on standard output as one JSON line, never logged); then the
    /// stored games start coming back in the background (`/readyz` says how
    /// far; a table still on its way is answered `503 recovering`), and the
    /// classic listener and the housekeeping start. A failure ends what was
    /// started and closes the store.
    pub async fn build(config: ServerConfig) -> io::Result<Server> {
        let ServerConfig { listener, store, defaults, serving, load, cluster } = config;
        let mut opened = Opened { store, lobby: None };
        match Server::assemble(&mut opened, &listener, &defaults, &serving, load, cluster).await {
            Ok(assembled) => Ok(Server::start(listener, assembled, defaults, serving)),
            Err(e) => {
                opened.release().await;
                Err(e)
            }
        }
    }

    /// The steps of [`Server::build`] that may fail, in order; each puts
    /// what it opens in `opened`, for `build` to release on a failure.
    async fn assemble(
        opened: &mut Opened,
        listener: &TcpListener,
        defaults: &TableDefaults,
        serving: &Serving,
        load: Option<LoadGame>,
        cluster: Option<ClusterConfig>,
    ) -> io::Result<Assembled> {
        let addr = listener.local_addr()?;
        // Cluster mode: every write of a table is fenced by its epoch.
        if cluster.is_some() {
            check_cluster_database(opened.store.backend()).map_err(io::Error::other)?;
            opened.store = opened.store.clone().fenced();
        }
        let store = opened.store.clone();
        // First, so that the tables resumed below are counted.
        let metrics = crate::metrics::install();
        let shutdown = Shutdown::new();
        let rulebook = Arc::new(read_rules(&store, defaults).await?);
        let quotas = Quotas::new(serving.limits.clone());
        let lobby = Arc::new(Lobby::new(store.clone(), TableLimits::from(&serving.limits)).with_quotas(quotas.clone()));
        opened.lobby = Some(lobby.clone());
        let returning = returning(&lobby, defaults.seed, cluster.is_some()).await?;
        let cluster = match cluster {
            Some(config) => Some(
                Cluster::join(config, store.clone(), lobby.clone())
                    .await
                    .map_err(|e| io::Error::other(e.to_string()))?,
            ),
            None => None,
        };
        if let Some(load) = load {
            load_game(&lobby, load).await?;
        }
        let accounts = Arc::new(Accounts::new(store.clone(), serving.accounts).map_err(io::Error::other)?);
        Ok(Assembled { addr, store, lobby, rulebook, quotas, accounts, cluster, returning, metrics, shutdown })
    }

    /// The steps of [`Server::build`] that cannot fail: the limits shared
    /// over a cluster, recovery, the housekeeping and the listeners started,
    /// the router made.
    fn start(listener: TcpListener, assembled: Assembled, defaults: TableDefaults, serving: Serving) -> Server {
        let Assembled { addr, store, lobby, rulebook, quotas, accounts, cluster, returning, metrics, shutdown } =
            assembled;
        // In a cluster every limit counts over the nodes.
        if let Some(cluster) = &cluster {
            quotas.share(cluster.clone());
            accounts.share(cluster.clone());
        }
        // The stored games come back while the server answers (each table plays
        // as soon as it is back); `Lobby::shutdown` waits for what is under way.
        let recovering = lobby.clone();
        tokio::spawn(async move {
            recovering.recover(returning).await;
        });
        housekeeping::start(&accounts, &lobby, cluster.as_ref(), &shutdown);
        if let Some(listener) = serving.classic {
            let front =
                crate::classic::ClassicFront::new(lobby.clone(), rulebook.clone(), defaults.clone(), quotas.clone())
                    .with_accounts(accounts.clone(), serving.classic_refuses_accounts, serving.require_accounts)
                    .with_guest_passwords(serving.classic_guest_passwords);
            shutdown.spawn(listener.run(Arc::new(front), shutdown.clone()));
        }
        let state = AppState {
            lobby: lobby.clone(),
            defaults: Arc::new(defaults),
            rulebook,
            shutdown: shutdown.clone(),
            timeouts: serving.timeouts,
            accounts,
            require_accounts: serving.require_accounts,
            metrics,
            quotas: quotas.clone(),
            allowed_origins: Arc::new(serving.allowed_origins),
            cluster: cluster.clone(),
            metrics_access: Arc::new(crate::http::metrics::MetricsAccess::new(
                serving.metrics_token.as_deref(),
                serving.metrics_listener.is_some(),
            )),
        };
        if let Some(listener) = serving.metrics_listener {
            serve_metrics(listener, state.clone(), &shutdown);
        }
        let router = router(state);
        let proxies = Arc::new(serving.trusted_proxies);
        Server { listener, addr, router, lobby, store, quotas, shutdown, cluster, proxies }
    }

    /// Its part in a cluster (`--nats`), if any.
    pub fn cluster(&self) -> Option<&Arc<Cluster>> {
        self.cluster.as_ref()
    }

    /// The address it answers on (the port really bound, when asked for `:0`).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Its stop signal: [`Shutdown::stop`] ends [`Server::run_until_stopped`].
    pub fn shutdown(&self) -> Shutdown {
        self.shutdown.clone()
    }

    /// As [`Server::run_until_stopped`], and `stop` completing gives the
    /// signal too (the binary's SIGINT and SIGTERM, a test's end).
    pub async fn run_until(self, stop: impl Future<Output = ()> + Send + 'static) -> io::Result<()> {
        let shutdown = self.shutdown();
        let signal = shutdown.clone();
        // Not a task of the signal: it ends at the signal, whoever gives it.
        tokio::spawn(async move {
            tokio::select! {
                _ = stop => signal.stop(),
                _ = signal.stopped() => {}
            }
        });
        self.run_until_stopped().await
    }

    /// Logs `serving on http://ADDR` and answers until the stop signal; then
    /// it stops in order: the HTTP server stops (WebSockets close with
    /// 1001, open requests finish, classic sessions end), every task the
    /// signal tracks is waited for, recovery takes no more games, every
    /// table writes what it has pending and ends, then the store commits
    /// what it was given and closes.
    pub async fn run_until_stopped(self) -> io::Result<()> {
        let Server { listener, addr, router, lobby, store, quotas, shutdown, cluster, proxies } = self;
        tracing::info!("serving on http://{addr}");
        let served = crate::http::serve::serve(listener, router, quotas, proxies, shutdown.clone()).await;
        shutdown.stop();
        shutdown.wait().await;
        // In a cluster the tables go on elsewhere: handed over, not just stopped.
        if let Some(cluster) = cluster {
            cluster.leave().await;
        }
        lobby.shutdown().await;
        store.close().await;
        served
    }
}

/// The rules in force, read before any table resumes: flags that name no
/// preset stop the server before it does anything.
async fn read_rules(store: &Store, defaults: &TableDefaults) -> io::Result<Rulebook> {
    let rulebook =
        Rulebook::load(store.clone(), defaults.options.clone()).await.map_err(|e| io::Error::other(e.to_string()))?;
    if let Some(tiles) = &defaults.first_wall {
        // A table deals a shuffled wall when the wall file does not suit its
        // options; say so now if it does not suit the defaults in force.
        let rules = rulebook.current();
        if let Ok((_, options)) = rules.defaults.check(&rules.presets)
            && let Err(e) = Wall::from_tiles(tiles.clone(), &options)
        {
            tracing::warn!("the wall file does not suit the defaults in force ({e}): tables will shuffle");
        }
    }
    Ok(rulebook)
}

/// The stored games that come back as tables, read before anything is
/// answered, so that a request for a table on its way back is told so, and a
/// new table (the loaded game's too) neither takes a stored game's number
/// nor is taken for one to recover. In a cluster the stored games come back
/// by being taken over (`cluster`): the node joins, and takes its share.
async fn returning(lobby: &Lobby, seed: Option<u64>, in_cluster: bool) -> io::Result<Returning> {
    lobby.continue_numbering(seed).await.map_err(io::Error::other)?;
    if in_cluster {
        return Ok(Returning::default());
    }
    lobby.expect_returning().await.map_err(io::Error::other)
}

/// Loads `--load-game` into a new table (or only stores it, when it is over).
async fn load_game(lobby: &Lobby, load: LoadGame) -> io::Result<()> {
    let LoadGame { path, checked, source } = load;
    let imported = game_file::load(lobby, checked, source)
        .await
        .map_err(|e| io::Error::other(format!("cannot load the game of {}: {e}", path.display())))?;
    let tokens = imported.seats.len();
    tracing::info!(table = %imported.id, state = imported.state.as_str(), tokens, "loaded {}", path.display());
    // The new seat tokens are for the operator to hand to the players:
    // printed once on standard output, as `import` prints them, never
    // written to the log.
    println!("{}", serde_json::to_string(&imported).unwrap_or_default());
    Ok(())
}

/// Serves `/metrics` alone on `listener` (`--metrics-listen`) until the stop signal.
fn serve_metrics(listener: TcpListener, state: AppState, shutdown: &Shutdown) {
    let metrics = crate::http::metrics::own_listener(state);
    let stopping = shutdown.clone();
    shutdown.spawn(async move {
        let served = axum::serve(listener, metrics).with_graceful_shutdown(async move { stopping.stopped().await });
        if let Err(e) = served.await {
            tracing::error!("the metrics' listener failed: {e}");
        }
    });
}

/// Completes on SIGINT (Ctrl-C) or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = terminate => {},
    }
}
