"""A run's outcome: what it measured nothing says, and an interrupted run names its signal."""

from __future__ import annotations

import pytest

from surge.core import exit_codes, signals


@pytest.mark.parametrize(
    "requests, reason",
    [
        (
            {"sent": 0, "connections_opened": 0, "failure_classes": {"connection_refused": 64}},
            "target never reached: every connection failed (connection_refused × 64)",
        ),
        ({"sent": 0, "connections_opened": 0, "failure_classes": {}}, "sent nothing: why"),
    ],
)
def test_run_outcome_measured_nothing(requests, reason):
    signals.reset()
    outcome = exit_codes.run_outcome("duration", requests, nothing_sent="why")
    assert outcome == exit_codes.Outcome(exit_codes.UNREACHABLE, reason)


def test_run_outcome_interrupted_names_the_signal():
    signals.reset()
    requests = {"sent": 5, "connections_opened": 1}
    assert exit_codes.run_outcome("interrupted", requests, nothing_sent="").code == 130
    signals.note(15)
    try:
        outcome = exit_codes.run_outcome("interrupted", requests, nothing_sent="", phase="main")
        assert outcome == exit_codes.Outcome(143, "stopped by SIGTERM during main: results are partial")
    finally:
        signals.reset()
