//! Option files in seed 004's format: one line per option,
//!
//! ```text
//! GameOption 0 NAME TYPE MINPROT 1 VALUE DESCRIPTION
//! ```
//!
//! read into [`GameOptions`] (over the defaults, or over a `Preset NAME`
//! line's preset) and written from them.

use std::fmt;

use super::options::{CATALOGUE, GameOptions, OptionError, OptionType, spec};

impl GameOptions {
    /// Reads an option file: one `GameOption 0 NAME TYPE MINPROT ENABLED VALUE DESC`
    /// line per option, applied over the defaults. Blank lines and lines
    /// starting with `#` are ignored; the pseudo-option `End` is accepted.
    pub fn from_option_file(text: &str) -> Result<GameOptions, OptionError> {
        let mut options = GameOptions::default();
        options.apply_option_file(text)?;
        Ok(options)
    }

    /// Applies an option file over these options. On error nothing changes.
    ///
    /// A line `Preset NAME`, before any `GameOption` line, starts from that
    /// preset's values instead (see [`super::presets`]). The whole result
    /// must pass [`GameOptions::check`].
    pub fn apply_option_file(&mut self, text: &str) -> Result<(), OptionError> {
        let file = OptionFile::parse(text)?;
        let mut next = self.clone();
        if let Some((line, name)) = &file.preset {
            next = super::presets::preset(name)
                .map_err(|e| OptionError::BadLine { line: *line, reason: e.to_string() })?;
        }
        for (line, entry) in &file.entries {
            next.apply_line(entry).map_err(|e| OptionError::BadLine { line: *line, reason: e.to_string() })?;
        }
        next.check()?;
        *self = next;
        Ok(())
    }

    /// Applies one parsed `GameOption` entry (from an option file or from a
    /// reference log), checking that its type matches the catalogue.
    pub fn apply_line(&mut self, entry: &OptionLine) -> Result<(), OptionError> {
        if entry.name == "End" {
            return Ok(());
        }
        let spec = spec(&entry.name).ok_or_else(|| OptionError::Unknown(entry.name.clone()))?;
        if spec.kind.word() != entry.kind {
            return Err(OptionError::WrongType {
                name: entry.name.clone(),
                expected: spec.kind.word(),
                found: entry.kind.clone(),
            });
        }
        self.set(&entry.name, &entry.value)
    }

    /// Writes these options as an option file. With `only_changed`, options
    /// at their default value are left out.
    pub fn to_option_file(&self, only_changed: bool) -> String {
        let defaults = GameOptions::default();
        let mut out = String::new();
        for spec in CATALOGUE {
            let Ok(value) = self.get(spec.name) else { continue };
            if only_changed && defaults.get(spec.name).ok().as_ref() == Some(&value) {
                continue;
            }
            let line = OptionLine {
                name: spec.name.to_string(),
                kind: spec.kind.word().to_string(),
                min_protocol: spec.min_protocol,
                value: value.raw(),
                description: spec.description.to_string(),
            };
            out.push_str(&line.to_string());
            out.push('\n');
        }
        out
    }
}

/// An option file read but not applied: its `Preset NAME` line, if any, and
/// its `GameOption` entries in order, each with its line number (from 1).
/// Entries are parsed, not yet checked against the catalogue.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OptionFile {
    /// The preset named by a `Preset NAME` line, with its line number.
    pub preset: Option<(usize, String)>,
    /// The `GameOption` lines (the pseudo-option `End` left out).
    pub entries: Vec<(usize, OptionLine)>,
}

impl OptionFile {
    /// Reads an option file: blank lines and lines starting with `#` are
    /// ignored; a `Preset NAME` line must come before any `GameOption` line.
    pub fn parse(text: &str) -> Result<OptionFile, OptionError> {
        let mut file = OptionFile::default();
        let mut seen_option = false;
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let at = |e: OptionError| OptionError::BadLine { line: i + 1, reason: e.to_string() };
            if let Some(name) = line.strip_prefix("Preset ") {
                if seen_option {
                    return Err(at(OptionError::Invalid {
                        name: "Preset".into(),
                        reason: "a preset must come before any GameOption line".into(),
                    }));
                }
                file.preset = Some((i + 1, name.trim().to_string()));
                continue;
            }
            let entry = OptionLine::parse(line).map_err(|reason| OptionError::BadLine { line: i + 1, reason })?;
            seen_option = true;
            if entry.name != "End" {
                file.entries.push((i + 1, entry));
            }
        }
        Ok(file)
    }

    /// The entries as options in their JSON types (see [`json_value`]), each
    /// checked against the catalogue on its own: the option-file form of
    /// the options a request or an admin gives as JSON.
    pub fn json_options(&self) -> Result<serde_json::Map<String, serde_json::Value>, OptionError> {
        let mut scratch = GameOptions::default();
        let mut out = serde_json::Map::new();
        for (line, entry) in &self.entries {
            let at = |e: OptionError| OptionError::BadLine { line: *line, reason: e.to_string() };
            scratch.apply_line(entry).map_err(at)?;
            out.insert(entry.name.clone(), scratch.json_value(&entry.name).map_err(at)?);
        }
        Ok(out)
    }
}

/// One `GameOption 0 NAME TYPE MINPROT ENABLED VALUE DESC` line, unvalidated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OptionLine {
    /// The option name.
    pub name: String,
    /// The type word as written.
    pub kind: String,
    /// The minimum protocol version as written.
    pub min_protocol: u32,
    /// The raw value.
    pub value: String,
    /// The description (may be empty).
    pub description: String,
}

impl OptionLine {
    /// Parses a `GameOption ...` line; the error says what is wrong.
    pub fn parse(line: &str) -> Result<OptionLine, String> {
        let mut fields = line.splitn(8, ' ');
        let mut next = |what: &str| fields.next().filter(|f| !f.is_empty()).ok_or(format!("missing {what}"));
        let keyword = next("keyword")?;
        if keyword != "GameOption" {
            return Err(format!("expected a GameOption line, found '{keyword}'"));
        }
        next("setter id")?.parse::<i64>().map_err(|_| "the setter id must be an integer".to_string())?;
        let name = next("option name")?.to_string();
        let kind = next("option type")?.to_string();
        if OptionType::from_word(&kind).is_none() {
            return Err(format!("'{kind}' is not an option type (bool, int, nat, score, string)"));
        }
        let min_protocol = next("minimum protocol version")?
            .parse::<u32>()
            .map_err(|_| "the minimum protocol version must be a number".to_string())?;
        let enabled = next("enabled flag")?;
        if enabled != "0" && enabled != "1" {
            return Err(format!("the enabled flag must be 0 or 1, not '{enabled}'"));
        }
        let value = next("value")?.to_string();
        let description = fields.next().unwrap_or("").to_string();
        Ok(OptionLine { name, kind, min_protocol, value, description })
    }
}

impl fmt::Display for OptionLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "GameOption 0 {} {} {} 1 {} {}",
            self.name, self.kind, self.min_protocol, self.value, self.description
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::options::ScoreValue;

    #[test]
    fn option_file_round_trip() {
        let text = "GameOption 0 FlowersOwnEach score 0 1 4 score for each own flower or season\n\
                    GameOption 0 FlowersBouquet score 0 1 50000000 score for all four flowers or all four seasons\n\
                    GameOption 0 NumRounds nat 0 1 2 number of rounds to play\n";
        let o = GameOptions::from_option_file(text).unwrap();
        assert_eq!(o.flowers_own_each, ScoreValue::points(4));
        assert_eq!(o.flowers_bouquet.centi_limits(), 50);
        assert_eq!(o.num_rounds, 2);
        assert_eq!(o.to_option_file(true), text);
        assert_eq!(GameOptions::from_option_file(&o.to_option_file(false)).unwrap(), o);
    }

    #[test]
    fn an_option_file_reads_as_json_options() {
        let text = "# house\nPreset shanghai-expat\nGameOption 0 NoLimit bool 0 1 1 x\n\
                    GameOption 0 NumRounds nat 0 1 8 y\nGameOption 0 End bool 0 1 0 end\n";
        let file = OptionFile::parse(text).unwrap();
        assert_eq!(file.preset, Some((2, "shanghai-expat".to_string())));
        let options = serde_json::Value::Object(file.json_options().unwrap());
        assert_eq!(options, serde_json::json!({"NoLimit": true, "NumRounds": 8}));
        let e = OptionFile::parse("GameOption 0 NumRounds nat 0 1 3 y").unwrap().json_options().unwrap_err();
        assert!(e.to_string().starts_with("option file line 1: ") && e.to_string().contains("multiple of 4"), "{e}");
        let e = OptionFile::parse("GameOption 0 End bool 0 1 0 end\nPreset x").unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("must come before"), "{e}");
    }
}
