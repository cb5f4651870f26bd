"""Process exit codes of the ``surge`` command, documented in the README, and Outcome: how
a run ended, with the one line that says why for every code but 0."""

from __future__ import annotations

import signal
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from surge.core import signals

OK = 0
"""OK: the run completed (and every threshold, if any, passed)."""

RUN_FAILED = 1
"""RUN_FAILED: an unexpected error stopped surge."""

BAD_INPUT = 2
"""BAD_INPUT: a flag, file or value is invalid; the message names it."""

UNREACHABLE = 3
"""UNREACHABLE: the run measured nothing: the target was never reached (DNS failure,
refused, connect timeout), or the run ended before it sent anything."""

OUTPUT_FAILED = 74
"""OUTPUT_FAILED: the command completed (a run: its record complete) but its output could not
be written to stdout (a closed pipe, a full disk, a closed stdout); sysexits' EX_IOERR. A run
that ended with a code of its own (3, 99, 128 + signal) keeps that code; the line is printed
either way."""

THRESHOLDS_FAILED = 99
"""THRESHOLDS_FAILED: the run completed but a threshold failed (k6's convention)."""

INTERRUPTED = 130
"""INTERRUPTED: the run was stopped by Ctrl-C (128 + SIGINT); partial results were reported.
SIGTERM gives 143 and SIGHUP 129 (``signals.exit_code``)."""


@dataclass(frozen=True)
class Outcome:
    """Outcome: the exit code a run ends with and, for every code but 0, one line saying why
    (printed on stderr as ``surge: REASON``)."""

    code: int
    reason: str = ""


def stopped(phase: str | None = None, detail: str = "") -> Outcome:
    """stopped is the outcome of a run stopped by a stop signal: 128 + the number of the first
    one received (SIGINT when none was recorded: a KeyboardInterrupt is Ctrl-C), the reason
    naming it, the ``phase`` it stopped in and ``detail`` (e.g. "results are partial")."""
    signum = signals.received() or signal.SIGINT
    where = f" during {phase}" if phase else ""
    return Outcome(
        signals.exit_code(signum), f"stopped by {signals.signal_name(signum)}{where}{': ' + detail if detail else ''}"
    )


def run_outcome(
    stop_reason: str, requests: Mapping[str, Any], *, nothing_sent: str, phase: str | None = None
) -> Outcome:
    """run_outcome maps a finished run to its Outcome: 128 + signal when a stop signal ended it
    (or arrived since), 3 when it measured nothing (the reason says whether the target was
    never reached or nothing was sent: ``nothing_sent`` explains the latter), else 0."""
    if stop_reason == "interrupted":
        return stopped(phase, "results are partial")
    if stop_reason == "generator_lost":
        return Outcome(RUN_FAILED, "a generator of the distributed run was lost: results are partial")
    if signals.received() is not None:
        return stopped(phase)
    failures = requests.get("failure_classes") or {}
    # Connected or not, a run that sent nothing and failed nothing measured nothing.
    if requests["sent"] == 0 and (requests["connections_opened"] == 0 or not failures):
        if failures:
            classes = ", ".join(f"{name} × {n:,}" for name, n in failures.items())
            return Outcome(UNREACHABLE, f"target never reached: every connection failed ({classes})")
        return Outcome(UNREACHABLE, f"sent nothing: {nothing_sent}")
    return Outcome(OK)
