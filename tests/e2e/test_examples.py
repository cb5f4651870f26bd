"""The examples (examples/*.yaml) reproduce the experiments of the seed reports against the
reference target configured like each report's system. Each runs here briefly, shortened by
``--time-scale``, against a ``TargetProcess`` started with the flags of the example's
``# target:`` line, and the result must have the example's shape: the exit code decided
below, one result per scenario with iteration counts the executor implies, every tag, check
and threshold of the file, setup pools filled, and as many requests received by the target as
the run says it sent (setup included).

``--time-scale`` shortens stages and durations but not think times, the target's service
times, timeouts, graceful stops, VU counts or rates, so a scaled run offers the full run's load
for less time; a queue that needs longer to build than a scaled stage lasts does not build as
far. The expected codes below are those of the scaled runs, and each says why (the file's
header gives the full run's).
"""

from __future__ import annotations

import math
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import surge
from surge.engine.target import TargetProcess
from surge.scenario import load

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

RAMP_TICK_S = 0.01
"""RAMP_TICK_S is how often the engine re-evaluates a ramp's VU count (worker/mod.rs)."""


@dataclass(frozen=True)
class Case:
    """Case is one example as this test runs it."""

    name: str
    scale: float
    code: int
    failing: tuple[str, ...] = ()
    """failing are the thresholds that must fail (why the code is 99)."""
    passing: tuple[str, ...] = ()
    """passing are thresholds that must pass even though the run exits 99."""
    cpu_bound: bool = False
    """cpu_bound: the target burns CPU (--service-cpu), so its latency depends on the CPU the
    machine leaves it (the tests run in parallel): a latency threshold may fail (exit 99), never
    another."""


CASES = [
    # 250 req/s served to 200 closed-loop VUs: ~0.8 s each, under the 1.5 s p95 on a free core;
    # no errors. The target is one CPU-bound event loop: on a busy machine it serves less.
    Case("faas-ramp-200vu", 0.05, 0, cpu_bound=True),
    # 300/s due for 3 s; the queue grows 50/s, VUs stay under 200, p95 ~0.6 s < 2 s (free core).
    Case("faas-constant-300rps", 0.1, 0, cpu_bound=True),
    # 35 and 75 VUs thinking 1 s between requests of ~0.3 s offer at most ~27 and ~58 req/s to
    # the ~51 req/s target for 3 s and 2.3 s: the stress run queues a little, latency stays far
    # under the SLOs (2.8 s, 5.5 s); no errors.
    Case("microservices-baseline-35vu", 0.005, 0),
    Case("microservices-stress-75vu", 0.005, 0),
    # 1 s think time: ~100 iterations (~400 requests) per second at the 100-VU peak against
    # 14,000 req/s: p95 a few ms.
    Case("taskapi-crud-baseline", 0.1, 0),
    # 1,000 and 800 VUs without think time against at most 14,000 req/s: >= 71 ms and 57 ms a
    # request at the peak (Little's law), so p95 < 50 ms fails, at any scale; no errors.
    Case("taskapi-stress-80-20", 0.03, 99, failing=("p(95) < 50ms",), passing=("failure_rate < 1%",)),
    Case("taskapi-read-heavy-zipf", 0.05, 99, failing=("p(95) < 50ms",), passing=("failure_rate < 1%",)),
    # 2,000 connections, far past the peak of ~210 in service: requests take seconds, so p99 <
    # 300 ms fails. (Whether ~1 % time out at 20 s in 3 s is chance: failure_rate is not asserted.)
    Case("edge-proxy-health", 0.05, 99, failing=("p(99) < 300ms",)),
    # 8 workers held by 8 keep-alive VUs: every other VU's requests wait out the 10 s timeout
    # (within the 30 s graceful ramp-down), so every threshold fails.
    Case("gateway-spike", 0.03, 99, failing=("p(95) < 200ms", "p(99) < 500ms", "failure_rate < 1%", "checks > 0.99")),
]


def target_flags(path: Path) -> list[str]:
    """target_flags are the ``surge target`` flags of the example's one ``# target:`` line."""
    lines = [line for line in path.read_text().splitlines() if line.startswith("# target:")]
    assert len(lines) == 1, f"{path.name}: one '# target: FLAGS' line expected, found {len(lines)}"
    return shlex.split(lines[0].partition(":")[2])


def header(path: Path) -> str:
    """header is the comment block at the top of the example."""
    lines = []
    for line in path.read_text().splitlines():
        if not line.startswith("#"):
            break
        lines.append(line)
    return "\n".join(lines)


def steps(plan: dict[str, Any]) -> list[tuple[str, str, list[dict[str, Any]], list[dict[str, Any]]]]:
    """steps lists (scenario, tag, checks, captures) for every step of a compiled plan."""
    return [
        (scenario["name"], step["tag"], step["checks"], step["captures"])
        for scenario in plan["scenarios"]
        for sequence in scenario["flow"]["sequences"]
        for step in sequence["steps"]
    ]


def test_every_example_is_run_here():
    assert sorted(p.stem for p in EXAMPLES.glob("*.yaml")) == sorted(c.name for c in CASES)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_header_names_the_report_the_test_and_the_target(case):
    path = EXAMPLES / f"{case.name}.yaml"
    text = header(path)
    assert re.search(r"seed 00\d \(shared/seeds/00\d_[0-9a-f]{16}\.txt\)", text), "which report"
    for label in ("Report", "Test", "Measured", "Target", "Expect", "Run"):
        assert re.search(rf"^# {label}\b", text, re.M), f"{path.name}: no '# {label}' paragraph"
    flags = " ".join(target_flags(path))
    run = " ".join(line.lstrip("# ").strip() for line in text.splitlines() if "surge " in line)
    assert f"surge target {flags} &" in run and f"surge run examples/{path.name}" in run, run
    assert load(path).target == "http://127.0.0.1:8080"


def check_executor(plan: dict[str, Any], result: dict[str, Any]) -> None:
    """check_executor: the scenario's iteration counts are what its executor implies."""
    executor, name = plan["executor"], plan["name"]
    its = result["iterations"]
    started, opened = its["iterations_started"], its["connections_opened"]
    assert started == its["iterations_completed"] + its["iterations_interrupted"] + its["iterations_aborted"], (
        name,
        its,
    )
    kind = executor["type"]
    if kind == "constant-vus":
        assert opened == executor["vus"], (name, its)
        assert its["iterations_dropped"] == 0
    elif kind == "ramping-vus":
        stages, level = executor["stages"], executor["start_vus"]
        peak = max([level] + [s["target"] for s in stages])
        held = False
        steepest = 0.0
        for stage in stages:
            held |= level == stage["target"] == peak and stage["duration_s"] > 0
            if stage["duration_s"] > 0:
                steepest = max(steepest, abs(stage["target"] - level) / stage["duration_s"])
            level = stage["target"]
        # A peak held for a while is reached exactly; a peak of one instant (a ramp up then at
        # once down) within what the ramp moves between two of the engine's re-evaluations.
        slack = 0 if held else math.ceil(steepest * RAMP_TICK_S) + 2
        assert peak - slack <= opened <= peak, (name, peak, slack, its)
        assert its["iterations_dropped"] == 0
    elif kind == "constant-arrival-rate":
        due = executor["rate"] * executor["duration_s"]
        assert abs(started + its["iterations_dropped"] - due) <= max(2, 0.01 * due), (name, due, its)
        assert opened <= executor["max_vus"], (name, its)
    elif kind == "shared-iterations":
        assert started == executor["iterations"], (name, its)
    elif kind == "per-vu-iterations":
        assert started == executor["vus"] * executor["iterations"], (name, its)
    else:
        raise AssertionError(f"{name}: no expectation for executor {kind}")


def check_mix(plan: dict[str, Any], doc: dict[str, Any]) -> None:
    """check_mix: in a mix, each entry's share of the requests of its first step is its weight."""
    sequences = plan["flow"]["sequences"]
    if len(sequences) < 2:
        return
    sent = {(t["scenario"], t["tag"]): t["requests"]["sent"] for t in doc["tags"]}
    firsts = [sent[(plan["name"], seq["steps"][0]["tag"])] for seq in sequences]
    total_weight = sum(seq["weight"] for seq in sequences)
    for seq, count in zip(sequences, firsts, strict=False):
        share, weight = count / sum(firsts), seq["weight"] / total_weight
        assert abs(share - weight) < 0.03, (plan["name"], seq["name"], share, weight)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_example_runs_briefly_with_the_expected_shape(case):
    path = EXAMPLES / f"{case.name}.yaml"
    compiled = load(path).compile(time_scale=case.scale)
    with TargetProcess(*target_flags(path)) as target:
        target.reset_stats()
        run = surge("run", str(path), "--target", target.url, "--time-scale", str(case.scale), "--json")
        received = target.received()
    codes = (case.code, 99) if case.cpu_bound else (case.code,)
    assert run.code in codes, run.stderr[-3000:] + run.stdout[-3000:]
    doc = run.json()

    # One result per scenario, in order, with the counts its executor implies.
    plans = compiled.main.to_dict()["scenarios"]
    assert [s["name"] for s in doc["scenarios"]] == [p["name"] for p in plans]
    for plan, result in zip(plans, doc["scenarios"], strict=False):
        check_executor(plan, result)
        check_mix(plan, doc)

    # Every tag of the file has requests, and every check of every step was counted.
    tags = {(t["scenario"], t["tag"]): t["requests"]["sent"] for t in doc["tags"]}
    checks = {(c["scenario"], c["tag"], c["name"]): c["passes"] + c["fails"] for c in doc["checks"]}
    for scenario, tag, step_checks, _ in steps(compiled.main.to_dict()):
        assert tags.get((scenario, tag), 0) > 0, (scenario, tag, sorted(tags))
        for check in step_checks:
            assert checks.get((scenario, tag, check["name"]), 0) > 0, (scenario, tag, check["name"])
    assert doc["requests"]["sent"] == sum(tags.values())

    # Every threshold is judged; the failing ones explain the exit code.
    verdicts = {t["expr"]: t["status"] for t in doc["thresholds"]}
    assert [t["expr"] for t in doc["thresholds"]] == [t.expr for t in compiled.thresholds]
    assert set(verdicts.values()) <= {"pass", "fail"}, verdicts
    for expr in case.failing:
        assert verdicts[expr] == "fail", (expr, doc["thresholds"])
    for expr in case.passing:
        assert verdicts[expr] == "pass", (expr, doc["thresholds"])
    assert (run.code == 99) == ("fail" in verdicts.values()), verdicts
    if case.cpu_bound:
        assert all(expr.startswith("p(") for expr, status in verdicts.items() if status == "fail"), verdicts

    # Setup ran its iterations, every one passed its checks and filled its pool.
    phases = [doc["requests"]["sent"]]
    if compiled.setup is not None:
        setup, plan = doc["setup"], compiled.setup.to_dict()["scenarios"][0]
        iterations = plan["executor"]["iterations"]
        setup_steps = steps(compiled.setup.to_dict())
        assert setup["requests"]["sent"] == iterations * len(setup_steps)
        assert setup["requests"]["failed"] == 0
        pools = {c["name"] for _, _, _, captures in setup_steps for c in captures if c["to_pool"]}
        assert setup["pools"] == {pool: iterations for pool in pools}
        assert {(c["tag"], c["name"]): (c["passes"], c["fails"]) for c in setup["checks"]} == {
            (tag, check["name"]): (iterations, 0) for _, tag, step_checks, _ in setup_steps for check in step_checks
        }
        phases.append(setup["requests"]["sent"])
    else:
        assert "setup" not in doc
    if compiled.teardown is not None:
        phases.append(doc["teardown"]["requests"]["sent"])

    # The target saw exactly the requests the run says it sent, setup included.
    assert received == sum(phases), (received, phases)
