"""Scenario data end to end: ``surge run FILE.yaml --json`` against the reference target, with
each value a variable or capture produced checked twice, in the result document and in what
the target stored or counted.

- ``csv`` variables (a CSV file beside the YAML file): ``sequential`` is the file order with
  one VU, and with several threads each thread walks its own stripe of the rows (thread ``i``
  of ``c`` takes rows ``i, i+c, i+2c, …`` modulo the row count, as
  ``crates/surge-engine/src/spec/variables/mod.rs`` documents); ``random`` uses every row about
  equally (binomial bounds); ``unique`` pins one row to each VU (``{{row.column}}`` with two
  columns).
- ``env`` variables: the child's environment, the default, and exit 2 when neither exists.
- ``zipf`` variables at the bar's sizes: 100,000 reads of 10,000 tasks put the analytic share
  on the top 20 % of ids, per the target's per-task read counts.
- checks, each kind both passing and failing, counted once per request.
- a regex capture whose value the next request uses (the target counts a read of each
  created task).
- mistakes through ``surge run``: exit 2, one ``FILE:LINE: key: message`` line each.

Tasks are created with a ``run`` field unique to the test (the module's target is shared and
keeps its tasks) and read back with ``GET /tasks`` pages; ids count up from 1 in creation
order (docs/target.md), so sorting one VU's tasks by id gives its iterations in order.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import textwrap
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from conftest import SCRATCH, CliRun, surge, write
from surge.engine.target import TargetProcess


def write_csv(tmp_path: Path, name: str, header: list[str], rows: list[list[str]]) -> Path:
    """write_csv writes a CSV file with a header row beside the scenario files."""
    path = tmp_path / name
    path.write_text("\n".join(",".join(r) for r in [header, *rows]) + "\n")
    return path


def surge_env(*args: str, env: dict[str, str | None], timeout: float = 120) -> CliRun:
    """surge_env runs the CLI like conftest.surge, with ``env`` applied to the child's
    environment (a None value removes the variable)."""
    child = dict(os.environ)
    for key, value in env.items():
        if value is None:
            child.pop(key, None)
        else:
            child[key] = value
    proc = subprocess.run(
        [sys.executable, "-m", "surge", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        env=child,
        cwd=SCRATCH,
    )
    return CliRun(proc.returncode, proc.stdout, proc.stderr)


def marker() -> str:
    """marker is a value unique to one test, stored in every task it creates."""
    return uuid.uuid4().hex


def stored_tasks(target: TargetProcess, run: str) -> list[dict[str, Any]]:
    """stored_tasks pages through GET /tasks (1,000 per page, the most allowed) and returns
    the tasks whose ``run`` field is ``run``, in id order (= creation order)."""
    found: list[dict[str, Any]] = []
    offset = 0
    while True:
        status, text = target.request("GET", f"/tasks?limit=1000&offset={offset}")
        assert status == 200, text
        page = json.loads(text)
        found += [t for t in page["tasks"] if t.get("run") == run]
        offset += len(page["tasks"])
        if not page["tasks"] or offset >= page["total"]:
            break
    ids = [t["id"] for t in found]
    assert ids == sorted(ids), "GET /tasks lists tasks in id order"
    return found


def run_ok(path: Path, target: TargetProcess, *extra: str) -> dict[str, Any]:
    """run_ok runs a scenario file against ``target`` with --json and returns the document
    of a run that exited 0."""
    run = surge("run", str(path), "--target", target.url, "--json", *extra)
    assert run.code == 0, run.stderr
    return run.json()


def check_counts(doc: dict[str, Any]) -> dict[str, tuple[int, int]]:
    """check_counts maps each check's name to (passes, fails)."""
    return {c["name"]: (c["passes"], c["fails"]) for c in doc["checks"]}


ROWS3 = [["r1", "red"], ["r2", "green"], ["r3", "blue"]]

CREATE_FROM_ROW = """\
    target: http://127.0.0.1:9
    variables:
      row: {type: csv, file: rows.csv, pick: @PICK@}
      me: {type: vu}
    scenarios:
      load:
        executor: @EXECUTOR@
        flow:
          - name: create
            request: {method: POST, path: /tasks, json: {title: "{{row.name}}", color: "{{row.color}}", vu: "{{me}}", run: "@RUN@"}}
            check: {status: 201}
    """


# --- csv: sequential --------------------------------------------------------------------


def test_csv_sequential_with_one_vu_is_the_file_order_cycling(tmp_path, fresh_target):
    write_csv(tmp_path, "rows.csv", ["name", "color"], ROWS3)
    run = marker()
    path = write(
        tmp_path,
        CREATE_FROM_ROW,
        PICK="sequential",
        RUN=run,
        EXECUTOR="{type: shared-iterations, vus: 1, iterations: 7}",
    )
    doc = run_ok(path, fresh_target)
    assert doc["threads"] == 1, "one VU runs on one thread"
    assert doc["requests"]["sent"] == 7 and doc["requests"]["status_codes"] == {"201": 7}
    assert check_counts(doc) == {"status in [201]": (7, 0)}
    tasks = stored_tasks(fresh_target, run)
    assert [t["title"] for t in tasks] == ["r1", "r2", "r3", "r1", "r2", "r3", "r1"]
    # Both columns come from the same row.
    assert [(t["title"], t["color"]) for t in tasks] == [tuple(ROWS3[k % 3]) for k in range(7)]
    assert fresh_target.stats()["responses"]["POST /tasks"] == {"201": 7}


@pytest.mark.parametrize(
    ("threads", "vus", "rows", "iterations"),
    [
        (2, 2, 3, 7),  # one VU per thread; gcd(2, 3) = 1: each thread cycles through every row
        (3, 3, 4, 5),  # one VU per thread, 3 stripes over 4 rows
        (2, 4, 4, 5),  # two VUs per thread; gcd(2, 4) = 2: thread 0 only ever sees r1 and r3
    ],
)
def test_csv_sequential_with_threads_stripes_the_rows(tmp_path, fresh_target, threads, vus, rows, iterations):
    # What is guaranteed (variables/mod.rs, docs/plan.md): thread i of c draws rows
    # i, i+c, i+2c, ... modulo the row count, from one cursor shared by the thread's VUs.
    # per-vu-iterations fixes how many draws each thread makes (its VUs x iterations), so the
    # multiset of rows each thread used is exact; with one VU per thread the order is too.
    # The vu variable is 1 + i + c*v for VU v of thread i, so thread = (vu - 1) % c.
    table = [[f"r{k + 1}", f"c{k + 1}"] for k in range(rows)]
    write_csv(tmp_path, "rows.csv", ["name", "color"], table)
    run = marker()
    path = write(
        tmp_path,
        CREATE_FROM_ROW,
        PICK="sequential",
        RUN=run,
        EXECUTOR=f"{{type: per-vu-iterations, vus: {vus}, iterations: {iterations}}}",
    )
    doc = run_ok(path, fresh_target, "--threads", str(threads))
    assert doc["threads"] == threads
    assert doc["requests"]["sent"] == vus * iterations == fresh_target.received()
    tasks = stored_tasks(fresh_target, run)
    assert len(tasks) == vus * iterations
    assert all(t["color"] == "c" + t["title"][1:] for t in tasks), "both columns come from one row"
    assert sorted({int(t["vu"]) for t in tasks}) == list(range(1, vus + 1)), "vu numbers are 1..vus"

    per_thread: dict[int, list[int]] = {}
    for t in tasks:
        per_thread.setdefault((int(t["vu"]) - 1) % threads, []).append(int(t["title"][1:]) - 1)
    for i, drawn in per_thread.items():
        stripe = [(i + threads * k) % rows for k in range(len(drawn))]
        assert len(drawn) == (vus // threads) * iterations
        if vus == threads:  # one VU: its own iterations, in id order, are the stripe in order
            assert drawn == stripe, (i, drawn)
        else:  # several VUs share the cursor; which VU got which draw depends on timing
            assert sorted(drawn) == sorted(stripe), (i, drawn)
    total = Counter(int(t["title"][1:]) - 1 for t in tasks)
    want = Counter((i + threads * k) % rows for i in range(threads) for k in range((vus // threads) * iterations))
    assert total == want
    # In these cases every row is used, and equally often within +-1.
    assert set(total) == set(range(rows))
    assert max(total.values()) - min(total.values()) <= 1, total


def test_csv_sequential_with_one_vu_follows_its_thread_stripe_when_the_run_has_two_threads(tmp_path, fresh_target):
    # The stripe counts every thread of the run, not the scenario's: a second scenario makes
    # the run use 2 threads, and the lone VU (thread 0) then takes rows 0, 2, 1, 0, ... The
    # engine documents this (variables/mod.rs); docs/scenarios.md does not say it.
    write_csv(tmp_path, "rows.csv", ["name", "color"], ROWS3)
    run = marker()
    other = (
        "  other:\n    executor: {type: per-vu-iterations, vus: 1, iterations: 3}\n"
        "    flow: [{request: {path: /health}}]\n"
    )
    path = write(
        tmp_path,
        textwrap.dedent(CREATE_FROM_ROW) + other,
        PICK="sequential",
        RUN=run,
        EXECUTOR="{type: per-vu-iterations, vus: 1, iterations: 7}",
    )
    doc = run_ok(path, fresh_target, "--threads", "2")
    assert doc["threads"] == 2
    tasks = stored_tasks(fresh_target, run)
    assert [t["title"] for t in tasks] == ["r1", "r3", "r2", "r1", "r3", "r2", "r1"]


# --- csv: random ------------------------------------------------------------------------


def test_csv_random_uses_every_row_within_binomial_bounds(tmp_path, fresh_target):
    # Each of 500 iterations picks one of 5 rows uniformly: a row's count is Binomial(500,
    # 1/5), mean 100, sd sqrt(500 * 0.2 * 0.8) = 8.94. +-45 is 5 sd: the chance that any of
    # the 5 rows falls outside is about 5 x 5.7e-7 = 3e-6 (draws are seeded per thread, so a
    # run is in practice reproducible anyway).
    rows = [[f"r{k}", f"c{k}"] for k in range(1, 6)]
    write_csv(tmp_path, "rows.csv", ["name", "color"], rows)
    run = marker()
    path = write(
        tmp_path, CREATE_FROM_ROW, PICK="random", RUN=run, EXECUTOR="{type: shared-iterations, vus: 4, iterations: 500}"
    )
    doc = run_ok(path, fresh_target)
    assert doc["requests"]["sent"] == 500 and check_counts(doc) == {"status in [201]": (500, 0)}
    tasks = stored_tasks(fresh_target, run)
    assert len(tasks) == 500
    assert all(t["color"] == "c" + t["title"][1:] for t in tasks), "both columns come from one row"
    counts = Counter(t["title"] for t in tasks)
    print(f"\nrandom row counts over 500 draws: {dict(sorted(counts.items()))}")
    assert set(counts) == {r[0] for r in rows}
    sd = math.sqrt(500 * 0.2 * 0.8)
    assert all(abs(n - 100) <= 5 * sd for n in counts.values()), counts
    # Not the sequential pattern in disguise.
    titles = [t["title"] for t in tasks]
    assert titles != [f"r{k % 5 + 1}" for k in range(500)]


# --- csv: unique ------------------------------------------------------------------------


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_csv_unique_pins_one_row_per_vu(tmp_path, fresh_target, threads):
    # VU v of thread i gets row i + c*v and its vu number is 1 + i + c*v: row = vu - 1.
    write_csv(tmp_path, "rows.csv", ["name", "color"], [["u1", "red"], ["u2", "green"], ["u3", "blue"], ["u4", "pink"]])
    run = marker()
    path = write(
        tmp_path, CREATE_FROM_ROW, PICK="unique", RUN=run, EXECUTOR="{type: per-vu-iterations, vus: 4, iterations: 5}"
    )
    doc = run_ok(path, fresh_target, "--threads", str(threads))
    assert doc["threads"] == threads
    assert doc["requests"]["sent"] == 20 == fresh_target.received()
    tasks = stored_tasks(fresh_target, run)
    assert Counter(t["title"] for t in tasks) == {"u1": 5, "u2": 5, "u3": 5, "u4": 5}
    by_vu: dict[str, set[tuple[str, str]]] = {}
    for t in tasks:
        by_vu.setdefault(t["vu"], set()).add((t["title"], t["color"]))
    assert by_vu == {"1": {("u1", "red")}, "2": {("u2", "green")}, "3": {("u3", "blue")}, "4": {("u4", "pink")}}


def test_csv_unique_with_as_many_rows_as_vus_runs_on_any_thread_count(tmp_path, fresh_target):
    write_csv(tmp_path, "rows.csv", ["name", "color"], [["u1", "a"], ["u2", "b"], ["u3", "c"], ["u4", "d"]])
    run = marker()
    path = write(
        tmp_path, CREATE_FROM_ROW, PICK="unique", RUN=run, EXECUTOR="{type: per-vu-iterations, vus: 4, iterations: 5}"
    )
    result = surge("run", str(path), "--target", fresh_target.url, "--json", "--threads", "3")
    assert result.code == 0, result.stderr
    assert Counter(t["title"] for t in stored_tasks(fresh_target, run)) == {"u1": 5, "u2": 5, "u3": 5, "u4": 5}


# --- env --------------------------------------------------------------------------------

ENV_NAME = "SURGE_TEST_SCENARIO_DATA_TOKEN"


@pytest.mark.parametrize(
    ("value", "default", "stored"),
    [
        ("s3cret-token ü", None, "s3cret-token ü"),  # set: its value
        ("from-env", "from-default", "from-env"),  # set and a default: the environment wins
        (None, "from-default", "from-default"),  # unset: the default
    ],
)
def test_env_variable_reaches_the_server(tmp_path, fresh_target, value, default, stored):
    spec = f"{{type: env, name: {ENV_NAME}" + (f", default: {default}" if default else "") + "}"
    run = marker()
    path = write(
        tmp_path,
        """\
        target: http://127.0.0.1:9
        variables:
          token: @SPEC@
        scenarios:
          s:
            executor: {type: shared-iterations, vus: 1, iterations: 3}
            flow:
              - request: {method: POST, path: /tasks, json: {title: "{{token}}", run: "@RUN@"}}
                check: {status: 201}
        """,
        SPEC=spec,
        RUN=run,
    )
    result = surge_env("run", str(path), "--target", fresh_target.url, "--json", env={ENV_NAME: value})
    assert result.code == 0, result.stderr
    assert result.json()["requests"]["status_codes"] == {"201": 3}
    assert [t["title"] for t in stored_tasks(fresh_target, run)] == [stored] * 3


def test_env_variable_unset_without_default_exits_2_naming_file_and_line(tmp_path, fresh_target):
    path = write(
        tmp_path,
        f"""\
        target: http://127.0.0.1:9
        variables:
          other: {{type: counter}}
          token: {{type: env, name: {ENV_NAME}}}
        scenarios:
          s:
            executor: {{type: shared-iterations, vus: 1, iterations: 1}}
            flow: [{{request: {{method: POST, path: /tasks, json: {{title: "{{{{token}}}}"}}}}}}]
        """,
    )
    result = surge_env("run", str(path), "--target", fresh_target.url, "--json", env={ENV_NAME: None})
    assert result.code == 2, result.stderr
    assert result.stdout == ""
    assert result.stderr.strip().splitlines() == [
        f"surge: error: {path}:4: variables.token.name: environment variable {ENV_NAME} is not set "
        "and has no default (set it, or give default:)"
    ]
    assert fresh_target.received() == 0, "nothing is sent"


# --- zipf -------------------------------------------------------------------------------

ZIPF_TASKS = 10_000
ZIPF_READS = 100_000
ZIPF_S = 1.1


def test_zipf_variable_puts_the_analytic_share_on_the_top_20_percent_of_ids(tmp_path):
    # A dedicated target: its ids are exactly 1..10,000, so rank k is task id k.
    path = write(
        tmp_path,
        f"""\
        target: http://127.0.0.1:9
        variables:
          k: {{type: zipf, n: {ZIPF_TASKS}, s: {ZIPF_S}}}
        setup:
          executor: {{type: shared-iterations, vus: 32, iterations: {ZIPF_TASKS}}}
          flow:
            - {{name: create, request: {{method: POST, path: /tasks, json: {{title: t}}}}, check: {{status: 201}}}}
        scenarios:
          reads:
            executor: {{type: shared-iterations, vus: 32, iterations: {ZIPF_READS}, max_duration: 2m}}
            flow:
              - {{name: read, request: {{path: "/tasks/{{{{k}}}}"}}, check: {{status: 200}}}}
        """,
    )
    with TargetProcess() as target:
        doc = run_ok(path, target)
        status, text = target.request("GET", "/stats/tasks")
        stats = target.stats()
    assert status == 200, text
    per_task = json.loads(text)
    by_id = {int(i): n for i, n in per_task["reads_by_id"].items()}
    assert doc["setup"]["requests"]["status_codes"] == {"201": ZIPF_TASKS}
    assert per_task["tasks"] == ZIPF_TASKS
    assert doc["requests"]["sent"] == ZIPF_READS == per_task["reads"] == sum(by_id.values())
    assert doc["requests"]["status_codes"] == {"200": ZIPF_READS}
    assert check_counts(doc) == {"status in [200]": (ZIPF_READS, 0)}
    assert stats["responses"]["GET /tasks/{id}"] == {"200": ZIPF_READS}
    assert set(by_id) <= set(range(1, ZIPF_TASKS + 1))

    weights = [k**-ZIPF_S for k in range(1, ZIPF_TASKS + 1)]
    head_n = ZIPF_TASKS // 5
    want_head = sum(weights[:head_n]) / sum(weights)
    want_top = weights[0] / sum(weights)
    head = sum(n for i, n in by_id.items() if i <= head_n) / ZIPF_READS
    top = by_id.get(1, 0) / ZIPF_READS
    print(
        f"\nzipf variable: top 20 % share {head:.4f} (analytic {want_head:.4f}); "
        f"rank 1 {top:.4f} (analytic {want_top:.4f}); ids read {len(by_id)}"
    )
    assert want_head == pytest.approx(0.8947, abs=5e-4)  # the figure docs/scenarios.md quotes
    assert abs(head - want_head) <= 0.01, (head, want_head)
    # Rank 1: Binomial(100,000, 0.1514), sd 0.11 % absolute; +-10 % relative is > 13 sd.
    assert top == pytest.approx(want_top, rel=0.10), (top, want_top)
    assert max(by_id, key=lambda i: by_id[i]) == 1, "rank 1 is the hottest id"


# --- checks -----------------------------------------------------------------------------

CREATE = "{method: POST, path: /tasks, json: {title: checked}}"

CHECK_CASES = [
    # (id, request, check, check's name in the result, passes)
    ("Location present", CREATE, "{header_present: Location}", "header Location present", True),
    ("header never sent", CREATE, "{header_present: X-Never-Sent}", "header X-Never-Sent present", False),
    ("slow over 10ms", "{path: /delay/50}", "{latency_under: 10ms}", "latency < 10ms", False),
    ("health under 10ms", "{path: /health}", "{latency_under: 10ms}", "latency < 10ms", True),
    ("status in a set", CREATE, "{status: [200, 201]}", "status in [200, 201]", True),
    ("status not in a set", CREATE, "{status: [404, 500]}", "status in [404, 500]", False),
    ("body contains", "{path: /health}", "{body_contains: ok}", "body contains 'ok'", True),
    ("body lacks", "{path: /health}", "{body_contains: nope}", "body contains 'nope'", False),
    # The name quotes the pattern as Python's repr does, backslashes doubled.
    ("body matches", CREATE, "{body_matches: '\"id\":\\s*\\d+'}", "body matches /" + '"id":\\s*\\d+' + "/", True),
    ("body does not match", CREATE, "{body_matches: 'nope\\d'}", "body matches /nope\\d/", False),
    ("json equals", CREATE, "{json: {$.title: checked}}", '$.title == "checked"', True),
    ("json differs", CREATE, "{json: {$.title: other}}", '$.title == "other"', False),
]


@pytest.mark.parametrize(
    ("request_yaml", "check_yaml", "name", "passes"), [c[1:] for c in CHECK_CASES], ids=[c[0] for c in CHECK_CASES]
)
def test_check_outcomes_are_counted_once_per_request(tmp_path, fresh_target, request_yaml, check_yaml, name, passes):
    requests = 12
    path = write(
        tmp_path,
        """\
        target: http://127.0.0.1:9
        scenarios:
          s:
            executor: {type: shared-iterations, vus: 2, iterations: @N@}
            flow:
              - {name: probe, request: @REQUEST@, check: @CHECK@}
        """,
        N=str(requests),
        REQUEST=request_yaml,
        CHECK=check_yaml,
    )
    doc = run_ok(path, fresh_target)
    assert doc["requests"]["sent"] == requests == fresh_target.received()
    assert doc["requests"]["failed"] == 0, "a failed check is not a failed request"
    assert [(c["name"], c["tag"], c["scenario"]) for c in doc["checks"]] == [(name, "probe", "s")]
    assert check_counts(doc)[name] == ((requests, 0) if passes else (0, requests))
    assert doc["scenarios"][0]["iterations"]["iterations_completed"] == requests, "a failed check never aborts"


# --- regex capture ----------------------------------------------------------------------


def test_regex_capture_feeds_the_next_request_and_the_target_reads_each_created_task(tmp_path, fresh_target):
    iterations = 200
    run = marker()
    path = write(
        tmp_path,
        """\
        target: http://127.0.0.1:9
        scenarios:
          s:
            executor: {type: shared-iterations, vus: 4, iterations: @N@}
            flow:
              - name: create
                request: {method: POST, path: /tasks, json: {title: captured, run: "@RUN@"}}
                check: {status: 201}
                capture: {id: {regex: '"id":\\s*(\\d+)'}}
              - name: read
                request: {path: "/tasks/{{id}}"}
                check: {status: 200, json: {$.title: captured, $.run: "@RUN@"}}
        """,
        N=str(iterations),
        RUN=run,
    )
    doc = run_ok(path, fresh_target)
    assert doc["captures"] == [
        {"name": "id", "scenario": "s", "tag": "create", "found": iterations, "missing": 0, "truncated": 0}
    ]
    checks = check_counts(doc)
    assert checks == {
        "status in [201]": (iterations, 0),
        "status in [200]": (iterations, 0),
        '$.title == "captured"': (iterations, 0),
        f'$.run == "{run}"': (iterations, 0),
    }
    assert doc["requests"]["sent"] == 2 * iterations
    assert doc["requests"]["status_codes"] == {"201": iterations, "200": iterations}

    stats = fresh_target.stats()
    assert stats["responses"]["POST /tasks"] == {"201": iterations}
    assert stats["responses"]["GET /tasks/{id}"] == {"200": iterations}
    created = {t["id"] for t in stored_tasks(fresh_target, run)}
    assert len(created) == iterations
    status, text = fresh_target.request("GET", "/stats/tasks")
    assert status == 200, text
    reads = {int(i): n for i, n in json.loads(text)["reads_by_id"].items()}
    assert reads == {i: 1 for i in created}, "each iteration read exactly the task it created"


# --- mistakes through surge run ---------------------------------------------------------

HEAD = "target: http://127.0.0.1:9\n"
GET = "    flow: [{request: {path: /health}}]\n"
CSV_VAR = "variables:\n  row: {type: csv, file: @CSV@}\n"
CSV_FLOW = (
    "    executor: {type: shared-iterations, vus: 1, iterations: 1}\n    flow: [{request: {path: '/x/{{row.name}}'}}]\n"
)

ERROR_CASES = [
    # (id, file text, csv files to create {name: bytes}, expected lines after "FILE:")
    (
        "stages last 0s",
        HEAD + "scenarios:\n  a:\n    executor: {type: ramping-vus, stages: [{duration: 0s, target: 3}]}\n" + GET,
        {},
        ["4: scenarios.a.executor.stages: the stages last 0s in total: give at least one stage a duration"],
    ),
    (
        "stages target 0 throughout",
        HEAD + "scenarios:\n  a:\n    executor: {type: ramping-arrival-rate, max_vus: 2, "
        "stages: [{duration: 1s, target: 0}, {duration: 2s, target: 0}]}\n" + GET,
        {},
        ["4: scenarios.a.executor.stages: every stage targets 0 iterations/s: nothing would run"],
    ),
    (
        "negative stage target",
        HEAD + "scenarios:\n  a:\n    executor: {type: ramping-vus, stages: [{duration: 1s, target: -2}]}\n" + GET,
        {},
        ["4: scenarios.a.executor.stages[0].target: must be at least 0, got -2"],
    ),
    (
        "negative rate",
        HEAD
        + "scenarios:\n  a:\n    executor: {type: constant-arrival-rate, rate: -5/s, duration: 1s, max_vus: 2}\n"
        + GET,
        {},
        ["4: scenarios.a.executor.rate: '-5/s' is not a rate (examples: 300, 300/s, 18000/m, 50/h)"],
    ),
    (
        "rate with an unknown unit",
        HEAD
        + "scenarios:\n  a:\n    executor: {type: constant-arrival-rate, rate: 5/parsec, duration: 1s, max_vus: 2}\n"
        + GET,
        {},
        ["4: scenarios.a.executor.rate: '5/parsec' is not a rate (examples: 300, 300/s, 18000/m, 50/h)"],
    ),
    (
        "zero rate",
        HEAD
        + "scenarios:\n  a:\n    executor: {type: constant-arrival-rate, rate: 0, duration: 1s, max_vus: 2}\n"
        + GET,
        {},
        ["4: scenarios.a.executor.rate: must be above 0, got 0.0"],
    ),
    (
        "vus of the wrong type",
        HEAD + "scenarios:\n  a:\n    executor: {type: constant-vus, vus: many, duration: 1s}\n" + GET,
        {},
        ["4: scenarios.a.executor.vus: expected a whole number, got 'many'"],
    ),
    (
        "csv missing",
        HEAD + CSV_VAR.replace("@CSV@", "missing.csv") + "scenarios:\n  a:\n" + CSV_FLOW,
        {},
        ["3: variables.row.file: @DIR@/missing.csv: cannot read it: No such file or directory"],
    ),
    (
        "csv is a directory",
        HEAD + CSV_VAR.replace("@CSV@", "adir") + "scenarios:\n  a:\n" + CSV_FLOW,
        {"adir/": b""},
        ["3: variables.row.file: @DIR@/adir: is a directory, not a regular file"],
    ),
    (
        "csv not utf-8",
        HEAD + CSV_VAR.replace("@CSV@", "bin.csv") + "scenarios:\n  a:\n" + CSV_FLOW,
        {"bin.csv": b"name\n\xff\xfe\n"},
        ["3: variables.row.file: @DIR@/bin.csv: is not UTF-8 text (invalid start byte)"],
    ),
    (
        "csv ragged row",
        HEAD + CSV_VAR.replace("@CSV@", "ragged.csv") + "scenarios:\n  a:\n" + CSV_FLOW,
        {"ragged.csv": b"name,b\n1,2\n3\n"},
        ["3: variables.row.file: @DIR@/ragged.csv:3: row has 1 fields, the header has 2"],
    ),
    (
        "csv without rows",
        HEAD + CSV_VAR.replace("@CSV@", "empty.csv") + "scenarios:\n  a:\n" + CSV_FLOW,
        {"empty.csv": b"name\n"},
        ["3: variables.row.file: @DIR@/empty.csv: has a header but no rows"],
    ),
    (
        "every shape mistake at once",
        HEAD + "scenarios:\n"
        "  a:\n    executor: {type: constant-vus, vus: many, duration: 1s}\n"
        + GET
        + "  b:\n    executor: {type: constant-arrival-rate, rate: -1/s, duration: 1s, max_vus: 2}\n"
        + GET
        + "  c:\n    executor: {type: constant-vus, vus: 1, duration: 10}\n"
        + GET,
        {},
        [
            "4: scenarios.a.executor.vus: expected a whole number, got 'many'",
            "7: scenarios.b.executor.rate: '-1/s' is not a rate (examples: 300, 300/s, 18000/m, 50/h)",
            "10: scenarios.c.executor.duration:",
        ],
    ),
    (
        "every meaning mistake at once",
        HEAD + CSV_VAR.replace("@CSV@", "missing.csv") + "scenarios:\n"
        "  a:\n    executor: {type: ramping-vus, stages: [{duration: 0s, target: 3}]}\n    flow: [{request: {path: '/x/{{row.name}}'}}]\n"
        "  b:\n    executor: {type: ramping-arrival-rate, max_vus: 2, stages: [{duration: 1s, target: 0}]}\n" + GET,
        {},
        [
            "3: variables.row.file: @DIR@/missing.csv: cannot read it: No such file or directory",
            "6: scenarios.a.executor.stages: the stages last 0s in total: give at least one stage a duration",
            "9: scenarios.b.executor.stages: every stage targets 0 iterations/s: nothing would run",
        ],
    ),
]


@pytest.mark.parametrize(("text", "files", "expected"), [c[1:] for c in ERROR_CASES], ids=[c[0] for c in ERROR_CASES])
def test_invalid_files_exit_2_through_surge_run_one_line_per_problem(tmp_path, fresh_target, text, files, expected):
    for name, data in files.items():
        if name.endswith("/"):
            (tmp_path / name).mkdir()
        else:
            (tmp_path / name).write_bytes(data)
    path = write(tmp_path, text)
    result = surge("run", str(path), "--target", fresh_target.url, "--json")
    assert result.code == 2, result.stdout + result.stderr
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == len(expected), result.stderr
    for line, want in zip(lines, expected, strict=False):
        assert re.fullmatch(rf"surge: error: {re.escape(str(path))}:\d+: [\w.\[\]]+: .+", line), line
        assert line.startswith(f"surge: error: {path}:" + want.replace("@DIR@", str(tmp_path))), (line, want)
    assert fresh_target.received() == 0, "nothing is sent"


def test_a_bare_rate_is_per_second_not_an_error(tmp_path, fresh_target):
    # Rates, unlike durations, may be unit-less (docs/scenarios.md: 300 = 300/s).
    path = write(
        tmp_path,
        """\
        target: http://127.0.0.1:9
        scenarios:
          a:
            executor: {type: constant-arrival-rate, rate: 40, duration: 500ms, max_vus: 4}
            flow: [{request: {path: /health}}]
        """,
    )
    doc = run_ok(path, fresh_target)
    assert doc["scenarios"][0]["iterations"]["iterations_started"] == 20
    assert doc["requests"]["sent"] == 20 == fresh_target.received()


@pytest.mark.parametrize(
    ("process", "flag", "stored"),
    [
        (None, "from-flag", "from-flag"),  # -e sets what the process lacks
        ("from-env", "from-flag", "from-flag"),  # and wins over the process environment
        ("from-env", "", ""),  # an empty value is a value
    ],
)
def test_env_flag_sets_env_variables_over_the_process_environment(tmp_path, fresh_target, process, flag, stored):
    run = marker()
    path = write(
        tmp_path,
        """\
        target: http://127.0.0.1:9
        variables:
          token: {type: env, name: @NAME@}
        scenarios:
          s:
            executor: {type: shared-iterations, vus: 1, iterations: 2}
            flow:
              - request: {method: POST, path: /tasks, json: {title: "t{{token}}", run: "@RUN@"}}
                check: {status: 201}
        """,
        NAME=ENV_NAME,
        RUN=run,
    )
    result = surge_env(
        "run", str(path), "--target", fresh_target.url, "--json", "-e", f"{ENV_NAME}={flag}", env={ENV_NAME: process}
    )
    assert result.code == 0, result.stderr
    assert [t["title"] for t in stored_tasks(fresh_target, run)] == [f"t{stored}"] * 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-e", "NOEQUALS"], "surge: error: -e/--env: expected NAME=VALUE"),
        (["-e", "1BAD=x"], "surge: error: -e/--env: expected NAME=VALUE"),
    ],
)
def test_env_flag_mistakes_exit_2_naming_the_flag(tmp_path, fresh_target, args, message):
    path = write(
        tmp_path,
        """\
        target: http://127.0.0.1:9
        scenarios:
          s:
            executor: {type: shared-iterations, vus: 1, iterations: 1}
            flow: [{request: {path: /health}}]
        """,
    )
    result = surge("run", str(path), "--target", fresh_target.url, *args)
    assert result.code == 2 and result.stderr.startswith(message), result.stderr
    assert fresh_target.received() == 0


def test_env_flag_is_refused_without_a_scenario_file(fresh_target):
    result = surge("run", fresh_target.url + "/health", "-n", "1", "-e", "A=b")
    assert result.code == 2
    assert result.stderr.strip() == "surge: error: -e/--env: only applies to a scenario file (surge run FILE.yaml)"
