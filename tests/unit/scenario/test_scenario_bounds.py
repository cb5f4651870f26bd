"""What a run holds is bounded before it starts: the VUs' values, distinct tags, CSV data per scenario using it."""

from __future__ import annotations

import pytest

from hostile_inputs import vu_values
from surge.core.limits import MAX_CSV_PLAN_BYTES, MAX_TAGS, MAX_VU_VALUE_BYTES
from surge.scenario import ScenarioError, load

pytestmark = pytest.mark.cpu_heavy  # runs apart from the answer tests (Makefile: test-python)


def refusal(path: str, refused: bool) -> str:
    """refusal loads and compiles the file at ``path``, which must be ``refused`` or compile,
    and returns its error (one line), or "" when it compiled."""
    try:
        load(path, env={}).compile(env={})
    except ScenarioError as e:
        assert refused and "\n" not in str(e), str(e)
        return str(e)
    assert not refused, "compiled"
    return ""


@pytest.mark.parametrize(
    ("vus", "variables", "length", "refused"),
    [
        (64, 20, 1 << 20, True),  # the probe's case: 42 MB a VU, aborted at 64 VUs
        (13, 20, 1 << 20, True),  # 13 x 2 x 20 MiB = 520 MiB
        (12, 20, 1 << 20, False),
        (1, 1, 1 << 20, False),
        (1_000_000, 1, 300, True),
        (100_000, 1, 300, False),
    ],
)
def test_what_the_vus_hold_for_their_values_is_bounded_before_the_run(tmp_path, vus, variables, length, refused):
    assert (vus * 2 * variables * length > MAX_VU_VALUE_BYTES) == refused
    path = vu_values(tmp_path, vus, variables, length)
    line = refusal(path, refused)
    if not refused:
        return
    assert line.startswith(f"{path}:3: variables.s0: {vus:,} VUs each holding {variables} variable value(s)"), line
    assert "more than the 512 MiB a run may hold for them" in line, line


def tagged_steps(tmp_path, steps: int, scenarios: int = 1) -> str:
    """tagged_steps writes a file of ``scenarios`` scenarios each with ``steps`` steps of
    their own name (step k's name on line 6 + 2k of the first scenario)."""
    lines = ["target: http://127.0.0.1:9/", "scenarios:"]
    for s in range(scenarios):
        lines += [f"  s{s}:", "    executor: {type: constant-vus, duration: 1s}", "    flow:"]
        lines += [f"      - request: {{path: /{k}}}\n        name: t{k}" for k in range(steps)]
    path = tmp_path / "tags.yaml"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


@pytest.mark.parametrize(
    ("steps", "scenarios", "refused_at"),
    [
        # refused_at: (scenario, step) of the step that passes the bound
        (MAX_TAGS, 1, None),
        (MAX_TAGS + 1, 1, (0, MAX_TAGS)),  # the probe's 65,535 tags took 1.4 GB, 87 s, a 136 MB summary.json
        (MAX_TAGS // 2, 2, None),  # a tag counts once in each scenario that has it
        (MAX_TAGS // 2 + 1, 2, (1, MAX_TAGS // 2 - 1)),
    ],
)
def test_distinct_tags_are_bounded_before_the_run(tmp_path, steps, scenarios, refused_at):
    path = tagged_steps(tmp_path, steps, scenarios)
    line = refusal(path, refused_at is not None)
    if refused_at is None:
        return
    scenario, step = refused_at
    line_no = 6 + scenario * (3 + 2 * steps) + 2 * step
    assert line.startswith(f"{path}:{line_no}: scenarios.s{scenario}.flow[{step}]: this step's tag 't{step}'"), line
    assert f"passes the {MAX_TAGS:,} distinct tags a run keeps figures for" in line, line


def test_csv_data_held_by_a_run_is_bounded_counting_each_scenario_using_it(tmp_path):
    row = "x" * 1023
    rows = MAX_CSV_PLAN_BYTES // 5 // 1024 + 1  # a little over a fifth of the bound
    (tmp_path / "big.csv").write_text("v\n" + (row + "\n") * rows)
    head = "target: http://127.0.0.1:9/\nvariables:\n  big: {type: csv, file: big.csv}\nscenarios:\n"
    scenario = "  s{i}:\n    executor: {{type: constant-vus, duration: 1s}}\n    flow: [{{request: {{path: '/{{{{big.v}}}}'}}}}]\n"
    for count, refused in [(4, False), (5, True)]:
        path = tmp_path / f"uses-{count}.yaml"
        path.write_text(head + "".join(scenario.format(i=i) for i in range(count)))
        line = refusal(str(path), refused)
        if not refused:
            continue
        assert line.startswith(f"{path}:3: variables.big: the CSV data of this run adds up to"), line
        assert "more than the 64 MiB a run may hold" in line, line
