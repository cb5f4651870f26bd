"""experiment_page: an experiment's report.html from its experiment.json document (and its runs'
records, for what the document does not hold): heading, the runs, the kind's charts and tables,
the findings."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from surge.present import numbers as fmt
from surge.present.charts import ZONE_COLOURS
from surge.present.experiment_cells import STAT_COLUMNS, comparison_sides, interval, level_cells, statistics_cells
from surge.present.experiment_charts import experiment_charts
from surge.present.html.page import chart_div, report_page
from surge.present.html.tables import esc, key_values, section, table, verdict
from surge.present.html.uplot import specs
from surge.present.limitations import experiment_limitations
from surge.present.verdict import CAPACITY_STOPS, experiment_verdict, load_text, parameter_rows
from surge.record.figures import FIGURE_TITLES
from surge.record.stored import StoredRun


def cell(value: Any, name: str, spread: Any = None) -> str:
    """cell writes a key figure (or a threshold's) by its unit through the one number formatter,
    with the decimals its ``spread`` (an SD over runs) supports when given."""
    return fmt.figure(value, name) if spread is None else fmt.figure_with_spread(value, name, spread)


def _runs_table(document: Mapping[str, Any], runs: list[StoredRun]) -> str:
    stored = {r.run_id: r for r in runs}
    rows = []
    for entry in document.get("runs") or []:
        f = entry.get("figures") or {}
        run = stored.get(str(entry.get("run_id") or ""))
        ended = "complete" if entry.get("complete") else f"incomplete: {entry.get('stop_reason') or 'no result'}"
        rows.append(
            [
                entry.get("label", ""),
                entry.get("role", ""),
                str(entry.get("run_id") or "")[:8],
                *(cell(f.get(k), k) for k in ("responses_per_s", "p50_ms", "p95_ms", "p99_ms", "failure_rate")),
                verdict(str(entry.get("verdict") or "none")),
                ended,
                (run.directory if run and run.directory else entry.get("directory")) or "",
            ]
        )
    columns = (
        "run",
        "role",
        "id",
        "req/s",
        "p50 ms",
        "p95 ms",
        "p99 ms",
        "failure rate",
        "verdict",
        "ended",
        "directory",
    )
    return table(columns, rows, left=3, caption=f"Runs ({len(rows)})")


def _statistics(analysis: Mapping[str, Any]) -> str:
    rows = [statistics_cells(figure, data, cell) for figure, data in (analysis.get("statistics") or {}).items()]
    level = fmt.level(analysis.get("confidence"))
    return table(STAT_COLUMNS, rows, caption=f"Statistics over the runs (CI: {level} on the mean, Student's t)")


def _sweep(analysis: Mapping[str, Any]) -> str:
    model = analysis.get("model", "closed")
    rows = [
        [
            load_text(model, lv.get("load")),
            *level_cells(lv),
            lv.get("zone"),
            lv.get("zone_reason", ""),
        ]
        for lv in analysis.get("levels") or []
    ]
    columns = ("level", "throughput/s", "goodput/s", "success", "p50 ms", "p95 ms", "p99 ms", "failures", "zone", "why")
    usl = analysis.get("usl") or {}
    fit = (
        None
        if not usl
        else usl.get("refused")
        or f"σ {fmt.general(usl.get('sigma'))}, κ {fmt.general(usl.get('kappa'))}, λ {fmt.rate(usl.get('lambda'))}/s, "
        f"N* {fmt.general(usl.get('peak_n'))}, R² {fmt.general(usl.get('r_squared'))}"
    )
    peak, knee = analysis.get("peak") or {}, analysis.get("knee") or {}
    return table(columns, rows, left=0, caption="Levels") + key_values(
        [
            (
                "peak",
                f"{fmt.rate(peak.get('throughput'))}/s at {load_text(model, peak['load'])}"
                if peak.get("load") is not None
                else None,
            ),
            (
                "knee",
                f"{fmt.rate(knee.get('throughput'))}/s at {load_text(model, knee['load'])}"
                if knee.get("load") is not None
                else knee.get("reason"),
            ),
            ("USL", fit),
        ]
    )


def zone_legend() -> str:
    """zone_legend names each zone in the colour the sweep's charts shade it with (ZONE_COLOURS)."""
    spans = "".join(f'<span style="background:{colour}">{esc(zone)}</span>' for zone, colour in ZONE_COLOURS.items())
    return f'<p class="zones">zones: {spans}</p>\n'


def _capacity(analysis: Mapping[str, Any]) -> str:
    rows = [
        [
            fmt.count(s.get("number")),
            s.get("phase"),
            fmt.rate(s.get("rate")),
            fmt.rate(s.get("achieved_per_s")),
            fmt.ms(s.get("p95_ms")),
            fmt.ms(s.get("p99_ms")),
            fmt.percent(s.get("failure_rate")),
            fmt.percent(s.get("late_share")),
            verdict("pass" if s.get("passed") else "fail"),
            "; ".join((s.get("evidence") if s.get("passed") else s.get("failures")) or []),
        ]
        for s in analysis.get("steps") or []
    ]
    columns = ("step", "phase", "offered/s", "achieved/s", "p95 ms", "p99 ms", "failure rate", "late", "verdict", "why")
    rate = analysis.get("rate")
    stop = str(analysis.get("stop_reason") or "")
    return key_values(
        [
            ("capacity", "none found" if rate is None else f"{fmt.rate(rate)}/s"),
            ("bracket high", fmt.rate(analysis.get("high"))),
            ("confirmed", bool(analysis.get("confirmed"))),
            ("stop reason", CAPACITY_STOPS.get(stop, stop or None)),
            *(("note", n) for n in analysis.get("notes") or []),
        ]
    ) + table(columns, rows, left=2, caption="Steps")


def _compare(analysis: Mapping[str, Any]) -> str:
    parts = []
    for pair in analysis.get("comparisons") or []:
        rows = []
        for c in pair["figures"]:
            f = c["figure"]
            ratio_ci = c.get("ratio_ci") or [None, None]
            rows.append(
                [
                    FIGURE_TITLES.get(f, f),
                    *comparison_sides(c, cell),
                    fmt.general(c.get("ratio")),
                    interval(ratio_ci[0], ratio_ci[1], fmt.general),
                    fmt.general(c.get("welch_p")),
                    fmt.general(c.get("mann_whitney_p")),
                    verdict(str(c.get("verdict"))),
                ]
            )
        ref, var = pair["reference"], pair["variant"]
        parts.append(
            table(
                (
                    "figure",
                    f"{ref} mean",
                    f"{ref} CI",
                    f"{var} mean",
                    f"{var} CI",
                    "ratio",
                    "ratio CI",
                    "Welch p",
                    "MW p",
                    "verdict",
                ),
                rows,
                caption=f"{var} against {ref} (reference), α = {fmt.general(pair.get('alpha'))}",
            )
        )
    for s in analysis.get("scaling") or []:
        parts.append(f"<p><b>scaling</b> {esc(s['light'])} → {esc(s['heavy'])}: {esc(s['text'])}</p>\n")
    return "".join(parts)


TABLES = {"repeat": _statistics, "stats": _statistics, "sweep": _sweep, "capacity": _capacity, "compare": _compare}
"""TABLES maps an experiment kind to its analysis tables."""


def render_experiment_html(document: dict[str, Any], runs: list[StoredRun]) -> str:
    """render_experiment_html is an experiment's report.html (kinds repeat, stats, sweep,
    capacity, compare): one self-contained page with the runs, the kind's interactive charts and
    tables and the findings; an experiment without an analysis (stopped early) shows its runs."""
    kind = str(document.get("kind", ""))
    analysis = document.get("analysis")
    charts = specs(experiment_charts(document))
    asked = ", ".join(
        f"{k} {v}" for k, v in parameter_rows(document.get("parameters") or {}, skip=("test", "slo", "variants"))
    )
    sub = f"{kind} {document.get('name', '')} · experiment {str(document.get('experiment_id') or '')[:8]}" + (
        f" · {asked}" if asked else ""
    )
    banners = []
    if not document.get("complete"):
        why = document.get("stop_signal") or "it did not finish"
        banners.append(f"Incomplete experiment ({esc(why)}): the analysis covers the completed runs.")
    analysis_html = (
        TABLES[kind](analysis) if kind in TABLES and analysis else '<p class="note">No analysis in this record.</p>\n'
    )
    chart_html = "".join(chart_div(c["id"], c["title"]) for c in charts)
    if chart_html and kind == "sweep":
        chart_html += zone_legend()
    no_charts = '<p class="note">No charts: the record holds no analysis.</p>\n'
    return report_page(
        title=f"surge report {kind} {document.get('name', '')}",
        heading=(kind, document.get("name", "")),
        sub=sub,
        banners=banners,
        verdict=experiment_verdict(document),
        sections=section("Charts", chart_html or no_charts)
        + section("Analysis", analysis_html)
        + section("Runs", _runs_table(document, runs)),
        findings=document.get("findings") or [],
        limitations=experiment_limitations(document, runs),
        method=[
            ("command", document.get("command")),
            ("started", document.get("started_at")),
            ("ended", document.get("ended_at")),
            ("surge version", document.get("surge_version")),
            ("results directory", document.get("directory")),
        ],
        charts=charts,
    )
