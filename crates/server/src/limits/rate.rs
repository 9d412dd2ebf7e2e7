//! Rates: how many attempts at once, and how fast more are earned. A keyed
//! token bucket ([`Limit`], `governor`'s GCRA) limits logins, registrations
//! and tables opened per client; a single bucket ([`Bucket`]) limits one
//! seat's chat. A refused attempt is told how long to wait, which the HTTP
//! layer sends as `Retry-After`.

use std::hash::Hash;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultDirectRateLimiter, DefaultKeyedRateLimiter, Quota, RateLimiter};

/// How many attempts a key may make at once, and how fast it earns more.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rate {
    /// Attempts allowed in a burst.
    pub burst: u32,
    /// One more attempt is earned every `every`.
    pub every: Duration,
}

impl Rate {
    /// `burst` attempts at once, then one more every `every`.
    pub const fn new(burst: u32, every: Duration) -> Rate {
        Rate { burst, every }
    }

    fn quota(self) -> Quota {
        let burst = NonZeroU32::new(self.burst.max(1)).unwrap_or(NonZeroU32::MIN);
        Quota::with_period(self.every.max(Duration::from_millis(1)))
            .unwrap_or_else(|| Quota::per_second(NonZeroU32::MIN))
            .allow_burst(burst)
    }
}

/// A rate as written on the command line: `BURST/EVERY`, e.g. `10/2s` (ten
/// at once, then one more every two seconds) or `20/500ms`.
impl std::str::FromStr for Rate {
    type Err = String;

    fn from_str(text: &str) -> Result<Rate, String> {
        let bad = || format!("'{text}' is not a rate: write BURST/EVERY, e.g. 10/2s or 20/500ms");
        let (burst, every) = text.trim().split_once('/').ok_or_else(bad)?;
        let burst: u32 = burst.trim().parse().map_err(|_| bad())?;
        let every = every.trim();
        let (number, unit) = every.split_at(every.find(|c: char| !c.is_ascii_digit()).unwrap_or(every.len()));
        let number: u64 = number.parse().map_err(|_| bad())?;
        let every = match unit {
            "ms" => Duration::from_millis(number),
            "s" | "" => Duration::from_secs(number),
            "min" => Duration::from_secs(number.saturating_mul(60)),
            _ => return Err(bad()),
        };
        if burst == 0 || every.is_zero() {
            return Err(format!("'{text}': the burst and the time must be more than 0"));
        }
        Ok(Rate { burst, every })
    }
}

impl std::fmt::Display for Rate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ms = self.every.as_millis();
        match ms {
            _ if ms.is_multiple_of(60_000) => write!(f, "{}/{}min", self.burst, ms / 60_000),
            _ if ms.is_multiple_of(1000) => write!(f, "{}/{}s", self.burst, ms / 1000),
            _ => write!(f, "{}/{ms}ms", self.burst),
        }
    }
}

/// One bucket, for one holder (a seat's chat).
pub struct Bucket {
    limiter: DefaultDirectRateLimiter,
    clock: DefaultClock,
}

impl std::fmt::Debug for Bucket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bucket").finish_non_exhaustive()
    }
}

impl Bucket {
    /// A full bucket at `rate`.
    pub fn new(rate: Rate) -> Bucket {
        Bucket { limiter: RateLimiter::direct(rate.quota()), clock: DefaultClock::default() }
    }

    /// Takes one attempt; if none is left, how long until one is.
    pub fn check(&self) -> Result<(), Duration> {
        self.limiter.check().map_err(|not_until| not_until.wait_time_from(self.clock.now()))
    }
}

/// What is left of `level` put in a leaky bucket at `since`, one draining
/// every `every` (at least a millisecond).
pub(super) fn drained(level: f64, since: std::time::Instant, every: Duration) -> f64 {
    let every = every.max(Duration::from_millis(1)).as_secs_f64();
    (level - since.elapsed().as_secs_f64() / every).max(0.0)
}

/// Failures counted per key and forgiven at a steady pace: a leaky bucket
/// that only failures fill, one strike draining every `rate.every`. A key
/// with `rate.burst` strikes waiting is refused until one drains. Unlike a
/// token bucket, it can be asked how full it is without taking anything,
/// so that a request can be judged before its outcome is known.
pub struct Strikes<K: Hash + Eq> {
    rate: Rate,
    levels: std::sync::Mutex<std::collections::HashMap<K, (f64, std::time::Instant)>>,
    added: AtomicU64,
}

impl<K: Hash + Eq> std::fmt::Debug for Strikes<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Strikes").field("rate", &self.rate).finish_non_exhaustive()
    }
}

impl<K: Hash + Eq> Strikes<K> {
    /// No strikes yet; `rate.burst` of them refuse a key.
    pub fn new(rate: Rate) -> Strikes<K> {
        Strikes { rate, levels: Default::default(), added: AtomicU64::new(0) }
    }

    fn drained(&self, level: f64, since: std::time::Instant) -> f64 {
        drained(level, since, self.rate.every)
    }

    /// The rate strikes drain at.
    pub fn rate(&self) -> Rate {
        self.rate
    }

    /// The strikes against `key` now.
    pub fn level(&self, key: &K) -> f64 {
        let levels = self.levels.lock().unwrap_or_else(|e| e.into_inner());
        levels.get(key).map_or(0.0, |&(level, at)| self.drained(level, at))
    }

    /// Whether `key` has (all but drained) its full burst of strikes.
    pub fn full(&self, key: &K) -> bool {
        self.level(key) + 1.0 > f64::from(self.rate.burst)
    }

    /// `None` if `key` may try once more with at most `allowed` strikes
    /// against it; else how long until it may.
    pub fn wait(&self, key: &K, allowed: u32) -> Option<Duration> {
        let over = self.level(key) + 1.0 - f64::from(allowed.max(1));
        (over > 0.0).then(|| self.rate.every.mul_f64(over) + Duration::from_millis(1))
    }

    /// As [`Strikes::wait`], against the rate's own burst.
    pub fn wait_full(&self, key: &K) -> Option<Duration> {
        self.wait(key, self.rate.burst)
    }

    /// One more strike against `key`.
    pub fn add(&self, key: K) {
        let mut levels = self.levels.lock().unwrap_or_else(|e| e.into_inner());
        if self.added.fetch_add(1, Ordering::Relaxed) % PRUNE_EVERY == PRUNE_EVERY - 1 {
            levels.retain(|_, &mut (level, at)| self.drained(level, at) > 0.0);
        }
        let now = std::time::Instant::now();
        let level = levels.get(&key).map_or(0.0, |&(level, at)| self.drained(level, at));
        levels.insert(key, (level + 1.0, now));
    }
}

/// One limit, keyed by address or by name.
pub struct Limit<K: Hash + Eq + Clone> {
    limiter: DefaultKeyedRateLimiter<K>,
    clock: DefaultClock,
    checks: AtomicU64,
}

impl<K: Hash + Eq + Clone> std::fmt::Debug for Limit<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Limit").field("keys", &self.limiter.len()).finish()
    }
}

/// Keys whose buckets are full again are forgotten every so many checks,
/// so that the map does not grow with every address ever seen.
const PRUNE_EVERY: u64 = 4096;

impl<K: Hash + Eq + Clone> Limit<K> {
    /// A limit at `rate`.
    pub fn new(rate: Rate) -> Limit<K> {
        Limit { limiter: RateLimiter::keyed(rate.quota()), clock: DefaultClock::default(), checks: AtomicU64::new(0) }
    }

    /// Takes one attempt for `key`; if none is left, how long until one is.
    pub fn check(&self, key: &K) -> Result<(), Duration> {
        if self.checks.fetch_add(1, Ordering::Relaxed) % PRUNE_EVERY == PRUNE_EVERY - 1 {
            self.limiter.retain_recent();
        }
        self.limiter.check_key(key).map_err(|not_until| not_until.wait_time_from(self.clock.now()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_then_a_wait() {
        let limit = Limit::new(Rate { burst: 3, every: Duration::from_secs(60) });
        for _ in 0..3 {
            assert!(limit.check(&"a").is_ok());
        }
        let wait = limit.check(&"a").unwrap_err();
        assert!(wait > Duration::from_secs(50) && wait <= Duration::from_secs(60), "{wait:?}");
        // Another key has its own bucket.
        assert!(limit.check(&"b").is_ok());
        let bucket = Bucket::new(Rate::new(2, Duration::from_secs(60)));
        assert!(bucket.check().is_ok() && bucket.check().is_ok() && bucket.check().is_err());
    }

    #[test]
    fn strikes_drain_and_refuse_only_when_full() {
        let strikes = Strikes::new(Rate::new(3, Duration::from_secs(60)));
        assert_eq!(strikes.wait_full(&"a"), None);
        strikes.add("a");
        strikes.add("a");
        assert_eq!(strikes.wait_full(&"a"), None, "a third try is allowed");
        assert!(strikes.wait(&"a", 1).is_some(), "but not where one strike is too many");
        strikes.add("a");
        let wait = strikes.wait_full(&"a").expect("three strikes refuse");
        assert!(wait > Duration::from_secs(55) && wait <= Duration::from_secs(61), "{wait:?}");
        assert!(strikes.full(&"a") && !strikes.full(&"b"));
    }

    #[test]
    fn rates_are_written_burst_slash_time() {
        assert_eq!("10/2s".parse(), Ok(Rate::new(10, Duration::from_secs(2))));
        assert_eq!("20/500ms".parse(), Ok(Rate::new(20, Duration::from_millis(500))));
        assert_eq!("5/10min".parse(), Ok(Rate::new(5, Duration::from_secs(600))));
        assert_eq!(Rate::new(10, Duration::from_secs(2)).to_string(), "10/2s");
        assert_eq!(Rate::new(20, Duration::from_millis(500)).to_string(), "20/500ms");
        assert_eq!(Rate::new(5, Duration::from_secs(600)).to_string(), "5/10min");
        for bad in ["10", "0/1s", "10/0s", "ten/1s", "10/1h", "/1s"] {
            assert!(bad.parse::<Rate>().is_err(), "{bad}");
        }
    }
}
