//! A distributed run on one machine: several engines, each running the plan with its own
//! segment and forwarding its workers' reports, merged by `merge` as one run. The merged
//! counts must equal the server's, the merged histograms the sum of the generators'.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::{Behavior, TestServer};
use surge_engine::testing::LatencyHistogram;
use surge_engine::{merge, run, Control, Incoming, Interval, Observer, Plan, ReportSource, RunResult};

/// Forwarder is a generator's observer: every worker report goes to the driver's channel.
struct Forwarder {
    generator: usize,
    to_driver: mpsc::Sender<Incoming>,
    /// lose_after, when set, drops the channel after this many reports (the generator is
    /// then lost to the driver, though it runs on).
    lose_after: Option<usize>,
    sent: usize,
}

impl Observer for Forwarder {
    fn on_interval(&mut self, _interval: &Interval) -> Control {
        Control::Continue
    }

    fn forwards_reports(&self) -> bool {
        true
    }

    fn on_report(&mut self, report: &str) -> Control {
        self.sent += 1;
        match self.lose_after {
            Some(n) if self.sent > n => {
                if self.sent == n + 1 {
                    let _ = self.to_driver.send(Incoming::Lost { generator: self.generator });
                }
            }
            _ => {
                let _ = self.to_driver.send(Incoming::Report { generator: self.generator, report: report.to_string() });
            }
        }
        Control::Continue
    }
}

/// ChannelSource is the driver's end: everything received so far, None once every
/// generator has hung up.
struct ChannelSource(mpsc::Receiver<Incoming>);

impl ReportSource for ChannelSource {
    fn receive(&mut self, wait: Duration, _stopping: bool) -> Option<Vec<Incoming>> {
        match self.0.recv_timeout(wait) {
            Ok(first) => Some(std::iter::once(first).chain(self.0.try_iter()).collect()),
            Err(RecvTimeoutError::Timeout) => Some(Vec::new()),
            Err(RecvTimeoutError::Disconnected) => None,
        }
    }
}

/// Collect keeps the merged intervals.
#[derive(Default)]
struct Collect(Vec<Interval>);

impl Observer for Collect {
    fn on_interval(&mut self, interval: &Interval) -> Control {
        self.0.push(interval.clone());
        Control::Continue
    }
}

fn plan_json(url: &str, executor: &str, threads: usize) -> String {
    format!(
        r#"{{"target": {{"url": "{url}"}}, "threads": {threads},
             "scenarios": [{{"name": "default", "executor": {executor},
                             "flow": {{"sequences": [{{"steps": [{{"request": {{"method": "GET"}}}}]}}]}}}}]}}"#
    )
}

/// distributed runs `json` on `generators` engines (threads of this process), each with its
/// segment and a common start, merged; returns the merged result, its intervals and each
/// generator's own result. `lose` loses that generator after its first reports.
fn distributed(json: &str, generators: usize, lose: Option<usize>) -> (RunResult, Vec<Interval>, Vec<RunResult>) {
    let whole = Plan::from_json(json).unwrap();
    let start = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs_f64() + 0.2;
    let (tx, rx) = mpsc::channel();
    let handles: Vec<_> = (0..generators)
        .map(|g| {
            let mut plan = whole.clone();
            plan.segment = surge_engine::plan::Segment { offset: g as u64, stride: generators as u64 };
            plan.start_at_unix_s = Some(start);
            let to_driver = tx.clone();
            std::thread::spawn(move || {
                let lose_after = (lose == Some(g)).then_some(2);
                let mut forwarder = Forwarder { generator: g, to_driver, lose_after, sent: 0 };
                run(&plan, &mut forwarder, Arc::new(AtomicBool::new(false))).unwrap()
            })
        })
        .collect();
    drop(tx);
    let mut intervals = Collect::default();
    let merged =
        merge(&whole, generators, start, &mut ChannelSource(rx), &mut intervals, Arc::new(AtomicBool::new(false)))
            .unwrap();
    let parts = handles.into_iter().map(|h| h.join().unwrap()).collect();
    (merged, intervals.0, parts)
}

fn sum_of(parts: &[RunResult], pick: impl Fn(&RunResult) -> &String) -> LatencyHistogram {
    let mut sum = LatencyHistogram::new();
    for part in parts {
        sum.add(&LatencyHistogram::from_base64(pick(part)).unwrap());
    }
    sum
}

#[test]
fn an_arrival_rate_split_over_three_generators_sends_the_plans_count_and_merges_exactly() {
    let server = TestServer::start(Behavior::Ok);
    let json = plan_json(
        &server.url("/"),
        r#"{"type": "constant-arrival-rate", "rate": 301, "duration_s": 1.0, "max_vus": 50}"#,
        1,
    );
    let (merged, intervals, parts) = distributed(&json, 3, None);
    assert_eq!(merged.requests.sent, 301, "{:?}", merged.requests);
    assert_eq!(server.count(), 301);
    assert_eq!(parts.iter().map(|p| p.requests.sent).collect::<Vec<_>>(), vec![101, 100, 100]);
    assert_eq!(merged.requests.responses, 301);
    assert_eq!(intervals.iter().map(|i| i.requests.sent).sum::<u64>(), 301);
    // The merged histograms are the generators' added, counter for counter.
    let all = sum_of(&parts, |p| &p.histograms.latency);
    assert_eq!(merged.histograms.latency, all.to_base64());
    assert_eq!(merged.latency.all, all.summary(&[]));
    assert_eq!(merged.histograms.service_time, sum_of(&parts, |p| &p.histograms.service_time).to_base64());
    assert_eq!(merged.threads, 3);
    assert_eq!(merged.generator.thread_busy.len(), 3);
}

#[test]
fn shared_iterations_are_divided_exactly_over_generators_and_their_threads() {
    let server = TestServer::start(Behavior::Ok);
    let json = plan_json(&server.url("/"), r#"{"type": "shared-iterations", "vus": 5, "iterations": 1000}"#, 2);
    let (merged, _, parts) = distributed(&json, 3, None);
    assert_eq!(merged.requests.sent, 1000);
    assert_eq!(server.count(), 1000);
    assert_eq!(parts.iter().map(|p| p.requests.sent).collect::<Vec<_>>(), vec![334, 333, 333]);
    // 5 VUs over 3 × 2 threads: 1 + 1 + 1 + 1 + 1 + 0.
    assert_eq!(merged.requests.connections_opened, 5);
    assert_eq!(merged.stop_reason, surge_engine::result::StopReason::Iterations);
    assert_eq!(merged.threads, 6);
}

#[test]
fn a_ramp_of_vus_split_over_generators_runs_the_plans_vus_at_every_interval() {
    let server = TestServer::start(Behavior::Delay(5));
    let ramp = r#"{"type": "ramping-vus", "start_vus": 0, "stages": [{"duration_s": 0.25, "target": 7},
        {"duration_s": 0.75, "target": 7}, {"duration_s": 0.25, "target": 3}, {"duration_s": 0.75, "target": 3}]}"#;
    let json = plan_json(&server.url("/"), ramp, 1).replace(r#""threads": 1,"#, r#""threads": 1, "interval_s": 0.5,"#);
    let (merged, intervals, parts) = distributed(&json, 3, None);
    assert_eq!(merged.requests.sent, server.count());
    // The plan's VUs at 0.5 s, 1 s and 1.5 s (7 = 3 + 2 + 2 and 3 = 1 + 1 + 1 on the generators).
    let active: Vec<u64> = intervals.iter().map(|i| i.scenarios[0].active_vus).collect();
    assert_eq!(active[..3], [7, 7, 3], "{active:?}");
    for (k, interval) in intervals.iter().enumerate() {
        let parts_vus: u64 = parts.iter().filter_map(|p| p.intervals.get(k)).map(|i| i.scenarios[0].active_vus).sum();
        assert_eq!(interval.scenarios[0].active_vus, parts_vus, "interval {k}");
    }
}

#[test]
fn a_lost_generator_ends_the_merge_with_what_it_sent() {
    let server = TestServer::start(Behavior::Ok);
    let json = plan_json(
        &server.url("/"),
        r#"{"type": "constant-arrival-rate", "rate": 200, "duration_s": 1.5, "max_vus": 50}"#,
        1,
    );
    let (merged, intervals, parts) = distributed(&json, 2, Some(1));
    // Generator 0's whole share arrived; generator 1's first two reports did (its first interval).
    assert_eq!(parts[0].requests.sent + parts[1].requests.sent, 300);
    assert!(merged.requests.sent >= parts[0].requests.sent, "{:?}", merged.requests);
    assert!(merged.requests.sent < 300, "{:?}", merged.requests);
    assert_eq!(intervals.iter().map(|i| i.requests.sent).sum::<u64>(), merged.requests.sent);
}
