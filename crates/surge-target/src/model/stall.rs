//! Whole-server pauses, like a stop-the-world garbage collection.

/// Stall freezes the server for `for_ns` at the start of every `every_ns` period counted from
/// server start (windows `[k·every, k·every + for)` for k ≥ 1): nothing is answered inside a
/// window; what is due in one is answered when it ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stall {
    /// every_ns is the period between the starts of two stalls.
    pub every_ns: u64,
    /// for_ns is how long each stall lasts (less than `every_ns`).
    pub for_ns: u64,
}

impl Stall {
    /// release_ns is when a response due at `due_ns` can be written: `due_ns` itself outside a
    /// stall, the end of the stall inside one.
    pub fn release_ns(&self, due_ns: u64) -> u64 {
        if self.every_ns == 0 {
            return due_ns;
        }
        let k = due_ns / self.every_ns;
        let window_start = k * self.every_ns;
        if k >= 1 && due_ns - window_start < self.for_ns {
            window_start + self.for_ns
        } else {
            due_ns
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_inside_windows_only() {
        let stall = Stall { every_ns: 100, for_ns: 30 };
        let cases: &[(u64, u64)] =
            &[(0, 0), (99, 99), (100, 130), (129, 130), (130, 130), (150, 150), (205, 230), (1_000_000, 1_000_030)];
        for &(due, want) in cases {
            assert_eq!(stall.release_ns(due), want, "due {due}");
        }
    }
}
