"""``surge demo``: a real load test against the reference target that shows saturation.

The target has 4 workers and a fixed 10 ms service time, so its capacity is 400 req/s, with
at most 32 requests waiting for a worker (beyond that it answers 503, back-pressure). The
arrival rate ramps from 50 to 600 req/s over 15 s and holds 600 req/s for 5 s: latency is flat
while the rate is below capacity, then the queue fills and the excess is shed with 503s
while the served rate stays near 400 req/s.

The demo is a run like any other: a URL run's plan through ``surge.cli.run.execute`` (the one
run path, ``surge.run.run_phases``), recorded by RecordWriter into ``results/<time>-demo/``,
plus the target's own counts (``target-stats.json``) beside the record.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from surge.exit_codes import Outcome
from surge.plan import Plan, RampingArrivalRate, RateStage, RequestSpec, TargetSpec
from surge.run import CompiledRun, RunOutcome
from surge.target import TargetProcess

if TYPE_CHECKING:
    from surge.diagnosis.watch import TargetWatch

DEMO_TARGET: dict[str, Any] = {"workers": 4, "service_time": "10ms", "queue": 32, "seed": 1}
"""DEMO_TARGET is the target's configuration: capacity 4 / 10 ms = 400 req/s."""

DEMO_STAGES = [RateStage(duration_s=15, target_rate=600), RateStage(duration_s=5, target_rate=600)]
"""DEMO_STAGES ramp the arrival rate from 50 to 600 req/s, then hold it."""

DEMO_NAME = "demo"
"""DEMO_NAME names the demo's results directory: ``results/<UTC yyyymmdd-HHMMSS>-demo/``."""


def demo_plan(url: str) -> Plan:
    """demo_plan is the ramp against the target at ``url``."""
    return Plan.single(TargetSpec(url=f"{url}/delay/0"), RequestSpec(),
                       RampingArrivalRate(start_rate=50, stages=DEMO_STAGES, max_vus=2000))


def print_per_second(main: dict[str, Any], console: Console) -> None:
    """print_per_second prints each interval's offered rate, served (200), shed and p95."""
    console.print("\nPer-second view (offered rate → served, shed, p95):")
    for interval in main.get("intervals", []):
        r = interval["requests"]
        console.print(
            f"  t={interval['start_s']:4.0f}s  offered {interval.get('target_rate_per_s') or 0:5.0f}/s  "
            f"served {r['status_codes'].get('200', 0):4d}  shed {r['shed']:4d}  "
            f"p95 {interval['latency']['all']['p95_ms']:7.1f} ms")


def _watch_target(target: TargetProcess) -> TargetWatch | None:
    """_watch_target samples the reference target's process during the run (docs/diagnosis.md)."""
    from surge.diagnosis.check import watch_process

    return watch_process(target.pid, flag="surge demo: target")


def run_demo(results_dir: Path = Path("results"), console: Console | None = None) -> tuple[Path, Outcome]:
    """run_demo starts the target, runs the ramp as a recorded run, prints the summary and the
    per-second view, and says (last line on stdout) where the results are; returns that
    directory and the run's outcome."""
    from surge.cli.run import execute, make_recorder

    console = console or Console()
    console.print("[bold]surge demo[/bold]: reference target with 4 workers × 10 ms "
                  "(capacity 400 req/s, queue 32), arrival rate ramping 50 → 600 req/s\n")
    with TargetProcess(**DEMO_TARGET) as target:
        plan = demo_plan(target.url)
        compiled = CompiledRun(main=json.loads(plan.to_json()))
        recorder = make_recorder(None, False, target.url, None, compiled.main["target"]["url"], name=DEMO_NAME,
                                 results=results_dir)
        assert recorder is not None  # never --no-save here

        def after_summary(outcome: RunOutcome) -> None:
            print_per_second(outcome.main, console)
            try:
                (recorder.directory / "target-stats.json").write_text(json.dumps(target.stats(), indent=2))
            except OSError as e:
                print(f"surge: warning: cannot write target-stats.json: {e.strerror or e}", file=sys.stderr, flush=True)

        outcome = execute(compiled, threads=None, json_output=False, url_plan=plan, recorder=recorder,
                          after_summary=after_summary, watch=_watch_target(target))
    files = sorted(p.name for p in recorder.directory.iterdir())
    console.print(f"\nResults written to {recorder.directory}/ ({', '.join(files)})", soft_wrap=True)
    return recorder.directory, outcome
