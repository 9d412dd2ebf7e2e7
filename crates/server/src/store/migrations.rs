//! The schema's migrations (`migrations/sqlite`, `migrations/postgres` at the
//! top of the workspace), built into the binary.
//!
//! Each file is named here, one line each, rather than found by sqlx's
//! `migrate!` macro: the macro is the one thing that needed sqlx's procedural
//! macros, which compile a second copy of both database drivers for the
//! compiler (see [`super::row`]). A test checks that the lists name every
//! file of the folders and nothing else. The migrations are the ones
//! `migrate!` would build (same versions, descriptions and checksums), so a
//! database the server migrated before reads as up to date.

use std::borrow::Cow;

use futures_util::future::BoxFuture;
use sqlx::error::BoxDynError;
use sqlx::migrate::{Migration, MigrationSource, MigrationType, Migrator};

/// Names and texts of the migrations in one folder.
macro_rules! folder {
    ($folder:literal: $($file:literal),* $(,)?) => {
        &[$(($file, include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../migrations/", $folder, "/", $file)))),*]
    };
}

/// SQLite's migrations, by file name.
pub const SQLITE: &[(&str, &str)] = folder!("sqlite":
    "0001_games.sql",
    "0002_accounts.sql",
    "0003_options.sql",
    "0004_idempotency.sql",
    "0006_log_clustered_by_game.sql",
    "0007_log_blocks.sql",
    "0008_log_tail.sql",
    "0010_name_look_alike.sql",
    "0013_store_parts.sql",
    "0016_robot_budget.sql",
);

/// PostgreSQL's migrations, by file name.
pub const POSTGRES: &[(&str, &str)] = folder!("postgres":
    "0001_games.sql",
    "0002_accounts.sql",
    "0003_options.sql",
    "0004_idempotency.sql",
    "0007_log_blocks.sql",
    "0009_log_without_checks.sql",
    "0010_name_look_alike.sql",
    "0011_cluster.sql",
    "0012_cluster_identity.sql",
    "0014_cluster_keys.sql",
    "0015_quota_ledger.sql",
    "0016_robot_budget.sql",
);

/// The migrator of one folder's migrations.
pub async fn migrator(files: &'static [(&'static str, &'static str)]) -> Result<Migrator, sqlx::migrate::MigrateError> {
    Migrator::new(Embedded(files)).await
}

/// Migrations built into the binary, as sqlx reads a folder of them.
#[derive(Debug)]
struct Embedded(&'static [(&'static str, &'static str)]);

impl<'s> MigrationSource<'s> for Embedded {
    fn resolve(self) -> BoxFuture<'s, Result<Vec<Migration>, BoxDynError>> {
        Box::pin(async move { self.0.iter().map(|&(file, sql)| migration(file, sql)).collect() })
    }
}

/// A migration read as sqlx reads its file: `VERSION_DESCRIPTION.sql`, the
/// description's underscores as spaces, without a transaction when the text
/// starts so.
fn migration(file: &str, sql: &'static str) -> Result<Migration, BoxDynError> {
    let stem = file.strip_suffix(".sql").ok_or_else(|| format!("migration {file} is not a .sql file"))?;
    let (version, description) = stem.split_once('_').ok_or_else(|| format!("migration {file} has no description"))?;
    let version: i64 = version.parse().map_err(|_| format!("migration {file} has no version"))?;
    Ok(Migration::new(
        version,
        Cow::Owned(description.replace('_', " ")),
        MigrationType::Simple,
        Cow::Borrowed(sql),
        sql.starts_with("-- no-transaction"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files_in(folder: &str) -> Vec<String> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../migrations").join(folder);
        let mut names: Vec<String> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        names.sort();
        names
    }

    #[test]
    fn the_lists_name_every_migration_file_and_no_other() {
        for (folder, list) in [("sqlite", SQLITE), ("postgres", POSTGRES)] {
            let named: Vec<String> = list.iter().map(|(file, _)| file.to_string()).collect();
            assert_eq!(named, files_in(folder), "migrations/{folder}: add the new file to store/migrations.rs");
        }
    }

    #[tokio::test]
    async fn each_migration_is_read_as_sqlx_reads_its_folder() {
        for (folder, list) in [("sqlite", SQLITE), ("postgres", POSTGRES)] {
            let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../migrations").join(folder);
            let from_folder = Migrator::new(dir.as_path()).await.unwrap();
            let built_in = migrator(list).await.unwrap();
            let key = |m: &Migration| (m.version, m.description.to_string(), m.checksum.to_vec(), m.no_tx);
            assert_eq!(
                built_in.iter().map(key).collect::<Vec<_>>(),
                from_folder.iter().map(key).collect::<Vec<_>>(),
                "{folder}"
            );
        }
    }

    #[test]
    fn a_misnamed_file_is_refused() {
        assert!(migration("0001.sql", "").is_err());
        assert!(migration("one_games.sql", "").is_err());
        assert!(migration("0001_games.txt", "").is_err());
    }
}
