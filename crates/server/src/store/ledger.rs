//! Limits counted over a cluster's nodes (Postgres only; the tables are in
//! `migrations/postgres/0015_quota_ledger.sql`): what each player holds,
//! per node, and rates kept by the database's clock. The policy (what is
//! counted, the caps) is `limits`'; this is where the counts live.
//!
//! - **Holds**: a node's count per holder and kind. Taking one locks the
//!   pair for the transaction (an advisory lock), so two nodes asking at
//!   once are judged one after the other against the sum over the nodes
//!   whose lease lives: a dead node's holds stop counting with its lease.
//! - **Rates**: a token bucket as GCRA (one timestamp per key: when the
//!   bucket is full again), and a bucket of strikes that only failures fill
//!   (a level, forgiven at a steady pace).
//!
//! Every write commits without waiting for the disk (`synchronous_commit`
//! off for its transaction): a crash of the database may forget the last
//! counts, which costs nothing but a little leniency, and a client's request
//! waits a fraction of a millisecond instead of a flush (docs/performance.md,
//! "Limits over the cluster").

use std::time::Duration;

use super::cluster::millis;
use super::{Store, StoreError};

impl Store {
    /// Takes one `kind` for `holder` on node `node` if the live nodes hold
    /// fewer than `cap` together; whether it was taken.
    pub async fn hold_shared(&self, node: &str, holder: &str, kind: &str, cap: u32) -> Result<bool, StoreError> {
        let mut tx = self.pool().begin().await?;
        sqlx::query("SET LOCAL synchronous_commit = off").execute(&mut *tx).await?;
        sqlx::query("SELECT pg_advisory_xact_lock(hashtext($1 || ' ' || $2))")
            .bind(holder)
            .bind(kind)
            .execute(&mut *tx)
            .await?;
        // A statement after the lock: it sees every hold committed before.
        let taken = sqlx::query(
            "INSERT INTO quota_holds (holder, kind, node_id, n) SELECT $1, $2, $3, 1 \
             WHERE (SELECT coalesce(sum(q.n), 0) FROM quota_holds q JOIN cluster_nodes c ON c.id = q.node_id \
                    AND c.expires_at > clock_timestamp() WHERE q.holder = $1 AND q.kind = $2) < $4 \
             ON CONFLICT (holder, kind, node_id) DO UPDATE SET n = quota_holds.n + 1",
        )
        .bind(holder)
        .bind(kind)
        .bind(node)
        .bind(i64::from(cap))
        .execute(&mut *tx)
        .await?
        .rows_affected();
        tx.commit().await?;
        Ok(taken == 1)
    }

    /// Gives back one `kind` of `holder`'s on node `node`.
    pub async fn release_shared(&self, node: &str, holder: &str, kind: &str) -> Result<(), StoreError> {
        sqlx::query(
            "WITH quick AS (SELECT set_config('synchronous_commit', 'off', true)) \
             UPDATE quota_holds SET n = n - 1 FROM quick WHERE holder = $1 AND kind = $2 AND node_id = $3 AND n > 0",
        )
        .bind(holder)
        .bind(kind)
        .bind(node)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Counts one attempt at `key`, a token bucket of `burst` at once and
    /// one more every `every`: `None` if allowed, else how long to wait.
    pub async fn pace_shared(&self, key: &str, burst: u32, every: Duration) -> Result<Option<Duration>, StoreError> {
        let (every_ms, burst_ms) = (millis(every), millis(every) * f64::from(burst.max(1)));
        let allowed = sqlx::query(
            "WITH quick AS (SELECT set_config('synchronous_commit', 'off', true)) \
             INSERT INTO quota_rates (key, at) \
             SELECT $1, clock_timestamp() + $2::float8 * INTERVAL '1 millisecond' FROM quick \
             ON CONFLICT (key) DO UPDATE \
             SET at = greatest(quota_rates.at, clock_timestamp()) + $2::float8 * INTERVAL '1 millisecond' \
             WHERE greatest(quota_rates.at, clock_timestamp()) + $2::float8 * INTERVAL '1 millisecond' \
                   <= clock_timestamp() + $3::float8 * INTERVAL '1 millisecond'",
        )
        .bind(key)
        .bind(every_ms)
        .bind(burst_ms)
        .execute(self.pool())
        .await?
        .rows_affected();
        if allowed == 1 {
            return Ok(None);
        }
        // Refused: the next attempt is allowed once the bucket has room for it.
        let wait_ms: f64 = sqlx::query_scalar(
            "SELECT (EXTRACT(EPOCH FROM (at - clock_timestamp())) * 1000)::float8 + $2::float8 - $3::float8 \
             FROM quota_rates WHERE key = $1",
        )
        .bind(key)
        .bind(every_ms)
        .bind(burst_ms)
        .fetch_one(self.pool())
        .await?;
        Ok(Some(Duration::from_secs_f64(wait_ms.max(1.0) / 1000.0)))
    }

    /// Pays one into `key`'s bucket, which holds `burst` and drains one
    /// every `every` (read now, so that a change of rate applies to what is
    /// in it): `None` if there was room, else how long until there is.
    pub async fn spend_shared(&self, key: &str, burst: u32, every: Duration) -> Result<Option<Duration>, StoreError> {
        let every_ms = millis(every).max(1.0);
        let paid = sqlx::query(
            "WITH quick AS (SELECT set_config('synchronous_commit', 'off', true)) \
             INSERT INTO quota_rates (key, at, level) SELECT $1, clock_timestamp(), 1 FROM quick WHERE $3::float8 >= 1 \
             ON CONFLICT (key) DO UPDATE SET level = greatest(quota_rates.level - \
               (EXTRACT(EPOCH FROM (clock_timestamp() - quota_rates.at)) * 1000)::float8 / $2::float8, 0) + 1, \
             at = clock_timestamp() \
             WHERE greatest(quota_rates.level - (EXTRACT(EPOCH FROM (clock_timestamp() - quota_rates.at)) * 1000)::float8 \
               / $2::float8, 0) + 1 <= $3::float8",
        )
        .bind(key)
        .bind(every_ms)
        .bind(f64::from(burst))
        .execute(self.pool())
        .await?
        .rows_affected();
        if paid == 1 {
            return Ok(None);
        }
        let level = self.strikes_shared(key, every).await?;
        Ok(Some(Duration::from_millis(((level + 1.0 - f64::from(burst)) * every_ms).max(1.0) as u64)))
    }

    /// The strikes against `key` now, one forgiven every `every`.
    pub async fn strikes_shared(&self, key: &str, every: Duration) -> Result<f64, StoreError> {
        let level: Option<f64> = sqlx::query_scalar(
            "SELECT greatest(level - (EXTRACT(EPOCH FROM (clock_timestamp() - at)) * 1000)::float8 / $2::float8, 0) \
             FROM quota_rates WHERE key = $1",
        )
        .bind(key)
        .bind(millis(every).max(1.0))
        .fetch_optional(self.pool())
        .await?;
        Ok(level.unwrap_or(0.0))
    }

    /// One more strike against `key`, one forgiven every `every`.
    pub async fn strike_shared(&self, key: &str, every: Duration) -> Result<(), StoreError> {
        sqlx::query(
            "WITH quick AS (SELECT set_config('synchronous_commit', 'off', true)) \
             INSERT INTO quota_rates (key, at, level) SELECT $1, clock_timestamp(), 1 FROM quick \
             ON CONFLICT (key) DO UPDATE SET level = greatest(quota_rates.level - \
               (EXTRACT(EPOCH FROM (clock_timestamp() - quota_rates.at)) * 1000)::float8 / $2::float8, 0) + 1, \
             at = clock_timestamp()",
        )
        .bind(key)
        .bind(millis(every).max(1.0))
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Forgets what no longer counts: the holds of nodes gone and empty
    /// ones, and rates full again or strikes forgiven long ago (a day).
    pub async fn forget_spent_quotas(&self) -> Result<(), StoreError> {
        sqlx::query(
            "DELETE FROM quota_holds q WHERE n = 0 OR NOT EXISTS (SELECT 1 FROM cluster_nodes c WHERE c.id = q.node_id)",
        )
        .execute(self.pool())
        .await?;
        sqlx::query("DELETE FROM quota_rates WHERE at < clock_timestamp() - INTERVAL '1 day'")
            .execute(self.pool())
            .await?;
        Ok(())
    }
}
