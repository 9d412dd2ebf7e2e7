//! A robot's "personality": the four strategy parameters of mj-player
//! (seed 004, "mj-player strategy options").
//!
//! The meanings are approximate, as in the original: they bias how the robot
//! values hands and claims, they do not script its play.

use serde::{Deserialize, Serialize};

/// The strategy parameters of a robot player. The default (all zero) is
/// mj-player's default personality.
///
/// Every parameter may be left out of a request (it is then 0); an answer
/// gives all four.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(try_from = "RawStrategy")]
pub struct Strategy {
    /// How much the robot likes chows, from -1 to 1: at 1 it goes all out for
    /// the chicken hand (claims chows eagerly), at -1 it never chows and
    /// plays for pungs.
    #[cfg_attr(feature = "openapi", schema(required = false, minimum = -1, maximum = 1))]
    pub chowness: f64,
    /// Reluctance to make exposed sets, from 0 to 1: at 1 it never claims a
    /// discard except to go Mah-Jong (and, like mj-player, may decline even
    /// that while it has good chances of going out from the wall).
    #[cfg_attr(feature = "openapi", schema(required = false, minimum = 0, maximum = 1))]
    pub hiddenness: f64,
    /// Bias towards major tiles (terminals and honours), from 0 to 1: at 1 it
    /// discards every minor tile it can.
    #[cfg_attr(feature = "openapi", schema(required = false, minimum = 0, maximum = 1))]
    pub majorness: f64,
    /// Bias towards one-suit hands, from 0 to 1: at 1 it throws away the
    /// tiles of the other numbered suits whenever it can.
    #[cfg_attr(feature = "openapi", schema(required = false, minimum = 0, maximum = 1))]
    pub suitness: f64,
}

/// The unchecked form serde reads, so that deserializing validates.
#[derive(Deserialize)]
#[serde(default, deny_unknown_fields)]
struct RawStrategy {
    chowness: f64,
    hiddenness: f64,
    majorness: f64,
    suitness: f64,
}

impl Default for RawStrategy {
    fn default() -> Self {
        let s = Strategy::default();
        RawStrategy { chowness: s.chowness, hiddenness: s.hiddenness, majorness: s.majorness, suitness: s.suitness }
    }
}

impl TryFrom<RawStrategy> for Strategy {
    type Error = StrategyError;
    fn try_from(r: RawStrategy) -> Result<Strategy, StrategyError> {
        Strategy::new(r.chowness, r.hiddenness, r.majorness, r.suitness)
    }
}

/// Why strategy parameters were refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StrategyError {
    /// A parameter is outside its range (or not a number at all).
    #[error("{name} must be between {min} and {max}, not {value}")]
    OutOfRange {
        /// The parameter.
        name: &'static str,
        /// The value given.
        value: f64,
        /// Least allowed value.
        min: f64,
        /// Greatest allowed value.
        max: f64,
    },
    /// A value in a list is not a number.
    #[error("{name}: '{text}' is not a number")]
    NotANumber {
        /// The parameter.
        name: &'static str,
        /// The text given.
        text: String,
    },
    /// A per-player list does not have one or four values.
    #[error("{name}: give one value for all four players or four comma-separated values (players 0-3), not {count}")]
    WrongCount {
        /// The parameter.
        name: &'static str,
        /// How many values were given.
        count: usize,
    },
}

/// The parameters with their ranges, in the order of mj-player's options.
const RANGES: [(&str, f64, f64); 4] =
    [("chowness", -1.0, 1.0), ("hiddenness", 0.0, 1.0), ("majorness", 0.0, 1.0), ("suitness", 0.0, 1.0)];

fn check(index: usize, value: f64) -> Result<f64, StrategyError> {
    let (name, min, max) = RANGES[index];
    // `contains` is false for NaN, so NaN is refused too.
    if (min..=max).contains(&value) { Ok(value) } else { Err(StrategyError::OutOfRange { name, value, min, max }) }
}

impl Strategy {
    /// A strategy with these parameters, checked to be in range.
    pub fn new(chowness: f64, hiddenness: f64, majorness: f64, suitness: f64) -> Result<Strategy, StrategyError> {
        Ok(Strategy {
            chowness: check(0, chowness)?,
            hiddenness: check(1, hiddenness)?,
            majorness: check(2, majorness)?,
            suitness: check(3, suitness)?,
        })
    }

    /// Checks that every parameter is in range (the fields are public, so a
    /// strategy built by hand may not be).
    pub fn validate(&self) -> Result<(), StrategyError> {
        Strategy::new(self.chowness, self.hiddenness, self.majorness, self.suitness).map(|_| ())
    }
}

/// Strategy parameters for the four players as given on a command line: each
/// is `None` (the default), one value for everybody, or four comma-separated
/// values for players 0, 1, 2 and 3 (mj-player's options also take lists).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StrategyLists {
    /// `--chowness`.
    pub chowness: Option<String>,
    /// `--hiddenness`.
    pub hiddenness: Option<String>,
    /// `--majorness`.
    pub majorness: Option<String>,
    /// `--suitness`.
    pub suitness: Option<String>,
}

impl StrategyLists {
    /// The four players' strategies, checked.
    pub fn to_strategies(&self) -> Result<[Strategy; 4], StrategyError> {
        let lists = [&self.chowness, &self.hiddenness, &self.majorness, &self.suitness];
        let mut values = [[0.0f64; 4]; 4]; // [parameter][player]
        for (i, list) in lists.iter().enumerate() {
            if let Some(text) = list {
                values[i] = parse_list(i, text)?;
            }
        }
        let mut out = [Strategy::default(); 4];
        for (p, s) in out.iter_mut().enumerate() {
            *s = Strategy::new(values[0][p], values[1][p], values[2][p], values[3][p])?;
        }
        Ok(out)
    }
}

fn parse_list(index: usize, text: &str) -> Result<[f64; 4], StrategyError> {
    let name = RANGES[index].0;
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    let mut nums = Vec::with_capacity(parts.len());
    for p in &parts {
        let v: f64 = p.parse().map_err(|_| StrategyError::NotANumber { name, text: (*p).to_string() })?;
        nums.push(check(index, v)?);
    }
    match nums.as_slice() {
        [v] => Ok([*v; 4]),
        [a, b, c, d] => Ok([*a, *b, *c, *d]),
        _ => Err(StrategyError::WrongCount { name, count: nums.len() }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_checked() {
        assert!(Strategy::new(-1.0, 0.0, 0.0, 0.0).is_ok());
        assert!(Strategy::new(1.0, 1.0, 1.0, 1.0).is_ok());
        let e = Strategy::new(-1.5, 0.0, 0.0, 0.0).unwrap_err();
        assert_eq!(e.to_string(), "chowness must be between -1 and 1, not -1.5");
        let e = Strategy::new(0.0, -0.1, 0.0, 0.0).unwrap_err();
        assert_eq!(e.to_string(), "hiddenness must be between 0 and 1, not -0.1");
        assert!(matches!(Strategy::new(0.0, 0.0, 1.01, 0.0), Err(StrategyError::OutOfRange { name: "majorness", .. })));
        assert!(matches!(
            Strategy::new(0.0, 0.0, 0.0, f64::NAN),
            Err(StrategyError::OutOfRange { name: "suitness", .. })
        ));
        let hand_made = Strategy { suitness: 2.0, ..Strategy::default() };
        assert!(hand_made.validate().is_err());
        assert!(Strategy::default().validate().is_ok());
    }

    #[test]
    fn serde_validates() {
        let s: Strategy = serde_json::from_str(r#"{"chowness": -0.5, "suitness": 1}"#).unwrap();
        assert_eq!(s, Strategy { chowness: -0.5, suitness: 1.0, ..Strategy::default() });
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(serde_json::from_str::<Strategy>(&json).unwrap(), s);
        let err = serde_json::from_str::<Strategy>(r#"{"hiddenness": 3}"#).unwrap_err();
        assert!(err.to_string().contains("hiddenness must be between 0 and 1"), "{err}");
        assert!(serde_json::from_str::<Strategy>(r#"{"greed": 1}"#).is_err());
    }

    #[test]
    fn per_player_lists() {
        let lists =
            StrategyLists { chowness: Some("0.5".into()), suitness: Some("0, 0.2,0.4,1".into()), ..Default::default() };
        let s = lists.to_strategies().unwrap();
        assert!(s.iter().all(|s| s.chowness == 0.5 && s.hiddenness == 0.0));
        assert_eq!(s.map(|s| s.suitness), [0.0, 0.2, 0.4, 1.0]);
        let bad = StrategyLists { hiddenness: Some("0,1".into()), ..Default::default() };
        assert_eq!(bad.to_strategies().unwrap_err(), StrategyError::WrongCount { name: "hiddenness", count: 2 });
        let bad = StrategyLists { majorness: Some("lots".into()), ..Default::default() };
        assert_eq!(bad.to_strategies().unwrap_err().to_string(), "majorness: 'lots' is not a number");
        let bad = StrategyLists { chowness: Some("0,0,0,-2".into()), ..Default::default() };
        assert!(matches!(bad.to_strategies(), Err(StrategyError::OutOfRange { name: "chowness", .. })));
    }
}
