"""A run's interval stream and where it goes: an IntervalSink is told when the run starts, each
unmeasured phase's end (setup, teardown), each interval of the measured run as it arrives, and
when the engine is done; a PhaseRunner is where the stream comes from (``run_phases``: the
engine on this machine). The run session (``surge.run.session``) writes its record from the same
stream and hands it to every sink it is given: the terminal's live view
(``TerminalProgress``, a PlanSink: it is also told the plan and the measured run's end), the
CLI's phase lines, and later a live dashboard or an export; a run on
Ray is a PhaseRunner that merges its engines' intervals into one stream. Neither needs a change
to the session."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from surge.plan.compiled import CompiledRun
from surge.run.phases import IntervalHook, PhaseHook, RunOutcome, StopRule, run_phases

if TYPE_CHECKING:
    from rich.console import Console

    from surge.plan.thresholds import Threshold
    from surge.present.terminal.live import ExperimentProgress, LiveView
    from surge.run.session import RunEnd


class IntervalSink(Protocol):
    """IntervalSink receives one run's stream, in this order: ``start`` once (``planned_s``: how
    long the measured run is meant to take, 0 for a count of iterations), ``on_phase`` when setup
    ends, ``on_interval`` for each interval of the measured run in order (the engine's interval
    document: ``index``, ``end_s``, ``requests``, ``latency``, its histogram), ``on_phase`` when
    teardown ends, and ``finish`` once when the engine is done (also when a stop signal or an
    unreachable target ended the run). A sink does not raise: what it cannot do costs it, not
    the run."""

    def start(self, planned_s: float) -> None:
        """start: the run is about to send."""

    def on_phase(self, name: str, result: Mapping[str, Any]) -> None:
        """on_phase: the unmeasured phase ``name`` ("setup", "teardown") ended with ``result``."""

    def on_interval(self, interval: Mapping[str, Any]) -> None:
        """on_interval: the measured run's next interval."""

    def finish(self) -> None:
        """finish: the engine is done; no more of the stream follows."""


@runtime_checkable
class PlanSink(Protocol):
    """PlanSink is an IntervalSink that also wants the CompiledRun it is about to see (``on_plan``,
    before ``start``) and the measured run's end (``on_phase("main", result)``, which other sinks
    are not told), e.g. to show which phase is in progress."""

    def on_plan(self, compiled: CompiledRun) -> None:
        """on_plan: the run about to start is ``compiled``."""


PhaseRunner = Callable[..., RunOutcome]
"""PhaseRunner runs a CompiledRun's phases as ``run_phases`` does (same arguments: ``compiled``,
``threads``, ``on_interval``, ``on_phase``, ``stop_rule`` when one is given) and returns its
RunOutcome: the engine on this machine (``run_phases``), or several engines whose intervals it
merges into one stream."""

LOCAL: PhaseRunner = run_phases
"""LOCAL is the PhaseRunner of a run on this machine."""


def run_streamed(
    runner: PhaseRunner,
    compiled: CompiledRun,
    threads: int | None,
    planned_s: float,
    sinks: Sequence[IntervalSink],
    stop_rule: StopRule | None = None,
) -> RunOutcome:
    """run_streamed runs ``compiled`` with ``runner``, handing its stream to every sink in
    order (``start`` first, ``finish`` last, also when the run raises); a PlanSink is told the
    plan first, and the measured run's end; ``stop_rule`` may end the measured run early."""
    for sink in sinks:
        if isinstance(sink, PlanSink):
            sink.on_plan(compiled)
        sink.start(planned_s)

    def on_interval(interval: dict[str, Any]) -> None:
        for sink in sinks:
            sink.on_interval(interval)

    def on_phase(name: str, result: dict[str, Any]) -> None:
        for sink in sinks:
            if name != "main" or isinstance(sink, PlanSink):
                sink.on_phase(name, result)

    interval_hook: IntervalHook = on_interval
    phase_hook: PhaseHook = on_phase
    try:
        more = {} if stop_rule is None else {"stop_rule": stop_rule}
        return runner(compiled, threads=threads, on_interval=interval_hook, on_phase=phase_hook, **more)
    finally:
        for sink in sinks:
            sink.finish()


class TerminalProgress:
    """TerminalProgress is the PlanSink of the live view on stderr (``surge.present.terminal.live``:
    the phase, each scenario's progress, the current figures, the thresholds so far, and an
    experiment's progress when ``experiment`` says where it stands); give it only when stderr is
    a terminal. Rich, the histogram decoder and the result models load at ``on_plan`` (before,
    they would count in a run's peak RSS without a terminal)."""

    def __init__(self, experiment: ExperimentProgress | None = None) -> None:
        self.experiment = experiment
        self._compiled: CompiledRun | None = None
        self._view: LiveView | None = None

    def on_plan(self, compiled: CompiledRun) -> None:
        """on_plan keeps the plan the view describes."""
        self._compiled = compiled

    def start(self, planned_s: float) -> None:
        """start opens the view, at the plan's first phase."""
        # Function-local: Rich and the histogram decoder load only when a terminal shows the view.
        from surge.present.terminal.live import LiveRun, LiveView

        if self._compiled is None:
            return
        run = LiveRun.of(self._compiled, planned_s, self.experiment)
        self._view = LiveView(run).__enter__()

    def on_phase(self, name: str, result: Mapping[str, Any]) -> None:
        """on_phase moves the view to the next phase."""
        if self._view is not None:
            self._view.run.ended(name)

    def on_interval(self, interval: Mapping[str, Any]) -> None:
        """on_interval hands the interval to the view (kept; folded in when it is next drawn)."""
        if self._view is not None:
            self._view.run.add(interval)

    def finish(self) -> None:
        """finish closes the view (it leaves nothing on the terminal)."""
        if self._view is not None:
            self._view.__exit__(None, None, None)
            self._view = None

    def console(self) -> Console | None:
        """console is the console the view is drawn on while it is (None before and after): a
        line printed on it appears above the view; printed on another, it would garble it."""
        return self._view.console if self._view is not None else None


class CommandView(Protocol):
    """CommandView is what follows a whole command as it runs (the web dashboard, --dashboard:
    ``surge.run.dashboard``): the run session hands it each run (``run_sink``, an IntervalSink
    of the run shown as ``label``, its ``thresholds`` judged as it sends; then ``run_ended``), an
    experiment each completed run or step (``on_step``: its document, and ``analyse``, its
    analysis of what ran so far). Like a sink, it does not raise."""

    def run_sink(self, label: str, thresholds: Sequence[Threshold] = ()) -> IntervalSink:
        """run_sink is the IntervalSink of the command's next run."""
        ...

    def run_ended(self, end: RunEnd) -> None:
        """run_ended: the run is recorded (its result, verdict and report)."""

    def on_step(self, document: Mapping[str, Any], analyse: Callable[[], Mapping[str, Any]] | None = None) -> None:
        """on_step: an experiment's run or step completed (experiment.json as it stands)."""


COMMAND_VIEW: ContextVar[CommandView | None] = ContextVar("surge_command_view", default=None)
"""COMMAND_VIEW is the command's CommandView while one follows it (set by ``surge.run.dashboard.
serve_dashboard`` around the command), None otherwise: the session and the experiments reach it
here, so the test's description carries no server."""
