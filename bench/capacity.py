#!/usr/bin/env python3
"""The capacity search at full length (docs/benchmarks.md, "Capacity search"): ``surge capacity``
with its defaults (10 s steps, 5 s bracketing steps, 2 % precision, start at 100/s, 1 s cooldown) against reference
targets of known capacity c / s, timing the whole search. The bar (issue 19): a confirmed answer
within ±5 % of c / s in at most 90 s of load.

Usage: .venv/bin/python bench/capacity.py [--targets 8x10ms,4x4ms] [--slo 'p(99) < 100ms'] [ARGS...]

For each target (WORKERSxSERVICE_TIME, a fixed service time: capacity = workers / service time)
it starts ``surge target`` on a free loopback port, runs ``surge capacity URL/tasks --slo ...
--json`` in a temporary directory (with a history database there too), and prints the rate
found (confirmed or not, or the limit that was not the target's), its error against c / s, the
bracket, the number of steps, the seconds of load (the steps' load windows, retries included)
and the wall time of the search (process start-up included), and whether the bar holds. Extra
ARGS go to ``surge capacity``. It asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "python"))

from surge.core.units import parse_duration  # noqa: E402
from surge.engine.target import TargetProcess  # noqa: E402


def search(spec: str, slo: list[str], extra: list[str], workdir: Path) -> dict[str, object]:
    """search runs one capacity search against a target ``WORKERSxSERVICE`` and returns what it found."""
    workers, service = spec.split("x", 1)
    capacity = int(workers) / parse_duration(service)
    env = dict(
        os.environ,
        SURGE_DB=str(workdir / "history.db"),
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO / "python"), os.environ.get("PYTHONPATH")])),
    )
    with TargetProcess(workers=int(workers), service_time=service) as target:
        args = [
            sys.executable,
            "-m",
            "surge",
            "capacity",
            f"{target.url}/tasks",
            *(a for s in slo for a in ("--slo", s)),
            "--json",
            *extra,
        ]
        started = time.monotonic()
        proc = subprocess.run(args, capture_output=True, text=True, cwd=workdir, env=env, stdin=subprocess.DEVNULL)
        elapsed = time.monotonic() - started
    if not proc.stdout.strip():
        raise SystemExit(f"surge capacity ended with {proc.returncode}: {proc.stderr[-2000:]}")
    analysis = json.loads(proc.stdout)["analysis"]
    rate = analysis["rate"]
    runs = json.loads(proc.stdout)["runs"]
    # Every run offers load for its step's window, retries included.
    load_s = sum(float(s["load_s"] or analysis["step_duration_s"]) * len(s["attempts"]) for s in analysis["steps"])
    return {
        "target": spec,
        "capacity": capacity,
        "rate": rate,
        "confirmed": analysis["confirmed"],
        "error": None if rate is None else rate / capacity - 1,
        "high": analysis["high"],
        "limit": analysis.get("limit"),
        "steps": len(analysis["steps"]),
        "runs": len(runs),
        "load_s": load_s,
        "seconds": elapsed,
        "exit": proc.returncode,
    }


def main() -> None:
    """main runs the searches and prints one line each."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default="8x10ms,4x4ms", help="WORKERSxSERVICE_TIME targets, comma-separated")
    parser.add_argument(
        "--slo", action="append", help="SLO conditions (default: 'p(99) < 100ms', 'failure_rate < 0.1%%')"
    )
    args, extra = parser.parse_known_args()
    slo = args.slo or ["p(99) < 100ms", "failure_rate < 0.1%"]
    print(f"surge capacity, defaults but --slo {' --slo '.join(repr(s) for s in slo)} {' '.join(extra)}".rstrip())
    with tempfile.TemporaryDirectory(prefix="surge-bench-capacity-") as tmp:
        for spec in args.targets.split(","):
            found = search(spec, slo, extra, Path(tmp))
            rate = "none" if found["rate"] is None else f"{found['rate']:,.1f}/s ({found['error']:+.1%})"
            high = "-" if found["high"] is None else f"{found['high']:,.1f}"
            bar = (
                found["confirmed"]
                and found["error"] is not None
                and abs(found["error"]) <= 0.05
                and found["load_s"] <= 90
            )
            limit = f" ({found['limit']})" if found["limit"] else ""
            print(
                f"target {spec} (c/s = {found['capacity']:,.0f}/s): {rate}, "
                f"{'confirmed' if found['confirmed'] else 'unconfirmed'}{limit}, bracket up to {high}, "
                f"{found['steps']} steps ({found['runs']} runs), {found['load_s']:.0f} s of load, "
                f"{found['seconds']:.1f} s in all, exit {found['exit']}, bar (±5 % in ≤ 90 s of load) "
                f"{'met' if bar else 'missed'}",
                flush=True,
            )


if __name__ == "__main__":
    main()
