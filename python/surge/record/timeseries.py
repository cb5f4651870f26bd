"""timeseries.csv: one row per interval for all scenarios (``all``) and one per scenario."""

from __future__ import annotations

import csv
import io
import time
from collections.abc import Mapping
from typing import IO, Any

FAILURE_CLASSES = (
    "connection_refused",
    "connect_timeout",
    "request_timeout",
    "stream_idle_timeout",
    "connection_reset",
    "closed_before_response",
    "stream_reset",
    "goaway",
    "invalid_response",
    "dns_failure",
    "tls_failure",
    "address_exhausted",
    "too_many_open_files",
    "other_io",
)
"""FAILURE_CLASSES are the engine's failure classes that count as failed requests, in its order
(crates/surge-engine/src/measure/failure.rs ``FailureClass::ALL``, less ``interrupted``, counted apart)."""

FAILURE_COLUMNS = ("failed_status", *(f"failed_{name}" for name in FAILURE_CLASSES))
"""FAILURE_COLUMNS split ``failures`` by class: 4xx/5xx responses, then each failure class; fixed,
so the header never changes within a file."""

TARGET_COLUMNS = ("target_cpu_cores", "target_rss_bytes", "target_threads", "target_open_files")
"""TARGET_COLUMNS hold the watched target process's latest sample (--watch-pid, docs/diagnosis.md);
empty when no process is watched."""

COLUMNS = (
    "time_s",
    "scenario",
    "active_vus",
    "offered_rate_per_s",
    "sent_per_s",
    "responses_per_s",
    "successes",
    "failures",
    *FAILURE_COLUMNS,
    "interrupted",
    "shed",
    "p50_ms",
    "p90_ms",
    "p95_ms",
    "p99_ms",
    "max_ms",
    "in_flight",
    "peak_concurrency",
    "open_connections",
    "cpu_cores",
    *TARGET_COLUMNS,
)
"""COLUMNS are timeseries.csv's columns, in order (docs/record.md says what each holds)."""

ALL_SCENARIOS = "all"
"""ALL_SCENARIOS is the ``scenario`` of the row that sums every scenario of an interval."""


def failure_cells(requests: dict[str, Any]) -> dict[str, int]:
    """failure_cells splits an interval's failed requests into FAILURE_COLUMNS (they add up to
    ``failed``) and counts its ``interrupted`` ones."""
    classes = requests.get("failure_classes") or {}
    cells = {f"failed_{name}": int(classes.get(name, 0)) for name in FAILURE_CLASSES}
    return {
        "failed_status": requests["failed"] - sum(cells.values()),
        **cells,
        "interrupted": int(classes.get("interrupted", 0)),
    }


def target_cells(sample: Mapping[str, Any] | None) -> dict[str, Any]:
    """target_cells are TARGET_COLUMNS from a watched process's ``sample`` (``cpu_cores`` to three
    decimals), empty without one."""
    if sample is None:
        return {}
    cpu = sample.get("cpu_cores")
    return {
        "target_cpu_cores": "" if cpu is None else round(cpu, 3),
        "target_rss_bytes": sample["rss_bytes"],
        "target_threads": sample["threads"],
        "target_open_files": sample["open_files"],
    }


def interval_rows(
    interval: dict[str, Any], cpu_cores: float | None = None, target: Mapping[str, Any] | None = None
) -> list[dict[str, Any]]:
    """interval_rows are an engine interval's rows: ``all`` (with the generator's ``cpu_cores``
    over the interval, when measured, and the watched ``target`` process's latest sample), then
    one per scenario (cells the engine does not count per scenario are left empty)."""
    scenarios = interval.get("scenarios", [])
    requests = interval["requests"]
    latency = interval["latency"]["all"]
    time_s = round(interval["end_s"], 3)
    offered = interval.get("target_rate_per_s")
    rows = [
        {
            "time_s": time_s,
            "scenario": ALL_SCENARIOS,
            "active_vus": sum(s["active_vus"] for s in scenarios),
            "offered_rate_per_s": "" if offered is None else offered,
            "sent_per_s": interval["sent_per_s"],
            "responses_per_s": interval["responses_per_s"],
            "successes": requests["succeeded"],
            "failures": requests["failed"],
            **failure_cells(requests),
            "shed": requests["shed"],
            **{f"{p}_ms": latency[f"{p}_ms"] for p in ("p50", "p90", "p95", "p99", "max")},
            "in_flight": interval["in_flight"],
            "peak_concurrency": interval["peak_concurrency"],
            "open_connections": interval["open_connections"],
            "cpu_cores": "" if cpu_cores is None else round(cpu_cores, 3),
            **target_cells(target),
        }
    ]
    for s in scenarios:
        rows.append(
            {
                "time_s": time_s,
                "scenario": s["name"],
                "active_vus": s["active_vus"],
                "responses_per_s": s["responses_per_s"],
            }
        )
    return rows


def csv_text(rows: list[dict[str, Any]], *, header: bool = False) -> str:
    """csv_text is ``rows`` as timeseries.csv lines (with the header line first when asked):
    what TimeseriesWriter appends, and what the history keeps to rebuild the file byte for byte."""
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=COLUMNS, restval="", lineterminator="\n")
    if header:
        writer.writeheader()
    writer.writerows(rows)
    return text.getvalue()


class CpuMeter:
    """CpuMeter measures the surge process's CPU use (every thread: the engine's event loops and
    Python) between two readings, in cores: CPU seconds over wall seconds."""

    def __init__(self) -> None:
        self.restart()

    def restart(self) -> None:
        """restart makes now the start of the next measurement."""
        self._wall = time.monotonic()
        self._cpu = time.process_time()

    def cores(self) -> float | None:
        """cores is the CPU used since the last reading (or restart) over the wall time since,
        and starts the next measurement; None when no time has passed."""
        wall, cpu = time.monotonic(), time.process_time()
        elapsed = wall - self._wall
        used = cpu - self._cpu
        self._wall, self._cpu = wall, cpu
        return used / elapsed if elapsed > 0 else None


class TimeseriesWriter:
    """TimeseriesWriter appends each interval's rows to timeseries.csv, flushed per interval."""

    def __init__(self, file: IO[str]) -> None:
        self._file = file
        file.write(csv_text([], header=True))
        file.flush()

    def write(
        self, interval: dict[str, Any], cpu_cores: float | None = None, target: Mapping[str, Any] | None = None
    ) -> None:
        """write appends ``interval``'s rows (``cpu_cores``: the generator's CPU over it;
        ``target``: the watched process's latest sample) and flushes them."""
        self._file.write(csv_text(interval_rows(interval, cpu_cores, target)))
        self._file.flush()
