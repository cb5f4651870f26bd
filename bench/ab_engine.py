#!/usr/bin/env python3
"""ab_engine: A/B of engine builds, interleaved with wrk, against nginx on loopback.

Usage: .venv/bin/python bench/ab_engine.py RUN_PLAN_A RUN_PLAN_B [...] [--rounds 7] [--seconds 5]
       [--rate 20000]

Each argument is a build of the engine's `run_plan` example (`cargo build --release -p
surge-engine --example run_plan`, then copy `target/release/examples/run_plan` aside before
changing the engine). Every round runs each build and wrk once, the order reversed every other
round, each pinned to the generator core with nginx (one worker) pinned to the other: 64
connections, closed loop, GET /health (with `--rate R`, the builds run the open model instead:
R requests/s on one thread, up to 1,000 in flight; wrk stays the closed-loop reference). CPU per
request is the child's `ru_utime + ru_stime`
over nginx's own count of requests (stub_status delta). Prints every run, then per build the
median CPU µs/request, its ratio to wrk (per round), and each build's ratio to the first
(per round). Passing the same binary twice gives the harness's noise floor (A/A).
Only 127.0.0.1 is contacted; every child is bounded.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from surgebench import proc
from surgebench.generators import find_wrk
from surgebench.nginx import Nginx, cpu_us_per_request, find_nginx


def closed_plan(url: str, seconds: float) -> bytes:
    """closed_plan is 64 VUs on one thread sending GET /health for `seconds`."""
    return json.dumps(
        {
            "target": {"url": url},
            "threads": 1,
            "scenarios": [
                {
                    "name": "ab",
                    "executor": {"type": "constant-vus", "vus": 64, "duration_s": seconds},
                    "flow": {"sequences": [{"steps": [{"request": {"method": "GET", "path": "/health"}}]}]},
                }
            ],
        }
    ).encode()


def open_plan(url: str, seconds: float, rate: float) -> bytes:
    """open_plan is `rate` requests/s of GET /health for `seconds` on one thread (the open model,
    up to 1,000 in flight, 64 connections opened before the start)."""
    executor = {
        "type": "constant-arrival-rate",
        "rate": rate,
        "duration_s": seconds,
        "pre_allocated_vus": 64,
        "max_vus": 1000,
    }
    plan = json.loads(closed_plan(url, seconds))
    plan["scenarios"][0]["executor"] = executor
    return json.dumps(plan).encode()


def main(argv: list[str]) -> None:
    """main runs the interleaved rounds and prints the comparison."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("builds", nargs="+", help="run_plan binaries to compare (the first is the reference)")
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--seconds", type=float, default=5.0)
    p.add_argument("--rate", type=float, default=None, help="run the builds in the open model at this rate (req/s)")
    p.add_argument("--gen-core", type=int, default=0)
    p.add_argument("--server-core", type=int, default=1)
    args = p.parse_args(argv)
    wrk, nginx_bin = find_wrk(), find_nginx()
    if not wrk or not nginx_bin:
        raise SystemExit("needs wrk and nginx (make tools)")
    proc.raise_nofile()
    names = [f"{i}:{Path(b).name}" for i, b in enumerate(args.builds)] + ["wrk"]
    us: dict[str, list[float]] = {n: [] for n in names}
    with Nginx(nginx_bin, core=args.server_core, nofile=20_000) as nginx:
        if args.rate is None:
            plan = closed_plan(nginx.url, args.seconds)
        else:
            plan = open_plan(nginx.url, args.seconds, args.rate)
        wrk_argv = [wrk, "-t1", "-c64", f"-d{round(args.seconds)}s", nginx.url]
        for r in range(args.rounds):
            order = list(zip(names, [*args.builds, None], strict=False))
            if r % 2:
                order.reverse()
            for name, build in order:
                argv_, stdin = (wrk_argv, None) if build is None else ([build], plan)
                value = cpu_us_per_request(nginx, argv_, stdin, args.gen_core, args.seconds)
                us[name].append(value)
                print(f"round {r + 1} {name:24s} {value:7.3f} µs/request", flush=True)
    print()
    for name in names[:-1]:
        to_wrk = [a / w for a, w in zip(us[name], us["wrk"], strict=False)]
        to_ref = [a / b for a, b in zip(us[name], us[names[0]], strict=False)]
        print(
            f"{name:24s} {statistics.median(us[name]):6.3f} µs/request   "
            f"/wrk {statistics.median(to_wrk):.3f} [{min(to_wrk):.3f}–{max(to_wrk):.3f}]   "
            f"/first {statistics.median(to_ref):.3f} [{min(to_ref):.3f}–{max(to_ref):.3f}]"
        )
    print(f"{'wrk':24s} {statistics.median(us['wrk']):6.3f} µs/request")


if __name__ == "__main__":
    main(sys.argv[1:])
