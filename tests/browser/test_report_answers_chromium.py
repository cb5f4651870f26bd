"""report.html in Chromium: threshold lines and rate axes from zero, a sweep ticked at its levels,
the failed verdict in the first screen."""

from __future__ import annotations

import html as html_lib
import json
import re
from pathlib import Path

from report_pages import (
    LEVELS,
    ZONES,
    _document,
    _levels_at,
)
from surge.present.html.experiment_page import render_experiment_html
from surge.present.html.run_page import render_run_html
from surge.record.stored import StoredRun


def _drawn(page: str, workdir: Path) -> dict[str, dict[str, str]]:
    """_drawn opens ``page`` in headless Chromium and returns each chart container's attributes
    as report.js left them once uPlot had drawn (tests/browser.py)."""
    from browser import open_report

    opened = open_report(page, workdir)
    assert opened.errors == [], opened.errors
    charts = {}
    for match in re.finditer(r'<div class="chart" id="chart-([^"]+)"([^>]*)>', opened.dom):
        charts[match.group(1)] = dict(re.findall(r'(data-[a-z]+)="([^"]*)"', match.group(2)))
    return charts


def test_chromium_draws_threshold_lines_and_rate_axes_from_zero(watched, tmp_path):
    charts = _drawn(render_run_html(StoredRun.from_directory(watched)), tmp_path)
    assert charts["latency"]["data-rules"] == "2"  # p(95) < 200ms and p(99) < 1us, both inside the plot
    assert charts["throughput"]["data-rules"] == "1"  # rate > 10000000: the axis reaches up to it
    for chart_id in ("throughput", "latency", "failures", "cpu"):
        assert charts[chart_id]["data-drawn"] == "1" and float(charts[chart_id]["data-ymin"]) == 0.0, chart_id
    assert float(charts["throughput"]["data-ymax"]) >= 10_000_000


def test_chromium_ticks_a_sweep_at_its_levels(tmp_path):
    document = _levels_at(_document("sweep"), LEVELS, ZONES)
    charts = _drawn(render_experiment_html(document, []), tmp_path)
    for chart_id in ("sweep-throughput", "sweep-latency"):
        assert json.loads(html_lib.unescape(charts[chart_id]["data-xticks"])) == LEVELS, chart_id
        assert float(charts[chart_id]["data-ymin"]) == 0.0


def test_chromium_shows_the_failed_verdict_in_the_first_screen(watched, tmp_path):
    """The headline and every threshold's row lie within the first 800 px of a 1280 px wide page."""
    from browser import open_report

    measure = (
        "<script>window.addEventListener('load', function () { var v = document.querySelector('#verdict');"
        " document.documentElement.setAttribute('data-verdict-bottom', v ? String(v.querySelector('table')"
        ".getBoundingClientRect().bottom) : 'none'); });</script></body>"
    )
    page = render_run_html(StoredRun.from_directory(watched)).replace("</body>", measure, 1)
    opened = open_report(page, tmp_path)
    assert opened.errors == [], opened.errors
    bottom = re.search(r'data-verdict-bottom="([^"]+)"', opened.dom)
    assert bottom is not None and bottom.group(1) != "none", opened.dom[:300]
    assert 0 < float(bottom.group(1)) < 800
