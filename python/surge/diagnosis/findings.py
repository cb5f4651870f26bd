"""findings: every diagnosis rule run over one result document, in a fixed order (the client's
limits first, then the machine, the generator, the server). The one function every run and every
experiment's run calls (docs/diagnosis.md). Around it: ``watch_process`` checks ``--watch-pid``
before the run (psutil loads only when it is given), ``attach_diagnosis`` gives a finished run's
result its ``findings`` (and ``target_process``), and ``run_findings`` lifts an experiment's
runs' findings to the experiment: each kind once, with the runs it was found in and what follows
for the experiment's figures."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from surge.core.errors import BadInput
from surge.core.redact import redact_text
from surge.diagnosis.client_limits import open_file_exhaustion, port_exhaustion
from surge.diagnosis.finding import Finding, open_model, timeout_s
from surge.diagnosis.generator import (
    GENERATOR_SATURATED,
    connection_wait,
    generator_late,
    generator_lost,
    generator_saturated,
    in_flight_limit,
    startup_s,
)
from surge.diagnosis.littles_law import queueing
from surge.diagnosis.machine import machine_saturated, target_cpu
from surge.diagnosis.server import server_cpu_bound
from surge.diagnosis.shed import load_shed
from surge.diagnosis.timeouts import timeout_cascade
from surge.plan.heading import PlanLike
from surge.record.figures import number

PREFIX = "run."
"""PREFIX starts the kind of an experiment finding lifted from its runs (``run.queueing``)."""

ADVICE = {
    "generator_saturated": "these runs' throughput is a lower bound: the generator, not the target, limited it; "
    "give surge more cores (--threads) or a machine of its own, then run again",
    "generator_late": "some sends of these runs went out late through the generator's own delays (other processes "
    "on its machine, or the machine waking it late): their latency includes that delay; run the generator on a "
    "quiet machine of its own to measure the target alone",
    "in_flight_limit": "requests were not sent because the in-flight limit was reached; raise --max-in-flight "
    "if the generator has room, or read it as the target falling behind",
    "port_exhaustion": "the client ran out of local ports: fewer connections, keep-alive, or more source addresses",
    "open_file_exhaustion": "the client ran out of file descriptors: raise the open-file limit (ulimit -n)",
    "machine_saturated": "these runs measured the machine, not the target alone: the generator, the target and "
    "other processes used its cores; run the generator on a machine of its own (or stop the "
    "other work) before reading a capacity from them",
    "generator_lost": "a generator of these distributed runs was lost: their counts and rates after the loss are "
    "lower bounds; check the Ray cluster's nodes, then run again",
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
    sweep's warm-ups are left out: nothing of theirs is measured), in the order first seen: in
    how many of the runs and which (by label), the first run's message, and the advice for the experiment."""
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


if TYPE_CHECKING:
    from surge.diagnosis.watch import TargetWatch


def watch_process(pid: int | None, flag: str = "--watch-pid") -> TargetWatch | None:
    """watch_process is the sampler of process ``pid`` (not yet started), or None without one; a
    pid that is not a running, readable process is refused before the run (BadInput naming
    ``flag``, exit 2)."""
    if pid is None:
        return None
    if pid <= 0:
        raise BadInput(flag, f"must be a process id above zero, got {pid}")
    from surge.diagnosis.watch import TargetWatch  # start-up: psutil only with --watch-pid

    return TargetWatch(pid, flag=flag)


if TYPE_CHECKING:  # psutil (~6 ms of CPU) loads only when --watch-pid is given
    from surge.diagnosis.watch import TargetWatch


def attach_diagnosis(result: dict[str, Any], plan: PlanLike | None, watch: TargetWatch | None) -> None:
    """attach_diagnosis adds ``target_process`` (when ``watch`` is given; a warning on stderr
    when the process ended before the run did) and ``findings`` to the engine ``result`` in
    place."""
    if watch is not None:
        started = result.get("started_at_unix_s")
        warning = watch.warning(started)
        if warning is not None:
            print(warning, file=sys.stderr, flush=True)
        result["target_process"] = watch.document(started)
    result["findings"] = [f.to_dict() for f in findings(result, plan=plan)]


def findings(
    result_document: Mapping[str, Any],
    *,
    target_samples: Sequence[Mapping[str, Any]] | None = None,
    plan: PlanLike | None = None,
) -> list[Finding]:
    """findings diagnoses one run from its result document (``surge.result/1`` as a dict: the
    ``--json`` document or summary.json), the watched target's samples (``target_samples``:
    summary.json's ``target_process.samples``, read from the document when not given) and its
    ``plan`` (a Plan, an engine plan dict or a record's Heading; it tells the open model from
    the closed one and gives the timeout and the in-flight limit). Returns the findings that hold,
    each message with its secrets masked; an empty list when none does."""
    target = result_document.get("target_process") or {}
    samples = target_samples if target_samples is not None else target.get("samples") or []
    open_ = open_model(result_document, plan)
    queue = queueing(result_document)
    server = server_cpu_bound(result_document, samples, target.get("cores")) if samples else None
    generator = generator_saturated(
        result_document, open_model=open_, server_limited=queue is not None or server is not None
    )
    steady_from = startup_s(result_document)
    found = [
        generator_lost(result_document),
        port_exhaustion(result_document),
        open_file_exhaustion(result_document),
        machine_saturated(
            result_document,
            steady_from_s=steady_from,
            target_cores=target_cpu(samples, number(result_document, "duration_s"), steady_from),
        ),
        generator,
        generator_late(result_document, open_model=open_),
        connection_wait(result_document, open_model=open_),
        in_flight_limit(result_document, plan, generator_bound=generator is not None, server_slow=queue is not None)
        if open_
        else None,
        server,
        queue,
        timeout_cascade(result_document, timeout_s(result_document, plan)),
        load_shed(result_document),
    ]
    return [Finding(f.kind, f.severity, redact_text(f.message), f.evidence) for f in found if f is not None]


def generator_bound(found: Sequence[Finding]) -> bool:
    """generator_bound tells whether ``found`` says the generator was the bottleneck (the
    summary then marks throughput as a lower bound)."""
    return any(f.kind == GENERATOR_SATURATED for f in found)
