//! system: process limits and CPU accounting the engine reads or adjusts.

use std::io;

/// raise_open_file_limit lifts the soft RLIMIT_NOFILE to the hard limit and returns
/// (old soft limit, new soft limit).
pub(crate) fn raise_open_file_limit() -> io::Result<(u64, u64)> {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes into the valid struct we pass.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &raw mut limit) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let old = limit.rlim_cur;
    if limit.rlim_cur < limit.rlim_max {
        limit.rlim_cur = limit.rlim_max;
        // SAFETY: setrlimit reads the valid struct we pass.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raw const limit) } != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok((old, limit.rlim_cur))
}

/// reserve_descriptor_table grows the process's descriptor table to hold descriptor `highest`
/// now, before the run's threads start. Linux grows the table by doubling as descriptors are
/// opened, and in a process with more than one thread each growth waits out an RCU grace
/// period (`synchronize_rcu`) inside the socket() that needed it: a worker opening its first
/// few hundred connections (growths past 64, 256 and 512) fell ~20 ms behind its schedule
/// (issue 14: the first second's send lag when surge started with only descriptors 0-2 open).
/// Best effort: the table is sized by duplicating a descriptor to `highest` and closing it.
pub(crate) fn reserve_descriptor_table(highest: u64) -> io::Result<()> {
    let Ok(highest) = libc::c_int::try_from(highest) else { return Ok(()) };
    let null = std::fs::File::open("/dev/null")?;
    // SAFETY: fcntl on a descriptor we own; F_DUPFD_CLOEXEC returns a new descriptor (>= highest)
    // that nothing else knows of, closed at once.
    let copy = unsafe { libc::fcntl(std::os::fd::AsRawFd::as_raw_fd(&null), libc::F_DUPFD_CLOEXEC, highest) };
    if copy < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `copy` is the descriptor fcntl just returned to us.
    unsafe { libc::close(copy) };
    Ok(())
}

/// descriptor_table_size is the current size of the process's descriptor table (`FDSize` in
/// /proc/self/status), or None where that cannot be read.
pub fn descriptor_table_size() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status.lines().find_map(|l| l.strip_prefix("FDSize:")).and_then(|v| v.trim().parse().ok())
}

/// CpuTime is user and system CPU time in seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CpuTime {
    /// user_s is time spent in user mode.
    pub user_s: f64,
    /// system_s is time spent in the kernel on our behalf.
    pub system_s: f64,
}

impl CpuTime {
    /// total_s is user plus system time.
    pub fn total_s(&self) -> f64 {
        self.user_s + self.system_s
    }

    /// since returns the CPU time spent between `earlier` and self.
    pub fn since(&self, earlier: &CpuTime) -> CpuTime {
        CpuTime { user_s: self.user_s - earlier.user_s, system_s: self.system_s - earlier.system_s }
    }
}

fn usage(who: libc::c_int) -> (CpuTime, u64) {
    // SAFETY: an all-zero rusage is a valid value for getrusage to overwrite.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes into the valid struct we pass.
    if unsafe { libc::getrusage(who, &raw mut ru) } != 0 {
        return (CpuTime::default(), 0);
    }
    let secs = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    (CpuTime { user_s: secs(ru.ru_utime), system_s: secs(ru.ru_stime) }, ru.ru_maxrss as u64)
}

/// thread_cpu_time is the calling thread's CPU time.
pub(crate) fn thread_cpu_time() -> CpuTime {
    usage(libc::RUSAGE_THREAD).0
}

/// thread_run_delay_s is how long the calling thread has been runnable but waiting for a core
/// (the scheduler's run-queue delay, /proc/thread-self/schedstat); None where it is not kept.
pub(crate) fn thread_run_delay_s() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let delay_ns: u64 = text.split_whitespace().nth(1)?.parse().ok()?;
    Some(delay_ns as f64 / 1e9)
}

/// process_usage is the whole process's CPU time and peak resident set size in KiB.
pub(crate) fn process_usage() -> (CpuTime, u64) {
    usage(libc::RUSAGE_SELF)
}

/// unix_now_s is the wall clock, in seconds since the Unix epoch (0 before it).
pub(crate) fn unix_now_s() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_that_sleeps_waits_for_no_core() {
        let before = thread_run_delay_s().expect("schedstat");
        std::thread::sleep(std::time::Duration::from_millis(20));
        let after = thread_run_delay_s().expect("schedstat");
        assert!(after >= before && after - before < 0.02, "{before} -> {after}");
    }

    #[test]
    fn reserve_descriptor_table_grows_the_table_at_once() {
        raise_open_file_limit().unwrap();
        reserve_descriptor_table(3000).unwrap();
        assert!(descriptor_table_size().unwrap() > 3000, "FDSize {:?}", descriptor_table_size());
    }
}
