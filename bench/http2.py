"""http2: surge's HTTP/2 CPU per request against h2load's and against its own HTTP/1.1, on nginx.

One nginx worker pinned to the server core serves /health over HTTP/1.1 and h2c (prior knowledge).
Each round runs, pinned to the generator core and one thread each, for SECONDS:
  - h2load -c C -m 100 -t 1 -D SECONDS (C = 1 and 10);
  - surge's engine (the run_plan example: no Python) with C connections x 100 streams, closed model;
  - surge's engine over HTTP/1.1, 64 VUs (its own closed model, the reference of the 1.3x bar).
A figure is the generator's user+sys CPU over the requests nginx counted (stub_status delta), so
both tools are charged for the same work. Rounds alternate their order. Prints every run, then the
median per tool and the ratios the issue's bar names (surge h2 / h2load at 10 x 100 <= 1;
surge h2 / surge HTTP/1.1 <= 1.3).

    .venv/bin/python bench/http2.py [--rounds 3] [--seconds 5]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from surgebench import proc
from surgebench.nginx import Nginx, cpu_us_per_request, find_nginx

ROOT = Path(__file__).resolve().parent.parent
RUN_PLAN = ROOT / "target" / "release" / "examples" / "run_plan"
STREAMS = 100


def plan(url: str, seconds: float, vus: int, streams: int | None) -> bytes:
    """plan is `vus` VUs on one thread sending GET /health for `seconds` (HTTP/2 when `streams`)."""
    target: dict[str, object] = {"url": url}
    if streams is not None:
        target["http2"] = {"streams": streams}
    return json.dumps(
        {
            "target": target,
            "threads": 1,
            "scenarios": [
                {
                    "name": "h2",
                    "executor": {"type": "constant-vus", "vus": vus, "duration_s": seconds},
                    "flow": {"sequences": [{"steps": [{"request": {"method": "GET", "path": "/health"}}]}]},
                }
            ],
        }
    ).encode()


def main(argv: list[str]) -> None:
    """main runs the rounds and prints the comparison."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seconds", type=float, default=5.0)
    p.add_argument("--gen-core", type=int, default=0)
    p.add_argument("--server-core", type=int, default=1)
    args = p.parse_args(argv)
    h2load, nginx_bin = shutil.which("h2load"), find_nginx()
    if not h2load or not nginx_bin:
        raise SystemExit("needs h2load and nginx (make tools)")
    if not RUN_PLAN.exists():
        subprocess.run(["cargo", "build", "--release", "-p", "surge-engine", "--example", "run_plan"], check=True)
    proc.raise_nofile()
    results: dict[str, list[float]] = {}
    with Nginx(nginx_bin, core=args.server_core, nofile=20_000, http2=True) as nginx:
        runs: list[tuple[str, list[str], bytes | None]] = []
        for connections in (1, 10):
            h2load_argv = [h2load, "-c", str(connections), "-m", str(STREAMS), "-t", "1"]
            runs.append(
                (f"h2load {connections}x{STREAMS}", [*h2load_argv, "-D", str(round(args.seconds)), nginx.h2_url], None)
            )
            runs.append(
                (
                    f"surge h2 {connections}x{STREAMS}",
                    [str(RUN_PLAN)],
                    plan(nginx.h2_url, args.seconds, connections * STREAMS, STREAMS),
                )
            )
        runs.append(("surge http/1.1 64", [str(RUN_PLAN)], plan(nginx.url, args.seconds, 64, None)))
        for r in range(args.rounds):
            order = runs if r % 2 == 0 else list(reversed(runs))
            for name, cmd, stdin in order:
                value = cpu_us_per_request(nginx, cmd, stdin, args.gen_core, args.seconds)
                results.setdefault(name, []).append(value)
                print(f"round {r + 1} {name:20s} {value:7.3f} µs/request", flush=True)
    print()
    median = {name: statistics.median(values) for name, values in results.items()}
    for name, value in median.items():
        print(f"{name:20s} median {value:7.3f} µs/request")
    for connections in (1, 10):
        ours, theirs = median[f"surge h2 {connections}x{STREAMS}"], median[f"h2load {connections}x{STREAMS}"]
        print(f"surge h2 / h2load at {connections}x{STREAMS}: {ours / theirs:.2f} (bar at 10x100: <= 1)")
    to_http1 = median[f"surge h2 10x{STREAMS}"] / median["surge http/1.1 64"]
    print(f"surge h2 10x100 / surge http/1.1: {to_http1:.2f} (bar: <= 1.3)")


if __name__ == "__main__":
    main(sys.argv[1:])
