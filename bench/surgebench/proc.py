"""Child processes with rusage, pinned cores, and CPU accounting from /proc."""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import os
import resource
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def raise_nofile() -> tuple[int, int]:
    """raise_nofile lifts this process's soft RLIMIT_NOFILE to its hard limit and returns both."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        soft = hard
    return soft, hard


_PR_SET_PDEATHSIG = 1
try:
    _LIBC = ctypes.CDLL(None, use_errno=True)
except OSError:  # pragma: no cover - no libc symbol table: children just lack the safety net
    _LIBC = None


def child_setup(cpus: set[int] | None, realtime_priority: int | None = None):
    """child_setup returns a preexec_fn that pins the child, raises its fd limit, and asks the
    kernel to SIGTERM it if the harness dies (so no server or generator outlives a killed run);
    with realtime_priority, the child (and every thread it starts) runs SCHED_FIFO at it."""

    def setup() -> None:
        if _LIBC is not None:
            _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        if cpus:
            os.sched_setaffinity(0, cpus)
        if realtime_priority is not None:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(realtime_priority))
        raise_nofile()

    return setup


def set_realtime(pid: int, priority: int | None) -> None:
    """set_realtime puts every thread of process `pid` in SCHED_FIFO at `priority`, or back in
    SCHED_OTHER with None."""
    policy, param = (
        (os.SCHED_OTHER, os.sched_param(0)) if priority is None else (os.SCHED_FIFO, os.sched_param(priority))
    )
    for task in Path(f"/proc/{pid}/task").iterdir():
        os.sched_setscheduler(int(task.name), policy, param)


def realtime_why_not() -> str | None:
    """realtime_why_not is why SCHED_FIFO cannot be used here (not root, or no RT time), or None."""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    except (PermissionError, OSError) as e:
        return f"SCHED_FIFO refused ({e.strerror or e})"
    return None


@dataclasses.dataclass
class RunResult:
    """RunResult is one finished child: exit status, output, wall time and wait4 rusage."""

    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    wall_s: float
    user_s: float
    sys_s: float
    maxrss_kb: int
    timed_out: bool

    @property
    def cpu_s(self) -> float:
        """cpu_s is user + system CPU seconds of the child (ru_utime + ru_stime)."""
        return self.user_s + self.sys_s

    @property
    def maxrss_mb(self) -> float:
        """maxrss_mb is the peak resident set size in MB (ru_maxrss is in KiB on Linux)."""
        return self.maxrss_kb / 1024.0


def run_measured(
    argv: list[str],
    cpus: set[int] | None,
    timeout_s: float,
    stdin_bytes: bytes | None = None,
    realtime_priority: int | None = None,
) -> RunResult:
    """run_measured runs argv pinned to cpus, reaps it with os.wait4 and returns its rusage.

    Output goes to temporary files (a large JSON document never blocks on a pipe); so does
    stdin_bytes, when given (otherwise stdin is /dev/null). The child gets its own session;
    past timeout_s its process group is killed and timed_out is set.
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as inp:
        if stdin_bytes is not None:
            inp.write(stdin_bytes)
            inp.seek(0)
        start = time.monotonic()
        proc = subprocess.Popen(
            argv,
            stdin=inp if stdin_bytes is not None else subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            preexec_fn=child_setup(cpus, realtime_priority),
            start_new_session=True,
        )
        timed_out = threading.Event()

        def kill() -> None:
            timed_out.set()
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)

        timer = threading.Timer(timeout_s, kill)
        timer.daemon = True
        timer.start()
        try:
            _, status, ru = os.wait4(proc.pid, 0)
        except BaseException:
            kill()
            os.wait4(proc.pid, 0)
            raise
        finally:
            timer.cancel()
        wall = time.monotonic() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return RunResult(
            argv=list(argv),
            returncode=proc.returncode,
            stdout=out.read().decode("utf-8", "replace"),
            stderr=err.read().decode("utf-8", "replace"),
            wall_s=wall,
            user_s=ru.ru_utime,
            sys_s=ru.ru_stime,
            maxrss_kb=ru.ru_maxrss,
            timed_out=timed_out.is_set(),
        )


def process_cpu_s(pid: int) -> float | None:
    """process_cpu_s is utime + stime of a live process from /proc/PID/stat, or None if gone."""
    try:
        data = Path(f"/proc/{pid}/stat").read_bytes().decode()
    except OSError:
        return None
    fields = data[data.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def children_of(pid: int) -> list[int]:
    """children_of lists the pids whose parent is pid (scanning /proc)."""
    kids = []
    for entry in Path("/proc").iterdir():
        name = entry.name
        if not name.isdigit():
            continue
        try:
            data = (entry / "stat").read_bytes().decode()
        except OSError:
            continue
        if int(data[data.rindex(")") + 2 :].split()[1]) == pid:
            kids.append(int(name))
    return kids


def cpu_busy_s(cpus: list[int]) -> dict[int, float]:
    """cpu_busy_s is the busy (non-idle, non-iowait) seconds of each listed core so far."""
    busy = {}
    with Path("/proc/stat").open() as f:
        for line in f:
            if not line.startswith("cpu") or line.startswith("cpu "):
                continue
            name, *vals = line.split()
            core = int(name[3:])
            if core in cpus:
                v = [int(x) for x in vals]
                # user nice system idle iowait irq softirq steal (guest is inside user)
                busy[core] = (sum(v[:8]) - v[3] - v[4]) / CLOCK_TICKS
    return busy


def loadavg() -> str:
    """loadavg is the first three fields of /proc/loadavg."""
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def wait_quiet(cpus: list[int], threshold: float, max_wait_s: float) -> float:
    """wait_quiet waits (up to max_wait_s) for a 1 s window in which every listed core is
    less than threshold busy, and returns the busiest core's share in the last window."""
    deadline = time.monotonic() + max_wait_s
    while True:
        before = cpu_busy_s(cpus)
        time.sleep(1.0)
        after = cpu_busy_s(cpus)
        load = max(after[c] - before[c] for c in before) if before else 0.0
        if load < threshold or time.monotonic() >= deadline:
            return load
