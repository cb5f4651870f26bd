#!/usr/bin/env python3
"""The run history's benchmark (docs/benchmarks.md, "History"): recording a one-hour run's
intervals into a fresh database, and listing a history of 10,000 runs.

Usage: .venv/bin/python bench/history.py [--intervals 3600] [--runs 10000] [--repeat 5]

1. record: ``begin``, one committed transaction per interval (3,600: one hour at 1 s), ``finish``,
   each interval as a surge run records it: its timeseries.csv rows (the ``all`` row and 3
   scenarios) and its latency.hlog line (a V2-compressed histogram of ~5,000 log-normal
   latencies, about 1.5 KB, as the engine sends), through the same History the runs use.
2. list: a fresh database filled with 10,000 finished runs (a summary document of ~25 KB each:
   60 intervals, full histograms; 3 tags each), then ``surge history --limit 20`` and a
   filtered ``surge history --name api-7 --tag arch=scale-out --since 30d`` as processes (start-up
   included) and the same queries in-process. Medians of ``--repeat`` runs, [min–max].

It never asserts a time; nothing is sent over the network. Files go to a temporary directory,
removed at the end.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "python"))

from hdrh.histogram import HdrHistogram  # noqa: E402

from surge.history import History, RunQuery, list_runs  # noqa: E402
from surge.history.queries import parse_since  # noqa: E402
from surge.record.hlog import interval_line  # noqa: E402
from surge.record.timeseries import csv_text, interval_rows  # noqa: E402
from surge.record.writer import iso_utc  # noqa: E402

SCENARIOS = ("browse", "search", "checkout")
DISTINCT_HISTOGRAMS = 100  # encoded once, cycled: encoding is the engine's work, not the history's


def histogram(rng: random.Random, samples: int = 5000) -> tuple[str, float]:
    """histogram is a V2-compressed histogram of log-normal latencies (µs) and its max in ms."""
    h = HdrHistogram(1, 3_600_000_000, 3)
    for _ in range(samples):
        h.record_value(max(1, int(rng.lognormvariate(7.5, 0.6))))
    return h.encode().decode(), h.get_max_value() / 1000


def interval(index: int, hist: tuple[str, float], rng: random.Random) -> dict[str, Any]:
    """interval is an engine interval as ``on_interval`` receives it."""
    latency = {f"{p}_ms": round(rng.uniform(1, 5) * k, 3) for p, k in (("p50", 1), ("p90", 2), ("p95", 3), ("p99", 5))}
    return {
        "index": index,
        "start_s": float(index),
        "end_s": float(index + 1),
        "requests": {"succeeded": 5000, "failed": rng.randint(0, 5), "shed": 0},
        "latency": {"all": {**latency, "max_ms": hist[1]}},
        "sent_per_s": 5000.0,
        "responses_per_s": 4998.0,
        "target_rate_per_s": 5000.0,
        "in_flight": rng.randint(0, 40),
        "open_connections": 64,
        "latency_histogram": hist[0],
        "scenarios": [{"name": s, "active_vus": 20, "responses_per_s": 1666.0} for s in SCENARIOS],
    }


def meta(name: str, started: datetime, tags: dict[str, str]) -> dict[str, Any]:
    return {
        "schema": "surge.record/1",
        "run_id": uuid.uuid4().hex,
        "name": name,
        "started_at": iso_utc(started.timestamp()),
        "ended_at": None,
        "target": "http://127.0.0.1:8080/api",
        "complete": False,
        "tags": tags,
        "command": "surge run bench.yaml",
        "plan": {"description": "bench", "open_model": True},
    }


def bench_record(db: Path, intervals: int, hists: list[tuple[str, float]]) -> dict[str, float]:
    rng = random.Random(1)
    shaped = [interval(i, hists[i % len(hists)], rng) for i in range(intervals)]
    history = History(db)
    m = meta("one-hour", datetime.now(UTC), {"arch": "scale-out"})
    start = time.perf_counter()
    history.begin(m, directory=None, inputs_name="scenario.yaml", inputs="scenarios: {}\n")
    for i in shaped:
        history.add_interval(
            m["run_id"],
            i["index"],
            i["end_s"],
            timeseries=csv_text(interval_rows(i)),
            hlog=interval_line(i),
            hlog_start_unix_s=time.time(),
        )
    history.finish(
        {
            "requests": {"sent": 5000 * intervals, "success_rate": 1.0, "failure_rate": 0.0},
            "throughput": {"responses_per_s": 4998.0},
            "latency": {"all": {"p50_ms": 2.0, "p95_ms": 6.0, "p99_ms": 10.0}},
            "meta": {**m, "complete": True, "ended_at": m["started_at"]},
        }
    )
    seconds = time.perf_counter() - start
    history.close()
    return {
        "intervals": intervals,
        "seconds": seconds,
        "ms_per_interval": seconds / intervals * 1000,
        "db_mb": sum(p.stat().st_size for p in db.parent.glob(db.name + "*")) / 1e6,
    }


def summary_document(m: dict[str, Any], hists: list[tuple[str, float]], rng: random.Random) -> dict[str, Any]:
    """summary_document is a finished minute-long run's summary (~25 KB)."""
    shaped = [interval(i, hists[i % len(hists)], rng) for i in range(60)]
    for i in shaped:
        i.pop("latency_histogram")
    return {
        "requests": {"sent": 300_000, "success_rate": 1.0, "failure_rate": 0.0},
        "throughput": {"responses_per_s": rng.uniform(4000, 6000)},
        "latency": {"all": {"p50_ms": rng.uniform(1, 3), "p95_ms": rng.uniform(5, 9), "p99_ms": rng.uniform(9, 20)}},
        "histograms": {"all": hists[0][0], "success": hists[1][0]},
        "intervals": shaped,
        "meta": {**m, "complete": True, "ended_at": m["started_at"]},
    }


def fill(db: Path, runs: int, hists: list[tuple[str, float]]) -> float:
    rng = random.Random(2)
    history = History(db)
    now = datetime.now(UTC)
    start = time.perf_counter()
    for n in range(runs):
        m = meta(
            f"api-{n % 50}",
            now - timedelta(minutes=10 * (runs - n)),
            {"arch": rng.choice(["scale-out", "single"]), "build": f"b{n % 200}", "storage": rng.choice("abc")},
        )
        history.begin(m, directory=f"results/run-{n}", inputs_name="command.txt", inputs="surge run x\n")
        history.finish(summary_document(m, hists, rng))
    seconds = time.perf_counter() - start
    history.close()
    return seconds


def timed(action: Any, repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return times


def show(label: str, times: list[float]) -> None:
    print(f"  {label:<72} {statistics.median(times) * 1000:8.1f} ms  [{min(times) * 1000:.1f}–{max(times) * 1000:.1f}]")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--intervals", type=int, default=3600)
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rng = random.Random(0)
    hists = [histogram(rng) for _ in range(DISTINCT_HISTOGRAMS)]
    print(
        f"history bench: {os.cpu_count()} cores, SQLite {__import__('sqlite3').sqlite_version}, "
        f"histograms ~{statistics.mean(len(h[0]) for h in hists):.0f} B"
    )
    with tempfile.TemporaryDirectory(prefix="surge-bench-history-") as tmp:
        rec = bench_record(Path(tmp) / "record.db", args.intervals, hists)
        print(
            f"record: {rec['intervals']:,} intervals in {rec['seconds']:.2f} s "
            f"({rec['ms_per_interval']:.2f} ms per interval, one commit each); database {rec['db_mb']:.1f} MB"
        )
        db = Path(tmp) / "list.db"
        filled = fill(db, args.runs, hists)
        size = sum(p.stat().st_size for p in db.parent.glob(db.name + "*")) / 1e6
        print(f"list: {args.runs:,} runs recorded (begin + finish each) in {filled:.1f} s; database {size:.0f} MB")
        env = {**os.environ, "SURGE_DB": str(db), "PYTHONPATH": str(REPO / "python")}
        filtered = ["--name", "api-7", "--tag", "arch=scale-out", "--since", "30d"]
        for label, extra in (("surge history --limit 20", []), ("surge history " + " ".join(filtered), filtered)):
            show(
                label + " (process)",
                timed(
                    lambda extra=extra: subprocess.run(
                        [sys.executable, "-m", "surge", "history", "--limit", "20", *extra],
                        env=env,
                        check=True,
                        stdout=subprocess.DEVNULL,
                    ),
                    args.repeat,
                ),
            )
        with History(db) as history:
            query = RunQuery(name="api-7", tags=(("arch", "scale-out"),), since=parse_since("30d"))
            show("list_runs(RunQuery()) (in-process)", timed(lambda: list_runs(history, RunQuery()), args.repeat))
            show("list_runs(name, tag, since) (in-process)", timed(lambda: list_runs(history, query), args.repeat))
            show(
                "python -c 'import surge.cli' (start-up, for reference)",
                timed(
                    lambda: subprocess.run([sys.executable, "-c", "import surge.cli"], env=env, check=True), args.repeat
                ),
            )


if __name__ == "__main__":
    main()
