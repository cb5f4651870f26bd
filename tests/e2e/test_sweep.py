"""surge sweep: a closed-model sweep against a target with a known Universal Scalability Law
curve finds its peak level and N*; the zones are the ones the documented rules give from the
sweep's own figures; an open-model sweep with an SLO; Ctrl-C mid-sweep keeps the levels done;
level lists and series; bad flags."""

from __future__ import annotations

import json

import pytest

from conftest import bad_experiment_input, ctrl_c_experiment, surge
from known_answers import USL_KAPPA as KAPPA
from known_answers import USL_N_STAR as N_STAR
from known_answers import USL_SIGMA as SIGMA
from known_answers import USL_TARGET
from surge.analysis.curve import Level, ZoneRules, classify
from surge.engine.target import TargetProcess
from surge.record.figures import key_figures
from surge.record.schema import validate_experiment, validate_file


@pytest.fixture(scope="module")
def usl_target():
    """usl_target serves every request in 10 ms × (1 + σ(n−1) + κn(n−1)), n in service."""
    with TargetProcess(**USL_TARGET) as t:
        yield t


def test_closed_sweep_finds_the_usl_peak_and_n_star_and_draws_the_documented_zones(usl_target, tmp_path):
    out = tmp_path / "sweep"
    run = surge(
        "sweep",
        f"{usl_target.url}/tasks",
        "--vus",
        "1:64:x2",
        "-d",
        "2s",
        "--warmup",
        "1s",
        "--stop-when",
        "broken",
        "--out",
        str(out),
        timeout=180,
    )
    assert run.code == 0, run.stderr
    doc = json.loads((out / "experiment.json").read_text())
    validate_experiment(doc)
    assert doc["kind"] == "sweep" and doc["complete"] is True
    analysis = doc["analysis"]
    assert analysis["model"] == "closed" and analysis["slo"]["source"] == "default"

    # The peak is the level at N* and the fit's N* is within 10 % of it.
    assert analysis["peak"]["load"] == N_STAR
    usl = analysis["usl"]
    assert "refused" not in usl, usl
    assert usl["peak_n"] == pytest.approx(N_STAR, rel=0.10)
    # σ and κ trade off against each other in a fit of six points, and a loaded machine bends the
    # light levels: the bar is the peak and N*; σ and κ are only checked to be of the target's order.
    assert 0 <= usl["sigma"] <= 3 * SIGMA and usl["kappa"] == pytest.approx(KAPPA, rel=0.5)

    # X(32) is half of X(8): broken, so --stop-when broken never ran 64.
    loads = [level["load"] for level in analysis["levels"]]
    assert loads == [1, 2, 4, 8, 16, 32] and analysis["planned"][-1] == 64
    assert analysis["levels"][-1]["zone"] == "broken" and "not run: 64 VUs" in analysis["stopped_early"]

    # Each level: a warm-up run (left out of the analysis), then the measured run.
    roles = [entry["role"] for entry in doc["runs"]]
    assert roles == [f"{kind} vus={n}" for n in (1, 2, 4, 8, 16, 32) for kind in ("warmup", "level")]
    measured = {e["run_id"]: e for e in doc["runs"] if e["role"].startswith("level ")}
    assert [level["run_id"] for level in analysis["levels"]] == list(measured)

    # The zones are the rules' from the measured runs' own summary.json files.
    levels = []
    for level in analysis["levels"]:
        summary = validate_file(out / measured[level["run_id"]]["directory"])
        assert summary["meta"]["experiment"]["role"] == f"level vus={level['load']:g}"
        levels.append(Level(level["load"], key_figures(summary), summary["requests"]["failure_classes"]))
    expected = classify(levels, ZoneRules())
    assert [(lv["zone"], lv["zone_reason"]) for lv in analysis["levels"]] == [(z.zone, z.reason) for z in expected]
    assert analysis["levels"][0]["zone"] == "optimal"

    # One line per level as it completes, with its zone; the table, chart and fit at the end.
    lines = [line for line in run.stderr.splitlines() if line.startswith("level ") and " · zone " in line]
    assert [line.split(" · ")[0] for line in lines] == [f"level {i}/7" for i in range(1, 7)]
    assert all(line.endswith(f"zone {lv['zone']}") for line, lv in zip(lines, analysis["levels"], strict=False))
    for text in (
        "Sweep (6 of 7 levels measured)",
        "Throughput against VUs",
        "peak throughput",
        "USL fit: σ =",
        "--stop-when broken ended the sweep",
        "SLO: none given",
    ):
        assert text in run.stdout, text

    again = surge("show", doc["experiment_id"])
    assert again.code == 0 and again.stdout == run.stdout, again.stderr


def test_open_sweep_judges_the_slo_and_has_no_usl_fit(target, tmp_path):
    slow = TargetProcess(workers=4, service_time="10ms")
    with slow:
        run = surge(
            "sweep",
            f"{slow.url}/tasks",
            "--rates",
            "100:800:x2",
            "-d",
            "2s",
            "--warmup",
            "0s",
            "--slo",
            "p(99.5) < 50ms",
            "-c",
            "32",
            "--json",
            timeout=120,
        )
    assert run.code == 0, run.stderr
    doc = run.json()
    validate_experiment(doc)
    analysis = doc["analysis"]
    assert analysis["model"] == "open" and analysis["usl"] is None
    assert [entry["role"] for entry in doc["runs"]] == [
        "level rate=100",
        "level rate=200",
        "level rate=400",
        "level rate=800",
    ]
    assert analysis["slo"] == {"source": "--slo", "conditions": [{"expr": "p(99.5) < 50ms", "scope": "all"}]}
    light, heavy = analysis["levels"][0], analysis["levels"][-1]
    # p(99.5) is not a standard percentile: the runs report it because the SLO reads it.
    assert light["slo"][0]["status"] == "pass" and light["slo"][0]["observed"] is not None
    # At 800/s, twice the capacity, the queue grows: the SLO fails and the throughput is the capacity's.
    assert heavy["slo"][0]["status"] == "fail" and heavy["zone"] in ("degraded", "broken")
    assert heavy["responses_per_s"] == pytest.approx(400, rel=0.05)
    assert light["zone"] == "optimal" and light["responses_per_s"] == pytest.approx(100, rel=0.05)


def test_ctrl_c_mid_sweep_keeps_the_levels_done_and_says_incomplete(target, tmp_path):
    out = tmp_path / "stopped"
    proc, doc = ctrl_c_experiment(
        ["sweep", f"{target.url}/health", "--vus", "1,2,4", "-d", "3s", "--warmup", "0s"], out, "02-level-vus=2"
    )
    assert (
        proc.stderr.rstrip().splitlines()[-1]
        == "surge: stopped by SIGINT: experiment incomplete: 1 of 3 levels measured (kept in the history)"
    )
    assert "Sweep (1 of 3 levels measured)" in proc.stdout
    assert [(e["role"], e["complete"]) for e in doc["runs"]] == [("level vus=1", True), ("level vus=2", False)]
    assert [level["load"] for level in doc["analysis"]["levels"]] == [1]
    assert not (out / "runs" / "03-level-vus=4").exists()


@pytest.mark.parametrize(
    "args, error",
    [
        ([], "surge: error: --vus/--rates: give one"),
        (["--vus", "1,2", "--rates", "1,2"], "surge: error: --vus/--rates: give one"),
        (["--vus", "0"], "surge: error: --vus: a level must be from 1 to"),
        (["--rates", "100:3200:x1"], "surge: error: --rates: the factor after x must be above 1"),
        (["--vus", "1,2", "--warmup", "soon"], "surge: error: --warmup: "),
        (["--vus", "1,2", "--cooldown", "-1s"], "surge: error: --cooldown: "),
        (["--vus", "1,2", "-d", "0s"], "surge: error: -d/--duration: must be above zero"),
        (["--vus", "1,2", "--stop-when", "never"], "surge: error: --stop-when: "),
        (["--vus", "1,2", "-c", "5"], "surge: error: -c/--connections: the experiment sets each run's VUs"),
        (["--rates", "1,2", "-r", "5"], "surge: error: -r/--rate: the experiment sets each run's load"),
        (["--vus", "1,2", "--slo", "p(99) <"], "surge: error: --slo: "),
        (["--vus", "1,2", "--max-in-flight", "9"], "surge: error: --max-in-flight: only applies to the open model"),
    ],
)
def test_sweep_bad_input_is_one_line_exit_2_before_any_run(args, error):
    bad_experiment_input("sweep", args, error)


def test_a_level_waits_for_the_target_to_drain_and_its_cut_off_requests_are_not_failures(tmp_path):
    # One worker × 50 ms (20/s) and an unbounded queue: at 100 VUs each request queues ~5 s, and
    # --grace 0.2s cuts off the ~95 still out at the level's end. Those are the level's doing,
    # not the target's failures (the old rule made the level "broken, mostly interrupted"). The
    # target still serves them after the level (~5 s of queue): the next level waits until a
    # probe is served near the idle 50 ms.
    with TargetProcess(workers=1, service_time="50ms") as target:
        out = tmp_path / "sweep"
        run = surge(
            "sweep",
            f"{target.url}/tasks",
            "--vus",
            "1,100,101",
            "-d",
            "1.5s",
            "--warmup",
            "0s",
            "--grace",
            "0.2s",
            "--timeout",
            "20s",
            "--out",
            str(out),
            timeout=180,
        )
        assert run.code == 0, run.stderr
        received = target.stats()["received_by_route"]["GET /tasks"]
    doc = json.loads((out / "experiment.json").read_text())
    validate_experiment(doc)
    analysis = doc["analysis"]
    heavy = analysis["levels"][1]
    assert heavy["drain"]["interrupted"] > 10, heavy["drain"]
    assert heavy["failure_rate"] == 0 and "interrupted" not in heavy["failure_classes"], heavy
    assert "interrupted" not in heavy["zone_reason"] and "failure rate" not in heavy["zone_reason"], heavy
    assert analysis["levels"][0]["settled"] is None
    idle = analysis["idle_probe"]["p50_ms"]
    assert idle is not None and 49 <= idle <= 150, analysis["idle_probe"]
    waited = analysis["levels"][2]["settled"]
    assert waited["drained"] and waited["probes"] >= 2, waited
    assert waited["first_p50_ms"] > 500 > waited["last_p50_ms"] and waited["waited_s"] > 1, waited
    assert "before level 3/3: waited" in run.stderr and "drained" in run.stderr, run.stderr
    # The target's count: every level's requests sent, and every probe's.
    sent = sum(json.loads((out / r["directory"] / "summary.json").read_text())["requests"]["sent"] for r in doc["runs"])
    probes = analysis["idle_probe"]["probe_requests"] + sum(
        (level["settled"] or {}).get("probe_requests", 0) for level in analysis["levels"]
    )
    assert received == sent + probes


def test_an_open_model_level_past_capacity_stops_early_as_over_saturated_and_one_at_half_does_not(tmp_path):
    """The inference target with 8 in service, 8-token streams of 20 ms steps (a request holds a
    place 2 ms + 7 × 20 ms = 142 ms): it serves 8 / 0.142 s = 56/s. At half that nothing queues
    and the level runs its 9 s; at twice that the queue, and the wait for the first token, grow
    every second, and the over-saturation rule stops the level after the warm-up interval, four
    more and one to confirm (6 s): broken, said in its line and recorded. A busy machine delays a
    token now and then, never in a steady climb of both figures."""
    body = json.dumps(
        {"model": "m", "stream": True, "max_tokens": 8, "messages": [{"role": "user", "content": "word " * 10}]}
    )
    capacity = 8 / (0.002 + 7 * 0.020)
    with TargetProcess(llm_prefill="0.2ms", llm_decode="20ms", llm_batch=8) as target:
        run = surge(
            "sweep",
            f"{target.url}/v1/chat/completions",
            *("-m", "POST", "-H", "Content-Type: application/json", "--body", body),
            *("--rates", f"{capacity / 2:.0f},{capacity * 2:.0f}", "-d", "9s", "--warmup", "0s"),
            *("--drain-wait", "0s", "--grace", "1s", "--stop-when", "broken", "--out", str(tmp_path / "sweep")),
            timeout=120,
        )
    assert run.code == 0, run.stderr[-3000:]
    doc = json.loads((tmp_path / "sweep" / "experiment.json").read_text())
    validate_experiment(doc)
    assert doc["parameters"]["oversaturation_stop"] is True
    half, double = doc["analysis"]["levels"]
    assert half["over_saturation"] is None and half["zone"] != "broken", half
    stopped = double["over_saturation"]
    assert stopped is not None and stopped["rule"] == "over_saturation", double
    assert double["zone"] == "broken" and double["zone_reason"] == stopped["message"]
    assert stopped["message"].startswith("over-saturated after ") and stopped["message"].endswith("; stopped early")
    assert stopped["evidence"]["concurrency"]["rising"] and stopped["evidence"]["latency_name"] == "TTFT p50"
    assert stopped["evidence"]["at_s"] <= 7.0  # the level was 9 s long
    runs = {r["label"]: r for r in doc["runs"]}
    assert runs[half["label"]]["stop_reason"] == "duration" and runs[double["label"]]["stop_reason"] == "aborted"
    record = json.loads((tmp_path / "sweep" / runs[double["label"]]["directory"] / "summary.json").read_text())
    validate_file(tmp_path / "sweep" / runs[double["label"]]["directory"] / "summary.json")
    assert record["stopped_early"] == stopped and record["meta"]["complete"] is True
    assert stopped["message"] in run.stderr and "zone broken" in run.stderr
    assert stopped["message"] in (tmp_path / "sweep" / "report.md").read_text()
