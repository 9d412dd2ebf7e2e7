//! The Postgres writer: one connection per journal writer, a group one
//! transaction of one `INSERT ... SELECT FROM UNNEST(...)` per table (the rows
//! travel as arrays), and a packer that writes the blocks for restarts on a
//! connection of its own.

use std::str::FromStr;
use std::time::Duration;

use sqlx::Connection;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use tokio::sync::mpsc;

use super::{
    Claim, Committed, EVENT_COLUMNS, FORGOTTEN_ROWS, GAME_COLUMNS, GAME_CONFLICT, GameRow, INPUT_COLUMNS, PACK_EVENTS,
    PACK_INPUTS, Rows, SeatChange, Write, acquire, claim_then_rows, forget_games, hands_ended, json, pack_blocks,
    rare_writes,
};
use crate::store::saved::ROW_SEPARATOR;

/// Postgres: a connection per journal writer, and the packer of the games
/// whose hand ended (see [`postgres_packer`]).
#[derive(Clone, Debug)]
pub struct PostgresWriter {
    pool: PgPool,
    packer: mpsc::Sender<String>,
}

impl PostgresWriter {
    /// Connects to `url` lazily with `connections` connections, and starts
    /// the packer on one more.
    pub(super) fn open(url: &str, connections: u32) -> Result<PostgresWriter, sqlx::Error> {
        // A transaction whose process stopped mid-way (SIGSTOP, a stalled
        // machine) is ended by Postgres after a while: its locks, the owner
        // rows it read `FOR SHARE` among them, would otherwise keep its
        // tables from being taken over for as long as it stays stopped.
        let options = PgConnectOptions::from_str(url)?
            .options([("idle_in_transaction_session_timeout", IDLE_IN_TRANSACTION_MS.to_string())]);
        let pool = PgPoolOptions::new()
            .max_connections(connections.max(1))
            .acquire_timeout(Duration::from_secs(10))
            .connect_lazy_with(options.clone());
        let packer_pool =
            PgPoolOptions::new().max_connections(1).acquire_timeout(Duration::from_secs(10)).connect_lazy_with(options);
        let (packer, games) = mpsc::channel(PACKS_WAITING);
        tokio::spawn({
            let (pool, packer_pool) = (pool.clone(), packer_pool.clone());
            async move {
                tokio::select! {
                    _ = postgres_packer(packer_pool.clone(), games) => {}
                    _ = pool.close_event() => {}
                }
                packer_pool.close().await;
            }
        });
        Ok(PostgresWriter { pool, packer })
    }
}

impl Write for PostgresWriter {
    async fn transaction(&self, claim: Option<&Claim<'_>>, rows: &Rows<'_>) -> Result<Committed, sqlx::Error> {
        let committed = claim_then_rows!(self.pool, claim, rows, postgres_fenced, postgres_rows, postgres_rare);
        if let Ok(Committed::Written) = committed {
            for game_id in hands_ended(rows) {
                // Full (the packer far behind): that game's restart reads rows instead.
                let _ = self.packer.try_send(game_id.to_string());
            }
        }
        committed
    }

    /// Postgres answers a query.
    async fn ping(&self) -> Result<(), sqlx::Error> {
        let mut conn = acquire(self.pool.acquire()).await?;
        sqlx::query("SELECT 1").execute(&mut *conn).await.map(drop)
    }

    async fn forget(&self, ids: &[String]) -> Result<u64, sqlx::Error> {
        let mut conn = acquire(self.pool.acquire()).await?;
        let mut tx = conn.begin().await?;
        let games = forget_games!(tx, ids, ["DELETE FROM table_owners WHERE game_id = $1"]);
        tx.commit().await?;
        Ok(games)
    }

    async fn closed(&self) {
        self.pool.close_event().await
    }

    async fn close(&self) {
        self.pool.close().await
    }
}

/// The games of `rows` whose fence fails: their owner row no longer has the
/// epoch their batches carry (another node took them over), or the owning
/// node's lease has expired by the database's clock. The owner rows that
/// hold are share-locked until the transaction ends, so a takeover (which
/// updates them) waits for this group's commit, and reads it.
async fn postgres_fenced(tx: &mut sqlx::PgConnection, rows: &Rows<'_>) -> Result<Vec<String>, sqlx::Error> {
    let held: Vec<String> = sqlx::query_scalar(
        "SELECT o.game_id FROM table_owners o \
         JOIN UNNEST($1::text[], $2::int8[]) AS f(game_id, epoch) ON f.game_id = o.game_id AND f.epoch = o.epoch \
         JOIN cluster_nodes n ON n.id = o.node_id AND n.expires_at > clock_timestamp() \
         FOR SHARE OF o",
    )
    .bind(rows.fences.iter().map(|(id, _)| id.to_string()).collect::<Vec<String>>())
    .bind(rows.fences.iter().map(|(_, epoch)| *epoch).collect::<Vec<i64>>())
    .fetch_all(&mut *tx)
    .await?;
    let held: std::collections::HashSet<&str> = held.iter().map(String::as_str).collect();
    Ok(rows.fences.iter().filter(|(id, _)| !held.contains(id)).map(|(id, _)| id.to_string()).collect())
}

async fn postgres_rows(tx: &mut sqlx::PgConnection, rows: &Rows<'_>) -> Result<(), sqlx::Error> {
    if !rows.games.is_empty() {
        let g = &rows.games;
        let column = |f: fn(&GameRow) -> String| g.iter().map(|(_, row, _)| f(row)).collect::<Vec<String>>();
        let number = |f: fn(&GameRow) -> i64| g.iter().map(|(_, row, _)| f(row)).collect::<Vec<i64>>();
        let maybe = |f: fn(&GameRow) -> Option<i64>| g.iter().map(|(_, row, _)| f(row)).collect::<Vec<Option<i64>>>();
        sqlx::query(&format!(
            "INSERT INTO {GAME_COLUMNS} SELECT * FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[], \
             $5::text[], $6::text[], $7::int8[], $8::int8[], $9::int8[], $10::int8[], $11::text[], $12::int8[], \
             $13::int8[], $14::text[]){GAME_CONFLICT}"
        ))
        .bind(g.iter().map(|(id, _, _)| id.to_string()).collect::<Vec<String>>())
        .bind(column(|r| r.name.clone()))
        .bind(column(|r| r.preset.clone()))
        .bind(column(|r| r.source.as_str().to_string()))
        .bind(column(|r| r.state.as_str().to_string()))
        .bind(g.iter().map(|(_, _, s)| s.cloned()).collect::<Vec<Option<String>>>())
        .bind(number(|r| r.created_us))
        .bind(vec![rows.now; g.len()])
        .bind(maybe(|r| r.finished_us))
        .bind(number(|r| r.hands))
        .bind(column(|r| json(&r.scores)))
        .bind(maybe(|r| r.manager))
        .bind(number(|r| r.last_seq))
        .bind(column(|r| r.rng_pos.to_string()))
        .execute(&mut *tx)
        .await?;
    }
    if !rows.inputs.is_empty() {
        let i = &rows.inputs;
        sqlx::query(&format!(
            "INSERT INTO {INPUT_COLUMNS} SELECT * FROM UNNEST($1::text[], $2::int8[], $3::int8[], $4::text[])"
        ))
        .bind(i.iter().map(|(id, _)| id.to_string()).collect::<Vec<String>>())
        .bind(i.iter().map(|(_, r)| r.n).collect::<Vec<i64>>())
        .bind(i.iter().map(|(_, r)| r.seq).collect::<Vec<i64>>())
        .bind(i.iter().map(|(_, r)| json(&r.input)).collect::<Vec<String>>())
        .execute(&mut *tx)
        .await?;
    }
    if !rows.events.is_empty() {
        let e = &rows.events;
        sqlx::query(&format!(
            "INSERT INTO {EVENT_COLUMNS} SELECT * FROM UNNEST($1::text[], $2::int8[], $3::int8[], $4::int8[], \
             $5::text[], $6::int8[], $7::text[])"
        ))
        .bind(e.iter().map(|(id, _)| id.to_string()).collect::<Vec<String>>())
        .bind(e.iter().map(|(_, r)| r.seq).collect::<Vec<i64>>())
        .bind(e.iter().map(|(_, r)| r.at_us).collect::<Vec<i64>>())
        .bind(e.iter().map(|(_, r)| r.hand).collect::<Vec<i64>>())
        .bind(e.iter().map(|(_, r)| r.audience_columns().0.to_string()).collect::<Vec<String>>())
        .bind(e.iter().map(|(_, r)| r.audience_columns().1).collect::<Vec<Option<i64>>>())
        .bind(e.iter().map(|(_, r)| r.body.clone()).collect::<Vec<String>>())
        .execute(&mut *tx)
        .await?;
    }
    Ok(())
}

rare_writes!(postgres_rare, sqlx::PgConnection);
pack_blocks!(postgres_pack, sqlx::PgConnection);

/// How long (milliseconds) a journal's transaction may wait for its process
/// before Postgres ends it (a group's statements follow one another at once).
const IDLE_IN_TRANSACTION_MS: u64 = 5_000;

/// The games whose blocks a Postgres packer has yet to write, at most.
const PACKS_WAITING: usize = 8192;

/// Writes the blocks of the games whose hand ended on Postgres, on a
/// connection of its own, after the group that ended the hand has
/// committed: in the group's transaction they held up every table of the
/// group (docs/performance.md, "Postgres's block packer"). The blocks only
/// speed up restarts (a restart reads the rows after a game's last block),
/// so one written late, or never (the server stopped first), loses nothing.
///
/// The games waiting are packed together, in one transaction that does not
/// wait for its commit to reach the disk (`synchronous_commit = off`: a
/// crash may lose the last blocks, never rows of the log): one transaction
/// per game, each waiting for its flush, fell behind the hands' ends under
/// load (docs/performance.md, "Postgres's block packer").
async fn postgres_packer(pool: PgPool, mut games: mpsc::Receiver<String>) {
    let mut waiting: Vec<String> = Vec::with_capacity(PACK_TOGETHER);
    while let Some(game_id) = games.recv().await {
        waiting.push(game_id);
        while waiting.len() < PACK_TOGETHER
            && let Ok(game_id) = games.try_recv()
        {
            if !waiting.contains(&game_id) {
                waiting.push(game_id);
            }
        }
        let packed = async {
            let mut conn = acquire(pool.acquire()).await?;
            let mut tx = conn.begin().await?;
            sqlx::query("SET LOCAL synchronous_commit = off").execute(&mut *tx).await?;
            for game_id in &waiting {
                postgres_pack(&mut tx, game_id).await?;
            }
            tx.commit().await
        };
        if let Err(e) = packed.await {
            tracing::debug!("the blocks of {} games for restarts are not written: {e}", waiting.len());
        }
        waiting.clear();
    }
}

/// At most this many games are packed in one transaction.
const PACK_TOGETHER: usize = 64;
