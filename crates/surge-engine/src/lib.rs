//! surge-engine: the load engine (in progress).
