//! Accounts, sessions and roles: who a request comes from and what it may do.
//!
//! An account has a name (unique ignoring case), an argon2id password hash
//! ([`password`]) and a role ([`Role`]). Logging in makes a session: an
//! opaque token of 32 random bytes (`mjs_` and 64 hex digits), given to the
//! client once and stored only as its SHA-256, with its creation, expiry and
//! last use. Every request looks its session up in the store, so logging out,
//! changing a password or disabling an account takes effect at once; open
//! WebSockets hear of it through [`Accounts::revocations`]. Logins and
//! registrations are rate-limited ([`crate::limits::rate`]).
//!
//! Nothing here logs a password or a token, nor stores either in clear.

pub mod password;

use std::net::IpAddr;
use std::time::Duration;

use tokio::sync::broadcast;

use crate::limits::AddressKey;
use crate::limits::ledger::Ledger;
use crate::limits::rate::{Limit, Rate, Strikes};
pub use crate::store::{Revoked, Role};
use crate::store::{Store, StoreError, UserRow, now_us, token_sha256};
use password::{Cost, HashError, Passwords};

/// The prefix of a session token, which tells it from a seat token.
pub const TOKEN_PREFIX: &str = "mjs_";

/// The settings of the accounts service.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AccountSettings {
    /// argon2id's cost.
    pub cost: Cost,
    /// How many hashes may run at once (each takes one core).
    pub concurrent_hashes: usize,
    /// Login and registration attempts per client address (IPv6 by /64):
    /// what one address may make the server hash.
    pub per_address: Rate,
    /// Failed logins of one name from one address: an address that guesses
    /// a name's password is slowed down, not the name's owner elsewhere.
    pub per_address_and_name: Rate,
    /// Failed logins of one name from anywhere. Once a name has this many,
    /// it is under attack: each address that has failed for it recently
    /// must wait for its strike to drain (one guess per address and
    /// `per_address_and_name.every`), while an address that has not (its
    /// owner's) still logs in at once.
    pub per_name: Rate,
    /// Accounts registered per client address.
    pub registrations: Rate,
    /// How long a session lasts.
    pub session_lifetime: Duration,
}

impl Default for AccountSettings {
    fn default() -> AccountSettings {
        AccountSettings {
            cost: Cost::default(),
            // One core of two for hashing, the other for the tables.
            concurrent_hashes: 1,
            per_address: Rate { burst: 20, every: Duration::from_secs(3) },
            per_address_and_name: Rate { burst: 5, every: Duration::from_secs(60) },
            per_name: Rate { burst: 50, every: Duration::from_secs(10) },
            registrations: Rate { burst: 5, every: Duration::from_secs(600) },
            session_lifetime: Duration::from_secs(30 * 24 * 3600),
        }
    }
}

/// Why an account operation was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// The name is not a valid account name.
    #[error("{0}")]
    BadName(String),
    /// The new password is too short or too long.
    #[error("{0}")]
    BadPassword(String),
    /// The name is taken (ignoring case).
    #[error("the name '{0}' is taken")]
    NameTaken(String),
    /// The name looks like an account's (or a robot's).
    #[error("the name '{name}' looks too much like {like}: choose another")]
    LooksLike {
        /// The name refused.
        name: String,
        /// What it looks like ("the account 'alice'").
        like: String,
    },
    /// Wrong name or password (which of the two is not told).
    #[error("wrong name or password")]
    WrongCredentials,
    /// The account is disabled (told to a session, never to a login: a
    /// login with the right password answers as a wrong one).
    #[error("this account is disabled")]
    Disabled,
    /// No session, or one that has expired or ended.
    #[error("{0}")]
    Unauthenticated(&'static str),
    /// A guest asked for an account's name.
    #[error("the name '{0}' belongs to an account: log in to use it, or choose another")]
    NameRegistered(String),
    /// No such account.
    #[error("no account {0}")]
    NoSuchUser(i64),
    /// The change would leave no admin who can log in.
    #[error("this would leave the server without an enabled admin")]
    LastAdmin,
    /// Too many attempts; try again after the duration.
    #[error("too many attempts: try again in {} s", .0.as_secs().max(1))]
    Limited(Duration),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Too many passwords are being checked: try again in a second.
    #[error("{0}")]
    Busy(HashError),
    /// Hashing failed.
    #[error(transparent)]
    Hash(HashError),
}

impl From<HashError> for AuthError {
    fn from(e: HashError) -> AuthError {
        match e {
            HashError::Busy => AuthError::Busy(e),
            e => AuthError::Hash(e),
        }
    }
}

/// A session just made: its token is told to the client once, here.
#[derive(Clone, Debug)]
pub struct NewSession {
    /// The token, in clear: never logged nor stored.
    pub token: String,
    /// The account.
    pub user: UserRow,
    /// When the session ends by itself (µs since the epoch).
    pub expires_us: i64,
}

/// A request's session, found valid.
#[derive(Clone, Debug)]
pub struct Authenticated {
    /// The account.
    pub user: UserRow,
    /// The session token's SHA-256 (its key in the store).
    pub token_sha256: String,
    /// When it ends by itself.
    pub expires_us: i64,
}

/// A session is marked as used at most this often (a write per request
/// would cost more than it tells).
const TOUCH_EVERY_US: i64 = 60_000_000;

/// The accounts service: one per server.
#[derive(Debug)]
pub struct Accounts {
    store: Store,
    passwords: Passwords,
    per_address: Limit<AddressKey>,
    per_address_and_name: Strikes<(AddressKey, String)>,
    per_name: Strikes<String>,
    /// Failed password changes, per account (its owner, logged in).
    password_changes: Strikes<i64>,
    registrations: Limit<AddressKey>,
    lifetime_us: i64,
    /// Every ended session, here or (in a cluster) at another node: what
    /// the connections made with a session watch.
    revoked: broadcast::Sender<Revoked>,
    /// The sessions ended here, for the tables and the other nodes.
    revoked_here: broadcast::Sender<Revoked>,
    /// The rates of the limits above.
    settings: AccountSettings,
    /// Cluster mode: the limits count over every node ([`Accounts::share`]).
    ledger: std::sync::OnceLock<std::sync::Arc<dyn Ledger>>,
}

/// Who guesses at what: the keys of a guess's strikes.
struct Guess {
    address: AddressKey,
    /// What is guessed at (a name's key, a seat).
    key: String,
}

impl Accounts {
    /// The accounts kept in `store`.
    pub fn new(store: Store, settings: AccountSettings) -> Result<Accounts, HashError> {
        Ok(Accounts {
            store,
            passwords: Passwords::new(settings.cost, settings.concurrent_hashes)?,
            per_address: Limit::new(settings.per_address),
            per_address_and_name: Strikes::new(settings.per_address_and_name),
            per_name: Strikes::new(settings.per_name),
            password_changes: Strikes::new(settings.per_address_and_name),
            registrations: Limit::new(settings.registrations),
            lifetime_us: i64::try_from(settings.session_lifetime.as_micros()).unwrap_or(i64::MAX),
            revoked: broadcast::channel(1024).0,
            revoked_here: broadcast::channel(1024).0,
            settings,
            ledger: std::sync::OnceLock::new(),
        })
    }

    /// Cluster mode: from now on the logins', registrations' and guesses'
    /// limits count over every node, in `ledger`.
    pub fn share(&self, ledger: std::sync::Arc<dyn Ledger>) {
        let _ = self.ledger.set(ledger);
    }

    /// One attempt at `what` from `address` at `rate`, in the cluster's
    /// ledger if shared (else, or while it is away, in `local`).
    async fn pace(
        &self,
        local: &Limit<AddressKey>,
        rate: Rate,
        what: &str,
        address: AddressKey,
    ) -> Result<(), AuthError> {
        if let Some(ledger) = self.ledger.get() {
            match ledger.pace(&format!("{what} address:{address}"), rate).await {
                Ok(None) => return Ok(()),
                Ok(Some(wait)) => return Err(AuthError::Limited(wait)),
                Err(e) => tracing::warn!("{e}"),
            }
        }
        local.check(&address).map_err(AuthError::Limited)
    }

    /// The strikes against `key` in `local` (or the cluster's ledger).
    async fn strikes<K: std::hash::Hash + Eq>(&self, local: &Strikes<K>, key: &K, shared: &str) -> f64 {
        if let Some(ledger) = self.ledger.get() {
            match ledger.strikes(shared, local.rate()).await {
                Ok(level) => return level,
                Err(e) => tracing::warn!("{e}"),
            }
        }
        local.level(key)
    }

    /// One more strike against `key` in `local` (and the cluster's ledger).
    async fn strike<K: std::hash::Hash + Eq>(&self, local: &Strikes<K>, key: K, shared: &str) {
        if let Some(ledger) = self.ledger.get()
            && let Err(e) = ledger.strike(shared, local.rate()).await
        {
            tracing::warn!("{e}");
        }
        local.add(key);
    }

    /// Whether a guess may be made: an address with too many failures for
    /// what it guesses at waits; once that has too many from anywhere, an
    /// address with any recent failure for it waits too.
    async fn may_guess(&self, guess: &Guess) -> Result<(), AuthError> {
        let (key, address) = (&guess.key, guess.address);
        let name_level = self.strikes(&self.per_name, key, &format!("guessed {key}")).await;
        let pair_rate = self.per_address_and_name.rate();
        let allowed = if name_level + 1.0 > f64::from(self.per_name.rate().burst) { 1 } else { pair_rate.burst };
        let pair = (address, key.clone());
        let pair_level = self.strikes(&self.per_address_and_name, &pair, &format!("guessed {key} by {address}")).await;
        let over = pair_level + 1.0 - f64::from(allowed.max(1));
        if over > 0.0 {
            return Err(AuthError::Limited(pair_rate.every.mul_f64(over) + Duration::from_millis(1)));
        }
        Ok(())
    }

    /// A wrong guess: a strike against the address and what it guessed at,
    /// and against what it guessed at.
    async fn missed(&self, guess: Guess) {
        let Guess { address, key } = guess;
        self.strike(&self.per_address_and_name, (address, key.clone()), &format!("guessed {key} by {address}")).await;
        self.strike(&self.per_name, key.clone(), &format!("guessed {key}")).await;
    }

    /// Creates an account (the command line's `admin create-user`, and
    /// registration). The name must not look like an account's or a robot's.
    pub async fn create(&self, name: &str, password: &str, role: Role) -> Result<UserRow, AuthError> {
        let name = person_name(name)?;
        password::check_new_password(password).map_err(AuthError::BadPassword)?;
        self.create_checked(name, password, role).await
    }

    /// Creates an account whose name and password have been checked.
    async fn create_checked(&self, name: String, password: &str, role: Role) -> Result<UserRow, AuthError> {
        self.name_free(&name, |_| AuthError::NameTaken(name.clone())).await?;
        let hash = self.passwords.hash(password).await?;
        // Two registrations of one name at once: the store's unique key decides.
        self.store.create_user(&name, &hash, role, now_us()).await?.ok_or(AuthError::NameTaken(name))
    }

    /// Registers a player from `addr` and logs it in.
    pub async fn register(&self, addr: IpAddr, name: &str, password: &str) -> Result<NewSession, AuthError> {
        let address = AddressKey::of(addr);
        self.pace(&self.per_address, self.settings.per_address, "login", address).await?;
        let name = person_name(name)?;
        password::check_new_password(password).map_err(AuthError::BadPassword)?;
        // Counted once it could make an account: a refused name costs nothing.
        self.pace(&self.registrations, self.settings.registrations, "registration", address).await?;
        let user = self.create_checked(name, password, Role::Player).await?;
        tracing::info!(user = user.id, "registered");
        self.new_session(user).await
    }

    /// Logs `name` in from `addr`.
    pub async fn login(&self, addr: IpAddr, name: &str, password: &str) -> Result<NewSession, AuthError> {
        let user = self.check_password(addr, name, password).await?;
        tracing::info!(user = user.id, "logged in");
        self.new_session(user).await
    }

    /// The account `name` if `password` is its password, checked as a login
    /// is (the same limits, as slow for an unknown name), without opening a
    /// session: for the classic protocol, whose clients send the password
    /// on each connection.
    ///
    /// The limits slow the guesser, not the owner: every attempt counts
    /// against its address ([`AccountSettings::per_address`]); a failure
    /// counts against the address and the name together, and against the
    /// name. An address with too many failures for the name waits; once the
    /// name itself has too many (it is under attack from many addresses),
    /// an address with any recent failure for it waits too, while one with
    /// none (the owner's, usually) still tries at once. A disabled account
    /// answers as a wrong password does, so that a guesser learns nothing.
    pub async fn check_password(&self, addr: IpAddr, name: &str, password: &str) -> Result<UserRow, AuthError> {
        let address = AddressKey::of(addr);
        self.pace(&self.per_address, self.settings.per_address, "login", address).await?;
        // Names are read as they are shown (trimmed, invisible edges gone),
        // the one way every front-end reads them.
        let name = crate::text::player_name(name).unwrap_or_default();
        let guess = Guess { address, key: crate::store::accounts::name_key(&name) };
        self.may_guess(&guess).await?;
        let user = if name.is_empty() { None } else { self.store.user_by_name(&name).await? };
        // An unknown name is checked against a dummy hash: as slow as a known one.
        let matched = self.passwords.verify(user.as_ref().map(|u| u.password_hash.as_str()), password).await?;
        match user.filter(|u| matched && !u.disabled) {
            Some(user) => Ok(user),
            None => {
                if !matched {
                    self.missed(guess).await;
                }
                tracing::info!("login refused: wrong name or password");
                Err(AuthError::WrongCredentials)
            }
        }
    }

    /// Judges a guess at a secret other than an account's password (a
    /// classic guest's seat password), limited exactly as logins are: per
    /// address, and per address and `what` is guessed at (an address that
    /// guesses is slowed, not the owner elsewhere). `right`: whether the
    /// guess is right; a wrong one is a strike.
    pub async fn judge_guess(&self, addr: IpAddr, what: &str, right: bool) -> Result<bool, AuthError> {
        let address = AddressKey::of(addr);
        self.pace(&self.per_address, self.settings.per_address, "login", address).await?;
        // A key no account name can have (names have no control characters).
        let guess = Guess { address, key: format!("\u{1}{what}") };
        self.may_guess(&guess).await?;
        if !right {
            self.missed(guess).await;
        }
        Ok(right)
    }

    /// Whether an account has this name.
    pub async fn exists(&self, name: &str) -> Result<bool, AuthError> {
        Ok(self.store.user_by_name(name).await?.is_some())
    }

    /// Whether a guest may play under `name` (already by the text policy):
    /// not an account's name, nor one that looks like it, nor a robot's.
    pub async fn guest_name(&self, name: &str) -> Result<(), AuthError> {
        person_name(name)?;
        self.name_free(name, |owner| AuthError::NameRegistered(owner.name)).await
    }

    /// Refuses `name` if it is an account's (`taken` says how) or looks like
    /// one's (`LooksLike`).
    async fn name_free(&self, name: &str, taken: impl FnOnce(UserRow) -> AuthError) -> Result<(), AuthError> {
        if let Some(owner) = self.store.user_by_name(name).await? {
            return Err(taken(owner));
        }
        if let Some(twin) = self.store.user_looking_like(name).await? {
            return Err(AuthError::LooksLike { name: name.to_string(), like: format!("the account '{}'", twin.name) });
        }
        Ok(())
    }

    async fn new_session(&self, user: UserRow) -> Result<NewSession, AuthError> {
        use rand::RngCore;
        let mut bytes = [0u8; 32];
        rand::rngs::OsRng.fill_bytes(&mut bytes);
        let token: String =
            std::iter::once(TOKEN_PREFIX.to_string()).chain(bytes.iter().map(|b| format!("{b:02x}"))).collect();
        let now = now_us();
        let expires_us = now.saturating_add(self.lifetime_us);
        self.store.create_session(&token_sha256(&token), user.id, now, expires_us).await?;
        Ok(NewSession { token, user, expires_us })
    }

    /// The session of `token`, if it is one that lives and its account is
    /// enabled.
    pub async fn authenticate(&self, token: &str) -> Result<Authenticated, AuthError> {
        if !is_session_token(token) {
            return Err(AuthError::Unauthenticated("that is not a session token"));
        }
        let sha = token_sha256(token);
        let Some(session) = self.store.session(&sha).await? else {
            return Err(AuthError::Unauthenticated("the session has ended: log in again"));
        };
        let now = now_us();
        if session.expires_us <= now {
            self.store.delete_session(&sha).await?;
            return Err(AuthError::Unauthenticated("the session has expired: log in again"));
        }
        if session.user.disabled {
            return Err(AuthError::Disabled);
        }
        if now - session.last_used_us >= TOUCH_EVERY_US {
            self.store.touch_session(&sha, now).await?;
        }
        Ok(Authenticated { user: session.user, token_sha256: sha, expires_us: session.expires_us })
    }

    /// Whether a session still lives (for a WebSocket that missed news).
    pub async fn session_lives(&self, token_sha256: &str) -> Result<bool, AuthError> {
        Ok(self.store.session(token_sha256).await?.is_some_and(|s| !s.user.disabled && s.expires_us > now_us()))
    }

    /// Ends this session.
    pub async fn logout(&self, session: &Authenticated) -> Result<(), AuthError> {
        self.store.delete_session(&session.token_sha256).await?;
        self.announce(Revoked::Session(session.token_sha256.clone()));
        Ok(())
    }

    /// Ends every session of the account, this one too; how many.
    pub async fn logout_everywhere(&self, session: &Authenticated) -> Result<u64, AuthError> {
        self.end_sessions_of(session.user.id, None).await
    }

    /// Changes the account's password after checking the current one; every
    /// other session of the account ends.
    pub async fn change_password(&self, session: &Authenticated, current: &str, new: &str) -> Result<(), AuthError> {
        password::check_new_password(new).map_err(AuthError::BadPassword)?;
        let user = self.store.user_by_id(session.user.id).await?.ok_or(AuthError::NoSuchUser(session.user.id))?;
        // Limited by the account, on its own failures: not by the name's
        // logins, which anyone can spend.
        let shared = format!("password change account:{}", user.id);
        let level = self.strikes(&self.password_changes, &user.id, &shared).await;
        let rate = self.password_changes.rate();
        let over = level + 1.0 - f64::from(rate.burst.max(1));
        if over > 0.0 {
            return Err(AuthError::Limited(rate.every.mul_f64(over) + Duration::from_millis(1)));
        }
        if !self.passwords.verify(Some(&user.password_hash), current).await? {
            self.strike(&self.password_changes, user.id, &shared).await;
            return Err(AuthError::WrongCredentials);
        }
        let hash = self.passwords.hash(new).await?;
        self.store.set_password_hash(user.id, &hash).await?;
        self.end_sessions_of(user.id, Some(&session.token_sha256)).await?;
        tracing::info!(user = user.id, "password changed");
        Ok(())
    }

    /// Accounts in order of number, after number `after`.
    pub async fn users(&self, after: i64, limit: i64) -> Result<Vec<UserRow>, AuthError> {
        Ok(self.store.users(after, limit).await?)
    }

    /// An account.
    pub async fn user(&self, id: i64) -> Result<UserRow, AuthError> {
        self.store.user_by_id(id).await?.ok_or(AuthError::NoSuchUser(id))
    }

    /// Sets an account's role or whether it is disabled (an admin's act).
    /// Disabling ends its sessions. The last enabled admin can be neither
    /// demoted nor disabled, so the server always has one.
    pub async fn update(&self, id: i64, role: Option<Role>, disabled: Option<bool>) -> Result<UserRow, AuthError> {
        let before = self.user(id).await?;
        let role = role.unwrap_or(before.role);
        let disabled = disabled.unwrap_or(before.disabled);
        let stays_admin = role == Role::Admin && !disabled;
        if before.role == Role::Admin
            && !before.disabled
            && !stays_admin
            && self.store.active_users_with_role(Role::Admin).await? <= 1
        {
            return Err(AuthError::LastAdmin);
        }
        self.store.set_role_and_disabled(id, role, disabled).await?;
        if disabled && !before.disabled {
            self.end_sessions_of(id, None).await?;
        }
        Ok(UserRow { role, disabled, ..before })
    }

    /// Ends every session of an account but `except`; how many.
    pub async fn end_sessions_of(&self, user: i64, except: Option<&str>) -> Result<u64, AuthError> {
        let ended = self.store.delete_sessions_of(user, except).await?;
        self.announce(Revoked::User { user, except: except.map(str::to_string) });
        Ok(ended)
    }

    fn announce(&self, revoked: Revoked) {
        let _ = self.revoked.send(revoked.clone());
        let _ = self.revoked_here.send(revoked);
    }

    /// News of ended sessions, here and at the other nodes of a cluster.
    pub fn revocations(&self) -> broadcast::Receiver<Revoked> {
        self.revoked.subscribe()
    }

    /// News of the sessions ended here (for the tables, and for the other
    /// nodes to hear).
    pub fn revocations_here(&self) -> broadcast::Receiver<Revoked> {
        self.revoked_here.subscribe()
    }

    /// Sessions another node ended (cluster mode): the connections made here
    /// with them close too.
    pub fn revoked_elsewhere(&self, revoked: Revoked) {
        let _ = self.revoked.send(revoked);
    }

    /// Forgets expired sessions; how many.
    pub async fn forget_expired(&self) -> Result<u64, AuthError> {
        Ok(self.store.delete_expired_sessions(now_us()).await?)
    }
}

/// A person's name by the text policy; one that looks like a robot's is
/// refused as a look-alike.
fn person_name(name: &str) -> Result<String, AuthError> {
    use crate::text::{self, TextError};
    text::person_name(name).map_err(|e| match e {
        TextError::PosesAsRobot { found, .. } => {
            AuthError::LooksLike { name: found, like: "a robot's name (Robot 1 to Robot 4)".into() }
        }
        e => AuthError::BadName(e.to_string()),
    })
}

/// Whether `token` has a session token's shape (a seat token does not).
pub fn is_session_token(token: &str) -> bool {
    token.strip_prefix(TOKEN_PREFIX).is_some_and(|hex| hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_tokens_are_told_from_seat_tokens() {
        assert!(is_session_token(&format!("mjs_{}", "ab".repeat(32))));
        assert!(!is_session_token(&"ab".repeat(16)));
        assert!(!is_session_token(&format!("mjs_{}", "zz".repeat(32))));
        assert!(!is_session_token("mjs_"));
    }
}
