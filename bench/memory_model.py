#!/usr/bin/env python3
"""memory_model: the peak memory of `surge run FILE.yaml` for the inputs that grow it (the
numbers of docs/scenarios.md, "Memory").

Usage: .venv/bin/python bench/memory_model.py [CASE...]

Starts a reference target on loopback, writes each case's file to a temporary folder, runs
`surge run` on it in a child process and prints the child's peak RSS (ru_maxrss of
RUSAGE_CHILDREN, read by an intermediate process whose one child is that run), its wall
time and exit code. Cases: csv1 (a csv variable on a 16 MiB file of 1-character rows), csv2
(two variables on it), values-4 and values-12 (4 or 12 VUs, each with 20 random strings of
1 MiB, sent as a body the target refuses with 413), tags-100 and tags-2000 (2 VUs for 5 s
over 100 or 2,000 distinctly named steps). Each run is bounded (at most 5 s of load).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from surge.engine.target import TargetProcess

PROBE = """
import json, resource, subprocess, sys, time
began = time.monotonic()
p = subprocess.run([sys.executable, "-m", "surge", "run", *sys.argv[1:]], capture_output=True,
                   stdin=subprocess.DEVNULL)
print(json.dumps([p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
                  time.monotonic() - began]))
"""


def csv_case(folder: Path, url: str, variables: int) -> str:
    """csv_case is a file of ``variables`` csv variables on one 16 MiB file of 1-character rows."""
    data = folder / "ids.csv"
    if not data.exists():
        data.write_text("id\n" + "x\n" * ((16 << 20) // 2 - 2))
    defs = "".join(f"      v{i}: {{type: csv, file: ids.csv, pick: random}}\n" for i in range(variables))
    query = "&".join(f"v{i}={{{{v{i}.id}}}}" for i in range(variables))
    return (
        f"target: {url}\nscenarios:\n  s:\n    executor: {{type: per-vu-iterations, vus: 1, iterations: 3}}\n"
        f"    variables:\n{defs}    flow: [{{request: {{path: '/health?{query}'}}}}]\n"
    )


def values_case(url: str, vus: int) -> str:
    """values_case is a file of ``vus`` VUs, each using 20 random strings of 1 MiB."""
    defs = "".join(f"      s{i}: {{type: random-string, length: 1048576}}\n" for i in range(20))
    body = "".join(f"{{{{s{i}}}}}" for i in range(20))
    return (
        f"target: {url}\nscenarios:\n  s:\n    executor: {{type: constant-vus, vus: {vus}, duration: 3s}}\n"
        f"    variables:\n{defs}    flow: [{{request: {{method: POST, path: /health, body: '{body}'}}}}]\n"
    )


def tags_case(url: str, steps: int) -> str:
    """tags_case is a file of 2 VUs over ``steps`` distinctly named steps."""
    flow = "".join(f"      - {{name: t{i}, request: {{path: /health?i={i}}}}}\n" for i in range(steps))
    return (
        f"target: {url}\nscenarios:\n  s:\n    executor: {{type: constant-vus, vus: 2, duration: 5s}}\n"
        f"    flow:\n{flow}"
    )


def main(cases: list[str]) -> None:
    """main runs ``cases`` (all when empty) and prints each one's peak RSS, wall time and exit code."""
    with TargetProcess() as target, tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        texts = {
            "csv1": lambda: csv_case(folder, target.url, 1),
            "csv2": lambda: csv_case(folder, target.url, 2),
            "values-4": lambda: values_case(target.url, 4),
            "values-12": lambda: values_case(target.url, 12),
            "tags-100": lambda: tags_case(target.url, 100),
            "tags-2000": lambda: tags_case(target.url, 2000),
        }
        for case in cases or list(texts):
            path = folder / f"{case}.yaml"
            path.write_text(texts[case]())
            out = subprocess.run(
                [sys.executable, "-c", textwrap.dedent(PROBE), str(path), "--out", str(folder / f"out-{case}")],
                capture_output=True,
                text=True,
                check=True,
                cwd=tmp,
            )
            code, peak, wall = json.loads(out.stdout)
            print(f"{case:<10} peak RSS {peak:7.0f} MiB   {wall:5.1f} s   exit {code}")


if __name__ == "__main__":
    main(sys.argv[1:])
