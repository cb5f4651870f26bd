//! Request and response counts, kept per server thread with no shared write on the hot path.
//!
//! Each server thread owns one [`ThreadCounters`] and is its only writer, so an increment is
//! a relaxed load and store (no locked instruction, no cache line bouncing between cores);
//! readers on other threads sum all of them into [`Counts`] when `/stats` is asked for.
use std::sync::atomic::{AtomicU64, Ordering};

/// Route is what a request asked for, the key of every per-route count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// Health is `GET /health`.
    Health,
    /// Delay is `GET /delay/{ms}`.
    Delay,
    /// TasksCreate is `POST /tasks`.
    TasksCreate,
    /// TasksGet is `GET /tasks/{id}`.
    TasksGet,
    /// TasksList is `GET /tasks`.
    TasksList,
    /// TasksUpdate is `PUT /tasks/{id}`.
    TasksUpdate,
    /// TasksDelete is `DELETE /tasks/{id}`.
    TasksDelete,
    /// ChatCompletions is `POST /v1/chat/completions` (the inference model).
    ChatCompletions,
    /// Completions is `POST /v1/completions` (the inference model).
    Completions,
    /// Stats is `GET /stats`.
    Stats,
    /// StatsTasks is `GET /stats/tasks`.
    StatsTasks,
    /// StatsReset is `POST /stats/reset`.
    StatsReset,
    /// Other is any other method or path (answered 404 or 405).
    Other,
    /// Invalid is a request that could not be parsed (answered 400 and closed; not "received").
    Invalid,
}

/// ROUTE_COUNT is the number of [`Route`] variants.
pub const ROUTE_COUNT: usize = 14;

impl Route {
    /// ALL lists every route in index order.
    pub const ALL: [Route; ROUTE_COUNT] = [
        Route::Health,
        Route::Delay,
        Route::TasksCreate,
        Route::TasksGet,
        Route::TasksList,
        Route::TasksUpdate,
        Route::TasksDelete,
        Route::ChatCompletions,
        Route::Completions,
        Route::Stats,
        Route::StatsTasks,
        Route::StatsReset,
        Route::Other,
        Route::Invalid,
    ];

    /// name is the route's key in `/stats`, e.g. `GET /tasks/{id}`.
    pub fn name(self) -> &'static str {
        match self {
            Route::Health => "GET /health",
            Route::Delay => "GET /delay/{ms}",
            Route::TasksCreate => "POST /tasks",
            Route::TasksGet => "GET /tasks/{id}",
            Route::TasksList => "GET /tasks",
            Route::TasksUpdate => "PUT /tasks/{id}",
            Route::TasksDelete => "DELETE /tasks/{id}",
            Route::ChatCompletions => "POST /v1/chat/completions",
            Route::Completions => "POST /v1/completions",
            Route::Stats => "GET /stats",
            Route::StatsTasks => "GET /stats/tasks",
            Route::StatsReset => "POST /stats/reset",
            Route::Other => "other",
            Route::Invalid => "invalid",
        }
    }

    /// is_modeled says whether the server model (slots, queue, rate limit, errors) applies:
    /// every route but /health, the /stats routes and the inference routes (which have a
    /// model of their own).
    pub fn is_modeled(self) -> bool {
        !matches!(self, Route::Health | Route::Stats | Route::StatsTasks | Route::StatsReset | Route::Invalid)
            && !self.is_inference()
    }

    /// is_inference says whether the inference model answers: the OpenAI-compatible routes.
    pub fn is_inference(self) -> bool {
        matches!(self, Route::ChatCompletions | Route::Completions)
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// STATUSES are the status codes counted one by one; anything else is counted as "other".
pub const STATUSES: [u16; 12] = [200, 201, 204, 400, 404, 405, 413, 429, 431, 500, 501, 503];

/// STATUS_COUNT is the number of status buckets: [`STATUSES`] plus "other".
pub const STATUS_COUNT: usize = STATUSES.len() + 1;

/// status_index is the bucket of `status` in [`STATUSES`], or the "other" bucket.
pub fn status_index(status: u16) -> usize {
    STATUSES.iter().position(|&s| s == status).unwrap_or(STATUSES.len())
}

/// status_name is the key of bucket `index` in `/stats`: the code, or "other".
pub fn status_name(index: usize) -> String {
    STATUSES.get(index).map_or_else(|| "other".to_string(), std::string::ToString::to_string)
}

/// LlmCounts is what the inference routes did, exactly as the server knows it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct LlmCounts {
    /// started is valid requests that joined the batch's line (a 400 is not started).
    pub started: u64,
    /// completed is requests whose last token (and, streaming, the end of the stream) was
    /// written.
    pub completed: u64,
    /// cancelled is started requests whose client went away before the end (noticed before a
    /// token is due, or when a write fails).
    pub cancelled: u64,
    /// prompt_tokens is the prompt tokens of the started requests (the target's tokenizer).
    pub prompt_tokens: u64,
    /// output_tokens is tokens written: one per event as it goes out when streaming, all of a
    /// completion with its one response otherwise.
    pub output_tokens: u64,
}

impl LlmCounts {
    fn zip_with(&mut self, other: &LlmCounts, op: fn(u64, u64) -> u64) {
        self.started = op(self.started, other.started);
        self.completed = op(self.completed, other.completed);
        self.cancelled = op(self.cancelled, other.cancelled);
        self.prompt_tokens = op(self.prompt_tokens, other.prompt_tokens);
        self.output_tokens = op(self.output_tokens, other.output_tokens);
    }
}

/// Counts is a plain snapshot of counters, summed over threads or subtracted from each other.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    /// received is requests parsed, per route.
    pub received: [u64; ROUTE_COUNT],
    /// responses is responses written, per route and status bucket.
    pub responses: [[u64; STATUS_COUNT]; ROUTE_COUNT],
    /// accepted is connections accepted and served.
    pub accepted: u64,
    /// refused is connections closed at once because `--max-connections` were open.
    pub refused: u64,
    /// abandoned is connections their client closed while they waited for a worker
    /// (`--thread-per-connection`), dropped unanswered when their turn came.
    pub abandoned: u64,
    /// given_worker is connections given a worker of their own (`--thread-per-connection`)
    /// whose client was still there to be served.
    pub given_worker: u64,
    /// llm is what the inference routes did.
    pub llm: LlmCounts,
}

impl Counts {
    /// add adds `other` into `self`.
    pub fn add(&mut self, other: &Counts) {
        self.zip_with(other, u64::wrapping_add);
    }

    /// since returns `self − baseline` (counters only grow, so every field is non-negative).
    pub fn since(&self, baseline: &Counts) -> Counts {
        let mut out = self.clone();
        out.zip_with(baseline, u64::saturating_sub);
        out
    }

    fn zip_with(&mut self, other: &Counts, op: fn(u64, u64) -> u64) {
        for (a, b) in self.received.iter_mut().zip(other.received) {
            *a = op(*a, b);
        }
        for (row, other_row) in self.responses.iter_mut().zip(other.responses) {
            for (a, b) in row.iter_mut().zip(other_row) {
                *a = op(*a, b);
            }
        }
        self.accepted = op(self.accepted, other.accepted);
        self.refused = op(self.refused, other.refused);
        self.abandoned = op(self.abandoned, other.abandoned);
        self.given_worker = op(self.given_worker, other.given_worker);
        self.llm.zip_with(&other.llm, op);
    }

    /// received_total is every request parsed, on every route.
    pub fn received_total(&self) -> u64 {
        self.received.iter().sum()
    }

    /// by_status sums responses over routes, per status bucket.
    pub fn by_status(&self) -> [u64; STATUS_COUNT] {
        let mut out = [0; STATUS_COUNT];
        for row in &self.responses {
            for (total, n) in out.iter_mut().zip(row) {
                *total += n;
            }
        }
        out
    }

    /// responses_for is the count of responses with `status` over all routes.
    pub fn responses_for(&self, status: u16) -> u64 {
        self.by_status()[status_index(status)]
    }
}

/// ThreadCounters are one server thread's counters. Only that thread may call the `record_*`
/// methods (single writer); any thread may [`ThreadCounters::snapshot`].
#[derive(Debug)]
pub struct ThreadCounters {
    received: [AtomicU64; ROUTE_COUNT],
    responses: [[AtomicU64; STATUS_COUNT]; ROUTE_COUNT],
    accepted: AtomicU64,
    refused: AtomicU64,
    abandoned: AtomicU64,
    given_worker: AtomicU64,
    llm_started: AtomicU64,
    llm_completed: AtomicU64,
    llm_cancelled: AtomicU64,
    llm_prompt_tokens: AtomicU64,
    llm_output_tokens: AtomicU64,
}

impl Default for ThreadCounters {
    fn default() -> Self {
        Self {
            received: std::array::from_fn(|_| AtomicU64::new(0)),
            responses: std::array::from_fn(|_| std::array::from_fn(|_| AtomicU64::new(0))),
            accepted: AtomicU64::new(0),
            refused: AtomicU64::new(0),
            abandoned: AtomicU64::new(0),
            given_worker: AtomicU64::new(0),
            llm_started: AtomicU64::new(0),
            llm_completed: AtomicU64::new(0),
            llm_cancelled: AtomicU64::new(0),
            llm_prompt_tokens: AtomicU64::new(0),
            llm_output_tokens: AtomicU64::new(0),
        }
    }
}

/// bump adds one to a counter that only the calling thread writes.
#[inline]
fn bump(counter: &AtomicU64) {
    bump_by(counter, 1);
}

/// bump_by adds `n` to a counter that only the calling thread writes.
#[inline]
fn bump_by(counter: &AtomicU64, n: u64) {
    counter.store(counter.load(Ordering::Relaxed).wrapping_add(n), Ordering::Relaxed);
}

impl ThreadCounters {
    /// record_received counts one parsed request on `route`.
    #[inline]
    pub fn record_received(&self, route: Route) {
        bump(&self.received[route.index()]);
    }

    /// record_response counts one response with `status` on `route`.
    #[inline]
    pub fn record_response(&self, route: Route, status: u16) {
        bump(&self.responses[route.index()][status_index(status)]);
    }

    /// record_accepted counts one accepted connection.
    pub fn record_accepted(&self) {
        bump(&self.accepted);
    }

    /// record_refused counts one connection refused by `--max-connections`.
    pub fn record_refused(&self) {
        bump(&self.refused);
    }

    /// record_abandoned counts one connection its client closed while it waited for a worker.
    pub fn record_abandoned(&self) {
        bump(&self.abandoned);
    }

    /// record_given_worker counts one connection given a worker of its own and served.
    pub fn record_given_worker(&self) {
        bump(&self.given_worker);
    }

    /// record_llm_started counts one inference request joining the batch's line with its
    /// prompt tokens.
    pub fn record_llm_started(&self, prompt_tokens: u32) {
        bump(&self.llm_started);
        bump_by(&self.llm_prompt_tokens, u64::from(prompt_tokens));
    }

    /// record_llm_tokens counts `n` output tokens written.
    pub fn record_llm_tokens(&self, n: u32) {
        bump_by(&self.llm_output_tokens, u64::from(n));
    }

    /// record_llm_completed counts one inference request answered to its last token.
    pub fn record_llm_completed(&self) {
        bump(&self.llm_completed);
    }

    /// record_llm_cancelled counts one inference request whose client went away first.
    pub fn record_llm_cancelled(&self) {
        bump(&self.llm_cancelled);
    }

    /// snapshot reads every counter (each read is atomic; the set is not one instant).
    pub fn snapshot(&self) -> Counts {
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        Counts {
            received: std::array::from_fn(|r| load(&self.received[r])),
            responses: std::array::from_fn(|r| std::array::from_fn(|s| load(&self.responses[r][s]))),
            accepted: load(&self.accepted),
            refused: load(&self.refused),
            abandoned: load(&self.abandoned),
            given_worker: load(&self.given_worker),
            llm: LlmCounts {
                started: load(&self.llm_started),
                completed: load(&self.llm_completed),
                cancelled: load(&self.llm_cancelled),
                prompt_tokens: load(&self.llm_prompt_tokens),
                output_tokens: load(&self.llm_output_tokens),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_are_in_index_order() {
        for (i, route) in Route::ALL.iter().enumerate() {
            assert_eq!(route.index(), i, "{}", route.name());
        }
    }

    #[test]
    fn statuses_bucket() {
        let cases: &[(u16, &str)] = &[(200, "200"), (503, "503"), (429, "429"), (302, "other")];
        for &(status, name) in cases {
            assert_eq!(status_name(status_index(status)), name);
        }
    }

    #[test]
    fn counts_add_and_subtract() {
        let t = ThreadCounters::default();
        t.record_received(Route::Health);
        t.record_response(Route::Health, 200);
        let baseline = t.snapshot();
        t.record_received(Route::Health);
        t.record_received(Route::TasksCreate);
        t.record_response(Route::TasksCreate, 503);
        t.record_response(Route::Other, 302);
        t.record_llm_started(7);
        t.record_llm_tokens(3);
        t.record_llm_tokens(1);
        t.record_llm_completed();
        let now = t.snapshot().since(&baseline);
        assert_eq!(now.received_total(), 2);
        assert_eq!(now.responses_for(503), 1);
        assert_eq!(now.responses_for(200), 0);
        assert_eq!(now.by_status()[STATUSES.len()], 1);
        let llm = LlmCounts { started: 1, completed: 1, cancelled: 0, prompt_tokens: 7, output_tokens: 4 };
        assert_eq!(now.llm, llm);
        let mut sum = now.clone();
        sum.add(&baseline);
        assert_eq!(sum, t.snapshot());
    }
}
