"""The diagnosis of an experiment's runs, lifted to the experiment: each kind of finding its
runs had (docs/diagnosis.md), once, with the runs it was found in and what follows for the
experiment's figures."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

PREFIX = "run."
"""PREFIX starts the kind of an experiment finding lifted from its runs (``run.queueing``)."""

ADVICE = {
    "generator_saturated": "these runs' throughput is a lower bound: the generator, not the target, limited it; "
    "give surge more cores (--threads) or a machine of its own, then run again",
    "in_flight_limit": "requests were not sent because the in-flight limit was reached; raise --max-in-flight "
    "if the generator has room, or read it as the target falling behind",
    "port_exhaustion": "the client ran out of local ports: fewer connections, keep-alive, or more source addresses",
    "open_file_exhaustion": "the client ran out of file descriptors: raise the open-file limit (ulimit -n)",
    "machine_saturated": "these runs measured the machine, not the target alone: the generator, the target and "
    "other processes used its cores; run the generator on a machine of its own (or stop the "
    "other work) before reading a capacity from them",
}
"""ADVICE says what follows from a kind of finding for the experiment; other kinds get DEFAULT_ADVICE."""

WARMUP_ROLE = "warmup "
"""WARMUP_ROLE starts the role of a sweep level's unmeasured warm-up run."""

DEFAULT_ADVICE = "see each run's findings (surge show RUN) and docs/diagnosis.md"
"""DEFAULT_ADVICE is the advice of a kind ADVICE does not name."""


def compact(findings: Sequence[Mapping[str, Any]] | None) -> list[dict[str, Any]]:
    """compact is a run's findings as experiment.json lists them with the run: kind, severity
    and message (the evidence stays in the run's own summary.json)."""
    return [{"kind": f["kind"], "severity": f["severity"], "message": f["message"]} for f in findings or []]


def run_findings(entries: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """run_findings is one experiment finding per kind the measured runs' ``findings`` hold (a
    sweep's warm-ups are left out: nothing of theirs is measured), in the order first seen: in how many of the runs and which (by label), the first run's message,
    and the advice for the experiment."""
    seen: dict[str, list[tuple[str, str]]] = {}
    entries = [e for e in entries if not str(e.get("role", "")).startswith(WARMUP_ROLE)]
    for entry in entries:
        for finding in entry.get("findings") or []:
            seen.setdefault(finding["kind"], []).append((str(entry["label"]), finding["message"]))
    lifted = []
    for kind, hits in seen.items():
        labels = ", ".join(label for label, _ in hits)
        lifted.append(
            {
                "kind": PREFIX + kind,
                "text": f"{kind.replace('_', ' ')} in {len(hits)} of {len(entries)} runs ({labels}); "
                f"run {hits[0][0]}: {hits[0][1]}",
                "advice": ADVICE.get(kind, DEFAULT_ADVICE),
            }
        )
    return lifted
