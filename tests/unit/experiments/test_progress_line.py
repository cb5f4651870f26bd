"""An experiment's per-run progress line writes its numbers as every table does
(surge.present.numbers: three decimals for milliseconds and percentages, ``-`` for a missing figure)."""

from __future__ import annotations

from surge.core import exit_codes
from surge.core.exit_codes import Outcome
from surge.experiments.runner import RunReport, progress_line


def _report(figures: dict[str, float | None], outcome: Outcome) -> RunReport:
    return RunReport(
        position=2,
        role="repeat 2/3",
        label="2",
        run_id="5e32af54c0ffee00c0ffee00c0ffee00",
        summary={},
        figures=figures,
        verdict="none",
        outcome=outcome,
        complete=True,
    )


def test_progress_line_writes_each_unit_by_the_number_formatter() -> None:
    figures = {"responses_per_s": 91763.24, "p50_ms": 0.0481, "p95_ms": 0.0714, "p99_ms": 12.3456, "failure_rate": 0.0}
    line = progress_line(_report(figures, Outcome(exit_codes.OK)))
    assert line == (
        "repeat 2/3: 5e32af54 · 91,763.2 req/s · p50 0.048 · p95 0.071 · p99 12.346 ms · failures 0.000% · none"
    )


def test_progress_line_marks_missing_figures_and_says_how_the_run_ended() -> None:
    line = progress_line(_report({"responses_per_s": 10.0}, Outcome(exit_codes.UNREACHABLE, "nothing was sent")))
    assert line == "repeat 2/3: 5e32af54 · 10.0 req/s · p50 - · p95 - · p99 - ms · failures - · none · nothing was sent"
