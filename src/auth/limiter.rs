//! Rate limits on logins and registrations, per client address and per
//! account name: a keyed token bucket (`governor`'s GCRA). A refused
//! attempt is told how long to wait, which the HTTP layer sends as
//! `Retry-After`.

use std::hash::Hash;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

/// How many attempts a key may make at once, and how fast it earns more.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rate {
    /// Attempts allowed in a burst.
    pub burst: u32,
    /// One more attempt is earned every `every`.
    pub every: Duration,
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
        let burst = NonZeroU32::new(rate.burst.max(1)).unwrap_or(NonZeroU32::MIN);
        let quota = Quota::with_period(rate.every.max(Duration::from_millis(1)))
            .unwrap_or_else(|| Quota::per_second(NonZeroU32::MIN))
            .allow_burst(burst);
        Limit { limiter: RateLimiter::keyed(quota), clock: DefaultClock::default(), checks: AtomicU64::new(0) }
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
    }
}
