//! Rebuilding a game from its stored inputs, the one way both a restarted
//! table ([`super::actor::recover`]) and an imported game file
//! ([`crate::store::archive`]) do it: if they replayed inputs differently, a
//! file that checks out could still fail to resume.

use super::TableSettings;
use crate::rules::event::Emitted;
use crate::rules::game::Game;
use crate::rules::options::GameOptions;
use crate::store::Input;

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
    /// Nothing replayed yet: the table as it opened.
    pub fn new(settings: &TableSettings) -> Rebuild {
        Rebuild { options: settings.options.clone(), no_special_scores: settings.no_special_scores, game: None }
    }

    /// Replays one input; returns the events the engine emitted for it, or
    /// why the input does not fit the game (nothing changed then).
    pub fn apply(&mut self, input: &Input) -> Result<Vec<Emitted>, String> {
        match (input, self.game.as_mut()) {
            (Input::SetOption { name, value }, None) => {
                self.options.set_checked(name, value).map_err(|e| format!("option {name}: {e}"))?;
                Ok(Vec::new())
            }
            (Input::SetOption { name, value }, Some(game)) => {
                game.set_option(name, value).map_err(|e| format!("option {name}: {e}"))?;
                Ok(Vec::new())
            }
            (Input::StartGame, None) => {
                self.game = Some(new_game(self.options.clone(), self.no_special_scores));
                Ok(Vec::new())
            }
            (Input::StartGame, Some(_)) => Err("the game starts a second time".into()),
            (Input::Engine { command }, Some(game)) => {
                game.apply(command.clone()).map_err(|e| format!("the engine refused {command:?}: {e}"))
            }
            (Input::Engine { .. }, None) => Err("a command before the game started".into()),
        }
    }
}
