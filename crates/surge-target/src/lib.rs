//! surge-target: the reference system under test (placeholder until issue 4 lands).
