"""An experiment states what the diagnosis found in its runs: one finding per kind, naming the
runs, with the advice that follows (surge.experiments.run_findings)."""

from __future__ import annotations

from surge.diagnosis.findings import ADVICE, DEFAULT_ADVICE, compact, run_findings


def _entry(label: str, *kinds: str) -> dict:
    return {
        "label": label,
        "findings": [{"kind": k, "severity": "warning", "message": f"{k} in {label}"} for k in kinds],
    }


def test_each_kind_is_stated_once_with_its_runs_and_advice():
    entries = [_entry("1", "generator_saturated"), _entry("2"), _entry("3", "generator_saturated", "load_shed")]
    lifted = run_findings(entries)
    assert [f["kind"] for f in lifted] == ["run.generator_saturated", "run.load_shed"]
    assert lifted[0]["text"] == ("generator saturated in 2 of 3 runs (1, 3); run 1: generator_saturated in 1")
    assert lifted[0]["advice"] == ADVICE["generator_saturated"]
    assert lifted[1]["text"].startswith("load shed in 1 of 3 runs (3); ") and lifted[1]["advice"] == DEFAULT_ADVICE


def test_runs_without_findings_lift_nothing():
    assert run_findings([_entry("1"), {"label": "2"}]) == []


def test_compact_keeps_kind_severity_and_message_only():
    full = [{"kind": "queueing", "severity": "info", "message": "m", "evidence": {"in_flight": 3.0}}]
    assert compact(full) == [{"kind": "queueing", "severity": "info", "message": "m"}]
    assert compact(None) == []


def test_a_sweeps_warm_ups_are_left_out():
    entries = [
        {**_entry("warmup vus=8", "queueing"), "role": "warmup vus=8"},
        {**_entry("vus=8", "load_shed"), "role": "level vus=8"},
    ]
    lifted = run_findings(entries)
    assert [f["kind"] for f in lifted] == ["run.load_shed"] and "in 1 of 1 runs (vus=8)" in lifted[0]["text"]
