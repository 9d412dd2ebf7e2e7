//! The budget of games of robots alone as an admin set it, the games
//! someone keeps, and the forgetting of the others once they are old
//! (`migrations/*/0016_robot_budget.sql`; the policy is
//! `crate::limits::budget`'s).
//!
//! A game is "of robots alone" when every seat it has is a robot's: it was
//! played here (`source = 'live'`), and no person ever sat in it (a person
//! who leaves before the start leaves no seat row). Forgetting one deletes
//! every row of it, through the writer of the part that holds it (SQLite)
//! or the journal's pool (Postgres), in one transaction.

use sqlx::Row;

use super::options::{Author, Change, log};
use super::{Store, StoreError, parts};

/// The budget an admin stored, and who stored it when.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredBudget {
    /// Hands of robots alone per player per hour.
    pub hands_per_hour: u32,
    /// Hands of robots alone per player per day.
    pub hands_per_day: u32,
    /// Seconds a game of robots alone is stored after its last change.
    pub kept_for_s: u64,
    /// When it was stored (microseconds since the epoch).
    pub updated_us: i64,
    /// The admin who stored it.
    pub updated_by: Author,
}

/// A game someone keeps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeptGame {
    /// The game.
    pub game_id: String,
    /// When it was first kept (microseconds since the epoch).
    pub kept_us: i64,
    /// Who first kept it.
    pub kept_by: Author,
}

/// The games of robots alone forgotten in one transaction at most.
pub const FORGET_AT_ONCE: i64 = 100;

impl Store {
    /// The budget an admin last stored, if any.
    pub async fn stored_robot_budget(&self) -> Result<Option<StoredBudget>, StoreError> {
        let row = sqlx::query(
            "SELECT hands_per_hour, hands_per_day, kept_for_s, updated_us, updated_by_id, updated_by_name \
             FROM robot_budget WHERE id = 1",
        )
        .fetch_optional(self.pool())
        .await?;
        let Some(row) = row else { return Ok(None) };
        let number = |column: &str| -> Result<i64, StoreError> { Ok(row.try_get::<i64, _>(column)?) };
        Ok(Some(StoredBudget {
            hands_per_hour: u32::try_from(number("hands_per_hour")?).unwrap_or(u32::MAX),
            hands_per_day: u32::try_from(number("hands_per_day")?).unwrap_or(u32::MAX),
            kept_for_s: u64::try_from(number("kept_for_s")?).unwrap_or(1).max(1),
            updated_us: number("updated_us")?,
            updated_by: Author { user_id: number("updated_by_id")?, name: row.try_get("updated_by_name")? },
        }))
    }

    /// Stores the budget (in place of any stored before) and logs `change`.
    pub async fn save_robot_budget(
        &self,
        hands_per_hour: u32,
        hands_per_day: u32,
        kept_for_s: u64,
        actor: &Author,
        change: &Change,
    ) -> Result<(), StoreError> {
        let mut tx = self.pool().begin().await?;
        sqlx::query(
            "INSERT INTO robot_budget (id, hands_per_hour, hands_per_day, kept_for_s, updated_us, updated_by_id, \
             updated_by_name) VALUES (1, $1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO UPDATE SET \
             hands_per_hour = excluded.hands_per_hour, hands_per_day = excluded.hands_per_day, \
             kept_for_s = excluded.kept_for_s, updated_us = excluded.updated_us, \
             updated_by_id = excluded.updated_by_id, updated_by_name = excluded.updated_by_name",
        )
        .bind(i64::from(hands_per_hour))
        .bind(i64::from(hands_per_day))
        .bind(i64::try_from(kept_for_s).unwrap_or(i64::MAX))
        .bind(change.at_us)
        .bind(actor.user_id)
        .bind(&actor.name)
        .execute(&mut *tx)
        .await?;
        log(&mut tx, actor, change).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Forgets the stored budget (the flags' is in force again) and logs
    /// `change`; `false` (and nothing logged) if none was stored.
    pub async fn forget_robot_budget(&self, actor: &Author, change: &Change) -> Result<bool, StoreError> {
        self.forget_only_row("robot_budget", actor, change).await
    }

    /// Keeps the game `game_id` for `actor` (once kept, it stays kept by
    /// whoever kept it first); `None` if there is no such game.
    pub async fn keep_game(&self, game_id: &str, actor: &Author, at_us: i64) -> Result<Option<KeptGame>, StoreError> {
        let exists: Option<String> =
            sqlx::query_scalar("SELECT id FROM games WHERE id = $1").bind(game_id).fetch_optional(self.pool()).await?;
        if exists.is_none() {
            return Ok(None);
        }
        sqlx::query(
            "INSERT INTO kept_games (game_id, kept_us, kept_by_id, kept_by_name) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (game_id) DO NOTHING",
        )
        .bind(game_id)
        .bind(at_us)
        .bind(actor.user_id)
        .bind(&actor.name)
        .execute(self.pool())
        .await?;
        self.kept_game(game_id).await
    }

    /// Who keeps the game `game_id`, if anyone.
    pub async fn kept_game(&self, game_id: &str) -> Result<Option<KeptGame>, StoreError> {
        let row = sqlx::query("SELECT kept_us, kept_by_id, kept_by_name FROM kept_games WHERE game_id = $1")
            .bind(game_id)
            .fetch_optional(self.pool())
            .await?;
        let Some(row) = row else { return Ok(None) };
        Ok(Some(KeptGame {
            game_id: game_id.to_string(),
            kept_us: row.try_get("kept_us")?,
            kept_by: Author { user_id: row.try_get("kept_by_id")?, name: row.try_get("kept_by_name")? },
        }))
    }

    /// Whether `game_id` is a game of robots alone (played here, every
    /// seat a robot's); `None` if there is no such game.
    pub async fn robots_alone(&self, game_id: &str) -> Result<Option<bool>, StoreError> {
        let row = sqlx::query(
            "SELECT g.source, (SELECT count(*) FROM seats s WHERE s.game_id = g.id AND s.robot IS NULL) AS people, \
             (SELECT count(*) FROM seats s WHERE s.game_id = g.id) AS seats FROM games g WHERE g.id = $1",
        )
        .bind(game_id)
        .fetch_optional(self.pool())
        .await?;
        let Some(row) = row else { return Ok(None) };
        let source: String = row.try_get("source")?;
        let (people, seats): (i64, i64) = (row.try_get("people")?, row.try_get("seats")?);
        Ok(Some(source == "live" && people == 0 && seats > 0))
    }

    /// Up to [`FORGET_AT_ONCE`] games of robots alone last changed before
    /// `before_us` that nobody keeps.
    pub async fn old_robot_games(&self, before_us: i64) -> Result<Vec<String>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT g.id FROM games g WHERE g.source = 'live' AND g.updated_us < $1 \
             AND EXISTS (SELECT 1 FROM seats s WHERE s.game_id = g.id) \
             AND NOT EXISTS (SELECT 1 FROM seats s WHERE s.game_id = g.id AND s.robot IS NULL) \
             AND NOT EXISTS (SELECT 1 FROM kept_games k WHERE k.game_id = g.id) \
             ORDER BY g.updated_us LIMIT $2",
        )
        .bind(before_us)
        .bind(FORGET_AT_ONCE)
        .fetch_all(self.pool())
        .await?)
    }

    /// Deletes the games `ids` and everything of theirs; how many there were.
    pub async fn forget_games(&self, ids: &[String]) -> Result<u64, StoreError> {
        if self.files() <= 1 {
            return Ok(self.writer().forget(ids).await?);
        }
        let mut by_part = vec![Vec::new(); self.files()];
        for id in ids {
            by_part[parts::part_of(id, self.files())].push(id.clone());
        }
        let mut forgotten = 0;
        for (part, ids) in by_part.iter().enumerate().filter(|(_, ids)| !ids.is_empty()) {
            forgotten += self.writers[part].forget(ids).await?;
        }
        Ok(forgotten)
    }
}
