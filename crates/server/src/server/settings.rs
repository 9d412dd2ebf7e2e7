//! What the operator sets, as typed values: where the options and walls of
//! new tables come from ([`TableSources`], read and checked here), and the
//! rule of cluster mode ([`check_cluster_database`]). The flags that give
//! them are the binary's (`src/serve/` of `mahjong-server`); this crate
//! knows no command line.

use std::path::{Path, PathBuf};

use crate::rules::option_file::OptionFile;
use crate::rules::options::OptionError;
use crate::rules::preset_book::{self, DefaultOptions, PresetBook, PresetError};
use crate::rules::presets;
use crate::rules::tile::{BadTileCode, Tile, parse_tiles};
use crate::rules::wall::{Wall, WallError};
use crate::store::Backend;
use crate::table::TableDefaults;

/// A setting of `serve` that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A file named by a flag cannot be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// No such preset.
    #[error(transparent)]
    Preset(PresetError),
    /// The defaults the flags give do not hold: their preset does not
    /// exist, or their options do not suit it.
    #[error("the defaults given by --preset, --option-file and --timeout: {0}")]
    Defaults(PresetError),
    /// The option file does not read, or sets a bad value.
    #[error("{}: {source}", path.display())]
    OptionFile {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        source: OptionError,
    },
    /// The wall file holds something that is not a tile.
    #[error("{}: {source}", path.display())]
    WallTiles {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        source: BadTileCode,
    },
    /// The wall file's tiles are not a wall.
    #[error("{}: {source}", path.display())]
    Wall {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        source: WallError,
    },
    /// `--nats` with a database that is not Postgres.
    #[error(
        "--nats (cluster mode) needs a Postgres database shared by every node \
         (--database postgres://...): an SQLite file serves one node, and stays the single-node default"
    )]
    ClusterNeedsPostgres,
}

/// Cluster mode's rule: every node keeps its games in the one Postgres
/// database they share (an SQLite file serves one node). The rule's one
/// statement: [`super::Server::build`] asks it of the store it is given, so
/// that no way in passes it by, and `serve` asks it of `--database` before
/// it opens anything, so that a refusal creates no SQLite file.
pub fn check_cluster_database(backend: Backend) -> Result<(), ConfigError> {
    match backend {
        Backend::Postgres => Ok(()),
        Backend::Sqlite => Err(ConfigError::ClusterNeedsPostgres),
    }
}

/// Where the options and walls of new tables come from, as the operator
/// names them (`--preset`, `--option-file`, `--timeout`, `--wallfile`,
/// `--walls`): read and checked by [`TableSources::read_into`]. The default
/// is a bare server's: the default preset, no file.
#[derive(Clone, Debug)]
pub struct TableSources {
    /// The rule preset of new tables, built-in or custom (an option file's
    /// `Preset` line overrides it).
    pub preset: String,
    /// Game options in mj-server's option-file format, over the preset's.
    pub option_file: Option<PathBuf>,
    /// Seconds to claim a discard, as the `Timeout` option (over the file's).
    pub timeout: Option<u32>,
    /// A file of tile codes: the first hand's wall at every table.
    pub wallfile: Option<PathBuf>,
    /// A file of walls, one per line: hand N of every table is dealt line N.
    pub walls: Option<PathBuf>,
}

impl Default for TableSources {
    fn default() -> TableSources {
        TableSources {
            preset: presets::DEFAULT_PRESET.to_string(),
            option_file: None,
            timeout: None,
            wallfile: None,
            walls: None,
        }
    }
}

impl TableSources {
    /// `tables` with the options and walls these sources give, the files
    /// read and checked. Defaults naming a built-in preset are checked whole
    /// here (and the walls against their options); a custom preset is known
    /// only once the store is open (see [`super::Server::build`]).
    pub fn read_into(&self, tables: TableDefaults) -> Result<TableDefaults, ConfigError> {
        let defaults = self.default_options()?;
        let options = match preset_book::built_in(&defaults.preset) {
            Some(_) => Some(defaults.check(&PresetBook::built_in_only()).map_err(ConfigError::Defaults)?.1),
            None => None,
        };
        // A wall is checked against the options when they are known already.
        let wall = |path: &Path, text: &str| -> Result<Vec<Tile>, ConfigError> {
            let tiles = parse_tiles(text.trim())
                .map_err(|source| ConfigError::WallTiles { path: path.to_path_buf(), source })?;
            if let Some(options) = &options {
                Wall::from_tiles(tiles.clone(), options)
                    .map_err(|source| ConfigError::Wall { path: path.to_path_buf(), source })?;
            }
            Ok(tiles)
        };
        let first_wall = match &self.wallfile {
            Some(path) => Some(wall(path, &read(path)?)?),
            None => None,
        };
        let (first_wall, later_walls) = match &self.walls {
            Some(path) => {
                let text = read(path)?;
                let mut walls = Vec::new();
                for line in text.lines().filter(|l| !l.trim().is_empty()) {
                    walls.push(wall(path, line)?);
                }
                let mut walls = walls.into_iter();
                (walls.next(), walls.collect())
            }
            None => (first_wall, Vec::new()),
        };
        Ok(TableDefaults { options: defaults, first_wall, later_walls, ..tables })
    }

    /// The defaults of new tables these sources give: the preset (or the
    /// option file's `Preset` line), the option file's options over it, and
    /// the timeout as the `Timeout` option. Each option is checked on its
    /// own; the whole, with its preset, in [`DefaultOptions::check`].
    pub fn default_options(&self) -> Result<DefaultOptions, ConfigError> {
        let mut defaults = DefaultOptions { preset: self.preset.clone(), ..DefaultOptions::default() };
        if let Some(path) = &self.option_file {
            let text = read(path)?;
            let bad = |source| ConfigError::OptionFile { path: path.clone(), source };
            let file = OptionFile::parse(&text).map_err(bad)?;
            if let Some((_, preset)) = file.preset.clone() {
                defaults.preset = preset;
            }
            defaults.options = file.json_options().map_err(bad)?;
        }
        if let Some(timeout) = self.timeout {
            defaults.options.insert("Timeout".into(), timeout.into());
        }
        Ok(defaults)
    }
}

/// A preset's options with an option file applied over them (the
/// simulator's: a preset of `book`, then the file, whose own `Preset` line
/// may name a built-in preset).
pub fn preset_with_option_file(
    book: &PresetBook,
    preset: &str,
    option_file: Option<&Path>,
) -> Result<crate::rules::GameOptions, ConfigError> {
    let mut options = book.options(preset).map_err(ConfigError::Preset)?;
    if let Some(path) = option_file {
        let text = read(path)?;
        options
            .apply_option_file(&text)
            .map_err(|source| ConfigError::OptionFile { path: path.to_path_buf(), source })?;
    }
    Ok(options)
}

fn read(path: &Path) -> Result<String, ConfigError> {
    std::fs::read_to_string(path).map_err(|source| ConfigError::Read { path: path.to_path_buf(), source })
}
