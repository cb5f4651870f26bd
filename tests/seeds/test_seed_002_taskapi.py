"""Seed 002 (shared/seeds/002_fe165911492fb6bb.txt, the Task API's storage journey): is the
32-shard store faster than the single-mutex MemoryStore, by how much, and is the difference
real? And do the read-heavy test's Zipf keys put 80 % of reads on the hottest 20 % of tasks?
Asked of ``surge compare`` (the stress scenario against the two stores of the calibrated target:
--shards 1 vs --shards 32, each shard's critical section --lock-hold long, so one lock caps the
store at 1/hold) and of ``surge run`` of examples/taskapi-read-heavy-zipf.yaml, whose key
distribution the target counts per task (GET /stats/tasks)."""

from __future__ import annotations

import json

from seed_targets import EXAMPLES, example_target, say

from conftest import surge

HOT_SHARE = sum(k**-0.95 for k in range(1, 2_001)) / sum(k**-0.95 for k in range(1, 10_001))
"""HOT_SHARE is Zipf(10,000, s = 0.95)'s share on its hottest 2,000 keys (80.0 %: the seed's "80/20")."""


def test_the_read_heavy_zipf_keys_put_the_seeds_share_on_the_hot_set():
    with example_target("taskapi-read-heavy-zipf.yaml") as target:
        run = surge(
            "run",
            str(EXAMPLES / "taskapi-read-heavy-zipf.yaml"),
            "--target",
            target.url,
            "--time-scale",
            "0.1",
            "--no-save",
            "--json",
            timeout=240,
        )
        assert run.code in (0, 99), run.stderr[-3000:]
        status, text = target.request("GET", "/stats/tasks")
    assert status == 200, text
    stats = json.loads(text)
    counts = sorted(stats["reads_by_id"].values(), reverse=True)
    total = stats["reads"]
    assert total > 20_000 and total == sum(counts), total
    hot = sum(counts[:2_000]) / total
    say("002", hot_set_share=hot, analytic=HOT_SHARE, reads=total)
    # The top 2,000 by count slightly overstates the analytic share (sampling noise sorts high).
    assert HOT_SHARE - 0.02 <= hot <= HOT_SHARE + 0.04, (hot, HOT_SHARE)
    assert abs(HOT_SHARE - 0.80) < 0.005


def _store_flags(shards: int) -> list[str]:
    """_store_flags are the stress example's target flags with ``--shards`` set to ``shards``."""
    from seed_targets import target_flags

    flags = target_flags("taskapi-stress-80-20.yaml")
    at = flags.index("--shards")
    return [*flags[:at], "--shards", str(shards), *flags[at + 2 :]]


def test_the_sharded_store_serves_several_times_the_single_lock_one_significantly(tmp_path):
    from surge.engine.target import TargetProcess

    with TargetProcess(*_store_flags(1)) as memory, TargetProcess(*_store_flags(32)) as shard:
        run = surge(
            "compare",
            str(EXAMPLES / "taskapi-stress-80-20.yaml"),
            "--time-scale",
            "0.03",
            "--variant",
            f"memory={memory.url}",
            "--variant",
            f"shard={shard.url}",
            "-n",
            "4",
            "--no-save",
            "--json",
            timeout=300,
        )
    assert run.code == 99, run.stderr[-3000:]  # the example's p95 < 50 ms fails in every run, as it says
    doc = run.json()
    order = [entry["variant"] for entry in doc["runs"]]
    assert order == ["memory", "shard", "shard", "memory"] * 2, order  # balanced: no variant always first
    pair = next(p for p in doc["analysis"]["comparisons"] if (p["reference"], p["variant"]) == ("memory", "shard"))
    throughput = next(c for c in pair["figures"] if c["figure"] == "responses_per_s")
    say("002", shard_over_memory=throughput["ratio"], welch_p=throughput["welch_p"], verdict=throughput["verdict"])
    assert throughput["ratio"] >= 3, throughput  # the seed's "fails at ~200 VUs" against 1,800+/s
    p = throughput["welch_p"] if throughput["welch_p"] is not None else throughput["mann_whitney_p"]  # the verdict's
    assert throughput["verdict"] == "better" and p < 0.05, throughput
    assert not throughput.get("may_be_drift"), throughput
