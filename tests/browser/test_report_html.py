"""report.html (docs/report-html.md): each report opened in headless Chromium with the network
off: no script error, no request, every chart drawn with the points it was given, a screenshot
that is not blank; and the pieces that need no browser (the spectrum, the data block, the assets)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from browser import NETWORK_REFERENCE, open_report, png_distinct_bytes
from conftest import surge
from report_pages import no_python_repr
from surge.present.experiment_charts import experiment_charts
from surge.present.html.experiment_page import render_experiment_html
from surge.present.html.run_page import render_run_html, run_charts
from surge.present.html.uplot import specs
from surge.record.stored import StoredRun

FIXTURES = Path(__file__).parents[1] / "fixtures"
REPORTS = FIXTURES / "report_html"


def _points(charts: list[dict[str, Any]]) -> dict[str, int]:
    return {f"chart-{c['id']}": sum(1 for s in c["series"] for v in s["values"] if v is not None) for c in charts}


def _check_opened(html: str, expected: dict[str, int], workdir: Path) -> None:
    assert not NETWORK_REFERENCE.search(html), NETWORK_REFERENCE.search(html)
    no_python_repr(html)
    opened = open_report(html, workdir)
    assert opened.errors == [], opened.errors  # the hook ran (not None) and saw nothing
    assert opened.resources == [], opened.resources  # nothing was requested, not even a failed request
    assert set(opened.charts) == set(expected)
    for chart_id, points in expected.items():
        chart = opened.charts[chart_id]
        assert points > 0, chart_id
        assert chart.drawn and chart.points == points, chart
        assert chart.canvases and all(w > 0 and h > 0 for w, h in chart.canvases), chart
    assert not_blank(opened.screenshot), png_distinct_bytes(opened.screenshot)


def not_blank(png: bytes) -> bool:
    """not_blank: many byte values, and over 0.5 % of the image data away from the background
    (measured: a blank page 4 values and 0.03 %, a heading and a line 0.05 %, a report 1.2 %)."""
    distinct, share = png_distinct_bytes(png)
    return distinct > 64 and share > 0.005


def _imported(tmp_path: Path, name: str) -> StoredRun:
    out = tmp_path / name
    result = surge("import", str(FIXTURES / "imports" / f"{name}.csv"), "--out", str(out))
    assert result.code == 0, result.said
    return StoredRun.from_directory(out)


@pytest.mark.parametrize("name", ["run-scenario", "run-incomplete"])
def test_run_report_opens_offline_with_every_chart_drawn(name, tmp_path):
    run = StoredRun.from_directory(REPORTS / name)
    charts = run_charts(run)
    assert [c["id"] for c in charts] == ["throughput", "latency", "failures", "spectrum", "status"]
    html = render_run_html(run)
    if name == "run-incomplete":
        assert "Incomplete run: stopped (SIGTERM)" in html
    else:
        for heading in ("Per scenario", "Per tag", "Checks", "Thresholds", "Findings", "queueing"):
            assert heading in html
    _check_opened(html, _points(charts), tmp_path)


def test_imported_run_report_opens_offline(tmp_path):
    run = _imported(tmp_path, "hey-6k")
    html = render_run_html(run)
    assert "Imported from hey" in html
    charts = run_charts(run)
    assert {"throughput", "latency", "spectrum", "status"} <= {c["id"] for c in charts}
    _check_opened(html, _points(charts), tmp_path / "page")


@pytest.mark.parametrize("kind", ["repeat", "sweep", "capacity", "compare"])
def test_experiment_report_opens_offline_with_every_chart_drawn(kind, tmp_path):
    document = json.loads((REPORTS / f"experiment-{kind}.json").read_text(encoding="utf-8"))
    charts = specs(experiment_charts(document))
    assert len(charts) >= 2
    _check_opened(render_experiment_html(document, []), _points(charts), tmp_path)


def test_stats_experiment_report_over_imported_runs(tmp_path):
    runs = [_imported(tmp_path, "hey-6k"), _imported(tmp_path, "hey-both-6k")]
    result = surge("stats", *(r.directory or "" for r in runs), "--json", "--out", str(tmp_path / "stats"))
    assert result.code == 0, result.said
    document = result.json()
    charts = specs(experiment_charts(document))
    html = render_experiment_html(document, runs)
    assert all(r.directory and r.directory in html for r in runs)  # the runs' own directories
    _check_opened(html, _points(charts), tmp_path / "page")


def test_an_experiment_without_analysis_shows_its_runs(tmp_path):
    document = json.loads((REPORTS / "experiment-sweep.json").read_text(encoding="utf-8"))
    document.update(analysis=None, complete=False, stop_signal="SIGINT")
    html = render_experiment_html(document, [])
    assert "Incomplete experiment (SIGINT)" in html and "Runs (6)" in html
    _check_opened(html, {}, tmp_path)


def test_a_blank_screenshot_fails_the_check(tmp_path):
    opened = open_report("<!DOCTYPE html><html><head></head><body></body></html>", tmp_path)
    assert not not_blank(opened.screenshot)
    text_only = open_report(
        "<!DOCTYPE html><html><head></head><body><h1>Hello</h1><p>a line</p></body></html>", tmp_path / "text"
    )
    assert not not_blank(text_only.screenshot)  # a heading alone is not a drawn report either
