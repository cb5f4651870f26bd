"""Seed 003 (shared/seeds/003_7cceab826ff01d4a.txt, edgeProxy "Stress Testing & Capacity
Limits"): where is the maximum throughput, at what concurrency, where does it degrade and break?
The author swept hey/k6 by hand over 100 … 5,000 connections and read ~3,000 req/s at 500–1,000
VUs, degradation from ~2,000. Asked of ``surge sweep`` against the example's calibrated target
(examples/edge-proxy-health.yaml: a USL server behind a 200 ms round trip), whose true curve is
computed here from its parameters: the peak level within one level of 1,000 connections, its
throughput within 15 % of the target's rate there, zones that only worsen, and the USL's N* near
the true peak concurrency. Levels are 3 s (the seed's 60 s, scaled down), and what is still in
flight 2 s after a level (not the example's 20 s) is cut off: not the target's failures, and the
next level waits for the target to drain it."""

from __future__ import annotations

import json
import math

from seed_targets import EXAMPLES, example_target, say

from conftest import surge
from surge.record.schema import validate_experiment

LEVELS = [100, 500, 1000, 1500, 2000]
"""LEVELS are the connection counts swept (the seed's 100/500/1,000/2,000, and 1,500 between:
five levels for the USL fit)."""

MEAN_SERVICE_S = 0.0081 * math.exp(1.5**2 / 2)
"""MEAN_SERVICE_S is the mean of the target's lognormal service time (median 8.1 ms, σ 1.5)."""
SIGMA, KAPPA, ROUND_TRIP_S = 0.002, 0.000022, 0.2
"""SIGMA, KAPPA: the target's USL contention and coherency; ROUND_TRIP_S: its /delay/200."""


def served(n: float) -> float:
    """served is the target's throughput with ``n`` requests in service (the USL, docs/target.md)."""
    return n / (MEAN_SERVICE_S * (1 + SIGMA * (n - 1) + KAPPA * n * (n - 1))) if n > 0 else 0.0


def true_rate(connections: int) -> float:
    """true_rate is the target's throughput with ``connections`` closed-loop clients: each spends
    the round trip outside "in service", so n + ROUND_TRIP_S·X(n) = connections (Little's law)."""
    low, high = 0.0, float(connections)
    for _ in range(100):
        n = (low + high) / 2
        low, high = (n, high) if n + ROUND_TRIP_S * served(n) < connections else (low, n)
    return served(low)


def test_the_sweep_finds_the_peak_near_1000_connections_at_the_targets_rate(tmp_path):
    out = tmp_path / "sweep"
    with example_target("edge-proxy-health.yaml") as target:
        run = surge(
            "sweep",
            str(EXAMPLES / "edge-proxy-health.yaml"),
            "--target",
            target.url,
            "--vus",
            ",".join(map(str, LEVELS)),
            "-d",
            "3s",
            "--warmup",
            "1s",
            "--grace",
            "2s",
            "--drain-wait",
            "20s",
            "--out",
            str(out),
            timeout=300,
        )
    assert run.code == 0, run.stderr[-3000:]
    doc = json.loads((out / "experiment.json").read_text())
    validate_experiment(doc)
    analysis = doc["analysis"]
    truth = {n: true_rate(n) for n in LEVELS}
    best = max(truth, key=lambda n: truth[n])
    assert best == 1000, truth  # the model's own answer, as the example's header says

    peak = analysis["peak"]
    assert abs(LEVELS.index(int(peak["load"])) - LEVELS.index(best)) <= 1, (peak, truth)
    assert abs(peak["throughput"] - truth[best]) <= 0.15 * truth[best], (peak, truth[best])

    zones = [level["zone"] for level in analysis["levels"]]
    order = ["optimal", "stress", "degraded", "broken"]
    assert [order.index(z) for z in zones] == sorted(order.index(z) for z in zones), zones
    assert zones[-1] == "broken" and zones[0] != "broken", zones

    # The USL fit's N* near the true peak concurrency (the connections at which X is highest).
    true_n_star = max(range(100, 3001, 10), key=true_rate)
    usl = analysis["usl"]
    say(
        "003",
        peak_vus=peak["load"],
        peak_per_s=peak["throughput"],
        true_per_s=truth[best],
        zones=",".join(zones),
        usl_n_star=usl.get("peak_n"),
        true_n_star=true_n_star,
    )
    assert "refused" not in usl and usl["peak_n"] is not None, usl
    assert abs(usl["peak_n"] - true_n_star) <= 0.35 * true_n_star, (usl, true_n_star)
