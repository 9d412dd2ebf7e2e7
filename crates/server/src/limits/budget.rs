//! The budget of play nobody takes part in: how many hands of robots alone
//! one player (its account, or its address) may have played for it per hour
//! and per day, and how long the games of robots alone are stored unless
//! someone keeps them. A game of four robots costs the store as much as a
//! game of people and finishes in seconds: without a budget over time one
//! address filled 1.3 GiB a minute, one game after the other, within the
//! cap of games at once.
//!
//! A hand is paid for when it is dealt: the first by the request that starts
//! the game (refused with 429 when the budget is spent), each later one by
//! the table, which plays the hand it has dealt and ends the game when the
//! budget is found spent. Each window is a leaky bucket of hands: it holds
//! at most the window's number, and drains at that many per window. The
//! level is kept in hands and the rate read when a hand is paid for, so
//! that an admin's change of the budget applies at once to what each
//! player has already spent.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::rate::{Rate, drained};

/// The hours of a day, and the seconds of an hour.
const HOUR: Duration = Duration::from_secs(3600);
const DAY: Duration = Duration::from_secs(24 * 3600);

/// The budget in force, as the flags set it or an admin changed it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RobotBudget {
    /// Hands of robots alone one player may have dealt per hour (a bucket of
    /// this many, refilled at this many an hour); 0: no games of robots alone.
    pub hands_per_hour: u32,
    /// Hands of robots alone one player may have dealt per day (a bucket of
    /// this many, refilled at this many a day).
    pub hands_per_day: u32,
    /// How long a game of robots alone is stored after its last change,
    /// unless someone keeps it.
    pub kept_for: Duration,
}

impl Default for RobotBudget {
    /// 48 hands an hour (three games of the longest a game of robots may
    /// be, 4 rounds of at least 4 hands), 192 a day, kept a week.
    fn default() -> RobotBudget {
        RobotBudget { hands_per_hour: 48, hands_per_day: 192, kept_for: Duration::from_secs(7 * 24 * 3600) }
    }
}

impl RobotBudget {
    /// No budget (tests of other things).
    pub fn unlimited() -> RobotBudget {
        RobotBudget { hands_per_hour: u32::MAX, hands_per_day: u32::MAX, ..RobotBudget::default() }
    }

    /// The two windows: their names (as counted in the cluster's ledger and
    /// told to a refused client) and their rates.
    pub fn windows(&self) -> [(&'static str, u32, Rate); 2] {
        [
            ("hour", self.hands_per_hour, rate(self.hands_per_hour, HOUR)),
            ("day", self.hands_per_day, rate(self.hands_per_day, DAY)),
        ]
    }
}

/// `n` at once, refilled at `n` per `window`.
fn rate(n: u32, window: Duration) -> Rate {
    Rate::new(n.max(1), (window / n.max(1)).max(Duration::from_millis(1)))
}

/// One node's buckets of hands, by key (`hour account:7`): the level of
/// each when last paid into, and when. An empty bucket is the same as no
/// entry, so the entries of buckets drained are dropped as the map grows.
#[derive(Debug, Default)]
pub struct Tally {
    levels: Mutex<HashMap<String, Level>>,
}

/// A bucket's level when last paid into, when, and when it is empty (at
/// the rate of then).
#[derive(Clone, Copy, Debug)]
struct Level {
    hands: f64,
    at: Instant,
    empty_at: Instant,
}

/// Entries kept before those of full buckets are dropped.
const TALLY_KEPT: usize = 4096;

impl Tally {
    /// Pays one into `key`'s bucket, which holds `rate.burst` and drains
    /// one every `rate.every`; or says how long until there is room (the
    /// same arithmetic as the cluster's ledger).
    pub fn spend(&self, key: &str, rate: Rate) -> Result<(), Duration> {
        let now = Instant::now();
        let every = rate.every.max(Duration::from_millis(1));
        let mut levels = self.levels.lock().unwrap_or_else(|e| e.into_inner());
        if levels.len() >= TALLY_KEPT {
            levels.retain(|_, level| level.empty_at > now);
        }
        let hands = levels.get(key).map_or(0.0, |l| drained(l.hands, l.at, every));
        let over = hands + 1.0 - f64::from(rate.burst);
        if over > 0.0 {
            return Err(every.mul_f64(over));
        }
        let level = Level { hands: hands + 1.0, at: now, empty_at: now + every.mul_f64(hands + 1.0) };
        levels.insert(key.to_string(), level);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_gives_its_burst_then_refills_at_its_rate() {
        let tally = Tally::default();
        let rate = Rate::new(3, Duration::from_secs(60));
        for _ in 0..3 {
            tally.spend("hour account:1", rate).unwrap();
        }
        let wait = tally.spend("hour account:1", rate).unwrap_err();
        assert!(wait > Duration::from_secs(59) && wait <= Duration::from_secs(60), "{wait:?}");
        assert!(tally.spend("hour account:2", rate).is_ok(), "every key has its own");
        // A smaller budget applies at once to what was spent, and so does a larger.
        assert!(tally.spend("hour account:2", Rate::new(1, Duration::from_secs(60))).is_err());
        assert!(tally.spend("hour account:1", Rate::new(4, Duration::from_secs(60))).is_ok());
        assert!(tally.spend("hour account:1", Rate::new(4, Duration::from_secs(60))).is_err());
    }

    #[test]
    fn the_windows_divide_the_hour_and_the_day() {
        let budget = RobotBudget::default();
        let [(hour, n, per_hour), (day, _, per_day)] = budget.windows();
        assert_eq!((hour, day, n), ("hour", "day", 48));
        assert_eq!(per_hour, Rate::new(48, Duration::from_secs(75)));
        assert_eq!(per_day, Rate::new(192, Duration::from_secs(450)));
    }
}
