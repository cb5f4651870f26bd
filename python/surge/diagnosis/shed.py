"""The ``load_shed`` finding: the server refused part of the load with 429 or 503 (back-pressure)
and stayed up, rather than broke. Rules: docs/diagnosis.md."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from surge.diagnosis.finding import WARNING, Finding, grouped, percent
from surge.record.figures import count, ended, number

LOAD_SHED = "load_shed"
"""LOAD_SHED is the kind of the finding that the server shed load."""

SHED_SHARE_THRESHOLD = 0.01
"""SHED_SHARE_THRESHOLD: at least this share of responses were 429 or 503."""

BROKEN_SHARE_THRESHOLD = 0.01
"""BROKEN_SHARE_THRESHOLD: other failures (not 429/503) at or above this share of the ended
requests mean the server did not only shed load: the message says so."""


def load_shed(document: Mapping[str, Any]) -> Finding | None:
    """load_shed: 429 and 503 responses ≥ SHED_SHARE_THRESHOLD of responses."""
    requests = document.get("requests") or {}
    shed, responses = count(requests, "shed"), count(requests, "responses")
    if not responses or shed / responses < SHED_SHARE_THRESHOLD:
        return None
    codes = requests.get("status_codes") or {}
    by_code = {code: int(codes[code]) for code in ("429", "503") if codes.get(code)}
    total = ended(requests)
    other = max(count(requests, "failed") - shed, 0)
    goodput = number(document.get("throughput"), "successes_per_s")
    codes_text = ", ".join(f"{code} × {grouped(n)}" for code, n in by_code.items())
    if total and other / total >= BROKEN_SHARE_THRESHOLD:
        tail = (
            f"but {grouped(other)} other requests ({percent(other / total)}) failed too, so shedding did not "
            f"protect it entirely; it served {grouped(goodput, 1)} successes/s"
        )
    else:
        tail = (
            f"back-pressure, not a breakdown: it kept serving {grouped(goodput, 1)} successes/s and almost "
            f"nothing else failed ({grouped(other)} other failures)"
        )
    message = (
        f"The server shed load: {grouped(shed)} of {grouped(responses)} responses ({percent(shed / responses)}) "
        f"were 429/503 ({codes_text}): {tail}."
    )
    return Finding(
        LOAD_SHED,
        WARNING,
        message,
        {
            "shed": shed,
            "responses": responses,
            "shed_share": shed / responses,
            "status_codes": by_code,
            "other_failures": other,
            "successes_per_s": goodput,
            "shed_share_threshold": SHED_SHARE_THRESHOLD,
        },
    )
