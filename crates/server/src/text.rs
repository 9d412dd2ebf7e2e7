//! The one policy for text a client gives (player and table names, chat,
//! pause reasons, option values), applied the same way over REST, the
//! WebSocket and game files.
//!
//! - No text may hold NUL or any other control character (C0, DEL, C1), nor
//!   a line or paragraph separator: they break terminals, logs, the classic
//!   line protocol and Postgres (which refuses NUL in text).
//! - A name is trimmed, 1 to [`MAX_NAME_CHARS`] characters (a table's name 1
//!   to [`MAX_TABLE_NAME_CHARS`]), and must show something: characters that
//!   draw nothing (spaces, format characters such as U+200B, bidirectional
//!   controls, variation selectors, fillers) may sit between visible ones,
//!   but a name of nothing else is refused, and bidirectional overrides are
//!   refused anywhere (they let a name pose as another).
//! - Chat and a pause's reason are trimmed, bounded, and single-line.
//! - Names that look alike are told by their [`look_alike_key`] (Unicode's
//!   confusable skeleton, UTS #39, ignoring case, spaces and invisible
//!   characters): `аlice` in Cyrillic, `ａlice` in full width and `al\u{200B}ice`
//!   all look like `alice`. A person may not take a name that looks like a
//!   robot's ([`person_name`]); the accounts and the tables refuse names that
//!   look like one they already have.

use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

/// The longest player name, in characters.
pub const MAX_NAME_CHARS: usize = 32;
/// The longest table name, in characters.
pub const MAX_TABLE_NAME_CHARS: usize = 64;
/// The longest chat message (and pause reason), in characters.
pub const MAX_CHAT_CHARS: usize = 500;
/// The longest name of a custom preset, in characters.
pub const MAX_PRESET_NAME_CHARS: usize = 32;

/// Why a text was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TextError {
    /// The text is empty (or only white space).
    #[error("{what} is empty")]
    Empty {
        /// What the text is ("a name", "a chat message").
        what: &'static str,
    },
    /// The text is too long.
    #[error("{what} has at most {max} characters; this one has {found}")]
    TooLong {
        /// What the text is.
        what: &'static str,
        /// The limit.
        max: usize,
        /// Its length.
        found: usize,
    },
    /// The text holds a control character.
    #[error("{what} may not contain control characters (found U+{code:04X} at character {at})")]
    Control {
        /// What the text is.
        what: &'static str,
        /// The character's code point.
        code: u32,
        /// Its position, from 1.
        at: usize,
    },
    /// The text holds a bidirectional override.
    #[error("{what} may not contain bidirectional controls (found U+{code:04X} at character {at})")]
    Bidi {
        /// What the text is.
        what: &'static str,
        /// The character's code point.
        code: u32,
        /// Its position, from 1.
        at: usize,
    },
    /// A name shows nothing.
    #[error("{what} must contain a visible character")]
    Invisible {
        /// What the text is.
        what: &'static str,
    },
    /// A person's name that looks like a robot's (`Robot 2`).
    #[error("{what} may not look like a robot's name ('{found}'): robots are named Robot 1 to Robot 4")]
    PosesAsRobot {
        /// What the text is.
        what: &'static str,
        /// The name refused.
        found: String,
    },
    /// A word (a preset's name) holds a character words may not hold.
    #[error(
        "{what} is a word of ASCII letters, digits, '-' and '_', starting with a letter or digit \
         (found {found:?} at character {at})"
    )]
    NotAWord {
        /// What the text is.
        what: &'static str,
        /// The character refused.
        found: char,
        /// Its position, from 1.
        at: usize,
    },
}

/// Control characters, and the line and paragraph separators, which break
/// a line as a newline does.
fn breaks_text(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}')
}

/// Refuses control characters and bidirectional overrides anywhere in `text`.
pub fn check_characters(what: &'static str, text: &str) -> Result<(), TextError> {
    for (i, c) in text.chars().enumerate() {
        if breaks_text(c) {
            return Err(TextError::Control { what, code: c as u32, at: i + 1 });
        }
        if is_bidi_control(c) {
            return Err(TextError::Bidi { what, code: c as u32, at: i + 1 });
        }
    }
    Ok(())
}

/// A player's name as it will be shown: trimmed, 1 to [`MAX_NAME_CHARS`]
/// characters, visible, without control characters.
pub fn player_name(text: &str) -> Result<String, TextError> {
    name("a player's name", text, MAX_NAME_CHARS)
}

/// A person's name (a player's, an account's): a name by the policy above
/// that does not look like a robot's.
pub fn person_name(text: &str) -> Result<String, TextError> {
    let name = player_name(text)?;
    if looks_like_a_robot(&name) {
        return Err(TextError::PosesAsRobot { what: "a player's name", found: name });
    }
    Ok(name)
}

/// The key two names that look alike share: the confusable skeleton of
/// UTS #39 (`unicode-security`) of the name in lower case (names are one
/// ignoring case), without spaces or characters that draw nothing; the
/// skeleton is lower-cased again, since some of its prototypes are capitals.
pub fn look_alike_key(name: &str) -> String {
    let visible: String =
        name.chars().filter(|&c| !c.is_whitespace() && !draws_nothing(c)).flat_map(char::to_lowercase).collect();
    unicode_security::skeleton(&visible).flat_map(char::to_lowercase).collect()
}

/// Whether a name looks like a robot's: `Robot`, or `Robot` and digits,
/// however written.
fn looks_like_a_robot(name: &str) -> bool {
    let key = look_alike_key(name);
    let Some(rest) = key.strip_prefix(&look_alike_key("Robot")) else { return false };
    let digits: Vec<String> = ('0'..='9').map(|d| look_alike_key(&d.to_string())).collect();
    let mut rest = rest;
    while !rest.is_empty() {
        match digits.iter().find(|d| !d.is_empty() && rest.starts_with(d.as_str())) {
            Some(d) => rest = &rest[d.len()..],
            None => return false,
        }
    }
    true
}

/// A name from a source that did not follow this policy (an mj-server
/// log): what the policy refuses is dropped and the rest cut to
/// [`MAX_NAME_CHARS`]; `None` when nothing visible is left.
pub fn salvage_name(raw: &str) -> Option<String> {
    let kept: String = raw.chars().filter(|&c| !breaks_text(c) && !is_bidi_control(c)).collect();
    let cut: String = kept.trim().chars().take(MAX_NAME_CHARS).collect();
    player_name(&cut).ok()
}

/// A table's name as it will be shown (as a player's, up to
/// [`MAX_TABLE_NAME_CHARS`] characters).
pub fn table_name(text: &str) -> Result<String, TextError> {
    name("a table's name", text, MAX_TABLE_NAME_CHARS)
}

fn name(what: &'static str, text: &str, max: usize) -> Result<String, TextError> {
    check_characters(what, text)?;
    let trimmed = text.trim_matches(|c: char| c.is_whitespace() || draws_nothing(c));
    if trimmed.is_empty() {
        return Err(if text.trim().is_empty() { TextError::Empty { what } } else { TextError::Invisible { what } });
    }
    let found = trimmed.chars().count();
    if found > max {
        return Err(TextError::TooLong { what, max, found });
    }
    Ok(trimmed.to_string())
}

/// A cluster node's name (`--node-name`): a name by the policy above, of
/// at most 64 characters (shown in the lobby and `GET /api/v1/cluster`).
pub fn node_name(text: &str) -> Result<String, TextError> {
    name("a node's name", text, 64)
}

/// A custom preset's name: a name by the policy above, of at most
/// [`MAX_PRESET_NAME_CHARS`] characters, that is also one word of ASCII
/// letters, digits, `-` and `_` starting with a letter or digit, as the
/// built-in presets' names are: it is written unquoted in URL paths, in the
/// `Preset NAME` line of option files and on command lines.
pub fn preset_name(text: &str) -> Result<String, TextError> {
    let what = "a preset's name";
    let trimmed = name(what, text, MAX_PRESET_NAME_CHARS)?;
    for (i, c) in trimmed.chars().enumerate() {
        let allowed = c.is_ascii_alphanumeric() || (i > 0 && (c == '-' || c == '_'));
        if !allowed {
            return Err(TextError::NotAWord { what, found: c, at: i + 1 });
        }
    }
    Ok(trimmed)
}

/// A preset's description: one line of at most [`MAX_CHAT_CHARS`]
/// characters once trimmed, possibly empty.
pub fn description(text: &str) -> Result<String, TextError> {
    chat("a preset's description", text, true)
}

/// A chat message (or a pause's reason) as it will be shown: trimmed, one
/// line, at most [`MAX_CHAT_CHARS`] characters; empty only if `may_be_empty`.
pub fn chat(what: &'static str, text: &str, may_be_empty: bool) -> Result<String, TextError> {
    check_characters(what, text)?;
    let trimmed = text.trim();
    if trimmed.is_empty() && !may_be_empty {
        return Err(TextError::Empty { what });
    }
    let found = trimmed.chars().count();
    if found > MAX_CHAT_CHARS {
        return Err(TextError::TooLong { what, max: MAX_CHAT_CHARS, found });
    }
    Ok(trimmed.to_string())
}

/// The bidirectional embeddings, overrides and isolates (U+202A-202E,
/// U+2066-2069): they reorder the text around them.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Characters that draw nothing by themselves: format characters (zero-width
/// spaces and joiners, marks, the byte order mark), separators, variation
/// selectors and the Hangul fillers that fonts leave blank.
fn draws_nothing(c: char) -> bool {
    matches!(c.general_category(), GeneralCategory::Format | GeneralCategory::SpaceSeparator)
        || matches!(
            c,
            '\u{034F}' | '\u{115F}' | '\u{1160}' | '\u{3164}' | '\u{FFA0}' | '\u{180B}'..='\u{180F}'
                | '\u{FE00}'..='\u{FE0F}' | '\u{E0100}'..='\u{E01EF}' | '\u{2800}'
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_trimmed_bounded_and_visible() {
        assert_eq!(player_name("  Ann Lee  ").unwrap(), "Ann Lee");
        assert_eq!(player_name("\u{200B}Ann\u{200B}").unwrap(), "Ann", "invisible edges are trimmed");
        assert_eq!(player_name("張偉").unwrap(), "張偉");
        assert_eq!(player_name("A\u{200D}B").unwrap(), "A\u{200D}B", "a joiner between visible characters stays");
        assert_eq!(player_name(&"x".repeat(32)).unwrap().len(), 32);
        assert!(matches!(player_name(&"x".repeat(33)), Err(TextError::TooLong { max: 32, found: 33, .. })));
        assert!(matches!(player_name("   "), Err(TextError::Empty { .. })));
        assert!(matches!(player_name(""), Err(TextError::Empty { .. })));
        for invisible in ["\u{200B}", "\u{FEFF}\u{200B}", "\u{3164}", "\u{2800}", " \u{FE0F} "] {
            assert!(matches!(player_name(invisible), Err(TextError::Invisible { .. })), "{invisible:?}");
        }
        for bad in ["A\u{0}B", "A\nB", "\u{1b}[31mred", "A\u{7f}", "A\u{85}B", "tab\there", "A\u{2028}B"] {
            assert!(matches!(player_name(bad), Err(TextError::Control { .. })), "{bad:?}");
        }
        assert!(matches!(player_name("evil\u{202E}txt.exe"), Err(TextError::Bidi { code: 0x202E, at: 5, .. })));
        assert!(table_name(&"t".repeat(64)).is_ok() && table_name(&"t".repeat(65)).is_err());
    }

    #[test]
    fn preset_names_are_words() {
        assert_eq!(preset_name("  House_rules-2 ").unwrap(), "House_rules-2");
        assert!(matches!(preset_name("two words"), Err(TextError::NotAWord { found: ' ', at: 4, .. })));
        assert!(matches!(preset_name("-dash"), Err(TextError::NotAWord { found: '-', at: 1, .. })));
        assert!(matches!(preset_name("caf\u{e9}"), Err(TextError::NotAWord { found: '\u{e9}', at: 4, .. })));
        assert!(matches!(preset_name("a/b"), Err(TextError::NotAWord { found: '/', .. })));
        assert!(matches!(preset_name(&"p".repeat(33)), Err(TextError::TooLong { max: 32, .. })));
        assert!(matches!(preset_name("a\u{0}b"), Err(TextError::Control { .. })));
        assert!(matches!(preset_name(""), Err(TextError::Empty { .. })));
        let e = preset_name("my house").unwrap_err().to_string();
        assert_eq!(
            e,
            "a preset's name is a word of ASCII letters, digits, '-' and '_', starting with a letter or digit \
             (found ' ' at character 3)"
        );
        assert!(matches!(description("two\nlines"), Err(TextError::Control { .. })));
        assert_eq!(description("  ").unwrap(), "");
    }

    #[test]
    fn look_alike_names_share_a_key() {
        let alice = look_alike_key("alice");
        for twin in ["Alice", "ALICE", "\u{430}lice", "\u{FF41}lice", "al\u{200B}ice", "al ice"] {
            assert_eq!(look_alike_key(twin), alice, "{twin:?}");
        }
        assert_eq!(look_alike_key("r\u{43E}\u{43E}t"), look_alike_key("root"), "Cyrillic o");
        assert_eq!(look_alike_key("r00t"), look_alike_key("root"), "zeros");
        assert_ne!(look_alike_key("alice"), look_alike_key("alicia"));
        assert_ne!(look_alike_key("bob"), look_alike_key("rob"));
    }

    #[test]
    fn a_person_may_not_pose_as_a_robot() {
        for robot in ["Robot 2", "robot", "ROBOT 4", "R\u{43E}bot 1", "Robot  12", "Robot\u{200B}3", "R0bot"] {
            assert!(matches!(person_name(robot), Err(TextError::PosesAsRobot { .. })), "{robot:?}");
        }
        for person in ["Robert", "Robota", "Robot Wars", "Ann", "Robin 2"] {
            assert!(person_name(person).is_ok(), "{person:?}");
        }
        assert!(player_name("Robot 2").is_ok(), "robots themselves are named so");
    }

    #[test]
    fn a_foreign_name_is_salvaged() {
        assert_eq!(salvage_name("  Bob\u{7}\u{202E}by  ").as_deref(), Some("Bobby"));
        assert_eq!(salvage_name(&"n".repeat(50)).map(|n| n.len()), Some(32));
        assert_eq!(salvage_name("\u{200B}\n"), None);
    }

    #[test]
    fn chat_is_one_bounded_line() {
        assert_eq!(chat("a chat message", "  hi there ", false).unwrap(), "hi there");
        assert!(matches!(chat("a chat message", " ", false), Err(TextError::Empty { .. })));
        assert_eq!(chat("a reason", "", true).unwrap(), "");
        assert!(matches!(chat("a chat message", "two\nlines", false), Err(TextError::Control { at: 4, .. })));
        assert!(matches!(chat("a chat message", "nul\u{0}", false), Err(TextError::Control { code: 0, .. })));
        assert!(chat("a chat message", &"é".repeat(500), false).is_ok());
        assert!(matches!(chat("a chat message", &"é".repeat(501), false), Err(TextError::TooLong { .. })));
    }
}
