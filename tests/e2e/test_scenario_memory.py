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
from hostile_inputs import vu_values

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


def test_a_run_past_the_values_bound_is_refused_by_the_cli_in_little_memory(tmp_path):
    run, peak = peak_rss_mib("run", vu_values(tmp_path, 64, 20, 1 << 20), limit_mib=1024)
    assert run.returncode == 2, run.stderr
    assert len(run.stderr.splitlines()) == 1 and ":3: variables.s0: 64 VUs" in run.stderr, run.stderr
    assert peak < 300, peak
