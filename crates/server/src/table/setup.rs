//! Setting up a new table: the server's settings (from its flags), the
//! rules in force (the presets and the defaults, see [`super::rulebook`])
//! and what a request asks for (a name, a preset, options, robots, a start)
//! become the table's settings and its [`TableSetup`], checked whole before
//! anything is opened. Every front-end that opens tables (REST today) goes
//! through here.

use serde_json::Value;

use super::actor::MAX_PAUSE_DECISECONDS;
use super::rulebook::Rules;
use super::{RobotSeat, TableSettings, TableSetup};
use crate::rules::preset_book::DefaultOptions;
use crate::rules::tile::Tile;
use crate::text;

/// The name of a table opened without one.
pub const DEFAULT_NAME: &str = "Mah-Jong table";

/// The server's settings for the tables it opens (from its flags).
#[derive(Clone, Debug)]
pub struct TableDefaults {
    /// The preset and options of new tables as the flags give them
    /// (`--preset`, `--option-file`, `--timeout`): the first value of the
    /// defaults, which admins may change (see [`super::rulebook`]); tables
    /// are set up from the defaults in force, not from these.
    pub options: DefaultOptions,
    /// `--pause`, in deciseconds.
    pub pause_deciseconds: u32,
    /// `--random-seats`.
    pub random_seats: bool,
    /// `--no-manager`.
    pub no_manager: bool,
    /// `--no-special-scores`.
    pub no_special_scores: bool,
    /// `--seed`: table n is seeded with seed + n, so runs repeat.
    pub seed: Option<u64>,
    /// `--wallfile`: the first hand's wall at every table (or `--walls`: the
    /// first of the walls).
    pub first_wall: Option<Vec<Tile>>,
    /// `--walls`: the walls of the later hands, in order.
    pub later_walls: Vec<Vec<Tile>>,
    /// Seconds before a robot plays for a disconnected player.
    pub robot_takeover_secs: Option<u64>,
    /// `--end-on-disconnect`.
    pub end_on_disconnect: bool,
    /// `--disconnect-penalties N1,N2,N3`.
    pub disconnect_penalties: [i64; 3],
    /// Messages that may wait for a subscriber before it is dropped.
    pub subscriber_queue: usize,
}

impl Default for TableDefaults {
    fn default() -> TableDefaults {
        TableDefaults {
            options: DefaultOptions::default(),
            pause_deciseconds: 0,
            random_seats: false,
            no_manager: false,
            no_special_scores: false,
            seed: None,
            first_wall: None,
            later_walls: Vec::new(),
            robot_takeover_secs: None,
            end_on_disconnect: false,
            disconnect_penalties: [0; 3],
            subscriber_queue: 1024,
        }
    }
}

/// What a request for a new table asks for.
#[derive(Clone, Debug, Default)]
pub struct NewTable {
    /// The table's name (else [`DEFAULT_NAME`]).
    pub name: Option<String>,
    /// A rule preset, built-in or custom (else the defaults').
    pub preset: Option<String>,
    /// Options over the preset, by catalogue name, in their JSON types.
    pub options: serde_json::Map<String, Value>,
    /// Robots to seat at once.
    pub robots: Vec<RobotSeat>,
    /// The least pause between actions, in deciseconds (at least the server's `--pause`).
    pub pause_deciseconds: Option<u32>,
    /// Start the game at once (all four seats must be robots).
    pub start: bool,
    /// A table for the classic protocol's clients (see [`TableSettings::classic`]).
    pub classic: bool,
}

/// Why a new table was refused; nothing was opened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SetupError(String);

impl TableDefaults {
    /// The set-up of a new table as `request` asks, under `rules` (its
    /// preset, or the defaults'; the defaults' options over it; the
    /// request's options over those) and these settings; `number` gives the
    /// table's number (its seed under `--seed`), asked only once the request
    /// is known good.
    pub fn setup(
        &self,
        rules: &Rules,
        request: NewTable,
        number: impl FnOnce() -> u64,
    ) -> Result<TableSetup, SetupError> {
        let refuse = |why: String| SetupError(why);
        let (preset, options) = rules
            .defaults
            .table_options(&rules.presets, request.preset.as_deref(), &request.options)
            .map_err(|e| refuse(e.to_string()))?;
        let pause = request.pause_deciseconds.unwrap_or(0);
        if pause > MAX_PAUSE_DECISECONDS {
            return Err(refuse(format!("pause_deciseconds is at most {MAX_PAUSE_DECISECONDS}")));
        }
        let name = match &request.name {
            Some(name) => text::table_name(name).map_err(|e| refuse(e.to_string()))?,
            None => DEFAULT_NAME.into(),
        };
        if request.robots.len() > 4 {
            return Err(refuse("a table has four seats".into()));
        }
        let mut taken = [false; 4];
        for seat in request.robots.iter().filter_map(|r| r.seat) {
            if seat >= 4 {
                return Err(refuse(format!("there is no seat {seat}: seats are 0-3")));
            }
            if std::mem::replace(&mut taken[seat as usize], true) {
                return Err(refuse(format!("two robots asked for seat {seat}")));
            }
        }
        if request.start && request.robots.len() < 4 {
            return Err(refuse("start needs four robots: people sit and start through their seats".into()));
        }
        let seed = match self.seed {
            Some(s) => s.wrapping_add(number()),
            None => rand::random(),
        };
        let settings = TableSettings {
            name,
            preset,
            options,
            seed,
            first_wall: self.first_wall.clone(),
            pause_deciseconds: self.pause_deciseconds.max(pause),
            random_seats: self.random_seats,
            no_manager: self.no_manager,
            no_special_scores: self.no_special_scores,
            robot_takeover: self.robot_takeover_secs.map(std::time::Duration::from_secs),
            end_on_disconnect: self.end_on_disconnect,
            disconnect_penalties: self.disconnect_penalties,
            subscriber_queue: self.subscriber_queue,
            later_walls: self.later_walls.clone(),
            classic: request.classic,
        };
        let hold = crate::limits::Permit::uncounted();
        Ok(TableSetup { settings, robots: request.robots, start: request.start, hold, payer: None })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bots::strategy::Strategy;
    use crate::rules::preset_book::{CustomPreset, PresetBook};

    fn rules(defaults: DefaultOptions) -> Rules {
        let house = CustomPreset {
            name: "house".into(),
            description: String::new(),
            based_on: "shanghai-expat".into(),
            options: serde_json::json!({"WashBelow": 20}).as_object().cloned().unwrap(),
            created_us: 0,
            updated_us: 0,
        };
        Rules { presets: PresetBook::with_custom([house]), defaults, stored: None }
    }

    fn robots(seats: &[Option<u8>]) -> Vec<RobotSeat> {
        seats.iter().map(|&seat| RobotSeat { seat, strategy: Strategy::default() }).collect()
    }

    #[test]
    fn a_request_becomes_settings_over_the_defaults() {
        let defaults = TableDefaults { seed: Some(100), pause_deciseconds: 5, ..Default::default() };
        let in_force = rules(DefaultOptions {
            preset: "house".into(),
            options: serde_json::json!({"Timeout": 7}).as_object().cloned().unwrap(),
        });
        let mut options = serde_json::Map::new();
        options.insert("NumRounds".into(), 1.into());
        let request =
            NewTable { name: Some("  Evening  ".into()), options, robots: robots(&[Some(1)]), ..Default::default() };
        let setup = defaults.setup(&in_force, request, || 3).unwrap();
        let s = &setup.settings;
        assert_eq!((s.name.as_str(), s.seed, s.options.timeout, s.options.num_rounds), ("Evening", 103, 7, 1));
        assert_eq!((s.preset.as_str(), s.options.wash_below), ("house", 20), "the defaults' custom preset");
        assert_eq!(s.pause_deciseconds, 5, "at least the server's pause");
        assert_eq!(setup.robots.len(), 1);
        let request = NewTable { preset: Some("american-modern".into()), ..Default::default() };
        let s = defaults.setup(&in_force, request, || 4).unwrap().settings;
        assert_eq!((s.preset.as_str(), s.options.timeout, s.options.wash_below), ("american-modern", 7, 0));
    }

    #[test]
    fn a_bad_request_is_refused_whole_and_takes_no_number() {
        let defaults = TableDefaults { seed: Some(1), ..Default::default() };
        let in_force = rules(DefaultOptions::default());
        let refused = |request: NewTable| {
            defaults.setup(&in_force, request, || panic!("a refused table takes no number")).unwrap_err().to_string()
        };
        assert!(refused(NewTable { robots: robots(&[Some(2), Some(2)]), ..Default::default() }).contains("seat 2"));
        assert!(refused(NewTable { robots: robots(&[Some(4)]), ..Default::default() }).contains("no seat 4"));
        assert!(refused(NewTable { start: true, robots: robots(&[None]), ..Default::default() }).contains("four"));
        assert!(refused(NewTable { pause_deciseconds: Some(51), ..Default::default() }).contains("at most 50"));
        assert!(refused(NewTable { preset: Some("nope".into()), ..Default::default() }).contains("unknown preset"));
        assert!(refused(NewTable { preset: Some("House".into()), ..Default::default() }).contains("unknown preset"));
        assert!(refused(NewTable { name: Some("\u{200B}".into()), ..Default::default() }).contains("visible"));
    }
}
