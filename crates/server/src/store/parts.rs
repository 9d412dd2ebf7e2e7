//! An SQLite store split over several files ("parts"), each with its own
//! writer, so that games are committed on as many threads as there are
//! parts instead of one at a time through a single writer (issue 29,
//! docs/performance.md, "Several SQLite files").
//!
//! - **Where a game lives.** Everything of a game (its row, seats, inputs,
//!   events, hands, their players and payments, the blocks and the log's
//!   tail) is in one part, chosen by a stable hash of its id ([`part_of`]).
//!   Part 0 is the file named in the URL; it also holds everything that is
//!   not a game's (accounts, presets, defaults, the audit log, idempotency
//!   keys). Part `k` is the file with `.part{k}` added to its name.
//! - **Writes.** Each part has its own writer and journal task; a game's
//!   batches always go to its part's, so they are committed in order.
//!   SQLite commits each file on its own, so a transaction never spans two
//!   parts (nothing of one game is in another).
//! - **Reads.** Every connection of the store's reading pool attaches the
//!   other parts and sees each game table as one `TEMP VIEW` of the same
//!   name, a `UNION ALL` over the parts ([`attach_sql`]). Temporary objects
//!   are found before `main`'s, so the store's queries read all the parts
//!   unchanged, and SQLite flattens the views into one indexed search per
//!   part (and per pair of parts for a join).
//! - **How many.** Chosen when the database is created (`?parts=N` in the
//!   URL, else [`default_parts`]) and recorded in it (`store_parts`); a
//!   database from before parts, or one created with games already in it,
//!   is one part. Opening a database with another `parts=` than it was
//!   created with is refused: its games would be looked for in the wrong
//!   files.

use std::path::{Path, PathBuf};

use super::StoreError;

/// The most parts a store may have: SQLite attaches at most 10 databases to
/// a connection (`SQLITE_MAX_ATTACHED`), and a join of three views over `n`
/// parts is flattened into `n³` searches, which stays under SQLite's limit
/// of 500 terms in a compound `SELECT` up to 7 parts.
pub const MAX_PARTS: usize = 7;

/// The parts of a new database when its URL names none: one per core the
/// process may use, 4 to [`MAX_PARTS`] (measured in docs/performance.md,
/// "Several SQLite files": even on two cores four writers beat one and two).
pub fn default_parts() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    cores.clamp(4, MAX_PARTS)
}

/// The tables that hold games' rows, each split over the parts.
const GAME_TABLES: [&str; 9] =
    ["games", "seats", "inputs", "events", "hands", "hand_players", "payments", "input_blocks", "event_blocks"];

/// The part (0 to `parts - 1`) that holds a game: FNV-1a of its id. Stable
/// across builds and platforms (the standard library's hasher is not
/// promised to be), since it says where a stored game is.
pub fn part_of(game_id: &str, parts: usize) -> usize {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in game_id.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    (hash % parts.max(1) as u64) as usize
}

/// Takes `parts=N` out of an SQLite URL's options (sqlx does not know it):
/// the URL without it, and `N` if it was there. `N` must be 1 to
/// [`MAX_PARTS`].
pub fn take_parts(url: &str) -> Result<(String, Option<usize>), StoreError> {
    let Some((base, query)) = url.split_once('?') else { return Ok((url.to_string(), None)) };
    let mut parts = None;
    let mut kept = Vec::new();
    for option in query.split('&') {
        match option.strip_prefix("parts=") {
            Some(n) => {
                let n =
                    n.parse::<usize>().ok().filter(|n| (1..=MAX_PARTS).contains(n)).ok_or_else(|| StoreError::Url {
                        url: url.to_string(),
                        hint: format!("parts= takes a number of files from 1 to {MAX_PARTS}"),
                    })?;
                parts = Some(n);
            }
            None => kept.push(option),
        }
    }
    let url = if kept.is_empty() { base.to_string() } else { format!("{base}?{}", kept.join("&")) };
    Ok((url, parts))
}

/// The file of an SQLite URL, as sqlx reads it (`sqlite://FILE?...` or
/// `sqlite:FILE?...`).
pub fn file_of(url: &str) -> PathBuf {
    let rest = url.strip_prefix("sqlite:").unwrap_or(url);
    PathBuf::from(rest.strip_prefix("//").unwrap_or(rest).split('?').next().unwrap_or_default())
}

/// Part `k`'s file: the main file's with `.part{k}` added (part 0 is the
/// main file itself).
pub fn part_file(main: &Path, k: usize) -> PathBuf {
    if k == 0 {
        return main.to_path_buf();
    }
    let mut name = main.as_os_str().to_os_string();
    name.push(format!(".part{k}"));
    PathBuf::from(name)
}

/// Part `k`'s URL, with the main URL's options.
pub fn part_url(main_url: &str, k: usize) -> String {
    if k == 0 {
        return main_url.to_string();
    }
    let file = part_file(&file_of(main_url), k);
    match main_url.split_once('?') {
        Some((_, query)) => format!("sqlite://{}?{query}", file.display()),
        None => format!("sqlite://{}", file.display()),
    }
}

/// The name a reading connection knows part `k` by: `main` (the first
/// file, the connection's own) or `part{k}` (attached).
pub fn schema(k: usize) -> String {
    if k == 0 { "main".to_string() } else { format!("part{k}") }
}

/// What a reading connection runs to see every part: each other part
/// attached as [`schema`] names it, and each game table as a temporary view
/// over all of them. Empty for one part.
pub fn attach_sql(main: &Path, parts: usize) -> String {
    if parts <= 1 {
        return String::new();
    }
    let mut sql = String::new();
    for k in 1..parts {
        let file = part_file(main, k).display().to_string().replace('\'', "''");
        sql.push_str(&format!("ATTACH DATABASE '{file}' AS {}; ", schema(k)));
    }
    for table in GAME_TABLES {
        let each: Vec<String> = (0..parts).map(|k| format!("SELECT * FROM {}.{table}", schema(k))).collect();
        sql.push_str(&format!("CREATE TEMP VIEW {table} AS {}; ", each.join(" UNION ALL ")));
    }
    sql
}

/// Removes an SQLite database's files, whatever its number of parts, with
/// their WAL and shared-memory files (a scratch database, a test's).
pub fn remove_files(main: &Path) {
    for k in 0..MAX_PARTS {
        for suffix in ["", "-wal", "-shm"] {
            let mut path = part_file(main, k).into_os_string();
            path.push(suffix);
            let _ = std::fs::remove_file(path);
        }
    }
}

/// The parts of the database `pool` reads (part 0, migrated): as recorded,
/// each of their files there; else `asked` (or [`default_parts`]) for a
/// database without games, one for a database with games from before parts;
/// recorded now. An `asked` that differs from the record is refused, and so
/// is a part whose file is gone when the parts were recorded before this
/// opening (opening it would make an empty one, and its games would be
/// missing).
pub async fn settle(pool: &sqlx::AnyPool, url: &str, asked: Option<usize>) -> Result<usize, StoreError> {
    let (parts, recorded_now) = recorded_or_new(pool, url, asked).await?;
    if !recorded_now {
        let main = file_of(url);
        if let Some(file) = (1..parts).map(|k| part_file(&main, k)).find(|f| !f.exists()) {
            return Err(StoreError::MissingPart { file, parts });
        }
    }
    Ok(parts)
}

/// Whether the database (its first file) holds no game yet.
async fn fresh(pool: &sqlx::AnyPool) -> Result<bool, StoreError> {
    let games: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM (SELECT 1 FROM games LIMIT 1) AS one").fetch_one(pool).await?;
    Ok(games == 0)
}

/// The parts recorded, or those of a database recorded now (see [`settle`]),
/// and whether this call recorded them (its files are yet to be made).
async fn recorded_or_new(pool: &sqlx::AnyPool, url: &str, asked: Option<usize>) -> Result<(usize, bool), StoreError> {
    let recorded: Option<i64> = sqlx::query_scalar("SELECT parts FROM store_parts").fetch_optional(pool).await?;
    if let Some(recorded) = recorded {
        let recorded = recorded as usize;
        if let Some(asked) = asked.filter(|&a| a != recorded) {
            return Err(StoreError::Url {
                url: url.to_string(),
                hint: format!(
                    "this database was created in {recorded} part(s), not {asked}: leave parts= out, or write \
                     parts={recorded}"
                ),
            });
        }
        return Ok((recorded, false));
    }
    let parts = if !fresh(pool).await? {
        if asked.is_some_and(|a| a != 1) {
            return Err(StoreError::Url {
                url: url.to_string(),
                hint: "this database holds games from before it could be split: it stays one file (parts=1)"
                    .to_string(),
            });
        }
        1
    } else {
        asked.unwrap_or_else(default_parts)
    };
    let inserted =
        sqlx::query("INSERT INTO store_parts (only_row, parts) VALUES (TRUE, $1) ON CONFLICT (only_row) DO NOTHING")
            .bind(parts as i64)
            .execute(pool)
            .await?
            .rows_affected();
    // Another process may have recorded its own meanwhile: the record wins.
    let recorded: i64 = sqlx::query_scalar("SELECT parts FROM store_parts").fetch_one(pool).await?;
    Ok((recorded as usize, inserted == 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_game_always_lives_in_the_same_part() {
        // Fixed values: a change of hash would lose every stored game.
        assert_eq!(part_of("", 7), (0xcbf2_9ce4_8422_2325u64 % 7) as usize);
        let id = "0b7e3f0c2a1d4e5f8a9b0c1d2e3f4a5b";
        assert_eq!(part_of(id, 4), part_of(id, 4));
        assert_eq!(part_of(id, 1), 0);
        // Ids spread over the parts.
        let mut seen = [0usize; 4];
        for i in 0..400 {
            seen[part_of(&format!("{i:032x}"), 4)] += 1;
        }
        assert!(seen.iter().all(|&n| n > 50), "{seen:?}");
    }

    #[test]
    fn the_parts_option_is_taken_out_of_the_url() {
        assert_eq!(take_parts("sqlite://g.db?mode=rwc&parts=3").unwrap(), ("sqlite://g.db?mode=rwc".into(), Some(3)));
        assert_eq!(take_parts("sqlite://g.db?parts=1").unwrap(), ("sqlite://g.db".into(), Some(1)));
        assert_eq!(take_parts("sqlite://g.db").unwrap(), ("sqlite://g.db".into(), None));
        for bad in ["sqlite://g.db?parts=0", "sqlite://g.db?parts=8", "sqlite://g.db?parts=x"] {
            let e = take_parts(bad).unwrap_err();
            assert!(e.to_string().contains("parts= takes a number of files from 1 to 7"), "{e}");
        }
    }

    #[test]
    fn parts_are_files_beside_the_main_one() {
        assert_eq!(part_url("sqlite://dir/g.db?mode=rwc", 2), "sqlite://dir/g.db.part2?mode=rwc");
        assert_eq!(part_url("sqlite://dir/g.db?mode=rwc", 0), "sqlite://dir/g.db?mode=rwc");
        assert_eq!(file_of("sqlite:///tmp/g.db?mode=rwc"), PathBuf::from("/tmp/g.db"));
        let sql = attach_sql(Path::new("it's.db"), 2);
        assert!(sql.starts_with("ATTACH DATABASE 'it''s.db.part1' AS part1; "), "{sql}");
        assert!(
            sql.contains("CREATE TEMP VIEW games AS SELECT * FROM main.games UNION ALL SELECT * FROM part1.games;")
        );
        assert!(attach_sql(Path::new("g.db"), 1).is_empty());
    }
}
