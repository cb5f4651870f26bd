#!/usr/bin/env python3
"""Scale-out on Ray (docs/benchmarks.md, "Scale-out"; docs/distributed.md).

1. **The merge's cost**: real worker reports of a one-thread generator at 2,000 req/s (5 s),
   replayed as G generators into the driver's merge (``surge._engine.merge``): the driver's CPU
   per interval for G = 1, 10, 100, and its projection to 100 and 1,000 generators of 8 threads.
2. **Scale-out**: 1, 2 and 3 generators in a loopback Ray cluster (a network namespace holding
   only ``lo``, tests/distributed/cluster.py), each worker node held to ``--quota`` of a core by
   a cgroup, against a reference target that none of them saturates alone (closed model, enough
   VUs to keep each generator's CPU busy): the merged rate against the sum of the generators'
   own rates (≥ 0.95 is the bar), the counts against the target's, and the driver's CPU per
   interval.

Usage: .venv/bin/python bench/scaleout.py [--merge-only] [--quota 0.15] [--duration 5s]

It never asserts a time; every request goes to a target on 127.0.0.1 inside the namespace,
bounded by the run's duration; the cluster, its cgroups and namespace are removed at the end.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "python"))
sys.path.insert(0, str(REPO / "tests" / "distributed"))

from surge import _engine  # noqa: E402
from surge.engine.target import TargetProcess  # noqa: E402


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def merge_cost() -> list[tuple[int, int, float]]:
    """merge_cost is (generators, threads each, driver CPU ms per interval) for replays of one
    real generator's reports as many."""
    with TargetProcess() as target:
        plan = {
            "target": {"url": f"{target.url}/health"},
            "threads": 1,
            "scenarios": [
                {
                    "name": "default",
                    "executor": {"type": "constant-arrival-rate", "rate": 2000, "duration_s": 5.0, "max_vus": 100},
                    "flow": {"sequences": [{"steps": [{"request": {"method": "GET"}}]}]},
                }
            ],
        }
        reports: list[str] = []
        _engine.run(json.dumps(plan), None, lambda r: reports.append(r) and False, None)
    rows = []
    for generators in (1, 10, 100):
        batches = iter([[(g, r) for g in range(generators)] for r in reports])

        def receive(_wait: float, _stopping: bool, batches=batches) -> list[tuple[int, str | None]] | None:
            return next(batches, None)

        intervals: list[int] = []
        before = _cpu_s()
        count = intervals.append
        _engine.merge(json.dumps(plan), generators, time.time(), receive, lambda _i, count=count: count(1) and False)
        rows.append((generators, 1, 1000 * (_cpu_s() - before) / max(len(intervals), 1)))
    return rows


def scale_out(quota: float, duration: str) -> list[dict]:
    """scale_out runs 1, 2, 3 generators (one per worker node, each node at ``quota`` of a
    core) against one target in a loopback cluster; a row per run."""
    from cluster import LoopbackCluster  # the test harness: a namespace, cgroups, Ray nodes

    rows = []
    with LoopbackCluster(workers=3, cpu_quota=quota, head_cpus=0) as cluster, cluster.target() as target:
        for generators in (1, 2, 3):
            target.reset_stats()
            argv = [sys.executable, "-m", "surge", "run", f"{target.url}/health", "-c", "48", "-d", duration]
            argv += ["--json", "--no-save", "--ray", cluster.address, "--generators", str(generators)]
            started, cpu_before = time.perf_counter(), _children_cpu_s()
            proc = cluster.popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            out, err = proc.communicate(timeout=300)
            if proc.returncode != 0:
                raise SystemExit(f"run with {generators} generators failed: {err[-2000:]}")
            doc = json.loads(out)
            parts = doc["distributed"]["parts"]
            rows.append(
                {
                    "generators": generators,
                    "merged_per_s": doc["throughput"]["responses_per_s"],
                    "parts_per_s": [p["responses_per_s"] for p in parts],
                    "sent": doc["requests"]["sent"],
                    "received": target.received(),
                    "skew_ms": 1000 * doc["distributed"]["start_skew_s"],
                    "wall_s": time.perf_counter() - started,
                    "intervals": len(doc["intervals"]),
                    "driver_cpu_s": _children_cpu_s() - cpu_before,
                }
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--merge-only", action="store_true", help="only the merge's cost (no Ray cluster)")
    parser.add_argument("--quota", type=float, default=0.15, help="cores each worker node may use")
    parser.add_argument("--duration", default="5s", help="each run's duration")
    args = parser.parse_args()

    print("## The merge's cost (driver CPU per interval)\n")
    print("| generators × threads | driver CPU per interval |\n|---|---|")
    rows = merge_cost()
    for generators, threads, ms in rows:
        print(f"| {generators} × {threads} | {ms:.2f} ms |")
    per_thread = (rows[-1][2] - rows[0][2]) / (rows[-1][0] - rows[0][0])
    for generators in (100, 1000):
        print(f"| {generators} × 8 (projected) | {rows[0][2] + per_thread * (generators * 8 - 1):.0f} ms |")
    if args.merge_only:
        return

    print(f"\n## Scale-out: 1-3 generators, each node at {args.quota} of a core\n")
    print(
        "| generators | merged responses/s | sum of the parts | ratio | sent | target received | start skew "
        "| driver CPU (whole run) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for row in scale_out(args.quota, args.duration):
        total = sum(row["parts_per_s"])
        print(
            f"| {row['generators']} | {row['merged_per_s']:,.0f} | {total:,.0f} "
            f"({' + '.join(f'{p:,.0f}' for p in row['parts_per_s'])}) | {row['merged_per_s'] / total:.3f} | "
            f"{row['sent']:,} | {row['received']:,} | {row['skew_ms']:.1f} ms | {row['driver_cpu_s']:.2f} s |"
        )


if __name__ == "__main__":
    main()
