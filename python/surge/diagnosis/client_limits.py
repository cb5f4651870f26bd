"""Findings about the client machine's own limits: ``port_exhaustion`` (no local port left for a
new connection, EADDRNOTAVAIL; seed 003's ``can't assign requested address``) and
``open_file_exhaustion`` (EMFILE/ENFILE: surge's open-file limit reached). Both are the
client's limits, not the target's. Rules: docs/diagnosis.md."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from surge.diagnosis.finding import ERROR, Finding, grouped, percent
from surge.record.figures import count, ended, failure_class

PORT_EXHAUSTION = "port_exhaustion"
"""PORT_EXHAUSTION is the kind of the finding that the client ran out of local ports."""

OPEN_FILE_EXHAUSTION = "open_file_exhaustion"
"""OPEN_FILE_EXHAUSTION is the kind of the finding that surge ran out of file descriptors."""


def _failures(document: Mapping[str, Any], name: str) -> tuple[int, int, int]:
    """_failures is the count of failure class ``name``, the ended requests and the peak of
    open connections."""
    requests = document.get("requests") or {}
    return failure_class(requests, name), ended(requests), count(document, "peak_open_connections")


def port_exhaustion(document: Mapping[str, Any]) -> Finding | None:
    """port_exhaustion: any ``address_exhausted`` failure."""
    failures, total, peak = _failures(document, "address_exhausted")
    if not failures:
        return None
    opened = count(document.get("requests"), "connections_opened")
    message = (
        f"The client ran out of local ports: {grouped(failures)} requests ({percent(failures / total)}) failed "
        f"to connect with EADDRNOTAVAIL (address_exhausted) after {grouped(opened)} connections were opened "
        f"(peak {grouped(peak)} open). This is the load generator's machine, not the target: each new "
        f"connection to the same address takes a local port, and closed ones wait in TIME_WAIT. Reuse "
        f"connections (keep-alive, fewer -c), widen net.ipv4.ip_local_port_range, or spread the load over "
        f"more source addresses or machines."
    )
    return Finding(
        PORT_EXHAUSTION,
        ERROR,
        message,
        {
            "address_exhausted": failures,
            "ended": total,
            "share": failures / total if total else 0.0,
            "connections_opened": opened,
            "peak_open_connections": peak,
        },
    )


def open_file_exhaustion(document: Mapping[str, Any]) -> Finding | None:
    """open_file_exhaustion: any ``too_many_open_files`` failure; names the open-file limit."""
    failures, total, peak = _failures(document, "too_many_open_files")
    if not failures:
        return None
    limit = count(document.get("generator"), "open_file_limit")
    limit_text = f"its open-file limit (ulimit -n) is {grouped(limit)}" if limit else "its open-file limit was reached"
    message = (
        f"surge ran out of file descriptors: {grouped(failures)} requests ({percent(failures / total)}) failed "
        f"with EMFILE (too_many_open_files); {limit_text} and up to {grouped(peak)} connections were open. "
        f"This is the load generator's limit, not the target's: raise it (ulimit -n), or lower -c / "
        f"--max-in-flight."
    )
    return Finding(
        OPEN_FILE_EXHAUSTION,
        ERROR,
        message,
        {
            "too_many_open_files": failures,
            "ended": total,
            "share": failures / total if total else 0.0,
            "open_file_limit": limit or None,
            "peak_open_connections": peak,
        },
    )
