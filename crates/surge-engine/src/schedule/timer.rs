//! timer: a timerfd that wakes an event loop at sub-millisecond precision (epoll_wait's
//! own timeout has millisecond granularity, too coarse to pace an open-model schedule).

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

use mio::unix::SourceFd;
use mio::{Interest, Registry, Token};
use rustix::time::{
    timerfd_create, timerfd_settime, Itimerspec, TimerfdClockId, TimerfdFlags, TimerfdTimerFlags, Timespec,
};

/// Timer is a one-shot monotonic timer registered with a poll under its own token.
pub(crate) struct Timer {
    fd: OwnedFd,
    armed_for_ns: Option<u64>,
}

impl Timer {
    /// new creates the timer and registers it under `token`.
    pub(crate) fn new(registry: &Registry, token: Token) -> io::Result<Timer> {
        let fd = timerfd_create(TimerfdClockId::Monotonic, TimerfdFlags::NONBLOCK | TimerfdFlags::CLOEXEC)?;
        registry.register(&mut SourceFd(&fd.as_raw_fd()), token, Interest::READABLE)?;
        Ok(Timer { fd, armed_for_ns: None })
    }

    /// arm makes the timer fire `delay_ns` from now, for the deadline `deadline_ns`; a timer
    /// already armed for the same deadline is left alone (no syscall).
    pub(crate) fn arm(&mut self, deadline_ns: u64, delay_ns: u64) -> io::Result<()> {
        if self.armed_for_ns == Some(deadline_ns) {
            return Ok(());
        }
        timerfd_settime(&self.fd, TimerfdTimerFlags::empty(), &one_shot(delay_ns))?;
        self.armed_for_ns = Some(deadline_ns);
        Ok(())
    }

    /// fired clears the timer's readiness after it woke the loop.
    pub(crate) fn fired(&mut self) {
        let mut ticks = [0u8; 8];
        let _ = rustix::io::read(&self.fd, &mut ticks);
        self.armed_for_ns = None;
    }
}

/// one_shot is the timer setting that expires once, `delay_ns` from now (at least 1 ns: a
/// zero setting would disarm the timer instead).
pub(crate) fn one_shot(delay_ns: u64) -> Itimerspec {
    let delay_ns = delay_ns.max(1);
    let secs = i64::try_from(delay_ns / 1_000_000_000).unwrap_or(i64::MAX);
    // Below 10^9, so it fits every platform's nanosecond field.
    let nanos = (delay_ns % 1_000_000_000) as _;
    Itimerspec { it_interval: Timespec { tv_sec: 0, tv_nsec: 0 }, it_value: Timespec { tv_sec: secs, tv_nsec: nanos } }
}

/// set_precise_timer_slack asks the kernel to wake this thread's timers within ~1 µs
/// rather than the default 50 µs slack.
pub(crate) fn set_precise_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes a plain integer and affects only this thread.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
}
