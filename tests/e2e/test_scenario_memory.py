"""Memory per scenario, per CSV row, per VU and per tag: what a run holds for what it is given
stays within the memory model of docs/scenarios.md ("Memory"), and a file that would pass one of
its bounds is refused before the run, one line naming FILE:LINE and the key, exit code 2.

A file of 1,000 one-VU scenarios runs in one process, its peak RSS a small fraction of what
per-slot dense histograms took (about 4.4 MB a scenario, so 1,000 were killed at 2.9 GB). A
CSV file is held as one string and one offset a cell, not an object per cell (a 16 MiB file of
1-character rows took 2.87 GB, and two variables on it aborted the process)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from conftest import SCRATCH, surge
from surge.core.limits import MAX_CSV_PLAN_BYTES, MAX_TAGS, MAX_VU_VALUE_BYTES
from surge.scenario import ScenarioError, load

pytestmark = pytest.mark.cpu_heavy  # runs apart from the answer tests (Makefile: test-python)

SCENARIOS = 1000


def test_a_thousand_one_vu_scenarios_run_in_one_file(tmp_path, fresh_target):
    lines = [f"target: {fresh_target.url}", "scenarios:"]
    for i in range(SCENARIOS):
        lines += [
            f"  s{i}:",
            "    executor: {type: constant-vus, vus: 1, duration: 2s}",
            "    flow: [{request: {path: /health}}]",
        ]
    path = tmp_path / "many.yaml"
    path.write_text("\n".join(lines) + "\n")
    run = surge("run", str(path), "--json", timeout=300)
    assert run.code == 0, run.stderr[-2000:]
    doc = run.json()
    assert len(doc["scenarios"]) == SCENARIOS == len(doc["tags"])
    assert all(s["requests"]["responses"] > 0 for s in doc["scenarios"]), "every scenario ran"
    assert doc["requests"]["sent"] == fresh_target.received()
    # Measured ~90 MB (docs/engine.md); the margin is wide, the old cost was ~4.4 GB.
    assert doc["generator"]["max_rss_kib"] < 300 * 1024, doc["generator"]


def peak_rss_mib(*args: str, limit_mib: int = 2048) -> tuple[subprocess.CompletedProcess[str], float]:
    """peak_rss_mib runs ``surge ARGS`` in a child of a child (so that the count is its own
    alone: RUSAGE_CHILDREN of a process whose one child has exited), with its address space
    capped at ``limit_mib`` so that a regression fails the test rather than the machine, and
    returns the finished run and its peak RSS in MiB."""
    probe = textwrap.dedent(f"""
        import json, resource, subprocess, sys
        def cap():
            resource.setrlimit(resource.RLIMIT_AS, ({limit_mib} << 20, {limit_mib} << 20))
        p = subprocess.run([sys.executable, "-m", "surge", *{list(args)!r}], capture_output=True, text=True,
                           stdin=subprocess.DEVNULL, preexec_fn=cap)
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(json.dumps([p.returncode, p.stdout[-2000:], p.stderr[-2000:], peak]))
    """)
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=SCRATCH)
    code, stdout, stderr, peak = json.loads(out.stdout)
    return subprocess.CompletedProcess(args, code, stdout, stderr), peak


def test_two_csv_variables_on_a_large_file_of_short_rows_take_little_memory(tmp_path, fresh_target):
    rows = (4 << 20) // 2 - 1  # 4 MiB of 1-character rows: 2 million rows
    (tmp_path / "ids.csv").write_text("id\n" + "x\n" * rows)
    path = tmp_path / "csv.yaml"
    path.write_text(
        textwrap.dedent(f"""\
        target: {fresh_target.url}
        variables:
          a: {{type: csv, file: ids.csv}}
          b: {{type: csv, file: ids.csv, pick: random}}
        scenarios:
          s:
            executor: {{type: per-vu-iterations, vus: 1, iterations: 3}}
            flow: [{{request: {{path: "/health?a={{{{a.id}}}}&b={{{{b.id}}}}"}}}}]
        """)
    )
    run, peak = peak_rss_mib("run", str(path))
    assert run.returncode == 0, run.stderr
    assert fresh_target.received() == 3
    # Measured ~135 MB (docs/scenarios.md, Memory); the old cost was ~700 MB a variable.
    assert peak < 400, peak


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


def vu_values(tmp_path, vus: int, variables: int, length: int) -> str:
    """vu_values writes a file whose scenario runs ``vus`` VUs, each using ``variables``
    random strings of ``length`` characters (defined from line 3 on)."""
    defs = "".join(f"  s{i}: {{type: random-string, length: {length}}}\n" for i in range(variables))
    body = "".join(f"{{{{s{i}}}}}" for i in range(variables))
    path = tmp_path / "values.yaml"
    path.write_text(
        f"target: http://127.0.0.1:9/\nvariables:\n{defs}scenarios:\n  s:\n"
        f"    executor: {{type: constant-vus, vus: {vus}, duration: 1s}}\n"
        f"    flow: [{{request: {{method: POST, path: /, body: '{body}'}}}}]\n"
    )
    return str(path)


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


def test_a_run_past_the_values_bound_is_refused_by_the_cli_in_little_memory(tmp_path):
    run, peak = peak_rss_mib("run", vu_values(tmp_path, 64, 20, 1 << 20), limit_mib=1024)
    assert run.returncode == 2, run.stderr
    assert len(run.stderr.splitlines()) == 1 and ":3: variables.s0: 64 VUs" in run.stderr, run.stderr
    assert peak < 300, peak


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
