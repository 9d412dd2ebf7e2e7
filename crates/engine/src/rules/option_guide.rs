//! The option catalogue for people: a short label for each option, the
//! bounds its values must keep, and the words a `string` option takes. The
//! catalogue itself (names, types, defaults, mj-server's one-line
//! descriptions) is [`CATALOGUE`]; what is here is checked against it and
//! against [`GameOptions::set`], which stays the one judge of a value.

use super::options::{
    CATALOGUE, DiscarderPays, Itemisation, MAX_ROUNDS, MAX_TIMEOUT_GRACE_SECS, MAX_TIMEOUT_SECS, OptionSpec,
    OptionType, OptionWord, Rounding,
};

/// The values an option's value must keep: at least `min`, at most `max`,
/// one of `allowed` when given (for numbers), one of `words` (for a `string`
/// option).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OptionBounds {
    /// The least value.
    pub min: Option<i64>,
    /// The greatest value.
    pub max: Option<i64>,
    /// The only values allowed, when only some are.
    pub allowed: Option<Vec<i64>>,
    /// The words a `string` option takes.
    pub words: Option<&'static [&'static str]>,
}

/// A short label for the option named `name`, in words a player knows
/// ("Time to claim (seconds)"); the name itself for an unknown one.
pub fn label(name: &str) -> &str {
    match name {
        "Timeout" => "Time to claim a discard (seconds, 0: no limit)",
        "TimeoutGrace" => "Extra time for slow connections (seconds)",
        "ScoreLimit" => "Limit on a hand's score",
        "NoLimit" => "No limit on a hand's score",
        "MahJongScore" => "Points for going Mah-Jong",
        "SevenPairs" => "Seven pairs may go out",
        "SevenPairsVal" => "Score of a seven pairs hand",
        "Flowers" => "Play with flowers and seasons",
        "FlowersLoose" => "Flowers replaced from the dead wall",
        "FlowersOwnEach" => "Score of each own flower or season",
        "FlowersOwnBoth" => "Score of own flower and own season",
        "FlowersBouquet" => "Score of all four flowers or all four seasons",
        "DeadWall" => "Keep a dead wall",
        "DeadWall16" => "Dead wall of 16 tiles, never replenished",
        "ConcealedFully" => "Score of a fully concealed hand",
        "ConcealedAlmost" => "Score of a hand concealed until going out",
        "LosersPurity" => "Losing hands score purity and concealment doubles",
        "KongHas3Types" => "Claimed kongs count as concealed for doubling",
        "EastDoubles" => "East pays and receives double",
        "LosersSettle" => "Losers settle among themselves",
        "DiscDoubles" => "The discarder of the winning tile pays double",
        "ShowOnWashout" => "Show every hand after a wash-out",
        "NumRounds" => "Rounds to play (1, 2 or a multiple of 4)",
        "RoundBeforeDoubles" => "Round the basic points before doubling",
        "RoundUnit" => "Rounding unit",
        "RoundMode" => "Round the score",
        "RoundAtPayTime" => "Round each payment instead of the score",
        "RoundSixUp" => "Round up only from six tenths",
        "PaymentItemisation" => "How losers' payments are listed",
        "DiscarderPays" => "Who pays the winner of a discard",
        "MultipleWinners" => "Several players may go out on one discard",
        "DealPassesOnEastWin" => "The deal passes when East wins",
        "DealPassesOnWashout" => "The deal passes after a wash-out",
        "DealerBonus" => "Bonus per dealer's extra hand (points, 0: off)",
        "DealerBonusAnyWinner" => "Dealer's bonus paid to any winner",
        "DealerBonusTaiwan" => "Dealer's bonus paid by East alone (Taiwanese)",
        "MinimumDoubles" => "Doubles a hand needs to go out",
        "RaiseMinimumOn5thExtra" => "One more double needed from the dealer's 5th extra hand",
        "Animals" => "Play with the four animal tiles",
        "AnimalScore" => "Score of each animal tile",
        "TileSwap" => "East may swap tiles before play",
        "OneChowOneSuit" => "Ordinary hands: at most one chow, one suit",
        "DoubleDice" => "A double on the dice doubles every score",
        "WashBelow" => "Losers' differences below this are not paid",
        "ShowWaits" => "Tell each player the tiles it waits on",
        other => other,
    }
}

/// The bounds of the option named `name` (none for an unknown one), as
/// [`GameOptions::set`] enforces them.
pub fn bounds(name: &str) -> OptionBounds {
    let range = |min: i64, max: i64| OptionBounds { min: Some(min), max: Some(max), ..OptionBounds::default() };
    let words = |words: &'static [&'static str]| OptionBounds { words: Some(words), ..OptionBounds::default() };
    match name {
        "Timeout" => range(0, MAX_TIMEOUT_SECS),
        "TimeoutGrace" => range(0, MAX_TIMEOUT_GRACE_SECS),
        "ScoreLimit" => range(1, 100_000_000),
        "NumRounds" => OptionBounds {
            min: Some(1),
            max: Some(MAX_ROUNDS),
            allowed: Some([1, 2].into_iter().chain((4..=MAX_ROUNDS).step_by(4)).collect()),
            words: None,
        },
        "RoundUnit" => OptionBounds { min: Some(1), max: Some(100), allowed: Some(vec![1, 10, 100]), words: None },
        "DealerBonus" => range(0, 2000),
        "MinimumDoubles" => range(0, 20),
        "WashBelow" => range(0, 100_000),
        "RoundBeforeDoubles" | "RoundMode" => words(Rounding::WORDS),
        "PaymentItemisation" => words(Itemisation::WORDS),
        "DiscarderPays" => words(DiscarderPays::WORDS),
        _ => match CATALOGUE.iter().find(|s| s.name == name).map(|s| s.kind) {
            Some(OptionType::Bool) => range(0, 1),
            Some(OptionType::Nat) => OptionBounds { min: Some(0), ..OptionBounds::default() },
            _ => OptionBounds::default(),
        },
    }
}

/// Every option of the catalogue with its label and bounds, in the
/// catalogue's order.
pub fn guide() -> impl Iterator<Item = (&'static OptionSpec, &'static str, OptionBounds)> {
    CATALOGUE.iter().map(|spec| (spec, label(spec.name), bounds(spec.name)))
}

/// Checks `bounds` against the options' own judge, [`GameOptions::set`].
#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::options::GameOptions;

    #[test]
    fn every_option_has_a_label_of_words() {
        for spec in CATALOGUE {
            let l = label(spec.name);
            assert_ne!(l, spec.name, "{} has no label", spec.name);
            assert!(l.contains(' '), "{}: {l} is words", spec.name);
        }
    }

    #[test]
    fn the_bounds_are_those_set_enforces() {
        for spec in CATALOGUE {
            let b = bounds(spec.name);
            let set = |v: &str| GameOptions::default().set(spec.name, v);
            if let Some(max) = b.max {
                assert!(set(&max.to_string()).is_ok(), "{} takes its max {max}", spec.name);
                assert!(set(&(max + 1).to_string()).is_err(), "{} refuses {}", spec.name, max + 1);
            }
            if let Some(min) = b.min.filter(|&m| m > 0) {
                assert!(set(&(min - 1).to_string()).is_err(), "{} refuses {}", spec.name, min - 1);
            }
            for v in b.allowed.iter().flatten() {
                assert!(set(&v.to_string()).is_ok(), "{} takes {v}", spec.name);
            }
            if let (Some(allowed), Some(min), Some(max)) = (&b.allowed, b.min, b.max) {
                for v in min..=max {
                    assert_eq!(set(&v.to_string()).is_ok(), allowed.contains(&v), "{} and {v}", spec.name);
                }
            }
            for w in b.words.into_iter().flatten() {
                assert!(set(w).is_ok(), "{} takes {w}", spec.name);
            }
            if spec.kind == OptionType::String {
                assert!(b.words.is_some(), "{} lists its words", spec.name);
                assert!(set("no-such-word").is_err());
            }
        }
    }
}
