"""surge compare: variants of one test run n times interleaved against reference targets of
known capacity (a real 20 % difference is significant, identical configurations are not),
groups of imported runs from the history, the scaling line, Ctrl-C, bad input; and the
comparison's analysis over seeded fake runs (its false-positive rate at α)."""

from __future__ import annotations

import json
import signal
import sqlite3
from pathlib import Path

import pytest

from conftest import intervals_logged, run_and_signal, surge, write
from seed001_exports import import_files, import_seed_001_exports
from surge.engine.target import TargetProcess
from surge.experiments.variants import run_plan
from surge.record.schema import validate_experiment

BEYOND_CAPACITY = ("-c", "16", "-d", "1s")
"""BEYOND_CAPACITY drives a 4-worker target with 16 VUs: it serves at its capacity, 4 / service time."""


@pytest.fixture(scope="module")
def fast_and_slow():
    """fast_and_slow are two targets of 4 workers: 10 ms (400 req/s) and 12 ms (333 req/s), a fixed service time."""
    with TargetProcess(workers=4, service_time="10ms") as fast, TargetProcess(workers=4, service_time="12ms") as slow:
        yield fast, slow


def _verdicts(doc: dict, variant: str) -> dict[str, str]:
    pair = next(p for p in doc["analysis"]["comparisons"] if p["variant"] == variant)
    return {c["figure"]: c["verdict"] for c in pair["figures"]}


def _comparison(doc: dict, variant: str, figure: str) -> dict:
    pair = next(p for p in doc["analysis"]["comparisons"] if p["variant"] == variant)
    return next(c for c in pair["figures"] if c["figure"] == figure)


def test_a_real_twenty_percent_difference_is_significant(fast_and_slow, history_db, tmp_path):
    fast, slow = fast_and_slow
    out = tmp_path / "cmp"
    run = surge(
        "compare",
        f"{fast.url}/tasks?limit=1",
        *BEYOND_CAPACITY,
        "-n",
        "4",
        "--variant",
        f"fast={fast.url}",
        "--variant",
        f"slow={slow.url}",
        "--out",
        str(out),
    )
    assert run.code == 0, run.stderr
    doc = json.loads((out / "experiment.json").read_text())
    validate_experiment(doc)
    assert doc["kind"] == "compare" and doc["complete"] is True
    # Balanced A B B A ..., each run sent to its variant's host with the test's path and query.
    assert [e["variant"] for e in doc["runs"]] == ["fast", "slow", "slow", "fast"] * 2
    assert doc["parameters"]["order"] == "balanced" and doc["parameters"]["order_seed"] is None
    assert [e["label"] for e in doc["runs"]][:4] == ["fast 1", "slow 1", "slow 2", "fast 2"]
    progress = [line.split(":")[0] for line in run.stderr.splitlines() if line.startswith("variant ")]
    assert progress[:2] == ["variant fast 1/4", "variant slow 1/4"] and len(progress) == 8, run.stderr
    assert [v["url"] for v in doc["parameters"]["variants"]] == [fast.url, slow.url]
    assert fast.stats()["received_by_route"]["GET /tasks"] > 0 and slow.stats()["received_by_route"]["GET /tasks"] > 0
    verdicts = _verdicts(doc, "slow")
    assert verdicts["responses_per_s"] == "worse" and verdicts["successes_per_s"] == "worse", verdicts
    assert verdicts["p50_ms"] == "worse", verdicts
    throughput = _comparison(doc, "slow", "responses_per_s")
    # The verdict's p: Welch's, or the exact rank test's when no run varied on either side (each
    # target serves its capacity to the request: 400 and 333 a second, run after run).
    p = throughput["welch_p"] if throughput["welch_p"] is not None else throughput["mann_whitney_p"]
    assert p < 0.05 and 0.75 < throughput["ratio"] < 0.9, throughput
    low, high = throughput["ratio_ci"]
    assert low <= throughput["ratio"] <= high
    assert throughput["reference"]["n"] == throughput["variant"]["n"] == 4
    assert "slow against fast: worse in req/s, goodput/s, p50 ms" in run.stdout
    assert "ratio slow / fast with 95% CI (bootstrap)" in run.stdout
    # The history holds the runs with their variant; surge show prints the same tables.
    db = sqlite3.connect(history_db)
    linked = db.execute("SELECT variant FROM experiment_runs ORDER BY position").fetchall()
    assert [v for (v,) in linked] == ["fast", "slow", "slow", "fast"] * 2
    assert surge("show", doc["experiment_id"][:10]).stdout == run.stdout
    assert surge("show", "--experiment", "last", "--json").json() == doc


def test_identical_configurations_show_no_significant_difference(fast_and_slow, tmp_path):
    fast, _ = fast_and_slow
    # One real trial at α = 1 %; the rate over many trials is the seeded simulation below and
    # tests/test_analysis_compare.py::test_identical_distributions_are_called_different_no_more_often_than_alpha.
    run = surge(
        "compare",
        f"{fast.url}/tasks?limit=1",
        *BEYOND_CAPACITY,
        "-n",
        "4",
        "--variant",
        f"a={fast.url}",
        "--variant",
        f"b={fast.url}",
        "--alpha",
        "0.01",
        "--json",
    )
    assert run.code == 0, run.stderr
    verdicts = _verdicts(run.json(), "b")
    assert verdicts["responses_per_s"] == verdicts["successes_per_s"] == "no significant difference", verdicts


ENV_SCENARIO = """\
target: @URL@
variables:
  wait: {type: env, name: WAIT, default: "0"}
scenarios:
  a:
    executor: {type: constant-vus, vus: 1, duration: 1s}
    flow:
      - request: {path: "/delay/{{wait}}"}
"""


def test_variants_by_env_pairs_of_a_scenario_file(fast_and_slow, tmp_path):
    fast, _ = fast_and_slow
    scenario = write(tmp_path, ENV_SCENARIO, URL=fast.url)
    run = surge("compare", str(scenario), "-n", "2", "--variant", "quick:WAIT=1", "--variant", "slow:WAIT=25", "--json")
    assert run.code == 0, run.stderr
    doc = run.json()
    assert [v["env"] for v in doc["parameters"]["variants"]] == [{"WAIT": "1"}, {"WAIT": "25"}]
    p50 = {e["label"]: e["figures"]["p50_ms"] for e in doc["runs"]}
    assert all(p50[f"slow {i}"] >= 25 > p50[f"quick {i}"] >= 1 for i in (1, 2)), p50


def _oha(tmp_path: Path, name: str, responses: int, p95_ms: float) -> Path:
    """_oha writes an oha JSON document: ``responses`` 200s over 100 s, the given p95."""
    doc = {
        "summary": {"successRate": 1.0, "total": 100.0, "slowest": 2.0, "fastest": 0.01, "average": 0.5},
        "latencyPercentiles": {"p50": 0.4, "p95": p95_ms / 1000, "p99": 1.5},
        "statusCodeDistribution": {"200": responses},
        "errorDistribution": {},
    }
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(doc))
    return path


SEED_001 = {"35": [(2178, 600.93), (2198, 612.93)], "75": [(5250, 833.94), (5270, 845.94)]}
"""SEED_001 are two runs a level whose means are seed 001's: 21.88 → 52.60 req/s, p95 606.93 → 839.94 ms."""


def _import_seed_001(tmp_path: Path) -> dict[str, list[str]]:
    ids: dict[str, list[str]] = {}
    for vus, runs in SEED_001.items():
        for i, (responses, p95) in enumerate(runs):
            imported = surge(
                "import",
                str(_oha(tmp_path, f"vus{vus}-{i}", responses, p95)),
                "--tag",
                f"vus={vus}",
                "--tag",
                "arch=monolith",
            )
            assert imported.code == 0, imported.stderr
        ids[vus] = [r["id"] for r in reversed(surge("history", "--tag", f"vus={vus}", "--json").json())]
    return ids


def test_history_groups_by_tags_give_the_scaling_line(tmp_path):
    ids = _import_seed_001(tmp_path)
    run = surge("compare", "--group", "light:vus=35", "--group", "heavy:vus=75", "--loads", "35,75")
    assert run.code == 0, run.stderr
    assert "scaling light → heavy: 2.14× load → 1.38× p95, 2.40× throughput, 112 % efficiency" in run.stdout
    assert "heavy against light: better in req/s, goodput/s; worse in p95 ms" in run.stdout
    doc = surge("show", "--experiment", "last", "--json").json()
    validate_experiment(doc)
    assert [(e["variant"], e["run_id"], e["level"], e["exit_code"]) for e in doc["runs"]] == [
        ("light", i, 35, None) for i in ids["35"]
    ] + [("heavy", i, 75, None) for i in ids["75"]]
    scaling = doc["analysis"]["scaling"][0]
    assert scaling["efficiency"] == pytest.approx((52.60 / 21.88) / (75 / 35), rel=1e-9)
    assert scaling["degradation_factor"] == pytest.approx(839.94 / 606.93, rel=1e-6)
    assert scaling["warnings"] and "100 %" in scaling["warnings"][0]
    assert any(f["kind"] == "scaling" for f in doc["findings"])

    # The same runs named one by one (--runs), without loads: no scaling line.
    by_runs = surge("compare", "--runs", ",".join(i[:12] for i in ids["35"]), "--runs", ",".join(ids["75"]), "--json")
    assert by_runs.code == 0, by_runs.stderr
    doc = by_runs.json()
    assert doc["analysis"]["variants"] == ["A", "B"] and doc["analysis"]["scaling"] == []
    assert _verdicts(doc, "B")["responses_per_s"] == "better"


def test_load_levels_of_new_runs_give_the_scaling_line(fast_and_slow):
    fast, _ = fast_and_slow
    run = surge("compare", f"{fast.url}/tasks?limit=1", "-d", "1s", "-n", "2", "--vus", "1,2", "--json")
    assert run.code == 0, run.stderr
    doc = run.json()
    assert [e["level"] for e in doc["runs"]] == [1, 2, 2, 1] and doc["analysis"]["variants"] == ["vus=1", "vus=2"]
    scaling = doc["analysis"]["scaling"][0]
    assert scaling["text"].startswith("2.00× load → ") and scaling["light"] == "vus=1"
    shown = surge("show", doc["experiment_id"]).stdout
    assert "scaling vus=1 → vus=2: 2.00× load → " in shown


def test_ctrl_c_keeps_the_completed_runs_and_says_incomplete(fast_and_slow, tmp_path):
    fast, slow = fast_and_slow
    out = tmp_path / "stopped"
    second = out / "runs" / "02-variant-slow-1-3"
    proc = run_and_signal(
        [
            "compare",
            f"{fast.url}/tasks",
            "-c",
            "4",
            "-d",
            "3s",
            "-n",
            "3",
            "--variant",
            f"fast={fast.url}",
            "--variant",
            f"slow={slow.url}",
            "--out",
            str(out),
        ],
        signal.SIGINT,
        lambda: intervals_logged(second) >= 1,
    )
    assert proc.returncode == 130, proc.stderr
    assert (
        proc.stderr.rstrip().splitlines()[-1]
        == "surge: stopped by SIGINT: experiment incomplete: 1 of 6 runs completed (kept in the history)"
    )
    assert "experiment incomplete: stopped by SIGINT; 1 completed run(s) kept in the history" in proc.stdout
    doc = json.loads((out / "experiment.json").read_text())
    validate_experiment(doc)
    assert doc["complete"] is False and [(e["variant"], e["complete"]) for e in doc["runs"]] == [
        ("fast", True),
        ("slow", False),
    ]
    assert doc["analysis"]["used"] == {"fast": ["fast 1"], "slow": []}


@pytest.mark.parametrize(
    "args, error",
    [
        (["http://127.0.0.1:1/", "--variant", "a"], "--variant: a comparison needs two variants or more, got 1"),
        (["http://127.0.0.1:1/", "--variant", "a", "--variant", "a"], "--variant: two variants are named 'a'"),
        (
            ["http://127.0.0.1:1/", "--variant", "a=ftp://x", "--variant", "b"],
            "--variant: 'ftp://x' in variant 'a' is not an http(s) URL",
        ),
        (
            ["http://127.0.0.1:1/", "--variant", "a:1X=2", "--variant", "b"],
            "--variant: variant 'a': expected NAME=VALUE",
        ),
        (["http://127.0.0.1:1/", "--variant", "a b", "--variant", "b"], "--variant: 'a b' in 'a b' is not a name"),
        (["http://127.0.0.1:1/", "--variant", "a:X=1", "--variant", "b"], "-e/--env: only applies to a scenario file"),
        (["http://127.0.0.1:1/", "--vus", "5,2"], "--vus: the levels must increase"),
        (["http://127.0.0.1:1/", "--vus", "5"], "--vus: give two load levels or more"),
        (["http://127.0.0.1:1/", "--vus", "1,2", "--rates", "1,2"], "--rates: give one of --vus, --rates"),
        (
            ["http://127.0.0.1:1/", "--vus", "1,2", "--variant", "a"],
            "--variant: a comparison needs two variants or more",
        ),
        (["http://127.0.0.1:1/", "--vus", "1,2", "--order-seed", "3"], "--order-seed: only with --order shuffle"),
        (["--group", "a=1", "--group", "b=1", "--order", "shuffle"], "--order: compares new runs"),
        (
            ["--group", "a=1", "--group", "b=1", "--loads", "vus="],
            "--loads: expected a tag and its levels such as vus=35,75",
        ),
        (["--group", "a=1", "--group", "b=1", "--loads", "1,2,3"], "--loads: give one load level per group"),
        (["http://127.0.0.1:1/"], "--variant: give the variants"),
        (["http://127.0.0.1:1/", "--vus", "1,2", "-n", "0"], "-n/--repeats: must be from 1 to 1,000, got 0"),
        (["http://127.0.0.1:1/", "--vus", "1,2", "--reference", "x"], "--reference: 'x' is not one of the variants"),
        (["http://127.0.0.1:1/", "--vus", "1,2", "--alpha", "1"], "--alpha: expected a significance level"),
        (["http://127.0.0.1:1/", "--vus", "1,2", "--loads", "1,2"], "--loads: only with --group/--runs"),
        ([], "FILE|URL: give the test to run"),
        (
            ["http://127.0.0.1:1/", "--group", "a=1", "--group", "a=2"],
            "FILE|URL: --group/--runs compare runs from the history",
        ),
        (["--group", "a=1", "--group", "a=2", "-c", "3"], "-c/--connections: describes a test to run"),
        (["--group", "a=1", "--group", "a=2", "--variant", "x"], "--variant: compares new runs"),
        (["--group", "a=1", "--runs", "abc"], "--runs: give the groups either by tags"),
        (["--group", "a", "--group", "b=1"], "--group: expected a key, '=' and a value"),
        (["--group", "a=1", "--group", "a=2"], "--group: no run in the history"),
        (["--runs", "0123abcd", "--runs", "abc"], "RUN: no run '0123abcd' in the history"),
        (["--group", "a=1", "--group", "b=1", "--loads", "1"], "--loads: give two load levels or more"),
    ],
)
def test_bad_flags_are_one_line_exit_2(args, error):
    run = surge("compare", *args)
    assert run.code == 2 and run.stderr.startswith(f"surge: error: {error}") and run.stderr.count("\n") == 1, run.stderr


P95_SETS = {"base": [100, 102, 98, 101], "worse": [110, 112, 108, 111], "noisy": [90, 130, 95, 125], "one": [110]}
"""P95_SETS are the p95s (ms) of imported runs: a baseline; 10 % worse, steady (significant); 10 %
worse on average but noisy (not significant); one run 10 % worse."""


def _import_sets(tmp_path: Path, *names: str) -> dict[str, list[str]]:
    ids: dict[str, list[str]] = {}
    for name in names:
        for i, p95 in enumerate(P95_SETS[name]):
            imported = surge("import", str(_oha(tmp_path, f"{name}-{i}", 2000, p95)), "--tag", f"set={name}")
            assert imported.code == 0, imported.stderr
        ids[name] = [r["id"] for r in reversed(surge("history", "--tag", f"set={name}", "--json").json())]
    return ids


def _verdict_of(stdout: str, metric: str) -> str:
    row = next(line for line in stdout.splitlines() if line.split()[:1] == [metric])
    return next(word for word in ("regressed", "improved", "ok", "missing") if f" {word} " in row)


def test_baseline_check_with_repeats_needs_significance_and_the_tolerance(tmp_path):
    ids = _import_sets(tmp_path, *P95_SETS)
    made = surge("baseline", "set", *ids["base"], "--name", "main")
    assert made.code == 0 and made.stdout.startswith("baseline 'main': 4 run(s)"), made.stderr

    worse = surge("baseline", "check", *ids["worse"], "--against", "main", "--metric", "p95")
    assert worse.code == 99, worse.stderr
    assert _verdict_of(worse.stdout, "p95") == "regressed" and "significant (Welch p = " in worse.stdout
    assert "rule: significance and tolerance (baseline 4 runs, current 4 runs)" in worse.stdout
    assert worse.stderr.startswith("surge: regression against baseline 'main': p95 +10.0%")

    lenient = surge("baseline", "check", *ids["worse"], "--against", "main", "--metric", "p95", "--tolerance", "20%")
    assert lenient.code == 0 and _verdict_of(lenient.stdout, "p95") == "ok", lenient.stdout
    assert "but 10.0% ≤ tolerance 20.0%" in lenient.stdout

    noisy = surge("baseline", "check", *ids["noisy"], "--against", "main", "--metric", "p95")
    assert noisy.code == 0 and _verdict_of(noisy.stdout, "p95") == "ok" and "within noise" in noisy.stdout, noisy.stdout

    single = surge("baseline", "check", ids["one"][0], "--against", "main", "--metric", "p95")
    assert single.code == 99 and _verdict_of(single.stdout, "p95") == "regressed", single.stdout
    assert "rule: tolerance alone (the current side has one run: no test of significance)" in single.stdout


def test_a_baseline_from_an_experiments_variant(tmp_path):
    _import_sets(tmp_path, "base", "worse")
    made = surge("compare", "--group", "base:set=base", "--group", "worse:set=worse", "--json")
    assert made.code == 0, made.stderr
    experiment = made.json()["experiment_id"]
    refused = surge("baseline", "set", "--experiment", experiment[:10], "--name", "main")
    assert (
        refused.code == 2
        and refused.stderr == f"surge: error: --variant: experiment {experiment[:8]} compares base, worse: choose one\n"
    )
    made = surge("baseline", "set", "--experiment", experiment[:10], "--variant", "base", "--name", "main")
    assert made.code == 0 and f"4 run(s) (experiment {experiment[:8]}, variant base)" in made.stdout, made.stderr
    check = surge("baseline", "check", "--experiment", "last", "--variant", "worse", "--against", "main")
    assert check.code == 99 and _verdict_of(check.stdout, "p95") == "regressed", check.stdout
    assert (
        f"experiment {experiment[:8]} (4 runs) against baseline 'main' (experiment {experiment[:8]} (4 runs))"
        in check.stdout
    )
    same = surge("baseline", "check", "--experiment", "last", "--variant", "base", "--against", "main")
    assert same.code == 0 and same.stdout.rstrip().endswith("no regression beyond 5.0% against baseline 'main'")


@pytest.mark.parametrize(
    "args, error",
    [
        (["set", "--name", "x"], "RUN: give the runs (RUN...) or --experiment ID"),
        (["set", "last", "--experiment", "last", "--name", "x"], "--experiment: give either RUN... or --experiment"),
        (["set", "last", "--variant", "a", "--name", "x"], "--variant: only with --experiment"),
        (["set", "--experiment", "0123abcd", "--name", "x"], "--experiment: no experiment '0123abcd' in the history"),
    ],
)
def test_baseline_bad_flags_are_one_line_exit_2(args, error):
    run = surge("baseline", *args)
    assert run.code == 2 and run.stderr.startswith(f"surge: error: {error}") and run.stderr.count("\n") == 1, run.stderr


def test_seed_001_from_its_twenty_k6_exports_states_the_scaling_and_the_architecture_table(tmp_path):
    import_seed_001_exports(tmp_path)
    out = tmp_path / "levels"
    run = surge(
        "compare",
        "--group",
        "baseline:arch=scaleout,vus=35",
        "--group",
        "stress:arch=scaleout,vus=75",
        "--loads",
        "35,75",
        "--out",
        str(out),
    )
    assert run.code == 0 and "cannot write the report" not in run.stderr, run.stderr
    assert "scaling baseline → stress: 2.14× load → 1.38× p95, 2.40× throughput, 112 % efficiency" in run.stdout
    assert "drift" not in run.stdout  # the seed's runs do not trend with run order
    assert "2.40× throughput, 112 % efficiency" in (out / "report.md").read_text()
    again = surge("report", str(out))
    assert again.code == 0 and not again.stderr, again.stderr

    grid = surge(
        "compare",
        "--group",
        "scaleout:arch=scaleout",
        "--group",
        "monolith:arch=monolith",
        "--loads",
        "vus=35,75",
        "--json",
    )
    assert grid.code == 0, grid.stderr
    doc = grid.json()
    validate_experiment(doc)
    rows = {row["variant"]: row for row in doc["analysis"]["grid"]["rows"]}
    assert doc["analysis"]["grid"]["loads"] == [35, 75]
    assert rows["scaleout"]["cells"][0]["responses_per_s"]["n"] == 10
    assert rows["scaleout"]["cells"][0]["responses_per_s"]["mean"] == pytest.approx(21.88, abs=0.005)
    assert rows["scaleout"]["cells"][1]["responses_per_s"]["mean"] == pytest.approx(52.60, abs=0.005)
    assert [(p["reference"], p["variant"]) for p in doc["analysis"]["comparisons"]] == [
        ("scaleout vus=35", "monolith vus=35"),
        ("scaleout vus=75", "monolith vus=75"),
    ]
    shown = surge("show", doc["experiment_id"]).stdout
    table = {
        line.split("│")[0].strip(): [c.strip() for c in line.split("│")[1:]]
        for line in shown.splitlines()
        if line.startswith(("scaleout │", "monolith │"))
    }
    assert table["scaleout"][0] == "21.88 ± 0.38" and table["scaleout"][-2:] == ["2.40×", "112 %"], table
    assert table["monolith"][-2:] == ["1.80×", "84 %"], table
    missing = surge(
        "compare", "--group", "scaleout:arch=scaleout", "--group", "monolith:arch=monolith", "--loads", "vus=35,100"
    )
    assert (
        missing.code == 2
        and missing.stderr == "surge: error: --loads: no run of group 'scaleout' has the tag vus=100\n"
    ), missing.stderr


def test_variants_by_loads_of_new_runs_in_a_seeded_shuffled_order(fast_and_slow):
    fast, slow = fast_and_slow
    run = surge(
        "compare",
        f"{fast.url}/tasks?limit=1",
        "-d",
        "0.5s",
        "-n",
        "2",
        "--variant",
        f"fast={fast.url}",
        "--variant",
        f"slow={slow.url}",
        "--vus",
        "1,2",
        "--order",
        "shuffle",
        "--order-seed",
        "7",
        "--json",
    )
    assert run.code == 0, run.stderr
    doc = run.json()
    names = ["fast vus=1", "fast vus=2", "slow vus=1", "slow vus=2"]
    assert doc["parameters"]["order"] == "shuffle" and doc["parameters"]["order_seed"] == 7
    assert [e["variant"] for e in doc["runs"]] == [n for one in run_plan(names, 2, "shuffle", 7) for n in one]
    assert [e["level"] for e in doc["runs"]] == [float(e["variant"][-1]) for e in doc["runs"]]
    grid = doc["analysis"]["grid"]
    assert grid["variants"] == ["fast", "slow"] and grid["loads"] == [1, 2]
    assert [s["light"] for s in doc["analysis"]["scaling"]] == ["fast vus=1", "slow vus=1"]
    assert "order=shuffle, order_seed=7" in surge("show", doc["experiment_id"]).stdout


def test_runs_from_the_history_whose_throughput_falls_with_run_order_are_flagged_as_drift(tmp_path):
    """Seed 002's stress compare: the reference always ran first in each round while the
    target slowed down, by round and within each round; imported oha runs dated in that order."""
    import os

    for place in range(12):
        variant = "memory" if place % 2 == 0 else "shard"
        per_s = 12_300 - 1_000 * (place // 2) - 3_000 * (place % 2)
        path = _oha(tmp_path, f"{variant}-{place}", per_s * 100, 1_000_000 / per_s)
        os.utime(path, (1_577_836_800 + 3600 * place,) * 2)
        import_files([path], f"store={variant}")
    run = surge("compare", "--group", "memory:store=memory", "--group", "shard:store=shard")
    assert run.code == 0, run.stderr
    assert "flag req/s trends with run order in memory (Kendall τ = -1.00" in run.stdout, run.stdout
    line = next(line for line in run.stdout.splitlines() if line.startswith("verdict shard against memory"))
    assert "worse in req/s, goodput/s, p95 ms" in line and "— the difference may be drift: req/s trends" in line
    assert "worse (may be drift)" in run.stdout
