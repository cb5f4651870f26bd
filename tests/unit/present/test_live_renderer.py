"""The live view's renderer (surge.present.terminal.live), drawn on a recording console: the
phase line through setup, main and teardown, each scenario's executor, load, iterations and
bar, the current figures, each threshold judged on the figures so far (or left to the end),
and an experiment's progress and time left. No engine: the intervals are written here."""

from __future__ import annotations

import io
from typing import Any

from hdrh.histogram import HdrHistogram
from rich.console import Console

from surge.present.terminal.live import HISTOGRAM_RANGE, ExperimentProgress, FinishedRun, LiveRun, percentiles_us
from surge.scenario import loads

FILE = """\
target: http://127.0.0.1:9
setup:
  executor: {type: shared-iterations, vus: 1, iterations: 5}
  flow: [{name: make, request: {method: POST, path: /tasks}}]
scenarios:
  readers:
    executor: {type: constant-vus, vus: 10, duration: 10s}
    flow: [{name: read, request: {path: /health}}]
  writers:
    executor: {type: shared-iterations, vus: 2, iterations: 100}
    flow: [{name: write, request: {method: POST, path: /tasks}}]
teardown:
  executor: {type: shared-iterations, vus: 1, iterations: 5}
  flow: [{name: clean, request: {path: /health}}]
thresholds:
  - {expr: "p(95) < 50ms"}
  - {expr: "failure_rate < 1%"}
  - {expr: "rate > 500"}
  - {expr: "checks > 0.99"}
  - {expr: "p(99) < 1s", scenario: readers}
"""


class Clock:
    """Clock is a monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def interval(index: int, latency_us: int, *, failed: int = 0, writers_done: int = 20) -> dict[str, Any]:
    """interval is one second of 1,000 responses of ``latency_us`` each, ``failed`` of them failed."""
    h = HdrHistogram(*HISTOGRAM_RANGE)
    h.record_value(latency_us, 1000)
    return {
        "index": index,
        "start_s": float(index),
        "end_s": float(index + 1),
        "requests": {"responses": 1000, "succeeded": 1000 - failed, "failed": failed, "late": 3, "dropped": 0},
        "latency": {"all": {"p95_ms": latency_us / 1000}, "send_lag": {"p95_ms": 0.25}},
        "responses_per_s": 1000.0,
        "in_flight": 7,
        "latency_histogram": h.encode().decode(),
        "scenarios": [
            {
                "name": "readers",
                "active_vus": 10,
                "responses_per_s": 980.0,
                "iterations": {"iterations_completed": 980},
            },
            {
                "name": "writers",
                "active_vus": 2,
                "responses_per_s": 20.0,
                "iterations": {"iterations_completed": writers_done},
            },
        ],
    }


def drawn(live: LiveRun) -> str:
    console = Console(record=True, file=io.StringIO(), width=120, force_terminal=True, color_system="truecolor")
    console.print(live.render())
    return console.export_text()


def live_run(clock: Clock, experiment: ExperimentProgress | None = None) -> LiveRun:
    compiled = loads(FILE, source="t.yaml", base_dir=".", env={}).compile(env={})
    live = LiveRun.of(compiled, compiled.main.planned_s(), experiment)
    live.clock = clock
    live.phase(live.current)  # restart the phase on the test's clock
    return live


def test_setup_shows_only_the_phase_and_no_main_time_left():
    clock = Clock()
    live = live_run(clock)
    clock.now += 0.25
    text = drawn(live)
    assert text.splitlines()[0].split() == [
        "setup",
        "main",
        "teardown",
        "setup:",
        "250ms",
        "(not",
        "in",
        "the",
        "measured",
        "results)",
    ]
    assert "left" not in text and "readers" not in text


def test_main_shows_scenarios_figures_and_thresholds_judged_so_far():
    clock = Clock()
    live = live_run(clock)
    live.ended("setup")
    for i in range(2):
        live.add(interval(i, 10_000, failed=10 * i, writers_done=20))
    clock.now += 5.0
    lines = drawn(live).splitlines()
    assert "main" in lines[0] and "5s elapsed · 5s left" in lines[0]
    readers = lines[1].split()
    assert readers[:4] == ["readers", "constant-vus", "10", "VUs"] and "1,960 iterations" in lines[1]
    assert "━" in lines[1] and lines[1].endswith(" 50%"), "5 s of its 10 s"
    assert lines[2].split()[:4] == ["writers", "shared-iterations", "2", "VUs"] and lines[2].endswith(" 40%"), (
        "40 of 100"
    )
    assert lines[3] == "1,000.0 req/s · p95 10.000 ms · failures 0.500% · send lag p95 0.250 ms · late 6 · 7 in flight"
    assert lines[4].startswith("  ✓ p(95) < 50ms [all]: 10.0") and lines[4].endswith("→ pass")
    assert lines[5] == "  ✓ failure_rate < 1% [all]: 0.500% → pass"
    assert lines[6] == "  ✓ rate > 500 [all]: 1,000.0/s → pass"
    assert lines[7] == "  · checks > 0.99 [all]: no data yet"
    assert lines[8] == "  · p(99) < 1s [scenario 'readers']: judged at the end"


def test_a_threshold_failing_so_far_is_red():
    clock = Clock()
    live = live_run(clock)
    live.ended("setup")
    live.add(interval(0, 80_000, failed=50))
    verdicts = live.verdicts()
    assert [v.status if v else None for v in verdicts] == ["fail", "fail", "pass", "no-data", None]
    console = Console(record=True, file=io.StringIO(), width=120, force_terminal=True, color_system="truecolor")
    console.print(live.render())
    html = console.export_html(inline_styles=True)
    assert '<span style="color: #800000; text-decoration-color: #800000">  ✗ p(95) &lt; 50ms [all]: 80.0' in html
    assert '<span style="color: #008000; text-decoration-color: #008000">  ✓ rate &gt; 500 [all]: 1,000.0/s' in html


def test_the_engine_totals_judge_the_thresholds_when_the_run_has_them():
    clock = Clock()
    live = live_run(clock)
    live.ended("setup")
    totals = {"duration_s": 1.0, "requests": {"succeeded": 10, "failed": 0}, "latency": {}, "scenarios": [], "tags": []}
    totals["checks"] = [{"passes": 99, "fails": 1}]
    live.add({**interval(0, 10_000), "totals": totals})
    text = drawn(live)
    assert "checks > 0.99 [all]: 99%" in text, text


def test_teardown_then_done():
    clock = Clock()
    live = live_run(clock)
    live.ended("setup")
    live.add(interval(0, 10_000))
    live.ended("main")
    clock.now += 1.5
    assert "teardown: 1.5s (not in the measured results)" in drawn(live).splitlines()[0]
    live.ended("teardown")
    assert live.current == "done"


def test_an_experiment_shows_its_run_progress_time_left_and_runs_done():
    clock = Clock()
    finished = (FinishedRun("rate=100", 100.0, 1.5, "passed"), FinishedRun("rate=200", 199.0, 80.0, "failed"))
    experiment = ExperimentProgress("sweep", "level rate=400", 3, (10.0, 10.0, 10.0, 10.0), finished)
    live = live_run(clock, experiment)
    live.ended("setup")
    clock.now += 4.0
    lines = drawn(live).splitlines()
    assert "sweep · level rate=400 · run 3/4 · 60.000% · 16s left" in lines
    assert "  done rate=100: 100.0 req/s · p95 1.500 ms · passed" in lines
    assert "  done rate=200: 199.0 req/s · p95 80.000 ms · failed" in lines
    unknown = ExperimentProgress("capacity", "step 2", 2)
    assert unknown.left_s(1.0) is None


def test_percentiles_in_one_pass_equal_hdrhistograms_own():
    h = HdrHistogram(*HISTOGRAM_RANGE)
    for value, count in ((80, 500), (1_234, 300), (56_789, 150), (2_500_000, 49), (3_000_000_000, 1)):
        h.record_value(value, count)
    quantiles = [0.1, 50.0, 90.0, 95.0, 99.0, 99.9, 99.95, 100.0]
    assert percentiles_us(h, quantiles) == {q: float(h.get_value_at_percentile(q)) for q in quantiles}
