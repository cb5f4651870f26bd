"""What report.md and report.html draw and tabulate over a run's time (docs/reports.md): which
intervals are whole (a last interval shorter than the others is partial: its VUs and rates are
not comparable, so the charts leave it out and say so), each scenario's load profile, the lines
thresholds draw on the charts they bound, the per-stage table of staged executors (from the
record's ``meta.plan.scenarios`` and its per-second intervals), the generator's and the
watched target's resource use, and a distributed run's generators. From the record alone;
both formats share it."""

from __future__ import annotations

import csv
import io
import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hdrh.histogram import HdrHistogram  # type: ignore[import-untyped]

from surge.history import StoredRun
from surge.plan.thresholds import ThresholdError, parse_threshold
from surge.present import numbers as fmt
from surge.record.timeseries import ALL_SCENARIOS, COLUMNS

PARTIAL_SHARE = 0.99
"""PARTIAL_SHARE: an interval shorter than this share of the run's full intervals is partial."""


def _float(text: Any) -> float | None:
    try:
        value = float(text) if text not in (None, "") else None
    except (TypeError, ValueError):
        return None
    return value if value is not None and math.isfinite(value) else None


@dataclass
class Timeline:
    """Timeline: a run's ``all`` rows of timeseries.csv and each scenario's, by interval, the
    ``ends`` of the intervals (s) and their ``lengths``; ``partial`` is the last interval's
    (start, end) when it is shorter than the others (left out of ``rows``), else None;
    ``load_end`` the end of the load (``duration_s``): the VUs counted at the end of an interval
    that ends there or later were counted after the load stopped, so no profile draws them."""

    rows: list[dict[str, str]]
    scenarios: dict[str, list[dict[str, str]]]
    ends: list[float]
    lengths: list[float]
    partial: tuple[float, float] | None
    load_end: float | None = None

    def during_load(self, values: list[float | None]) -> list[float | None]:
        """during_load is a VU count per interval, None where the interval ended after the load stopped."""
        if self.load_end is None:
            return values
        return [v if end < self.load_end - 1e-6 else None for v, end in zip(values, self.ends, strict=False)]

    def column(self, name: str) -> list[float | None]:
        """column is a column of the ``all`` rows as numbers (None where empty)."""
        return [_float(r.get(name)) for r in self.rows]

    def per_second(self, name: str) -> list[float | None]:
        """per_second is a count column over each interval's length."""
        return [None if v is None or n <= 0 else v / n for v, n in zip(self.column(name), self.lengths, strict=False)]

    def partial_note(self) -> str:
        """partial_note says which interval the charts leave out and why ("" when none)."""
        notes = []
        if self.partial is not None:
            start, end = self.partial
            notes.append(
                f"The last interval ({fmt.seconds(start)}–{fmt.seconds(end)} s, {fmt.seconds(end - start)} s "
                "long) was partial: the charts leave it out (its rates are not comparable with whole "
                "intervals); the tables count it."
            )
        if self.load_end is not None and self.ends and self.ends[-1] >= self.load_end - 1e-6:
            notes.append(
                f"The load stopped at {fmt.seconds(self.load_end)} s: the VUs counted at the end of an interval "
                "ending then or later are not drawn (they were counted after the load stopped)."
            )
        return " ".join(notes)


def timeline(run: StoredRun) -> Timeline | None:
    """timeline is ``run``'s intervals as the charts draw them, None when it has none."""
    every = list(csv.DictReader(io.StringIO(run.timeseries), fieldnames=COLUMNS))
    rows = [r for r in every if r.get("scenario") == ALL_SCENARIOS]
    if not rows:
        return None
    ends = [_float(r.get("time_s")) or 0.0 for r in rows]
    lengths = [end - start for start, end in itertools.pairwise([0.0, *ends])]
    partial = None
    if len(rows) > 1:
        full = max(lengths[:-1])
        if full > 0 and lengths[-1] < PARTIAL_SHARE * full:
            partial = (ends[-2], ends[-1])
            rows, ends, lengths = rows[:-1], ends[:-1], lengths[:-1]
    kept = set(ends)
    scenarios: dict[str, list[dict[str, str]]] = {}
    for r in every:
        name = str(r.get("scenario"))
        if name != ALL_SCENARIOS and (_float(r.get("time_s")) or 0.0) in kept:
            scenarios.setdefault(name, []).append(r)
    load_end = run.summary.get("duration_s")
    return Timeline(
        rows,
        scenarios,
        ends,
        [n if n > 0 else 1.0 for n in lengths],
        partial,
        float(load_end) if fmt.is_number(load_end) and load_end > 0 else None,
    )


def load_profiles(line: Timeline) -> tuple[str, list[tuple[str, list[float | None]]]]:
    """load_profiles are the load profiles the time charts draw on their right axis: the offered
    rate when the run had one (open model), else active VUs; one per scenario when the run has
    several (VUs by scenario; the total offered rate beside them in the open model)."""
    profiles: list[tuple[str, list[float | None]]] = []
    rate = line.column("offered_rate_per_s")
    if any(v is not None for v in rate):
        profiles.append(("offered rate /s", rate))
    if len(line.scenarios) > 1:
        by_end = {
            name: {_float(r.get("time_s")): _float(r.get("active_vus")) for r in rows}
            for name, rows in line.scenarios.items()
        }
        profiles += [
            (f"VUs {name}", line.during_load([by_end[name].get(end) for end in line.ends])) for name in line.scenarios
        ]
    elif not profiles:
        profiles.append(("active VUs", line.during_load(line.column("active_vus"))))
    label = (
        "offered rate /s"
        if profiles[0][0] == "offered rate /s" and len(profiles) == 1
        else "VUs"
        if not any(v is not None for v in rate)
        else "load (VUs, rate /s)"
    )
    return label, profiles


@dataclass(frozen=True)
class Rule:
    """Rule: a threshold drawn as a horizontal line at ``value`` on the chart it bounds
    (``chart`` ``latency`` for a latency statistic of every response, ``throughput`` for
    ``rate``), labelled with its expression, scope and verdict."""

    chart: str
    value: float
    label: str
    passed: bool


def threshold_rules(summary: Mapping[str, Any]) -> list[Rule]:
    """threshold_rules are the run's thresholds that bound a drawn figure: latency statistics of
    every response (ms) on the latency chart, ``rate`` (responses/s) on the throughput chart."""
    rules = []
    for t in summary.get("thresholds") or []:
        try:
            parsed = parse_threshold(str(t.get("expr") or ""))
        except ThresholdError:
            continue
        chart = (
            "latency"
            if parsed.is_latency() and parsed.metric == "latency"
            else "throughput"
            if parsed.stat == "rate"
            else None
        )
        if chart is None:
            continue
        scope = [f"{k} {t[k]}" for k in ("scenario", "tag") if t.get(k)]
        label = (
            f"{parsed.expr}{' [' + ', '.join(scope) + ']' if scope else ''} ({'pass' if t.get('passed') else 'fail'})"
        )
        rules.append(Rule(chart, parsed.limit, label, bool(t.get("passed"))))
    return rules


STAGE_COLUMNS = (
    "scenario",
    "stage",
    "from (s)",
    "to (s)",
    "target",
    "requests",
    "responses",
    "responses/s",
    "error rate",
    "p95 ms",
)
"""STAGE_COLUMNS are the per-stage table's columns."""


def _p95(lines: Sequence[str]) -> float | None:
    """_p95 is the p95 (ms) of the latency.hlog lines' histograms merged, None without any."""
    if not lines:
        return None

    merged = None
    for line in lines:
        try:
            histogram = HdrHistogram.decode(line.split(",", 3)[3])
        except Exception:  # an import or an old record may hold no valid histogram: no p95
            return None
        if merged is None:
            merged = histogram
        else:
            merged.add(histogram)
    return None if merged is None or merged.get_total_count() == 0 else merged.get_value_at_percentile(95.0) / 1000


def _stage_row(
    run: StoredRun,
    name: str,
    label: str,
    span: tuple[float, float],
    target: str,
    intervals: Sequence[Mapping[str, Any]],
    hlog: Mapping[float, str],
) -> list[str]:
    low, high = span
    inside = [iv for iv in intervals if low <= (iv.get("start_s", 0.0) + iv.get("end_s", 0.0)) / 2 < high]
    counts = {
        k: sum(int((iv.get("requests") or {}).get(k) or 0) for iv in inside)
        for k in ("sent", "responses", "succeeded", "failed")
    }
    length = sum(iv.get("end_s", 0.0) - iv.get("start_s", 0.0) for iv in inside)
    judged = counts["succeeded"] + counts["failed"]
    lines = [hlog[round(iv.get("start_s", 0.0), 3)] for iv in inside if round(iv.get("start_s", 0.0), 3) in hlog]
    return [
        name,
        label,
        fmt.seconds(low),
        fmt.seconds(high),
        target,
        fmt.count(counts["sent"]),
        fmt.count(counts["responses"]),
        fmt.rate(counts["responses"] / length if length > 0 else None),
        fmt.percent(counts["failed"] / judged if judged else None),
        fmt.ms(_p95(lines) if len(lines) == len(inside) else None),
    ]


def stage_note(run: StoredRun) -> str:
    """stage_note says what the per-stage figures count when the run has several scenarios."""
    schedule = (run.meta.get("plan") or {}).get("scenarios") or []
    if len(schedule) < 2:
        return ""
    return (
        "The run has several scenarios: each stage's requests, responses, error rate and p95 are those of every "
        "scenario during that stage's time span (the record's intervals are not split by scenario)."
    )


def stage_rows(run: StoredRun) -> list[list[str]]:
    """stage_rows are the per-stage table of the run's staged scenarios (ramping-vus,
    ramping-arrival-rate; ``meta.plan.scenarios``): per stage its time span, target (VUs or
    rate, from where the previous stage left it), the requests sent and responses in it, its
    responses/s, error rate (failed / succeeded + failed) and p95 (its intervals' histograms
    merged); an interval belongs to the stage its middle falls in. Then what came after the last
    stage (the drain). Empty for a run without stages (or a record that did not keep them)."""
    schedule = (run.meta.get("plan") or {}).get("scenarios") or []
    intervals = [iv for iv in run.summary.get("intervals") or [] if isinstance(iv, Mapping)]
    staged = [s for s in schedule if s.get("stages")]
    if not staged or not intervals:
        return []
    hlog = {}
    for line in run.hlog_lines:
        start = _float(line.split(",", 1)[0])
        if start is not None:
            hlog[round(start, 3)] = line
    rows = []
    last_end = 0.0
    for scenario in staged:
        name, t = str(scenario.get("name")), float(scenario.get("start_s") or 0.0)
        unit = "/s" if "arrival" in str(scenario.get("executor")) else " VUs"
        previous = scenario.get("start") or 0
        for number, stage in enumerate(scenario["stages"], 1):
            end = t + float(stage.get("duration_s") or 0.0)
            target = (
                f"{fmt.plain(previous)} → {fmt.plain(stage.get('target'))}{unit}"
                if previous != stage.get("target")
                else f"{fmt.plain(previous)}{unit} (hold)"
            )
            rows.append(_stage_row(run, name, str(number), (t, end), target, intervals, hlog))
            previous, t = stage.get("target"), end
        last_end = max(last_end, t)
    finish = max(iv.get("end_s", 0.0) for iv in intervals)
    if any((iv.get("start_s", 0.0) + iv.get("end_s", 0.0)) / 2 >= last_end for iv in intervals):
        owner = str(staged[0].get("name")) if len(staged) == 1 else "all"
        rows.append(
            _stage_row(
                run, owner, "after the stages", (last_end, finish + 1.0), "0 (ramp-down, drain)", intervals, hlog
            )
        )
    return rows


RESOURCE_COLUMNS = ("process", "CPU mean (cores)", "CPU max (cores)", "RSS max", "threads", "open files", "samples")
"""RESOURCE_COLUMNS are the resource table's columns."""


def resource_rows(run: StoredRun) -> list[list[str]]:
    """resource_rows are the generator's resource use (``generator``: CPU over the elapsed time,
    the busiest interval's CPU from timeseries.csv ``cpu_cores``, peak RSS, its event-loop
    threads and how busy the busiest was) and the watched target's (``target_process``, with
    --watch-pid: CPU mean and max, RSS, threads, open files); empty for an import."""
    summary = run.summary
    rows = []
    generator = summary.get("generator")
    if isinstance(generator, Mapping):
        cpu = generator.get("cpu") or {}
        used = [v for v in (cpu.get("user_s"), cpu.get("system_s")) if fmt.is_number(v)]
        elapsed = summary.get("elapsed_s")
        mean = sum(used) / elapsed if used and fmt.is_number(elapsed) and elapsed > 0 else None
        every = [_float(r.get("cpu_cores")) for r in run.interval_rows() if r.get("scenario") == "all"]
        peak = max((v for v in every if v is not None), default=None)
        busy = [b for b in generator.get("thread_busy") or [] if fmt.is_number(b)]
        rss = generator.get("max_rss_kib")
        threads = f"{fmt.count(len(busy))} event loops, busiest {fmt.percent(max(busy))} busy" if busy else fmt.MISSING
        rows.append(
            [
                "generator (surge)",
                fmt.cores(mean),
                fmt.cores(peak),
                fmt.mib(rss * 1024 if fmt.is_number(rss) else None),
                threads,
                f"limit {fmt.count(generator.get('open_file_limit'))}",
                fmt.count(len(every)),
            ]
        )
    target = summary.get("target_process")
    if isinstance(target, Mapping):
        rows.append(
            [
                f"target (pid {target.get('pid') or fmt.MISSING}, {target.get('name') or 'unnamed'})",
                fmt.cores(target.get("cpu_cores_mean")),
                fmt.cores(target.get("cpu_cores_max")),
                fmt.mib(target.get("rss_bytes_max")),
                fmt.count(target.get("threads_max")),
                fmt.count(target.get("open_files_max")),
                fmt.count(target.get("sample_count")),
            ]
        )
    return rows


GENERATOR_COLUMNS = (
    "generator",
    "node",
    "sent",
    "responses/s",
    "p50 ms",
    "p99 ms",
    "send lag p99 ms",
    "CPU µs/request",
    "busiest thread",
    "findings",
)
"""GENERATOR_COLUMNS are the per-generator table's columns (a distributed run)."""


def generator_rows(summary: Mapping[str, Any]) -> list[list[str]]:
    """generator_rows are a distributed run's generators (``distributed.parts``), one row each:
    its node, share sent, rate, latency, send lag, CPU per request, busiest thread and own
    findings, "lost" when it was; empty for a run on one machine."""
    parts = (summary.get("distributed") or {}).get("parts") or []
    return [
        [
            str(p.get("generator")),
            str(p.get("node_id") or "")[:8] or fmt.MISSING,
            fmt.count(p.get("sent")),
            fmt.rate(p.get("responses_per_s")),
            fmt.ms(p.get("p50_ms")),
            fmt.ms(p.get("p99_ms")),
            fmt.ms(p.get("send_lag_p99_ms")),
            fmt.micros(p.get("cpu_us_per_request")),
            fmt.percent(p.get("busiest_thread")),
            ", ".join([*(p.get("findings") or []), *(["lost"] if p.get("lost") else [])]) or "none",
        ]
        for p in parts
    ]
