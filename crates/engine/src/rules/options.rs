//! Game options: the catalogue of seed 004 (name, type, default, minimum
//! protocol version, description) and typed access for the engine. Option
//! files are read and written by [`super::option_file`].
//!
//! A `score` value packs a number of hundredths of a limit `c`, doubles `d`
//! and points `p` as `c*1000000 + d*10000 + p` (see [`ScoreValue`]).

use std::fmt;

use serde::{Deserialize, Serialize};

/// The protocol version this implementation speaks (mj-server 1.12).
pub const PROTOCOL_VERSION: u32 = 1110;

/// The type of an option's value, as written in option files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OptionType {
    /// 0 or 1.
    Bool,
    /// A signed integer.
    Int,
    /// A non-negative integer.
    Nat,
    /// A score: limits, doubles and points packed as `c*1000000 + d*10000 + p`.
    Score,
    /// A word of at most 127 characters without white space.
    String,
}

impl OptionType {
    /// The word used in option files: `bool`, `int`, `nat`, `score`, `string`.
    pub fn word(self) -> &'static str {
        match self {
            OptionType::Bool => "bool",
            OptionType::Int => "int",
            OptionType::Nat => "nat",
            OptionType::Score => "score",
            OptionType::String => "string",
        }
    }

    /// Parses the word used in option files.
    pub fn from_word(w: &str) -> Option<OptionType> {
        Some(match w {
            "bool" => OptionType::Bool,
            "int" => OptionType::Int,
            "nat" => OptionType::Nat,
            "score" => OptionType::Score,
            "string" => OptionType::String,
            _ => return None,
        })
    }
}

/// A score option value: `centi_limits*1000000 + doubles*10000 + points`.
///
/// A score may combine a limit with doubles or points; the doubles and points
/// are then used only in a no-limit game (seed 004, "score" type).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ScoreValue(pub i64);

impl ScoreValue {
    /// A score of `n` points.
    pub const fn points(n: i64) -> ScoreValue {
        ScoreValue(n)
    }
    /// A score of `n` doubles.
    pub const fn doubles(n: i64) -> ScoreValue {
        ScoreValue(n * 10_000)
    }
    /// A full limit.
    pub const LIMIT: ScoreValue = ScoreValue(100 * 1_000_000);

    /// The points part (value modulo 10000).
    pub fn points_part(self) -> i64 {
        self.0 % 10_000
    }
    /// The doubles part.
    pub fn doubles_part(self) -> i64 {
        (self.0 / 10_000) % 100
    }
    /// The limit part, in hundredths of a limit (100 = one limit).
    pub fn centi_limits(self) -> i64 {
        self.0 / 1_000_000
    }
}

impl fmt::Display for ScoreValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A typed option value.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(untagged)]
pub enum OptionValue {
    /// A `bool` option.
    Bool(bool),
    /// An `int` or `nat` option.
    Int(i64),
    /// A `string` option.
    Str(String),
}

impl OptionValue {
    /// The value as written in an option file (`0`/`1` for booleans).
    pub fn raw(&self) -> String {
        match self {
            OptionValue::Bool(b) => (*b as u8).to_string(),
            OptionValue::Int(n) => n.to_string(),
            OptionValue::Str(s) => s.clone(),
        }
    }
}

/// One entry of the option catalogue.
#[derive(Clone, Copy, Debug)]
pub struct OptionSpec {
    /// The short name, e.g. `ScoreLimit`.
    pub name: &'static str,
    /// The value type.
    pub kind: OptionType,
    /// The least protocol version with which the option can be used.
    pub min_protocol: u32,
    /// The default value as written in an option file.
    pub default: &'static str,
    /// The one-line description sent to clients.
    pub description: &'static str,
}

/// Why an option could not be set or an option file could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OptionError {
    /// No option has this name.
    #[error("unknown game option '{0}'")]
    Unknown(String),
    /// The value does not fit the option's type.
    #[error("option {name} is of type {kind}: '{value}' is not a valid {kind} value")]
    BadValue {
        /// The option.
        name: String,
        /// Its type word.
        kind: &'static str,
        /// The rejected value.
        value: String,
    },
    /// The type named in an option file line is not the option's type.
    #[error("option {name} has type {expected}, not {found}")]
    WrongType {
        /// The option.
        name: String,
        /// Its type word.
        expected: &'static str,
        /// What the line said.
        found: String,
    },
    /// The value has the right type but is not allowed.
    #[error("option {name}: {reason}")]
    Invalid {
        /// The option.
        name: String,
        /// Why.
        reason: String,
    },
    /// A line of an option file is malformed.
    #[error("option file line {line}: {reason}")]
    BadLine {
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        reason: String,
    },
}

macro_rules! game_options {
    ($( $(#[$doc:meta])* $name:ident : $field:ident : $kind:ident : $ty:ty = $default:tt, $minprot:literal, $desc:literal; )*) => {
        /// The values of every game option, typed for the engine. An option
        /// missing from a stored game or a game file (one written before
        /// the option existed) takes its default, which is what the game
        /// was played with.
        #[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
        #[serde(default)]
        pub struct GameOptions {
            $( $(#[$doc])* pub $field: $ty, )*
        }

        /// The catalogue: every option with its type, default, minimum
        /// protocol version and description, in the reference's order.
        pub const CATALOGUE: &[OptionSpec] = &[
            $( OptionSpec {
                name: stringify!($name),
                kind: OptionType::$kind,
                min_protocol: $minprot,
                default: stringify!($default),
                description: $desc,
            }, )*
        ];

        impl Default for GameOptions {
            /// mj-server's defaults, as a fresh mj-server 1.12 game uses them.
            fn default() -> Self {
                GameOptions { $( $field: game_options!(@default $kind $default), )* }
            }
        }

        impl GameOptions {
            /// The value of the option named `name`.
            pub fn get(&self, name: &str) -> Result<OptionValue, OptionError> {
                match name {
                    $( stringify!($name) => Ok(game_options!(@get $kind self.$field)), )*
                    _ => Err(OptionError::Unknown(name.to_string())),
                }
            }

            /// Sets the option named `name` from its option-file value.
            /// On error nothing changes.
            pub fn set(&mut self, name: &str, raw: &str) -> Result<(), OptionError> {
                match name {
                    $( stringify!($name) => {
                        let v: $ty = game_options!(@parse $kind name raw);
                        validate(name, &game_options!(@get $kind v))?;
                        self.$field = v;
                        Ok(())
                    } )*
                    _ => Err(OptionError::Unknown(name.to_string())),
                }
            }
        }
    };
    (@default Bool $d:tt) => { $d != 0 };
    (@default Nat $d:tt) => { $d };
    (@default Score $d:tt) => { ScoreValue($d) };
    (@default String $d:tt) => { word_or_default(stringify!($d)) };
    (@get Bool $e:expr) => { OptionValue::Bool($e) };
    (@get Nat $e:expr) => { OptionValue::Int($e as i64) };
    (@get Score $e:expr) => { OptionValue::Int($e.0) };
    (@get String $e:expr) => { OptionValue::Str($e.word().to_string()) };
    (@parse Bool $name:ident $raw:ident) => { parse_bool($name, $raw)? };
    (@parse Nat $name:ident $raw:ident) => { parse_nat($name, $raw)? };
    (@parse Score $name:ident $raw:ident) => { parse_score($name, $raw)? };
    (@parse String $name:ident $raw:ident) => { parse_word($name, $raw)? };
}

game_options! {
    /// Seconds allowed to claim a discard or rob a kong; 0 disables the timeout.
    Timeout: timeout: Nat: u32 = 15, 0, "time limit for claims";
    /// Seconds added to `Timeout` when clients handle timeouts locally.
    TimeoutGrace: timeout_grace: Nat: u32 = 5, 0, "grace period when clients handle timeouts";
    /// The limit on a hand's score (the notional limit in a no-limit game).
    ScoreLimit: score_limit: Nat: u32 = 1000, 0, "limit on hand score";
    /// Play with no limit on hand scores.
    NoLimit: no_limit: Bool: bool = 0, 0, "no-limit game";
    /// Base score for going Mah-Jong.
    MahJongScore: mah_jong_score: Score: ScoreValue = 20, 0, "base score for going out";
    /// Whether a hand of any seven pairs may go out.
    SevenPairs: seven_pairs: Bool: bool = 0, 1020, "seven pairs hand allowed";
    /// Extra score of a seven pairs hand.
    SevenPairsVal: seven_pairs_val: Score: ScoreValue = 20, 1020, "score for a seven pair hand";
    /// Whether the wall contains the four flowers and four seasons.
    Flowers: flowers: Bool: bool = 1, 1020, "play using flowers and seasons";
    /// Whether bonus tiles are replaced from the dead wall instead of the live wall.
    FlowersLoose: flowers_loose: Bool: bool = 0, 0, "flowers replaced by loose tiles";
    /// Score for each own flower or season.
    FlowersOwnEach: flowers_own_each: Score: ScoreValue = 0, 0, "score for each own flower or season";
    /// Score for having both own flower and own season.
    FlowersOwnBoth: flowers_own_both: Score: ScoreValue = 10000, 0, "score for own flower and own season";
    /// Score for all four flowers or all four seasons.
    FlowersBouquet: flowers_bouquet: Score: ScoreValue = 10000, 0, "score for all four flowers or all four seasons";
    /// Whether there is a dead wall.
    DeadWall: dead_wall: Bool: bool = 1, 1020, "there is a dead wall";
    /// Whether the dead wall is 16 tiles and never replenished (Millington).
    /// mj-server's protocol default is set, but every server since 1.1 unsets it.
    DeadWall16: dead_wall_16: Bool: bool = 0, 1020, "dead wall is 16 tiles, unreplenished";
    /// Score for a fully concealed winning hand.
    ConcealedFully: concealed_fully: Score: ScoreValue = 10000, 0, "score for fully concealed hand";
    /// Score for a hand concealed up to the point of going out.
    ConcealedAlmost: concealed_almost: Score: ScoreValue = 0, 0, "score for almost concealed hand";
    /// Whether losing hands score the purity and concealment doubles.
    LosersPurity: losers_purity: Bool: bool = 0, 0, "losing hands score doubles for pure, concealed etc.";
    /// Whether claimed kongs count as concealed for doubling (Millington).
    KongHas3Types: kong_has_3_types: Bool: bool = 0, 1034, "claimed kongs count as concealed for doubling";
    /// Whether payments to and from East are doubled.
    EastDoubles: east_doubles: Bool: bool = 1, 0, "east pays and receives double";
    /// Whether losers pay each other the differences of their scores.
    LosersSettle: losers_settle: Bool: bool = 1, 0, "losers pay each other";
    /// Whether the discarder of the winning tile pays double (and all pay double on a self-draw).
    DiscDoubles: disc_doubles: Bool: bool = 0, 0, "the discarder pays double";
    /// Whether hands are revealed after a wash-out.
    ShowOnWashout: show_on_washout: Bool: bool = 0, 0, "tiles revealed on washout";
    /// Number of rounds to play: 1, 2 or a multiple of 4.
    NumRounds: num_rounds: Nat: u32 = 4, 0, "number of rounds to play";

    // The settlement variants of seeds 000-003. None is in mj-server; their
    // defaults reproduce mj-server's behaviour exactly.

    /// Round a hand's basic points to ten before doubling (seeds 000, 003).
    RoundBeforeDoubles: round_before_doubles: String: Rounding = none, 1110, "round basic points to ten before doubles: none, off or up";
    /// The unit the score is rounded to: 1, 10 or 100 (seed 000).
    RoundUnit: round_unit: Nat: u32 = 10, 1110, "unit the score is rounded to: 1, 10 or 100";
    /// Round the score to `RoundUnit`: not at all, off (to nearest) or up (seed 000).
    RoundMode: round_mode: String: Rounding = none, 1110, "round the score to the unit: none, off or up";
    /// Round each payment, after payment doubles, instead of the score (seed 000).
    RoundAtPayTime: round_at_pay_time: Bool: bool = 0, 1110, "round at pay time, after payment doubles";
    /// Rounding off goes up only from 6 tenths of the unit (seed 000).
    RoundSixUp: round_six_up: Bool: bool = 0, 1110, "round up from 6x, down from 5x";
    /// How losers' payments among themselves are itemised (seed 001).
    PaymentItemisation: payment_itemisation: String: Itemisation = differences, 1110, "losers pay differences or scores";
    /// Who pays the winner of a discard: everyone, the discarder for all, or the discarder alone (seed 002).
    DiscarderPays: discarder_pays: String: DiscarderPays = everyone, 1110, "on a discard win: everyone, for-all or alone pays";
    /// Several players may go out on the same discard, each paid as if alone (seed 002).
    MultipleWinners: multiple_winners: Bool: bool = 0, 1110, "several players may go out on one discard";
    /// The deal passes even when East wins (seed 002).
    DealPassesOnEastWin: deal_passes_on_east_win: Bool: bool = 0, 1110, "deal passes after East wins";
    /// The deal passes after a wash-out (seed 002).
    DealPassesOnWashout: deal_passes_on_washout: Bool: bool = 0, 1110, "deal passes after a washout";
    /// Bonus per extra hand of the dealer, 0 (off) to 2000 points (seed 002).
    DealerBonus: dealer_bonus: Nat: u32 = 0, 1110, "bonus for each dealer's extra hand (0 = off)";
    /// The dealer bonus is paid to any winner, not only to East (seed 002).
    DealerBonusAnyWinner: dealer_bonus_any_winner: Bool: bool = 0, 1110, "dealer bonus paid to any winner";
    /// Taiwanese dealer bonus: East alone pays a non-East winner, only on self-draw or East's discard (seed 002).
    DealerBonusTaiwan: dealer_bonus_taiwan: Bool: bool = 0, 1110, "dealer bonus paid by East only (Taiwanese)";
    /// The least number of doubles a hand needs to go out (seed 002).
    MinimumDoubles: minimum_doubles: Nat: u32 = 0, 1110, "minimum doubles to go out";
    /// Raise the minimum doubles by one from the dealer's 5th extra hand (seed 002).
    RaiseMinimumOn5thExtra: raise_minimum_on_5th_extra: Bool: bool = 0, 1110, "minimum doubles raised on 5th extra hand";
    /// Play with the four animal tiles (seed 003).
    Animals: animals: Bool: bool = 0, 1110, "play with animal tiles";
    /// Score for each animal tile (seed 003: one double).
    AnimalScore: animal_score: Score: ScoreValue = 10000, 1110, "score for each animal tile";
    /// East may swap tiles with the others before play (seed 003).
    TileSwap: tile_swap: Bool: bool = 0, 1110, "East may swap tiles before play";
    /// Ordinary hands have at most one chow and one suit (seed 003).
    OneChowOneSuit: one_chow_one_suit: Bool: bool = 0, 1110, "ordinary hands: at most one chow, one suit";
    /// A double roll of the dice doubles every score and the limit (seed 003).
    DoubleDice: double_dice: Bool: bool = 0, 1110, "double dice double every score";
    /// Losers whose scores differ by less than this pay each other nothing (seed 003).
    WashBelow: wash_below: Nat: u32 = 0, 1110, "losers' differences below this wash";

    // This server's help for players, not a rule of any seed.

    /// Each player is told the tiles its hand waits on (in its prompt).
    ShowWaits: show_waits: Bool: bool = 0, 1110, "players are told the tiles they wait on";
}

/// A `string` option whose value is one of a few words.
pub trait OptionWord: Sized + Default {
    /// Every allowed word, in the order they are documented.
    const WORDS: &'static [&'static str];
    /// The value named by `word`.
    fn from_word(word: &str) -> Option<Self>;
    /// The word naming this value.
    fn word(&self) -> &'static str;
}

macro_rules! option_words {
    ($(#[$doc:meta])* $name:ident { $( $(#[$vdoc:meta])* $variant:ident = $word:literal ),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum $name {
            #[default]
            $( $(#[$vdoc])* #[serde(rename = $word)] $variant, )*
        }

        impl OptionWord for $name {
            const WORDS: &'static [&'static str] = &[$($word),*];
            fn from_word(word: &str) -> Option<Self> {
                match word {
                    $( $word => Some($name::$variant), )*
                    _ => None,
                }
            }
            fn word(&self) -> &'static str {
                match self {
                    $( $name::$variant => $word, )*
                }
            }
        }
    };
}

option_words! {
    /// How a value is rounded to a unit (seed 000).
    Rounding {
        /// No rounding.
        None = "none",
        /// To the nearest unit: 24 to 20, 25 to 30 (with `RoundSixUp`, 26 to 30).
        Off = "off",
        /// Up to the next unit: 21 to 30.
        Up = "up",
    }
}

option_words! {
    /// How losers' payments among themselves are listed (seed 001).
    Itemisation {
        /// Each pair of losers settles the difference of their scores.
        Differences = "differences",
        /// Each loser is paid its own score by each other loser; the balances are the same.
        Scores = "scores",
    }
}

option_words! {
    /// Who pays the winner of a discard (seed 002).
    DiscarderPays {
        /// Every loser pays its own share.
        Everyone = "everyone",
        /// The discarder pays every loser's share.
        ForAll = "for-all",
        /// The discarder pays its own share; the others pay nothing.
        Alone = "alone",
    }
}

/// Rounds a non-negative `value` to `unit`. `six_up` rounds off up only from
/// six tenths of the unit (seed 000, "round up from 6x, down from 5x").
pub fn round_to(value: i64, unit: i64, how: Rounding, six_up: bool) -> i64 {
    if unit <= 1 || how == Rounding::None {
        return value;
    }
    let sign = value.signum();
    let v = value.abs();
    let (whole, rest) = (v / unit * unit, v % unit);
    let up = match how {
        Rounding::None => false,
        Rounding::Up => rest > 0,
        // 10 * rest >= 5 * unit is rest >= unit/2 without fractions.
        Rounding::Off if six_up => 10 * rest >= 6 * unit,
        Rounding::Off => 2 * rest >= unit,
    };
    sign * if up { whole + unit } else { whole }
}

fn word_or_default<T: OptionWord>(word: &str) -> T {
    T::from_word(word).unwrap_or_default()
}

fn parse_word<T: OptionWord>(name: &str, raw: &str) -> Result<T, OptionError> {
    T::from_word(raw).ok_or_else(|| OptionError::Invalid {
        name: name.to_string(),
        reason: format!("'{raw}' is not one of {}", T::WORDS.join(", ")),
    })
}

/// The catalogue entry of the option called `name`.
pub fn spec(name: &str) -> Option<&'static OptionSpec> {
    CATALOGUE.iter().find(|s| s.name == name)
}

fn bad(name: &str, kind: OptionType, raw: &str) -> OptionError {
    OptionError::BadValue { name: name.to_string(), kind: kind.word(), value: raw.to_string() }
}

fn parse_bool(name: &str, raw: &str) -> Result<bool, OptionError> {
    match raw {
        "0" | "false" => Ok(false),
        "1" | "true" => Ok(true),
        _ => Err(bad(name, OptionType::Bool, raw)),
    }
}

fn parse_nat(name: &str, raw: &str) -> Result<u32, OptionError> {
    raw.parse::<u32>().map_err(|_| bad(name, OptionType::Nat, raw))
}

/// Scores are kept within the reference's hard limit of 100000000 on any
/// score, so that arithmetic on them cannot overflow.
fn parse_score(name: &str, raw: &str) -> Result<ScoreValue, OptionError> {
    match raw.parse::<i64>() {
        Ok(v) if (0..=100_000_000).contains(&v) => Ok(ScoreValue(v)),
        Ok(_) => Err(OptionError::Invalid {
            name: name.to_string(),
            reason: format!("score value {raw} is outside 0..=100000000"),
        }),
        Err(_) => Err(bad(name, OptionType::Score, raw)),
    }
}

/// The longest claim timeout and grace period, in seconds (an hour and ten
/// minutes): the server adds them, and no game waits longer for a claim.
pub const MAX_TIMEOUT_SECS: i64 = 3600;
/// The longest grace period after the claim timeout, in seconds.
pub const MAX_TIMEOUT_GRACE_SECS: i64 = 600;
/// The most rounds a game may have.
pub const MAX_ROUNDS: i64 = 64;

/// An option's value given as JSON, as it would be written in an option
/// file: a boolean (`true`/`false`, written 1/0), a whole number, or a
/// string (`"up"`, or a number or boolean written as text).
pub fn raw_value(value: &serde_json::Value) -> Result<String, NotAnOptionValue> {
    use serde_json::Value;
    match value {
        Value::Bool(b) => Ok(u8::from(*b).to_string()),
        Value::Number(n) if n.is_i64() || n.is_u64() => Ok(n.to_string()),
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Err(NotAnOptionValue::Fraction(n.to_string())),
        other => Err(NotAnOptionValue::Other(other.to_string())),
    }
}

/// A JSON value that is no option's value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotAnOptionValue {
    /// A number with a fraction.
    #[error("{0} is not a whole number")]
    Fraction(String),
    /// An array, an object, `null`.
    #[error("{0} is not a boolean, whole number or string")]
    Other(String),
}

/// What is wrong with options given as JSON ([`GameOptions::with_json`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JsonOptionsError {
    /// A value of no option's type.
    #[error("options: {name}: {why}")]
    NotAValue {
        /// The option.
        name: String,
        /// What the value is.
        why: NotAnOptionValue,
    },
    /// An unknown option, a value the option refuses, or a combination the
    /// rules rule out.
    #[error(transparent)]
    Option(#[from] OptionError),
}

/// Checks beyond the type: the constraints mj-server enforces, and bounds
/// that keep every value within what the server computes with.
fn validate(name: &str, v: &OptionValue) -> Result<(), OptionError> {
    let invalid = |reason: &str| Err(OptionError::Invalid { name: name.to_string(), reason: reason.to_string() });
    match (name, v) {
        ("Timeout", OptionValue::Int(n)) if *n > MAX_TIMEOUT_SECS => {
            invalid(&format!("the claim timeout is at most {MAX_TIMEOUT_SECS} seconds (0: no limit)"))
        }
        ("TimeoutGrace", OptionValue::Int(n)) if *n > MAX_TIMEOUT_GRACE_SECS => {
            invalid(&format!("the grace period is at most {MAX_TIMEOUT_GRACE_SECS} seconds"))
        }
        ("NumRounds", OptionValue::Int(n)) if *n > MAX_ROUNDS => {
            invalid(&format!("a game has at most {MAX_ROUNDS} rounds"))
        }
        ("ScoreLimit", OptionValue::Int(n)) if *n > 100_000_000 => invalid("the limit is at most 100000000"),
        ("NumRounds", OptionValue::Int(n)) if *n == 0 || *n == 3 || (*n > 4 && n % 4 != 0) => {
            invalid("the number of rounds must be 1, 2 or a multiple of 4")
        }
        ("ScoreLimit", OptionValue::Int(0)) => invalid("the limit must be at least 1"),
        ("RoundUnit", OptionValue::Int(n)) if ![1, 10, 100].contains(n) => invalid("the unit must be 1, 10 or 100"),
        ("DealerBonus", OptionValue::Int(n)) if *n > 2000 => invalid("the bonus must be 0 (off) to 2000 points"),
        ("MinimumDoubles", OptionValue::Int(n)) if *n > 20 => invalid("at most 20 doubles can be required"),
        ("WashBelow", OptionValue::Int(n)) if *n > 100_000 => invalid("must be at most 100000"),
        _ => Ok(()),
    }
}

impl GameOptions {
    /// Sets one option of a complete set, which must stay valid
    /// ([`GameOptions::check`]); on error nothing changes.
    pub fn set_checked(&mut self, name: &str, raw: &str) -> Result<(), OptionError> {
        let mut next = self.clone();
        next.set(name, raw)?;
        next.check()?;
        *self = next;
        Ok(())
    }

    /// Checks the combinations of options that seeds 000 and 002 rule out.
    /// Each option is valid on its own (see [`GameOptions::set`]); this
    /// checks a complete set of options, as a game would use it.
    pub fn check(&self) -> Result<(), OptionError> {
        let invalid = |name: &str, reason: &str| Err(OptionError::Invalid { name: name.into(), reason: reason.into() });
        if self.round_mode != Rounding::None && self.round_unit == 1 && !self.round_at_pay_time {
            return invalid(
                "RoundUnit",
                "the unit 1 needs RoundAtPayTime: a score is already a whole number, only a payment can be rounded to 1",
            );
        }
        if self.round_six_up && self.round_mode != Rounding::Off && self.round_before_doubles != Rounding::Off {
            return invalid("RoundSixUp", "needs rounding off (RoundMode or RoundBeforeDoubles set to off)");
        }
        if self.raise_minimum_on_5th_extra && self.minimum_doubles == 0 {
            return invalid("RaiseMinimumOn5thExtra", "needs a minimum number of doubles (MinimumDoubles)");
        }
        Ok(())
    }

    /// The least number of doubles a winning hand needs in the dealer's
    /// `extra_hands`th extra hand: seed 002 raises the minimum by one from
    /// the 5th (`RaiseMinimumOn5thExtra`), until the counter resets.
    pub fn minimum_doubles_in(&self, extra_hands: u32) -> u32 {
        if self.raise_minimum_on_5th_extra && extra_hands >= 5 {
            self.minimum_doubles + 1
        } else {
            self.minimum_doubles
        }
    }
}

impl GameOptions {
    /// These options with `options` given as JSON set over them (booleans
    /// as true/false or 0/1, numbers, words); the result must pass
    /// [`GameOptions::check`].
    pub fn with_json(
        mut self,
        options: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<GameOptions, JsonOptionsError> {
        for (name, value) in options {
            let raw = raw_value(value).map_err(|why| JsonOptionsError::NotAValue { name: name.clone(), why })?;
            self.set(name, &raw)?;
        }
        self.check()?;
        Ok(self)
    }

    /// Every option's value by catalogue name, as JSON (booleans, numbers, words).
    pub fn to_json_map(&self) -> serde_json::Map<String, serde_json::Value> {
        CATALOGUE.iter().filter_map(|spec| Some((spec.name.to_string(), self.json_value(spec.name).ok()?))).collect()
    }

    /// One option's value as JSON: a boolean, a number or a word, as
    /// [`GameOptions::to_json_map`] gives it.
    pub fn json_value(&self, name: &str) -> Result<serde_json::Value, OptionError> {
        Ok(match self.get(name)? {
            OptionValue::Bool(b) => serde_json::Value::from(b),
            OptionValue::Int(n) => serde_json::Value::from(n),
            OptionValue::Str(s) => serde_json::Value::from(s),
        })
    }
}

/// The options mj-server 1.12 knows, in its order (the catalogue's first
/// part, up to `NumRounds`): what its clients are told. The options after
/// them are this server's own (the settlement variants of seeds 000-003).
pub fn mj_server_catalogue() -> &'static [OptionSpec] {
    let known = CATALOGUE.iter().position(|s| s.name == "NumRounds").map_or(CATALOGUE.len(), |i| i + 1);
    &CATALOGUE[..known]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_mj_server_defaults() {
        let o = GameOptions::default();
        assert_eq!(o.timeout, 15);
        assert_eq!(o.score_limit, 1000);
        assert!(!o.no_limit && o.flowers && o.dead_wall && !o.dead_wall_16);
        assert_eq!(o.mah_jong_score, ScoreValue::points(20));
        assert_eq!(o.flowers_own_both, ScoreValue::doubles(1));
        assert!(o.east_doubles && o.losers_settle && !o.disc_doubles);
        assert_eq!(o.num_rounds, 4);
        assert_eq!(CATALOGUE.len(), 45);
    }

    #[test]
    fn errors_are_specific_and_change_nothing() {
        let mut o = GameOptions::default();
        let e = o.apply_option_file("GameOption 0 NumRounds nat 0 1 2 x\nGameOption 0 Bogus bool 0 1 1 y\n");
        assert_eq!(e.unwrap_err().to_string(), "option file line 2: unknown game option 'Bogus'");
        assert_eq!(o, GameOptions::default());
        let e = o.apply_option_file("GameOption 0 NoLimit bool 0 1 2 no-limit game");
        assert!(e.unwrap_err().to_string().contains("'2' is not a valid bool value"));
        let e = o.apply_option_file("GameOption 0 NoLimit nat 0 1 1 no-limit game");
        assert!(e.unwrap_err().to_string().contains("has type bool, not nat"));
        let e = o.set("NumRounds", "3");
        assert!(e.unwrap_err().to_string().contains("1, 2 or a multiple of 4"));
        assert!(o.set("NumRounds", "8").is_ok());
        assert!(o.set("MahJongScore", "-5").is_err());
        assert!(o.apply_option_file("Foo bar").unwrap_err().to_string().contains("expected a GameOption line"));
        assert!(o.apply_option_file("GameOption 0 NoLimit").unwrap_err().to_string().contains("missing"));
    }

    #[test]
    fn string_options_and_defaults_agree_with_the_catalogue() {
        let o = GameOptions::default();
        for spec in CATALOGUE {
            assert_eq!(o.get(spec.name).unwrap().raw(), spec.default, "{}", spec.name);
        }
        let mut o = GameOptions::default();
        o.set("DiscarderPays", "for-all").unwrap();
        assert_eq!(o.discarder_pays, DiscarderPays::ForAll);
        let e = o.set("RoundMode", "sideways").unwrap_err().to_string();
        assert_eq!(e, "option RoundMode: 'sideways' is not one of none, off, up");
        assert!(o.set("RoundUnit", "50").unwrap_err().to_string().contains("1, 10 or 100"));
        assert!(o.set("DealerBonus", "2001").is_err());
        assert!(o.set("DealerBonus", "2000").is_ok());
    }

    #[test]
    fn combinations_seed_000_rules_out_are_rejected() {
        let file = |lines: &[&str]| {
            let text: String = lines.iter().map(|l| format!("GameOption 0 {l} x\n")).collect();
            GameOptions::from_option_file(&text)
        };
        let e = file(&["RoundMode string 1110 1 off", "RoundUnit nat 1110 1 1"]).unwrap_err().to_string();
        assert!(e.contains("RoundUnit") && e.contains("RoundAtPayTime"), "{e}");
        assert!(
            file(&["RoundMode string 1110 1 off", "RoundUnit nat 1110 1 1", "RoundAtPayTime bool 1110 1 1"]).is_ok()
        );
        let e = file(&["RoundMode string 1110 1 up", "RoundSixUp bool 1110 1 1"]).unwrap_err().to_string();
        assert!(e.contains("RoundSixUp") && e.contains("rounding off"), "{e}");
        assert!(file(&["RoundBeforeDoubles string 1110 1 off", "RoundSixUp bool 1110 1 1"]).is_ok());
        assert!(file(&["RaiseMinimumOn5thExtra bool 1110 1 1"]).is_err());
    }

    #[test]
    fn rounding_as_seed_000_describes_it() {
        let off = |v, u| round_to(v, u, Rounding::Off, false);
        let up = |v, u| round_to(v, u, Rounding::Up, false);
        let six = |v, u| round_to(v, u, Rounding::Off, true);
        assert_eq!((off(64, 10), off(65, 10), off(24, 10), off(25, 10)), (60, 70, 20, 30));
        assert_eq!((off(149, 100), off(150, 100), up(21, 10), up(101, 100), up(22, 10)), (100, 200, 30, 200, 30));
        assert_eq!((six(25, 10), six(26, 10), six(159, 100), six(160, 100)), (20, 30, 100, 200));
        assert_eq!((off(-149, 100), up(-101, 100), off(7, 1)), (-100, -200, 7));
        assert_eq!(round_to(123, 10, Rounding::None, false), 123);
    }

    #[test]
    fn score_parts() {
        let s = ScoreValue(50_020_015);
        assert_eq!((s.centi_limits(), s.doubles_part(), s.points_part()), (50, 2, 15));
    }
}
