"""Settling between runs (docs/experiments.md, "Waiting for the target to drain"): a level of a
sweep must not start while the target still works off the last one (requests its clients gave up
on, a queue left behind), or it measures the leftovers. A probe, the test's own request from one
VU for PROBE_S, is timed once while the target is idle (the baseline, before the first run) and
then after each run, until its median latency is back within SETTLED_FACTOR of the baseline's
(plus SETTLED_SLACK_MS), or the wait's bound runs out. Probes are not recorded: they only say
when to go on. A test whose requests need its setup phase (pools captured there) cannot be
probed alone: then nothing is waited for, and the wait says so."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any

from surge.engine.execute import run_plan
from surge.run.spec import Overrides, TestSpec

PROBE_S = 0.5
"""PROBE_S is how long one probe sends (one VU, the test's own flow and think times)."""

PROBE_GRACE_S = 5.0
"""PROBE_GRACE_S is how long a probe's last request may take after the probe's time is up."""

SETTLED_FACTOR = 2.0
"""SETTLED_FACTOR: a probe whose median latency is within this multiple of the idle baseline's
(plus SETTLED_SLACK_MS) finds the target drained."""

SETTLED_SLACK_MS = 5.0
"""SETTLED_SLACK_MS is added to the settled bound, so that a sub-millisecond baseline does not
make scheduling noise look like a queue."""

DEFAULT_MAX_WAIT_S = 60.0
"""DEFAULT_MAX_WAIT_S bounds one wait for the target to drain."""


@dataclass(frozen=True)
class Probe:
    """Probe is one probe's outcome: its median latency (None: no response), responses and
    requests sent (so that a test comparing the target's count with the runs' can add them)."""

    p50_ms: float | None
    responses: int
    sent: int


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f} ms"


@dataclass(frozen=True)
class Settled:
    """Settled is one wait's outcome: ``waited_s`` (probes included), the ``probes`` sent, the
    first and last probe's median latency, the idle ``baseline_ms``, whether the target
    ``drained`` within the bound, the requests the probes ``sent``, and ``note`` when it could
    not be probed at all."""

    waited_s: float
    probes: int
    first_ms: float | None
    last_ms: float | None
    baseline_ms: float | None
    drained: bool
    sent: int = 0
    note: str | None = None

    def text(self) -> str:
        """text says what the wait found, for the progress line and the record."""
        if self.note is not None:
            return self.note
        if self.probes <= 1 and self.drained:
            return f"target idle (probe p50 {_ms(self.last_ms)}, idle {_ms(self.baseline_ms)})"
        verb = "drained" if self.drained else "still not drained"
        return (
            f"waited {self.waited_s:.1f}s for the target to drain: {verb} (probe p50 {_ms(self.first_ms)} → "
            f"{_ms(self.last_ms)}, idle {_ms(self.baseline_ms)}, {self.probes} probes)"
        )

    def document(self) -> dict[str, Any]:
        """document is the wait as experiment.json keeps it."""
        return {
            "waited_s": self.waited_s,
            "probes": self.probes,
            "first_p50_ms": self.first_ms,
            "last_p50_ms": self.last_ms,
            "baseline_p50_ms": self.baseline_ms,
            "drained": self.drained,
            "probe_requests": self.sent,
            "note": self.note,
        }


class Settler:
    """Settler waits, between the runs of an experiment, until the target has drained; ``max_wait_s``
    bounds each wait (0: never probe, never wait)."""

    def __init__(self, test: TestSpec, max_wait_s: float = DEFAULT_MAX_WAIT_S) -> None:
        self.test, self.max_wait_s = test, max_wait_s
        self.baseline_ms: float | None = None
        self.baseline_sent = 0
        self.unprobed: str | None = None if max_wait_s > 0 else "no wait for the target to drain (--drain-wait 0)"

    def _probe(self) -> Probe:
        plan = self.test.prepare(Overrides(vus=1, duration_s=PROBE_S)).compiled.main
        # A response slower than the probe still ends it (up to PROBE_GRACE_S): its latency is the answer.
        result = run_plan(replace(plan, limits=replace(plan.limits, grace_period_s=PROBE_GRACE_S)).to_dict())
        latency = (result.get("latency") or {}).get("all") or {}
        requests = result.get("requests") or {}
        responses = int(requests.get("responses") or 0)
        return Probe(latency.get("p50_ms") if responses else None, responses, int(requests.get("sent") or 0))

    def _safe_probe(self) -> Probe | None:
        try:
            return self._probe()
        except KeyboardInterrupt:
            raise
        except Exception as e:  # a plan that needs its setup's pools, a target down: not probed
            self.unprobed = f"the target's drain was not probed ({str(e).splitlines()[0][:160]})"
            return None

    def measure_baseline(self) -> None:
        """measure_baseline times the probe against the idle target (call before the first run)."""
        if self.unprobed is not None:
            return
        probe = self._safe_probe()
        if probe is not None:
            self.baseline_ms, self.baseline_sent = probe.p50_ms, probe.sent

    def bound_ms(self) -> float | None:
        """bound_ms is the probe latency at or under which the target counts as drained."""
        return None if self.baseline_ms is None else self.baseline_ms * SETTLED_FACTOR + SETTLED_SLACK_MS

    def wait(self) -> Settled:
        """wait probes until the target has drained or ``max_wait_s`` has passed (a stop signal
        passes through as KeyboardInterrupt)."""
        if self.unprobed is not None or self.baseline_ms is None:
            note = self.unprobed or "the target's drain was not probed (no response to the idle probe)"
            return Settled(0.0, 0, None, None, self.baseline_ms, False, 0, note)
        bound = self.bound_ms()
        assert bound is not None
        started = time.monotonic()
        first: float | None = None
        last: float | None = None
        probes = sent = 0
        while True:
            probe = self._safe_probe()
            if probe is None:
                return Settled(
                    time.monotonic() - started, probes, first, last, self.baseline_ms, False, sent, self.unprobed
                )
            probes, sent = probes + 1, sent + probe.sent
            last = probe.p50_ms
            first = last if probes == 1 else first
            waited = time.monotonic() - started
            if last is not None and last <= bound:
                return Settled(waited, probes, first, last, self.baseline_ms, True, sent)
            if waited >= self.max_wait_s:
                return Settled(waited, probes, first, last, self.baseline_ms, False, sent)
            time.sleep(min(PROBE_S, max(0.0, self.max_wait_s - waited)))
