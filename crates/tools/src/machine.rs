//! The process and the machine as the load tests read them (`/proc`): the
//! open-file limit, a process's memory and CPU time, the machine's busy time.

use serde::{Deserialize, Serialize};

/// The open-file limit, after raising the soft limit to the hard one.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct FdLimit {
    /// The soft limit found at startup.
    pub before: u64,
    /// The soft limit now.
    pub soft: u64,
    /// The hard limit.
    pub hard: u64,
}

/// Raises the soft RLIMIT_NOFILE to the hard limit (or to `fs.nr_open` when
/// the hard limit is unlimited).
pub fn raise_fd_limit() -> std::io::Result<FdLimit> {
    let (before, hard) = rlimit::Resource::NOFILE.get()?;
    // An unlimited hard limit still stops at the kernel's fs.nr_open.
    let nr_open = std::fs::read_to_string("/proc/sys/fs/nr_open").ok().and_then(|t| t.trim().parse().ok());
    let soft = rlimit::increase_nofile_limit(hard.min(nr_open.unwrap_or(u64::MAX))).unwrap_or(before);
    Ok(FdLimit { before, soft, hard })
}

/// VmRSS of a process, in KiB.
pub fn read_rss_kib(pid: u32) -> Option<u64> {
    procfs::process::Process::new(i32::try_from(pid).ok()?).ok()?.status().ok()?.vmrss
}

/// The soft open-file limit of another process.
pub fn read_fd_limit(pid: u32) -> Option<u64> {
    let limits = procfs::process::Process::new(i32::try_from(pid).ok()?).ok()?.limits().ok()?;
    match limits.max_open_files.soft_limit {
        procfs::process::LimitValue::Value(n) => Some(n),
        procfs::process::LimitValue::Unlimited => Some(u64::MAX),
    }
}

/// CPU time (user + system) a process has used, in seconds; `None` for self.
pub fn cpu_seconds(pid: Option<u32>) -> Option<f64> {
    let process = match pid {
        Some(p) => procfs::process::Process::new(i32::try_from(p).ok()?),
        None => procfs::process::Process::myself(),
    };
    Some(stat_cpu_seconds(&process.ok()?.stat().ok()?))
}

/// CPU time the whole machine has been busy (all CPUs added up) and the
/// total elapsed CPU time, in clock ticks (`/proc/stat`): busy is everything
/// but idle and iowait (guest time is already counted in user).
pub fn machine_ticks() -> Option<(u64, u64)> {
    use procfs::CurrentSI;
    let cpu = procfs::KernelStats::current().ok()?.total;
    let idle = cpu.idle + cpu.iowait.unwrap_or(0);
    let total = cpu.user
        + cpu.nice
        + cpu.system
        + idle
        + cpu.irq.unwrap_or(0)
        + cpu.softirq.unwrap_or(0)
        + cpu.steal.unwrap_or(0);
    Some((total - idle, total))
}

/// The CPU time (user + system, in seconds) of a process's or a thread's
/// `stat`.
pub fn stat_cpu_seconds(stat: &procfs::process::Stat) -> f64 {
    (stat.utime + stat.stime) as f64 / procfs::ticks_per_second() as f64
}
