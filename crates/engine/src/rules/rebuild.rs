//! Rebuilding a game from its inputs: what a table records of its game (the
//! option changes, the start, every command the engine accepted) and the one
//! way of replaying it. A restarted table (`table::recovery::recover`) and a
//! checked game file (`game_file::check`) both replay this way: if they
//! replayed inputs differently, a file that checks out could still fail to
//! resume.

use serde::{Deserialize, Serialize};

use super::command::Command;
use super::event::Emitted;
use super::game::Game;
use super::options::GameOptions;

/// An input that rebuilds a game: replaying a game's inputs in order through
/// a new engine gives back the game.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "input", rename_all = "snake_case")]
pub enum Input {
    /// The manager changed an option (before the game, or between hands).
    SetOption {
        /// The option.
        name: String,
        /// Its value, as in an option file.
        value: String,
    },
    /// The game started with the table's options at that moment.
    StartGame,
    /// A command the engine accepted.
    Engine {
        /// The command.
        command: Command,
    },
}

/// A game being rebuilt input by input.
#[derive(Clone, Debug)]
pub struct Rebuild {
    /// The table's options before the game starts (the manager may change
    /// them); the game takes a copy when it starts.
    pub options: GameOptions,
    no_special_scores: bool,
    /// The game, once started.
    pub game: Option<Game>,
}

/// The game a table starts: its options at that moment, with the table's
/// `--no-special-scores`.
pub fn new_game(options: GameOptions, no_special_scores: bool) -> Game {
    Game::new(options).with_no_special_scores(no_special_scores)
}

impl Rebuild {
    /// Nothing replayed yet: the table as it opened, with its options and
    /// its `--no-special-scores`.
    pub fn new(options: GameOptions, no_special_scores: bool) -> Rebuild {
        Rebuild { options, no_special_scores, game: None }
    }

    /// Replays one input; returns the events the engine emitted for it, or
    /// why the input does not fit the game (nothing changed then).
    pub fn apply(&mut self, input: &Input) -> Result<Vec<Emitted>, RebuildError> {
        let option = |name: &String| {
            let name = name.clone();
            move |error| RebuildError::Option { name, error }
        };
        match (input, self.game.as_mut()) {
            (Input::SetOption { name, value }, None) => {
                self.options.set_checked(name, value).map_err(option(name))?;
                Ok(Vec::new())
            }
            (Input::SetOption { name, value }, Some(game)) => {
                game.set_option(name, value).map_err(option(name))?;
                Ok(Vec::new())
            }
            (Input::StartGame, None) => {
                self.game = Some(new_game(self.options.clone(), self.no_special_scores));
                Ok(Vec::new())
            }
            (Input::StartGame, Some(_)) => Err(RebuildError::StartedTwice),
            (Input::Engine { command }, Some(game)) => game
                .apply(command.clone())
                .map_err(|error| RebuildError::Refused { command: Box::new(command.clone()), error }),
            (Input::Engine { .. }, None) => Err(RebuildError::BeforeStart),
        }
    }
}

/// Why a recorded input does not fit the game being rebuilt.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RebuildError {
    /// An option change the options refuse.
    #[error("option {name}: {error}")]
    Option {
        /// The option.
        name: String,
        /// Why.
        error: super::options::OptionError,
    },
    /// The game starts a second time.
    #[error("the game starts a second time")]
    StartedTwice,
    /// An engine command before the game started.
    #[error("a command before the game started")]
    BeforeStart,
    /// The engine refuses a command.
    #[error("the engine refused {command:?}: {error}")]
    Refused {
        /// The command.
        command: Box<Command>,
        /// Why.
        error: super::command::GameError,
    },
}
