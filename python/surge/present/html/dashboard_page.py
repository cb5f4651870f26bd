"""dashboard_page: the live dashboard's page (docs/dashboard.md) and what it shows, from the run session's
interval stream and an experiment's document as they grow: an engine interval reduced to what
the charts and the headline need (``reduce_interval``: its timeseries.csv rows and a few
counts), a run's view so far (``RunView``: the same chart specs report.html draws, built by the
one chart description, ``surge.present.run_charts``, from the rows so far; at the end from the
run's summary too, with its verdict and thresholds; its thresholds judged so far,
``LiveThresholds``) and an experiment's (``experiment_view``: its runs as they complete, its
kind's charts from its analysis so far). Every value is JSON-able; the tables
and the verdict are report.html's own pieces (``surge.present.html.tables``), already HTML."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hdrh.histogram import HdrHistogram  # type: ignore[import-untyped]

from surge.plan.thresholds import Threshold, Verdict, evaluate, percentile_key
from surge.present import numbers as fmt
from surge.present.experiment_charts import experiment_charts
from surge.present.html.experiment_page import cell
from surge.present.html.page import CSP, asset, data_block
from surge.present.html.run_page import run_charts
from surge.present.html.tables import esc, key_values, table, verdict, verdict_block
from surge.present.html.uplot import specs
from surge.present.run_charts import UNITS_PER_MS, time_charts
from surge.present.timeline import Rule, Timeline, threshold_rules
from surge.present.verdict import experiment_verdict, run_verdict
from surge.record.stored import StoredRun
from surge.record.timeseries import FAILURE_COLUMNS, csv_text, interval_rows

FIGURES = ("responses_per_s", "p50_ms", "p95_ms", "p99_ms", "failure_rate")
"""FIGURES are the key figures the dashboard lists for each completed run of an experiment."""


def reduce_interval(interval: Mapping[str, Any]) -> dict[str, Any]:
    """reduce_interval is an engine interval document as the dashboard needs it: its index and
    end, its timeseries.csv rows (``rows``: ``all`` then one per scenario, as the record writes
    them, without the CPU and target columns), the requests it sent and failed, its responses/s
    and its p95 (ms); the histogram and the rest of the document are left out."""
    requests = interval["requests"]
    return {
        "index": interval["index"],
        "end_s": interval["end_s"],
        "rows": interval_rows(dict(interval)),
        "sent": requests["sent"],
        "failed": requests["failed"],
        "responses_per_s": interval["responses_per_s"],
        "p95_ms": interval["latency"]["all"]["p95_ms"],
    }


PRESENCE_COLUMNS = (*FAILURE_COLUMNS, "interrupted", "shed", "offered_rate_per_s")
"""PRESENCE_COLUMNS are the columns whose values anywhere in the run decide which series the time
charts draw (a failure class, shed, the offered rate): ``RunView`` carries their maxima so far
into the window it draws an interval from."""


def _shape(charts: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """_shape is what a chart spec is besides its data: id, axes, series (label, style, axis),
    threshold lines."""
    return [
        (
            c["id"],
            c.get("ylabel"),
            c.get("y2label"),
            tuple((s["label"], s.get("style"), s.get("axis")) for s in c["series"]),
            repr(c.get("rules")),
        )
        for c in charts
    ]


def _line(rows: list[dict[str, Any]], scenarios: list[list[dict[str, Any]]], ends: list[float]) -> Timeline:
    """_line is the Timeline of ``rows`` (whole intervals, ending at ``ends``) and their scenario rows."""
    by_name: dict[str, list[dict[str, Any]]] = {}
    for interval in scenarios:
        for row in interval:
            by_name.setdefault(str(row["scenario"]), []).append(row)
    lengths = [end - start for start, end in zip([0.0, *ends], ends, strict=False)]
    return Timeline(rows, by_name, ends, [n if n > 0 else 1.0 for n in lengths], None)


def value_at_percentile(histogram: HdrHistogram, q: float) -> float:
    """value_at_percentile is ``histogram.get_value_at_percentile(q)``, the same value found by
    a cumulative sum in numpy instead of a walk over its counters in Python (~0.06 ms, where the
    walk takes 0.3 ms for latencies up to ~20 ms and 2.4 ms up to 5 s: the live thresholds read
    it every interval)."""
    target = histogram.get_target_count_at_percentile(q)
    counts = np.ctypeslib.as_array(histogram.counts)[: histogram.encoder.payload.counts_len]
    index = int(np.searchsorted(np.cumsum(counts), target, side="left"))
    if index >= len(counts):
        return 0.0
    value = histogram.get_value_from_index(index)
    return float(histogram.get_highest_equivalent_value(value) if q else histogram.get_lowest_equivalent_value(value))


LIVE_COLUMNS = ("threshold", "scope", "the run so far", "verdict so far")
"""LIVE_COLUMNS are the columns of the thresholds' table while a run sends."""

LATER = "judged at the end"
"""LATER is the verdict shown while the run sends for a threshold the interval stream cannot judge
(a scenario's or a tag's, a latency other than every response's, checks)."""


class LiveThresholds:
    """LiveThresholds judges a run's thresholds on the run so far, as its intervals arrive, with
    the rules the run's end will apply (``surge.plan.thresholds.evaluate``) to a result document
    of the intervals so far: requests summed, latency percentiles from the intervals' histograms
    merged (HdrHistogram ``add``), min, max and mean from their summaries, responses/s over the
    time so far. Only the run's own scope (no scenario, no tag) and every response's latency can
    be judged so; the others are LATER. The verdict of record is the one at the end."""

    def __init__(self, thresholds: Sequence[Threshold]) -> None:
        self.thresholds = list(thresholds)
        self.live = [
            t
            for t in self.thresholds
            if t.tag is None
            and t.scenario is None
            and t.stat != "checks"
            and (not t.is_latency() or t.metric == "latency")
        ]
        self.histogram: HdrHistogram | None = None
        self.requests: dict[str, float] = {}
        self.count, self.total_ms, self.min_ms, self.max_ms, self.end_s = 0.0, 0.0, math.inf, 0.0, 0.0

    def add(self, interval: Mapping[str, Any]) -> None:
        """add counts one engine interval document into the run so far."""
        if not self.live:
            return
        for key in ("sent", "responses", "succeeded", "failed", "interrupted", "dropped"):
            self.requests[key] = self.requests.get(key, 0.0) + float(interval["requests"].get(key, 0) or 0)
        latency = interval["latency"]["all"]
        if latency.get("count"):
            self.count += latency["count"]
            self.total_ms += latency["mean_ms"] * latency["count"]
            self.min_ms, self.max_ms = min(self.min_ms, latency["min_ms"]), max(self.max_ms, latency["max_ms"])
        self.end_s = float(interval["end_s"])
        if any(t.stat == "p" for t in self.live) and interval.get("latency_histogram"):
            histogram = HdrHistogram.decode(interval["latency_histogram"])
            if self.histogram is None:
                self.histogram = histogram
            else:
                self.histogram.add(histogram)

    def document(self) -> dict[str, Any]:
        """document is the run so far as the result document thresholds read."""
        latency: dict[str, Any] = {"count": self.count}
        if self.count:
            latency.update(min_ms=self.min_ms, max_ms=self.max_ms, mean_ms=self.total_ms / self.count)
        for t in self.live:
            if t.stat == "p" and self.histogram is not None and t.quantile is not None:
                latency[percentile_key(t.quantile)] = value_at_percentile(self.histogram, t.quantile) / UNITS_PER_MS
        return {
            "latency": {"all": latency},
            "requests": self.requests,
            "throughput": {"responses_per_s": self.requests.get("responses", 0.0) / self.end_s if self.end_s else 0.0},
            "duration_s": self.end_s,
        }

    def verdicts(self) -> list[Verdict]:
        """verdicts are the live thresholds' verdicts on the run so far."""
        return evaluate(self.live, self.document()) if self.live else []

    def rules(self, verdicts: list[Verdict]) -> list[Rule]:
        """rules are the lines the judged thresholds draw on the time charts, coloured by the
        verdict so far (``surge.present.timeline.threshold_rules``, as at the end)."""
        return threshold_rules(
            {"thresholds": [{"expr": v.threshold.expr, "passed": v.status == "pass"} for v in verdicts]}
        )

    def table(self, verdicts: list[Verdict]) -> str:
        """table is every threshold with its value and verdict so far (LATER for those the
        stream cannot judge), as report.html's table."""
        if not self.thresholds:
            return ""
        judged = {id(v.threshold): v for v in verdicts}
        rows = []
        for t in self.thresholds:
            v = judged.get(id(t))
            status = LATER if v is None else "no data yet" if v.status == "no-data" else v.status
            rows.append([t.expr, t.scope(), v.observed_text() if v is not None else "-", verdict(status)])
        return table(
            LIVE_COLUMNS, rows, left=2, caption="Thresholds (the run so far; the verdict of record is at its end)"
        )


@dataclass
class RunView:
    """RunView: one run as the dashboard shows it: its ``label`` (the experiment's role, or the
    test's name), ``planned_s``, the unmeasured ``phases`` that ended (name -> sent, failed), its
    reduced intervals' rows, the running totals (``sent``, ``failed``) and the latest interval,
    and once ended its ``summary`` (the run's result document with ``meta``) and ``report`` (its
    report.html's path, None when it saved none).

    Its time charts are report.html's (``surge.present.run_charts.time_charts``), kept as specs
    and grown by one point per interval at a cost that does not grow with the run: each interval
    is drawn by the same description from a window of two intervals (the previous one carrying
    the PRESENCE_COLUMNS' maxima so far, so the window draws the series the whole run would) and
    its last point appended; when the window's charts differ in shape (a failure class seen for
    the first time), they are built again from every interval."""

    label: str
    planned_s: float
    phases: dict[str, dict[str, int]] = field(default_factory=dict)
    rows: list[dict[str, Any]] = field(default_factory=list)
    scenario_rows: list[list[dict[str, Any]]] = field(default_factory=list)
    ends: list[float] = field(default_factory=list)
    intervals: int = 0
    sent: int = 0
    failed: int = 0
    latest: dict[str, Any] | None = None
    summary: dict[str, Any] | None = None
    report: str | None = None
    time_charts: list[dict[str, Any]] = field(default_factory=list)
    seen: dict[str, float] = field(default_factory=dict)
    judge: LiveThresholds | None = None
    rules: list[Rule] = field(default_factory=list)
    thresholds: str = ""

    def add_phase(self, name: str, result: Mapping[str, Any]) -> None:
        """add_phase notes an unmeasured phase's requests (setup, teardown)."""
        requests = result.get("requests") or {}
        self.phases[name] = {"sent": int(requests.get("sent", 0)), "failed": int(requests.get("failed", 0))}

    def add_interval(self, interval: Mapping[str, Any]) -> dict[str, list[Any]] | None:
        """add_interval judges the thresholds on the run so far with the engine's ``interval``
        (``judge``: the table and the lines they draw) and adds it, reduced (``add``)."""
        if self.judge is not None:
            self.judge.add(interval)
            verdicts = self.judge.verdicts()
            self.rules, self.thresholds = self.judge.rules(verdicts), self.judge.table(verdicts)
        return self.add(reduce_interval(interval))

    def add(self, reduced: Mapping[str, Any]) -> dict[str, list[Any]] | None:
        """add appends a reduced interval (``reduce_interval``) and grows the time charts by its
        point: it returns each chart's new column (id -> [x, each series' value]), or None when
        the charts were built again (their shape changed, or this is the first interval)."""
        row, *scenarios = reduced["rows"]
        window: Timeline | None = None
        if self.rows:
            carried = dict(self.rows[-1])
            for name, value in self.seen.items():
                carried[name] = value
            window = _line([carried, row], [self.scenario_rows[-1], scenarios], [*self.ends[-1:], float(row["time_s"])])
        self.rows.append(row)
        self.scenario_rows.append(scenarios)
        self.ends.append(float(row["time_s"]))
        for name in PRESENCE_COLUMNS:
            value = row.get(name)
            if isinstance(value, (int, float)) and value > self.seen.get(name, 0):
                self.seen[name] = value
        self.intervals += 1
        self.sent += int(reduced["sent"])
        self.failed += int(reduced["failed"])
        self.latest = {k: reduced[k] for k in ("index", "end_s", "responses_per_s", "p95_ms")}
        tail = specs(time_charts(window, self.rules)) if window is not None else []
        if window is None or _shape(tail) != _shape(self.time_charts):
            self.time_charts = specs(time_charts(_line(self.rows, self.scenario_rows, self.ends), self.rules))
            return None
        column: dict[str, list[Any]] = {}
        for chart, new in zip(self.time_charts, tail, strict=True):
            chart["x"].append(new["x"][-1])
            for series, grown in zip(chart["series"], new["series"], strict=True):
                series["values"].append(grown["values"][-1])
            column[chart["id"]] = [new["x"][-1], *(s["values"][-1] for s in new["series"])]
        return column

    def charts(self) -> list[dict[str, Any]]:
        """charts are report.html's chart specs of the run so far: the time charts while it runs;
        once ended, built from its record as report.html's are (the partial last interval left
        out, the latency spectrum, status codes, thresholds drawn with their verdicts)."""
        if self.summary is None:
            return self.time_charts
        every = [r for row, scenarios in zip(self.rows, self.scenario_rows, strict=True) for r in (row, *scenarios)]
        return run_charts(StoredRun(self.summary, timeseries=csv_text(every)))

    def totals(self) -> dict[str, Any]:
        """totals are the run's requests sent and failed so far, with the last interval's p95 and
        responses/s; once ended, the summary's (the whole run's p95 and responses/s)."""
        s = self.summary
        if s is None:
            latest = self.latest or {}
            return {
                "sent": self.sent,
                "failed": self.failed,
                "p95_ms": latest.get("p95_ms"),
                "responses_per_s": latest.get("responses_per_s"),
            }
        requests, latency = s.get("requests") or {}, (s.get("latency") or {}).get("all") or {}
        return {
            "sent": requests.get("sent"),
            "failed": requests.get("failed"),
            "p95_ms": latency.get("p95_ms"),
            "responses_per_s": (s.get("throughput") or {}).get("responses_per_s"),
        }

    def headline(self) -> str:
        """headline is the run's key/value table (report.html's): its label, progress, unmeasured
        phases and totals, written by the number formatter."""
        totals, live = self.totals(), self.summary is None
        elapsed = (self.latest or {}).get("end_s")
        p95, rate = ("p95 ms (last interval)", "responses/s (last interval)") if live else ("p95 ms", "responses/s")
        return key_values(
            [
                ("run", self.label),
                ("elapsed s", f"{fmt.seconds(elapsed)} of {fmt.seconds(self.planned_s)}" if live else None),
                *(
                    (f"{name} requests", f"{fmt.count(p['sent'])} ({fmt.count(p['failed'])} failed)")
                    for name, p in self.phases.items()
                ),
                ("requests sent", fmt.count(totals["sent"])),
                ("failed", fmt.count(totals["failed"])),
                (rate, fmt.rate(totals["responses_per_s"])),
                (p95, fmt.ms(totals["p95_ms"])),
            ]
        )

    def to_json(self) -> dict[str, Any]:
        """to_json is the run's view: its totals and headline, its charts, and once ended its
        ``verdict`` (report.html's block, thresholds with their verdicts included) and ``report``."""
        view: dict[str, Any] = {
            "label": self.label,
            "planned_s": self.planned_s,
            "phases": self.phases,
            "intervals": self.intervals,
            "latest": self.latest,
            "ended": self.summary is not None,
            "charts": self.charts(),
            "totals": self.totals(),
            "headline": self.headline(),
        }
        if self.summary is not None:
            view["verdict"] = verdict_block(run_verdict(self.summary))
            view["report"] = self.report
        else:
            view["thresholds"] = self.thresholds
        return view


RUN_COLUMNS = ("run", "role", "req/s", "p50 ms", "p95 ms", "p99 ms", "failure rate", "verdict")
"""RUN_COLUMNS are the columns of an experiment's runs table on the dashboard."""


def experiment_view(document: Mapping[str, Any], ended: bool) -> dict[str, Any]:
    """experiment_view is an experiment as the dashboard shows it, from its document as it
    stands: kind, name, its completed runs (``runs``: label and FIGURES; ``table``: report.html's
    runs columns), and its kind's charts (report.html's: the curve, steps or variants; none until
    analysed); once the command ``ended``, its verdict too."""
    runs = document.get("runs") or []
    view: dict[str, Any] = {
        "kind": document.get("kind"),
        "name": document.get("name"),
        "runs": [
            {"label": r.get("label"), "figures": {k: (r.get("figures") or {}).get(k) for k in FIGURES}} for r in runs
        ],
        "table": table(
            RUN_COLUMNS,
            (
                [
                    r.get("label", ""),
                    r.get("role", ""),
                    *(cell((r.get("figures") or {}).get(k), k) for k in FIGURES),
                    verdict(str(r.get("verdict") or "none")),
                ]
                for r in runs
            ),
            left=2,
            caption=f"{document.get('kind')} {document.get('name')}: runs completed ({len(runs)})",
        ),
        "charts": specs(experiment_charts(document)),
    }
    if ended:
        view["verdict"] = verdict_block(experiment_verdict(document))
    return view


DASHBOARD_CSP = CSP.replace("connect-src 'none'", "connect-src 'self'")
"""DASHBOARD_CSP is report.html's Content-Security-Policy less one rule: the page may connect to
the server it came from (its event stream); nothing else, from anywhere, is loaded."""


def dashboard_page() -> str:
    """dashboard_page is the dashboard's page: report.html's style, uPlot and report.js (which
    draws each chart spec it is given, evaluated again for each new state) inline, and
    dashboard.js, which follows /events and keeps what it shows in ``window.surgeDashboard``."""
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            f'<meta http-equiv="Content-Security-Policy" content="{DASHBOARD_CSP}">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            "<title>surge dashboard</title>",
            f"<style>{asset('vendor/uPlot.min.css')}</style>",
            f"<style>{asset('assets/report.css')}</style>",
            "</head><body>",
            "<h1>surge dashboard</h1>",
            f'<p class="sub" id="status">{esc("connecting…")}</p>',
            '<div id="verdict"></div>',
            '<div id="report"></div>',
            '<div id="headline"></div>',
            '<div id="thresholds"></div>',
            '<div id="experiment"></div>',
            '<div id="experiment-charts"></div>',
            "<h2>Charts of the current run</h2>",
            '<div id="charts"></div>',
            f'<script type="application/json" id="surge-data">{data_block({"charts": []})}</script>',
            f"<script>{asset('vendor/uPlot.iife.min.js')}</script>",
            f'<script type="text/plain" id="surge-report-js">{asset("assets/report.js")}</script>',
            f"<script>{asset('assets/dashboard.js')}</script>",
            "</body></html>",
            "",
        ]
    )
