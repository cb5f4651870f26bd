"""experiment_page: an experiment's report.html from its experiment.json document (and its runs'
records, for what the document does not hold): heading, the runs, the kind's charts and tables,
the findings."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from surge.analysis.describe import Description
from surge.experiments.figures import FIGURE_TITLES
from surge.experiments.show import STAT_COLUMNS, cell, heading
from surge.experiments.sweep import failure_classes_text, offered_text
from surge.history.stored import StoredRun
from surge.report.html.experiment_charts import CHARTS
from surge.report.html.page import chart_div, page
from surge.report.html.tables import esc, findings_list, key_values, ms, num, pct, section, table, verdict


def _runs_table(document: Mapping[str, Any], runs: list[StoredRun]) -> str:
    stored = {r.run_id: r for r in runs}
    rows = []
    for entry in document.get("runs") or []:
        f = entry.get("figures") or {}
        run = stored.get(str(entry.get("run_id") or ""))
        ended = "complete" if entry.get("complete") else f"incomplete: {entry.get('stop_reason') or 'no result'}"
        rows.append([entry.get("label", ""), entry.get("role", ""), str(entry.get("run_id") or "")[:8],
                     *(cell(f.get(k), k) for k in ("responses_per_s", "p50_ms", "p95_ms", "p99_ms", "failure_rate")),
                     verdict(str(entry.get("verdict") or "none")), ended,
                     (run.directory if run and run.directory else entry.get("directory")) or ""])
    columns = ("run", "role", "id", "req/s", "p50 ms", "p95 ms", "p99 ms", "failure rate", "verdict", "ended",
               "directory")
    return table(columns, rows, left=3, caption=f"Runs ({len(rows)})")


def _statistics(analysis: Mapping[str, Any]) -> str:
    rows = []
    for figure, data in (analysis.get("statistics") or {}).items():
        d = Description.from_dict(data)
        rows.append([FIGURE_TITLES.get(figure, figure), str(d.n),
                     *(cell(v, figure, d.sd) for v in (d.mean, d.sd, d.ci_low, d.ci_high, d.median, d.min, d.max)),
                     "-" if d.cv is None else f"{d.cv:.1%}"])
    level = f"{analysis.get('confidence', 0.95):.0%}"
    return table(STAT_COLUMNS, rows, caption=f"Statistics over the runs (CI: {level} on the mean, Student's t)")


def _sweep(analysis: Mapping[str, Any]) -> str:
    model = analysis.get("model", "closed")
    rows = [[offered_text(model, lv["load"]), num(lv["responses_per_s"]), num(lv["successes_per_s"]),
             pct(lv.get("success_rate")), ms(lv["p50_ms"]), ms(lv["p95_ms"]), ms(lv["p99_ms"]),
             failure_classes_text(lv["failure_classes"]), lv["zone"], lv.get("zone_reason", "")]
            for lv in analysis.get("levels") or []]
    columns = ("level", "throughput/s", "goodput/s", "success", "p50 ms", "p95 ms", "p99 ms", "failures", "zone",
               "why")
    usl = analysis.get("usl") or {}
    fit = None if not usl else usl.get("refused") or \
        f"σ {usl['sigma']:.4f}, κ {usl['kappa']:.4f}, λ {usl['lambda']:,.1f}/s, N* {usl['peak_n']:,.1f}, " \
        f"R² {usl['r_squared']:.3f}"
    peak, knee = analysis.get("peak") or {}, analysis.get("knee") or {}
    return table(columns, rows, left=0, caption="Levels") + key_values([
        ("peak", f"{peak['throughput']:,.1f}/s at {offered_text(model, peak['load'])}" if peak else None),
        ("knee", f"{knee['throughput']:,.1f}/s at {offered_text(model, knee['load'])}" if knee.get("load") is not None
         else knee.get("reason")), ("USL", fit)])


def _capacity(analysis: Mapping[str, Any]) -> str:
    rows = [[str(s["number"]), s["phase"], num(s["rate"]), num(s.get("achieved_per_s")), ms(s.get("p95_ms")),
             ms(s.get("p99_ms")), pct(s.get("failure_rate"), ".3%"), pct(s.get("late_share"), ".1%"),
             verdict("pass" if s["passed"] else "fail"), "; ".join(s["evidence"] if s["passed"] else s["failures"])]
            for s in analysis.get("steps") or []]
    columns = ("step", "phase", "offered/s", "achieved/s", "p95 ms", "p99 ms", "failure rate", "late", "verdict", "why")
    rate = analysis.get("rate")
    return key_values([("capacity", "none found" if rate is None else f"{rate:,.1f}/s"),
                       ("bracket high", num(analysis.get("high"))), ("confirmed", analysis.get("confirmed")),
                       ("stop reason", analysis.get("stop_reason")), *(("note", n) for n in analysis.get("notes") or [])]) \
        + table(columns, rows, left=2, caption="Steps")


def _compare(analysis: Mapping[str, Any]) -> str:
    parts = []
    for pair in analysis.get("comparisons") or []:
        rows = []
        for c in pair["figures"]:
            f = c["figure"]
            sides = []
            for side in (c["reference"], c["variant"]):
                sd = None if side is None else side.get("sd")
                sides += ["-", "-"] if side is None else [cell(side["mean"], f, sd), "-" if side["ci_low"] is None else
                                                          f"{cell(side['ci_low'], f, sd)} – {cell(side['ci_high'], f, sd)}"]
            ratio_ci = c.get("ratio_ci") or [None, None]
            rows.append([FIGURE_TITLES.get(f, f), *sides, num(c.get("ratio"), ".3f"),
                         "-" if ratio_ci[0] is None else f"{ratio_ci[0]:.3f} – {ratio_ci[1]:.3f}",
                         num(c.get("welch_p"), ".3g"), num(c.get("mann_whitney_p"), ".3g"), verdict(c["verdict"])])
        ref, var = pair["reference"], pair["variant"]
        parts.append(table(("figure", f"{ref} mean", f"{ref} CI", f"{var} mean", f"{var} CI", "ratio", "ratio CI",
                            "Welch p", "MW p", "verdict"), rows,
                           caption=f"{var} against {ref} (reference), α = {pair['alpha']:g}"))
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
    charts = CHARTS[kind](document) if kind in CHARTS and analysis else []
    head = f"<h1>surge report: {esc(kind)} {esc(document.get('name', ''))}</h1>\n" \
           f'<p class="sub">{esc(heading(document))}</p>\n'
    if not document.get("complete"):
        why = document.get("stop_signal") or "it did not finish"
        head += f'<p class="banner">Incomplete experiment ({esc(why)}): the analysis covers the completed runs.</p>\n'
    analysis_html = (TABLES[kind](analysis) if kind in TABLES and analysis else
                     '<p class="note">No analysis in this record.</p>\n')
    body = head + section("Charts", "".join(chart_div(c["id"], c["title"]) for c in charts)
                          or '<p class="note">No charts: the record holds no analysis.</p>\n') + \
        section("Analysis", analysis_html) + section("Runs", _runs_table(document, runs)) + \
        section("Findings", findings_list(document.get("findings") or [])) + \
        section("Method", key_values([("command", document.get("command")), ("started", document.get("started_at")),
                                      ("ended", document.get("ended_at")),
                                      ("surge version", document.get("surge_version")),
                                      ("results directory", document.get("directory"))]))
    return page(f"surge report {kind} {document.get('name', '')}", body, charts)
