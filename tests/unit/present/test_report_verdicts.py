"""Reports lead with their answer: an experiment's verdict, capacity's best passing rate or lower
bound, a sweep's zones and ticks; no page shows a Python repr."""

from __future__ import annotations

import html as html_lib
import re
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from report_pages import (
    LEVELS,
    REPORTS,
    ZONES,
    _document,
    _levels_at,
    _sections,
    no_python_repr,
    page_text,
    parse_tables,
)
from surge.present.experiment_charts import experiment_charts
from surge.present.html.experiment_page import render_experiment_html
from surge.present.html.run_page import render_run_html
from surge.present.html.uplot import specs
from surge.present.markdown.experiment_report import render_experiment_md
from surge.present.report_source import ExperimentSource
from surge.record.stored import StoredRun


def _renders(document: dict[str, Any]) -> tuple[str, str]:
    return render_experiment_md(ExperimentSource(document, [])), render_experiment_html(document, [])


@pytest.mark.parametrize(
    "kind, answer",
    [
        ("sweep", "Peak: 363.2 responses/s at 8 VUs."),
        ("capacity", "Capacity: 1,000.0/s, not confirmed."),
        ("compare", "1 comparison(s) against the reference a."),
        ("repeat", "3 runs without thresholds: the figures over the runs."),
    ],
)
def test_an_experiments_report_leads_with_its_answer(kind, answer):
    markdown, page = _renders(_document(kind))
    for text in (markdown, page):
        no_python_repr(text)
    assert _sections(markdown)[0] == "Verdict" and f"**{answer}" in markdown.split("## ", 2)[1]
    body = page_text(page)
    assert body.index("Verdict") < body.index("Charts") and answer in body[: body.index("Charts")]
    assert "Limitations" in body


def test_a_capacity_verdict_names_the_best_passing_rate_and_its_slo():
    document = _document("capacity")
    markdown, page = _renders(document)
    tables = parse_tables(markdown)
    executive = {r["item"]: r["value"] for r in tables["Executive summary"]}
    assert executive["confirmed"] == "no" and executive["capacity"] == "1,000.0/s"
    assert executive["best passing rate"].startswith("1,000.0/s (step 6, achieved 994.9/s")
    assert executive["exit code"].startswith("99: ")
    (check,) = tables["Thresholds, pass or fail"]
    assert (check["threshold"], check["verdict"], check["observed"]) == ("p(95) < 40ms", "pass", "6.13ms")
    assert "confirmed False" not in page_text(page) and "confirmed no" in re.sub(r"\s+", " ", page_text(page))
    latency = next(c for c in specs(experiment_charts(document)) if c["id"] == "capacity-latency")
    assert latency["rules"] == [{"value": 40.0, "label": "SLO p(95) < 40ms", "colour": "#d62728"}]


def test_a_capacity_the_generator_limited_is_a_lower_bound_with_its_limit():
    document = _document("capacity")
    document["analysis"].update(
        stop_reason="generator_limit", confirmed=True, limit="the generator could not keep its schedule above 1,000.0/s"
    )
    markdown, page = _renders(document)
    assert "**Capacity: at least 1,000.0/s, confirmed; the generator could not keep the schedule" in markdown
    executive = {r["item"]: r["value"] for r in parse_tables(markdown)["Executive summary"]}
    assert executive["what limited it"] == "the generator could not keep its schedule above 1,000.0/s"
    assert "at least 1,000.0/s" in page_text(page)


def test_a_sweep_names_its_zones_in_the_verdict():
    markdown, _ = _renders(_document("sweep"))
    executive = {r["item"]: r["value"] for r in parse_tables(markdown)["Executive summary"]}
    assert executive["zones"] == "optimal 1–4 VUs; stress 8–16 VUs; broken 32 VUs"


def test_a_sweep_is_ticked_at_its_levels_with_zone_colours_that_match_the_legend(tmp_path):
    from surge.present.charts import ZONE_COLOURS

    document = _levels_at(_document("sweep"), LEVELS, ZONES)
    throughput, latency = specs(experiment_charts(document))
    for chart in (throughput, latency):
        assert chart["xticks"] == LEVELS and chart["zoneColours"] == ZONE_COLOURS
    page = render_experiment_html(document, [])
    legend = dict(re.findall(r'<span style="background:([^"]+)">(\w+)</span>', page))
    assert {zone: colour for colour, zone in legend.items()} == ZONE_COLOURS
    from surge.present.charts import ZONE_COLOURS as SVG_ZONES
    from surge.present.write import write_charts

    assert "charts/sweep.svg" in write_charts(experiment_charts(document), tmp_path).values()
    root = ET.parse(tmp_path / "charts" / "sweep.svg").getroot()
    ticks = [g for g in root.iter() if g.get("class") == "xtick"]
    labels = ["".join(t.itertext()).strip() for g in ticks for t in g.iter() if t.tag.endswith("text")]
    assert labels == [f"{v:,g}" for v in LEVELS]
    svg = (tmp_path / "charts" / "sweep.svg").read_text()
    for zone in ("optimal", "stress", "degraded", "broken"):
        assert f"zone {zone}" in svg  # the legend names every zone drawn, in the colour it is drawn in
        assert svg.count(f"fill: {SVG_ZONES[zone]}") >= 2, zone


def test_no_page_shows_a_python_repr():
    """Every experiment fixture in both formats; the run pages are scanned where they are rendered."""
    for kind in ("sweep", "capacity", "compare", "repeat"):
        for page in _renders(_document(kind)):
            no_python_repr(page)
    for name in ("run-scenario", "run-incomplete"):
        no_python_repr(render_run_html(StoredRun.from_directory(REPORTS / name)))


@pytest.mark.parametrize("leak", ["stop_when=None", "max_rate None", "confirmed False", "{'a': 1}", "['x']", "True"])
def test_the_repr_scan_catches_a_leak(leak):
    with pytest.raises(AssertionError):
        no_python_repr(f"<html><body><p>{html_lib.escape(leak)}</p></body></html>")


def test_a_distributed_runs_generators_are_a_row_each_lost_ones_said():
    from surge.present.timeline import GENERATOR_COLUMNS, generator_rows

    part = {
        "generator": 0,
        "node_id": "8e068dacf8f4c9c0",
        "sent": 201,
        "responses_per_s": 100.5,
        "p50_ms": 0.21,
        "p99_ms": 3.041,
        "send_lag_p99_ms": 2.951,
        "cpu_us_per_request": 28.4,
        "busiest_thread": 0.95,
        "findings": ["generator_saturated"],
        "lost": None,
    }
    lost = {**part, "generator": 1, "node_id": None, "findings": [], "lost": "it died (ActorDiedError)"}
    rows = generator_rows({"distributed": {"parts": [part, lost]}})
    assert len(GENERATOR_COLUMNS) == len(rows[0])
    assert rows[0] == [
        "0",
        "8e068dac",
        "201",
        "100.5",
        "0.210",
        "3.041",
        "2.951",
        "28.4",
        "95.000%",
        "generator_saturated",
    ]
    assert rows[1][0:2] == ["1", "-"] and rows[1][-1] == "lost"
    assert generator_rows({"generator": {}}) == []
