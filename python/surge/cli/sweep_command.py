"""``surge sweep FILE|URL --vus 100,500,1000 | --rates 100:3200:x2``: the test at each load
level (a warm-up, then a measured window), then the curve: zones, peak, knee and, for VU
levels, a Universal Scalability Law fit (docs/experiments.md, "surge sweep")."""

from __future__ import annotations

import click

from surge.cli.exit import finish
from surge.cli.options import cooldown_option, json_option, oversaturation_option
from surge.cli.repeat_command import report_experiment
from surge.cli.test_options import experiment_test_options
from surge.core.errors import BadInput
from surge.core.units import duration_flag
from surge.experiments.levels import parse_rates, parse_vus
from surge.experiments.recorder import check_experiment_test, check_load_flags
from surge.experiments.slo_choice import Slo
from surge.experiments.sweep import SweepPlan, run_sweep
from surge.run.spec import TestSpec

DEFAULT_DURATION = "10s"
"""DEFAULT_DURATION is each level's measured window unless -d says otherwise."""

DEFAULT_WARMUP = "5s"
"""DEFAULT_WARMUP is each level's unmeasured warm-up unless --warmup says otherwise."""


@click.command("sweep")
@experiment_test_options
@click.option(
    "--vus",
    help="Closed model: VU levels, a list (100,500,1000) or a series START:END:xFACTOR "
    "(1:64:x2) or START:END:+STEP (100:500:+100).",
)
@click.option("--rates", help="Open model: arrival rates per second, a list or a series (100:3200:x2, 100:1000:+100).")
@click.option(
    "--warmup",
    default=DEFAULT_WARMUP,
    show_default=True,
    help="Unmeasured warm-up run at each level before its measured window (0s: none).",
)
@cooldown_option("0s", "Pause between two levels (nothing sent).")
@click.option(
    "--drain-wait",
    "drain_wait",
    default="60s",
    show_default=True,
    help="Before each level after the first, wait until the target has worked off the last one (a "
    "one-VU probe of the test's request, back near its idle latency), at most this long; 0s: no wait.",
)
@click.option(
    "--stop-when",
    "stop_when",
    type=click.Choice(["broken"]),
    help="End the sweep at the first level in the broken zone.",
)
@oversaturation_option("each --rates level")
@json_option(
    "Print the experiment (parameters, every run, the curve, zones, peak, knee, USL) as one JSON document on stdout."
)
def sweep_command(
    test: TestSpec,
    vus: str | None,
    rates: str | None,
    warmup: str,
    cooldown: str,
    drain_wait: str,
    stop_when: str | None,
    no_oversaturation_stop: bool,
    json_output: bool,
) -> None:
    """Run the test (URL, or a scenario file) at each load level, lightest first (-d is each
    level's measured window, default 10s), and find the curve's peak, knee, zones and, for VU
    levels, the USL fit; --slo (default: the scenario's thresholds, else the default SLO) draws
    the zones. Exit code 130 (143 for SIGTERM) when stopped, 3 when nothing was
    measured."""
    if (vus is None) == (rates is None):
        raise BadInput(
            "--vus/--rates", "give one: --vus 100,500,1000 (closed model) or --rates 100:3200:x2 (open model)"
        )
    loads: list[float] = [float(v) for v in parse_vus(vus)] if vus is not None else parse_rates(rates or "")
    check_load_flags(test, "--vus" if vus is not None else "--rates", vus is not None)
    duration_s = duration_flag(test.flag("duration"), test.duration or DEFAULT_DURATION)
    warmup_s = duration_flag("--warmup", warmup, positive=False)
    cooldown_s = duration_flag("--cooldown", cooldown, positive=False)
    drain_wait_s = duration_flag("--drain-wait", drain_wait, positive=False)
    check_experiment_test(test)
    plan = SweepPlan(
        "closed" if vus is not None else "open",
        loads,
        duration_s,
        warmup_s,
        cooldown_s,
        stop_when == "broken",
        Slo([], "default"),  # run_sweep puts the one --slo chooses in its place
        drain_wait_s,
        oversaturation_stop=not no_oversaturation_stop,
    )
    experiment, outcome = run_sweep(test, plan, test.slo)
    report_experiment(experiment.document, json_output)
    finish(outcome)
