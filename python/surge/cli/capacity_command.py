"""``surge capacity FILE|URL [--slo 'p(99) < 100ms'] ...``: the highest arrival rate the target
sustains under the SLO, by exponential bracketing, bisection and a confirmation run, each step
a short open-model run (docs/experiments.md, "surge capacity")."""

from __future__ import annotations

import math

import click

from surge.analysis.capacity_search import DEFAULT_MAX_STEPS
from surge.cli.exit import finish
from surge.cli.options import RATE, cooldown_option, json_option, oversaturation_option
from surge.cli.repeat_command import report_experiment
from surge.cli.test_options import experiment_test_options
from surge.core.errors import BadInput
from surge.core.limits import MAX_RATE
from surge.core.units import duration_flag, percent_flag
from surge.experiments.capacity import CapacityPlan, run_capacity
from surge.experiments.recorder import check_experiment_test, check_load_flags
from surge.run.spec import TestSpec

DEFAULT_START_RATE = 100.0
"""DEFAULT_START_RATE is the first step's rate, per second, unless --start-rate says otherwise."""

MAX_STEPS_LIMIT = 200
"""MAX_STEPS_LIMIT bounds --max-steps."""

MAX_RETRIES = 5
"""MAX_RETRIES bounds --retries."""


def _rate(flag: str, value: float) -> float:
    if not (math.isfinite(value) and 0 < value <= MAX_RATE):
        raise BadInput(flag, f"must be above 0 and at most {MAX_RATE:,.0f}/s, got {value:g}")
    return value


@click.command("capacity")
@experiment_test_options
@click.option(
    "--start-rate",
    "start_rate",
    type=RATE,
    default=DEFAULT_START_RATE,
    show_default=True,
    help="The first step's arrival rate, per second.",
)
@click.option("--max-rate", "max_rate", type=RATE, help="Never step above this rate, per second (default: none).")
@click.option(
    "--precision",
    default="2%",
    show_default=True,
    help="Stop bisecting when the bracket is this narrow, (high − low) / low.",
)
@click.option(
    "--step-duration",
    "step_duration",
    default="10s",
    show_default=True,
    help="Length of each step's open-model run (bracketing steps: half of it, at least 2 s).",
)
@click.option(
    "--max-steps",
    "max_steps",
    type=int,
    default=DEFAULT_MAX_STEPS,
    show_default=True,
    help="At most this many steps, the confirmation runs included.",
)
@click.option(
    "--max-late",
    "max_late",
    default="5%",
    show_default=True,
    help="Sends late (> 1 ms after their intended time) more often than this are pointed out in a step's "
    "evidence. Lateness fails nothing by itself: its effect does (sends missing from the schedule, or "
    "the SLO missed only through it), and then the generator is blamed, not the target.",
)
@cooldown_option(
    "1s",
    "Pause before each step after the first (longer while requests cut off at the end of the last "
    "step may still be at the target, at most 30 s more).",
)
@click.option(
    "--retries",
    type=int,
    default=0,
    show_default=True,
    help="Measure a failed step again up to this many times; it fails only when every attempt does "
    "(a pause elsewhere on the machine then cannot fail a rate the target sustains).",
)
@oversaturation_option("each step")
@json_option(
    "Print the experiment (parameters, every step's run, figures, verdict and evidence, the rate "
    "found) as one JSON document on stdout."
)
def capacity_command(
    test: TestSpec,
    start_rate: float,
    max_rate: float | None,
    precision: str,
    step_duration: str,
    max_steps: int,
    max_late: str,
    cooldown: str,
    retries: int,
    no_oversaturation_stop: bool,
    json_output: bool,
) -> None:
    """Find the highest arrival rate the target (URL, or a scenario file) sustains under the
    SLO (--slo, else the scenario's thresholds): doubling from --start-rate until a step fails,
    narrowing to --precision, then a confirmation run. A step passes when it meets the SLO and
    is steady; a step the generator or a client cap limited does not count against the target.
    Exit code 0 with a confirmed rate, 99 when none, 130 (143 for SIGTERM) when stopped."""
    _rate("--start-rate", start_rate)
    if max_rate is not None:
        _rate("--max-rate", max_rate)
        if max_rate < start_rate:
            raise BadInput("--max-rate", f"must be at least --start-rate ({start_rate:g}/s), got {max_rate:g}")
    fraction = percent_flag("--precision", precision, above_zero=True, example="10%")
    if fraction >= 1:
        raise BadInput("--precision", f"must be below 100%, got {precision}")
    if not 0 <= retries <= MAX_RETRIES:
        raise BadInput("--retries", f"must be from 0 to {MAX_RETRIES}, got {retries}")
    if not 1 <= max_steps <= MAX_STEPS_LIMIT:
        raise BadInput("--max-steps", f"must be from 1 to {MAX_STEPS_LIMIT}, got {max_steps}")
    step_s = duration_flag("--step-duration", step_duration)
    late = percent_flag("--max-late", max_late, above_zero=True, example="10%")
    cooldown_s = duration_flag("--cooldown", cooldown, positive=False)
    check_load_flags(test, "--start-rate", False)
    if test.duration is not None:
        raise BadInput(test.flag("duration"), "each step's length is --step-duration: drop it")
    check_experiment_test(test)
    plan = CapacityPlan(
        start_rate, max_rate, fraction, step_s, max_steps, late, cooldown_s, retries, not no_oversaturation_stop
    )
    experiment, outcome = run_capacity(test, plan, test.slo)
    report_experiment(experiment.document, json_output)
    finish(outcome)
