//! schedule: when requests are sent — the open-model pacer, the precise timer that wakes a
//! loop on time, and the shared request budget.

pub(crate) mod budget;
pub(crate) mod pacer;
pub(crate) mod timer;
