//! Latencies in microseconds, recorded by many tasks at once (the load
//! test's clients and logins, the store benchmark's tables), and their
//! percentiles.

use std::sync::Mutex;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Significant figures the latencies keep: percentiles within 0.1 %.
const SIGNIFICANT_FIGURES: u8 = 3;
/// The largest latency told apart, in microseconds (an hour); larger ones
/// count as this in the percentiles (the maximum and mean stay exact).
const LATENCY_CEILING_US: u64 = 3_600_000_000;

/// Latencies in microseconds, shared by every task that records them (the
/// load test's clients, the store benchmark's tables): an HDR
/// histogram for the percentiles, with the exact maximum and sum.
pub struct Latencies {
    recorded: Mutex<Recorded>,
}

struct Recorded {
    histogram: Histogram<u64>,
    max: u64,
    sum: u64,
}

impl Default for Latencies {
    fn default() -> Latencies {
        Latencies::new()
    }
}

impl Latencies {
    /// None yet.
    pub fn new() -> Latencies {
        let histogram = Histogram::new_with_bounds(1, LATENCY_CEILING_US, SIGNIFICANT_FIGURES)
            .expect("the bounds and precision are constants hdrhistogram accepts");
        Latencies { recorded: Mutex::new(Recorded { histogram, max: 0, sum: 0 }) }
    }

    /// Counts one value.
    pub fn record(&self, value: u64) {
        let mut r = self.recorded.lock().unwrap_or_else(|e| e.into_inner());
        r.histogram.saturating_record(value);
        r.max = r.max.max(value);
        r.sum = r.sum.saturating_add(value);
    }

    /// The percentiles of what was counted (`None` when nothing was).
    pub fn summary(&self) -> Option<LatencySummary> {
        let r = self.recorded.lock().unwrap_or_else(|e| e.into_inner());
        let count = r.histogram.len();
        if count == 0 {
            return None;
        }
        // The highest value of a percentile's bucket may lie above the largest recorded.
        let at = |q| r.histogram.value_at_quantile(q).min(r.max);
        Some(LatencySummary {
            count,
            p50_us: at(0.50),
            p90_us: at(0.90),
            p99_us: at(0.99),
            p999_us: at(0.999),
            max_us: r.max,
            mean_us: r.sum as f64 / count as f64,
        })
    }
}

/// Latency percentiles, in microseconds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    /// Events measured.
    pub count: u64,
    /// Median.
    pub p50_us: u64,
    /// 90th percentile.
    pub p90_us: u64,
    /// 99th percentile.
    pub p99_us: u64,
    /// 99.9th percentile.
    pub p999_us: u64,
    /// The largest, exactly.
    pub max_us: u64,
    /// The mean.
    pub mean_us: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_match_a_sorted_sample_within_the_resolution() {
        let h = Latencies::new();
        // 1..=100000 microseconds, shuffled by a stride coprime to the count.
        let n = 100_000u64;
        let sample: Vec<u64> = (0..n).map(|i| (i * 7919) % n + 1).collect();
        for &v in &sample {
            h.record(v);
        }
        let mut sorted = sample.clone();
        sorted.sort_unstable();
        let exact = |q: f64| sorted[((q * n as f64).ceil() as usize).max(1) - 1];
        let s = h.summary().expect("values were recorded");
        assert_eq!(s.count, n);
        assert_eq!(s.max_us, n);
        for (q, got) in [(0.5, s.p50_us), (0.9, s.p90_us), (0.99, s.p99_us), (0.999, s.p999_us)] {
            let want = exact(q);
            assert!(got >= want && got as f64 <= want as f64 * 1.001, "q {q}: {got} vs {want}");
        }
        assert!((s.mean_us - (n + 1) as f64 / 2.0).abs() < 1e-6);
    }

    #[test]
    fn small_values_are_exact_and_empty_has_no_percentile() {
        assert!(Latencies::new().summary().is_none());
        let h = Latencies::new();
        for v in [3, 1, 2, 100] {
            h.record(v);
        }
        let s = h.summary().expect("values were recorded");
        assert_eq!((s.p50_us, s.p90_us, s.p99_us, s.max_us), (2, 100, 100, 100));
        // Beyond the ceiling: the percentiles saturate, the maximum and mean do not.
        let h = Latencies::new();
        h.record(0);
        h.record(LATENCY_CEILING_US * 10);
        let s = h.summary().expect("values were recorded");
        assert_eq!((s.p50_us, s.max_us, s.mean_us), (0, LATENCY_CEILING_US * 10, LATENCY_CEILING_US as f64 * 5.0));
        assert!(s.p99_us >= LATENCY_CEILING_US && s.p99_us < LATENCY_CEILING_US * 10 / 9, "{}", s.p99_us);
    }
}
