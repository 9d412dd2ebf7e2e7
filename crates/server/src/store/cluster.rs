//! The cluster's membership and the ownership of tables (Postgres only; the
//! tables are in `migrations/postgres/0011_cluster.sql`).
//!
//! Two kinds of rows, so that the lease writes per second do not grow with
//! the number of tables:
//!
//! - a **node lease** (`cluster_nodes`): one row per running process,
//!   renewed every second; it expires by the database's clock;
//! - **table ownership** (`table_owners`): one row per table, written only
//!   when a table opens, changes owner or closes. Its `epoch` grows at every
//!   change of owner and fences the journal's writes (see
//!   [`super::writer`]).
//!
//! A table belongs to its node while the node's lease lives. Once the lease
//! has expired (the node died, or paused longer than the lease), any live
//! node may take the table over ([`Store::take_over_tables`]), which raises
//! its epoch: from that commit on, the old owner's writes are refused.

use std::time::Duration;

use super::{Store, StoreError};

/// A node as its lease row stands.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct NodeRow {
    /// The node's id (one per start of the process).
    pub id: String,
    /// The node's name (`--node-name`).
    pub name: String,
    /// Its HTTP listener's address, as the node sees it.
    pub address: String,
    /// When it joined, in microseconds since the Unix epoch.
    pub started_us: i64,
    /// Its last heartbeat, in microseconds since the Unix epoch (the database's clock).
    pub heartbeat_us: i64,
    /// Milliseconds until its lease expires (negative: expired that long ago).
    pub expires_in_ms: i64,
    /// The tables it played at its last heartbeat.
    pub tables: i64,
    /// The WebSockets it served at its last heartbeat.
    pub sockets: i64,
    /// `member`, or `leaving` while it hands its tables over.
    pub state: String,
}

/// A table's owner: the node and the epoch it plays the table under.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Owner {
    /// The node (`None`: nobody plays it now; it waits to be taken over).
    pub node_id: Option<String>,
    /// The table's fencing epoch.
    pub epoch: i64,
}

/// The columns of a [`NodeRow`], with times as microseconds (the `Any`
/// driver reads no timestamps).
const NODE_COLUMNS: &str = "id, name, address, \
    (EXTRACT(EPOCH FROM started_at) * 1000000)::BIGINT, \
    (EXTRACT(EPOCH FROM heartbeat_at) * 1000000)::BIGINT, \
    (EXTRACT(EPOCH FROM (expires_at - clock_timestamp())) * 1000)::BIGINT, \
    tables, sockets, state";

type NodeTuple = (String, String, String, i64, i64, i64, i64, i64, String);

fn node_row(t: NodeTuple) -> NodeRow {
    let (id, name, address, started_us, heartbeat_us, expires_in_ms, tables, sockets, state) = t;
    NodeRow { id, name, address, started_us, heartbeat_us, expires_in_ms, tables, sockets, state }
}

/// A duration as the milliseconds the SQL of the cluster's rows multiplies
/// `INTERVAL '1 millisecond'` by.
pub(super) fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// A node's new lease: `$1` id, `$2` name, `$3` address, `$4` its length in ms.
const JOIN_NODE: &str = "INSERT INTO cluster_nodes (id, name, address, started_at, heartbeat_at, expires_at, \
     tables, sockets, state) VALUES ($1, $2, $3, clock_timestamp(), clock_timestamp(), \
     clock_timestamp() + $4::float8 * INTERVAL '1 millisecond', 0, 0, 'member')";

impl Store {
    /// Adds a node's lease, valid for `lease` from now by the database's
    /// clock; and makes every unfinished game that has no owner row one
    /// waiting to be taken over (games stored before cluster mode, or by
    /// a single-node server on the same database).
    pub async fn join_cluster(&self, id: &str, name: &str, address: &str, lease: Duration) -> Result<(), StoreError> {
        sqlx::query(JOIN_NODE).bind(id).bind(name).bind(address).bind(millis(lease)).execute(self.pool()).await?;
        sqlx::query(
            "INSERT INTO table_owners (game_id, node_id, epoch, since) \
             SELECT id, NULL, 0, clock_timestamp() FROM games WHERE state <> 'over' \
             ON CONFLICT (game_id) DO NOTHING",
        )
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Joins again as a new lease after this node's lapsed (paused, or cut
    /// off from the database), and takes back at once, each at its next
    /// epoch, the tables it still owns: nobody took them while it was away
    /// (after an outage of the database every node comes back to its own
    /// tables, rather than the first one back taking them all). One
    /// transaction: no other node sees its tables without a live owner.
    pub async fn rejoin_cluster(
        &self,
        id: &str,
        name: &str,
        address: &str,
        lease: Duration,
    ) -> Result<Vec<(String, i64)>, StoreError> {
        let mut tx = self.pool().begin().await?;
        sqlx::query("DELETE FROM cluster_nodes WHERE id = $1").bind(id).execute(&mut *tx).await?;
        sqlx::query(JOIN_NODE).bind(id).bind(name).bind(address).bind(millis(lease)).execute(&mut *tx).await?;
        let kept = sqlx::query_as(
            "UPDATE table_owners SET epoch = epoch + 1, since = clock_timestamp() WHERE node_id = $1 \
             RETURNING game_id, epoch",
        )
        .bind(id)
        .fetch_all(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(kept)
    }

    /// The cluster's id: the same for every node on this database (made by
    /// the first node that asks).
    pub async fn cluster_id(&self) -> Result<String, StoreError> {
        let fresh = uuid::Uuid::new_v4().simple().to_string();
        sqlx::query("INSERT INTO cluster_identity (only_row, id) VALUES (TRUE, $1) ON CONFLICT (only_row) DO NOTHING")
            .bind(&fresh)
            .execute(self.pool())
            .await?;
        Ok(sqlx::query_scalar("SELECT id FROM cluster_identity").fetch_one(self.pool()).await?)
    }

    /// Renews a node's lease for `lease` from now, with what it now plays;
    /// `false` when the lease had already expired (or is gone): the node
    /// has lost every table, and must give them up and join again as a new
    /// node. An expired lease is never renewed, so that a node that paused
    /// past it cannot come back to tables others are taking over.
    pub async fn renew_lease(&self, id: &str, lease: Duration, tables: i64, sockets: i64) -> Result<bool, StoreError> {
        let renewed = sqlx::query(
            "UPDATE cluster_nodes SET heartbeat_at = clock_timestamp(), \
             expires_at = clock_timestamp() + $2::float8 * INTERVAL '1 millisecond', tables = $3, sockets = $4 \
             WHERE id = $1 AND expires_at > clock_timestamp()",
        )
        .bind(id)
        .bind(millis(lease))
        .bind(tables)
        .bind(sockets)
        .execute(self.pool())
        .await?
        .rows_affected();
        Ok(renewed == 1)
    }

    /// Marks a node as leaving (it hands its tables over, then goes).
    pub async fn leave_cluster(&self, id: &str) -> Result<(), StoreError> {
        sqlx::query("UPDATE cluster_nodes SET state = 'leaving' WHERE id = $1").bind(id).execute(self.pool()).await?;
        Ok(())
    }

    /// Removes a node's lease (it has handed every table over).
    pub async fn forget_node(&self, id: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM cluster_nodes WHERE id = $1").bind(id).execute(self.pool()).await?;
        Ok(())
    }

    /// Removes the rows of nodes whose lease expired more than `after` ago
    /// and who own nothing (their tables have been taken over).
    pub async fn forget_dead_nodes(&self, after: Duration) -> Result<u64, StoreError> {
        Ok(sqlx::query(
            "DELETE FROM cluster_nodes n WHERE expires_at < clock_timestamp() - $1::float8 * INTERVAL '1 millisecond' \
             AND NOT EXISTS (SELECT 1 FROM table_owners o WHERE o.node_id = n.id)",
        )
        .bind(millis(after))
        .execute(self.pool())
        .await?
        .rows_affected())
    }

    /// Every node with a lease row, live or not, by name.
    pub async fn nodes(&self) -> Result<Vec<NodeRow>, StoreError> {
        let rows: Vec<NodeTuple> =
            sqlx::query_as(&format!("SELECT {NODE_COLUMNS} FROM cluster_nodes ORDER BY name, started_at"))
                .fetch_all(self.pool())
                .await?;
        Ok(rows.into_iter().map(node_row).collect())
    }

    /// Records a new table as `node_id`'s, at epoch 1.
    pub async fn own_new_table(&self, game_id: &str, node_id: &str) -> Result<i64, StoreError> {
        sqlx::query("INSERT INTO table_owners (game_id, node_id, epoch, since) VALUES ($1, $2, 1, clock_timestamp())")
            .bind(game_id)
            .bind(node_id)
            .execute(self.pool())
            .await?;
        Ok(1)
    }

    /// Makes `node_id` the owner of a game it brings back itself (a game
    /// file loaded), at the next epoch. Returns the epoch.
    pub async fn own_table(&self, game_id: &str, node_id: &str) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar(
            "INSERT INTO table_owners (game_id, node_id, epoch, since) VALUES ($1, $2, 1, clock_timestamp()) \
             ON CONFLICT (game_id) DO UPDATE SET node_id = $2, epoch = table_owners.epoch + 1, \
             since = clock_timestamp() RETURNING epoch",
        )
        .bind(game_id)
        .bind(node_id)
        .fetch_one(self.pool())
        .await?)
    }

    /// A table's owner, if it has an owner row.
    pub async fn owner(&self, game_id: &str) -> Result<Option<Owner>, StoreError> {
        let row: Option<(Option<String>, i64)> =
            sqlx::query_as("SELECT node_id, epoch FROM table_owners WHERE game_id = $1")
                .bind(game_id)
                .fetch_optional(self.pool())
                .await?;
        Ok(row.map(|(node_id, epoch)| Owner { node_id, epoch }))
    }

    /// The tables `node_id` owns, with their epochs.
    pub async fn owned_tables(&self, node_id: &str) -> Result<Vec<(String, i64)>, StoreError> {
        Ok(sqlx::query_as("SELECT game_id, epoch FROM table_owners WHERE node_id = $1")
            .bind(node_id)
            .fetch_all(self.pool())
            .await?)
    }

    /// Takes over at most `at_most` tables nobody plays (no owner, or an
    /// owner whose lease has expired) for `node_id`,
    /// raising each one's epoch; returns them with their new epochs. Rows
    /// another node is taking at the same moment are skipped, not waited
    /// for. Only a live node takes anything. A table released (or last
    /// taken) less than `settled` ago is left to the others.
    pub async fn take_over_tables(
        &self,
        node_id: &str,
        at_most: i64,
        settled: Duration,
    ) -> Result<Vec<(String, i64)>, StoreError> {
        Ok(sqlx::query_as(
            "UPDATE table_owners o SET node_id = $1, epoch = o.epoch + 1, since = clock_timestamp() \
             WHERE o.game_id IN ( \
                 SELECT w.game_id FROM table_owners w LEFT JOIN cluster_nodes n ON n.id = w.node_id \
                 WHERE (n.id IS NULL OR n.expires_at < clock_timestamp()) \
                   AND w.node_id IS DISTINCT FROM $1 \
                   AND w.since <= clock_timestamp() - $3 * interval '1 millisecond' \
                   AND EXISTS (SELECT 1 FROM cluster_nodes me WHERE me.id = $1 \
                               AND me.expires_at > clock_timestamp() AND me.state = 'member') \
                 ORDER BY w.since LIMIT $2 FOR UPDATE OF w SKIP LOCKED) \
             RETURNING o.game_id, o.epoch",
        )
        .bind(node_id)
        .bind(at_most)
        .bind(millis(settled))
        .fetch_all(self.pool())
        .await?)
    }

    /// How many tables wait to be taken over (no owner, or a dead one),
    /// and how many nodes are live members. (A leaving node releases each
    /// table once it has stored its last changes: taken earlier, they would
    /// be refused.)
    pub async fn orphans_and_members(&self) -> Result<(i64, i64), StoreError> {
        Ok(sqlx::query_as(
            "SELECT (SELECT COUNT(*) FROM table_owners w LEFT JOIN cluster_nodes n ON n.id = w.node_id \
                     WHERE n.id IS NULL OR n.expires_at < clock_timestamp()), \
                    (SELECT COUNT(*) FROM cluster_nodes WHERE expires_at > clock_timestamp() AND state = 'member')",
        )
        .fetch_one(self.pool())
        .await?)
    }

    /// Gives a table up (its node is leaving, or it could not be brought
    /// back): nobody owns it, and the next live node to look takes it
    /// over. Only at the epoch it was owned under.
    pub async fn release_table(&self, game_id: &str, node_id: &str, epoch: i64) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE table_owners SET node_id = NULL, since = clock_timestamp() \
             WHERE game_id = $1 AND node_id = $2 AND epoch = $3",
        )
        .bind(game_id)
        .bind(node_id)
        .bind(epoch)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// A table closed at its node: its owner row goes once its game is over
    /// (or was never stored); otherwise (it stopped for a failure) it is
    /// released, for a live node to bring back.
    pub async fn close_table(&self, game_id: &str, node_id: &str, epoch: i64) -> Result<(), StoreError> {
        let gone = sqlx::query(
            "DELETE FROM table_owners WHERE game_id = $1 AND epoch = $2 AND NOT EXISTS \
             (SELECT 1 FROM games WHERE id = $1 AND state <> 'over')",
        )
        .bind(game_id)
        .bind(epoch)
        .execute(self.pool())
        .await?
        .rows_affected();
        if gone == 0 {
            self.release_table(game_id, node_id, epoch).await?;
        }
        Ok(())
    }

    /// Forgets a closed table's owner row (at the epoch it was owned under).
    pub async fn forget_table(&self, game_id: &str, epoch: i64) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM table_owners WHERE game_id = $1 AND epoch = $2")
            .bind(game_id)
            .bind(epoch)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    // ----- the keys that seal cluster messages -------------------------------------------

    /// The cluster's keys, oldest first; key 1 is made with `secret` when
    /// there is none yet (by the first node that asks).
    pub async fn cluster_keys(&self, secret: &[u8; 32]) -> Result<Vec<ClusterKey>, StoreError> {
        sqlx::query(
            "INSERT INTO cluster_keys (id, secret, active_at) SELECT 1, $1, clock_timestamp() \
             WHERE NOT EXISTS (SELECT 1 FROM cluster_keys) ON CONFLICT (id) DO NOTHING",
        )
        .bind(hex(secret))
        .execute(self.pool())
        .await?;
        self.read_cluster_keys().await
    }

    /// The cluster's keys, oldest first.
    pub async fn read_cluster_keys(&self) -> Result<Vec<ClusterKey>, StoreError> {
        let rows: Vec<(i64, String, i64)> = sqlx::query_as(
            "SELECT id, secret, (EXTRACT(EPOCH FROM (active_at - clock_timestamp())) * 1000)::BIGINT \
             FROM cluster_keys ORDER BY id",
        )
        .fetch_all(self.pool())
        .await?;
        Ok(rows
            .into_iter()
            .filter_map(|(id, secret, active_in_ms)| {
                Some(ClusterKey { id: u32::try_from(id).ok()?, secret: unhex(&secret)?, active_in_ms })
            })
            .collect())
    }

    /// Adds the next key, used by every node `announce` from now (each has
    /// read it by then), and forgets keys replaced more than `forget` ago;
    /// the new key's number.
    pub async fn rotate_cluster_key(
        &self,
        secret: &[u8; 32],
        announce: Duration,
        forget: Duration,
    ) -> Result<u32, StoreError> {
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO cluster_keys (id, secret, active_at) \
             SELECT coalesce(max(id), 0) + 1, $1, clock_timestamp() + $2::float8 * INTERVAL '1 millisecond' \
             FROM cluster_keys RETURNING id",
        )
        .bind(hex(secret))
        .bind(millis(announce))
        .fetch_one(self.pool())
        .await?;
        // A key is replaced once a later one is in use.
        sqlx::query(
            "DELETE FROM cluster_keys k WHERE EXISTS (SELECT 1 FROM cluster_keys n WHERE n.id > k.id \
             AND n.active_at < clock_timestamp() - $1::float8 * INTERVAL '1 millisecond')",
        )
        .bind(millis(forget))
        .execute(self.pool())
        .await?;
        Ok(u32::try_from(id).unwrap_or(u32::MAX))
    }
}

/// A key that seals cluster messages, as the store keeps it.
#[derive(Clone, PartialEq, Eq)]
pub struct ClusterKey {
    /// Its number: a later key has a higher one.
    pub id: u32,
    /// The 32 bytes of the key.
    pub secret: [u8; 32],
    /// Milliseconds until nodes seal with it (zero or less: in use, or
    /// replaced), by the database's clock.
    pub active_in_ms: i64,
}

/// Never shows the secret.
impl std::fmt::Debug for ClusterKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterKey").field("id", &self.id).field("active_in_ms", &self.active_in_ms).finish()
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<[u8; 32]> {
    let mut out = [0u8; 32];
    if text.len() != 64 {
        return None;
    }
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}
