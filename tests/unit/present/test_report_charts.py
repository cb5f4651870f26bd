"""One description per chart (issue 21, item 3): for the same record, each chart report.md links
(an SVG of surge.present.svg) carries the same axes, series, data points, limit lines and zones
as the spec of the same chart in report.html's embedded chart JSON. The SVG's data is read back
from the attributes it writes; the page's from its ``surge-data`` block. No browser."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from surge.present.html.experiment_page import render_experiment_html
from surge.present.html.run_page import render_run_html
from surge.present.report_source import ExperimentSource
from surge.present.svg import svg
from surge.present.write import STATIC_CHARTS, write_markdown
from surge.record.stored import StoredRun

REPORTS = Path(__file__).parents[2] / "fixtures" / "report_html"


def page_charts(page: str) -> dict[str, dict[str, Any]]:
    """page_charts are report.html's chart specs by id, from its embedded JSON."""
    block = re.search(r'<script type="application/json" id="surge-data">(.*?)</script>', page, re.S)
    assert block is not None
    return {c["id"]: c for c in json.loads(block.group(1))["charts"]}


def svg_chart(path: Path) -> dict[str, Any]:
    """svg_chart reads an SVG's chart back: its id, x values, axis labels, series, limits, zones."""
    root = ET.parse(path).getroot()
    groups = [e for e in root.iter() if e.tag.endswith("g")]
    return {
        "id": root.get("data-chart"),
        "x": json.loads(root.get("data-x") or "null"),
        "xlabel": root.get("data-xlabel"),
        "ylabel": root.get("data-ylabel"),
        "y2label": root.get("data-y2label"),
        "series": [
            (g.get("data-label"), g.get("data-style"), g.get("data-axis"), json.loads(g.get("data-values") or "null"))
            for g in groups
            if g.get("class") == "series"
        ],
        "limits": [float(g.get("data-value") or "nan") for g in groups if g.get("class") == "limit"],
        "zones": [e.get("data-zone") for e in root.iter() if e.get("class") == "zone"],
        "xticks": [float(g.get("data-value") or "nan") for g in groups if g.get("class") == "xtick"],
    }


def spec_chart(spec: dict[str, Any]) -> dict[str, Any]:
    """spec_chart is a report.html spec in svg_chart's terms."""
    return {
        "id": spec["id"],
        "x": spec["x"],
        "xlabel": spec["xlabel"],
        "ylabel": spec["ylabel"],
        "y2label": spec.get("y2label", ""),
        "series": [(s["label"], s.get("style", "line"), s.get("axis", "y"), s["values"]) for s in spec["series"]],
        "limits": [r["value"] for r in spec.get("rules", [])],
        "zones": [z["zone"] for z in spec.get("zones", [])],
    }


def check_same(directory: Path, page: str, expected: set[str]) -> None:
    """check_same asserts report.md in ``directory`` links the SVGs ``expected`` and each draws
    what report.html's spec of the same chart holds."""
    specs = page_charts(page)
    linked = re.findall(r"!\[([^\]]*)\]\(charts/([^)]+)\)", (directory / "report.md").read_text())
    assert {name for _, name in linked} == expected
    for title, name in linked:
        drawn = svg_chart(directory / "charts" / name)
        assert STATIC_CHARTS[drawn["id"]] == name
        spec = specs[drawn["id"]]
        assert title == spec["title"]
        ticks = drawn.pop("xticks")
        assert drawn == spec_chart(spec), name
        assert sum(1 for s in drawn["series"] for v in s[3] if v is not None) > 0, name
        if "xticks" in spec:
            assert ticks == spec["xticks"], name
        if "xcats" in spec:
            assert ticks == list(range(len(spec["xcats"]))), name


@pytest.mark.parametrize("name", ["run-scenario", "run-incomplete"])
def test_a_runs_svgs_draw_what_its_page_draws(name, tmp_path):
    run = StoredRun.from_directory(REPORTS / name)
    write_markdown(run, tmp_path)
    check_same(tmp_path, render_run_html(run), {"throughput.svg", "latency.svg", "spectrum.svg"})


@pytest.mark.parametrize(
    "kind, files",
    [
        ("repeat", {"repeat-responses_per_s.svg", "repeat-p95_ms.svg"}),
        ("sweep", {"sweep.svg"}),
        ("capacity", {"capacity.svg"}),
        ("compare", {"compare-responses_per_s.svg", "compare-p95_ms.svg"}),
    ],
)
def test_an_experiments_svgs_draw_what_its_page_draws(kind, files, tmp_path):
    document = json.loads((REPORTS / f"experiment-{kind}.json").read_text(encoding="utf-8"))
    write_markdown(ExperimentSource(document, []), tmp_path)
    check_same(tmp_path, render_experiment_html(document, []), files)


def test_threshold_lines_are_in_both(tmp_path):
    """The fixture's latency threshold and a failed rate threshold: each a limit line in both."""
    run = StoredRun.from_directory(REPORTS / "run-scenario")
    run.summary["thresholds"].append({"expr": "rate > 100000", "passed": False})
    write_markdown(run, tmp_path)
    check_same(tmp_path, render_run_html(run), {"throughput.svg", "latency.svg", "spectrum.svg"})
    assert svg_chart(tmp_path / "charts" / "latency.svg")["limits"] == [50.0]
    assert svg_chart(tmp_path / "charts" / "throughput.svg")["limits"] == [100_000.0]


def test_the_svg_is_the_same_bytes_each_time():
    run = StoredRun.from_directory(REPORTS / "run-scenario")
    from surge.present.run_charts import run_charts

    first, again = run_charts(run), run_charts(run)
    assert [svg(c) for c in first] == [svg(c) for c in again]


def test_a_different_series_is_caught(tmp_path):
    run = StoredRun.from_directory(REPORTS / "run-scenario")
    write_markdown(run, tmp_path)
    page = render_run_html(run)
    changed = page.replace('"label":"p99"', '"label":"p98"', 1)
    assert changed != page
    with pytest.raises(AssertionError):
        check_same(tmp_path, changed, {"throughput.svg", "latency.svg", "spectrum.svg"})
