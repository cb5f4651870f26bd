//! timer: a timerfd that wakes an event loop at sub-millisecond precision (epoll_wait's
//! own timeout has millisecond granularity, too coarse to pace an open-model schedule).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use mio::unix::SourceFd;
use mio::{Interest, Registry, Token};

/// Timer is a one-shot monotonic timer registered with a poll under its own token.
pub struct Timer {
    fd: OwnedFd,
    armed_for_ns: Option<u64>,
}

impl Timer {
    /// new creates the timer and registers it under `token`.
    pub fn new(registry: &Registry, token: Token) -> io::Result<Timer> {
        // SAFETY: timerfd_create has no memory-safety preconditions; the result is checked.
        let raw = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC) };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` is a fresh, valid descriptor we own from here on.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        registry.register(&mut SourceFd(&fd.as_raw_fd()), token, Interest::READABLE)?;
        Ok(Timer { fd, armed_for_ns: None })
    }

    /// arm makes the timer fire `delay_ns` from now, for the deadline `deadline_ns`; a timer
    /// already armed for the same deadline is left alone (no syscall).
    pub fn arm(&mut self, deadline_ns: u64, delay_ns: u64) -> io::Result<()> {
        if self.armed_for_ns == Some(deadline_ns) {
            return Ok(());
        }
        let delay_ns = delay_ns.max(1);
        let spec = libc::itimerspec {
            it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
            it_value: libc::timespec {
                tv_sec: (delay_ns / 1_000_000_000) as libc::time_t,
                tv_nsec: (delay_ns % 1_000_000_000) as libc::c_long,
            },
        };
        // SAFETY: `spec` is a valid itimerspec and the fd is a timerfd we own.
        let rc = unsafe { libc::timerfd_settime(self.fd.as_raw_fd(), 0, &spec, std::ptr::null_mut()) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        self.armed_for_ns = Some(deadline_ns);
        Ok(())
    }

    /// fired clears the timer's readiness after it woke the loop.
    pub fn fired(&mut self) {
        let mut ticks = [0u8; 8];
        // SAFETY: reading 8 bytes into a valid 8-byte buffer from our timerfd.
        let _ = unsafe { libc::read(self.fd.as_raw_fd(), ticks.as_mut_ptr().cast(), ticks.len()) };
        self.armed_for_ns = None;
    }
}

/// set_precise_timer_slack asks the kernel to wake this thread's timers within ~1 µs
/// rather than the default 50 µs slack.
pub fn set_precise_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes a plain integer and affects only this thread.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
}
