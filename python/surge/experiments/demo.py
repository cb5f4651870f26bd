"""``surge demo``: a real experiment against the reference target: a closed-model sweep that
finds the target's peak, knee and breaking point.

The target follows the Universal Scalability Law (docs/target.md): a 10 ms service time
(λ = 100/s for one request alone), contention σ = 0.05 and coherency κ = 0.01, so its
throughput against concurrency X(N) = λN / (1 + σ(N−1) + κN(N−1)) peaks at N* = √((1−σ)/κ) ≈ 9.7
requests in service (X ≈ 420/s at 8 to 12 VUs) and then falls: 16 VUs get ~385/s, 24 VUs ~315/s,
26 % below the peak, which the zone rules call broken. The sweep runs 1, 2, 3, 4, 6, 8, 12, 16, 24
(and 32) VUs, a 1 s warm-up and a 2 s measured window each, stopping at the first broken level:
about 35 s in all. Kneedle finds the knee at 4 VUs (levels this close are what it needs: on
doublings, 1, 2, 4, 8, it finds none).

The demo is an experiment like any other: the sweep (``surge.experiments.sweep.run_sweep``, what
``surge sweep`` calls; the one run path for each level),
with the target's process watched (``--watch-pid``), recorded in ``results/<time>-demo/`` and
the history, plus the target's own counts (``target-stats.json``) beside the experiment.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console

from surge.core import signals
from surge.core.exit_codes import Outcome
from surge.engine.target import TargetProcess
from surge.experiments.recorder import check_experiment_test
from surge.experiments.slo_choice import Slo
from surge.experiments.sweep import SweepPlan, run_sweep
from surge.present.terminal.experiment_tables import print_experiment
from surge.present.write import HTML_FILE
from surge.record.directory import create_directory
from surge.run.flags import test_flag_names
from surge.run.spec import TestSpec

DEMO_TARGET: dict[str, Any] = {"workers": 256, "service_time": "10ms", "contention": 0.05, "coherency": 0.01, "seed": 1}
"""DEMO_TARGET is the target's configuration: a USL curve peaking near 8 VUs (N* ≈ 9.7)."""

DEMO_SWEEP = SweepPlan(
    "closed",
    [1, 2, 3, 4, 6, 8, 12, 16, 24, 32],
    duration_s=2.0,
    warmup_s=1.0,
    cooldown_s=0.0,
    stop_when_broken=True,
    slo=Slo([], "default"),
    drain_wait_s=60.0,
)
"""DEMO_SWEEP is the sweep: ``surge sweep --vus 1,2,3,4,6,8,12,16,24,32 -d 2s --warmup 1s --stop-when broken``
(and the command's default --drain-wait 60s)."""

DEMO_NAME = "demo"
"""DEMO_NAME names the demo's results directory: ``results/<UTC yyyymmdd-HHMMSS>-demo/``."""

DEMO_PATH = "/tasks"
"""DEMO_PATH is the route the sweep requests (the target's modelled Task API)."""


def run_demo(results_dir: Path = Path("results"), console: Console | None = None) -> tuple[Path, Outcome]:
    """run_demo starts the target, runs the sweep as a recorded experiment (its tables printed
    as ``surge sweep`` prints them, its report.md and report.html written), writes the target's
    counts beside it, and says where the results are and (last line on stdout) the path of its
    report.html; returns that directory and the sweep's outcome (``sweep_outcome``: its exit
    code and why)."""
    console = console or Console()
    console.print(
        "[bold]surge demo[/bold]: a sweep of 1 → 32 VUs against the reference target "
        "(10 ms service time, USL σ = 0.05, κ = 0.01: knee near 4 VUs, peak near 10, broken by 24)\n"
    )
    directory = create_directory(None, DEMO_NAME, datetime.now(UTC), results_dir)
    with TargetProcess(**DEMO_TARGET) as target:
        test = TestSpec(
            f"{target.url}{DEMO_PATH}",
            out=str(directory),
            watch_pid=target.pid,
            flags=test_flag_names(experiment=True),
        )
        check_experiment_test(test)
        experiment, outcome = run_sweep(test, DEMO_SWEEP, ())
        with signals.deferred():
            print_experiment(experiment.document)
        try:
            (directory / "target-stats.json").write_text(json.dumps(target.stats(), indent=2))
        except OSError as e:
            print(f"surge: warning: cannot write target-stats.json: {e.strerror or e}", file=sys.stderr, flush=True)
    files = sorted(p.name for p in directory.iterdir())
    console.print(f"\nResults written to {directory}/ ({', '.join(files)})", soft_wrap=True)
    console.print(f"Report: {directory / HTML_FILE}", soft_wrap=True)
    return directory, outcome
