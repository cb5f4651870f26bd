"""findings: every diagnosis rule run over one result document, in a fixed order (the client's
limits first, then the machine, the generator, the server). The one function every run and every
experiment's run calls (docs/diagnosis.md)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from surge.core.redact import redact_text
from surge.diagnosis.client_limits import open_file_exhaustion, port_exhaustion
from surge.diagnosis.evidence import open_model, timeout_s
from surge.diagnosis.finding import Finding
from surge.diagnosis.generator import connection_wait, generator_saturated, in_flight_limit, startup_s
from surge.diagnosis.littles_law import queueing
from surge.diagnosis.machine import machine_saturated, target_cpu
from surge.diagnosis.server import server_cpu_bound
from surge.diagnosis.shed import load_shed
from surge.diagnosis.timeouts import timeout_cascade
from surge.plan.heading import PlanLike
from surge.record.figures import number


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
        port_exhaustion(result_document),
        open_file_exhaustion(result_document),
        machine_saturated(
            result_document,
            steady_from_s=steady_from,
            target_cores=target_cpu(samples, number(result_document, "duration_s"), steady_from),
        ),
        generator,
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
    from surge.diagnosis.generator import GENERATOR_SATURATED

    return any(f.kind == GENERATOR_SATURATED for f in found)
