//! Rule presets: named sets of option values for the settlement conventions
//! of seeds 000-004. A preset is applied over mj-server's defaults; options
//! can still be overridden one by one afterwards.

use super::options::{GameOptions, OptionError};

/// A named preset: the options it changes from mj-server's defaults.
#[derive(Clone, Copy, Debug)]
pub struct Preset {
    /// The name used in option files, the `settle` calculator and the API.
    pub name: &'static str,
    /// What the preset is for.
    pub description: &'static str,
    /// `(option, value)` pairs, in option-file form, applied over the defaults.
    pub values: &'static [(&'static str, &'static str)],
}

/// The name of the default preset.
pub const DEFAULT_PRESET: &str = "chinese-classical";

/// Every preset, the default first.
pub const PRESETS: &[Preset] = &[
    Preset {
        name: "chinese-classical",
        description: "The Chinese Classical game as mj-server plays it (seeds 001, 004): no rounding, \
                      everyone pays the winner, losers settle differences, East pays and receives double",
        values: &[],
    },
    Preset {
        name: "shanghai-expat",
        description: "Shanghai Expat house rules (seed 003): animals, East's tile swap, one chow and one suit, \
                      base score rounded up to ten, limit 1000 (2000 for East), double dice, payments \
                      rounded to the nearest 100, losers' differences under 50 wash",
        values: &[
            ("Animals", "1"),
            ("AnimalScore", "10000"),
            ("TileSwap", "1"),
            ("OneChowOneSuit", "1"),
            ("RoundBeforeDoubles", "up"),
            ("RoundMode", "off"),
            ("RoundUnit", "100"),
            ("RoundAtPayTime", "1"),
            ("ScoreLimit", "1000"),
            ("EastDoubles", "1"),
            ("LosersSettle", "1"),
            ("DoubleDice", "1"),
            ("WashBelow", "50"),
        ],
    },
    Preset {
        name: "american-modern",
        description: "Four Winds' American Modern rounding (seed 000): basic points rounded up to ten before \
                      doubles, the score rounded off to ten",
        values: &[("RoundBeforeDoubles", "up"), ("RoundMode", "off"), ("RoundUnit", "10")],
    },
    Preset {
        name: "japanese-rounding",
        description: "Japanese-style settlement (seed 000): basic points rounded up to ten before doubles, \
                      payments rounded up to 100 at pay time, the discarder pays for all losers, \
                      losers do not settle",
        values: &[
            ("RoundBeforeDoubles", "up"),
            ("RoundMode", "up"),
            ("RoundUnit", "100"),
            ("RoundAtPayTime", "1"),
            ("DiscarderPays", "for-all"),
            ("LosersSettle", "0"),
        ],
    },
    Preset {
        name: "australian-rounding",
        description: "Australian settlement (seed 000): payments rounded off to the nearest 100 at pay time",
        values: &[("RoundMode", "off"), ("RoundUnit", "100"), ("RoundAtPayTime", "1")],
    },
];

/// The options of the preset called `name`.
pub fn preset(name: &str) -> Result<GameOptions, OptionError> {
    let p = PRESETS.iter().find(|p| p.name == name).ok_or_else(|| OptionError::Invalid {
        name: "Preset".into(),
        reason: format!(
            "unknown preset '{name}'; the presets are {}",
            PRESETS.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
        ),
    })?;
    let mut options = GameOptions::default();
    for (option, value) in p.values {
        options.set(option, value)?;
    }
    options.check()?;
    Ok(options)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::options::{DiscarderPays, Rounding};

    #[test]
    fn every_preset_is_valid_and_the_default_is_mj_server() {
        for p in PRESETS {
            assert!(preset(p.name).is_ok(), "{}", p.name);
        }
        assert_eq!(PRESETS[0].name, DEFAULT_PRESET);
        assert_eq!(preset(DEFAULT_PRESET).unwrap(), GameOptions::default());
        let j = preset("japanese-rounding").unwrap();
        assert_eq!((j.round_mode, j.round_unit, j.discarder_pays), (Rounding::Up, 100, DiscarderPays::ForAll));
        assert!(preset("mahjong-2000").unwrap_err().to_string().contains("unknown preset 'mahjong-2000'"));
    }

    #[test]
    fn an_option_file_names_a_preset_and_overrides_it() {
        let text = "# house rules\nPreset shanghai-expat\nGameOption 0 WashBelow nat 1110 1 30 wash\n";
        let o = GameOptions::from_option_file(text).unwrap();
        assert!(o.animals && o.double_dice);
        assert_eq!(o.wash_below, 30);
        let late = "GameOption 0 WashBelow nat 1110 1 30 wash\nPreset shanghai-expat\n";
        let e = GameOptions::from_option_file(late).unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("must come before"), "{e}");
    }
}
