#!/usr/bin/env python3
"""What saving a run costs (docs/benchmarks.md, "Saving"): ``surge run URL -d 1s`` against the
reference target, by default (results directory, history and reports) and with ``--no-save``,
side by side: the child's CPU (user + system, ``os.wait4``'s rusage: the engine's threads
included), its peak RSS (``ru_maxrss``) and its wall time; medians of ``--rounds`` runs of
each, [min–max], the modes interleaved so that a busy moment of a shared machine falls on all.

A third mode, ``record only``, saves the record (directory and history) without writing the
reports: surge's own ``run`` with the session's report writer replaced by a no-op in the child,
so the cost of the record and the cost of the reports read apart.

Usage: .venv/bin/python bench/saving.py [--rounds 7] [--duration 1s] [--rate 500]

The run is open-model (``-r``): the engine does the same work in every mode, so what differs is
what saving costs (a closed-model run's CPU varies with how fast the target answers).

It never asserts a time; it sends only to the reference target on 127.0.0.1, each run bounded
by its duration (and killed after 60 s). Results, histories and output go to a temporary
directory, removed at the end.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "python"))

from surge.engine.target import TargetProcess  # noqa: E402

RECORD_ONLY = """\
import sys
import surge.run.session as session
session.write_reports = lambda recorder, stderr: None  # the record without its reports
from surge.cli import main
main(sys.argv[1:])
"""
"""RECORD_ONLY runs ``surge ARGS`` with the run session's report writer a no-op."""

MODES = {
    "--no-save": (["-m", "surge"], ["--no-save"]),
    "record only": (["-c", RECORD_ONLY], []),
    "default": (["-m", "surge"], []),
}
"""MODES: each mode's interpreter arguments and the extra flags of its ``surge run``."""


def measure(python_args: list[str], args: list[str], env: dict[str, str], cwd: Path) -> dict[str, float]:
    """measure runs one child to its end and returns its CPU seconds, peak RSS (MB), wall seconds
    and exit code, from its own rusage."""
    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, *python_args, *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = started + 60
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() > deadline:
            proc.kill()
            pid, status, usage = os.wait4(proc.pid, 0)
            break
        time.sleep(0.01)
    wall = time.monotonic() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    stderr = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.returncode != 0:
        raise SystemExit(f"surge {' '.join(args)} exited {proc.returncode}: {stderr.strip()[-500:]}")
    return {
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "rss_mb": usage.ru_maxrss / 1024,  # KiB on Linux
        "wall_s": wall,
    }


def summary(values: list[float], form: str) -> str:
    """summary is ``median [min–max]``."""
    return f"{format(statistics.median(values), form)} [{format(min(values), form)}–{format(max(values), form)}]"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="runs of each mode (default 7)")
    parser.add_argument("--duration", default="1s", help="each run's -d (default 1s)")
    parser.add_argument("--rate", default="500", help="each run's -r, requests per second (default 500)")
    args = parser.parse_args(argv)
    results: dict[str, list[dict[str, float]]] = {mode: [] for mode in MODES}
    with tempfile.TemporaryDirectory(prefix="surge-saving-") as tmp, TargetProcess() as target:
        cwd = Path(tmp)
        env = dict(os.environ, SURGE_DB=str(cwd / "history.db"), PYTHONPATH=str(REPO / "python"))
        run = ["run", f"{target.url}/health", "-d", args.duration, "-r", args.rate]
        print(f"surge {' '.join(run)} (against the reference target), {args.rounds} rounds, modes interleaved")
        for python_args, flags in MODES.values():  # one unmeasured run each: caches, the history's creation
            measure(python_args, [*run, *flags], env, cwd)
        for i in range(args.rounds):
            for mode, (python_args, flags) in MODES.items():
                m = measure(python_args, [*run, *flags], env, cwd)
                results[mode].append(m)
                print(
                    f"  round {i + 1} {mode:>12}: cpu {m['cpu_s']:.3f} s · peak RSS {m['rss_mb']:.1f} MB · "
                    f"wall {m['wall_s']:.2f} s"
                )
    base = results["--no-save"]
    print()
    print("| mode | CPU (user+sys) s | peak RSS MB | wall s | CPU − --no-save | RSS − --no-save |")
    print("| --- | --- | --- | --- | --- | --- |")
    for mode, runs in results.items():
        cpu, rss, wall = ([r[k] for r in runs] for k in ("cpu_s", "rss_mb", "wall_s"))
        extra_cpu = statistics.median(cpu) - statistics.median([r["cpu_s"] for r in base])
        extra_rss = statistics.median(rss) - statistics.median([r["rss_mb"] for r in base])
        print(
            f"| {mode} | {summary(cpu, '.3f')} | {summary(rss, '.1f')} | {summary(wall, '.2f')} | "
            f"{extra_cpu:+.3f} | {extra_rss:+.1f} |"
        )
    print("\nbar (issue 21): a saved run costs at most +0.15 s CPU and +10 MB peak RSS over --no-save")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
