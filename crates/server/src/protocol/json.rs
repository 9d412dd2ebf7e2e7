//! Reading a client's JSON strictly, the one way for REST bodies, WebSocket
//! messages and game files.
//!
//! serde's derives are lenient in two ways no client means: a struct (or an
//! internally tagged enum such as a WebSocket message) may be written as an
//! array of its fields in order (`["chat","hi"]` reads as a chat message),
//! and a string may hold NUL, which Postgres refuses to store. Here a value
//! is read as usual, then written back: wherever the client sent an array
//! and the type writes an object, the client wrote a struct as an array, and
//! the message is refused; and no string or key may contain NUL.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Why a client's JSON was refused.
#[derive(Debug, thiserror::Error)]
pub enum JsonError {
    /// Not JSON, or not of the expected shape or types (serde's message).
    #[error("bad JSON: {0}")]
    Invalid(#[from] serde_json::Error),
    /// An array where an object is expected.
    #[error("bad JSON: expected an object at {at}, found an array")]
    ArrayForObject {
        /// Where, as a path from the top (`$` is the whole message).
        at: String,
    },
    /// A NUL character in a string or a key.
    #[error("bad JSON: text may not contain NUL (U+0000), found at {at}")]
    Nul {
        /// Where, as a path from the top.
        at: String,
    },
}

/// Reads `text` as a `T`, strictly (see the module's documentation).
pub fn from_str<T: DeserializeOwned + Serialize>(text: &str) -> Result<T, JsonError> {
    // Read as the type first, for serde's precise messages (field names,
    // line and column); then as a value, for the checks.
    let typed: T = serde_json::from_str(text)?;
    let sent: Value = serde_json::from_str(text)?;
    check(&sent, &typed)?;
    Ok(typed)
}

/// Reads an already parsed `value` as a `T`, strictly.
pub fn from_value<T: DeserializeOwned + Serialize>(value: Value) -> Result<T, JsonError> {
    let typed: T = T::deserialize(&value)?;
    check(&value, &typed)?;
    Ok(typed)
}

fn check<T: Serialize>(sent: &Value, typed: &T) -> Result<(), JsonError> {
    let mut path = String::from("$");
    no_nul(sent, &mut path)?;
    // Our own types always serialise.
    let written = serde_json::to_value(typed).unwrap_or(Value::Null);
    same_shape(sent, &written, &mut path)
}

fn no_nul(value: &Value, path: &mut String) -> Result<(), JsonError> {
    match value {
        Value::String(s) if s.contains('\0') => Err(JsonError::Nul { at: path.clone() }),
        Value::Array(items) => {
            items.iter().enumerate().try_for_each(|(i, v)| within(path, &format!("[{i}]"), |p| no_nul(v, p)))
        }
        Value::Object(map) => map.iter().try_for_each(|(k, v)| {
            if k.contains('\0') {
                return Err(JsonError::Nul { at: format!("{path} (a key)") });
            }
            within(path, &format!(".{k}"), |p| no_nul(v, p))
        }),
        _ => Ok(()),
    }
}

/// Walks what was sent beside what the type writes back: an array sent
/// where the type writes an object is refused.
fn same_shape(sent: &Value, written: &Value, path: &mut String) -> Result<(), JsonError> {
    match (sent, written) {
        (Value::Array(_), Value::Object(_)) => Err(JsonError::ArrayForObject { at: path.clone() }),
        (Value::Array(a), Value::Array(b)) => a
            .iter()
            .zip(b)
            .enumerate()
            .try_for_each(|(i, (x, y))| within(path, &format!("[{i}]"), |p| same_shape(x, y, p))),
        (Value::Object(a), Value::Object(b)) => a
            .iter()
            .filter_map(|(k, x)| b.get(k).map(|y| (k, x, y)))
            .try_for_each(|(k, x, y)| within(path, &format!(".{k}"), |p| same_shape(x, y, p))),
        _ => Ok(()),
    }
}

/// Runs `f` with `step` appended to the path, then takes it off again.
fn within<R>(path: &mut String, step: &str, f: impl FnOnce(&mut String) -> R) -> R {
    let len = path.len();
    path.push_str(step);
    let r = f(path);
    path.truncate(len);
    r
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;
    use crate::protocol::ws::ClientMessage;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Sit {
        name: String,
        #[serde(default)]
        seat: Option<u8>,
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Table {
        robots: Vec<Sit>,
        #[serde(default)]
        tags: Vec<String>,
    }

    #[test]
    fn objects_read_as_usual() {
        assert_eq!(from_str::<Sit>(r#"{"name":"Ann","seat":2}"#).unwrap(), Sit { name: "Ann".into(), seat: Some(2) });
        let t: Table = from_str(r#"{"robots":[{"name":"R"}],"tags":["a","b"]}"#).unwrap();
        assert_eq!(t.tags, ["a", "b"], "arrays where arrays belong");
        assert!(matches!(from_str::<ClientMessage>(r#"{"type":"chat","text":"hi"}"#), Ok(ClientMessage::Chat { .. })));
    }

    #[test]
    fn a_number_reads_back_as_it_was_written() {
        // The input fuzz target ws_json found: a long integer read as a
        // float, which the default (fast, not correctly rounded) reading
        // turned into a value that read back as another.
        let text = r#"{"type": "set_option", "name": "Score", "value": 40009999999999999999999999999999}"#;
        let message = from_str::<ClientMessage>(text).unwrap();
        let written = serde_json::to_string(&message).unwrap();
        assert_eq!(from_str::<ClientMessage>(&written).unwrap(), message, "{written}");
    }

    #[test]
    fn an_array_in_place_of_an_object_is_refused_wherever_it_is() {
        let e = from_str::<Sit>(r#"["array sitter",2]"#).unwrap_err();
        assert_eq!(e.to_string(), "bad JSON: expected an object at $, found an array");
        let e = from_str::<Table>(r#"{"robots":[{"name":"R"},["S",1]]}"#).unwrap_err();
        assert_eq!(e.to_string(), "bad JSON: expected an object at $.robots[1], found an array");
        let e = from_str::<ClientMessage>(r#"["chat","hi"]"#).unwrap_err();
        assert!(matches!(e, JsonError::ArrayForObject { .. }), "{e}");
        let e = from_str::<ClientMessage>(r#"{"type":"act","action":["discard","1B",false]}"#).unwrap_err();
        assert_eq!(e.to_string(), "bad JSON: expected an object at $.action, found an array");
    }

    #[test]
    fn nul_is_refused_in_strings_and_keys() {
        let e = from_str::<Sit>("{\"name\":\"A\\u0000B\"}").unwrap_err();
        assert_eq!(e.to_string(), "bad JSON: text may not contain NUL (U+0000), found at $.name");
        let e = from_value::<Value>(serde_json::json!({"a\u{0}": 1})).unwrap_err();
        assert!(matches!(e, JsonError::Nul { .. }), "{e}");
    }

    #[test]
    fn serde_errors_keep_their_message() {
        let e = from_str::<Sit>(r#"{"name":7}"#).unwrap_err();
        assert!(e.to_string().contains("invalid type: integer `7`, expected a string"), "{e}");
        assert!(from_str::<Sit>("{nope").is_err());
    }
}
