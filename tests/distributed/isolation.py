"""isolation: the host's means of keeping a test's processes apart, as LoopbackCluster
(tests/distributed/cluster.py) uses them: cgroups with a CPU quota (v1's cpu controller, or v2's),
network namespaces (their processes, a thread inside one), and what /proc says of a process."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

PERIOD_US = 100_000
"""PERIOD_US is the CFS period (µs) of a worker node's CPU quota: its quota is a share of it."""

T = TypeVar("T")


class ClusterError(RuntimeError):
    """ClusterError says which step of a cluster's start or teardown failed, with Ray's own words."""


# --- cgroups (v1 cpu controller, or v2 with the cpu controller) ---------------------------------


def cgroup_cpu_root() -> tuple[int, Path]:
    """cgroup_cpu_root is the version (1 or 2) and mount point of the hierarchy the cpu controller
    is in: a v1 ``cgroup`` mount with the ``cpu`` option, else a ``cgroup2`` mount listing ``cpu``
    in cgroup.controllers. Raises ClusterError when neither is mounted."""
    v2: Path | None = None
    for line in Path("/proc/self/mounts").read_text().splitlines():
        _, where, kind, options, *_ = line.split()
        if kind == "cgroup" and "cpu" in options.split(","):
            return 1, Path(where)
        if kind == "cgroup2" and "cpu" in (Path(where) / "cgroup.controllers").read_text().split():
            v2 = Path(where)
    if v2 is not None:
        return 2, v2
    raise ClusterError("no cgroup hierarchy with the cpu controller is mounted (v1 cpu or v2 cgroup.controllers)")


def make_cgroup(name: str) -> Path:
    """make_cgroup creates the cgroup ``name`` at the root of the cpu hierarchy, with no limit
    (``limit_cgroup`` sets one), and returns its directory. On v2 it enables the cpu controller
    for the root's children first (``+cpu`` in cgroup.subtree_control)."""
    version, root = cgroup_cpu_root()
    if version == 2:
        control = root / "cgroup.subtree_control"
        try:
            if "cpu" not in control.read_text().split():
                control.write_text("+cpu")
        except OSError as e:  # EBUSY: a container's cgroup root holding processes itself
            raise ClusterError(f"cannot enable the cpu controller in {control}: {e}") from e
    path = root / name
    try:
        path.mkdir()
    except OSError as e:
        raise ClusterError(f"cannot make the cgroup {path}: {e}") from e
    return path


def limit_cgroup(path: Path, quota: float) -> None:
    """limit_cgroup lets the processes of cgroup ``path`` use ``quota`` cores (0.25: a quarter of
    one), as CFS bandwidth: v1 cpu.cfs_period_us and cpu.cfs_quota_us, v2 cpu.max."""
    quota_us = max(1000, round(quota * PERIOD_US))
    if (path / "cpu.max").exists():
        (path / "cpu.max").write_text(f"{quota_us} {PERIOD_US}")
    else:
        (path / "cpu.cfs_period_us").write_text(str(PERIOD_US))
        (path / "cpu.cfs_quota_us").write_text(str(quota_us))


def cgroup_pids(path: Path) -> list[int]:
    """cgroup_pids are the processes in cgroup ``path`` (none once it is removed)."""
    try:
        return [int(p) for p in (path / "cgroup.procs").read_text().split()]
    except FileNotFoundError:
        return []


def cgroup_throttled(path: Path) -> int:
    """cgroup_throttled is how many CFS periods cgroup ``path`` was throttled in (cpu.stat
    nr_throttled, in both versions): above 0 once its quota held it back."""
    for line in (path / "cpu.stat").read_text().splitlines():
        key, value = line.split()
        if key == "nr_throttled":
            return int(value)
    raise ClusterError(f"{path}/cpu.stat has no nr_throttled")


def kill_cgroup(path: Path) -> None:
    """kill_cgroup SIGKILLs the processes of cgroup ``path`` until none is left alive (a process
    forked meanwhile is in the cgroup too, and killed on the next pass)."""
    while left := [pid for pid in cgroup_pids(path) if running(pid)]:
        for pid in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)


def remove_cgroup(path: Path, timeout: float = 10.0) -> None:
    """remove_cgroup removes cgroup ``path`` once no process is left in it (it kills those left)."""
    deadline = time.monotonic() + timeout
    while path.exists():
        kill_cgroup(path)
        try:
            path.rmdir()
        except FileNotFoundError:
            return
        except OSError as e:  # EBUSY while a killed process is not yet gone
            if time.monotonic() > deadline:
                raise ClusterError(f"cgroup {path} still holds {cgroup_pids(path)}: {e}") from e
            time.sleep(0.05)


def join_cgroup(path: Path) -> None:
    """join_cgroup moves the calling process into cgroup ``path`` (a Popen preexec_fn: before the
    exec, so every process it forks is in the cgroup too)."""
    (path / "cgroup.procs").write_text(str(os.getpid()))


# --- network namespaces ------------------------------------------------------------------------


def netns_pids(netns: str) -> list[int]:
    """netns_pids are the processes in network namespace ``netns`` (none if it does not exist)."""
    done = subprocess.run(["ip", "netns", "pids", netns], capture_output=True, text=True, check=False)
    return [int(p) for p in done.stdout.split()] if done.returncode == 0 else []


def running(pid: int) -> bool:
    """running says whether ``pid`` is a process that has not exited (a zombie has)."""
    fields = proc_stat(pid)
    return bool(fields) and fields[0] not in ("Z", "X")


def kill_netns(netns: str, timeout: float = 10.0) -> list[int]:
    """kill_netns SIGKILLs every process in ``netns`` until none is left alive, and returns the
    pids it killed. Raises ClusterError if some survive ``timeout`` seconds."""
    killed: set[int] = set()
    deadline = time.monotonic() + timeout
    while True:
        left = [pid for pid in netns_pids(netns) if running(pid)]
        if not left:
            return sorted(killed)
        if time.monotonic() > deadline:
            raise ClusterError(f"processes {left} in namespace {netns} survived SIGKILL")
        for pid in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        killed.update(left)
        time.sleep(0.05)


def in_netns(netns: str, call: Callable[[], T]) -> T:
    """in_netns is ``call()`` run on a short-lived thread that has joined network namespace
    ``netns`` (setns changes the calling thread's namespace only): the sockets it opens are the
    namespace's, and reach what listens on its loopback."""
    done: list[T] = []
    failed: list[BaseException] = []

    def inside() -> None:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            with Path(f"/run/netns/{netns}").open() as f:
                if libc.setns(f.fileno(), 0x40000000) != 0:  # CLONE_NEWNET
                    raise OSError(ctypes.get_errno(), f"setns into {netns}")
            done.append(call())
        except BaseException as e:
            failed.append(e)

    thread = threading.Thread(target=inside)
    thread.start()
    thread.join()
    if failed:
        raise failed[0]
    return done[0]


# --- processes ---------------------------------------------------------------------------------


def proc_stat(pid: int) -> list[str]:
    """proc_stat is /proc/PID/stat's fields after the command name ([] once the process is gone)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return []


def proc_pgid(pid: int) -> int:
    """proc_pgid is the process group of ``pid`` (-1 once it is gone)."""
    fields = proc_stat(pid)
    return int(fields[2]) if fields else -1


def proc_ppid(pid: int) -> int:
    """proc_ppid is the parent of ``pid`` (-1 once it is gone)."""
    fields = proc_stat(pid)
    return int(fields[1]) if fields else -1


def proc_name(pid: int) -> str:
    """proc_name is the command name of ``pid`` ("" once it is gone)."""
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except (FileNotFoundError, ProcessLookupError):
        return ""


def proc_cmdline(pid: int) -> list[str]:
    """proc_cmdline is the argument list of ``pid`` ([] once it is gone)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except (FileNotFoundError, ProcessLookupError):
        return []


def cpu_seconds(pid: int) -> float:
    """cpu_seconds is the CPU time (user + system, seconds) process ``pid`` has used so far."""
    fields = proc_stat(pid)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
