//! merge: the driver of a distributed run. Each generator (another machine, or another
//! process) runs [`run()`](crate::run()) on the plan with its own segment (`stripe`) and
//! forwards its workers' reports ([`Observer::on_report`]); `merge` feeds them all to one
//! aggregator, as if every generator's threads were this machine's, so that the intervals
//! and the result are what one engine running all those threads would report: counts added,
//! histograms merged counter by counter (never percentiles averaged), the windows, the drain
//! and the rates over every thread.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::error::EngineError;
use crate::measure::report::Report;
use crate::measure::result::RunResult;
use crate::run::{assemble, drive, Compiled, Host, Inbox, Observer, Received};
use crate::spec::plan::Plan;
use crate::spec::plan_error::PlanError;
use crate::spec::target::Target;
use crate::system::{unix_now_s, CpuTime};

/// Incoming is what a generator sent the driver, or what the driver learnt of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Incoming {
    /// Report is one of generator `generator`'s worker reports, as it encoded it.
    Report {
        /// generator is the generator's number, 0-based (its segment's offset).
        generator: usize,
        /// report is the encoded report.
        report: String,
    },
    /// Lost says generator `generator` will send nothing more (it died, or went silent):
    /// what it sent stays in the results, nothing waits for the rest.
    Lost {
        /// generator is the lost generator's number.
        generator: usize,
    },
}

/// ReportSource is where the driver's reports come from (a distributed run's transport).
pub trait ReportSource {
    /// receive waits up to `wait` for what the generators sent since the last call (an
    /// empty list: nothing yet), or None once every generator has ended; `stopping` says
    /// the driver is ending the run early, to be passed on to the generators.
    fn receive(&mut self, wait: Duration, stopping: bool) -> Option<Vec<Incoming>>;
}

/// merge runs the driver of a distributed run: `plan` is the whole plan (every generator ran
/// it with its own segment and the same `threads`), `generators` how many generators run it,
/// `start_at_unix_s` their common start (this machine's clock). Intervals go to `observer`
/// as soon as every generator's threads have reported them; setting `cancel` (or a Stop from
/// the observer) is passed on through `source`. A report that cannot be read loses its
/// generator, with a note saying so.
///
/// # Errors
/// The plan's errors, if it does not compile.
#[allow(clippy::needless_pass_by_value, reason = "the caller hands its cancel flag over, as to run()")]
pub fn merge(
    plan: &Plan,
    generators: usize,
    start_at_unix_s: f64,
    source: &mut dyn ReportSource,
    observer: &mut dyn Observer,
    cancel: Arc<AtomicBool>,
) -> Result<RunResult, EngineError> {
    let target =
        Target::parse(&plan.target.url).map_err(|m| EngineError::InvalidPlan(vec![PlanError::new("target.url", m)]))?;
    let compiled = Compiled::of(plan, &target)?;
    let threads = plan.thread_count();
    let mut aggregator = compiled.aggregator(plan, threads * generators, Vec::new());
    let origin = instant_of(start_at_unix_s);
    let mut inbox =
        RemoteInbox { source, threads, generators, queue: std::collections::VecDeque::new(), notes: Vec::new() };
    let mut ending = drive(&mut aggregator, &mut inbox, observer, &cancel, origin);
    ending.stopped_by_observer |= cancel.load(Ordering::Relaxed) && !ending.aborted;
    let elapsed_s = Instant::now().saturating_duration_since(origin).as_secs_f64().max(1e-9);
    let host =
        Host { addresses: Vec::new(), notes: inbox.notes, open_file_limit: 0, cpu: CpuTime::default(), max_rss_kib: 0 };
    Ok(assemble(plan, &compiled, &mut aggregator, &ending, start_at_unix_s, elapsed_s, host))
}

/// instant_of is the monotonic instant of wall-clock time `unix_s` (past or future).
fn instant_of(unix_s: f64) -> Instant {
    let now = Instant::now();
    let wall = unix_now_s();
    let ahead = unix_s - wall;
    if ahead >= 0.0 {
        now.checked_add(Duration::from_secs_f64(ahead)).unwrap_or(now)
    } else {
        now.checked_sub(Duration::from_secs_f64(-ahead)).unwrap_or(now)
    }
}

/// RemoteInbox reads the generators' reports from a ReportSource: generator `g`'s thread `t`
/// is the aggregator's thread `g × threads + t`.
struct RemoteInbox<'s> {
    source: &'s mut dyn ReportSource,
    threads: usize,
    generators: usize,
    queue: std::collections::VecDeque<Received>,
    notes: Vec<String>,
}

impl RemoteInbox<'_> {
    fn threads_of(&self, generator: usize) -> std::ops::Range<usize> {
        generator * self.threads..(generator + 1) * self.threads
    }

    fn take(&mut self, incoming: Incoming) {
        match incoming {
            Incoming::Lost { generator } => self.queue.push_back(Received::Lost(self.threads_of(generator))),
            Incoming::Report { generator, report } if generator < self.generators => match Report::decode(&report) {
                Ok(report) if report.thread() < self.threads => {
                    let thread = generator * self.threads + report.thread();
                    self.queue.push_back(Received::Report(report.renumbered(thread)));
                }
                Ok(report) => {
                    self.lose(generator, &format!("it reported thread {} of {}", report.thread(), self.threads));
                }
                Err(e) => self.lose(generator, &e),
            },
            Incoming::Report { generator, .. } => {
                self.notes.push(format!("a report from generator {generator} of {} was ignored", self.generators));
            }
        }
    }

    fn lose(&mut self, generator: usize, why: &str) {
        self.notes
            .push(format!("generator {generator}'s reports could not be read ({why}): its later reports are lost"));
        self.queue.push_back(Received::Lost(self.threads_of(generator)));
    }
}

impl Inbox for RemoteInbox<'_> {
    fn receive(&mut self, wait: Duration, stopping: bool) -> Received {
        if let Some(next) = self.queue.pop_front() {
            return next;
        }
        match self.source.receive(wait, stopping) {
            None => Received::Closed,
            Some(incoming) => {
                for one in incoming {
                    self.take(one);
                }
                self.queue.pop_front().unwrap_or(Received::Timeout)
            }
        }
    }
}
