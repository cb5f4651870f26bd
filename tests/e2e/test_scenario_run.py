"""End to end: ``surge run FILE.yaml`` against the reference target: setup feeds the main run,
thresholds decide the exit code (99), abort_on_fail stops a run early, mistakes exit 2 with
file:line, --time-scale shortens everything, and the target's counts agree."""

from __future__ import annotations

import pytest

from conftest import surge, write


def test_setup_captures_feed_the_measured_run_and_teardown_and_are_not_counted(tmp_path, fresh_target):
    path = write(
        tmp_path,
        """\
        target: http://127.0.0.1:9
        variables:
          n: {type: counter}
          task: {type: pool, pool: task_ids, pick: zipf, s: 1.1}
        setup:
          executor: {type: shared-iterations, vus: 4, iterations: 200}
          flow:
            - name: create
              request: {method: POST, path: /tasks, json: {title: "t{{n}}"}}
              check: {status: 201}
              capture: {task_ids: {json: $.id, to_pool: true}}
        scenarios:
          reads:
            executor: {type: shared-iterations, vus: 4, iterations: 300}
            flow:
              - name: get task
                request: {path: "/tasks/{{task}}"}
                check: {status: 200}
        teardown:
          executor: {type: shared-iterations, vus: 2, iterations: 50}
          flow:
            - {name: delete, request: {method: DELETE, path: "/tasks/{{task}}"}}
        thresholds:
          - {expr: "checks > 0.999"}
          - {expr: "p(99) < 5s", tag: get task}
        """,
    )
    run = surge("run", str(path), "--target", fresh_target.url, "--json")
    assert run.code == 0, run.stderr
    doc = run.json()
    assert doc["requests"]["sent"] == 300, "setup and teardown are not in the measured results"
    assert doc["setup"]["requests"]["sent"] == 200 and doc["setup"]["pools"] == {"task_ids": 200}
    assert doc["teardown"]["requests"]["sent"] == 50
    assert [c["passes"] for c in doc["checks"]] == [300]
    assert [(t["status"], t["passed"]) for t in doc["thresholds"]] == [("pass", True), ("pass", True)]
    stats = fresh_target.stats()["received_by_route"]
    assert stats["POST /tasks"] == 200 and stats["GET /tasks/{id}"] == 300 and stats["DELETE /tasks/{id}"] == 50


def test_failed_threshold_exits_99_and_the_summary_shows_each_verdict(tmp_path, fresh_target):
    path = write(
        tmp_path,
        """\
        target: http://127.0.0.1:9
        scenarios:
          missing:
            executor: {type: shared-iterations, vus: 2, iterations: 40}
            flow: [{name: nope, request: {path: /tasks/999999}, check: {status: 200}}]
          fine:
            executor: {type: shared-iterations, vus: 1, iterations: 10}
            flow: [{name: health, request: {path: /health}}]
        thresholds:
          - "failure_rate < 1%"
          - {expr: "p(95) < 10s", tag: health}
          - {expr: "checks > 0.99"}
          - {expr: "checks > 0.5", scenario: fine, no_data: pass}
        """,
    )
    run = surge("run", str(path), "--target", fresh_target.url)
    assert run.code == 99, run.stdout + run.stderr
    lines = [line.strip() for line in run.stdout.splitlines()]
    assert any(line.startswith("✗ failure_rate < 1% [all]: 80%") for line in lines), run.stdout
    assert any(line.startswith("✓ p(95) < 10s [tag 'health']") for line in lines), run.stdout
    assert any(line.startswith("✗ checks > 0.99 [all]: 0%") for line in lines), run.stdout
    assert any("no data (passes)" in line for line in lines), run.stdout
    assert "Requests by tag" in run.stdout and "Checks" in run.stdout


def test_threshold_over_no_samples_fails_unless_told_otherwise(tmp_path, fresh_target):
    path = write(
        tmp_path,
        """\
        target: http://127.0.0.1:9
        scenarios:
          a:
            executor: {type: shared-iterations, vus: 1, iterations: 5}
            flow: [{name: health, request: {path: /health}}]
        thresholds:
          - {expr: "checks > 0.99"}
        """,
    )
    doc = surge("run", str(path), "--target", fresh_target.url, "--json")
    assert doc.code == 99
    assert doc.json()["thresholds"][0]["status"] == "no-data"


def test_abort_on_fail_stops_the_run_early_and_exits_99(tmp_path, fresh_target):
    path = write(
        tmp_path,
        """\
        target: http://127.0.0.1:9
        scenarios:
          slow:
            executor: {type: constant-vus, vus: 2, duration: 20s}
            flow: [{name: slow, request: {path: /delay/30}}]
        thresholds:
          - {expr: "p(95) < 10ms", abort_on_fail: true, delay: 1s}
        """,
    )
    run = surge("run", str(path), "--target", fresh_target.url, "--json")
    assert run.code == 99, run.stderr
    doc = run.json()
    assert doc["stop_reason"] == "aborted"
    assert doc["aborted_by_threshold"] == ["p(95) < 10ms"]
    assert doc["elapsed_s"] < 10, f"the 20 s run should stop about 1-2 s in, ran {doc['elapsed_s']:.1f}s"
    assert doc["requests"]["sent"] == fresh_target.received()


def test_time_scale_shortens_every_duration(tmp_path, fresh_target):
    path = write(
        tmp_path,
        """\
        target: http://127.0.0.1:9
        scenarios:
          steady:
            executor: {type: constant-arrival-rate, rate: 200/s, duration: 20s, max_vus: 20}
            flow: [{name: health, request: {path: /health}}]
          later:
            executor: {type: constant-vus, vus: 1, duration: 10s}
            start_time: 10s
            think_time: 1s
            flow: [{name: later, request: {path: /tasks}}]
        """,
    )
    run = surge("run", str(path), "--target", fresh_target.url, "--time-scale", "0.05", "--json")
    assert run.code == 0, run.stderr
    doc = run.json()
    steady, later = doc["scenarios"]
    # 200/s for 20 s x 0.05 = 1 s: 200 iterations; the rate is not scaled, durations are.
    assert steady["iterations"]["iterations_started"] == 200
    # later: 0.5 s of one VU thinking 1 s after each iteration (think times are not scaled): one.
    assert later["iterations"]["iterations_started"] == 1, later
    assert doc["elapsed_s"] < 8, doc["elapsed_s"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "target: http://127.0.0.1:9\nscenarios:\n  a:\n    executor: {type: constant-vus, vus: 1, duration: 5}\n"
            "    flow: [{request: {path: /health}}]\n",
            ":4: scenarios.a.executor.duration",
        ),
        (
            "target: http://127.0.0.1:9\nscenarios:\n  a:\n    executor: {type: constant-vus, vus: 1, duration: 1s}\n"
            "    flow: [{request: {path: '/tasks/{{nope}}'}}]\n",
            ":5:",
        ),
        (
            "target: http://127.0.0.1:9\nscenarios:\n  a:\n    executor: {type: constant-vus, vus: 1, duraton: 1s}\n"
            "    flow: [{request: {path: /health}}]\n",
            ":4:",
        ),
    ],
)
def test_invalid_files_exit_2_naming_file_and_line(tmp_path, text, expected):
    path = write(tmp_path, text)
    run = surge("run", str(path))
    assert run.code == 2, run.stderr
    assert run.stdout == ""
    lines = run.stderr.strip().splitlines()
    assert all(line.startswith("surge: error: ") for line in lines), run.stderr
    assert f"{path}{expected}" in run.stderr, run.stderr
    assert "Traceback" not in run.stderr


def test_flags_of_the_url_form_are_refused_with_a_file(tmp_path):
    path = write(tmp_path, "target: http://127.0.0.1:9\nscenarios: {}\n")
    run = surge("run", str(path), "-c", "10")
    assert run.code == 2
    assert (
        run.stderr.strip()
        == f"surge: error: -c/--connections: does not apply to a scenario file ({path}): set it in the file"
    )
    run = surge("run", "http://127.0.0.1:9/", "--time-scale", "2")
    assert run.code == 2 and "--time-scale: only applies to a scenario file" in run.stderr
    run = surge("run", str(path), "--time-scale", "0")
    assert run.code == 2 and "--time-scale: must be a positive factor" in run.stderr


def test_scenarios_needing_more_connections_than_the_fd_limit_are_refused_with_the_numbers(tmp_path):
    path = write(
        tmp_path,
        """\
        target: http://127.0.0.1:9
        scenarios:
          a:
            executor: {type: constant-vus, vus: 700000, duration: 1s}
            flow: [{request: {path: /health}}]
          b:
            executor: {type: constant-arrival-rate, rate: 10/s, duration: 1s, max_vus: 700000}
            flow: [{request: {path: /health}}]
        """,
    )
    run = surge("run", str(path))
    assert run.code == 2, run.stderr
    assert "1400000 connections need about" in run.stderr and "file descriptors but the limit is" in run.stderr


def test_the_python_api_runs_a_model_built_in_code(fresh_target):
    from surge.run.phases import run_phases
    from surge.scenario import Check, Request, Scenario, ScenarioFile, Step

    f = ScenarioFile(
        target=fresh_target.url,
        scenarios={
            "api": Scenario(
                executor={"type": "shared-iterations", "vus": 2, "iterations": 30},
                flow=[Step(name="health", request=Request(path="/health"), check=Check(status=200))],
            )
        },
        thresholds=["p(99) < 5s", "checks > 0.99"],
    )
    outcome = run_phases(f.compile())
    assert outcome.main["requests"]["sent"] == 30 == fresh_target.received()
    assert [v.status for v in outcome.verdicts] == ["pass", "pass"]
    assert outcome.exit_code() == 0


THRESHOLD_FORMS = [
    ("p(50) > 19ms", "pass"),
    ("p(50) < 19ms", "fail"),
    ("p(99) < 1s", "pass"),
    ("p(99.9) < 1s", "pass"),
    ("p(90) < 5ms", "fail"),
    ("p(95) > 19ms", "pass"),
    ("p(75) > 19ms", "pass"),
    ("p(75) < 5ms", "fail"),
    ("p(99.99) < 1s", "pass"),
    ("success.p(12.5) > 19ms", "pass"),
    ("med > 19ms", "pass"),
    ("avg > 19ms", "pass"),
    ("avg < 10ms", "fail"),
    ("min >= 19ms", "pass"),
    ("max < 1s", "pass"),
    ("max < 5ms", "fail"),
    ("service_time.p(95) > 19ms", "pass"),
    ("success.p(95) > 19ms", "pass"),
    ("failure_rate < 1%", "pass"),
    ("failure_rate > 0.5", "fail"),
    ("rate > 10/s", "pass"),
    ("rate > 100000/s", "fail"),
    ("checks > 0.99", "pass"),
    ("checks < 0.5", "fail"),
    ("dropped == 0", "pass"),
    ("dropped > 0", "fail"),
]


def test_every_threshold_form_against_a_known_latency(tmp_path, target):
    # /delay/20 answers after 20 ms: every latency statistic is known within the machine's
    # noise. Each form is judged overall, for the tag and for the scenario.
    lines = []
    for expr, _ in THRESHOLD_FORMS:
        lines += [f'  - "{expr}"', f'  - {{expr: "{expr}", tag: delayed}}', f'  - {{expr: "{expr}", scenario: timed}}']
    path = write(
        tmp_path,
        """\
target: http://127.0.0.1:9
scenarios:
  timed:
    executor: {type: constant-vus, vus: 4, duration: 1s}
    flow: [{name: delayed, request: {path: /delay/20}, check: {status: 200}}]
thresholds:
"""
        + "\n".join(lines)
        + "\n",
    )
    run = surge("run", str(path), "--target", target.url, "--json")
    statuses = [t["status"] for t in run.json()["thresholds"]]
    assert statuses == [status for _, status in THRESHOLD_FORMS for _ in range(3)], run.json()["thresholds"]
    assert run.code == 99
