"""The exit code of each experiment kind and its reason (surge.experiments.outcome), and the words
of the baseline check's rule (surge.present.terminal.baseline_table): pure functions, no process."""

from __future__ import annotations

import math

import pytest

from surge.analysis.capacity_search import CapacityResult
from surge.analysis.regression import Comparison
from surge.core import exit_codes
from surge.core.exit_codes import Outcome
from surge.experiments.baseline_check import BaselineCheck
from surge.experiments.outcome import baseline_outcome, capacity_outcome, experiment_outcome, sweep_outcome
from surge.present.terminal.baseline_table import change_text, rule_text, value_text


def test_an_experiment_is_stopped_then_empty_then_failed_in_that_order():
    entries = [
        {"label": "1", "complete": True, "exit_code": 0, "verdict": "passed"},
        {"label": "2", "complete": True, "exit_code": 3, "verdict": "failed"},
        {"label": "3", "complete": True, "exit_code": 99, "verdict": "failed"},
    ]
    stopped = experiment_outcome(entries, 2, 5, "kept in the history")
    assert stopped.code == 130
    assert stopped.reason.endswith("experiment incomplete: 3 of 5 runs completed (kept in the history)")
    assert experiment_outcome(entries, None, 3, "") == Outcome(3, "run 2 measured nothing (exit code 3)")
    assert experiment_outcome(entries[::2], None, 2, "") == Outcome(99, "1 of 2 runs failed a threshold (run 3)")
    assert experiment_outcome(entries[:1], None, 1, "") == Outcome(exit_codes.OK)


def test_a_sweep_fails_only_when_no_level_measured_a_response():
    assert sweep_outcome(None, 2, 4, True, "") == Outcome(exit_codes.OK)
    assert sweep_outcome(None, 2, 4, False, "") == Outcome(3, "no level measured any response")
    assert sweep_outcome(2, 2, 4, True, "kept").reason.endswith("2 of 4 levels measured (kept)")


@pytest.mark.parametrize(
    ("reason", "rate", "code", "words"),
    [
        ("found", 240.0, 0, ""),
        ("max_rate", 1000.0, 0, ""),
        ("found", None, 99, "found"),
        ("nothing_passed", None, 99, "no rate passed the SLO"),
        ("generator_limit", 100.0, 99, "the generator could not keep its schedule"),
    ],
)
def test_a_capacity_search_passes_only_with_a_rate(reason, rate, code, words):
    outcome = capacity_outcome(None, CapacityResult(rate, None, True, reason, []), "")
    assert outcome.code == code
    assert outcome.reason.startswith(words)


def _check(*changes: float | None) -> BaselineCheck:
    comparisons = [
        Comparison(
            f"m{i}", 1.0, None if c is None else 1 + c, c, "missing" if c is None else "regressed" if c > 0.05 else "ok"
        )
        for i, c in enumerate(changes)
    ]
    return BaselineCheck("title", 1, 1, 0.05, comparisons, [], {})


def test_a_baseline_check_fails_naming_each_regressed_metric_with_its_change():
    assert baseline_outcome(_check(0.01, None), "main") == Outcome(exit_codes.OK)
    failed = baseline_outcome(_check(0.2, 0.01, math.inf), "main")
    assert failed == Outcome(99, "regression against baseline 'main': m0 +20.0%, m2 +∞ (tolerance 5.0%)")


def test_the_rule_line_names_the_rule_that_judged_the_figures():
    assert rule_text(1, 1, 0.05, 0.05).startswith("rule: tolerance alone (each side has one run:")
    assert "the baseline has one run" in rule_text(1, 3, 0.05, 0.05)
    assert "the current side has one run" in rule_text(3, 1, 0.05, 0.05)
    assert "Welch's test finds it worse (p < 0.05) and its mean is worse by more than 10.0%" in rule_text(
        3, 3, 0.1, 0.05
    )
    assert (value_text("p95", 1234.5), value_text("failure_rate", 0.0012), value_text("rps", None)) == (
        "1,234.500 ms",
        "0.120%",
        "-",
    )
    assert (change_text(None), change_text(-math.inf), change_text(0.123)) == ("-", "-∞", "+12.3%")
