//! schedule: when requests are sent — the open-model pacer, the precise timer that wakes a
//! loop on time, and the shared request budget.

pub mod budget;
pub mod pacer;
pub mod timer;
