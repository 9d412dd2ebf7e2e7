//! Accounts and their sessions, as stored: `users` and `sessions`
//! (migrations `0002_accounts.sql`). The store keeps a password only as its
//! argon2id hash and a session token only as its SHA-256; hashing, checking
//! and every rule about who may do what live in [`crate::auth`].

use serde::{Deserialize, Serialize};
use sqlx::Row;
use sqlx::any::AnyRow;

use super::{Store, StoreError};
use crate::text::look_alike_key;

/// What an account may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Plays, opens tables, manages its own tables.
    Player,
    /// Also manages users, presets, the defaults and any table.
    Admin,
}

impl Role {
    /// The name stored and sent.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Player => "player",
            Role::Admin => "admin",
        }
    }

    /// The role of a stored or sent name.
    pub fn parse(name: &str) -> Option<Role> {
        match name {
            "player" => Some(Role::Player),
            "admin" => Some(Role::Admin),
            _ => None,
        }
    }
}

/// Sessions that just ended (announced by `auth::Accounts::revocations`),
/// for those holding something by them: WebSockets opened with a session,
/// and tables whose seat tokens a session was given. Here, below both.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Revoked {
    /// One session (logged out).
    Session(String),
    /// Every session of an account but one (a password change) or all.
    User {
        /// The account.
        user: i64,
        /// The session that lives on (its token's SHA-256).
        except: Option<String>,
    },
}

impl Revoked {
    /// Whether this ends the session `token_sha256` of `user`.
    pub fn ends(&self, user: i64, token_sha256: &str) -> bool {
        match self {
            Revoked::Session(sha) => sha == token_sha256,
            Revoked::User { user: u, except } => *u == user && except.as_deref() != Some(token_sha256),
        }
    }
}

/// One account, as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserRow {
    /// Its number.
    pub id: i64,
    /// Its name, as written when it registered.
    pub name: String,
    /// The argon2id hash of its password (a PHC string).
    pub password_hash: String,
    /// What it may do.
    pub role: Role,
    /// Disabled by an admin: it cannot log in, and its sessions are gone.
    pub disabled: bool,
    /// When it registered (µs since the epoch).
    pub created_us: i64,
}

/// One session, with its account, as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionRow {
    /// The account.
    pub user: UserRow,
    /// When the session began.
    pub created_us: i64,
    /// When it ends by itself.
    pub expires_us: i64,
    /// When it was last used (updated at most once a minute).
    pub last_used_us: i64,
}

/// The key a name is unique by: its lower-case form.
pub fn name_key(name: &str) -> String {
    name.to_lowercase()
}

const USER_COLUMNS: &str = "u.id, u.name, u.password_hash, u.role, u.disabled, u.created_us";

fn user(row: &AnyRow) -> Result<UserRow, StoreError> {
    let id: i64 = row.try_get("id").map_err(StoreError::Decode)?;
    let role: String = row.try_get("role").map_err(StoreError::Decode)?;
    let role = Role::parse(&role)
        .ok_or_else(|| StoreError::CorruptAccount { user: id, why: format!("'{role}' is not a role") })?;
    Ok(UserRow {
        id,
        name: row.try_get("name").map_err(StoreError::Decode)?,
        password_hash: row.try_get("password_hash").map_err(StoreError::Decode)?,
        role,
        disabled: row.try_get::<i64, _>("disabled").map_err(StoreError::Decode)? != 0,
        created_us: row.try_get("created_us").map_err(StoreError::Decode)?,
    })
}

impl Store {
    /// Stores a new account; `Ok(None)` if the name is taken (ignoring case).
    pub async fn create_user(
        &self,
        name: &str,
        password_hash: &str,
        role: Role,
        now_us: i64,
    ) -> Result<Option<UserRow>, StoreError> {
        let inserted = sqlx::query(
            "INSERT INTO users (name, name_key, password_hash, role, disabled, created_us, look_alike_key) \
             VALUES ($1, $2, $3, $4, 0, $5, $6) ON CONFLICT (name_key) DO NOTHING RETURNING id",
        )
        .bind(name)
        .bind(name_key(name))
        .bind(password_hash)
        .bind(role.as_str())
        .bind(now_us)
        .bind(look_alike_key(name))
        .fetch_optional(self.pool())
        .await?;
        let Some(row) = inserted else { return Ok(None) };
        let id: i64 = row.try_get("id").map_err(StoreError::Decode)?;
        Ok(Some(UserRow {
            id,
            name: name.to_string(),
            password_hash: password_hash.to_string(),
            role,
            disabled: false,
            created_us: now_us,
        }))
    }

    /// The account of a name (ignoring case).
    pub async fn user_by_name(&self, name: &str) -> Result<Option<UserRow>, StoreError> {
        let sql = format!("SELECT {USER_COLUMNS} FROM users u WHERE u.name_key = $1");
        let row = sqlx::query(&sql).bind(name_key(name)).fetch_optional(self.pool()).await?;
        row.as_ref().map(user).transpose()
    }

    /// An account whose name looks like `name` (the same
    /// [`look_alike_key`]), if any: the one registered first.
    pub async fn user_looking_like(&self, name: &str) -> Result<Option<UserRow>, StoreError> {
        let sql = format!("SELECT {USER_COLUMNS} FROM users u WHERE u.look_alike_key = $1 ORDER BY u.id LIMIT 1");
        let row = sqlx::query(&sql).bind(look_alike_key(name)).fetch_optional(self.pool()).await?;
        row.as_ref().map(user).transpose()
    }

    /// Gives the accounts made before look-alike keys were kept their key
    /// (once, when the store opens: the key is computed here, not in SQL).
    pub(super) async fn fill_look_alike_keys(&self) -> Result<(), StoreError> {
        let rows =
            sqlx::query("SELECT id, name FROM users WHERE look_alike_key IS NULL").fetch_all(self.pool()).await?;
        for row in rows {
            let id: i64 = row.try_get("id").map_err(StoreError::Decode)?;
            let name: String = row.try_get("name").map_err(StoreError::Decode)?;
            sqlx::query("UPDATE users SET look_alike_key = $1 WHERE id = $2")
                .bind(look_alike_key(&name))
                .bind(id)
                .execute(self.pool())
                .await?;
        }
        Ok(())
    }

    /// The account of a number.
    pub async fn user_by_id(&self, id: i64) -> Result<Option<UserRow>, StoreError> {
        let sql = format!("SELECT {USER_COLUMNS} FROM users u WHERE u.id = $1");
        let row = sqlx::query(&sql).bind(id).fetch_optional(self.pool()).await?;
        row.as_ref().map(user).transpose()
    }

    /// Accounts in order of number, `limit` of them after number `after`.
    pub async fn users(&self, after: i64, limit: i64) -> Result<Vec<UserRow>, StoreError> {
        let sql = format!("SELECT {USER_COLUMNS} FROM users u WHERE u.id > $1 ORDER BY u.id LIMIT $2");
        let rows = sqlx::query(&sql).bind(after).bind(limit).fetch_all(self.pool()).await?;
        rows.iter().map(user).collect()
    }

    /// How many accounts there are with `role` that are not disabled.
    pub async fn active_users_with_role(&self, role: Role) -> Result<i64, StoreError> {
        let row = sqlx::query("SELECT COUNT(*) AS n FROM users WHERE role = $1 AND disabled = 0")
            .bind(role.as_str())
            .fetch_one(self.pool())
            .await?;
        row.try_get("n").map_err(StoreError::Decode)
    }

    /// Replaces an account's password hash.
    pub async fn set_password_hash(&self, user: i64, password_hash: &str) -> Result<(), StoreError> {
        sqlx::query("UPDATE users SET password_hash = $1 WHERE id = $2")
            .bind(password_hash)
            .bind(user)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// Sets an account's role and whether it is disabled.
    pub async fn set_role_and_disabled(&self, user: i64, role: Role, disabled: bool) -> Result<(), StoreError> {
        sqlx::query("UPDATE users SET role = $1, disabled = $2 WHERE id = $3")
            .bind(role.as_str())
            .bind(i64::from(disabled))
            .bind(user)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// Stores a new session of `user` under its token's SHA-256.
    pub async fn create_session(
        &self,
        token_sha256: &str,
        user: i64,
        now_us: i64,
        expires_us: i64,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO sessions (token_sha256, user_id, created_us, expires_us, last_used_us) \
             VALUES ($1, $2, $3, $4, $3)",
        )
        .bind(token_sha256)
        .bind(user)
        .bind(now_us)
        .bind(expires_us)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// The session of a token's SHA-256 with its account, expired or not.
    pub async fn session(&self, token_sha256: &str) -> Result<Option<SessionRow>, StoreError> {
        let sql = format!(
            "SELECT {USER_COLUMNS}, s.created_us AS s_created, s.expires_us, s.last_used_us \
             FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.token_sha256 = $1"
        );
        let Some(row) = sqlx::query(&sql).bind(token_sha256).fetch_optional(self.pool()).await? else {
            return Ok(None);
        };
        Ok(Some(SessionRow {
            user: user(&row)?,
            created_us: row.try_get("s_created").map_err(StoreError::Decode)?,
            expires_us: row.try_get("expires_us").map_err(StoreError::Decode)?,
            last_used_us: row.try_get("last_used_us").map_err(StoreError::Decode)?,
        }))
    }

    /// Records that a session was used now.
    pub async fn touch_session(&self, token_sha256: &str, now_us: i64) -> Result<(), StoreError> {
        sqlx::query("UPDATE sessions SET last_used_us = $1 WHERE token_sha256 = $2")
            .bind(now_us)
            .bind(token_sha256)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// Ends one session.
    pub async fn delete_session(&self, token_sha256: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM sessions WHERE token_sha256 = $1").bind(token_sha256).execute(self.pool()).await?;
        Ok(())
    }

    /// Ends every session of `user` but the one of `keep`; how many ended.
    pub async fn delete_sessions_of(&self, user: i64, keep: Option<&str>) -> Result<u64, StoreError> {
        let done = sqlx::query("DELETE FROM sessions WHERE user_id = $1 AND token_sha256 <> $2")
            .bind(user)
            .bind(keep.unwrap_or(""))
            .execute(self.pool())
            .await?;
        Ok(done.rows_affected())
    }

    /// Forgets the sessions that have expired; how many.
    pub async fn delete_expired_sessions(&self, now_us: i64) -> Result<u64, StoreError> {
        let done = sqlx::query("DELETE FROM sessions WHERE expires_us <= $1").bind(now_us).execute(self.pool()).await?;
        Ok(done.rows_affected())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_revocation_names_what_it_ends() {
        let one = Revoked::Session("a".into());
        assert!(one.ends(1, "a") && !one.ends(1, "b"));
        let all_but = Revoked::User { user: 1, except: Some("a".into()) };
        assert!(!all_but.ends(1, "a") && all_but.ends(1, "b") && !all_but.ends(2, "b"));
    }
}
