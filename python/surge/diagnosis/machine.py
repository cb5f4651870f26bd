"""The whole machine's CPU during a run, and the ``machine_saturated`` finding: generator, target
and other processes together used (nearly) every core, so the result measures the machine
(seed 000: k6 and the controller on one 2-vCPU instance). ``MachineCpu`` reads the machine's CPU
times (``/proc/stat``; psutil elsewhere) at the start of the measured run and at each interval's
end, on every run, watched or not. Rules: docs/diagnosis.md."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from surge.diagnosis.finding import WARNING, Finding, grouped, mean, percent
from surge.record.figures import number

MACHINE_SATURATED = "machine_saturated"
"""MACHINE_SATURATED is the kind of the finding that the machine surge ran on had no core to spare."""

MACHINE_BUSY_SHARE = 0.90
"""MACHINE_BUSY_SHARE: the machine's busy cores over the steady part of the load were at least
this share of its cores ..."""

MIN_MACHINE_SAMPLES = 2
"""MIN_MACHINE_SAMPLES: ... over at least this many interval readings (else over the whole run,
from its first reading to its last)."""

LOCAL_HOSTS = ("127.", "localhost", "::1", "[::1]", "0.0.0.0")
"""LOCAL_HOSTS start the host of a target on the generator's own machine (loopback)."""


class MachineReading(NamedTuple):
    """MachineReading is the machine's CPU time so far, every core summed, in the platform's
    units: ``busy`` (idle and iowait are not busy; steal is: another guest held the core),
    ``total``, and ``steal`` (the time the hypervisor ran another guest on this machine's cores
    while they had work; 0 where it is not told)."""

    busy: float
    total: float
    steal: float = 0.0


def machine_reading() -> MachineReading | None:
    """machine_reading is the machine's CPU times so far (MachineReading); None when they cannot
    be read."""
    try:
        with Path("/proc/stat").open("rb") as f:
            fields = [float(x) for x in f.readline().split()[1:9]]
        return MachineReading(sum(fields) - fields[3] - fields[4], sum(fields), fields[7])
    except (OSError, ValueError, IndexError):
        pass
    try:
        import psutil  # type: ignore[import-untyped]  # only where /proc/stat is missing (macOS, Windows)

        t = psutil.cpu_times()
        idle = t.idle + getattr(t, "iowait", 0.0)
        total = sum(t)
        return MachineReading(total - idle, total, getattr(t, "steal", 0.0))
    except Exception:
        return None


def busy_cores(before: MachineReading, after: MachineReading, cores: int | None = None) -> float | None:
    """busy_cores is how many of the machine's ``cores`` (os.cpu_count() unless told) were busy on
    average between two readings: the busy share of the CPU time between them × the cores."""
    total = after.total - before.total
    if total <= 0:
        return None
    return (after.busy - before.busy) / total * float(cores or os.cpu_count() or 1)


def stolen_share(before: MachineReading, after: MachineReading) -> float | None:
    """stolen_share is the share of each core's time between two readings that the hypervisor
    gave to another guest (steal over all CPU time; 0.2 = a fifth of every core's second was not
    this machine's). A thread running the whole time is charged only the rest: its ceiling is
    1 − this share of a core."""
    total = after.total - before.total
    if total <= 0:
        return None
    return min(max((after.steal - before.steal) / total, 0.0), 1.0)


STEAL_WORTH_SAYING = 0.02
"""STEAL_WORTH_SAYING: a finding's sentence names the hypervisor's steal when it took more than
this share of a core."""

MIN_CORE_SHARE = 0.1
"""MIN_CORE_SHARE bounds core_share from below: a reading that says the hypervisor kept nearly
every core's time says more about the reading than about the cores."""


def core_share(steal_share: float | None) -> float:
    """core_share is the share of a core this machine had over a span whose stolen_share is
    ``steal_share``: 1 − steal, 1.0 where steal was not read, at least MIN_CORE_SHARE. A thread
    that ran the whole span is charged this much CPU: it is the ceiling of one thread."""
    if steal_share is None:
        return 1.0
    return max(1.0 - max(float(steal_share), 0.0), MIN_CORE_SHARE)


class MachineCpu:
    """MachineCpu: the machine's busy cores from ``start`` to each ``sample`` (interval ends, at
    ``t_s`` seconds into the run) and over the whole run (``document``)."""

    def __init__(self) -> None:
        """__init__ takes the first reading."""
        self.cores = int(os.cpu_count() or 1)
        self._first = self._last = machine_reading()
        self._first_unix_s = time.time()
        self._samples: list[dict[str, Any]] = []

    def sample(self, t_s: float | None) -> None:
        """sample records the busy cores since the previous reading, at ``t_s`` into the run."""
        reading = machine_reading()
        if reading is None or self._last is None or t_s is None:
            return
        cores = busy_cores(self._last, reading, self.cores)
        self._last = reading
        if cores is not None:
            self._samples.append({"t_s": round(float(t_s), 3), "cpu_cores": round(cores, 4)})

    def document(self) -> dict[str, Any] | None:
        """document is the result's ``machine``: ``cores``, ``cpu_cores_mean`` (busy cores from the
        first reading to now), ``steal_share`` (the share of every core's time the hypervisor gave
        other guests over the same span: stolen_share) and ``samples`` (``t_s``, ``cpu_cores``
        since the previous one); None when the machine's CPU cannot be read."""
        now = machine_reading()
        if self._first is None or now is None:
            return None
        return {
            "cores": self.cores,
            "cpu_cores_mean": busy_cores(self._first, now, self.cores),
            "steal_share": stolen_share(self._first, now),
            "samples": list(self._samples),
        }


def machine_saturated(
    document: Mapping[str, Any], *, steady_from_s: float, target_cores: float | None
) -> Finding | None:
    """machine_saturated: the machine's busy cores (``document["machine"]``), averaged over its
    readings in the steady part of the load (from ``steady_from_s`` to ``duration_s`` + 1; at
    least MIN_MACHINE_SAMPLES, else the whole run's mean), were ≥ MACHINE_BUSY_SHARE of its cores.
    Says how the cores were shared: surge's own (``generator.cpu`` over ``elapsed_s``), the
    target's when watched (``target_cores``), and the rest."""
    machine = document.get("machine") or {}
    cores = int(machine.get("cores") or 0)
    if not cores:
        return None
    duration = number(document, "duration_s")
    steady = [
        float(s["cpu_cores"])
        for s in machine.get("samples") or []
        if steady_from_s < float(s["t_s"]) <= duration + 1.0 and s.get("cpu_cores") is not None
    ]
    used = mean(steady) if len(steady) >= MIN_MACHINE_SAMPLES else machine.get("cpu_cores_mean")
    if used is None or float(used) < MACHINE_BUSY_SHARE * cores:
        return None
    used = float(used)
    cpu = (document.get("generator") or {}).get("cpu") or {}
    elapsed = number(document, "elapsed_s")
    generator = (number(cpu, "user_s") + number(cpu, "system_s")) / elapsed if elapsed > 0 else 0.0
    local = target_cores is not None or _local(str(document.get("url") or ""))
    parts = [f"surge {grouped(generator, 2)}"]
    if target_cores is not None:
        parts.append(f"the target {grouped(target_cores, 2)}")
        parts.append(f"other processes {grouped(max(used - generator - target_cores, 0.0), 2)}")
    else:
        others = "the target and other processes" if local else "other processes"
        parts.append(f"{others} {grouped(max(used - generator, 0.0), 2)}")
    who = "generator and target share a saturated machine" if local else "the generator ran on a saturated machine"
    message = (
        f"The machine was saturated: {grouped(used, 2)} of its {cores} cores were busy during the load "
        f"({percent(used / cores)}; {', '.join(parts)}): {who}: the result measures the machine, not the "
        f"target alone. Run the generator on a machine of its own (or stop the other processes) to measure "
        f"the target."
    )
    return Finding(
        MACHINE_SATURATED,
        WARNING,
        message,
        {
            "machine_cores": cores,
            "machine_cpu_cores": used,
            "machine_busy_share": used / cores,
            "generator_cpu_cores": generator,
            "target_cpu_cores": target_cores,
            "target_local": local,
            "steady_samples": len(steady),
            "machine_busy_threshold": MACHINE_BUSY_SHARE,
        },
    )


def target_cpu(samples: Sequence[Mapping[str, Any]], duration_s: float, steady_from_s: float) -> float | None:
    """target_cpu is the watched target's mean CPU (cores) over its samples in the steady part of
    the load, or over all its load samples when none falls there; None without samples."""
    loaded = [
        (float(s["t_s"]), float(s["cpu_cores"]))
        for s in samples
        if s.get("cpu_cores") is not None and 0.0 <= float(s["t_s"]) <= duration_s + 1.0
    ]
    steady = [c for t, c in loaded if t > steady_from_s]
    chosen = steady or [c for _, c in loaded]
    return mean(chosen) if chosen else None


def _local(url: str) -> bool:
    """_local tells whether ``url``'s host is this machine (loopback)."""
    host = (urlsplit(url).hostname or "") if "://" in url else url
    return host.startswith(LOCAL_HOSTS) or host in ("localhost", "::1")
