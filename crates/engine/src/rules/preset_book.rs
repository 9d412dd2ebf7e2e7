//! The presets a server knows and the defaults of its new tables, as
//! values: the built-in presets ([`super::presets::PRESETS`]), the custom
//! presets its admins define, and [`DefaultOptions`] (a preset and options
//! over it). Everything here is pure: the store keeps these values and
//! `table::rulebook` holds the current ones; here they are checked against
//! the option catalogue and turned into a game's options.
//!
//! A custom preset is always based on a built-in preset and keeps whole what
//! it sets over it, so that changing one custom preset can never change
//! another. Names are looked up exactly as written (as the built-in names
//! always were) and are unique ignoring case, so that two presets cannot
//! differ by case alone.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::options::GameOptions;
use super::presets::{self, PRESETS, Preset};

/// Options by catalogue name, in their JSON types (booleans, numbers, words).
pub type OptionMap = Map<String, Value>;

/// A preset an admin defined: a built-in preset and options over it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CustomPreset {
    /// Its name (see the server's `text::preset_name` for the form).
    pub name: String,
    /// What it is for (one line, may be empty).
    pub description: String,
    /// The built-in preset it starts from.
    pub based_on: String,
    /// The options it sets over `based_on`, in their JSON types.
    pub options: OptionMap,
    /// When it was created (µs since the epoch).
    pub created_us: i64,
    /// When it was last changed.
    pub updated_us: i64,
}

/// Why a preset, or options over one, was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PresetError {
    /// No preset has this name.
    #[error("unknown preset '{name}'; the presets are {known}")]
    Unknown {
        /// The name asked for.
        name: String,
        /// Every preset's name, comma-separated.
        known: String,
    },
    /// The options are not valid (an unknown option, a bad value, a
    /// combination ruled out); the message says which and why.
    #[error("{0}")]
    Options(String),
    /// A custom preset may only start from a built-in one.
    #[error("a custom preset is based on a built-in preset ({names}), not '{0}'", names = built_in_names())]
    BaseNotBuiltIn(String),
    /// The name is another preset's, ignoring case.
    #[error("the name '{name}' is taken by the {} preset '{existing}' (preset names are unique ignoring case)",
        if *.built_in { "built-in" } else { "custom" })]
    Taken {
        /// The name asked for.
        name: String,
        /// The preset that has it.
        existing: String,
        /// Whether that preset is a built-in one.
        built_in: bool,
    },
    /// Built-in presets cannot be changed or deleted.
    #[error("'{0}' is a built-in preset: built-in presets are read-only")]
    ReadOnly(String),
}

fn built_in_names() -> String {
    PRESETS.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
}

/// One preset as the API lists it, built-in or custom.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct PresetInfo {
    /// Its name.
    pub name: String,
    /// What it is for.
    pub description: String,
    /// Whether it is built into the server (and read-only).
    pub built_in: bool,
    /// The built-in preset a custom preset starts from; `null` for a built-in one.
    pub based_on: Option<String>,
    /// The options it sets over its base (a built-in preset: over mj-server's defaults).
    #[cfg_attr(feature = "openapi", schema(value_type = HashMap<String, crate::rules::options::OptionValue>))]
    pub overrides: OptionMap,
    /// The value of every option under it.
    #[cfg_attr(feature = "openapi", schema(value_type = HashMap<String, crate::rules::options::OptionValue>))]
    pub options: OptionMap,
    /// When a custom preset was created (µs since the epoch); `null` for a built-in one.
    pub created_us: Option<i64>,
    /// When a custom preset was last changed; `null` for a built-in one.
    pub updated_us: Option<i64>,
}

/// The built-in presets and a server's custom presets.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PresetBook {
    /// Custom presets by their name in lower case.
    custom: BTreeMap<String, CustomPreset>,
}

/// The key a preset name is unique by.
pub fn name_key(name: &str) -> String {
    name.to_lowercase()
}

/// The built-in preset called exactly `name`.
pub fn built_in(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name == name)
}

/// `options` set over `base`, checked whole; also the options as they are
/// kept: each in its JSON type (`1` for a boolean becomes `true`, `"10"`
/// for a number becomes `10`), so that what is stored and shown is exact.
pub fn apply_over(base: GameOptions, options: &OptionMap) -> Result<(GameOptions, OptionMap), PresetError> {
    let applied = base.with_json(options).map_err(|e| PresetError::Options(e.to_string()))?;
    let mut kept = OptionMap::new();
    for name in options.keys() {
        let value = applied.json_value(name).map_err(|e| PresetError::Options(e.to_string()))?;
        kept.insert(name.clone(), value);
    }
    Ok((applied, kept))
}

impl PresetBook {
    /// The built-in presets only.
    pub fn built_in_only() -> PresetBook {
        PresetBook::default()
    }

    /// The built-in presets and these custom ones (each already checked
    /// with [`PresetBook::check_custom`]).
    pub fn with_custom(custom: impl IntoIterator<Item = CustomPreset>) -> PresetBook {
        PresetBook { custom: custom.into_iter().map(|p| (name_key(&p.name), p)).collect() }
    }

    /// The custom presets, in the order of their names ignoring case.
    pub fn custom(&self) -> impl Iterator<Item = &CustomPreset> {
        self.custom.values()
    }

    /// The custom preset called exactly `name`.
    pub fn custom_named(&self, name: &str) -> Option<&CustomPreset> {
        self.custom.get(&name_key(name)).filter(|p| p.name == name)
    }

    /// Whether a preset is called exactly `name`.
    pub fn contains(&self, name: &str) -> bool {
        built_in(name).is_some() || self.custom_named(name).is_some()
    }

    fn unknown(&self, name: &str) -> PresetError {
        let known: Vec<&str> = PRESETS.iter().map(|p| p.name).chain(self.custom().map(|p| p.name.as_str())).collect();
        PresetError::Unknown { name: name.to_string(), known: known.join(", ") }
    }

    /// The options of the preset called `name`, built-in or custom.
    pub fn options(&self, name: &str) -> Result<GameOptions, PresetError> {
        if built_in(name).is_some() {
            return presets::preset(name).map_err(|e| PresetError::Options(e.to_string()));
        }
        let custom = self.custom_named(name).ok_or_else(|| self.unknown(name))?;
        let base = presets::preset(&custom.based_on).map_err(|e| PresetError::Options(e.to_string()))?;
        apply_over(base, &custom.options)
            .map(|(options, _)| options)
            .map_err(|e| PresetError::Options(format!("preset '{name}': {e}")))
    }

    /// Refuses `name` if a preset has it, ignoring case.
    pub fn check_name_free(&self, name: &str) -> Result<(), PresetError> {
        let key = name_key(name);
        let taken = |existing: &str, built_in: bool| PresetError::Taken {
            name: name.to_string(),
            existing: existing.to_string(),
            built_in,
        };
        if let Some(p) = PRESETS.iter().find(|p| name_key(p.name) == key) {
            return Err(taken(p.name, true));
        }
        match self.custom.get(&key) {
            Some(p) => Err(taken(&p.name, false)),
            None => Ok(()),
        }
    }

    /// Checks a custom preset's base and options; returns its options as
    /// they are kept (see [`apply_over`]).
    pub fn check_custom(based_on: &str, options: &OptionMap) -> Result<OptionMap, PresetError> {
        if built_in(based_on).is_none() {
            return Err(PresetError::BaseNotBuiltIn(based_on.to_string()));
        }
        let base = presets::preset(based_on).map_err(|e| PresetError::Options(e.to_string()))?;
        apply_over(base, options).map(|(_, kept)| kept)
    }

    /// This book with `preset` added, or put in place of the custom preset of
    /// the same name.
    pub fn with(&self, preset: CustomPreset) -> PresetBook {
        let mut next = self.clone();
        next.custom.insert(name_key(&preset.name), preset);
        next
    }

    /// This book without the custom preset called `name`.
    pub fn without(&self, name: &str) -> PresetBook {
        let mut next = self.clone();
        next.custom.remove(&name_key(name));
        next
    }

    /// The preset called `name`, as the API shows it.
    pub fn info(&self, name: &str) -> Result<PresetInfo, PresetError> {
        if let Some(p) = built_in(name) {
            let options = self.options(name)?;
            let mut overrides = OptionMap::new();
            for (option, _) in p.values {
                overrides.insert(
                    option.to_string(),
                    options.json_value(option).map_err(|e| PresetError::Options(e.to_string()))?,
                );
            }
            return Ok(PresetInfo {
                name: p.name.to_string(),
                description: p.description.to_string(),
                built_in: true,
                based_on: None,
                overrides,
                options: options.to_json_map(),
                created_us: None,
                updated_us: None,
            });
        }
        let custom = self.custom_named(name).ok_or_else(|| self.unknown(name))?;
        Ok(PresetInfo {
            name: custom.name.clone(),
            description: custom.description.clone(),
            built_in: false,
            based_on: Some(custom.based_on.clone()),
            overrides: custom.options.clone(),
            options: self.options(name)?.to_json_map(),
            created_us: Some(custom.created_us),
            updated_us: Some(custom.updated_us),
        })
    }

    /// Every preset: the built-in ones first, the default first among them,
    /// then the custom ones by name ignoring case.
    pub fn listing(&self) -> Result<Vec<PresetInfo>, PresetError> {
        PRESETS.iter().map(|p| p.name).chain(self.custom().map(|p| p.name.as_str())).map(|n| self.info(n)).collect()
    }
}

/// The defaults of new tables: the preset a table starts from when its
/// request names none, and options set over whichever preset it starts from
/// (a request's own options are set over these). The server's flags give
/// the first value (`--preset`, `--option-file`, `--timeout`); admins change
/// it over REST.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct DefaultOptions {
    /// The preset of a table whose request names none.
    pub preset: String,
    /// Options set over the table's preset, by catalogue name.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = HashMap<String, crate::rules::options::OptionValue>))]
    pub options: OptionMap,
}

impl Default for DefaultOptions {
    fn default() -> DefaultOptions {
        DefaultOptions { preset: presets::DEFAULT_PRESET.to_string(), options: OptionMap::new() }
    }
}

impl DefaultOptions {
    /// Checks these defaults against `book` (the preset exists, the options
    /// set over it are valid); returns them with their options as kept (see
    /// [`apply_over`]) and the options a table opened without a preset or
    /// options would have.
    pub fn check(&self, book: &PresetBook) -> Result<(DefaultOptions, GameOptions), PresetError> {
        let base = book.options(&self.preset)?;
        let (options, kept) = apply_over(base, &self.options)?;
        Ok((DefaultOptions { preset: self.preset.clone(), options: kept }, options))
    }

    /// A new table's preset and options: `preset` (else these defaults'
    /// preset), these defaults' options over it, then the request's
    /// `options` over those.
    pub fn table_options(
        &self,
        book: &PresetBook,
        preset: Option<&str>,
        options: &OptionMap,
    ) -> Result<(String, GameOptions), PresetError> {
        let name = preset.unwrap_or(&self.preset);
        let base = book.options(name)?;
        let (base, _) = apply_over(base, &self.options).map_err(|e| {
            PresetError::Options(format!("the server's default options do not suit preset '{name}': {e}"))
        })?;
        let (options, _) = apply_over(base, options)?;
        Ok((name.to_string(), options))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(value: Value) -> OptionMap {
        value.as_object().cloned().unwrap()
    }

    fn house() -> CustomPreset {
        CustomPreset {
            name: "House".into(),
            description: "our rules".into(),
            based_on: "shanghai-expat".into(),
            options: map(json!({"WashBelow": 30, "NumRounds": 1})),
            created_us: 1,
            updated_us: 2,
        }
    }

    #[test]
    fn a_custom_preset_is_its_base_with_its_options() {
        let book = PresetBook::with_custom([house()]);
        let o = book.options("House").unwrap();
        assert!(o.animals && o.tile_swap, "from shanghai-expat");
        assert_eq!((o.wash_below, o.num_rounds), (30, 1));
        assert!(matches!(book.options("house"), Err(PresetError::Unknown { .. })), "names are exact");
        let e = book.options("nope").unwrap_err().to_string();
        assert!(e.starts_with("unknown preset 'nope'") && e.ends_with("australian-rounding, House"), "{e}");
        let info = book.info("House").unwrap();
        assert_eq!(
            (info.built_in, info.based_on.as_deref(), info.updated_us),
            (false, Some("shanghai-expat"), Some(2))
        );
        assert_eq!(info.options["WashBelow"], 30);
        let listing = book.listing().unwrap();
        assert_eq!(listing.len(), PRESETS.len() + 1);
        assert_eq!(listing[0].name, presets::DEFAULT_PRESET);
        assert_eq!(listing.last().unwrap().name, "House");
        let j = book.info("japanese-rounding").unwrap();
        assert_eq!((j.built_in, j.overrides["LosersSettle"].clone()), (true, json!(false)));
    }

    #[test]
    fn names_are_unique_ignoring_case() {
        let book = PresetBook::with_custom([house()]);
        let e = book.check_name_free("HOUSE").unwrap_err();
        assert_eq!(e, PresetError::Taken { name: "HOUSE".into(), existing: "House".into(), built_in: false });
        let e = book.check_name_free("Shanghai-Expat").unwrap_err().to_string();
        assert!(e.contains("built-in preset 'shanghai-expat'"), "{e}");
        assert!(book.check_name_free("garden").is_ok());
        assert!(book.without("House").check_name_free("house").is_ok());
    }

    #[test]
    fn custom_options_are_checked_and_kept_in_their_types() {
        let kept =
            PresetBook::check_custom("chinese-classical", &map(json!({"NoLimit": 1, "NumRounds": "8"}))).unwrap();
        assert_eq!(Value::Object(kept), json!({"NoLimit": true, "NumRounds": 8}));
        let e = PresetBook::check_custom("chinese-classical", &map(json!({"Bogus": 1}))).unwrap_err();
        assert_eq!(e.to_string(), "unknown game option 'Bogus'");
        let e = PresetBook::check_custom("chinese-classical", &map(json!({"NumRounds": 3}))).unwrap_err();
        assert!(e.to_string().contains("1, 2 or a multiple of 4"), "{e}");
        let e = PresetBook::check_custom("chinese-classical", &map(json!({"RaiseMinimumOn5thExtra": true})));
        assert!(e.unwrap_err().to_string().contains("needs a minimum number of doubles"));
        let e = PresetBook::check_custom("House", &OptionMap::new()).unwrap_err().to_string();
        assert!(e.contains("based on a built-in preset") && e.contains("not 'House'"), "{e}");
    }

    #[test]
    fn defaults_are_set_over_the_tables_preset_and_under_its_request() {
        let book = PresetBook::with_custom([house()]);
        let defaults = DefaultOptions { preset: "House".into(), options: map(json!({"Timeout": 30})) };
        let (_, o) = defaults.check(&book).unwrap();
        assert_eq!((o.timeout, o.wash_below), (30, 30));
        let (name, o) = defaults.table_options(&book, None, &map(json!({"Timeout": 5}))).unwrap();
        assert_eq!((name.as_str(), o.timeout, o.wash_below, o.animals), ("House", 5, 30, true));
        let (name, o) = defaults.table_options(&book, Some("american-modern"), &OptionMap::new()).unwrap();
        assert_eq!((name.as_str(), o.timeout, o.animals), ("american-modern", 30, false));
        let unit = DefaultOptions { preset: "House".into(), options: map(json!({"RoundUnit": 1})) };
        assert!(unit.check(&book).is_ok(), "shanghai-expat rounds at pay time");
        let e = unit.table_options(&book, Some("american-modern"), &OptionMap::new()).unwrap_err().to_string();
        assert!(e.starts_with("the server's default options do not suit preset 'american-modern'"), "{e}");
        assert!(matches!(defaults.check(&PresetBook::built_in_only()), Err(PresetError::Unknown { .. })));
    }
}
