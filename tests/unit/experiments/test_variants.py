"""Variants: their syntax, and identical variants called different no more often than alpha."""

from __future__ import annotations

import numpy as np
import pytest

from surge.analysis.comparison import analyse, mann_whitney_floor
from surge.experiments.variants import parse_variant, with_base


def _fake_entries(rng: np.random.Generator, n: int) -> list[dict]:
    entries = []
    for i in range(n):
        for variant in ("A", "B"):
            x = float(rng.normal(400, 8))
            entries.append(
                {
                    "label": f"{variant} {i + 1}",
                    "variant": variant,
                    "complete": True,
                    "verdict": "none",
                    "figures": {
                        "responses_per_s": x,
                        "successes_per_s": x,
                        "p50_ms": float(rng.normal(40, 0.5)),
                        "p95_ms": None,
                        "p99_ms": None,
                        "failure_rate": 0.0,
                    },
                }
            )
    return entries


def test_identical_variants_are_called_different_no_more_often_than_alpha():
    rng = np.random.default_rng(2024)
    trials, alpha = 300, 0.05
    significant = 0
    for _ in range(trials):
        analysis, _ = analyse(_fake_entries(rng, 5), ["A", "B"], reference="A", alpha=alpha, resamples=0)
        verdict = analysis["comparisons"][0]["figures"][0]["verdict"]
        significant += verdict != "no significant difference"
    assert significant / trials <= alpha + 0.033, significant  # 3.3 %: two binomial SDs over 300 trials


def test_variant_syntax():
    assert parse_variant("b=http://127.0.0.1:9000").url == "http://127.0.0.1:9000"
    assert parse_variant("gopool:STORAGE=gopool,X=1").env == (("STORAGE", "gopool"), ("X", "1"))
    assert parse_variant("base").url is None and parse_variant("base").env == ()
    assert parse_variant("s:TOKEN=abc").describe()["env"] == {"TOKEN": "[redacted]"}
    assert with_base("http://127.0.0.1:8080/api?x=1", "http://127.0.0.1:9000") == "http://127.0.0.1:9000/api?x=1"
    assert with_base("http://127.0.0.1:8080/api", "https://h:1/") == "https://h:1/api"
    assert with_base("http://127.0.0.1:8080/api", "http://h:1/other") == "http://h:1/other"
    assert mann_whitney_floor(3, 3) == pytest.approx(0.1) and mann_whitney_floor(4, 4) == pytest.approx(2 / 70)
