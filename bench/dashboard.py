#!/usr/bin/env python3
"""What the live dashboard costs the run (docs/benchmarks.md, "Dashboard"; issue 23's bar: at
most 2 %): ``surge run URL/health -d 10s -r 2000 --no-save --json`` against the reference
target, without and with ``--dashboard 127.0.0.1:0`` and one client attached to its event stream
for the whole run (a reader that takes every event, as the page does: the server's work, which
is what runs in surge's process, is the same; the browser's drawing runs in the browser's).
Per run: the engine's CPU per request as the run reports it (``generator.cpu_us_per_request``:
the surge process's CPU over the load window, every thread, the dashboard's server included),
and the child's whole CPU (its rusage once reaped, start-up and the page's renderers included)
per request. Medians of ``--rounds`` runs of each mode, interleaved, [min–max].

Then what the dashboard does per interval, apart from the engine's noise: one real interval
document (from a 1 s run) replayed as the intervals of a one-hour run into a listening
dashboard's sink, the calling thread's CPU per interval (``time.thread_time``) at the start,
the middle and the end of the hour, and the size of the event each interval sends: it must not
grow with the run.

Usage: .venv/bin/python bench/dashboard.py [--rounds 5] [--duration 10s] [--rate 2000] [--replay-only]

It never asserts a time; it sends only to the reference target on 127.0.0.1, each run bounded
by its duration (and killed after 120 s); the dashboard listens on a free loopback port.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import IO, Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "python"))

from saving import summary  # noqa: E402  # bench/saving.py: median [min–max]
from surge.engine.target import TargetProcess  # noqa: E402

MODES = {"without": [], "dashboard + 1 client": ["--dashboard", "127.0.0.1:0"]}
"""MODES: each mode's extra flags of ``surge run``."""


REPLAYS = {"no thresholds": (), "thresholds p(95) and failure_rate": ("p(95) < 50ms", "failure_rate < 1%")}
"""REPLAYS: the replay's runs: without thresholds, and with two judged live (a percentile merges
each interval's histogram)."""


def attach(stderr: IO[str], events: list[int]) -> None:
    """attach reads the child's stderr until the dashboard's address, then follows its event
    stream to the end, counting the events in ``events``; the rest of stderr is drained."""
    for line in stderr:
        found = re.search(r"dashboard at (http://\S+/)", line)
        if found:
            threading.Thread(target=_follow, args=(found.group(1), events), daemon=True).start()
    stderr.close()


def _follow(url: str, events: list[int]) -> None:
    try:
        with urllib.request.urlopen(url + "events", timeout=120) as stream:
            for line in stream:
                if line.startswith(b"data: "):
                    events[0] += 1
    except OSError:
        pass  # the server stops when the command ends


def measure(args: list[str], env: dict[str, str], cwd: Path) -> dict[str, float]:
    """measure runs one child to its end: its reported engine CPU per request (µs), its whole
    CPU per request (µs, rusage), its requests and the dashboard events read."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "surge", *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    events = [0]
    reader = threading.Thread(target=attach, args=(proc.stderr, events), daemon=True)
    reader.start()
    bound = threading.Timer(120, proc.kill)  # every run stops by itself
    bound.start()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = proc.stdout.read() if proc.stdout else ""
    proc.wait()
    bound.cancel()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the child's, once reaped
    reader.join(timeout=5)
    if proc.returncode != 0:
        raise SystemExit(f"surge {' '.join(args)} exited {proc.returncode}")
    doc = json.loads(out)
    sent = doc["requests"]["sent"]
    return {
        "engine_us": float(doc["generator"]["cpu_us_per_request"]),
        "process_us": (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) / sent * 1e6,
        "sent": sent,
        "events": events[0],
    }


def replay(url: str) -> None:
    """replay prints the dashboard's CPU per interval and event size over a one-hour run's
    intervals, replayed from one real interval of a 1 s run against ``url``."""
    # In-process: the engine, the session and the dashboard as `surge run --dashboard` runs them.
    from surge.plan.thresholds import parse_threshold
    from surge.run.dashboard import Dashboard
    from surge.run.session import RunOptions, run_test
    from surge.run.spec import TestSpec

    class Keep:
        def __init__(self) -> None:
            self.intervals: list[dict[str, Any]] = []

        def start(self, planned_s: float) -> None:
            pass

        def on_phase(self, name: str, result: Any) -> None:
            pass

        def on_interval(self, interval: Any) -> None:
            self.intervals.append(dict(interval))

        def finish(self) -> None:
            pass

    keep = Keep()
    run_test(TestSpec(url, rate=1000, duration="1s"), RunOptions(save=False), stderr=sys.stderr, sinks=[keep])
    one = keep.intervals[0]
    for label, thresholds in REPLAYS.items():
        dashboard = Dashboard.listen("127.0.0.1", 0)
        try:
            with dashboard.stream() as stream:  # one client, reading once at the end
                sink = dashboard.run_sink("replay", [parse_threshold(t) for t in thresholds])
                sink.start(3600.0)
                spent: list[float] = []
                for i in range(3600):
                    interval = {**one, "index": i, "start_s": float(i), "end_s": float(i + 1)}
                    started = time.thread_time()
                    sink.on_interval(interval)
                    spent.append(time.thread_time() - started)
                sizes = [len(e) for e in stream.next(0)[0]]
        finally:
            dashboard.close()
        print(f"\ndashboard work per interval (a one-hour run replayed, no engine), {label}:")
        for start in (0, 1800, 3540):
            window = spent[start : start + 60]
            print(
                f"  intervals {start + 1}-{start + 60}: CPU {statistics.median(window) * 1e3:.3f} ms median, "
                f"{max(window) * 1e3:.3f} ms max; event {statistics.median(sizes[start + 1 : start + 61]):,.0f} bytes"
            )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="runs of each mode (default 5)")
    parser.add_argument("--duration", default="10s", help="each run's -d (default 10s)")
    parser.add_argument("--rate", default="2000", help="each run's -r, requests per second (default 2000)")
    parser.add_argument("--replay-only", action="store_true", help="only the per-interval replay")
    args = parser.parse_args(argv)
    results: dict[str, list[dict[str, float]]] = {mode: [] for mode in MODES}
    if args.replay_only:
        with TargetProcess() as target:
            replay(f"{target.url}/health")
        return 0
    with tempfile.TemporaryDirectory(prefix="surge-dashboard-") as tmp, TargetProcess() as target:
        cwd = Path(tmp)
        env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
        run = ["run", f"{target.url}/health", "-d", args.duration, "-r", args.rate, "--no-save", "--json"]
        print(f"surge {' '.join(run)} (against the reference target), {args.rounds} rounds, modes interleaved")
        for i in range(args.rounds):
            for mode, flags in MODES.items():
                m = measure([*run, *flags], env, cwd)
                results[mode].append(m)
                print(
                    f"  round {i + 1} {mode:>20}: engine {m['engine_us']:.2f} µs/request · process "
                    f"{m['process_us']:.2f} µs/request · {m['sent']:,.0f} sent · {m['events']:.0f} events read"
                )
    base = statistics.median(r["engine_us"] for r in results["without"])
    print()
    print("| mode | engine CPU µs/request | process CPU µs/request | engine CPU vs without |")
    print("| --- | --- | --- | --- |")
    for mode, runs in results.items():
        engine = [r["engine_us"] for r in runs]
        process = [r["process_us"] for r in runs]
        change = statistics.median(engine) / base - 1
        print(f"| {mode} | {summary(engine, '.2f')} | {summary(process, '.2f')} | {change:+.1%} |")
    print("\nbar (issue 23): the dashboard with one client costs at most 2 % engine CPU per request")
    with TargetProcess() as target:
        replay(f"{target.url}/health")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
