//! Admin option management, as stored (migrations `0003_options.sql`): the
//! custom presets, the defaults of new tables as an admin last set them, and
//! the audit log of every admin change.
//!
//! Every change is written in one transaction with its audit entry: a change
//! is never stored unlogged, nor logged unstored. What is valid (a preset's
//! options, a name) is not decided here but in `rules::preset_book` and
//! `table::rulebook`; the store keeps what it is given and reads it back.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::any::AnyRow;
use sqlx::{Any, Row, Transaction};

use super::dates::format_time;
use super::{Store, StoreError};
use crate::rules::preset_book::{CustomPreset, DefaultOptions, OptionMap, name_key};

/// Who made a change (an admin), or kept a game (a player): an account.
/// (Not the table's actor, `table::actor`.)
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Author {
    /// The account's number.
    pub user_id: i64,
    /// Its name when it made the change.
    pub name: String,
}

/// A change to record in the audit log.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    /// When it was made (µs since the epoch).
    pub at_us: i64,
    /// What was done: `defaults.set`, `defaults.reset`, `preset.create`,
    /// `preset.update`, `preset.delete`, `user.update`, `user.end_sessions`,
    /// `table.close`, `game.import`, `game.import_mj_server`,
    /// `robot_budget.set`, `robot_budget.reset`.
    pub action: &'static str,
    /// What was changed: `defaults`, `preset/NAME`, `user/ID`, `table/ID`,
    /// `game/ID`, `robot_budget`.
    pub target: String,
    /// The thing before the change (`None`: it did not exist).
    pub before: Option<Value>,
    /// The thing after the change (`None`: it no longer exists).
    pub after: Option<Value>,
}

/// One entry of the audit log, as the API shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AuditEntry {
    /// Its number: entries are numbered in the order they were made.
    pub id: i64,
    /// When the change was made, `YYYY-MM-DDTHH:MM:SSZ`.
    pub at: String,
    /// The same, in microseconds since the epoch.
    pub at_us: i64,
    /// Who made it.
    pub actor: Author,
    /// What was done (see [`Change::action`]).
    pub action: String,
    /// What was changed (see [`Change::target`]).
    pub target: String,
    /// The thing before (`null`: it did not exist).
    #[schema(value_type = Option<Object>)]
    pub before: Option<Value>,
    /// The thing after (`null`: it no longer exists).
    #[schema(value_type = Option<Object>)]
    pub after: Option<Value>,
}

/// The defaults an admin stored, with who stored them and when.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredDefaults {
    /// The defaults.
    pub defaults: DefaultOptions,
    /// When they were stored.
    pub updated_us: i64,
    /// Who stored them.
    pub updated_by: Author,
}

/// Reads a stored JSON object.
fn object(what: &str, text: &str) -> Result<OptionMap, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::CorruptRow { what: what.to_string(), why: e.to_string() })
}

/// A JSON value to store.
fn text(value: &impl Serialize) -> Result<String, StoreError> {
    // Maps and plain values always serialise; this cannot fail in practice.
    serde_json::to_string(value)
        .map_err(|e| StoreError::CorruptRow { what: "value to store".into(), why: e.to_string() })
}

fn preset_of(row: &AnyRow) -> Result<CustomPreset, StoreError> {
    let name: String = row.try_get("name")?;
    let options: String = row.try_get("options")?;
    Ok(CustomPreset {
        options: object(&format!("preset '{name}'"), &options)?,
        description: row.try_get("description")?,
        based_on: row.try_get("based_on")?,
        created_us: row.try_get("created_us")?,
        updated_us: row.try_get("updated_us")?,
        name,
    })
}

impl Store {
    /// Every custom preset, in the order of their names ignoring case. A row
    /// that does not read is an `Err` in its place (the others still read),
    /// so that one damaged preset does not keep the server from starting.
    pub async fn custom_presets(&self) -> Result<Vec<Result<CustomPreset, StoreError>>, StoreError> {
        let rows = sqlx::query(
            "SELECT name, description, based_on, options, created_us, updated_us FROM presets ORDER BY name_key",
        )
        .fetch_all(self.pool())
        .await?;
        Ok(rows.iter().map(preset_of).collect())
    }

    /// The defaults an admin last stored, if any.
    pub async fn stored_defaults(&self) -> Result<Option<StoredDefaults>, StoreError> {
        let row = sqlx::query(
            "SELECT preset, options, updated_us, updated_by_id, updated_by_name FROM option_defaults WHERE id = 1",
        )
        .fetch_optional(self.pool())
        .await?;
        let Some(row) = row else { return Ok(None) };
        let options: String = row.try_get("options")?;
        Ok(Some(StoredDefaults {
            defaults: DefaultOptions { preset: row.try_get("preset")?, options: object("defaults", &options)? },
            updated_us: row.try_get("updated_us")?,
            updated_by: Author { user_id: row.try_get("updated_by_id")?, name: row.try_get("updated_by_name")? },
        }))
    }

    /// Stores a new custom preset and logs `change`; `false` (and nothing
    /// stored) if a preset of that name, ignoring case, is already stored.
    pub async fn create_preset(
        &self,
        preset: &CustomPreset,
        actor: &Author,
        change: &Change,
    ) -> Result<bool, StoreError> {
        let mut tx = self.pool().begin().await?;
        let done = sqlx::query(
            "INSERT INTO presets (name_key, name, description, based_on, options, created_us, updated_us) \
             VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (name_key) DO NOTHING",
        )
        .bind(name_key(&preset.name))
        .bind(&preset.name)
        .bind(&preset.description)
        .bind(&preset.based_on)
        .bind(text(&preset.options)?)
        .bind(preset.created_us)
        .bind(preset.updated_us)
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() == 0 {
            return Ok(false);
        }
        log(&mut tx, actor, change).await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Replaces the stored custom preset of `preset`'s name (its
    /// description, base and options; it keeps its creation time) and logs
    /// `change`; `false` (and nothing changed) if there is none.
    pub async fn update_preset(
        &self,
        preset: &CustomPreset,
        actor: &Author,
        change: &Change,
    ) -> Result<bool, StoreError> {
        let mut tx = self.pool().begin().await?;
        let done = sqlx::query(
            "UPDATE presets SET description = $1, based_on = $2, options = $3, updated_us = $4 WHERE name = $5",
        )
        .bind(&preset.description)
        .bind(&preset.based_on)
        .bind(text(&preset.options)?)
        .bind(preset.updated_us)
        .bind(&preset.name)
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() == 0 {
            return Ok(false);
        }
        log(&mut tx, actor, change).await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Deletes the custom preset called exactly `name` and logs `change`;
    /// `false` (and nothing changed) if there is none.
    pub async fn delete_preset(&self, name: &str, actor: &Author, change: &Change) -> Result<bool, StoreError> {
        let mut tx = self.pool().begin().await?;
        let done = sqlx::query("DELETE FROM presets WHERE name = $1").bind(name).execute(&mut *tx).await?;
        if done.rows_affected() == 0 {
            return Ok(false);
        }
        log(&mut tx, actor, change).await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Stores the defaults of new tables (in place of any stored before) and
    /// logs `change`.
    pub async fn save_defaults(
        &self,
        defaults: &DefaultOptions,
        actor: &Author,
        change: &Change,
    ) -> Result<(), StoreError> {
        let mut tx = self.pool().begin().await?;
        sqlx::query(
            "INSERT INTO option_defaults (id, preset, options, updated_us, updated_by_id, updated_by_name) \
             VALUES (1, $1, $2, $3, $4, $5) ON CONFLICT (id) DO UPDATE SET preset = excluded.preset, \
             options = excluded.options, updated_us = excluded.updated_us, \
             updated_by_id = excluded.updated_by_id, updated_by_name = excluded.updated_by_name",
        )
        .bind(&defaults.preset)
        .bind(text(&defaults.options)?)
        .bind(change.at_us)
        .bind(actor.user_id)
        .bind(&actor.name)
        .execute(&mut *tx)
        .await?;
        log(&mut tx, actor, change).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Forgets the stored defaults (the flags' are in force again) and logs
    /// `change`; `false` (and nothing logged) if none were stored.
    pub async fn forget_defaults(&self, actor: &Author, change: &Change) -> Result<bool, StoreError> {
        self.forget_only_row("option_defaults", actor, change).await
    }

    /// Deletes the one row (`id = 1`) of `table`, a setting an admin stored,
    /// and logs `change`, in one transaction; `false` (and nothing logged)
    /// if there was none.
    pub(super) async fn forget_only_row(
        &self,
        table: &'static str,
        actor: &Author,
        change: &Change,
    ) -> Result<bool, StoreError> {
        let mut tx = self.pool().begin().await?;
        let done = sqlx::query(&format!("DELETE FROM {table} WHERE id = 1")).execute(&mut *tx).await?;
        if done.rows_affected() == 0 {
            return Ok(false);
        }
        log(&mut tx, actor, change).await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Logs a change made elsewhere (an account's role, its sessions);
    /// returns the entry's number.
    pub async fn record_change(&self, actor: &Author, change: &Change) -> Result<i64, StoreError> {
        let mut tx = self.pool().begin().await?;
        let id = log(&mut tx, actor, change).await?;
        tx.commit().await?;
        Ok(id)
    }

    /// Up to `limit` entries of the audit log numbered below `before` (all
    /// when `None`), about `target` only if given, newest first.
    pub async fn audit_log(
        &self,
        before: Option<i64>,
        target: Option<&str>,
        limit: i64,
    ) -> Result<Vec<AuditEntry>, StoreError> {
        let sql = format!(
            "SELECT id, at_us, actor_user_id, actor_name, action, target, before_json, after_json FROM audit_log \
             WHERE id < $1{} ORDER BY id DESC LIMIT $2",
            if target.is_some() { " AND target = $3" } else { "" }
        );
        let mut query = sqlx::query(&sql).bind(before.unwrap_or(i64::MAX)).bind(limit);
        if let Some(target) = target {
            query = query.bind(target);
        }
        let rows = query.fetch_all(self.pool()).await?;
        rows.iter().map(entry_of).collect()
    }
}

/// Writes one audit entry in `tx`; its number.
pub(super) async fn log(
    tx: &mut Transaction<'static, Any>,
    actor: &Author,
    change: &Change,
) -> Result<i64, StoreError> {
    let before = change.before.as_ref().map(text).transpose()?;
    let after = change.after.as_ref().map(text).transpose()?;
    let row = sqlx::query(
        "INSERT INTO audit_log (at_us, actor_user_id, actor_name, action, target, before_json, after_json) \
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
    )
    .bind(change.at_us)
    .bind(actor.user_id)
    .bind(&actor.name)
    .bind(change.action)
    .bind(&change.target)
    .bind(before)
    .bind(after)
    .fetch_one(&mut **tx)
    .await?;
    Ok(row.try_get("id")?)
}

fn entry_of(row: &AnyRow) -> Result<AuditEntry, StoreError> {
    let id: i64 = row.try_get("id")?;
    let json = |column: &str| -> Result<Option<Value>, StoreError> {
        let text: Option<String> = row.try_get(column)?;
        text.map(|t| serde_json::from_str(&t))
            .transpose()
            .map_err(|e| StoreError::CorruptRow { what: format!("audit entry {id}"), why: e.to_string() })
    };
    let at_us: i64 = row.try_get("at_us")?;
    Ok(AuditEntry {
        id,
        at: format_time(at_us),
        at_us,
        actor: Author { user_id: row.try_get("actor_user_id")?, name: row.try_get("actor_name")? },
        action: row.try_get("action")?,
        target: row.try_get("target")?,
        before: json("before_json")?,
        after: json("after_json")?,
    })
}
