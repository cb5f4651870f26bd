"""Reports that lead with the answer (issue 19, item 6), in report.md and report.html alike: the
verdict first (thresholds with pass/fail and observed values, the exit code's meaning, the
headline figures; an experiment's answer), threshold lines on the charts they bound, charts drawn
right (no load profile ramping to 0 after the load stopped, a partial last interval left out,
throughput axes from 0, every scenario's load profile, sweep ticks at the levels run, rates as
steps over their interval, zone colours that match the legend), the per-stage table, the
generator's and the watched target's resource use, Limitations in both formats, and no Python
repr on any page (``no_python_repr``, which the other report tests apply to every page they
render too)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import write
from report_pages import (
    _sections,
    no_python_repr,
    page_text,
    parse_tables,
    recorded,
    row,
    same,
)
from surge.present.html.run_page import render_run_html, run_charts
from surge.record.stored import StoredRun


@pytest.fixture(scope="module")
def constant(target, tmp_path_factory) -> Path:
    """constant is the record of a constant 16-VU run (a URL run)."""
    return recorded(tmp_path_factory.mktemp("constant"), f"{target.url}/health", "-c", "16", "-d", "2s")


def test_a_run_that_failed_two_of_three_thresholds_says_so_first(watched):
    summary = json.loads((watched / "summary.json").read_text())
    text = (watched / "report.md").read_text()
    no_python_repr(text)
    assert _sections(text)[0] == "Verdict"
    verdict = text.split("## ", 2)[1]
    assert "**FAILED: 2 of 3 thresholds failed (p(99) < 1us; rate > 10000000); exit code 99.**" in verdict
    tables = parse_tables(text)
    checks = tables["Thresholds, pass or fail"]
    assert [(r["threshold"], r["verdict"]) for r in checks] == [
        ("p(95) < 200ms", "pass"),
        ("p(99) < 1us", "fail"),
        ("rate > 10000000", "fail"),
    ]
    for entry, threshold in zip(checks, summary["thresholds"], strict=True):
        assert entry["observed"] == threshold["observed_text"]
    executive = tables["Executive summary"]
    assert row(executive, "figure", "exit code")["value"] == "99: a threshold failed (or stopped the run)"
    same(row(executive, "figure", "responses/s")["value"], summary["throughput"]["responses_per_s"])
    # report.html: the verdict is the first thing after the heading, before any chart or table.
    page = render_run_html(StoredRun.from_directory(watched))
    no_python_repr(page)
    body = page_text(page)
    first = body.index("Verdict")
    assert first < body.index("Results") and first < body.index("Charts")
    assert "FAILED: 2 of 3 thresholds failed (p(99) < 1us; rate > 10000000); exit code 99." in body[:2000]
    for threshold in summary["thresholds"]:
        assert threshold["observed_text"] in body[first : body.index("Results")]


def test_thresholds_are_drawn_on_the_charts_they_bound(watched):
    run = StoredRun.from_directory(watched)
    charts = {c["id"]: c for c in run_charts(run)}
    assert [(r["value"], r["label"]) for r in charts["latency"]["rules"]] == [
        (200.0, "p(95) < 200ms (pass)"),
        (0.001, "p(99) < 1us (fail)"),
    ]
    assert [(r["value"], r["label"]) for r in charts["throughput"]["rules"]] == [
        (10_000_000.0, "rate > 10000000 (fail)")
    ]
    for name, label in (
        ("latency.svg", "threshold p(95) &lt; 200ms (pass)"),
        ("throughput.svg", "threshold rate &gt; 10000000 (fail)"),
    ):
        assert label in (watched / "charts" / name).read_text(), name


def test_every_scenarios_load_profile_is_drawn(watched):
    run = StoredRun.from_directory(watched)
    throughput = next(c for c in run_charts(run) if c["id"] == "throughput")
    profiles = {
        s["label"]: [v for v in s["values"] if v is not None] for s in throughput["series"] if s.get("axis") == "y2"
    }
    assert set(profiles) == {"VUs spike", "VUs steady"}
    assert profiles["VUs steady"] and set(profiles["VUs steady"]) == {2.0}  # 2 VUs throughout, never 0
    svg = (watched / "charts" / "throughput.svg").read_text()
    assert "VUs spike" in svg and "VUs steady" in svg


def test_a_constant_run_is_not_drawn_ramping_to_zero(constant):
    run = StoredRun.from_directory(constant)
    throughput = next(c for c in run_charts(run) if c["id"] == "throughput")
    (profile,) = [s for s in throughput["series"] if s.get("axis") == "y2"]
    drawn = [v for v in profile["values"] if v is not None]
    assert drawn and set(drawn) == {16.0}, profile["values"]
    assert "counted after the load stopped" in throughput["note"]
    assert "counted after the load stopped" in (constant / "report.md").read_text()
    assert "counted after the load stopped" in render_run_html(run)


def test_a_partial_last_interval_is_left_out_and_said(constant, tmp_path):
    copy_dir = tmp_path / "run"
    copy_dir.mkdir()
    for name in ("summary.json", "timeseries.csv", "latency.hlog"):
        (copy_dir / name).write_bytes((constant / name).read_bytes())
    lines = (copy_dir / "timeseries.csv").read_text().splitlines()
    last_end = float(lines[-1].split(",", 1)[0])
    extra = [f"{last_end + 0.25}," + line.split(",", 1)[1] for line in lines[-2:]]  # a 0.25 s interval
    (copy_dir / "timeseries.csv").write_text("\n".join([*lines, *extra]) + "\n")
    run = StoredRun.from_directory(copy_dir)
    from surge.present.timeline import timeline

    line = timeline(run)
    assert line is not None and line.partial == (last_end, last_end + 0.25)
    throughput = next(c for c in run_charts(run) if c["id"] == "throughput")
    assert throughput["x"][-1] == last_end
    assert "was partial: the charts leave it out" in throughput["note"]


def test_rates_are_steps_over_their_interval_from_a_zero_axis(constant):
    charts = {c["id"]: c for c in run_charts(StoredRun.from_directory(constant))}
    for chart_id in ("throughput", "failures", "cpu"):
        chart = charts[chart_id]
        assert chart["yzero"] and chart["x"][0] == 0.0, chart_id
        rates = [s for s in chart["series"] if s.get("axis") != "y2"]
        assert rates and all(s["style"] == "interval" for s in rates), chart_id
    assert charts["latency"]["yzero"]


def test_the_per_stage_table_shows_the_hold_and_the_spike(watched):
    summary = json.loads((watched / "summary.json").read_text())
    assert summary["meta"]["plan"]["scenarios"][0] == {
        "name": "spike",
        "executor": "ramping-vus",
        "start_s": 0.0,
        "start": 1,
        "stages": [
            {"duration_s": 2.0, "target": 4},
            {"duration_s": 2.0, "target": 4},
            {"duration_s": 1.0, "target": 8},
        ],
    }
    tables = parse_tables((watched / "report.md").read_text())
    stages = tables["Per stage"]
    assert [(r["scenario"], r["stage"], r["from (s)"], r["to (s)"], r["target"]) for r in stages[:3]] == [
        ("spike", "1", "0.000", "2.000", "1 → 4 VUs"),
        ("spike", "2", "2.000", "4.000", "4 VUs (hold)"),
        ("spike", "3", "4.000", "5.000", "4 → 8 VUs"),
    ]
    assert sum(int(r["requests"].replace(",", "")) for r in stages) == summary["requests"]["sent"]
    for entry in stages[:3]:
        assert float(entry["p95 ms"]) > 0 and entry["error rate"] == "0.000%"
        requests, rate = int(entry["responses"].replace(",", "")), float(entry["responses/s"].replace(",", ""))
        span = float(entry["to (s)"]) - float(entry["from (s)"])
        assert rate == pytest.approx(requests / span, rel=0.01)
    page = render_run_html(StoredRun.from_directory(watched))
    assert "Per stage" in page and "4 VUs (hold)" in page and "4 → 8 VUs" in page


def test_the_generators_and_the_watched_targets_resource_use_are_shown(watched, constant):
    summary = json.loads((watched / "summary.json").read_text())
    resources = parse_tables((watched / "report.md").read_text())["Resource use"]
    target = summary["target_process"]
    entry = row(resources, "process", f"target (pid {target['pid']}, {target['name']})")
    same(entry["CPU mean (cores)"], target["cpu_cores_mean"])
    same(entry["CPU max (cores)"], target["cpu_cores_max"])
    assert entry["RSS max"] == f"{target['rss_bytes_max'] / 2**20:,.1f} MiB"
    assert (entry["threads"], entry["open files"]) == (str(target["threads_max"]), str(target["open_files_max"]))
    generator = summary["generator"]
    mine = row(resources, "process", "generator (surge)")
    same(mine["CPU mean (cores)"], (generator["cpu"]["user_s"] + generator["cpu"]["system_s"]) / summary["elapsed_s"])
    page = render_run_html(StoredRun.from_directory(watched))
    assert "Resource use" in page and f"target (pid {target['pid']}" in page
    assert {"generator CPU (cores)", "target CPU (cores)"} == {
        s["label"] for s in next(c for c in run_charts(StoredRun.from_directory(watched)) if c["id"] == "cpu")["series"]
    }
    # without --watch-pid: the generator alone, always.
    unwatched = parse_tables((constant / "report.md").read_text())["Resource use"]
    assert [r["process"] for r in unwatched] == ["generator (surge)"]


def test_report_html_has_limitations(constant):
    page = render_run_html(StoredRun.from_directory(constant))
    limitations = page_text(page).split("Limitations", 1)[1]
    assert "the generator ran on the same machine as the target (127.0.0.1)" in limitations


def test_the_verdict_of_an_import_and_the_drain_after_the_load(constant):
    from surge.present.verdict import run_verdict

    summary = json.loads((constant / "summary.json").read_text())
    summary["drain"] = {"seconds": 0.25, "responses": 12, "succeeded": 10, "failed": 2, "interrupted": 1}
    rows = dict(run_verdict(summary).rows)
    assert (
        rows["drain after the load"]
        == "0.250 s: 12 responses (10 succeeded, 2 failed), 1 interrupted; not in the rates"
    )
    assert rows["exit code"] == "0: the run completed and every threshold passed (or none was set)"
    summary["meta"]["tool"] = "hey"
    verdict = run_verdict(summary)
    assert verdict.headline.startswith("Imported from hey:") and verdict.state == "info"
    assert dict(verdict.rows)["exit code"] == "none: the run was imported from hey (surge did not run it)"


RATE_STAGES = """\
target: @URL@
scenarios:
  arrivals:
    executor:
      type: ramping-arrival-rate
      start_rate: 20
      max_vus: 8
      stages:
        - {duration: 2s, target: 40}
        - {duration: 1s, target: 40}
    flow:
      - name: health
        request: {path: /health}
"""


def test_a_ramping_arrival_rates_stages_are_rates(target, tmp_path):
    out = recorded(tmp_path, str(write(tmp_path, RATE_STAGES, URL=target.url)))
    summary = json.loads((out / "summary.json").read_text())
    text = (out / "report.md").read_text()
    stages = parse_tables(text)["Per stage"]
    assert [(r["stage"], r["target"]) for r in stages[:2]] == [("1", "20 → 40/s"), ("2", "40/s (hold)")]
    assert sum(int(r["requests"].replace(",", "")) for r in stages) == summary["requests"]["sent"]
    throughput = next(c for c in run_charts(StoredRun.from_directory(out)) if c["id"] == "throughput")
    assert [s["label"] for s in throughput["series"] if s.get("axis") == "y2"] == ["offered rate /s"]
