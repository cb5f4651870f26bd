"""A Zipf key stream, checked against what the server saw (scenarios issue bar): a
Zipf(10,000, 1.1) stream over 100,000 requests puts the analytic share on the hottest 20 %
of keys, and the target's per-task read counts (``GET /stats/tasks``) agree.

The engine creates the 10,000 tasks itself (a shared-iterations run capturing ``$.id`` into a
pool), then reads them with a ``pool`` variable picked by Zipf. The engine maps rank k to the
pool's index k - 1, so the hottest ids are the first values of the pool as the setup run
returned it (the order in which captures landed, not 1..N).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from surge import _engine
from surge.engine.target import TargetProcess

TASKS = 10_000
READS = 100_000
S = 1.1
HEAD = TASKS // 5  # the hottest 20 % of keys


def zipf_weights(n: int, s: float) -> list[float]:
    """zipf_weights is k^-s for ranks k = 1..n (unnormalized)."""
    return [k**-s for k in range(1, n + 1)]


def shared_iterations(
    url: str,
    name: str,
    iterations: int,
    steps: list[dict[str, Any]],
    variables: list[dict[str, Any]] | None = None,
    pools: dict[str, list[str]] | None = None,
) -> dict[str, Any]:
    """shared_iterations is a one-scenario plan: ``iterations`` shared by 32 VUs, bounded."""
    return {
        "target": {"url": url},
        "scenarios": [
            {
                "name": name,
                "executor": {"type": "shared-iterations", "vus": 32, "iterations": iterations, "max_duration_s": 60},
                "variables": variables or [],
                "flow": {"sequences": [{"steps": steps}]},
            }
        ],
        "pools": pools or {},
        "limits": {"timeout_s": 10.0},
    }


def run(plan: dict[str, Any]) -> dict[str, Any]:
    """run runs a plan in the engine and returns its result document."""
    return json.loads(_engine.run(json.dumps(plan)))


def test_zipf_pool_keys_put_the_analytic_share_on_the_hottest_ids():
    with TargetProcess() as target:
        create = {
            "tag": "create",
            "request": {"method": "POST", "path": "/tasks", "body": '{"title": "t"}'},
            "captures": [{"name": "task_ids", "to_pool": True, "from": "json", "path": "$.id"}],
        }
        setup = run(shared_iterations(target.url, "setup", TASKS, [create], pools={"task_ids": []}))
        assert setup["requests"]["sent"] == TASKS, setup["requests"]
        pool: list[str] = setup["pools"]["task_ids"]
        assert sorted(int(v) for v in pool) == list(range(1, TASKS + 1))

        target.reset_stats()
        read = {"tag": "read", "request": {"method": "GET", "path": "/tasks/{{task}}"}}
        variable = {"name": "task", "type": "pool", "pool": "task_ids", "pick": "zipf", "s": S}
        reads = run(shared_iterations(target.url, "reads", READS, [read], [variable], {"task_ids": pool}))
        status, text = target.request("GET", "/stats/tasks")
        stats = target.stats()
    assert status == 200, text
    by_id = {int(k): v for k, v in json.loads(text)["reads_by_id"].items()}
    total = json.loads(text)["reads"]

    # Every read the engine sent was a 200 the target counted against an existing task.
    requests = reads["requests"]
    assert requests["sent"] == READS == total == sum(by_id.values()), (requests, total)
    assert requests["status_codes"] == {"200": READS}, requests
    assert stats["responses"]["GET /tasks/{id}"] == {"200": READS}
    assert set(by_id) <= set(range(1, TASKS + 1))

    weights = zipf_weights(TASKS, S)
    harmonic = sum(weights)
    want_head = sum(weights[:HEAD]) / harmonic  # ≈ 0.8947
    hot = [int(v) for v in pool[:HEAD]]
    head = sum(by_id.get(i, 0) for i in hot) / total
    top = by_id.get(int(pool[0]), 0) / total
    print(
        f"\nhead share {head:.4f} (analytic {want_head:.4f}); rank 1 {top:.4f} "
        f"(analytic {1 / harmonic:.4f}); ids read {len(by_id)}"
    )
    assert want_head == pytest.approx(0.8947, abs=5e-4)
    assert 1 / harmonic == pytest.approx(0.1514, abs=5e-4)
    assert abs(head - want_head) <= 0.01, (head, want_head)
    # Rank 1 alone: 1/H(10000, 1.1) ≈ 0.1514 of the reads (±10 % relative; σ is ~0.75 %).
    assert top == pytest.approx(1 / harmonic, rel=0.10), (top, 1 / harmonic)
    # And the target's hottest id is the pool's first value.
    assert max(by_id, key=lambda i: by_id[i]) == int(pool[0])
