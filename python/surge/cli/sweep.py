"""``surge sweep FILE|URL --vus 100,500,1000 | --rates 100:3200:x2``: the test at each load
level (a warm-up, then a measured window), then the curve: zones, peak, knee and, for VU
levels, a Universal Scalability Law fit (docs/experiments.md, "surge sweep")."""

from __future__ import annotations

import click

from surge.cli.errors import finish
from surge.cli.repeat import report_experiment
from surge.cli.test_options import experiment_test_options
from surge.experiments.recorder import check_load_flags
from surge.run.spec import TestSpec

DEFAULT_WARMUP = "5s"
"""DEFAULT_WARMUP is each level's unmeasured warm-up unless --warmup says otherwise."""

__all__ = ["check_load_flags", "sweep_command"]


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
@click.option("--cooldown", default="0s", show_default=True, help="Pause between two levels (nothing sent).")
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
@click.option(
    "--slo",
    multiple=True,
    help="An SLO condition in threshold syntax, e.g. 'p(99) < 100ms'; repeatable (default: the "
    "scenario's thresholds, else the default SLO).",
)
@click.option(
    "--json",
    "json_output",
    is_flag=True,
    help="Print the experiment (parameters, every run, the curve, zones, peak, knee, USL) as one JSON "
    "document on stdout.",
)
def sweep_command(
    test: TestSpec,
    vus: str | None,
    rates: str | None,
    warmup: str,
    cooldown: str,
    drain_wait: str,
    stop_when: str | None,
    slo: tuple[str, ...],
    json_output: bool,
) -> None:
    """Run the test (URL, or a scenario file) at each load level, lightest first (-d is each
    level's measured window, default 10s), and find the curve's peak, knee, zones and, for VU
    levels, the USL fit. Exit code 130 (143 for SIGTERM) when stopped, 3 when nothing was
    measured."""
    # Function-local: the sweep's analysis (numpy) loads only when the command runs, not for --help.
    from surge.experiments.sweep import SweepRequest, sweep

    experiment, outcome = sweep(
        test, SweepRequest(vus, rates, warmup, cooldown, drain_wait, stop_when == "broken", slo)
    )
    report_experiment(experiment.document, json_output)
    finish(outcome)
