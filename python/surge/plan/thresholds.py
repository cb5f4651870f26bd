"""Thresholds: pass/fail rules over a run's metrics, k6 style (``p(95) < 300ms``).

A threshold is ``[metric.]statistic OP value``, optionally scoped to one ``tag`` and/or one
``scenario``:

- latency statistics: ``p(N)``, ``med``, ``avg``, ``min``, ``max``, compared with a duration
  (``300ms``, ``1.5s``, ``800us``); the metric is ``latency`` (every response, the default),
  ``success`` (successful responses), ``service_time`` (from the actual send, not the intended
  one), ``send_lag`` (how late requests left), ``first_byte`` (each response's first byte), or
  for event streams ``first_event`` (time to first event), ``event_gap`` (between events) and
  ``stream_duration``, and for token streams (OpenAI-compatible completions) ``ttft`` (time to
  first token), ``itl`` (inter-token latency) and ``tpot`` (time per output token after the
  first) (docs/record.md, "Streams");
- ``failure_rate``: (failed + interrupted) / (succeeded + failed + interrupted), a fraction
  (``0.001``) or a percentage (``0.1%``): requests cut off by the end count against it;
- ``rate``: responses per second over the scope's load window (``throughput.window_s``: from
  its start until its load stopped, counting the responses that completed in it), written
  ``1000``, ``1000/s`` or ``60000/m``;
- ``checks``: passed checks / all checks run, a fraction or a percentage;
- ``dropped``: iterations an arrival-rate schedule had due but could not start (all VUs
  busy), a count (k6's ``dropped_iterations``): ``dropped == 0`` says the offered load was
  really offered.

A threshold over a scope with no samples (a tag that never matched, checks that never ran)
is ``no-data``, which fails unless the threshold says ``no_data: pass``. ``evaluate`` reads
the numbers through a MetricSource, so they can come from the engine's result document
(``ResultMetrics``) or, later, from full histograms.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from surge.core import exit_codes
from surge.core.units import PER_SECOND, SECONDS_PER_UNIT

LATENCY_METRICS = {
    "latency": "all",
    "success": "success",
    "service_time": "service_time",
    "send_lag": "send_lag",
    "first_byte": "first_byte",
    "first_event": "first_event",
    "event_gap": "event_gap",
    "stream_duration": "stream_duration",
    "ttft": "ttft",
    "itl": "itl",
    "tpot": "tpot",
}
"""LATENCY_METRICS maps a threshold's latency metric to its key in the result's ``latency``."""

STANDARD_PERCENTILES = (50.0, 90.0, 95.0, 99.0, 99.9)
"""STANDARD_PERCENTILES are the percentiles every latency summary carries; others (any
0 < N <= 100) are added when the plan lists them in ``percentiles`` (see ``percentiles``)."""


def percentile_key(q: float) -> str:
    """percentile_key is the result key of percentile ``q`` (a percentage), the engine's rule:
    ``p`` + ``q`` without trailing zeros, ``.`` as ``_``, + ``_ms`` (99.9 -> ``p99_9_ms``,
    75 -> ``p75_ms``); p(100) is ``max_ms``."""
    if q == 100.0:
        return "max_ms"
    text = f"{q:.6f}".rstrip("0").rstrip(".")
    return f"p{text.replace('.', '_')}_ms"


def percentiles(thresholds: Iterable[Threshold]) -> list[float]:
    """percentiles lists the non-standard percentiles ``thresholds`` read, for the plan's
    ``percentiles`` (so the engine puts them in every latency summary)."""
    wanted = {t.quantile for t in thresholds if t.stat == "p" and t.quantile is not None}
    return sorted(q for q in wanted if q not in STANDARD_PERCENTILES and q != 100.0)


_LATENCY_STATS = ("p", "med", "avg", "min", "max")

GOODPUT_METRICS = {"latency": "latency_s", "ttft": "ttft_s", "tpot": "tpot_s"}
"""GOODPUT_METRICS maps the latency metrics goodput bounds per request to the plan's keys."""


def goodput_bounds(thresholds: Iterable[Threshold]) -> dict[str, float] | None:
    """goodput_bounds are the per-request bounds of goodput the latency conditions on
    GOODPUT_METRICS set (``ttft p(95) < 500ms`` bounds each request's TTFT at 500 ms): for each
    metric the tightest limit of an upper bound (``<``, ``<=``) on a percentile or the maximum,
    over the whole run (no tag or scenario scope), in seconds; None when none does."""
    bounds: dict[str, float] = {}
    for t in filter(_bounds_each_request, thresholds):
        key = GOODPUT_METRICS[t.metric]
        bounds[key] = min(bounds.get(key, math.inf), t.limit / 1000)
    return bounds or None


def goodput_share(thresholds: Iterable[Threshold]) -> float | None:
    """goodput_share is the share of requests that must be good for the conditions
    goodput_bounds reads to hold together: the highest of their percentiles (1 for a maximum);
    None when none bounds a request."""
    shares = [
        1.0 if t.stat == "max" or t.quantile is None else t.quantile / 100
        for t in filter(_bounds_each_request, thresholds)
    ]
    return max(shares, default=None)


def _bounds_each_request(t: Threshold) -> bool:
    """_bounds_each_request: an upper bound on a percentile or the maximum of a GOODPUT_METRICS
    metric, over the whole run, with a positive limit: a bound each request can be held to."""
    return (
        t.metric in GOODPUT_METRICS
        and t.stat in ("p", "max")
        and t.op in ("<", "<=")
        and t.limit > 0
        and t.tag is None
        and t.scenario is None
    )


MAX_EXPRESSION = 200
"""MAX_EXPRESSION bounds the length of a threshold expression, in characters."""

_FORMS = (
    "p(95) < 300ms, p(99.9) <= 1s, med < 50ms, avg < 100ms, max < 2s, service_time.p(99) < 10ms, ttft p(95) < 500ms, "
    "failure_rate < 0.001, failure_rate < 0.1%, rate > 1000/s, checks > 0.99, dropped == 0"
)
_EXPR = re.compile(
    r"\s*(?:(?P<metric>[A-Za-z_]+)(?:\s*\.\s*|\s+))?"
    r"(?P<stat>p\s*\(\s*(?P<q>[^)]*?)\s*\)|[A-Za-z_][A-Za-z0-9_]*)"
    r"\s*(?P<op><=|>=|==|!=|<|>)\s*"
    r"(?P<num>[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*(?P<unit>\S*)\s*"
)
# The units of durations and rates are surge.core.units' (the same in a flag and a file).
_MS_PER = {unit: float(seconds * 1000) for unit, seconds in SECONDS_PER_UNIT.items()}
_PER_SECOND = {"": 1.0, **{f"/{unit}": per_second for unit, per_second in PER_SECOND.items()}}
_OPS: dict[str, Callable[[float, float], bool]] = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
}

Status = Literal["pass", "fail", "no-data"]
"""Status is a threshold's outcome: met, missed, or nothing measured in its scope."""


class ThresholdError(ValueError):
    """ThresholdError: an expression does not parse; the message quotes it and lists the valid forms."""


@dataclass(frozen=True)
class Threshold:
    """Threshold: one parsed rule. ``stat`` is ``p``, ``avg``, ``min``, ``max`` (latency, with
    ``quantile`` in percent for ``p``; ``med`` parses as ``p`` 50), ``failure_rate``, ``rate``,
    ``checks`` or ``dropped``; ``limit`` is in ms for latency, a fraction for rates of
    outcomes, per second for ``rate``, a count for ``dropped``."""

    expr: str
    metric: str
    stat: str
    op: str
    limit: float
    quantile: float | None = None
    tag: str | None = None
    scenario: str | None = None
    abort_on_fail: bool = False
    delay_s: float = 0.0
    no_data: Literal["fail", "pass"] = "fail"

    def scope(self) -> str:
        """scope names what the threshold looks at: ``all``, ``tag 'x'``, ``scenario 'y'`` or both."""
        parts = ([f"scenario '{self.scenario}'"] if self.scenario else []) + ([f"tag '{self.tag}'"] if self.tag else [])
        return ", ".join(parts) or "all"

    def is_latency(self) -> bool:
        """is_latency tells whether the threshold compares a latency (in ms)."""
        return self.stat in _LATENCY_STATS

    def holds(self, observed: float) -> bool:
        """holds tells whether ``observed`` satisfies the threshold."""
        return _OPS[self.op](observed, self.limit)


def parse_threshold(
    expr: str,
    *,
    tag: str | None = None,
    scenario: str | None = None,
    abort_on_fail: bool = False,
    delay_s: float = 0.0,
    no_data: Literal["fail", "pass"] = "fail",
) -> Threshold:
    """parse_threshold parses one expression; ThresholdError says what is wrong and which forms are valid."""
    if len(expr) > MAX_EXPRESSION:
        raise ThresholdError(f"a threshold is at most {MAX_EXPRESSION} characters, this one has {len(expr):,}")
    match = _EXPR.fullmatch(expr)
    if match is None:
        raise ThresholdError(f"'{expr}' is not a threshold: write STATISTIC OPERATOR VALUE, e.g. {_FORMS}")
    metric = match.group("metric")
    stat = match.group("stat").replace(" ", "")
    op, number, unit = match.group("op"), float(match.group("num")), match.group("unit")
    if not math.isfinite(number):
        raise ThresholdError(f"'{expr}': {match.group('num')} is not a finite number")
    quantile = None
    if stat.startswith("p("):
        quantile = _quantile(expr, match.group("q"))
        stat = "p"
    elif stat == "med":
        stat, quantile = "p", 50.0
    elif re.fullmatch(r"p\d+(\.\d+)?", stat):
        raise ThresholdError(f"'{expr}': unknown statistic '{stat}' (write a percentile as p({stat[1:]}))")
    elif stat not in ("avg", "min", "max", "failure_rate", "rate", "checks", "dropped", "goodput"):
        raise ThresholdError(
            f"'{expr}': unknown statistic '{stat}' (expected p(N), med, avg, min, max, "
            f"failure_rate, rate, checks, dropped or goodput)"
        )
    if stat in _LATENCY_STATS:
        metric = metric or "latency"
        if metric not in LATENCY_METRICS:
            raise ThresholdError(f"'{expr}': unknown metric '{metric}' (expected one of {', '.join(LATENCY_METRICS)})")
        if unit not in _MS_PER:
            hint = f"add a unit, e.g. {match.group('num')}ms" if not unit else f"'{unit}' is not a time unit"
            raise ThresholdError(f"'{expr}': a latency needs a duration ({hint}; units: us, ms, s, m)")
        limit = number * _MS_PER[unit]
    else:
        if metric is not None:
            raise ThresholdError(f"'{expr}': {stat} takes no metric prefix (only latency statistics do)")
        metric = stat
        limit = _outcome_limit(expr, stat, number, unit)
    return Threshold(
        expr=expr.strip(),
        metric=metric,
        stat=stat,
        op=op,
        limit=limit,
        quantile=quantile,
        tag=tag,
        scenario=scenario,
        abort_on_fail=abort_on_fail,
        delay_s=delay_s,
        no_data=no_data,
    )


def _quantile(expr: str, text: str) -> float:
    try:
        q = float(text)
    except ValueError:
        raise ThresholdError(f"'{expr}': p(...) takes a percentage such as p(95) or p(99.9)") from None
    if not 0 < q <= 100:
        raise ThresholdError(f"'{expr}': p({text}) is outside 0 < N <= 100")
    return q


def _outcome_limit(expr: str, stat: str, number: float, unit: str) -> float:
    if stat == "dropped":
        if unit or number < 0:
            raise ThresholdError(f"'{expr}': dropped is a count of iterations: write dropped == 0 or dropped < 10")
        return number
    if stat == "rate":
        if unit not in _PER_SECOND:
            raise ThresholdError(f"'{expr}': a rate is responses per second: write 1000, 1000/s or 60000/m")
        return number * _PER_SECOND[unit]
    if unit == "%":
        number /= 100
    elif unit:
        raise ThresholdError(f"'{expr}': {stat} is a fraction: write 0.001 or 0.1%, not '{unit}'")
    if not 0 <= number <= 1:
        raise ThresholdError(f"'{expr}': {stat} is a fraction between 0 and 1 (or 0% to 100%)")
    return number


class NoHistogram(LookupError):
    """NoHistogram: a percentile cannot be computed for a scope without its histogram."""


class MetricSource(Protocol):
    """MetricSource: the numbers of one scope (the run, a scenario, a tag) thresholds read;
    each returns None when the scope has no samples."""

    def percentile(self, metric: str, q: float) -> float | None:
        """percentile is the q-th percentile (0 < q <= 100) of ``metric`` in ms; NoHistogram when unavailable."""
        ...

    def stat(self, metric: str, name: str) -> float | None:
        """stat is ``avg``, ``min`` or ``max`` of ``metric`` in ms."""
        ...

    def failure_rate(self) -> float | None:
        """failure_rate is (failed + interrupted) / (succeeded + failed + interrupted)."""
        ...

    def rate(self) -> float | None:
        """rate is responses per second over the scope's window."""
        ...

    def checks(self) -> float | None:
        """checks is passed checks / checks run."""
        ...

    def goodput(self) -> float | None:
        """goodput is the responses that met every goodput bound / all responses (None
        without bounds or responses)."""
        ...

    def dropped(self) -> float | None:
        """dropped is the number of iterations due but not started (arrival-rate executors)."""
        ...


def _latency(entry: Mapping[str, Any], metric: str) -> Mapping[str, Any] | None:
    latency = entry.get("latency")
    if not isinstance(latency, Mapping):
        return None
    key = LATENCY_METRICS[metric]
    if key in latency or "all" in latency:
        found = latency.get(key)
        return found if isinstance(found, Mapping) else None
    return latency if metric == "latency" else None  # a flat summary is the latency of every response


def _count(summary: Mapping[str, Any]) -> float:
    if "count" in summary:
        return float(summary["count"])
    return 1.0 if any(summary.get(k) for k in ("max_ms", "mean_ms", "p50_ms")) else 0.0


class ResultScope:
    """ResultScope: a MetricSource over entries of the engine's result document (the run
    itself, a scenario, or every tag entry of one tag); several entries are combined (sums,
    weighted means, extremes), percentiles only when there is a single entry."""

    def __init__(
        self,
        entries: list[Mapping[str, Any]],
        duration_s: float,
        checks: list[Mapping[str, Any]],
        bounded: bool = False,
    ) -> None:
        self.entries = entries
        self.duration_s = duration_s
        self.check_entries = checks
        self.bounded = bounded

    def _summaries(self, metric: str) -> list[Mapping[str, Any]]:
        found = [_latency(e, metric) for e in self.entries]
        return [s for s in found if s is not None and _count(s) > 0]

    def percentile(self, metric: str, q: float) -> float | None:
        """percentile reads a precomputed percentile; NoHistogram for others or combined entries."""
        summaries = self._summaries(metric)
        if not summaries:
            return None
        if len(summaries) > 1:
            raise NoHistogram("percentiles over several scenarios need the histograms: scope it with scenario")
        key = percentile_key(q)
        if key not in summaries[0]:
            raise NoHistogram(f"p({q:g}) is not in the result document (the plan's percentiles did not list it)")
        return float(summaries[0][key])

    def stat(self, metric: str, name: str) -> float | None:
        """stat combines avg (weighted by count), min and max over the entries."""
        summaries = self._summaries(metric)
        if not summaries:
            return None
        if name == "min":
            return min(float(s.get("min_ms", 0.0)) for s in summaries)
        if name == "max":
            return max(float(s.get("max_ms", 0.0)) for s in summaries)
        total = sum(_count(s) for s in summaries)
        return sum(float(s.get("mean_ms", 0.0)) * _count(s) for s in summaries) / total

    def _requests(self, key: str) -> float:
        return sum(float(e.get("requests", {}).get(key, 0) or 0) for e in self.entries)

    def failure_rate(self) -> float | None:
        """failure_rate is the engine's rate for one entry, else (failed + interrupted) /
        (succeeded + failed + interrupted) over the entries."""
        not_succeeded = self._requests("failed") + self._requests("interrupted")
        ended = self._requests("succeeded") + not_succeeded
        if len(self.entries) == 1 and "failure_rate" in self.entries[0].get("requests", {}):
            if ended + self._requests("sent") == 0:
                return None
            return float(self.entries[0]["requests"]["failure_rate"])
        return not_succeeded / ended if ended else None

    def rate(self) -> float | None:
        """rate sums the entries' responses per second, each over its own window (the
        engine's ``throughput``; responses over ``duration_s`` for documents without it)."""
        if not self.entries or self._requests("sent") + self._requests("responses") == 0:
            return None
        total = 0.0
        for e in self.entries:
            throughput = e.get("throughput")
            if isinstance(throughput, Mapping) and "responses_per_s" in throughput:
                total += float(throughput["responses_per_s"] or 0.0)
                continue
            duration = float(e.get("duration_s") or self.duration_s or 0.0)
            total += float(e.get("requests", {}).get("responses", 0) or 0) / duration if duration > 0 else 0.0
        return total

    def checks(self) -> float | None:
        """checks is passes / (passes + fails) over the scope's checks."""
        passes = sum(float(c.get("passes", 0) or 0) for c in self.check_entries)
        fails = sum(float(c.get("fails", 0) or 0) for c in self.check_entries)
        return passes / (passes + fails) if passes + fails else None

    def dropped(self) -> float | None:
        """dropped sums the entries' dropped iterations; no data when nothing was due."""
        if self._requests("sent") + self._requests("dropped") == 0:
            return None
        return self._requests("dropped")

    def goodput(self) -> float | None:
        """goodput is good / responses over the entries; no data without goodput bounds (the
        result's ``goodput``) or without responses."""
        responses = self._requests("responses")
        if not self.bounded or not responses:
            return None
        return self._requests("good") / responses


class ResultMetrics:
    """ResultMetrics: the MetricSource of any scope of one engine result document (which has
    ``latency``, ``requests``, ``duration_s`` and, for scoped thresholds, ``scenarios``,
    ``tags`` and ``checks``)."""

    def __init__(self, result: Mapping[str, Any]) -> None:
        self.result = result

    def scope(self, tag: str | None, scenario: str | None) -> MetricSource:
        """scope returns the source of the run (no tag, no scenario), a scenario, or a tag
        (within a scenario when both are given); an unmatched scope has no samples."""
        r = self.result
        checks = [
            c
            for c in r.get("checks", []) or []
            if (tag is None or c.get("tag") == tag) and (scenario is None or c.get("scenario") == scenario)
        ]
        if tag is not None:
            entries = [
                t
                for t in r.get("tags", []) or []
                if t.get("tag") == tag and (scenario is None or t.get("scenario") == scenario)
            ]
        elif scenario is not None:
            entries = [s for s in r.get("scenarios", []) or [] if s.get("name") == scenario]
        else:
            entries = [r]
        return ResultScope(entries, float(r.get("duration_s", 0.0) or 0.0), checks, bool(r.get("goodput")))


@dataclass(frozen=True)
class Verdict:
    """Verdict: a threshold's outcome, with the value observed (ms, fraction or per second;
    None without data) and, when it could not be computed, why in ``note``."""

    threshold: Threshold
    status: Status
    observed: float | None
    note: str = ""

    @property
    def passed(self) -> bool:
        """passed tells whether the verdict lets the run succeed (no data passes only with ``no_data: pass``)."""
        return self.status == "pass" or (self.status == "no-data" and self.threshold.no_data == "pass")

    def observed_text(self) -> str:
        """observed_text renders the value in the threshold's unit: ``212.4ms``, ``0.05%``, ``1,234.5/s``."""
        if self.observed is None:
            return "no data" if not self.note else "n/a"
        t = self.threshold
        if t.is_latency():
            return f"{self.observed:,.2f}ms" if self.observed < 1000 else f"{self.observed / 1000:,.3f}s"
        if t.stat == "rate":
            return f"{self.observed:,.1f}/s"
        if t.stat == "dropped":
            return f"{self.observed:,.0f} dropped"
        return f"{self.observed * 100:.3f}%".replace(".000%", "%")

    def line(self) -> str:
        """line is one line for a summary: verdict, expression, scope, observed value."""
        mark = {"pass": "✓", "fail": "✗"}.get(self.status, "?" if self.passed else "✗")
        status = self.status if self.status != "no-data" else f"no data ({'passes' if self.passed else 'fails'})"
        note = f" ({self.note})" if self.note else ""
        return f"{mark} {self.threshold.expr} [{self.threshold.scope()}]: {self.observed_text()} → {status}{note}"


def observe(t: Threshold, source: MetricSource) -> float | None:
    """observe reads the value a threshold compares from ``source`` (None: no samples)."""
    if t.stat == "p":
        return source.percentile(t.metric, t.quantile or 0.0)
    if t.stat in ("avg", "min", "max"):
        return source.stat(t.metric, t.stat)
    if t.stat == "failure_rate":
        return source.failure_rate()
    if t.stat == "rate":
        return source.rate()
    if t.stat == "dropped":
        return source.dropped()
    if t.stat == "goodput":
        return source.goodput()
    return source.checks()


def evaluate(
    thresholds: Iterable[Threshold], result: Mapping[str, Any] | Callable[[str | None, str | None], MetricSource]
) -> list[Verdict]:
    """evaluate judges every threshold against a result document (or a function returning
    the MetricSource of a tag/scenario scope), in order."""
    scope = ResultMetrics(result).scope if isinstance(result, Mapping) else result
    verdicts = []
    for t in thresholds:
        try:
            observed = observe(t, scope(t.tag, t.scenario))
        except NoHistogram as e:
            verdicts.append(Verdict(t, "fail", None, str(e)))
            continue
        if observed is None or (isinstance(observed, float) and math.isnan(observed)):
            verdicts.append(Verdict(t, "no-data", None))
        else:
            verdicts.append(Verdict(t, "pass" if t.holds(observed) else "fail", observed))
    return verdicts


def due_aborts(verdicts: Iterable[Verdict], elapsed_s: float) -> list[Verdict]:
    """due_aborts are the failed verdicts (not those without data yet) of ``abort_on_fail``
    thresholds whose ``delay`` has passed at ``elapsed_s`` into the run: a reason to stop it."""
    return [
        v for v in verdicts if v.status == "fail" and v.threshold.abort_on_fail and elapsed_s >= v.threshold.delay_s
    ]


def exit_code(verdicts: Iterable[Verdict]) -> int:
    """exit_code is 99 (THRESHOLDS_FAILED) when any verdict did not pass, else 0."""
    return exit_codes.OK if all(v.passed for v in verdicts) else exit_codes.THRESHOLDS_FAILED
