//! The settlement calculator: settles any four scores under any options,
//! without playing. `mahjong-server settle` reads a [`SettleRequest`] as JSON
//! and prints the [`SettleResponse`]; the server will offer the same over
//! REST. It is a thin layer over [`settlement::settle`], the function the
//! engine itself uses, so the calculator and the game cannot disagree.
//!
//! Players are given as indices 0-3 into `scores`; `east` says which of them
//! is East, and the others follow in playing order (East+1 is South).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::options::{GameOptions, JsonOptionsError, OptionError};
use super::preset_book::{PresetBook, PresetError};
use super::presets;
use super::scoring;
use super::settlement::{self, SettlementInput};
use super::tile::Wind;

/// The calculator's input.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct SettleRequest {
    /// A rule preset (default `chinese-classical`).
    #[serde(default)]
    pub preset: Option<String>,
    /// Options set over the preset, by catalogue name; booleans as
    /// true/false (or 0/1), numbers as numbers, words as strings.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = HashMap<String, crate::rules::options::OptionValue>))]
    pub options: serde_json::Map<String, Value>,
    /// Which player is East.
    #[cfg_attr(feature = "openapi", schema(maximum = 3))]
    pub east: usize,
    /// The winner, `null` for a wash-out, or (with `MultipleWinners`) a list
    /// of the players who went out on the same discard.
    #[cfg_attr(feature = "openapi", schema(schema_with = winner_schema))]
    pub winner: Value,
    /// The player who discarded the winning tile; `null` when self-drawn.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(maximum = 3))]
    pub discarder: Option<usize>,
    /// The player liable for letting off a cannon.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(maximum = 3))]
    pub cannon: Option<usize>,
    /// Each player's hand: a score after doubles, `{"points": P, "doubles": D}`
    /// or `{"limit": true}`.
    #[cfg_attr(feature = "openapi", schema(schema_with = scores_schema))]
    pub scores: Vec<Value>,
    /// The number of this hand among the dealer's extra hands (0 = none).
    #[serde(default)]
    pub extra_hands: u32,
    /// The dice rolled a double (needs the `DoubleDice` option).
    #[serde(default)]
    pub double_dice: bool,
}

/// The schema of [`SettleRequest::winner`]: a player, a list of players, or `null`.
#[cfg(feature = "openapi")]
fn winner_schema() -> utoipa::openapi::schema::Schema {
    use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, OneOfBuilder, SchemaType, Type};
    let player = || ObjectBuilder::new().schema_type(SchemaType::new(Type::Integer)).minimum(Some(0)).maximum(Some(3));
    OneOfBuilder::new()
        .item(ObjectBuilder::new().schema_type(SchemaType::new(Type::Null)))
        .item(player())
        .item(ArrayBuilder::new().items(player()).min_items(Some(1)).max_items(Some(4)))
        .description(Some(
            "The winner, `null` for a wash-out, or (with `MultipleWinners`) a list of the players who went out on \
             the same discard.",
        ))
        .into()
}

/// The schema of [`SettleRequest::scores`]: four hand scores, each a score
/// after doubles, `{"points": P, "doubles": D}` or `{"limit": true}`.
#[cfg(feature = "openapi")]
fn scores_schema() -> utoipa::openapi::schema::Schema {
    use utoipa::openapi::schema::{AdditionalProperties, ArrayBuilder, ObjectBuilder, OneOfBuilder, SchemaType, Type};
    let whole =
        |max: i64| ObjectBuilder::new().schema_type(SchemaType::new(Type::Integer)).minimum(Some(0)).maximum(Some(max));
    let limit = ObjectBuilder::new().schema_type(SchemaType::new(Type::Boolean)).enum_values(Some([true]));
    let score = OneOfBuilder::new()
        .item(whole(100_000_000).description(Some("A score after doubles.")))
        .item(
            ObjectBuilder::new()
                .property("points", whole(100_000_000))
                .property("doubles", whole(64))
                .required("points")
                .required("doubles")
                .additional_properties(Some(AdditionalProperties::FreeForm(false)))
                .description(Some("Basic points and doubles.")),
        )
        .item(
            ObjectBuilder::new()
                .property("limit", limit)
                .required("limit")
                .additional_properties(Some(AdditionalProperties::FreeForm(false)))
                .description(Some("A limit hand.")),
        );
    ArrayBuilder::new()
        .items(score)
        .min_items(Some(4))
        .max_items(Some(4))
        .description(Some(
            "Each player's hand: a score after doubles, `{\"points\": P, \"doubles\": D}` or `{\"limit\": true}`.",
        ))
        .into()
}

/// One payment in the calculator's answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CalcPayment {
    /// The paying player.
    pub from: usize,
    /// The receiving player.
    pub to: usize,
    /// The amount.
    pub amount: i64,
}

/// The calculator's answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SettleResponse {
    /// Each player's balance; sums to 0.
    pub net: [i64; 4],
    /// Every payment, in the order the settlement lists them.
    pub payments: Vec<CalcPayment>,
}

/// Why a request cannot be settled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CalcError {
    /// The JSON does not have the request's shape.
    #[error("bad request: {0}")]
    Json(String),
    /// An option or preset is wrong.
    #[error(transparent)]
    Option(#[from] OptionError),
    /// A field has a value that makes no sense.
    #[error("{field}: {reason}")]
    Field {
        /// The field.
        field: &'static str,
        /// What is wrong.
        reason: String,
    },
}

/// A refusal naming the request's field at fault.
pub(super) fn field(field: &'static str, reason: impl Into<String>) -> CalcError {
    CalcError::Field { field, reason: reason.into() }
}

/// Parses a JSON request and settles it (the server's REST and command-line
/// calculators read the request strictly first, with `protocol::json`).
pub fn settle_json(text: &str) -> Result<SettleResponse, CalcError> {
    let request: SettleRequest = serde_json::from_str(text).map_err(|e| CalcError::Json(e.to_string()))?;
    calculate(&request)
}

/// The options a request asks for: its preset (built-in, or one of `book`'s
/// custom presets), then its options one by one.
pub fn request_options(
    book: &PresetBook,
    preset: Option<&str>,
    options: &serde_json::Map<String, Value>,
) -> Result<GameOptions, CalcError> {
    let base = book.options(preset.unwrap_or(presets::DEFAULT_PRESET)).map_err(|e| match e {
        PresetError::Unknown { .. } => {
            CalcError::Option(OptionError::Invalid { name: "Preset".into(), reason: e.to_string() })
        }
        e => field("preset", e.to_string()),
    })?;
    base.with_json(options).map_err(|e| match e {
        JsonOptionsError::NotAValue { name, why } => field("options", format!("{name}: {why}")),
        JsonOptionsError::Option(e) => e.into(),
    })
}

/// Settles a request under the built-in presets.
pub fn calculate(request: &SettleRequest) -> Result<SettleResponse, CalcError> {
    calculate_with(&PresetBook::built_in_only(), request)
}

/// Settles a request whose preset may be one of `book`'s custom presets.
pub fn calculate_with(book: &PresetBook, request: &SettleRequest) -> Result<SettleResponse, CalcError> {
    let options = request_options(book, request.preset.as_deref(), &request.options)?;
    let player = |name: &'static str, i: usize| {
        if i < 4 { Ok(i) } else { Err(field(name, format!("player {i} does not exist: players are 0-3"))) }
    };
    let east = player("east", request.east)?;
    let seat = |i: usize| Wind::from_index(i + 4 - east);
    let winners: Vec<usize> = match &request.winner {
        Value::Null => vec![],
        Value::Number(n) => vec![
            n.as_u64()
                .map_or(Err(field("winner", format!("{n} is not a player"))), |i| player("winner", i as usize))?,
        ],
        Value::Array(list) => list
            .iter()
            .map(|v| {
                v.as_u64()
                    .map_or(Err(field("winner", format!("{v} is not a player"))), |i| player("winner", i as usize))
            })
            .collect::<Result<_, _>>()?,
        other => return Err(field("winner", format!("expected a player, a list of players or null, not {other}"))),
    };
    let discarder = request.discarder.map(|d| player("discarder", d)).transpose()?;
    let cannon = request.cannon.map(|c| player("cannon", c)).transpose()?;
    if request.scores.len() != 4 {
        return Err(field("scores", format!("expected 4 scores, found {}", request.scores.len())));
    }
    let mut scores = [0i64; 4];
    for (i, v) in request.scores.iter().enumerate() {
        scores[seat(i).index()] = hand_score(&options, v)?;
    }
    for (k, w) in winners.iter().enumerate() {
        if winners[..k].contains(w) {
            return Err(field("winner", format!("player {w} is listed twice")));
        }
        if Some(*w) == discarder {
            return Err(field("discarder", "the winner cannot have discarded the winning tile"));
        }
        if Some(*w) == cannon {
            return Err(field("cannon", "the winner cannot have let off a cannon"));
        }
    }
    if winners.len() > 1 {
        if !options.multiple_winners {
            return Err(field("winner", "several winners need the MultipleWinners option"));
        }
        if discarder.is_none() {
            return Err(field("winner", "several players can only go out on the same discard: give the discarder"));
        }
        if cannon.is_some() {
            return Err(field("cannon", "a cannon is paid to a single winner"));
        }
    }
    if request.double_dice && !options.double_dice {
        return Err(field("double_dice", "a double roll counts only with the DoubleDice option"));
    }
    if winners.is_empty() {
        if discarder.is_some() || cannon.is_some() {
            return Err(field("winner", "a hand without a winner has no discarder and no cannon"));
        }
        return Ok(SettleResponse { net: [0; 4], payments: vec![] });
    }
    let winner_seats: Vec<Wind> = winners.iter().map(|&w| seat(w)).collect();
    let s = settlement::settle(&SettlementInput {
        options: &options,
        scores,
        winners: &winner_seats,
        discarder: discarder.map(seat),
        robbed_kong: false,
        cannon: cannon.map(seat),
        extra_hands: request.extra_hands,
        double_dice: request.double_dice,
    });
    let player_of = |w: Wind| (w.index() + east) % 4;
    Ok(SettleResponse {
        net: std::array::from_fn(|i| s.deltas[seat(i).index()]),
        payments: s
            .payments
            .iter()
            .map(|p| CalcPayment { from: player_of(p.from), to: player_of(p.to), amount: p.amount })
            .collect(),
    })
}

/// A hand's score before settlement's own steps (limit, dice, rounding):
/// a score after doubles as given, basic points doubled after
/// `RoundBeforeDoubles`, or the limit.
fn hand_score(options: &GameOptions, v: &Value) -> Result<i64, CalcError> {
    const HINT: &str = "a score is a whole number, {\"points\": P, \"doubles\": D} or {\"limit\": true}";
    let number = |v: Option<&Value>, what: &str| -> Result<i64, CalcError> {
        match v.and_then(Value::as_i64) {
            Some(n) if (0..=100_000_000).contains(&n) => Ok(n),
            _ => Err(field("scores", format!("{what} must be a whole number from 0 to 100000000"))),
        }
    };
    match v {
        Value::Number(_) => number(Some(v), "a score"),
        Value::Object(map) if map.contains_key("limit") => match (map.len(), map.get("limit")) {
            (1, Some(Value::Bool(true))) => Ok(options.score_limit as i64),
            _ => Err(field("scores", format!("a limit hand is written {{\"limit\": true}}; {HINT}"))),
        },
        Value::Object(map) if map.len() == 2 && map.contains_key("points") && map.contains_key("doubles") => {
            let points = number(map.get("points"), "points")?;
            let doubles = number(map.get("doubles"), "doubles")?;
            if doubles > 64 {
                return Err(field("scores", "doubles must be at most 64"));
            }
            Ok(scoring::doubled(scoring::rounded_points(options, points), doubles))
        }
        other => Err(field("scores", format!("{other} is not a score: {HINT}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settle(json: &str) -> SettleResponse {
        settle_json(json).unwrap_or_else(|e| panic!("{json}: {e}"))
    }

    #[test]
    fn the_corpus_first_hand_with_east_at_any_index() {
        // s0001 hand 1: East wins with 36 against 8, 4, 4.
        let r = settle(r#"{"east": 0, "winner": 0, "scores": [36, 8, 4, 4]}"#);
        assert_eq!(r.net, [216, -64, -76, -76]);
        let r = settle(r#"{"east": 2, "winner": 2, "scores": [4, 4, 36, 8]}"#);
        assert_eq!(r.net, [-76, -76, 216, -64]);
        assert_eq!(r.payments[0], CalcPayment { from: 3, to: 2, amount: 72 });
    }

    #[test]
    fn bad_requests_get_specific_errors() {
        let err = |json: &str| settle_json(json).unwrap_err().to_string();
        assert!(err("{").starts_with("bad request:"));
        assert!(err(r#"{"east":0,"winner":0,"scores":[1,2,3,4],"bogus":1}"#).contains("unknown field `bogus`"));
        assert!(err(r#"{"east":0,"scores":[1,2,3,4]}"#).contains("missing field `winner`"));
        assert!(err(r#"{"east":4,"winner":0,"scores":[1,2,3,4]}"#).contains("east: player 4 does not exist"));
        assert!(err(r#"{"east":0,"winner":0,"scores":[1,2,3]}"#).contains("expected 4 scores"));
        assert!(err(r#"{"east":0,"winner":0,"scores":[1,2,3,-4]}"#).contains("from 0 to 100000000"));
        assert!(err(r#"{"east":0,"winner":0,"scores":[1,2,3,{"limit":false}]}"#).contains("limit hand is written"));
        assert!(err(r#"{"east":0,"winner":0,"discarder":0,"scores":[1,2,3,4]}"#).contains("cannot have discarded"));
        assert!(err(r#"{"east":0,"winner":[0,1],"discarder":2,"scores":[1,2,3,4]}"#).contains("MultipleWinners"));
        assert!(err(r#"{"preset":"x","east":0,"winner":0,"scores":[1,2,3,4]}"#).contains("unknown preset 'x'"));
        assert!(err(r#"{"options":{"Nope":1},"east":0,"winner":0,"scores":[1,2,3,4]}"#).contains("'Nope'"));
        assert!(
            err(r#"{"options":{"RoundUnit":1,"RoundMode":"off"},"east":0,"winner":0,"scores":[1,2,3,4]}"#)
                .contains("RoundAtPayTime")
        );
        assert!(err(r#"{"east":0,"winner":0,"double_dice":true,"scores":[1,2,3,4]}"#).contains("DoubleDice"));
    }
}
