"""The live view: what stderr shows while a run (or an experiment's run) is in progress, when
stderr is a terminal (docs/cli.md, "The live view"). It is fed the run's interval stream
(``LiveRun.phase`` and ``LiveRun.add``: cheap, they only keep what arrives) and drawn by
``LiveView`` once a second on its own thread, which does the work (decoding the
intervals' histograms, judging the thresholds) outside the engine's callback. It is transient:
nothing of it remains once the run ends."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy
from hdrh.histogram import HdrHistogram  # type: ignore[import-untyped]
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.live import Live
from rich.segment import Segment
from rich.style import Style

from surge.analysis.slo import FiguresSource
from surge.core.units import format_duration
from surge.plan.compiled import CompiledRun
from surge.plan.model import (
    ConstantArrivalRate,
    ConstantVus,
    PerVuIterations,
    RampingArrivalRate,
    RampingVus,
    ScenarioSpec,
    SharedIterations,
    executor_planned_s,
)
from surge.plan.thresholds import Threshold, Verdict, evaluate, percentile_key
from surge.present import numbers as fmt

HISTOGRAM_RANGE = (1, 3_600_000_000, 3)
"""HISTOGRAM_RANGE is the engine's histogram (lowest and highest µs, significant digits), the
one the intervals' ``latency_histogram`` encodes."""

DRAW_AFTER_SECOND_S = 0.05
"""DRAW_AFTER_SECOND_S: the view is drawn once a second, this long after each whole second of
the phase's clock, so that the elapsed time shown steps by one second each drawing and the
interval that ended on the second is in it. A drawing costs the view's thread about 1 ms of
CPU on the engine's core (docs/benchmarks.md, "Watching a run"); drawn twice a second with
Rich's ``Text``, the view cost 4 % of the engine's CPU at 5,000 req/s."""

BAR_WIDTH = 24
"""BAR_WIDTH is the width of a scenario's progress bar, in columns."""


Span = tuple[str, str]
"""Span is a piece of a line of the view: its text and its Rich style ("" for none)."""


class Lines:
    """Lines is the drawn view: lines of styled spans, each cropped to the terminal's width,
    never wrapped. Rich's ``Text`` measures and wraps every line on each drawing, two thirds of
    a drawing's CPU; the view's lines are short and built aligned, so spans go straight to
    segments."""

    def __init__(self, lines: Sequence[Sequence[Span]]) -> None:
        self.lines = lines

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        for line in self.lines:
            room = width
            for text, style in line:
                if room <= 0:
                    break
                cells = cell_len(text)
                if cells > room:
                    text = Segment(text).split_cells(room)[0].text
                    cells = room
                room -= cells
                yield Segment(text, Style.parse(style) if style else None)
            yield Segment.line()


@dataclass(frozen=True)
class ScenarioShape:
    """ScenarioShape is what the plan says of one scenario, for its line: ``name``, its executor
    ``kind`` and its ``load`` in words (``10 VUs``, ``50/s``), when it starts (``start_s``), how
    long it starts iterations (``planned_s``, 0 for a count) and how many (``iterations``, None
    for a duration)."""

    name: str
    kind: str
    load: str
    start_s: float
    planned_s: float
    iterations: int | None

    @classmethod
    def of(cls, spec: ScenarioSpec) -> ScenarioShape:
        """of reads a scenario's shape from its plan."""
        ex = spec.executor
        iterations: int | None = None
        match ex:
            case ConstantVus() | SharedIterations() | PerVuIterations():
                load = f"{ex.vus:,} VUs"
                iterations = getattr(ex, "iterations", None)
                if isinstance(ex, PerVuIterations):
                    iterations = ex.vus * ex.iterations
            case RampingVus():
                load = f"{ex.start_vus:,}→{max((s.target for s in ex.stages), default=0):,} VUs"
            case ConstantArrivalRate():
                load = f"{fmt.rate(ex.rate)}/s"
            case RampingArrivalRate():
                peak = max((s.target_rate for s in ex.stages), default=0.0)
                load = f"{fmt.rate(ex.start_rate)}→{fmt.rate(peak)}/s"
        return cls(spec.name, ex.type, load, spec.start_time_s, executor_planned_s(ex), iterations)

    def done(self, elapsed_s: float, completed: int) -> float:
        """done is the share of the scenario done (0–1): its iterations completed of its count,
        else its time since it started of its planned duration."""
        if self.iterations is not None:
            return min(1.0, completed / self.iterations) if self.iterations else 1.0
        if self.planned_s <= 0:
            return 1.0
        return min(1.0, max(0.0, elapsed_s - self.start_s) / self.planned_s)


VERDICT_STYLES = {
    "passed": "green",
    "failed": "red",
    "zone optimal": "green",
    "zone stress": "yellow",
    "zone degraded": "red",
    "zone broken": "red",
}
"""VERDICT_STYLES colours a finished run's verdict in an experiment's live view."""


@dataclass(frozen=True)
class FinishedRun:
    """FinishedRun is one finished run of an experiment as its live view lists it: label,
    responses/s, p95 (ms) and verdict (its thresholds': passed, failed, none; a sweep level's
    zone, ``zone optimal``; a capacity step's passed or failed)."""

    label: str
    responses_per_s: float | None
    p95_ms: float | None
    verdict: str


@dataclass(frozen=True)
class ExperimentProgress:
    """ExperimentProgress is where an experiment stands, for the live view of its current run:
    its ``kind``, the ``role`` of the run in progress (``level vus=500``, ``step 3``) at
    ``position`` (1-based), the planned duration of each of its runs in order (``planned_s``;
    empty: not known in advance, as a capacity search's) and the runs ``finished`` so far. The
    time left is the planned durations still to run (cooldowns and waits not counted)."""

    kind: str
    role: str
    position: int
    planned_s: Sequence[float] = ()
    finished: Sequence[FinishedRun] = ()

    def left_s(self, current_elapsed_s: float) -> float | None:
        """left_s estimates the experiment's time left, the current run ``current_elapsed_s``
        into its planned duration; None when the runs are not known in advance."""
        if len(self.planned_s) < self.position:
            return None
        current = self.planned_s[self.position - 1]
        return max(0.0, current - current_elapsed_s) + sum(self.planned_s[self.position :])

    def render(self, current_elapsed_s: float) -> list[list[Span]]:
        """render is the experiment's lines: the run in progress, progress and time left, then
        the runs finished with their headline figures."""
        line: list[Span] = [(self.kind, "bold"), (" · ", ""), (self.role, "bold cyan")]
        total = len(self.planned_s)
        left = self.left_s(current_elapsed_s)
        if total and left is not None:
            whole = sum(self.planned_s)
            done = fmt.percent((whole - left) / whole if whole else 1.0)
            line.append((f" · run {self.position}/{total} · {done} · {format_duration(left)} left", ""))
        else:
            line.append((f" · run {self.position} · time left unknown (the search decides the steps)", ""))
        lines = [line]
        for run in self.finished[-5:]:
            lines.append(
                [
                    (f"  done {run.label}: {fmt.rate(run.responses_per_s)} req/s · p95 {fmt.ms(run.p95_ms)} ms · ", ""),
                    (run.verdict, VERDICT_STYLES.get(run.verdict, "")),
                ]
            )
        return lines


@dataclass
class _ScenarioSoFar:
    """_ScenarioSoFar: a scenario's figures from the intervals so far."""

    active_vus: int = 0
    responses_per_s: float = 0.0
    completed: int = 0
    dropped: int = 0


@dataclass
class LiveRun:
    """LiveRun is the state of one run's live view: the phases the plan has, the phase in
    progress, and the measured run's figures so far, kept from the interval stream. ``phase``
    and ``add`` only store what arrives (the engine's callback thread); ``render`` (Rich's
    thread) folds the stored intervals in and draws. ``clock`` is the monotonic clock the
    phases' times are read on."""

    phases: Sequence[str]
    scenarios: Sequence[ScenarioShape]
    thresholds: Sequence[Threshold]
    planned_s: float
    experiment: ExperimentProgress | None = None
    clock: Callable[[], float] = time.monotonic
    current: str = field(default="", init=False)
    phase_started: float = field(default=0.0, init=False)
    _pending: list[Mapping[str, Any]] = field(default_factory=list, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)
    _last: Mapping[str, Any] | None = field(default=None, init=False)
    _histogram: Any = field(default=None, init=False)
    _counts: dict[str, int] = field(default_factory=dict, init=False)
    _per_scenario: dict[str, _ScenarioSoFar] = field(default_factory=dict, init=False)
    _latency_sum_ms: float = field(default=0.0, init=False)
    _judged: list[Verdict | None] | None = field(default=None, init=False)

    @classmethod
    def of(cls, compiled: CompiledRun, planned_s: float, experiment: ExperimentProgress | None = None) -> LiveRun:
        """of is the live view of ``compiled``'s run (``planned_s``: its measured run's planned length)."""
        phases = [name for name, _ in compiled.plans()]
        live = cls(
            phases, [ScenarioShape.of(s) for s in compiled.main.scenarios], compiled.thresholds, planned_s, experiment
        )
        live.phase(phases[0])
        return live

    def phase(self, name: str) -> None:
        """phase says the phase ``name`` (setup, main, teardown) begins; "done" once all have ended."""
        self.current, self.phase_started = name, self.clock()

    def ended(self, name: str) -> None:
        """ended says the phase ``name`` ended: the next one of the plan begins."""
        later = list(self.phases[self.phases.index(name) + 1 :]) if name in self.phases else []
        self.phase(later[0] if later else "done")

    def add(self, interval: Mapping[str, Any]) -> None:
        """add keeps one interval of the measured run, for the next drawing."""
        with self._lock:
            self._pending.append(interval)

    def _fold(self) -> None:
        with self._lock:
            pending, self._pending = self._pending, []
        if pending:
            self._judged = None
        for interval in pending:
            self._last = interval
            requests = interval.get("requests") or {}
            for key in ("responses", "succeeded", "failed", "interrupted", "dropped", "late"):
                self._counts[key] = self._counts.get(key, 0) + int(requests.get(key) or 0)
            every = (interval.get("latency") or {}).get("all") or {}
            if every.get("count") and every.get("mean_ms") is not None:
                self._counts["latency_count"] = self._counts.get("latency_count", 0) + int(every["count"])
                self._latency_sum_ms += float(every["mean_ms"]) * int(every["count"])
            for s in interval.get("scenarios") or []:
                so_far = self._per_scenario.setdefault(s["name"], _ScenarioSoFar())
                iterations = s.get("iterations") or {}
                so_far.active_vus = int(s.get("active_vus") or 0)
                so_far.responses_per_s = float(s.get("responses_per_s") or 0.0)
                so_far.completed += int(iterations.get("iterations_completed") or 0)
                so_far.dropped += int(iterations.get("iterations_dropped") or 0)
            encoded = interval.get("latency_histogram") if self.thresholds else None  # only thresholds read it
            if encoded:
                try:
                    decoded = HdrHistogram.decode(encoded)
                except Exception:  # a histogram it cannot read costs the percentiles, not the view
                    continue
                if self._histogram is None:
                    self._histogram = HdrHistogram(*HISTOGRAM_RANGE)
                self._histogram.add(decoded)

    def measured_s(self) -> float:
        """measured_s is how long the measured run has run (0 before it starts)."""
        if self.current == "main":
            return self.clock() - self.phase_started
        last = self._last
        return float(last.get("end_s") or 0.0) if last is not None else 0.0

    def failure_rate(self) -> float:
        """failure_rate is the run's failures so far: (failed + interrupted) over all requests that ended."""
        c = self._counts
        bad = c.get("failed", 0) + c.get("interrupted", 0)
        ended = bad + c.get("succeeded", 0)
        return bad / ended if ended else 0.0

    def figures(self) -> dict[str, float | None]:
        """figures are the run's key figures so far (``surge.analysis.slo``'s names), for the thresholds."""
        last = self._last
        window = float(last.get("end_s") or 0.0) if last is not None else 0.0
        c = self._counts
        figures: dict[str, float | None] = {
            "responses_per_s": c.get("responses", 0) / window if window else None,
            "failure_rate": self.failure_rate() if c.get("succeeded", 0) + c.get("failed", 0) else None,
            "dropped": float(c.get("dropped", 0)) if last is not None else None,
        }
        h = self._histogram
        if h is not None and h.get_total_count():
            wanted = {t.quantile for t in self.thresholds if t.stat == "p" and t.quantile is not None}
            for q, value_us in percentiles_us(h, sorted(wanted | {50.0, 95.0, 99.0})).items():
                figures[percentile_key(q)] = value_us / 1000.0
            figures.update(min_ms=h.get_min_value() / 1000.0, max_ms=h.get_max_value() / 1000.0)
            if c.get("latency_count"):
                figures["mean_ms"] = self._latency_sum_ms / c["latency_count"]
        return figures

    def verdicts(self) -> list[Verdict | None]:
        """verdicts judges each threshold on the run so far, as the run's end does: on the
        engine's running totals when the plan asked for them (an ``abort_on_fail`` threshold),
        else on the figures so far; None for one that can be judged only at the end (a tag's or
        scenario's, or a figure the intervals do not carry)."""
        self._fold()
        if not self.thresholds:
            return []
        if self._judged is None:  # judged again only when an interval arrived
            last = self._last
            totals = last.get("totals") if last is not None else None
            if totals is not None:
                self._judged = list(evaluate(self.thresholds, totals))
            else:
                source = FiguresSource(self.figures())
                verdicts = evaluate(self.thresholds, lambda _tag, _scenario: source)
                self._judged = [
                    None if t.tag is not None or t.scenario is not None or v.note else v
                    for t, v in zip(self.thresholds, verdicts, strict=True)
                ]
        return self._judged

    def render(self) -> Lines:
        """render draws the view: phase, scenarios, figures, thresholds, and the experiment's lines."""
        self._fold()
        lines = [self._phase_line()]
        if self.current == "main" or self._last is not None:
            lines.extend(self._scenarios())
            lines.append(self._figures_line())
            lines.extend(self._threshold_lines())
        if self.experiment is not None:
            lines.extend(self.experiment.render(self.measured_s()))
        return Lines(lines)

    def _phase_line(self) -> list[Span]:
        spans: list[Span] = []
        for name in self.phases:
            spans += [(f" {name} ", "bold reverse" if name == self.current else "dim"), (" ", "")]
        spent = self.clock() - self.phase_started
        if self.current == "main":
            spans.append((f"{format_duration(spent)} elapsed", "bold"))
            if self.planned_s:
                spans.append((f" · {format_duration(max(0.0, self.planned_s - spent))} left", ""))
        elif self.current in ("setup", "teardown"):
            spans.append((f"{self.current}: {format_duration(spent)} (not in the measured results)", "bold"))
        return spans

    def _scenarios(self) -> list[list[Span]]:
        # Aligned text with a drawn bar, not a rich Table and ProgressBar: a table measures and
        # wraps every cell on each drawing (3.3 ms of CPU a drawing with them).
        elapsed = self.measured_s()
        rows = []
        for shape in self.scenarios:
            so_far = self._per_scenario.get(shape.name, _ScenarioSoFar())
            share = min(1.0, max(0.0, shape.done(elapsed, so_far.completed)))
            rows.append((shape, f"{so_far.active_vus:,} active", f"{so_far.completed:,} iterations", share))
        widths = [
            max((len(cell) for cell in column), default=0)
            for column in zip(
                *((shape.name, shape.kind, shape.load, active, done) for shape, active, done, _ in rows), strict=True
            )
        ] or [0] * 5
        lines = []
        for shape, active, done, share in rows:
            filled = round(share * BAR_WIDTH)
            lines.append(
                [
                    (shape.name.ljust(widths[0]), "bold"),
                    (" ", ""),
                    (shape.kind.ljust(widths[1]), "cyan"),
                    (f" {shape.load.ljust(widths[2])} {active.rjust(widths[3])} {done.rjust(widths[4])} ", ""),
                    ("━" * filled, "magenta"),
                    ("━" * (BAR_WIDTH - filled), "grey23"),
                    (f" {share * 100:3.0f}%", ""),
                ]
            )
        return lines

    def _figures_line(self) -> list[Span]:
        last = self._last
        if last is None:
            return [("waiting for the first interval…", "dim")]
        latency = last.get("latency") or {}
        rate = self.failure_rate()
        return [
            (f"{fmt.rate(last.get('responses_per_s'))} req/s", ""),
            (f" · p95 {fmt.ms((latency.get('all') or {}).get('p95_ms'))} ms · ", ""),
            (f"failures {fmt.percent(rate)}", "red" if rate > 0 else "green"),
            (f" · send lag p95 {fmt.ms((latency.get('send_lag') or {}).get('p95_ms'))} ms", ""),
            (f" · late {fmt.count(self._counts.get('late', 0))}", ""),
            (f" · {fmt.count(last.get('in_flight'))} in flight", ""),
        ]

    def _threshold_lines(self) -> list[list[Span]]:
        lines: list[list[Span]] = []
        for t, v in zip(self.thresholds, self.verdicts(), strict=True):
            if v is None:
                lines.append([(f"  · {t.expr} [{t.scope()}]: judged at the end", "dim")])
            elif v.status == "no-data":
                lines.append([(f"  · {t.expr} [{t.scope()}]: no data yet", "dim")])
            else:
                ok = v.status == "pass"
                text = f"  {'✓' if ok else '✗'} {t.expr} [{t.scope()}]: {v.observed_text()} → {v.status}"
                lines.append([(text, "green" if ok else "red")])
        return lines


def percentiles_us(histogram: Any, quantiles: Sequence[float]) -> dict[float, float]:
    """percentiles_us are ``histogram``'s values (µs) at ``quantiles`` (percentages), as
    HdrHistogram's ``get_value_at_percentile`` gives them (the highest value equivalent to the
    first bucket where the cumulative count reaches the quantile's), in one pass over its counts."""
    counts = numpy.ctypeslib.as_array(histogram.counts)[: histogram.counts_len]
    cumulative = numpy.cumsum(counts)
    total = int(cumulative[-1]) if len(cumulative) else 0
    values: dict[float, float] = {}
    for q in quantiles:
        target = max(int(min(q, 100.0) * total / 100 + 0.5), 1)
        index = int(numpy.searchsorted(cumulative, target, side="left"))
        if index >= len(cumulative):
            values[q] = 0.0
            continue
        values[q] = float(histogram.get_highest_equivalent_value(histogram.get_value_from_index(index)))
    return values


class LiveView:
    """LiveView draws a LiveRun on ``console`` (stderr) once a second on its own thread,
    transient (erased when it stops); only when the console is a terminal. While it is drawn,
    what is written to ``sys.stdout`` or ``sys.stderr`` (a phase line, a warning) appears above
    it, never inside it."""

    def __init__(self, run: LiveRun, console: Console | None = None) -> None:
        self.run = run
        self.console = console or Console(stderr=True)
        self._live: Live | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> LiveView:
        if self.console.is_terminal:
            self._live = Live(console=self.console, transient=True, auto_refresh=False, get_renderable=self.run.render)
            self._live.__enter__()
            # The first drawing here, before the run sends: its one-time costs (Rich's first
            # rendering of each kind of thing) fall outside the measured run.
            self._live.refresh()
            self._thread = threading.Thread(target=self._draw, name="surge-live-view", daemon=True)
            self._thread.start()
        return self

    def _draw(self) -> None:
        while True:
            spent = self.run.clock() - self.run.phase_started
            if self._stop.wait(1.0 - spent % 1.0 + DRAW_AFTER_SECOND_S):
                return
            if self._live is not None:
                self._live.refresh()

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._live is not None:
            self._live.__exit__(None, None, None)
            self._live = None
