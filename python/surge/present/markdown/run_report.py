"""report.md for one run (docs/reports.md): executive summary, method, results, findings,
limitations and charts, every number read from the run's record (summary.json as the history
keeps it) and written by surge.present.numbers; and the Markdown blocks both report.md pages
are built of: tables (every cell escaped, so a value holding ``|`` or a newline cannot break
the table), headings and bullet lists."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from surge.history import StoredRun
from surge.present import numbers as fmt
from surge.present.limitations import incomplete_reason, run_limitations
from surge.present.stream_figures import STREAM_LATENCY_ROWS, http2_line
from surge.present.timeline import (
    GENERATOR_COLUMNS,
    RESOURCE_COLUMNS,
    STAGE_COLUMNS,
    generator_rows,
    resource_rows,
    stage_note,
    stage_rows,
    timeline,
)
from surge.present.verdict import Verdict, run_verdict


def escape(text: str) -> str:
    """escape makes ``text`` safe inside a table cell: ``|`` escaped, newlines as spaces."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")


_NUMBER = re.compile(r"-|[-+]?[0-9][0-9,]*(\.[0-9]+)?(e[-+]?[0-9]+)?%?")
"""_NUMBER matches a cell surge.present.numbers wrote (or its MISSING dash)."""


def table(columns: Sequence[str], rows: Iterable[Sequence[str]], *, left: int = 1) -> str:
    """table is a Markdown table: the first ``left`` columns and every column holding text
    aligned left, columns of numbers right. Empty string when there are no rows."""
    body = [list(r) for r in rows]
    if not body:
        return ""
    numeric = [all(_NUMBER.fullmatch(row[i]) for row in body) for i in range(len(columns))]
    align = ["---:" if i >= left and numeric[i] else "---" for i in range(len(columns))]
    lines = ["| " + " | ".join(escape(c) for c in columns) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(escape(c) for c in row) + " |" for row in body]
    return "\n".join(lines) + "\n"


def bullets(items: Iterable[str]) -> str:
    """bullets is a Markdown bullet list ("" when there are no items); newlines in an item become spaces."""
    lines = [f"- {' '.join(item.split())}" for item in items]
    return "\n".join(lines) + "\n" if lines else ""


def section(title: str, *parts: str, level: int = 2) -> str:
    """section is a heading of ``level`` followed by its non-empty ``parts``, blank lines between."""
    body = [p.rstrip("\n") for p in parts if p and p.strip()]
    return "\n\n".join([f"{'#' * level} {title}", *body]) + "\n"


LATENCY_COLUMNS = ("latency (ms)", "count", "min", "mean", "p50", "p90", "p95", "p99", "p99.9", "max")
"""LATENCY_COLUMNS are the latency table's columns (milliseconds but the count)."""

LATENCY_KEYS = ("min_ms", "mean_ms", "p50_ms", "p90_ms", "p95_ms", "p99_ms", "p99_9_ms", "max_ms")
"""LATENCY_KEYS are the record's latency fields, in LATENCY_COLUMNS' order."""

LATENCY_ROWS = (
    ("every response", "all"),
    ("successful responses", "success"),
    ("service time", "service_time"),
    ("send lag", "send_lag"),
    ("first byte", "first_byte"),
    *STREAM_LATENCY_ROWS,
)
"""LATENCY_ROWS are the latency summaries the table shows (each only when it has samples)."""

REQUEST_ROWS = (
    ("sent", "sent"),
    ("responses", "responses"),
    ("succeeded", "succeeded"),
    ("failed", "failed"),
    ("shed (429, 503)", "shed"),
    ("timed out", "timed_out"),
    ("interrupted", "interrupted"),
    ("unanswered", "unanswered"),
    ("dropped", "dropped"),
    ("late", "late"),
    ("event streams", "streams"),
    ("events", "events"),
    ("token streams", "token_streams"),
    ("output tokens", "output_tokens"),
    ("good (met every goodput bound)", "good"),
    ("connections opened", "connections_opened"),
    ("bytes sent", "bytes_sent"),
    ("bytes received", "bytes_received"),
)
"""REQUEST_ROWS are the request counts' rows: label, field of ``requests``."""

STREAM_KEYS = ("streams", "events")
"""STREAM_KEYS are the rows of REQUEST_ROWS shown only for a run with event streams."""

TOKEN_KEYS = ("token_streams", "output_tokens")
"""TOKEN_KEYS are the rows of REQUEST_ROWS shown only for a run with token streams."""

GOODPUT_KEYS = ("good",)
"""GOODPUT_KEYS are the rows of REQUEST_ROWS shown only for a run that measured goodput."""


def _get(document: Mapping[str, Any] | None, *path: str) -> Any:
    value: Any = document
    for key in path:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


def timed(document: Mapping[str, Any] | None, key: str = "all") -> Mapping[str, Any] | None:
    """timed is a latency summary (``latency.<key>``) that has samples; None when it has none
    (a run that sent nothing: its zeros are not latencies, the report shows ``-``)."""
    summary = _get(document, "latency", key)
    return summary if isinstance(summary, Mapping) and summary.get("count") != 0 else None


def record_state(summary: Mapping[str, Any]) -> str:
    """record_state says whether the record is complete, and if not why."""
    reason = incomplete_reason(summary)
    return "complete" if reason is None else f"incomplete: {reason}"


def verdict_md(verdict: Verdict, more: Sequence[tuple[str, str]] = (), column: str = "figure") -> str:
    """verdict_md is the verdict that opens report.md: the headline in bold, the thresholds (or
    the SLO) with pass/fail and the observed values, then the executive summary: the verdict's
    figures and ``more`` rows."""
    checks = table(("threshold", "scope", "verdict", "observed"), verdict.checks, left=2)
    return section(
        "Verdict",
        f"**{verdict.headline}**",
        section("Thresholds, pass or fail", checks, level=3) if checks else "",
        section("Executive summary", table((column, "value"), [*verdict.rows, *more], left=2), level=3),
    )


def _environment(environment: Mapping[str, Any] | None) -> str:
    if not environment:
        return "unknown (an imported run)"
    memory = environment.get("memory_bytes")
    parts = [
        f"{environment.get('cpu_model') or 'unknown CPU'}, {environment.get('cores')} cores",
        f"{memory / 2**30:.1f} GiB memory" if isinstance(memory, (int, float)) else "memory unknown",
        f"{environment.get('os')} {environment.get('kernel')}",
        f"Python {environment.get('python')}",
    ]
    return "; ".join(parts)


def _method(run: StoredRun) -> str:
    summary, meta = run.summary, run.meta
    plan = meta.get("plan") or {}
    tool = meta.get("tool") or "surge"
    source = meta.get("source") or {}
    made = (
        f"surge {meta.get('surge_version')}"
        if tool == "surge"
        else f"{tool}, imported from {source.get('file')} by surge {meta.get('surge_version')}"
    )
    rows = [
        ("target", str(meta.get("target") or summary.get("url") or "-")),
        ("plan", str(plan.get("description") or "-")),
        ("model", "-" if not plan else ("open (arrival rate)" if plan.get("open_model") else "closed (virtual users)")),
        ("load window (s)", fmt.seconds(summary.get("duration_s"))),
        ("elapsed (s)", fmt.seconds(summary.get("elapsed_s"))),
        ("event-loop threads", fmt.count(summary.get("threads"))),
        ("started at (UTC)", str(meta.get("started_at") or "-")),
        ("ended at (UTC)", str(meta.get("ended_at") or "-")),
        ("stop reason", str(summary.get("stop_reason") or "-")),
        ("made by", made),
        ("command", f"`{meta['command']}`" if meta.get("command") else "-"),
        ("environment", _environment(meta.get("environment"))),
        ("tags", ", ".join(f"{k}={v}" for k, v in (meta.get("tags") or {}).items()) or "none"),
        ("run id", run.run_id or "-"),
    ]
    inputs = ""
    if run.inputs and run.inputs_name:
        fence = "~~~~" if "```" in run.inputs else "```"
        kind = "yaml" if run.inputs_name.endswith(".yaml") else "text"
        inputs = f"Inputs ({run.inputs_name}, secrets masked):\n\n{fence}{kind}\n{run.inputs.rstrip()}\n{fence}"
    return section("Method", table(("item", "value"), rows, left=2), inputs)


def _requests(summary: Mapping[str, Any]) -> list[str]:
    requests = summary.get("requests")
    if not isinstance(requests, Mapping):
        return []
    parts = [
        section(
            "Requests",
            table(
                ("requests", "count"),
                [
                    (label, fmt.count(requests.get(key)))
                    for label, key in REQUEST_ROWS
                    if (key not in STREAM_KEYS or requests.get("streams"))
                    and (key not in TOKEN_KEYS or requests.get("token_streams"))
                    and (key not in GOODPUT_KEYS or summary.get("goodput"))
                ],
            ),
            level=3,
        )
    ]
    total = requests.get("responses") or 0
    codes = requests.get("status_codes")
    if codes:
        parts.append(
            section(
                "Status codes",
                table(
                    ("status", "responses", "share of responses"),
                    [
                        (code, fmt.count(n), fmt.percent(n / total if total else None))
                        for code, n in sorted(codes.items())
                    ],
                ),
                level=3,
            )
        )
    classes = requests.get("failure_classes")
    if classes:
        parts.append(
            section(
                "Failures by class",
                table(("failure class", "requests"), [(name, fmt.count(n)) for name, n in sorted(classes.items())]),
                level=3,
            )
        )
    http2 = summary.get("http2")
    if isinstance(http2, Mapping):
        parts.append(section("HTTP/2", http2_line(http2) + ".", level=3))
    return parts


def _latency_rows(latency: Mapping[str, Any] | None) -> list[list[str]]:
    rows = []
    for label, key in LATENCY_ROWS:
        summary = _get(latency, key)
        if not isinstance(summary, Mapping) or not summary.get("count"):
            continue
        rows.append([label, fmt.count(summary.get("count")), *(fmt.ms(summary.get(k)) for k in LATENCY_KEYS)])
    return rows


def _breakdowns(summary: Mapping[str, Any]) -> list[str]:
    columns = ("sent", "responses", "failed", "responses/s", "p50 ms", "p95 ms", "p99 ms")

    def cells(entry: Mapping[str, Any]) -> list[str]:
        return [
            fmt.count(_get(entry, "requests", "sent")),
            fmt.count(_get(entry, "requests", "responses")),
            fmt.count(_get(entry, "requests", "failed")),
            fmt.rate(_get(entry, "throughput", "responses_per_s")),
            *(fmt.ms(_get(timed(entry), k)) for k in ("p50_ms", "p95_ms", "p99_ms")),
        ]

    tables = (  # heading, columns, rows, how many columns are aligned left
        (
            "Per scenario",
            ("scenario", "window (s)", *columns),
            [[str(s.get("name")), fmt.seconds(s.get("duration_s")), *cells(s)] for s in summary.get("scenarios") or []],
            1,
        ),
        (
            "Per tag",
            ("tag", "scenario", *columns),
            [[str(t.get("tag")), str(t.get("scenario")), *cells(t)] for t in summary.get("tags") or []],
            2,
        ),
        (
            "Checks",
            ("check", "scenario", "tag", "passes", "fails"),
            [
                [
                    str(c.get("name")),
                    str(c.get("scenario") or "-"),
                    str(c.get("tag") or "-"),
                    fmt.count(c.get("passes")),
                    fmt.count(c.get("fails")),
                ]
                for c in summary.get("checks") or []
            ],
            3,
        ),
    )
    return [section(title, table(head, rows, left=left), level=3) for title, head, rows, left in tables if rows]


def _results(run: StoredRun, charts: Mapping[str, str]) -> str:
    summary = run.summary
    throughput = summary.get("throughput")
    parts = []
    stages = stage_rows(run)
    if stages:
        parts.append(section("Per stage", table(STAGE_COLUMNS, stages, left=2), stage_note(run), level=3))
    resources = resource_rows(run)
    if resources:
        parts.append(section("Resource use", table(RESOURCE_COLUMNS, resources), level=3))
    generators = generator_rows(summary)
    if generators:
        parts.append(section("Per generator", table(GENERATOR_COLUMNS, generators, left=2), level=3))
    if isinstance(throughput, Mapping):
        tokens = bool(_get(summary, "requests", "token_streams"))
        goodput = bool(summary.get("goodput"))
        parts.append(
            section(
                "Throughput",
                table(
                    (
                        "window (s)",
                        "responses/s",
                        "successes/s",
                        "sent/s",
                        *(("output tokens/s",) if tokens else ()),
                        *(("good/s (goodput bounds)",) if goodput else ()),
                    ),
                    [
                        [
                            fmt.seconds(throughput.get("window_s")),
                            fmt.rate(throughput.get("responses_per_s")),
                            fmt.rate(throughput.get("successes_per_s")),
                            fmt.rate(throughput.get("sent_per_s")),
                            *((fmt.rate(throughput.get("output_tokens_per_s")),) if tokens else ()),
                            *((fmt.rate(throughput.get("good_per_s")),) if goodput else ()),
                        ]
                    ],
                    left=0,
                ),
                level=3,
            )
        )
    parts += _requests(summary)
    latency_rows = _latency_rows(summary.get("latency"))  # those with samples
    if latency_rows:
        parts.append(section("Latency", table(LATENCY_COLUMNS, latency_rows), level=3))
    parts += _breakdowns(summary)
    if charts:
        line = timeline(run)
        note = line.partial_note() if line else ""
        parts.append(
            section("Charts", "\n\n".join(f"![{title}]({path})" for title, path in charts.items()), note, level=3)
        )
    if not parts:
        parts.append("The record holds no result.")
    return section("Results", *parts)


def findings_text(findings: Sequence[Mapping[str, Any]]) -> str:
    """findings_text lists diagnosis findings (severity, kind, message) or says there were none."""
    if not findings:
        return "Nothing limited the run (no finding)."
    return bullets(
        f"**{f.get('severity', 'info')}** ({f.get('kind')}): {f.get('message') or f.get('text')}" for f in findings
    )


def render_run_md(run: StoredRun, charts: Mapping[str, str] | None = None) -> str:
    """render_run_md is report.md of ``run``: ``charts`` maps each chart's title to its path
    relative to the report (surge.present.charts); every number comes from ``run.summary``."""
    summary, meta = run.summary, run.meta
    title = f"# Load test report: {meta.get('name') or run.run_id or 'run'}\n"
    findings = summary.get("findings")
    limitations = run_limitations(summary)
    parts = [
        title,
        verdict_md(run_verdict(summary), [("record", record_state(summary))]),
        _method(run),
        _results(run, charts or {}),
        section(
            "Findings",
            findings_text(findings or [])
            if findings is not None
            else "No diagnosis in this record (an import, or a run that measured nothing).",
        ),
        section("Limitations", bullets(limitations) or "No limitation found in the record."),
    ]
    notes = summary.get("notes") or []
    if notes:
        parts.append(section("Notes", bullets(str(n) for n in notes)))
    parts.append("---\n\nWritten by surge from the run's record; docs/reports.md says where each number comes from.\n")
    return "\n".join(parts)
