#!/usr/bin/env python3
"""What watching a run costs, side by side (issue 23's bar: each at most 2 %; docs/benchmarks.md,
"Watching a run"): the same ``surge run URL -r RATE -d D --out DIR`` against the same
reference target, surge pinned to one core and the target (with the receivers and the dashboard's client) to the
other, with nothing watching
it (``plain``: stderr a pipe), with the live view (stderr a pseudo-terminal), with
``--dashboard`` and one client following its event stream, and with ``--export prometheus=``
(a real Prometheus on loopback, when Debian's ``prometheus`` is installed) and ``--export
otlp=`` (a loopback OTLP/HTTP receiver). Per mode, two figures per request sent:

- **engine CPU**: the engine's worker threads' CPU (``generator.thread_busy`` × the run's
  elapsed time, summed over the threads): what the engine spent, which a watcher must not
  raise;
- **process CPU**: the whole surge process's CPU during the run
  (``generator.cpu_us_per_request``): the engine plus the watcher's own thread.

and the **watcher's cost**: the CPU outside the engine's threads (process − engine) above the
plain run's of the same round, as a share of the plain run's engine CPU. The engine's own CPU
per request varies ±15 % between runs of one mode (how many sends a wake-up finds), which no
A/B of whole runs resolves to 2 %; the CPU outside it (the CLI's thread, the watcher's) varies
by a few µs a second, so this difference resolves a watcher's share to a few tenths of a percent.

Each watched run is paired with the plain run of the same round (the modes interleaved, so a
busy moment of a shared machine falls on all); the table gives each mode's median and the
median of its paired ratios to ``plain`` [min–max].

Usage: .venv/bin/python bench/observers.py [--rounds 5] [--duration 4s] [--rate 5000]

It never asserts a figure; it sends only to 127.0.0.1, each run bounded by its duration
(killed after 120 s)."""

from __future__ import annotations

import argparse
import json
import os
import pty
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import IO

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "python"))
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "bench"))

from dashboard import attach  # noqa: E402  # bench/dashboard.py: follows the dashboard's events
from receivers import otlp_receiver, prometheus  # noqa: E402
from surge.engine.target import TargetProcess  # noqa: E402

SURGE_CORE, TARGET_CORE = "1", "0"
"""SURGE_CORE and TARGET_CORE: the cores surge and the target are pinned to (taskset)."""


def _drain(stream: IO[bytes] | int) -> None:
    # Read a pipe or a pseudo-terminal's master to its end so the child never blocks on it.
    def read() -> None:
        try:
            if isinstance(stream, int):
                while os.read(stream, 65536):
                    pass
            else:
                while stream.read(65536):
                    pass
        except OSError:
            pass  # the terminal's other side closed

    threading.Thread(target=read, daemon=True).start()


def measure(args: list[str], terminal: bool, follow_dashboard: bool) -> dict[str, float]:
    """measure runs one ``surge ARGS --out DIR`` pinned to SURGE_CORE to its end: its engine CPU
    and process CPU per request (µs). ``terminal``: stderr a pseudo-terminal (the live view
    draws); ``follow_dashboard``: one client follows the dashboard's event stream."""
    # --out, not --json: --json is for a program reading stdout, and a run with it draws no live
    # view. The figures are the run's own (the engine's window), the report written after it.
    out_dir = Path(tempfile.mkdtemp(prefix="surge-observers-run-"))
    command = ["taskset", "-c", SURGE_CORE, sys.executable, "-m", "surge", *args, "--out", str(out_dir)]
    env = {**os.environ, "COLUMNS": "120", "TERM": "xterm-256color", "SURGE_DB": str(out_dir / "history.db")}
    master = None
    if terminal:
        master, slave = pty.openpty()
        proc = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave)
        os.close(slave)
        _drain(master)
    else:
        proc = subprocess.Popen(
            command,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=follow_dashboard,
        )
        assert proc.stderr is not None
        if follow_dashboard:
            threading.Thread(target=attach, args=(proc.stderr, [0]), daemon=True).start()
        else:
            _drain(proc.stderr)
    bound = threading.Timer(120, proc.kill)  # every run stops by itself
    bound.start()
    if proc.stdout is not None:
        proc.stdout.read()
    proc.wait()
    bound.cancel()
    if master is not None:
        os.close(master)
    if proc.returncode != 0:
        raise SystemExit(f"surge {' '.join(args)} exited {proc.returncode}")
    doc = json.loads((out_dir / "summary.json").read_text())
    shutil.rmtree(out_dir, ignore_errors=True)
    generator, sent = doc["generator"], doc["requests"]["sent"]
    engine_s = sum(generator["thread_busy"]) * float(doc["elapsed_s"])
    process_us = float(generator["cpu_us_per_request"])
    engine_us = engine_s / sent * 1e6
    return {"engine_us": engine_us, "process_us": process_us, "outside_us": process_us - engine_us}


def _line(name: str, runs: list[dict[str, float]], plain: list[dict[str, float]]) -> str:
    cells = []
    for key in ("engine_us", "process_us"):
        values = [r[key] for r in runs]
        cell = f"{statistics.median(values):6.2f} µs"
        if runs is not plain:
            ratios = [r[key] / p[key] for r, p in zip(runs, plain, strict=True)]
            cell += f"  ×{statistics.median(ratios):.3f} [{min(ratios):.3f}–{max(ratios):.3f}]"
        cells.append(f"{cell:<34}")
    if runs is plain:
        cost = "(baseline)"
    else:
        shares = [(r["outside_us"] - p["outside_us"]) / p["engine_us"] * 100 for r, p in zip(runs, plain, strict=True)]
        cost = f"{statistics.median(shares):+.2f} % [{min(shares):+.2f}–{max(shares):+.2f}]"
    return f"| {name:<22} | {cells[0]} | {cells[1]} | {cost:<26} |"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="runs of each mode (default 5)")
    parser.add_argument("--duration", default="4s", help="each run's length (default 4s)")
    parser.add_argument("--rate", default="5000", help="each run's arrival rate (default 5000)")
    args = parser.parse_args(argv)
    if shutil.which("taskset") is None:
        raise SystemExit("taskset (util-linux) is needed to pin surge and the target")
    # This process (the OTLP receiver, the dashboard's client) and what it starts (the target,
    # Prometheus) keep to the target's core: the surge core runs surge alone.
    os.sched_setaffinity(0, {int(TARGET_CORE)})
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="surge-observers-")))
        target = stack.enter_context(TargetProcess())
        receiver = stack.enter_context(otlp_receiver())
        otlp = f"http://127.0.0.1:{receiver.server_address[1]}/v1/metrics"
        prom = stack.enter_context(prometheus(tmp))
        run = ["run", f"{target.url}/health", "-r", args.rate, "-d", args.duration, "--threads", "1"]
        modes: dict[str, Callable[[], dict[str, float]]] = {
            "plain": lambda: measure(run, terminal=False, follow_dashboard=False),
            "live view": lambda: measure(run, terminal=True, follow_dashboard=False),
            "dashboard + 1 client": lambda: measure(
                [*run, "--dashboard", "127.0.0.1:0"], terminal=False, follow_dashboard=True
            ),
            "export otlp": lambda: measure([*run, "--export", f"otlp={otlp}"], terminal=False, follow_dashboard=False),
        }
        if prom is not None:
            modes["export prometheus"] = lambda: measure(
                [*run, "--export", f"prometheus={prom}/api/v1/write"], terminal=False, follow_dashboard=False
            )
        print(f"surge {' '.join(run[:1] + run[2:])} on core {SURGE_CORE}, the target on core {TARGET_CORE}; ")
        print(f"{args.rounds} rounds, modes interleaved" + ("" if prom else "; no prometheus binary: its mode skipped"))
        results: dict[str, list[dict[str, float]]] = {name: [] for name in modes}
        for _ in range(args.rounds):
            for name, run_mode in modes.items():
                results[name].append(run_mode())
        print("| mode | engine CPU per request (× plain) | process CPU per request (× plain) | watcher's cost |")
        print("|---|---|---|---|")
        for name, runs in results.items():
            print(_line(name, runs, results["plain"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
