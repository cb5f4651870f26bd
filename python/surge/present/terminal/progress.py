"""Progress: the live one-line status shown on stderr while a run is in progress."""

from __future__ import annotations

import time

from rich.console import Console
from rich.live import Live
from rich.text import Text

from surge.core.units import format_duration
from surge.engine.result import Interval
from surge.present import numbers as fmt


class Progress:
    """Progress renders elapsed/remaining time, current responses/s, p95 and failure rate
    (failed and interrupted requests over all that ended).

    Use as a context manager; feed it each Interval with ``update``. It draws only when
    stderr is a terminal, so piped output and ``--json`` stay clean.
    """

    def __init__(self, planned_s: float, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        self.planned_s = planned_s
        self.started = time.monotonic()
        self.last: Interval | None = None
        self.responses = 0
        self.not_succeeded = 0
        self.succeeded = 0
        self._live: Live | None = None

    def __enter__(self) -> Progress:
        if self.console.is_terminal:
            self._live = Live(
                self._render(), console=self.console, transient=True, refresh_per_second=4, get_renderable=self._render
            )
            self._live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.__exit__(None, None, None)

    def update(self, interval: Interval) -> None:
        """update records a completed interval."""
        self.last = interval
        self.responses += interval.requests.responses or 0  # None only in imported runs
        self.not_succeeded += interval.requests.failed + (interval.requests.interrupted or 0)
        self.succeeded += interval.requests.succeeded

    def _render(self) -> Text:
        elapsed = time.monotonic() - self.started
        remaining = max(0.0, self.planned_s - elapsed)
        text = Text()
        text.append(f" {format_duration(elapsed)} elapsed", style="bold")
        text.append(f" · {format_duration(remaining)} left" if self.planned_s else "")
        if self.last is not None:
            last = self.last
            outcomes = self.succeeded + self.not_succeeded
            failure_rate = self.not_succeeded / outcomes if outcomes else 0.0
            text.append(f" · {fmt.rate(last.responses_per_s)} responses/s")
            text.append(f" · p95 {fmt.ms(last.latency.all.p95_ms)} ms")
            style = "red" if failure_rate > 0 else "green"
            text.append(f" · failures {fmt.percent(failure_rate)}", style=style)
            text.append(f" · {fmt.count(last.in_flight)} in flight · {fmt.count(last.open_connections)} conns")
        return text
