//! A process's threads and the CPU each used, from `/proc/PID/task/*/stat`:
//! the load test samples the server's at the window's start and end and
//! reports the busiest. A thread near 100 % of one core while the machine
//! has cores to spare is a serial path: the share of the busiest thread is
//! the proxy for the serial fraction (issue 29).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

/// One thread's share of a window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ThreadShare {
    /// The thread's name (its `comm`, at most 15 characters: tokio's workers
    /// are `tokio-runtime-w`, sqlx's SQLite threads `sqlx-sqlite-wor`).
    pub name: String,
    /// The thread's id.
    pub tid: i32,
    /// CPU used over the window, in percent of one core.
    pub cpu_percent: f64,
}

/// CPU seconds used so far by each thread of process `pid`, by thread id,
/// with its name; empty if the process cannot be read.
pub fn sample(pid: u32) -> HashMap<i32, (String, f64)> {
    let Ok(process) = i32::try_from(pid).map_err(|_| ()).and_then(|p| procfs::process::Process::new(p).map_err(|_| ()))
    else {
        return HashMap::new();
    };
    let Ok(tasks) = process.tasks() else { return HashMap::new() };
    tasks
        .flatten()
        .filter_map(|task| task.stat().ok())
        .map(|stat| (stat.pid, (stat.comm.clone(), crate::machine::stat_cpu_seconds(&stat))))
        .collect()
}

/// The `n` threads that used the most CPU between two samples `window`
/// seconds apart, busiest first (a thread born in the window counts from
/// zero; one that ended is left out).
pub fn busiest(
    start: &HashMap<i32, (String, f64)>,
    end: &HashMap<i32, (String, f64)>,
    window: f64,
    n: usize,
) -> Vec<ThreadShare> {
    let mut shares: Vec<ThreadShare> = end
        .iter()
        .map(|(&tid, (name, seconds))| {
            let before = start.get(&tid).map_or(0.0, |(_, s)| *s);
            ThreadShare { name: name.clone(), tid, cpu_percent: (seconds - before).max(0.0) / window.max(1e-9) * 100.0 }
        })
        .collect();
    shares.sort_by(|a, b| b.cpu_percent.total_cmp(&a.cpu_percent).then(a.tid.cmp(&b.tid)));
    shares.truncate(n);
    shares
}

/// The shares in words: "sqlx-sqlite-wor 57%, tokio-runtime-w 10%, ...".
pub fn describe(shares: &[ThreadShare]) -> String {
    shares.iter().map(|s| format!("{} {:.0}%", s.name, s.cpu_percent)).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_busiest_threads_of_a_window() {
        let start = HashMap::from([(1, ("main".to_string(), 1.0)), (2, ("worker".to_string(), 5.0))]);
        let end = HashMap::from([
            (1, ("main".to_string(), 1.5)),
            (2, ("worker".to_string(), 9.0)),
            (3, ("new".to_string(), 2.0)),
        ]);
        let top = busiest(&start, &end, 10.0, 2);
        assert_eq!(
            top.iter().map(|s| (s.name.as_str(), s.cpu_percent.round())).collect::<Vec<_>>(),
            [("worker", 40.0), ("new", 20.0)]
        );
        assert_eq!(describe(&top), "worker 40%, new 20%");
    }

    #[test]
    fn this_process_has_threads_to_read() {
        let me = sample(std::process::id());
        assert!(!me.is_empty(), "at least the main thread");
    }
}
