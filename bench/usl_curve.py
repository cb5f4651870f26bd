"""usl_curve: measure the reference target's throughput against concurrency under the Universal
Scalability Law and print it beside the law's X(N), with the measured and predicted peak.

    .venv/bin/python bench/usl_curve.py --contention 0.05 --coherency 0.002 --service-time 10ms \\
        --levels 1,2,4,8,12,16,21,24,32,48,64 --duration 10s

Each level is one closed-model ``surge run URL -c N -d DURATION`` against a ``surge target``
started with ``--workers`` above the largest level, so that N connections keep N requests in
service. Runs go to loopback only, one after another, in a scratch directory.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile

from surge.core.units import parse_duration
from surge.engine.target import TargetProcess


def predicted(n: int, sigma: float, kappa: float, service_s: float) -> float:
    """predicted is X(n) = n / (D · (1 + σ(n−1) + κn(n−1))) in requests per second."""
    return n / (service_s * (1 + sigma * (n - 1) + kappa * n * (n - 1)))


def main() -> int:
    """main measures each level and prints the table; exit 0."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--contention", type=float, default=0.05)
    parser.add_argument("--coherency", type=float, default=0.002)
    parser.add_argument("--service-time", default="10ms")
    parser.add_argument("--levels", default="1,2,4,8,12,16,21,24,32,48,64")
    parser.add_argument("--duration", default="10s")
    args = parser.parse_args()
    levels = [int(n) for n in args.levels.split(",")]
    service_s = parse_duration(args.service_time)
    n_star = math.sqrt((1 - args.contention) / args.coherency) if args.coherency > 0 else math.inf
    rows = []
    with (
        tempfile.TemporaryDirectory(prefix="usl-curve-") as scratch,
        TargetProcess(
            workers=max(levels) * 4,
            service_time=args.service_time,
            contention=args.contention,
            coherency=args.coherency,
        ) as target,
    ):
        for n in levels:
            run = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "surge",
                    "run",
                    f"{target.url}/tasks",
                    "-c",
                    str(n),
                    "-d",
                    args.duration,
                    "--json",
                ],
                capture_output=True,
                text=True,
                timeout=600,
                cwd=scratch,
            )
            doc = json.loads(run.stdout)
            measured = doc["requests"]["succeeded"] / doc["duration_s"]
            rows.append(
                (
                    n,
                    measured,
                    predicted(n, args.contention, args.coherency, service_s),
                    doc["latency"]["success"]["p50_ms"],
                )
            )
    print(f"σ = {args.contention}, κ = {args.coherency}, D = {args.service_time}: N* = {n_star:.2f}")
    print("| N | measured req/s | X(N) req/s | measured / X(N) | p50 ms |")
    print("|---|---|---|---|---|")
    for n, measured, want, p50 in rows:
        print(f"| {n} | {measured:.1f} | {want:.1f} | {measured / want:.3f} | {p50:.1f} |")
    best = max(rows, key=lambda r: r[1])
    print(f"measured peak at N = {best[0]} ({best[1]:.1f} req/s); predicted N* = {n_star:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
