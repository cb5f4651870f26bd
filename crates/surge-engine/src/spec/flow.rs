//! flow: what one iteration of a scenario does: one sequence of steps (requests), chosen
//! by weight among the scenario's sequences, with think times between them.

use rand::rngs::SmallRng;
use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::spec::capture::{Capture, CaptureSpec};
use crate::spec::check::{Check, CheckSpec};
use crate::spec::plan_error::{check_positive, PlanError};
use crate::spec::request::RequestSpec;

/// ThinkTime is a pause a virtual user takes after a request or an iteration.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
pub enum ThinkTime {
    /// Fixed pauses exactly `s` seconds.
    Fixed {
        /// s is the pause in seconds.
        s: f64,
    },
    /// Uniform pauses between `min_s` and `max_s` seconds, uniformly.
    Uniform {
        /// min_s is the shortest pause.
        min_s: f64,
        /// max_s is the longest pause.
        max_s: f64,
    },
    /// Exponential pauses with mean `mean_s` (a Poisson process of user actions).
    Exponential {
        /// mean_s is the mean pause.
        mean_s: f64,
    },
}

/// MAX_THINK_S bounds a single pause (an exponential draw is capped at 100 × its mean too).
const MAX_THINK_S: f64 = 3600.0;

impl ThinkTime {
    /// validate pushes an error for a negative, non-finite or inverted pause.
    pub fn validate(&self, field: &str, errors: &mut Vec<PlanError>) {
        let ok = |v: f64| v.is_finite() && (0.0..=MAX_THINK_S).contains(&v);
        match *self {
            ThinkTime::Fixed { s } if !ok(s) => {
                errors.push(PlanError::new(
                    format!("{field}.s"),
                    format!("must be from 0 to {MAX_THINK_S} seconds, got {s}"),
                ));
            }
            ThinkTime::Uniform { min_s, max_s } => {
                if !ok(min_s) || !ok(max_s) {
                    errors.push(PlanError::new(
                        field,
                        format!("min_s and max_s must be from 0 to {MAX_THINK_S} seconds"),
                    ));
                } else if min_s > max_s {
                    errors.push(PlanError::new(format!("{field}.max_s"), format!("{max_s} is below min_s ({min_s})")));
                }
            }
            ThinkTime::Exponential { mean_s } => check_positive(errors, &format!("{field}.mean_s"), mean_s),
            ThinkTime::Fixed { .. } => {}
        }
    }

    /// sample_ns draws one pause, in nanoseconds.
    pub fn sample_ns(&self, rng: &mut SmallRng) -> u64 {
        let seconds = match *self {
            ThinkTime::Fixed { s } => s,
            ThinkTime::Uniform { min_s, max_s } => min_s + (max_s - min_s) * rng.random::<f64>(),
            ThinkTime::Exponential { mean_s } => {
                let u: f64 = rng.random();
                (-mean_s * (1.0 - u).ln()).min(mean_s * 100.0)
            }
        };
        (seconds.clamp(0.0, MAX_THINK_S) * 1e9) as u64
    }

    /// mean_s is the mean pause, for planning (e.g. how many VUs a rate needs).
    pub fn mean_s(&self) -> f64 {
        match *self {
            ThinkTime::Fixed { s } => s,
            ThinkTime::Uniform { min_s, max_s } => f64::midpoint(min_s, max_s),
            ThinkTime::Exponential { mean_s } => mean_s,
        }
    }
}

/// StepSpec is one request of a sequence and what follows it.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepSpec {
    /// tag names the step's metrics (per-endpoint breakdowns); steps may share a tag.
    #[serde(default)]
    pub tag: Option<String>,
    /// request is what the step sends.
    #[serde(default)]
    pub request: RequestSpec,
    /// timeout_s overrides the plan's per-request timeout for this step.
    #[serde(default)]
    pub timeout_s: Option<f64>,
    /// think_after is a pause after this step's response.
    #[serde(default)]
    pub think_after: Option<ThinkTime>,
    /// captures take values from the response for later steps (or a pool).
    #[serde(default)]
    pub captures: Vec<CaptureSpec>,
    /// checks are assertions on the response, counted per check.
    #[serde(default)]
    pub checks: Vec<CheckSpec>,
}

/// SequenceSpec is an ordered list of steps, chosen for an iteration by `weight`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SequenceSpec {
    /// name labels the sequence in errors and reports.
    #[serde(default)]
    pub name: Option<String>,
    /// weight is the sequence's relative share of iterations (default 1).
    #[serde(default = "default_weight")]
    pub weight: f64,
    /// steps run in order, one request each.
    pub steps: Vec<StepSpec>,
}

fn default_weight() -> f64 {
    1.0
}

/// FlowSpec is what every iteration of a scenario does.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    /// sequences: an iteration runs one, chosen by weight.
    pub sequences: Vec<SequenceSpec>,
    /// think_after_iteration is a pause after each iteration.
    #[serde(default)]
    pub think_after_iteration: Option<ThinkTime>,
}

/// MAX_STEPS bounds the steps of one sequence (and so a VU's position counters).
pub(crate) const MAX_STEPS: usize = u16::MAX as usize;

impl FlowSpec {
    /// single is a flow of one sequence of one step.
    pub fn single(request: RequestSpec) -> FlowSpec {
        FlowSpec {
            sequences: vec![SequenceSpec {
                name: None,
                weight: 1.0,
                steps: vec![StepSpec {
                    tag: None,
                    request,
                    timeout_s: None,
                    think_after: None,
                    captures: Vec::new(),
                    checks: Vec::new(),
                }],
            }],
            think_after_iteration: None,
        }
    }

    /// validate pushes an error for every invalid field, under `field` (e.g. `scenarios[0].flow`).
    pub fn validate(&self, field: &str, errors: &mut Vec<PlanError>) {
        if self.sequences.is_empty() {
            errors.push(PlanError::new(format!("{field}.sequences"), "needs at least one sequence"));
        }
        if self.sequences.len() > MAX_STEPS {
            errors.push(PlanError::new(format!("{field}.sequences"), format!("at most {MAX_STEPS} sequences")));
        }
        for (i, sequence) in self.sequences.iter().enumerate() {
            let at = format!("{field}.sequences[{i}]");
            if !(sequence.weight.is_finite() && sequence.weight > 0.0) {
                errors.push(PlanError::new(
                    format!("{at}.weight"),
                    format!("must be a positive number, got {}", sequence.weight),
                ));
            }
            if sequence.steps.is_empty() {
                errors.push(PlanError::new(format!("{at}.steps"), "needs at least one step"));
            }
            if sequence.steps.len() > MAX_STEPS {
                errors.push(PlanError::new(format!("{at}.steps"), format!("at most {MAX_STEPS} steps")));
            }
            for (j, step) in sequence.steps.iter().enumerate() {
                let at = format!("{at}.steps[{j}]");
                step.request.validate(&format!("{at}.request"), errors);
                if let Some(timeout) = step.timeout_s {
                    check_positive(errors, &format!("{at}.timeout_s"), timeout);
                }
                if let Some(think) = &step.think_after {
                    think.validate(&format!("{at}.think_after"), errors);
                }
                for (k, capture) in step.captures.iter().enumerate() {
                    if let Err(e) = Capture::compile(capture, &format!("{at}.captures[{k}]")) {
                        errors.extend(e);
                    }
                }
                for (k, check) in step.checks.iter().enumerate() {
                    if let Err(e) = Check::compile(check, &format!("{at}.checks[{k}]")) {
                        errors.extend(e);
                    }
                }
            }
        }
        if let Some(think) = &self.think_after_iteration {
            think.validate(&format!("{field}.think_after_iteration"), errors);
        }
    }
}

/// SequencePicker chooses a sequence index by weight with one random draw.
#[derive(Clone, Debug)]
pub(crate) struct SequencePicker {
    cumulative: Vec<f64>,
}

impl SequencePicker {
    /// new builds a picker over the weights (all positive, validated).
    pub(crate) fn new(weights: impl IntoIterator<Item = f64>) -> SequencePicker {
        let mut total = 0.0;
        let cumulative = weights
            .into_iter()
            .map(|w| {
                total += w;
                total
            })
            .collect();
        SequencePicker { cumulative }
    }

    /// pick returns a sequence index; with one sequence it draws nothing.
    #[inline]
    pub(crate) fn pick(&self, rng: &mut SmallRng) -> usize {
        match self.cumulative.len() {
            0 | 1 => 0,
            n => {
                let total = self.cumulative[n - 1];
                let x = rng.random::<f64>() * total;
                self.cumulative.partition_point(|&c| c <= x).min(n - 1)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn picker_follows_weights() {
        let picker = SequencePicker::new([70.0, 25.0, 5.0]);
        let mut rng = SmallRng::seed_from_u64(7);
        let mut counts = [0u32; 3];
        for _ in 0..100_000 {
            counts[picker.pick(&mut rng)] += 1;
        }
        for (count, share) in counts.iter().zip([0.70, 0.25, 0.05]) {
            let observed = f64::from(*count) / 100_000.0;
            assert!((observed - share).abs() < 0.01, "{counts:?}");
        }
    }

    #[test]
    fn think_times_sample_within_their_bounds() {
        let mut rng = SmallRng::seed_from_u64(1);
        assert_eq!(ThinkTime::Fixed { s: 1.5 }.sample_ns(&mut rng), 1_500_000_000);
        let uniform = ThinkTime::Uniform { min_s: 0.5, max_s: 1.0 };
        let exponential = ThinkTime::Exponential { mean_s: 0.2 };
        let mut sum = 0u64;
        for _ in 0..20_000 {
            let ns = uniform.sample_ns(&mut rng);
            assert!((500_000_000..=1_000_000_000).contains(&ns));
            sum += exponential.sample_ns(&mut rng);
        }
        let mean_s = sum as f64 / 20_000.0 / 1e9;
        assert!((mean_s - 0.2).abs() < 0.01, "exponential mean {mean_s}");
    }

    #[test]
    fn invalid_flows_are_reported_with_their_paths() {
        let flow: FlowSpec = serde_json::from_str(
            r#"{"sequences": [{"weight": 0, "steps": []}, {"steps": [{"timeout_s": -1, "think_after": {"type": "uniform", "min_s": 2, "max_s": 1}}]}],
                "think_after_iteration": {"type": "exponential", "mean_s": 0}}"#,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let mut errors = Vec::new();
        flow.validate("scenarios[0].flow", &mut errors);
        let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "scenarios[0].flow.sequences[0].weight",
                "scenarios[0].flow.sequences[0].steps",
                "scenarios[0].flow.sequences[1].steps[0].timeout_s",
                "scenarios[0].flow.sequences[1].steps[0].think_after.max_s",
                "scenarios[0].flow.think_after_iteration.mean_s",
            ]
        );
    }
}
