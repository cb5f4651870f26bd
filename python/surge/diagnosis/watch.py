"""TargetWatch: the target's process (``--watch-pid PID``, or the reference target surge
started) sampled every second with psutil on a background thread: CPU (cores-equivalent), RSS,
threads and open file descriptors, the process and its descendants together (a server's work
is often done in child processes: gunicorn, Apache prefork, nginx workers)."""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

import psutil  # type: ignore[import-untyped]

from surge.core.errors import BadInput
from surge.core.redact import redact_text
from surge.diagnosis.machine import MachineReading, busy_cores, machine_reading, stolen_share

SAMPLE_INTERVAL_S = 1.0
"""SAMPLE_INTERVAL_S is how often the target is sampled."""

Sample = dict[str, Any]
"""Sample is one reading: ``unix_s`` (when taken), ``cpu_cores`` (CPU seconds used since the
previous reading over the wall seconds between them, 1.0 = one core busy; None for the first),
``rss_bytes``, ``threads``, ``open_files`` (file descriptors, sockets included), ``thread_cores_max``
(the busiest single thread's CPU over the same span, 1.0 = a thread using a whole core; None
for the first reading or where threads cannot be read), ``machine_cpu_cores`` (the whole
machine's busy cores over the same span) and ``machine_steal_share`` (the share of each core's
time over the span that the hypervisor gave another guest: a thread's ceiling is 1 − this)."""


class TargetWatch:
    """TargetWatch samples process ``pid`` (with its descendants when ``children``) every
    ``interval_s`` from ``start`` until ``stop`` or until the process ends (``exited_unix_s``
    then says when; the samples so far are kept)."""

    def __init__(
        self, pid: int, *, flag: str = "--watch-pid", children: bool = True, interval_s: float = SAMPLE_INTERVAL_S
    ) -> None:
        """__init__ checks that ``pid`` exists and can be read, else raises BadInput naming
        ``flag``; nothing is sampled before ``start``."""
        self.pid = pid
        self.flag = flag
        self.children = children
        self.interval_s = interval_s
        try:
            self._process = psutil.Process(pid)
            if self._process.status() == psutil.STATUS_ZOMBIE:
                raise psutil.ZombieProcess(pid)
            with self._process.oneshot():
                self.name = redact_text(self._process.name())
                self._process.cpu_times()
                self._process.memory_info()
                self._process.num_threads()
                _open_files(self._process)
            self.cores = _cores(self._process)
        except psutil.ZombieProcess:
            raise BadInput(flag, f"process {pid} has exited") from None
        except psutil.NoSuchProcess:
            raise BadInput(flag, f"no process {pid}") from None
        except psutil.AccessDenied:
            raise BadInput(flag, f"cannot read process {pid} (permission denied): run surge as its user") from None
        self.exited_unix_s: float | None = None
        self._samples: list[Sample] = []
        self._cpu: dict[int, float] = {}
        self._thread_cpu: dict[tuple[int, int], float] = {}
        self._machine: MachineReading | None = None
        self._last_unix_s: float | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> TargetWatch:
        """start takes the first reading and starts sampling on a daemon thread."""
        self._sample()
        self._thread = threading.Thread(target=self._loop, name="surge-watch-target", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """stop takes a last reading (if the process still runs) and ends the sampling thread."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
            if self.exited_unix_s is None:
                self._sample()

    def __enter__(self) -> TargetWatch:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    def samples(self) -> list[Sample]:
        """samples are the readings so far, oldest first."""
        with self._lock:
            return list(self._samples)

    def latest(self) -> Sample | None:
        """latest is the newest reading with a CPU figure, or None before the second one."""
        with self._lock:
            return self._samples[-1] if len(self._samples) > 1 else None

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            if not self._sample():
                return

    def _sample(self) -> bool:
        """_sample takes one reading; False (and ``exited_unix_s`` set) when the process is gone."""
        now = time.time()
        try:
            if self._process.status() == psutil.STATUS_ZOMBIE:  # ended, not yet reaped by its parent
                raise psutil.ZombieProcess(self.pid)
            processes = [self._process]
            if self.children:
                processes += self._process.children(recursive=True)
            cpu: dict[int, float] = {}
            thread_cpu: dict[tuple[int, int], float] = {}
            rss = threads = files = 0
            for process in processes:
                try:
                    with process.oneshot():
                        times = process.cpu_times()
                        cpu[process.pid] = times.user + times.system
                        rss += process.memory_info().rss
                        threads += process.num_threads()
                        files += _open_files(process)
                        thread_cpu.update(_thread_times(process))
                except (psutil.NoSuchProcess, psutil.AccessDenied):
                    if process is self._process:
                        raise
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            self.exited_unix_s = now
            return False
        machine = machine_reading()
        cores = busiest = machine_cores = steal = None
        if self._last_unix_s is not None and now > self._last_unix_s:
            # A process (or thread) new since the last reading counts from zero; one gone drops out.
            span = now - self._last_unix_s
            used = sum(max(c - self._cpu.get(pid, 0.0), 0.0) for pid, c in cpu.items())
            cores = used / span
            if thread_cpu:
                busiest = max(max(c - self._thread_cpu.get(tid, 0.0), 0.0) for tid, c in thread_cpu.items()) / span
            if machine is not None and self._machine is not None:
                machine_cores = busy_cores(self._machine, machine)
                steal = stolen_share(self._machine, machine)
        self._cpu, self._thread_cpu, self._machine, self._last_unix_s = cpu, thread_cpu, machine, now
        with self._lock:
            self._samples.append(
                {
                    "unix_s": now,
                    "cpu_cores": cores,
                    "rss_bytes": rss,
                    "threads": threads,
                    "open_files": files,
                    "thread_cores_max": busiest,
                    "machine_cpu_cores": machine_cores,
                    "machine_steal_share": steal,
                }
            )
        return True

    def warning(self, run_started_unix_s: float | None) -> str | None:
        """warning is the line to print when the process ended before the run did, else None."""
        if self.exited_unix_s is None:
            return None
        at = f" {self.exited_unix_s - run_started_unix_s:.1f} s into the run" if run_started_unix_s else ""
        return (
            f"surge: warning: {self.flag} {self.pid}: the process ended{at}; its {len(self._samples)} samples so "
            "far are kept"
        )

    def document(self, run_started_unix_s: float | None) -> dict[str, Any]:
        """document is summary.json's ``target_process``: what was watched, the samples (``t_s``:
        seconds since the measured run started) and their summary (docs/diagnosis.md)."""
        base = run_started_unix_s or (self._samples[0]["unix_s"] if self._samples else 0.0)
        samples = [
            {"t_s": round(s["unix_s"] - base, 3), **{k: v for k, v in s.items() if k != "unix_s"}}
            for s in self.samples()
        ]
        return {
            "pid": self.pid,
            "name": self.name,
            "children_included": self.children,
            "interval_s": self.interval_s,
            "cores": self.cores,
            "exited_at_s": None if self.exited_unix_s is None else round(self.exited_unix_s - base, 3),
            **samples_summary(samples),
            "samples": samples,
        }


def samples_summary(samples: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """samples_summary is the samples' mean and max CPU (cores, and percent of one core), mean
    and max RSS, and max threads and open files; None where there is no sample."""
    cpu = [float(s["cpu_cores"]) for s in samples if s.get("cpu_cores") is not None]
    rss = [int(s["rss_bytes"]) for s in samples]

    def most(key: str) -> int | None:
        return max((int(s[key]) for s in samples), default=None)

    return {
        "sample_count": len(samples),
        "cpu_cores_mean": statistics.fmean(cpu) if cpu else None,
        "cpu_cores_max": max(cpu, default=None),
        "cpu_percent_mean": statistics.fmean(cpu) * 100 if cpu else None,
        "cpu_percent_max": max(cpu) * 100 if cpu else None,
        "rss_bytes_mean": statistics.fmean(rss) if rss else None,
        "rss_bytes_max": most("rss_bytes"),
        "threads_max": most("threads"),
        "open_files_max": most("open_files"),
    }


def _thread_times(process: psutil.Process) -> dict[tuple[int, int], float]:
    """_thread_times is each thread's CPU seconds (user + system) by (pid, thread id); empty where
    the platform does not tell them."""
    try:
        return {(process.pid, t.id): t.user_time + t.system_time for t in process.threads()}
    except (AttributeError, NotImplementedError, psutil.AccessDenied):
        return {}


def _open_files(process: psutil.Process) -> int:
    """_open_files is the process's open file descriptors (handles on Windows)."""
    return int(process.num_fds() if hasattr(process, "num_fds") else process.num_handles())


def _cores(process: psutil.Process) -> int:
    """_cores is how many CPUs the process may run on (its affinity), else the machine's."""
    try:
        return len(process.cpu_affinity())
    except (AttributeError, psutil.Error):
        return int(psutil.cpu_count() or 1)
