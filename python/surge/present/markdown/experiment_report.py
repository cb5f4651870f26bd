"""report.md for an experiment (docs/reports.md): executive summary, method, the runs, then per
kind the statistics (repeat, stats), the curve with zones, peak, knee and USL fit (sweep), the
search steps and the rate found (capacity), or the variants side by side with CIs and verdicts
(compare); findings, limitations and charts. Every number comes from experiment.json (its
``runs`` entries and ``analysis``); the runs' records add only where they ran (targets,
environment)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from surge.present import numbers as fmt
from surge.present.experiment_cells import ID_CHARS, STAT_COLUMNS
from surge.present.limitations import experiment_limitations
from surge.present.markdown.run_report import _environment, bullets, section, table, verdict_md
from surge.present.report_source import ExperimentSource
from surge.present.verdict import experiment_verdict, parameter_rows
from surge.record.figures import FIGURE_TITLES, KEY_FIGURES


def title(figure: str) -> str:
    """title is a figure's name in a table: FIGURE_TITLES' short name, or a threshold's key."""
    return FIGURE_TITLES.get(figure, figure)


def _runs_table(runs: Sequence[Mapping[str, Any]]) -> str:
    rows = []
    for entry in runs:
        figures = entry.get("figures") or {}
        state = "complete" if entry.get("complete") else f"incomplete ({entry.get('stop_reason') or 'no result'})"
        rows.append(
            [
                str(entry.get("label") or entry.get("position")),
                str(entry.get("run_id") or "")[:ID_CHARS],
                state,
                *(fmt.figure(figures.get(k), k) for k in KEY_FIGURES),
                str(entry.get("verdict") or "none"),
            ]
        )
    return section(
        f"Runs ({len(runs)})",
        table(("run", "id", "record", *(title(k) for k in KEY_FIGURES), "verdict"), rows, left=3),
        level=3,
    )


def statistics_table(statistics: Mapping[str, Mapping[str, Any]], confidence: Any) -> str:
    """statistics_table is one row per figure: n, mean, SD, CI, median, min, max, CV."""
    rows = []
    for name, s in statistics.items():
        rows.append(
            [
                title(name),
                fmt.count(s.get("n")),
                *(
                    fmt.figure_with_spread(s.get(k), name, s.get("sd"))
                    for k in ("mean", "sd", "ci_low", "ci_high", "median", "min", "max")
                ),
                fmt.percent(s.get("cv")),
            ]
        )
    level = fmt.level(confidence)
    return section(
        f"Statistics over the runs ({level} confidence interval of the mean)", table(STAT_COLUMNS, rows), level=3
    )


def _repeat(analysis: Mapping[str, Any]) -> str:
    statistics = analysis.get("statistics") or {}
    left_out = analysis.get("left_out") or []
    body = statistics_table(statistics, analysis.get("confidence"))
    if left_out:
        body += "\n" + bullets(f"left out: {item}" for item in left_out)
    return body


def _load_text(model: Any, load: Any) -> str:
    return f"{load:g} VUs" if model == "closed" else f"{load:g}/s"


def _sweep(analysis: Mapping[str, Any]) -> str:
    model = analysis.get("model")
    rows = [
        [
            _load_text(model, lv.get("load")),
            *(
                fmt.figure(lv.get(k), k)
                for k in (
                    "responses_per_s",
                    "successes_per_s",
                    "success_rate",
                    "p50_ms",
                    "p95_ms",
                    "p99_ms",
                    "failure_rate",
                )
            ),
            str(lv.get("zone")),
            str(lv.get("zone_reason") or ""),
        ]
        for lv in analysis.get("levels") or []
    ]
    curve = section(
        f"Curve ({len(rows)} of {len(analysis.get('planned') or [])} levels measured)",
        table(
            ("load", "req/s", "goodput/s", "success rate", "p50 ms", "p95 ms", "p99 ms", "failure rate", "zone", "why"),
            rows,
        ),
        level=3,
    )
    peak, knee, usl = analysis.get("peak") or {}, analysis.get("knee") or {}, analysis.get("usl") or {}
    points = [
        ("peak load", _load_text(model, peak["load"]) if peak.get("load") is not None else "-"),
        ("peak req/s", fmt.rate(peak.get("throughput"))),
        ("knee load", _load_text(model, knee["load"]) if knee.get("load") is not None else "-"),
        ("knee req/s", fmt.rate(knee.get("throughput"))),
    ]
    fit = []
    if "sigma" in usl:
        fit = [
            ("USL σ (contention)", fmt.general(usl["sigma"])),
            ("USL κ (coherency)", fmt.general(usl["kappa"])),
            ("USL λ (req/s per VU)", fmt.general(usl["lambda"])),
            ("USL N* (VUs)", fmt.general(usl.get("peak_n"))),
            ("USL peak req/s", fmt.rate(usl.get("peak_throughput"))),
            ("USL R²", fmt.general(usl.get("r_squared"))),
        ]
    elif usl.get("refused"):
        fit = [("USL fit", f"none: {usl['refused']}")]
    body = curve + "\n" + section("Peak, knee and USL fit", table(("item", "value"), points + fit), level=3)
    if analysis.get("stopped_early"):
        body += "\n" + f"The sweep stopped early: {analysis['stopped_early']}.\n"
    return body


def _capacity(analysis: Mapping[str, Any]) -> str:
    rows = [
        [
            fmt.count(s.get("number")),
            str(s.get("phase")),
            fmt.rate(s.get("rate")),
            "pass" if s.get("passed") else "fail",
            fmt.rate(s.get("achieved_per_s")),
            *(
                fmt.figure(s.get(k), k)
                for k in ("p50_ms", "p95_ms", "p99_ms", "failure_rate", "late_share", "dropped_share")
            ),
            "; ".join(s.get("failures") or []) or "-",
        ]
        for s in analysis.get("steps") or []
    ]
    steps = section(
        f"Search steps ({len(rows)})",
        table(
            (
                "step",
                "phase",
                "offered/s",
                "verdict",
                "achieved/s",
                "p50 ms",
                "p95 ms",
                "p99 ms",
                "failure rate",
                "late share",
                "dropped share",
                "why it failed",
            ),
            rows,
            left=1,
        ),
        level=3,
    )
    headline = [
        ("rate found (/s)", fmt.rate(analysis.get("rate"))),
        ("lowest failing rate (/s)", fmt.rate(analysis.get("high"))),
        ("confirmed", "yes" if analysis.get("confirmed") else "no"),
        ("stop reason", str(analysis.get("stop_reason") or fmt.MISSING)),
    ]
    body = steps + "\n" + section("Rate found", table(("item", "value"), headline), level=3)
    if analysis.get("notes"):
        body += "\n" + bullets(analysis["notes"])
    return body


def _compare(analysis: Mapping[str, Any]) -> str:
    estimates: Mapping[str, Mapping[str, Any]] = analysis.get("estimates") or {}
    rows = []
    for variant, by_figure in estimates.items():
        for name, e in by_figure.items():
            e = e or {"n": 0}  # no run of the variant has the figure (an import's tool did not report it)
            rows.append(
                [
                    str(variant),
                    title(name),
                    fmt.count(e.get("n")),
                    *(fmt.figure_with_spread(e.get(k), name, e.get("sd")) for k in ("mean", "sd", "ci_low", "ci_high")),
                ]
            )
    level = fmt.level(analysis.get("confidence"))
    body = section(
        f"Variants ({level} confidence intervals)",
        table(("variant", "figure", "n", "mean", "SD", "CI low", "CI high"), rows, left=2),
        level=3,
    )
    pairs = []
    for pair in analysis.get("comparisons") or []:
        for c in pair.get("figures") or []:
            ratio_ci = c.get("ratio_ci") or [None, None]
            pairs.append(
                [
                    f"{pair.get('variant')} vs {pair.get('reference')}",
                    title(str(c.get("figure"))),
                    fmt.general(c.get("ratio")),
                    fmt.general(ratio_ci[0]),
                    fmt.general(ratio_ci[1]),
                    fmt.general(c.get("welch_p")),
                    fmt.general(c.get("mann_whitney_p")),
                    str(c.get("verdict")),
                ]
            )
    body += "\n" + section(
        "Comparisons (ratio = variant mean / reference mean)",
        table(
            ("pair", "figure", "ratio", "ratio CI low", "ratio CI high", "Welch p", "Mann-Whitney p", "verdict"),
            pairs,
            left=2,
        ),
        level=3,
    )
    scaling = [str(s.get("text")) for s in analysis.get("scaling") or []]
    if scaling:
        body += "\n" + section("Scaling", bullets(scaling), level=3)
    return body


KINDS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "repeat": _repeat,
    "stats": _repeat,
    "sweep": _sweep,
    "capacity": _capacity,
    "compare": _compare,
}
"""KINDS render each kind's analysis sections (the verdict gives its answer: surge.present.verdict)."""


def _method(source: ExperimentSource) -> str:
    document = source.document
    parameters = document.get("parameters") or {}
    test = parameters.get("test") or {}
    first = source.runs[0].meta if source.runs else {}
    slo = (parameters.get("slo") or {}).get("conditions") or []
    rows = [
        ("kind", str(document.get("kind"))),
        ("name", str(document.get("name"))),
        ("test", str(test.get("test") or "-")),
        ("target", ", ".join(sorted({str(r.meta.get("target")) for r in source.runs if r.meta.get("target")})) or "-"),
        ("plan of the first run", str((first.get("plan") or {}).get("description") or "-")),
        ("SLO", "; ".join(str(c.get("expr")) for c in slo) or "-"),
        ("started at (UTC)", str(document.get("started_at") or "-")),
        ("ended at (UTC)", str(document.get("ended_at") or "-")),
        ("surge version", str(document.get("surge_version") or "-")),
        ("command", f"`{document['command']}`" if document.get("command") else "-"),
        ("environment", _environment(first.get("environment")) if first else "-"),
        ("experiment id", str(document.get("experiment_id") or "-")),
    ]
    listed = parameter_rows(parameters, skip=("test", "slo", "variants"))
    variants = [
        (
            f"variant {v.get('name')}",
            ", ".join(f"{k}={v[k]}" for k in ("url", "vus", "rate") if v.get(k))
            + "".join(f", {k}={x}" for k, x in (v.get("env") or {}).items()),
        )
        for v in parameters.get("variants") or []
    ]
    return section("Method", table(("item", "value"), rows + listed + variants, left=2))


def render_experiment_md(source: ExperimentSource, charts: Mapping[str, str] | None = None) -> str:
    """render_experiment_md is report.md of an experiment: ``charts`` maps each chart's title to
    its path relative to the report; every number comes from ``source.document``."""
    document = source.document
    runs = document.get("runs") or []
    analysis = document.get("analysis")
    kind = str(document.get("kind"))
    body = (
        KINDS[kind](analysis)
        if isinstance(analysis, Mapping) and kind in KINDS
        else "The experiment ended before its analysis."
    )
    complete = (
        "complete"
        if document.get("complete")
        else f"incomplete ({'stopped by ' + document['stop_signal'] if document.get('stop_signal') else 'ended early'})"
    )
    executive = [
        ("kind", kind),
        ("runs", fmt.count(len(runs))),
        ("complete runs", fmt.count(sum(1 for e in runs if e.get("complete")))),
        ("experiment", complete),
    ]
    limitations = experiment_limitations(document, source.runs)
    findings = [
        f"**{f.get('kind')}**: {f.get('text')}" + (f" ({f['advice']})" if f.get("advice") else "")
        for f in document.get("findings") or []
    ]
    parts = [
        f"# Experiment report: {kind} {document.get('name')}\n",
        verdict_md(experiment_verdict(document), executive, "item"),
        _method(source),
        section(
            "Results",
            _runs_table(runs),
            body,
            section("Charts", "\n\n".join(f"![{t}]({p})" for t, p in (charts or {}).items()), level=3)
            if charts
            else "",
        ),
        section("Findings", bullets(findings) or "No finding."),
        section("Limitations", bullets(limitations) or "No limitation found in the record."),
        "---\n\nWritten by surge from the experiment's record; docs/reports.md says where each number comes from.\n",
    ]
    return "\n".join(parts)
