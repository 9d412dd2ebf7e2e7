//! The classic front-end: mj-server's text-line protocol (version 1110) on a
//! TCP or Unix socket, so that the seed's own programs (xmj, mj-player) play
//! at our tables beside WebSocket players and robots.
//!
//! A classic connection is one more client of a table actor: it sits down
//! and subscribes like a WebSocket does, and its [`session`] translates both
//! ways: the player's lines become the table's requests (moves, `ready`,
//! pauses, options, chat), and the table's stream becomes mj-server's
//! controller messages ([`crate::protocol::printer`]). The table does not know the protocol;
//! the one thing a classic table does differently (it starts by itself once
//! four players are there, and pauses for `ready` before each hand's play) is
//! its setting [`crate::table::TableSettings::classic`].
//!
//! Player ids: mj-server numbers the players of its one game 1 to 4. Here
//! every table a classic client meets gets a number `k` (from 0, in the
//! order they are met) and its seat `s` is player `10k + s + 1`: the first
//! classic table's players are 1 to 4, as mj-server's, and an id names one
//! seat of one table, so that a client reconnecting with its last id finds it.
//!
//! Ids are easy to guess, so an id alone never gives a seat back: the
//! client must show the seat's [`Credential`] (an account's password; a
//! guest's password, or else the address it played from).

pub mod lines;
mod session;

use std::collections::HashMap;
use std::sync::Arc;

use sha2::{Digest, Sha256};
use tokio::sync::Mutex;

use crate::auth::Accounts;
use crate::limits::{AddressKey, Client, Held, Paced, Quotas};
use crate::table::{Lobby, NewTable, Rulebook, TableCommand, TableDefaults, TableError, TableHandle};

pub use session::serve_connection;

/// Player ids of table `k` are `IDS_PER_TABLE * k + 1` to `IDS_PER_TABLE * k + 4`.
pub const IDS_PER_TABLE: i32 = 10;

/// What a classic connection needs of the server.
pub struct ClassicFront {
    lobby: Arc<Lobby>,
    rulebook: Arc<Rulebook>,
    defaults: TableDefaults,
    rooms: Mutex<Rooms>,
    /// The accounts: a `Connect` naming one must give its password.
    accounts: Option<Arc<Accounts>>,
    /// Refuse classic logins that name an account (`--classic-no-accounts`).
    refuse_accounts: bool,
    /// Only accounts may sit (`--require-accounts`).
    require_accounts: bool,
    /// A guest is asked for a password when it first connects
    /// (`--classic-guest-passwords`), which alone then gives its seat back.
    guest_passwords: bool,
    /// What a client may hold (seats; its connections are counted by the listener).
    quotas: Arc<Quotas>,
    /// Salts the guests' passwords' hashes (kept in memory only).
    salt: [u8; 16],
}

/// What a classic client must show to come back to its seat by its id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Credential {
    /// An account's seat: the account's password.
    Account(i64),
    /// A guest's seat: the password it gave when it first connected (its
    /// salted SHA-256), or, without one, the address it played from (IPv6
    /// by /64).
    Guest {
        /// The address it first connected from.
        address: AddressKey,
        /// Its password's hash, if it gave one.
        password: Option<[u8; 32]>,
    },
}

/// A seat taken through the classic front-end, for reconnection by id.
#[derive(Clone, Debug)]
struct ClassicSeat {
    table: String,
    token: String,
    credential: Credential,
}

/// The tables classic clients have met, and their seats.
#[derive(Default)]
struct Rooms {
    /// Numbers by table id (the next table met takes the next number).
    numbers: HashMap<String, i32>,
    /// The table opened for classic clients that is filling up.
    filling: Option<TableHandle>,
    /// Seats taken through the classic front-end, by player id.
    seats: HashMap<i32, ClassicSeat>,
}

/// A seat taken for a classic connection.
pub struct Seated {
    /// The table.
    pub table: TableHandle,
    /// Player id of the table's seat 0, less one.
    pub base: i32,
    /// The seat.
    pub seat: u8,
    /// The seat's token.
    pub token: String,
    /// What gives the seat back by its id.
    pub credential: Credential,
}

/// Whether a classic player must log in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Login {
    /// No account has its name: it plays as a guest.
    Guest,
    /// Its name is an account's: it must give the password.
    Password,
}

/// Why a classic client could not be seated: the `ConnectReply` reason.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Refused(pub String);

impl ClassicFront {
    /// The front-end over the server's tables, its clients held to `quotas`.
    pub fn new(
        lobby: Arc<Lobby>,
        rulebook: Arc<Rulebook>,
        defaults: TableDefaults,
        quotas: Arc<Quotas>,
    ) -> ClassicFront {
        use rand::RngCore;
        let mut salt = [0u8; 16];
        rand::rngs::OsRng.fill_bytes(&mut salt);
        ClassicFront {
            lobby,
            rulebook,
            defaults,
            rooms: Mutex::new(Rooms::default()),
            accounts: None,
            refuse_accounts: false,
            require_accounts: false,
            guest_passwords: false,
            quotas,
            salt,
        }
    }

    /// Guests are asked for a password when they first connect
    /// (`--classic-guest-passwords`); their seat is then given back by it,
    /// from any address.
    pub fn with_guest_passwords(mut self, on: bool) -> ClassicFront {
        self.guest_passwords = on;
        self
    }

    /// Whether guests are asked for a password.
    pub fn asks_guests_for_passwords(&self) -> bool {
        self.guest_passwords
    }

    /// The quotas classic clients are held to.
    pub fn quotas(&self) -> &Arc<Quotas> {
        &self.quotas
    }

    /// A guest's password as kept (salted SHA-256; never the password).
    pub fn guest_password_hash(&self, password: &str) -> [u8; 32] {
        Sha256::new().chain_update(self.salt).chain_update(password.as_bytes()).finalize().into()
    }

    /// The same, where a `Connect` naming an account must give the account's
    /// password (mj-server's `--auth-basic`), or is refused when
    /// `refuse_accounts`; with `require_accounts` only accounts may play.
    pub fn with_accounts(
        mut self,
        accounts: Arc<Accounts>,
        refuse_accounts: bool,
        require_accounts: bool,
    ) -> ClassicFront {
        self.accounts = Some(accounts);
        self.refuse_accounts = refuse_accounts;
        self.require_accounts = require_accounts;
        self
    }

    /// What a player's name (already by the text policy) asks of the
    /// accounts. A guest may not take a name that looks like an account's
    /// or a robot's.
    pub async fn login_needed(&self, name: &str) -> Result<Login, Refused> {
        let Some(accounts) = &self.accounts else {
            return crate::text::person_name(name).map(|_| Login::Guest).map_err(|e| Refused(e.to_string()));
        };
        match accounts.exists(name).await {
            Ok(false) if self.require_accounts => Err(Refused(format!(
                "only registered accounts may play here, and {name} is not one: register in the browser first"
            ))),
            Ok(false) => accounts.guest_name(name).await.map(|()| Login::Guest).map_err(|e| Refused(e.to_string())),
            Ok(true) if self.refuse_accounts => Err(Refused(format!(
                "{name} is a registered account, and this server does not let accounts play over the classic \
                 protocol (its passwords travel in clear): play in the browser, or choose another name"
            ))),
            Ok(true) => Ok(Login::Password),
            Err(e) => Err(Refused(format!("cannot check the accounts now: {e}"))),
        }
    }

    /// The account `name` if `password` is its password (limited as logins are).
    pub async fn log_in(&self, addr: std::net::IpAddr, name: &str, password: &str) -> Result<i64, Refused> {
        let Some(accounts) = &self.accounts else { return Err(Refused("no accounts here".into())) };
        match accounts.check_password(addr, name, password).await {
            Ok(user) => Ok(user.id),
            Err(crate::auth::AuthError::WrongCredentials) => Err(Refused("Authentication failure".into())),
            Err(e) => Err(Refused(e.to_string())),
        }
    }

    /// Whether a guess at a guest's seat password is `right`, limited as
    /// logins are (`what`: the seat).
    pub async fn judge_guess(&self, addr: std::net::IpAddr, what: &str, right: bool) -> Result<bool, Refused> {
        let Some(accounts) = &self.accounts else { return Ok(right) };
        accounts.judge_guess(addr, what, right).await.map_err(|e| Refused(e.to_string()))
    }

    /// Whether `password` is account `account`'s (limited as logins are).
    pub async fn log_in_as(&self, addr: std::net::IpAddr, account: i64, password: &str) -> Result<(), Refused> {
        let Some(accounts) = &self.accounts else { return Err(Refused("no accounts here".into())) };
        let user = accounts.user(account).await.map_err(|_| Refused("Authentication failure".into()))?;
        match self.log_in(addr, &user.name, password).await? {
            id if id == account => Ok(()),
            _ => Err(Refused("Authentication failure".into())),
        }
    }

    /// Seats a newly connected classic player from `peer` (as account
    /// `account`, if it logged in; a guest's seat is given back by
    /// `guest_password`, or else by the address): at the table it names
    /// (`NAME@TABLE-ID`), else at the classic table filling up, else at a
    /// new classic table. The seat counts against the player's quota.
    pub async fn seat(
        &self,
        name: &str,
        table: Option<&str>,
        peer: std::net::IpAddr,
        account: Option<i64>,
        guest_password: Option<&str>,
    ) -> Result<Seated, Refused> {
        let credential = match account {
            Some(a) => Credential::Account(a),
            None => Credential::Guest {
                address: AddressKey::of(peer),
                password: guest_password.map(|p| self.guest_password_hash(p)),
            },
        };
        let client = Client { address: peer, account, admin: false };
        let who = Who { name, account, client: &client, credential: &credential, quotas: &self.quotas };
        let mut rooms = self.rooms.lock().await;
        if let Some(table) = table {
            let handle = self.lobby.find(table).await.map_err(|e| Refused(e.to_string()))?;
            let options = handle.ask(|reply| TableCommand::Options { reply }).await.map_err(refused)?;
            if options.tile_swap || options.animals {
                return Err(Refused(
                    "that table plays East's tile swap or animal tiles, which classic clients cannot play".into(),
                ));
            }
            return rooms.sit(&handle, &who).await.map_err(Refused::from);
        }
        if let Some(handle) = rooms.filling.clone() {
            match rooms.sit(&handle, &who).await {
                // A name the table refuses is refused anywhere.
                Err(Sit::Name(why)) => return Err(Refused(why)),
                // Full, started or closed: the next classic table.
                Err(Sit::Table(_)) => rooms.filling = None,
                Ok(seated) => return Ok(seated),
            }
        }
        let handle = self.open_table(rooms.numbers.len()).await?;
        rooms.filling = Some(handle.clone());
        rooms.sit(&handle, &who).await.map_err(Refused::from)
    }

    /// The seat a player id stands for, if a classic client took it (it is
    /// given back only to a client that shows its credential).
    pub async fn seat_of_id(&self, id: i32) -> Option<Seated> {
        let rooms = self.rooms.lock().await;
        let ClassicSeat { table, token, credential } = rooms.seats.get(&id)?.clone();
        let number = (id - 1) / IDS_PER_TABLE;
        let table = self.lobby.find(&table).await.ok()?;
        let seat = ((id - 1) % IDS_PER_TABLE) as u8;
        Some(Seated { table, base: number * IDS_PER_TABLE, seat, token, credential })
    }

    async fn open_table(&self, number: usize) -> Result<TableHandle, Refused> {
        let mut options = serde_json::Map::new();
        // Classic clients know neither the tile swap nor animal tiles.
        options.insert("TileSwap".into(), false.into());
        options.insert("Animals".into(), false.into());
        let request = NewTable {
            name: Some(format!("Classic table {}", number + 1)),
            options,
            classic: true,
            ..NewTable::default()
        };
        let setup = self
            .defaults
            .setup(&self.rulebook.current(), request, || self.lobby.next_number())
            .map_err(|e| Refused(format!("cannot open a table: {e}")))?;
        self.lobby.open(setup).await.map_err(|e| Refused(format!("cannot open a table: {e}")))
    }
}

/// Who sits down through the classic front-end.
struct Who<'a> {
    name: &'a str,
    account: Option<i64>,
    client: &'a Client,
    credential: &'a Credential,
    quotas: &'a Arc<Quotas>,
}

impl Rooms {
    async fn sit(&mut self, handle: &TableHandle, who: &Who<'_>) -> Result<Seated, Sit> {
        let hold = who.quotas.hold(who.client, Held::Seat).await.map_err(|r| Sit::Name(r.message))?;
        who.quotas.pace(who.client, Paced::SeatsTaken).await.map_err(|r| Sit::Name(r.message))?;
        let (name, account) = (who.name.to_string(), who.account);
        let asked = handle
            .ask(|reply| TableCommand::Sit { name, seat: None, account, session: None, hold, reply })
            .await
            .and_then(|r| r)
            .map_err(|e| match e {
                TableError::Invalid(why) => Sit::Name(why),
                e => Sit::Table(e),
            })?;
        let next = i32::try_from(self.numbers.len()).unwrap_or(i32::MAX / IDS_PER_TABLE - 1);
        let number = *self.numbers.entry(handle.id.clone()).or_insert(next);
        let base = number * IDS_PER_TABLE;
        let id = base + i32::from(asked.seat) + 1;
        let credential = who.credential.clone();
        let kept = ClassicSeat { table: handle.id.clone(), token: asked.token.clone(), credential: credential.clone() };
        self.seats.insert(id, kept);
        Ok(Seated { table: handle.clone(), base, seat: asked.seat, token: asked.token, credential })
    }
}

/// Why a table did not seat a player.
enum Sit {
    /// The name is refused.
    Name(String),
    /// The table is full, playing or closed.
    Table(TableError),
}

impl From<Sit> for Refused {
    fn from(e: Sit) -> Refused {
        match e {
            Sit::Name(why) => Refused(why),
            Sit::Table(e) => refused(e),
        }
    }
}

fn refused(e: TableError) -> Refused {
    Refused(match e {
        TableError::Full => "Already have players".into(),
        TableError::NotNow(_) => "the game at that table has started".into(),
        e => e.to_string(),
    })
}

/// The classic protocol's listening socket: TCP (`host:port`), or a Unix
/// socket's path when the address has no colon, as mj-server's `--server`.
#[derive(Debug)]
pub enum ClassicListener {
    /// A TCP listener.
    Tcp(tokio::net::TcpListener),
    /// A Unix socket listener.
    Unix(tokio::net::UnixListener),
}

impl ClassicListener {
    /// Binds `address`. A Unix socket file left by an earlier run is replaced.
    pub async fn bind(address: &str) -> std::io::Result<ClassicListener> {
        if address.contains(':') {
            return Ok(ClassicListener::Tcp(tokio::net::TcpListener::bind(address).await?));
        }
        let stale = std::fs::symlink_metadata(address).is_ok_and(|m| {
            use std::os::unix::fs::FileTypeExt;
            m.file_type().is_socket()
        });
        if stale {
            std::fs::remove_file(address)?;
        }
        Ok(ClassicListener::Unix(tokio::net::UnixListener::bind(address)?))
    }

    /// Where it listens, for the log (and for tests that bound port 0).
    pub fn local_addr(&self) -> String {
        match self {
            ClassicListener::Tcp(l) => l.local_addr().map_or_else(|e| e.to_string(), |a| a.to_string()),
            ClassicListener::Unix(l) => {
                l.local_addr().ok().and_then(|a| a.as_pathname().map(|p| p.display().to_string())).unwrap_or_default()
            }
        }
    }

    /// Accepts connections until the `stop` signal; each is served by its
    /// own task, at most [`MAX_CONNECTIONS`] at once, and as many from one
    /// address as the limits allow (`--max-classic-per-address`). A
    /// connection over a limit is told why and closed at once. At the
    /// signal every session ends (its socket closes), and the server waits
    /// for them: they are tasks of the signal.
    pub async fn run(self, front: Arc<ClassicFront>, stop: crate::shutdown::Shutdown) {
        tracing::info!("classic protocol listening on {}", self.local_addr());
        let limit = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
        loop {
            let accepted = tokio::select! {
                _ = stop.stopped() => return,
                accepted = self.accept() => accepted,
            };
            let stream = match accepted {
                Ok(stream) => stream,
                Err(e) => {
                    // Out of file descriptors, say: wait rather than spin.
                    tracing::warn!("classic listener: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                    continue;
                }
            };
            let Ok(permit) = limit.clone().try_acquire_owned() else {
                tracing::warn!("classic listener: {MAX_CONNECTIONS} connections already open; one refused");
                continue;
            };
            let peer = match &stream {
                Accepted::Tcp(s) => s.peer_addr().map_or(LOCAL, |a| a.ip()),
                Accepted::Unix(_) => LOCAL,
            };
            let held = match front.quotas().hold(&Client::guest(peer), Held::Classic).await {
                Ok(held) => held,
                Err(refusal) => {
                    tokio::spawn(session::refuse(stream, refusal.message));
                    continue;
                }
            };
            let (front, stopping) = (front.clone(), stop.clone());
            stop.spawn(async move {
                let session = async move {
                    match stream {
                        Accepted::Tcp(s) => serve_connection(s, peer, front).await,
                        Accepted::Unix(s) => serve_connection(s, LOCAL, front).await,
                    }
                };
                tokio::select! {
                    _ = session => {}
                    _ = stopping.stopped() => {}
                }
                drop((permit, held));
            });
        }
    }

    async fn accept(&self) -> std::io::Result<Accepted> {
        Ok(match self {
            ClassicListener::Tcp(l) => {
                let (stream, _) = l.accept().await?;
                keep_alive(&stream);
                Accepted::Tcp(stream)
            }
            ClassicListener::Unix(l) => Accepted::Unix(l.accept().await?.0),
        })
    }
}

/// A connection accepted on the classic listener.
pub(crate) enum Accepted {
    Tcp(tokio::net::TcpStream),
    Unix(tokio::net::UnixStream),
}

/// The address a Unix socket's clients are counted under (for the limits on logins).
const LOCAL: std::net::IpAddr = std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);

/// Classic connections open at once, at most.
pub const MAX_CONNECTIONS: usize = 20_000;

/// TCP keep-alive, so that a peer gone without a word (a half-open
/// connection) is noticed within about two minutes and its seat freed.
fn keep_alive(stream: &tokio::net::TcpStream) {
    let probes = socket2::TcpKeepalive::new()
        .with_time(std::time::Duration::from_secs(60))
        .with_interval(std::time::Duration::from_secs(10))
        .with_retries(6);
    if let Err(e) = socket2::SockRef::from(stream).set_tcp_keepalive(&probes) {
        tracing::debug!("classic listener: keep-alive not set: {e}");
    }
    let _ = stream.set_nodelay(true);
}
