"""run_page: a run's report.html from its record alone (StoredRun: the history's copy or the
results directory), complete, incomplete or imported."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from surge.present import numbers as fmt
from surge.present.html.page import chart_div, report_page
from surge.present.html.tables import esc, section, table, verdict
from surge.present.html.uplot import specs
from surge.present.limitations import run_limitations
from surge.present.run_charts import RUN_CHART_TITLES
from surge.present.run_charts import run_charts as described
from surge.present.stream_figures import STREAM_LATENCY_ROWS, stream_lines
from surge.present.timeline import (
    GENERATOR_COLUMNS,
    RESOURCE_COLUMNS,
    STAGE_COLUMNS,
    generator_rows,
    resource_rows,
    stage_note,
    stage_rows,
)
from surge.present.verdict import run_verdict, threshold_scope
from surge.record.stored import StoredRun

TRAFFIC_COLUMNS = ("sent", "responses", "success", "responses/s", "p50 ms", "p95 ms", "p99 ms", "max ms")
"""TRAFFIC_COLUMNS are the figures each row of the scenario and tag tables shows."""


def _figure(part: str, key: str, form: Callable[[Any], str]) -> Callable[[Mapping[str, Any]], str]:
    def cell(block: Mapping[str, Any]) -> str:
        values = block.get(part) or {}
        return form(((values.get("all") or {}) if part == "latency" else values).get(key))

    return cell


CELLS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "sent": _figure("requests", "sent", fmt.count),
    "responses": _figure("requests", "responses", fmt.count),
    "failed": _figure("requests", "failed", fmt.count),
    "success": _figure("requests", "success_rate", fmt.percent),
    "responses/s": _figure("throughput", "responses_per_s", fmt.rate),
    "successes/s": _figure("throughput", "successes_per_s", fmt.rate),
    **{f"p{q} ms": _figure("latency", f"p{q}_ms", fmt.ms) for q in (50, 90, 95, 99)},
    "max ms": _figure("latency", "max_ms", fmt.ms),
}
"""CELLS writes each traffic column of a summary block (the run's, a scenario's, a tag's: its
``requests``, ``throughput`` and ``latency.all``)."""

HEADLINE_COLUMNS = tuple(CELLS)
"""HEADLINE_COLUMNS are the run's headline figures (the Results table)."""


def _traffic(block: Mapping[str, Any], columns: tuple[str, ...] = TRAFFIC_COLUMNS) -> list[str]:
    return [CELLS[c](block) for c in columns]


def _banners(run: StoredRun) -> list[str]:
    meta, s = run.meta, run.summary
    tool = meta.get("tool") or "surge"
    banners = []
    if not meta.get("complete", True) or s.get("stop_signal"):
        why = s.get("stop_signal") or s.get("stop_reason") or "it did not finish"
        banners.append(f"Incomplete run: stopped ({esc(why)}); the figures cover what was measured until then.")
    if tool != "surge":
        source = (
            (meta.get("source") or {}).get("file") if isinstance(meta.get("source"), Mapping) else meta.get("source")
        )
        banners.append(
            f"Imported from {esc(tool)} ({esc(source or 'an unnamed file')}): "
            "figures the tool did not report are shown as -."
        )
    return banners


def _method(run: StoredRun) -> list[tuple[str, Any]]:
    meta, s = run.meta, run.summary
    env = meta.get("environment") or {}
    environment = (
        ", ".join(f"{k.replace('_', ' ')} {fmt.plain(v)}" for k, v in env.items() if v is not None) if env else None
    )
    return [
        ("target", meta.get("target") or s.get("url")),
        ("command", meta.get("command")),
        ("plan", (meta.get("plan") or {}).get("description")),
        ("started", meta.get("started_at")),
        ("ended", meta.get("ended_at")),
        ("load window s", fmt.seconds(s.get("duration_s"))),
        ("stop reason", s.get("stop_reason")),
        ("generator threads", s.get("threads")),
        ("environment", environment),
        ("surge version", meta.get("surge_version")),
        ("results directory", run.directory),
    ]


def _headline(s: Mapping[str, Any]) -> str:
    return section("Results", table(HEADLINE_COLUMNS, [_traffic(s, HEADLINE_COLUMNS)], left=0))


def _tables(s: Mapping[str, Any]) -> str:
    def pass_rate(c: Mapping[str, Any]) -> float | None:
        return c["passes"] / (c["passes"] + c["fails"]) if c.get("passes", 0) + c.get("fails", 0) else None

    tables = (  # caption, columns, rows, how many columns are aligned left
        (
            "Per scenario",
            ("scenario", *TRAFFIC_COLUMNS),
            [[sc.get("name", ""), *_traffic(sc)] for sc in s.get("scenarios") or []],
            1,
        ),
        (
            "Per tag",
            ("tag", "scenario", *TRAFFIC_COLUMNS),
            [[t.get("tag", ""), t.get("scenario") or "", *_traffic(t)] for t in s.get("tags") or []],
            2,
        ),
        (
            "Checks",
            ("check", "scenario", "tag", "passes", "fails", "pass rate"),
            [
                [
                    c.get("name", ""),
                    c.get("scenario") or "",
                    c.get("tag") or "",
                    fmt.count(c.get("passes")),
                    fmt.count(c.get("fails")),
                    fmt.percent(pass_rate(c)),
                ]
                for c in s.get("checks") or []
            ],
            3,
        ),
        (
            "Thresholds",
            ("threshold", "scope", "observed", "verdict", "note"),
            [
                [
                    t.get("expr", ""),
                    threshold_scope(t),
                    t.get("observed_text") or "-",
                    verdict(str(t.get("status", ""))),
                    t.get("note") or "",
                ]
                for t in s.get("thresholds") or []
            ],
            2,
        ),
    )
    parts = [table(columns, rows, left=left, caption=caption) for caption, columns, rows, left in tables if rows]
    return section("Scenarios, tags, checks and thresholds", *parts) if parts else ""


STREAM_COLUMNS = ("latency (ms)", "count", "p50", "p90", "p95", "p99", "max")
"""STREAM_COLUMNS are the streams table's columns."""


def _streams(s: Mapping[str, Any]) -> str:
    """_streams is the section of a run's event and token streams (their latency rows with
    samples, and a line of counts, tokens and goodput); empty without any."""
    latency = s.get("latency") or {}
    rows = [
        [
            label,
            fmt.count(v.get("count")),
            *(fmt.ms(v.get(k)) for k in ("p50_ms", "p90_ms", "p95_ms", "p99_ms", "max_ms")),
        ]
        for label, key in STREAM_LATENCY_ROWS
        if isinstance(v := latency.get(key), Mapping) and v.get("count")
    ]
    lines = stream_lines(s)
    if not rows and not lines:
        return ""
    text = "".join(f'<p class="note">{esc(line)}</p>\n' for line in lines)
    return section("Streams and goodput", (table(STREAM_COLUMNS, rows) if rows else "") + text)


def _stages(run: StoredRun) -> str:
    rows = stage_rows(run)
    note = stage_note(run)
    return (
        section("Per stage", table(STAGE_COLUMNS, rows, left=2), f'<p class="note">{esc(note)}</p>\n' if note else "")
        if rows
        else ""
    )


def _resources(run: StoredRun) -> str:
    rows = resource_rows(run)
    generators = generator_rows(run.summary)
    return (section("Resource use", table(RESOURCE_COLUMNS, rows)) if rows else "") + (
        section("Per generator", table(GENERATOR_COLUMNS, generators, left=2)) if generators else ""
    )


def run_charts(run: StoredRun) -> list[dict[str, Any]]:
    """run_charts are the run's chart specs in page order (those its record has data for:
    surge.present.run_charts)."""
    return specs(described(run))


def render_run_html(run: StoredRun) -> str:
    """render_run_html is a run's report.html: one self-contained page (no network request) with
    the headline figures, method, interactive charts, per-scenario/tag, checks and thresholds
    tables and the findings (docs/report-html.md)."""
    charts = run_charts(run)
    drawn = {c["id"] for c in charts}
    missing = [title for key, title in RUN_CHART_TITLES.items() if key not in drawn and key != "cpu"]
    chart_html = "".join(
        chart_div(c["id"], c["title"]) + (f'<p class="note">{esc(c["note"])}</p>\n' if c.get("note") else "")
        for c in charts
    )
    if missing:
        chart_html += "".join(f'<p class="note">{esc(t)}: not in this record.</p>\n' for t in missing)
    meta = run.meta
    return report_page(
        title=f"surge report {meta.get('name') or run.run_id}",
        heading=(meta.get("name") or run.summary.get("url") or "run",),
        sub=f"run {run.run_id} · {meta.get('started_at', '')} · {meta.get('tool') or 'surge'}",
        banners=_banners(run),
        verdict=run_verdict(run.summary),
        sections=_headline(run.summary)
        + _stages(run)
        + section("Charts", chart_html)
        + _streams(run.summary)
        + _resources(run)
        + _tables(run.summary),
        findings=run.summary.get("findings") or [],
        limitations=run_limitations(run.summary),
        method=_method(run),
        charts=charts,
    )
