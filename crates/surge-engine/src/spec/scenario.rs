//! scenario: one named workload of a plan: an executor, the flow its iterations run,
//! and when it starts. Scenarios of a plan run in parallel on the same event loops.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::spec::capture::Capture;
use crate::spec::check::Check;
use crate::spec::executor::{Executor, Model};
use crate::spec::flow::{FlowSpec, SequencePicker, ThinkTime};
use crate::spec::plan_error::PlanError;
use crate::spec::pool::Pools;
use crate::spec::request::RequestBytes;
use crate::spec::target::Target;
use crate::spec::variables::{VariableSet, VariableSpec};

/// ScenarioSpec is a scenario as the plan describes it.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioSpec {
    /// name identifies the scenario in reports and thresholds.
    pub name: String,
    /// start_time_s delays the scenario's start from the start of the run.
    #[serde(default)]
    pub start_time_s: f64,
    /// executor decides how many iterations run and when.
    pub executor: Executor,
    /// variables are drawn once per iteration and templated into requests.
    #[serde(default)]
    pub variables: Vec<VariableSpec>,
    /// flow is what each iteration does.
    pub flow: FlowSpec,
}

/// MAX_START_TIME_S bounds a scenario's start offset (a day).
const MAX_START_TIME_S: f64 = 86_400.0;

impl ScenarioSpec {
    /// validate pushes an error for every invalid field, under `field` (e.g. `scenarios[0]`).
    pub fn validate(&self, field: &str, errors: &mut Vec<PlanError>) {
        if self.name.trim().is_empty() {
            errors.push(PlanError::new(format!("{field}.name"), "must not be empty"));
        }
        if !(self.start_time_s.is_finite() && (0.0..=MAX_START_TIME_S).contains(&self.start_time_s)) {
            errors.push(PlanError::new(
                format!("{field}.start_time_s"),
                format!("must be from 0 to {MAX_START_TIME_S} seconds, got {}", self.start_time_s),
            ));
        }
        self.executor.validate(&format!("{field}.executor"), errors);
        self.flow.validate(&format!("{field}.flow"), errors);
    }

    /// end_s is when the scenario stops starting iterations, from the start of the run.
    pub fn end_s(&self) -> f64 {
        self.start_time_s + self.executor.duration_s()
    }
}

/// Step is a compiled step: its request serialized once, its metrics slot and timings.
#[derive(Clone, Debug)]
pub(crate) struct Step {
    /// slot indexes the metrics this step records into (one per scenario and tag).
    pub slot: usize,
    /// request is the request, serialized once or rendered per request.
    pub request: RequestBytes,
    /// head says the request is HEAD (its response carries no body).
    pub head: bool,
    /// timeout_ns is this step's request timeout.
    pub timeout_ns: u64,
    /// think_after is the pause after this step's response.
    pub think_after: Option<ThinkTime>,
    /// checks are evaluated on every response, each with its plan-wide check index.
    pub checks: Vec<(usize, Check)>,
    /// captures take values from every response, each with its plan-wide capture index
    /// and where the value goes.
    pub captures: Vec<(usize, Capture, CaptureTarget)>,
    /// retain says the response's head and body must be kept for checks or captures.
    pub retain: bool,
}

/// CaptureTarget is where a captured value goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CaptureTarget {
    /// Value sets the VU's value slot (read by later steps' templates).
    Value(usize),
    /// Pool appends to the thread's part of a data pool.
    Pool(usize),
}

/// Scenario is a compiled scenario, shared read-only by every worker thread.
#[derive(Clone, Debug)]
pub(crate) struct Scenario {
    /// name identifies the scenario.
    pub name: String,
    /// start_ns is when the scenario starts, from the start of the run.
    pub start_ns: u64,
    /// end_ns is when it stops starting iterations.
    pub end_ns: u64,
    /// model is the executor reduced to what the event loops act on.
    pub model: Model,
    /// picker chooses each iteration's sequence.
    pub picker: SequencePicker,
    /// sequences are the compiled steps of each sequence.
    pub sequences: Vec<Vec<Step>>,
    /// think_after_iteration is the pause after each iteration.
    pub think_after_iteration: Option<ThinkTime>,
    /// connect_timeout_ns bounds a connection attempt (the plan's request timeout).
    pub connect_timeout_ns: u64,
    /// value_names name each VU's value slots: the variables' slots, then captured values.
    pub value_names: Vec<String>,
    /// variables draws the variable slots at the start of each iteration.
    pub variables: VariableSet,
    /// variable_slots is how many leading value slots the variables fill.
    pub variable_slots: usize,
}

impl Scenario {
    /// connect_timeout_ns bounds a connection attempt of this scenario's VUs.
    pub(crate) fn connect_timeout_ns(&self) -> u64 {
        self.connect_timeout_ns
    }
}

/// Slot names what one metrics slot measures: a tag within a scenario.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Slot {
    /// scenario indexes the plan's scenarios.
    pub scenario: usize,
    /// tag is the steps' tag.
    pub tag: String,
}

/// Probe names a check or capture for reports: its name, scenario and the tag of its step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Probe {
    /// name is the check's or capture's name.
    pub name: String,
    /// scenario indexes the plan's scenarios.
    pub scenario: usize,
    /// tag is the tag of the step it belongs to.
    pub tag: String,
}

/// Compiled is a plan's scenarios made ready to run, with the names of what they measure.
#[derive(Debug)]
pub(crate) struct Compiled {
    /// scenarios are the runtime scenarios, in plan order.
    pub scenarios: Vec<Scenario>,
    /// slots name the metrics slots.
    pub slots: Vec<Slot>,
    /// checks name the checks, by plan-wide index.
    pub checks: Vec<Probe>,
    /// captures name the captures, by plan-wide index.
    pub captures: Vec<Probe>,
    /// pools are the plan's data pools plus every pool a capture fills.
    pub pools: Pools,
}

/// MAX_RETAINED_BODY is the most of a response body kept for checks and captures.
pub(crate) const MAX_RETAINED_BODY: usize = 1 << 20;

/// compile turns validated scenario specs into runtime scenarios and their metrics slots.
pub(crate) fn compile(
    specs: &[ScenarioSpec],
    target: &Target,
    default_timeout_s: f64,
    pools: &crate::spec::pool::PoolSpecs,
) -> Result<Compiled, Vec<PlanError>> {
    let mut slots: Vec<Slot> = Vec::new();
    // Where each (scenario, tag) slot is: a lookup per step, so a flow of tens of thousands
    // of distinctly tagged steps does not compare every tag with every other.
    let mut slot_of: HashMap<(usize, String), usize> = HashMap::new();
    let mut checks: Vec<Probe> = Vec::new();
    let mut captures: Vec<Probe> = Vec::new();
    let mut scenarios = Vec::with_capacity(specs.len());
    let mut errors = Vec::new();
    // Pool ids must be the same on every thread: create every captured pool up front.
    let mut pools = Pools::new(pools);
    for spec in specs {
        for step in spec.flow.sequences.iter().flat_map(|q| &q.steps) {
            for capture in step.captures.iter().filter(|c| c.to_pool) {
                pools.ensure(&capture.name);
            }
        }
    }
    for (index, spec) in specs.iter().enumerate() {
        let variables = match VariableSet::compile(&spec.variables, &format!("scenarios[{index}].variables"), &pools) {
            Ok(v) => v,
            Err(e) => {
                errors.extend(e);
                VariableSet::default()
            }
        };
        let mut value_names: Vec<String> = variables.slot_names();
        let variable_slots = value_names.len();
        for step in spec.flow.sequences.iter().flat_map(|q| &q.steps) {
            for capture in step.captures.iter().filter(|c| !c.to_pool) {
                if !value_names.contains(&capture.name) {
                    value_names.push(capture.name.clone());
                }
            }
        }
        let mut sequences = Vec::with_capacity(spec.flow.sequences.len());
        for (i, sequence) in spec.flow.sequences.iter().enumerate() {
            let mut steps = Vec::with_capacity(sequence.steps.len());
            for (j, step) in sequence.steps.iter().enumerate() {
                let tag = step.tag.clone().unwrap_or_else(|| step.request.default_tag(target));
                let slot = *slot_of.entry((index, tag.clone())).or_insert_with(|| {
                    slots.push(Slot { scenario: index, tag: tag.clone() });
                    slots.len() - 1
                });
                let at = format!("scenarios[{index}].flow.sequences[{i}].steps[{j}]");
                let mut step_checks = Vec::with_capacity(step.checks.len());
                for (k, spec) in step.checks.iter().enumerate() {
                    match Check::compile(spec, &format!("{at}.checks[{k}]")) {
                        Ok(check) => {
                            checks.push(Probe { name: spec.name.clone(), scenario: index, tag: tag.clone() });
                            step_checks.push((checks.len() - 1, check));
                        }
                        Err(e) => errors.extend(e),
                    }
                }
                let mut step_captures = Vec::with_capacity(step.captures.len());
                for (k, spec) in step.captures.iter().enumerate() {
                    match Capture::compile(spec, &format!("{at}.captures[{k}]")) {
                        Ok(capture) => {
                            let target = if spec.to_pool {
                                CaptureTarget::Pool(pools.ensure(&spec.name))
                            } else if variables.slot_index(&spec.name).is_some() {
                                errors.push(PlanError::new(
                                    format!("{at}.captures[{k}].name"),
                                    format!(
                                        "'{}' is a variable of this scenario; capture into another name",
                                        spec.name
                                    ),
                                ));
                                continue;
                            } else {
                                CaptureTarget::Value(value_names.iter().position(|n| *n == spec.name).unwrap_or(0))
                            };
                            captures.push(Probe { name: spec.name.clone(), scenario: index, tag: tag.clone() });
                            step_captures.push((captures.len() - 1, capture, target));
                        }
                        Err(e) => errors.extend(e),
                    }
                }
                let retain = step_checks.iter().any(|(_, c)| c.needs_body() || c.needs_head())
                    || step_captures.iter().any(|(_, c, _)| c.needs_body() || c.needs_head());
                match step.request.compile(target, &format!("{at}.request"), &value_names) {
                    Ok(request) => steps.push(Step {
                        slot,
                        request,
                        head: step.request.is_head(),
                        timeout_ns: secs_to_ns(step.timeout_s.unwrap_or(default_timeout_s)),
                        think_after: step.think_after,
                        checks: step_checks,
                        captures: step_captures,
                        retain,
                    }),
                    Err(e) => errors.extend(e),
                }
            }
            sequences.push(steps);
        }
        scenarios.push(Scenario {
            name: spec.name.clone(),
            start_ns: secs_to_ns(spec.start_time_s),
            end_ns: secs_to_ns(spec.end_s()),
            model: spec.executor.model(),
            picker: SequencePicker::new(spec.flow.sequences.iter().map(|s| s.weight)),
            sequences,
            think_after_iteration: spec.flow.think_after_iteration,
            connect_timeout_ns: secs_to_ns(default_timeout_s),
            value_names,
            variables,
            variable_slots,
        });
    }
    if errors.is_empty() {
        Ok(Compiled { scenarios, slots, checks, captures, pools })
    } else {
        Err(errors)
    }
}

/// secs_to_ns converts seconds to nanoseconds, saturating far beyond any run's length.
pub(crate) fn secs_to_ns(seconds: f64) -> u64 {
    (seconds * 1e9).round().clamp(0.0, u64::MAX as f64 / 4.0) as u64
}
