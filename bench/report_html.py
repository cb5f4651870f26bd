#!/usr/bin/env python3
"""report.html's benchmark (docs/benchmarks.md, "report.html"): a synthetic run of one minute
and one of one hour (60 and 3,600 one-second intervals, nothing downsampled), rendered with
render_run_html: the render time, the file's size, and the time to open it in headless Chromium.

Usage: .venv/bin/python bench/report_html.py [--repeat 5] [--keep DIR]

The run is tests/fixtures/report_html/run-scenario's record (a real run: its summary, its
histograms, 1 scenario, 3 tags, checks, thresholds, findings) with its time series replaced by
N intervals of varying figures (an ``all`` row and a scenario row each, as a surge run writes
them), so the report holds every chart. Opening: Chromium (--headless=new, network off) loads
the page from file:// with --dump-dom; a script appended after report.js stamps
``performance.now()`` on <html> once every chart is drawn (time from navigation start to the
charts drawn, in the page), and the process's wall time is given too (browser start-up
included). Medians of --repeat, [min–max]. It never asserts a time.
"""

from __future__ import annotations

import argparse
import math
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "python"))
sys.path.insert(0, str(REPO / "tests"))

from browser import CHROMIUM_FLAGS, chromium  # noqa: E402
from surge.present.html.run_page import render_run_html  # noqa: E402
from surge.record.stored import StoredRun  # noqa: E402
from surge.record.timeseries import COLUMNS  # noqa: E402

FIXTURE = REPO / "tests" / "fixtures" / "report_html" / "run-scenario"
FLAGS = tuple(f for f in CHROMIUM_FLAGS if not f.startswith("--virtual-time-budget"))
"""FLAGS: the tests' flags without virtual time, so that performance.now() is wall time (the
charts are drawn by synchronous scripts, before the load event --dump-dom waits for)."""
STAMP = "<script>document.documentElement.setAttribute('data-ready-ms', String(performance.now()));</script></body>"


def synthetic_run(intervals: int, seed: int = 1) -> StoredRun:
    """synthetic_run is the fixture run with ``intervals`` one-second rows of plausible figures."""
    run = StoredRun.from_directory(FIXTURE)
    rng = random.Random(seed)
    lines = []
    for i in range(1, intervals + 1):
        vus = 200 + 150 * math.sin(i / 300)
        rate = 20000 + 3000 * math.sin(i / 120) + rng.gauss(0, 500)
        failed = rng.choice([0, 0, 0, rng.randint(1, 40)])
        p50 = 10 + 5 * math.sin(i / 200) + rng.random()
        row = {c: "" for c in COLUMNS}
        row.update(
            time_s=f"{i:.1f}",
            scenario="all",
            active_vus=f"{vus:.0f}",
            sent_per_s=f"{rate + 30:.1f}",
            responses_per_s=f"{rate:.1f}",
            successes=f"{rate - failed:.0f}",
            failures=str(failed),
            failed_status=str(failed // 2),
            failed_request_timeout=str(failed - failed // 2),
            interrupted="0",
            shed=str(rng.choice([0, 0, 5])),
            p50_ms=f"{p50:.3f}",
            p90_ms=f"{p50 * 1.8:.3f}",
            p95_ms=f"{p50 * 2.1:.3f}",
            p99_ms=f"{p50 * 3.0:.3f}",
            max_ms=f"{p50 * 5.5:.3f}",
            in_flight=f"{vus:.0f}",
            open_connections=f"{vus:.0f}",
            cpu_cores="0.9",
        )
        lines.append(",".join(row[c] for c in COLUMNS))
        lines.append(
            ",".join(
                f"{i:.1f}"
                if c == "time_s"
                else "read_heavy"
                if c == "scenario"
                else row[c]
                if c in ("active_vus", "responses_per_s")
                else ""
                for c in COLUMNS
            )
        )
    run.timeseries = "\n".join(lines) + "\n"
    return run


def _median(values: list[float]) -> str:
    return f"{statistics.median(values):,.1f} [{min(values):,.1f}–{max(values):,.1f}]"


def measure(intervals: int, repeat: int, workdir: Path) -> None:
    """measure renders the run ``repeat`` times and opens the file ``repeat`` times, printing one line."""
    run = synthetic_run(intervals)
    renders, html = [], ""
    for _ in range(repeat):
        start = time.perf_counter()
        html = render_run_html(run)
        renders.append((time.perf_counter() - start) * 1000)
    page = workdir / f"report-{intervals}.html"
    page.write_text(html, encoding="utf-8")
    timed = workdir / f"timed-{intervals}.html"
    timed.write_text(html.replace("</body>", STAMP, 1), encoding="utf-8")
    ready, walls = [], []
    for k in range(repeat):
        start = time.perf_counter()
        dom = subprocess.run(
            [chromium(), *FLAGS, f"--user-data-dir={workdir / f'profile-{k}'}", "--dump-dom", timed.as_uri()],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        ).stdout
        walls.append((time.perf_counter() - start) * 1000)
        found = re.search(r'data-ready-ms="([0-9.]+)"', dom)
        drawn = len(re.findall(r'data-drawn="1"', dom))
        if found is None or drawn != 5:
            raise SystemExit(f"{intervals} intervals: the page did not draw its 5 charts ({drawn} drawn)")
        ready.append(float(found.group(1)))
    size = page.stat().st_size
    print(
        f"{intervals:>5} intervals: {size / 1e6:,.3f} MB ({size:,} bytes) · render {_median(renders)} ms · "
        f"charts drawn {_median(ready)} ms after navigation · chromium --dump-dom wall {_median(walls)} ms",
        flush=True,
    )


def main() -> None:
    """main measures a one-minute and a one-hour run's report.html."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="write the reports to this directory and keep them")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="surge-bench-report-") as scratch:
        workdir = args.keep or Path(scratch)
        workdir.mkdir(parents=True, exist_ok=True)
        for intervals in (60, 3600):
            measure(intervals, args.repeat, workdir)


if __name__ == "__main__":
    main()
