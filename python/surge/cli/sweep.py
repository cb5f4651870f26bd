"""``surge sweep FILE|URL --vus 100,500,1000 | --rates 100:3200:x2``: the test at each load
level (a warm-up, then a measured window), then the curve: zones, peak, knee and, for VU
levels, a Universal Scalability Law fit (docs/experiments.md, "surge sweep")."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import click

from surge.cli.errors import finish
from surge.cli.repeat import check_experiment_test, report_experiment
from surge.cli.test_options import experiment_test_options
from surge.core import exit_codes
from surge.core.errors import BadInput
from surge.core.exit_codes import Outcome
from surge.experiments.recorder import ExperimentRecord
from surge.experiments.slo_choice import Slo, choose_slo, with_slo_percentiles
from surge.plan.url import duration_flag
from surge.run.spec import TestSpec

DEFAULT_DURATION = "10s"
"""DEFAULT_DURATION is each level's measured window unless -d says otherwise."""

DEFAULT_WARMUP = "5s"
"""DEFAULT_WARMUP is each level's unmeasured warm-up unless --warmup says otherwise."""


def check_load_flags(test: TestSpec, level_flag: str, closed: bool) -> None:
    """check_load_flags refuses the test's own load flags an experiment's levels replace:
    ``-r`` always (each run's rate or VUs is the experiment's), ``-c`` with VU levels."""
    if test.rate is not None:
        raise BadInput(test.flag("rate"), f"the experiment sets each run's load ({level_flag}): drop it")
    if closed and test.connections is not None:
        raise BadInput(test.flag("connections"), f"the experiment sets each run's VUs ({level_flag}): drop it")


def sweep_outcome(stopped: int | None, measured: int, planned: int, any_throughput: bool, kept: str) -> Outcome:
    """sweep_outcome is the sweep's exit code and why: 128 + the stop signal when one ended it
    (``kept`` says where the levels measured are), 3 when no level measured any response, else
    0 (broken levels are the sweep's finding, not a failure)."""
    if stopped is not None:
        return exit_codes.stopped(None, f"experiment incomplete: {measured} of {planned} levels measured ({kept})")
    if not any_throughput:
        return Outcome(exit_codes.UNREACHABLE, "no level measured any response")
    return Outcome(exit_codes.OK)


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
    from surge.analysis.sweep import findings
    from surge.experiments.levels import parse_rates, parse_vus
    from surge.experiments.settle import Settler
    from surge.experiments.sweep import LevelRun, SweepPlan, analyse, prepare_levels, run_sweep

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
    test = replace(test, duration=None)  # each run's length is the level's (an override), also for a file
    plan = SweepPlan(
        "closed" if vus is not None else "open",
        loads,
        duration_s,
        warmup_s,
        cooldown_s,
        stop_when == "broken",
        Slo([], "default"),
        drain_wait_s,
    )
    levels = prepare_levels(test, plan)
    choice = choose_slo(slo, levels[0][1])
    plan = replace(plan, slo=choice)
    prepared = [
        (None if w is None else with_slo_percentiles(w, choice), with_slo_percentiles(m, choice)) for w, m in levels
    ]
    parameters = {
        "model": plan.model,
        "levels": loads,
        "duration_s": duration_s,
        "warmup_s": warmup_s,
        "cooldown_s": cooldown_s,
        "drain_wait_s": drain_wait_s,
        "stop_when": stop_when,
        "slo": choice.to_dict(),
        "test": test.describe(),
    }
    experiment = ExperimentRecord.for_test("sweep", test, parameters)
    done: list[LevelRun] = []
    stopped_early = None
    settler = Settler(test, drain_wait_s)
    with experiment.running():
        stopped_early = run_sweep(experiment, test, plan, prepared, done, settler)

    def analysed() -> tuple[Any, list[dict[str, Any]]]:
        analysis = analyse(plan, done, stopped_early, settler)
        return analysis, findings(analysis)

    experiment.conclude(analysed)
    report_experiment(experiment.document, json_output)
    finish(
        sweep_outcome(
            experiment.stopped,
            len(done),
            len(loads),
            any(d.level.figure("responses_per_s") for d in done),
            experiment.kept,
        )
    )
