"""Seed 001 (shared/seeds/001_5c78adf684b20415.txt, "Microservices Scale-Out Architecture"): the
author ran each load ten times with k6, then computed mean ± SD, 95 % CIs and CVs by hand, and
the scale-out's scaling from 35 to 75 VUs: 2.40× the throughput for 2.14× the load, 112 %
efficiency. Asked of surge two ways: from the seed's own twenty k6 summary exports (imported;
the figures must be the seed's, to its precision), and from repeats of
examples/microservices-baseline-35vu.yaml against its calibrated target (16 slots, lognormal
280 ms, σ 0.48), whose p95 is known: 280 ms × e^(1.645 × 0.48) = 617 ms."""

from __future__ import annotations

import json
import math

from seed_targets import EXAMPLES, example_target, say

from conftest import surge
from seed001_exports import import_seed_001_exports

TRUE_P95_MS = 280 * math.exp(1.645 * 0.48)
"""TRUE_P95_MS is the target's service-time p95 (at 40 % busy, latency is the service time)."""


def _stats_row(stdout: str, title: str) -> list[str]:
    row = next(line for line in stdout.splitlines() if line.startswith(title + " "))
    return [cell.strip() for cell in row.split("│")[1:]]


def test_the_imports_give_the_seeds_statistics_scaling_and_architecture_table(tmp_path):
    import_seed_001_exports(tmp_path)
    # Per load: n, mean, SD, CI, CV of req/s, as the seed's tables (21.88 ± 0.38; 52.6 ± 1.1).
    for vus, mean, sd in ((35, "21.88", "0.38"), (75, "52.6", "1.1")):
        stats = surge("stats", "--tag", f"vus={vus}", "--tag", "arch=scaleout", "--no-save")
        assert stats.code == 0, stats.stderr
        cells = _stats_row(stats.stdout, "req/s")
        say("001", vus=vus, n=cells[0], mean=cells[1], sd=cells[2], ci=f"{cells[3]}-{cells[4]}", cv=cells[-1])
        assert cells[:3] == ["10", mean, sd], cells
        assert cells[3] and cells[4] and cells[-1].endswith("%"), cells  # the CI and the CV
    # The scaling line and the architecture × load table.
    compare = surge(
        "compare",
        "--group",
        "baseline:arch=scaleout,vus=35",
        "--group",
        "stress:arch=scaleout,vus=75",
        "--loads",
        "35,75",
        "--no-save",
    )
    assert compare.code == 0, compare.stderr
    assert "2.14× load → 1.38× p95, 2.40× throughput, 112 % efficiency" in compare.stdout, compare.stdout
    grid = surge(
        "compare",
        "--group",
        "scaleout:arch=scaleout",
        "--group",
        "monolith:arch=monolith",
        "--loads",
        "vus=35,75",
        "--no-save",
    )
    assert grid.code == 0, grid.stderr
    row = next(line for line in grid.stdout.splitlines() if line.startswith("scaleout │"))
    cells = [c.strip() for c in row.split("│")[1:]]
    assert cells[0] == "21.88 ± 0.38" and cells[-2:] == ["2.40×", "112 %"], cells


def test_repeats_give_mean_sd_ci_and_cv_at_the_targets_latency(tmp_path):
    out = tmp_path / "repeat"
    with example_target("microservices-baseline-35vu.yaml") as target:
        run = surge(
            "repeat",
            str(EXAMPLES / "microservices-baseline-35vu.yaml"),
            "--target",
            target.url,
            "--time-scale",
            "0.01",
            "-n",
            "3",
            "--out",
            str(out),
            timeout=240,
        )
    assert run.code == 0, run.stderr[-3000:]
    statistics = json.loads((out / "experiment.json").read_text())["analysis"]["statistics"]
    for figure in ("responses_per_s", "p95_ms"):
        d = statistics[figure]
        assert d["n"] == 3 and d["sd"] is not None and d["ci_low"] <= d["mean"] <= d["ci_high"], d
        assert d["cv"] is not None, d
    p95 = statistics["p95_ms"]["mean"]
    say(
        "001",
        repeats_p95_ms=p95,
        true_p95_ms=TRUE_P95_MS,
        req_s=statistics["responses_per_s"]["mean"],
        req_s_cv=statistics["responses_per_s"]["cv"],
    )
    assert abs(p95 - TRUE_P95_MS) <= 0.15 * TRUE_P95_MS, (p95, TRUE_P95_MS)
    assert "req/s" in run.stdout and "CV" in run.stdout, run.stdout
