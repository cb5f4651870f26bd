"""``surge demo``: a real load test against the reference target that shows saturation.

The target has 4 workers and a fixed 10 ms service time, so its capacity is 400 req/s, with
at most 32 requests waiting for a worker (beyond that it answers 503, back-pressure). The
arrival rate ramps from 50 to 600 req/s over 15 s and holds 600 req/s for 5 s: latency is flat
while the rate is below capacity, then the queue fills and the excess is shed with 503s
while the served rate stays near 400 req/s.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from rich.console import Console

from surge.engine import run_plan
from surge.plan import Plan, RampingArrivalRate, RateStage, RequestSpec, TargetSpec
from surge.progress import Progress
from surge.summary import print_summary
from surge.target import TargetProcess

DEMO_TARGET: dict[str, Any] = {"workers": 4, "service_time": "10ms", "queue": 32, "seed": 1}
"""DEMO_TARGET is the target's configuration: capacity 4 / 10 ms = 400 req/s."""

DEMO_STAGES = [RateStage(duration_s=15, target_rate=600), RateStage(duration_s=5, target_rate=600)]
"""DEMO_STAGES ramp the arrival rate from 50 to 600 req/s, then hold it."""


def run_demo(results_dir: Path = Path("results"), console: Console | None = None) -> Path:
    """run_demo starts the target, runs the ramp, prints the summary and writes the result;
    returns the directory it wrote to."""
    console = console or Console()
    console.print("[bold]surge demo[/bold]: reference target with 4 workers × 10 ms "
                  "(capacity 400 req/s, queue 32), arrival rate ramping 50 → 600 req/s\n")
    with TargetProcess(**DEMO_TARGET) as target:
        plan = Plan.single(
            TargetSpec(url=f"{target.url}/delay/0"),
            RequestSpec(),
            RampingArrivalRate(start_rate=50, stages=DEMO_STAGES, max_vus=2000),
        )
        with Progress(plan.duration_s()) as progress:
            result = run_plan(plan, progress.update)
        stats = target.stats()
    print_summary(result, plan, console)
    console.print("\nPer-second view (offered rate → served, shed, p95):")
    for interval in result.intervals:
        r = interval.requests
        ok = (r.status_codes or {}).get("200", 0)
        console.print(
            f"  t={interval.start_s:4.0f}s  offered {interval.target_rate_per_s or 0:5.0f}/s  "
            f"served {ok:4d}  shed {r.shed:4d}  p95 {interval.latency.all.p95_ms:7.1f} ms"
        )
    out = results_dir / time.strftime("demo-%Y%m%d-%H%M%S")
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps(result.to_document(), indent=2))
    (out / "target-stats.json").write_text(json.dumps(stats, indent=2))
    console.print(f"\nResults written to {out}/ (summary.json, target-stats.json)")
    return out
