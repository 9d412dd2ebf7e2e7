//! How a node reaches NATS: the servers, the node's credentials (a user
//! and password, a token, an nkey seed or a credentials file) and TLS (a CA
//! to trust, a client certificate). Secrets are never shown: [`NatsAccess`]
//! prints as its servers alone, and every error names the servers that way.
//!
//! Credentials come from `--nats`'s URL (`nats://USER:PASSWORD@HOST:PORT`,
//! or `nats://TOKEN@HOST:PORT`, NATS's own conventions) or from the flags
//! and environment variables of `serve` (docs/operations.md, "A safe
//! cluster"): the environment keeps them out of the process list.

use std::path::PathBuf;
use std::time::Duration;

/// The node's credentials for NATS.
#[derive(Clone, Default)]
pub enum NatsAuth {
    /// None: a NATS without authentication (only on a private network).
    #[default]
    None,
    /// A user and its password.
    UserPassword {
        /// The user.
        user: String,
        /// Its password.
        password: String,
    },
    /// A token.
    Token(String),
    /// An nkey seed (`SU...`), read from a file.
    Nkey(String),
    /// A credentials file (a user JWT and its nkey seed, as `nsc` writes it).
    CredsFile(PathBuf),
}

impl NatsAuth {
    /// Its kind, for the log.
    fn kind(&self) -> &'static str {
        match self {
            NatsAuth::None => "none",
            NatsAuth::UserPassword { .. } => "user and password",
            NatsAuth::Token(_) => "token",
            NatsAuth::Nkey(_) => "nkey",
            NatsAuth::CredsFile(_) => "credentials file",
        }
    }
}

/// Where NATS is and how to get in.
#[derive(Clone, Default)]
pub struct NatsAccess {
    /// The servers' URLs, without credentials.
    pub servers: Vec<String>,
    /// The credentials.
    pub auth: NatsAuth,
    /// A CA whose certificates the servers' are checked against (TLS required).
    pub tls_ca: Option<PathBuf>,
    /// A client certificate and its key, for servers that ask for one.
    pub tls_client: Option<(PathBuf, PathBuf)>,
    /// TLS is required (a `tls://` URL, or a CA given).
    pub require_tls: bool,
}

impl std::fmt::Debug for NatsAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.shown())
    }
}

/// The flags and variables beside `--nats` (docs/operations.md).
#[derive(Clone, Debug, Default)]
pub struct NatsFlags {
    /// `--nats-user`.
    pub user: Option<String>,
    /// `--nats-password`.
    pub password: Option<String>,
    /// `--nats-token`.
    pub token: Option<String>,
    /// `--nats-nkey`: a file holding an nkey seed.
    pub nkey_file: Option<PathBuf>,
    /// `--nats-creds`.
    pub creds_file: Option<PathBuf>,
    /// `--nats-ca`.
    pub ca: Option<PathBuf>,
    /// `--nats-cert`.
    pub cert: Option<PathBuf>,
    /// `--nats-key`.
    pub key: Option<PathBuf>,
}

/// Percent-decoding of a URL's user or password (`p%40ss` is `p@ss`).
fn decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(byte) = text.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(byte);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl NatsAccess {
    /// Reads `--nats` (one URL, or several comma-separated) and the flags
    /// beside it. Only one kind of credentials may be given.
    pub fn new(urls: &str, flags: NatsFlags) -> Result<NatsAccess, String> {
        let mut servers = Vec::new();
        let mut from_url = NatsAuth::None;
        let mut require_tls = false;
        for text in urls.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            let with_scheme = if text.contains("://") { text.to_string() } else { format!("nats://{text}") };
            let mut url = url::Url::parse(&with_scheme).map_err(|e| {
                format!("--nats: '{}' is not a NATS URL ({e})", shown_url(&with_scheme).unwrap_or_default())
            })?;
            match url.scheme() {
                "nats" => {}
                "tls" => require_tls = true,
                other => return Err(format!("--nats: the scheme {other}:// is not NATS's (nats:// or tls://)")),
            }
            if url.host_str().is_none_or(str::is_empty) {
                return Err("--nats: the URL names no host".into());
            }
            let auth = match (url.username(), url.password()) {
                ("", None) => NatsAuth::None,
                (user, Some(password)) => NatsAuth::UserPassword { user: decoded(user), password: decoded(password) },
                (token, None) => NatsAuth::Token(decoded(token)),
            };
            if !matches!(auth, NatsAuth::None) {
                from_url = auth;
            }
            let _ = url.set_username("");
            let _ = url.set_password(None);
            servers.push(url.to_string().trim_end_matches('/').to_string());
        }
        if servers.is_empty() {
            return Err("--nats: give a NATS server's URL, e.g. nats://127.0.0.1:4222".into());
        }
        let mut given = Vec::new();
        if !matches!(from_url, NatsAuth::None) {
            given.push(from_url);
        }
        match (flags.user, flags.password) {
            (Some(user), Some(password)) => given.push(NatsAuth::UserPassword { user, password }),
            (None, None) => {}
            _ => return Err("--nats-user and --nats-password go together".into()),
        }
        if let Some(token) = flags.token {
            given.push(NatsAuth::Token(token));
        }
        if let Some(path) = flags.nkey_file {
            let seed = std::fs::read_to_string(&path)
                .map_err(|e| format!("--nats-nkey: cannot read {}: {e}", path.display()))?;
            let seed = seed.lines().map(str::trim).find(|l| l.starts_with('S')).unwrap_or_default().to_string();
            if seed.is_empty() {
                return Err(format!("--nats-nkey: {} holds no nkey seed (a line SU...)", path.display()));
            }
            given.push(NatsAuth::Nkey(seed));
        }
        if let Some(path) = flags.creds_file {
            if !path.is_file() {
                return Err(format!("--nats-creds: {} is not a file", path.display()));
            }
            given.push(NatsAuth::CredsFile(path));
        }
        if given.len() > 1 {
            let kinds: Vec<&str> = given.iter().map(NatsAuth::kind).collect();
            return Err(format!("give NATS one kind of credentials, not {}", kinds.join(" and ")));
        }
        let tls_client = match (flags.cert, flags.key) {
            (Some(cert), Some(key)) => Some((cert, key)),
            (None, None) => None,
            _ => return Err("--nats-cert and --nats-key go together".into()),
        };
        for path in flags.ca.iter().chain(tls_client.iter().flat_map(|(c, k)| [c, k])) {
            if !path.is_file() {
                return Err(format!("{} is not a file", path.display()));
            }
        }
        Ok(NatsAccess {
            servers,
            auth: given.pop().unwrap_or_default(),
            require_tls: require_tls || flags.ca.is_some() || tls_client.is_some(),
            tls_ca: flags.ca,
            tls_client,
        })
    }

    /// The servers and how the node gets in, without any secret (for logs
    /// and errors).
    pub fn shown(&self) -> String {
        let tls = if self.require_tls { ", TLS" } else { "" };
        format!("{} (credentials: {}{tls})", self.servers.join(","), self.auth.kind())
    }

    /// The client's options for these credentials and TLS.
    pub async fn options(&self) -> Result<async_nats::ConnectOptions, String> {
        let options = match &self.auth {
            NatsAuth::None => async_nats::ConnectOptions::new(),
            NatsAuth::UserPassword { user, password } => {
                async_nats::ConnectOptions::with_user_and_password(user.clone(), password.clone())
            }
            NatsAuth::Token(token) => async_nats::ConnectOptions::with_token(token.clone()),
            NatsAuth::Nkey(seed) => async_nats::ConnectOptions::with_nkey(seed.clone()),
            NatsAuth::CredsFile(path) => async_nats::ConnectOptions::with_credentials_file(path)
                .await
                .map_err(|e| format!("--nats-creds: {}: {e}", path.display()))?,
        };
        let mut options = options.require_tls(self.require_tls);
        if let Some(ca) = &self.tls_ca {
            options = options.add_root_certificates(ca.clone());
        }
        if let Some((cert, key)) = &self.tls_client {
            options = options.add_client_certificate(cert.clone(), key.clone());
        }
        Ok(options.connection_timeout(Duration::from_secs(5)))
    }

    /// The servers, as the client takes them.
    pub fn addresses(&self) -> Result<Vec<async_nats::ServerAddr>, String> {
        self.servers.iter().map(|s| s.parse().map_err(|e| format!("--nats: {s}: {e}"))).collect()
    }
}

/// A URL with its user and password taken out.
fn shown_url(text: &str) -> Option<String> {
    let (scheme, rest) = text.split_once("://")?;
    let rest = rest.rsplit_once('@').map_or(rest, |(_, host)| host);
    Some(format!("{scheme}://{rest}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_in_the_url_are_read_and_never_shown() {
        let access = NatsAccess::new("nats://mj:s%40cret@127.0.0.1:4222", NatsFlags::default()).unwrap();
        assert!(
            matches!(&access.auth, NatsAuth::UserPassword { user, password } if user == "mj" && password == "s@cret")
        );
        assert_eq!(access.servers, ["nats://127.0.0.1:4222"]);
        let shown = format!("{access:?} {}", access.shown());
        assert!(!shown.contains("s@cret") && !shown.contains("s%40cret"), "{shown}");
        let token = NatsAccess::new("nats://T0KEN@nats:4222,nats://other:4222", NatsFlags::default()).unwrap();
        assert!(matches!(&token.auth, NatsAuth::Token(t) if t == "T0KEN"));
        assert_eq!(token.servers.len(), 2);
        assert!(!token.shown().contains("T0KEN"));
        let tls = NatsAccess::new("tls://nats:4222", NatsFlags::default()).unwrap();
        assert!(tls.require_tls);
    }

    #[test]
    fn flags_give_credentials_but_only_one_kind() {
        let flags = NatsFlags { user: Some("mj".into()), password: Some("pw".into()), ..NatsFlags::default() };
        let access = NatsAccess::new("nats://127.0.0.1:4222", flags.clone()).unwrap();
        assert!(matches!(access.auth, NatsAuth::UserPassword { .. }));
        let both = NatsFlags { token: Some("t".into()), ..flags };
        let refused = NatsAccess::new("nats://127.0.0.1:4222", both).unwrap_err();
        assert!(refused.contains("one kind") && !refused.contains("pw"), "{refused}");
        let half = NatsFlags { user: Some("mj".into()), ..NatsFlags::default() };
        assert!(NatsAccess::new("nats://127.0.0.1:4222", half).is_err());
        let bad = NatsAccess::new("http://mj:secret@host:1", NatsFlags::default()).unwrap_err();
        assert!(!bad.contains("secret"), "{bad}");
        let unparsable = NatsAccess::new("nats://mj:secret@[bad", NatsFlags::default()).unwrap_err();
        assert!(!unparsable.contains("secret"), "{unparsable}");
    }
}
