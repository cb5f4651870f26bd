"""LoopbackCluster: a Ray cluster (a head and N worker nodes) on loopback only, inside a network
namespace of its own, each worker node in a cgroup of its own, optionally with a CPU quota: the distributed
tests' stand-in for a fleet of machines (docs/distributed.md, "Testing on one machine").

    with LoopbackCluster(workers=2, cpu_quota=0.5) as cluster:
        cluster.run([sys.executable, "-c", "import ray; ray.init(address='auto')"], check=True)
        with cluster.target() as target:     # a reference target inside the namespace
            ...
        cluster.wait_dead(0, since=cluster.kill_node(0))

Ray binds to the machine's interfaces and probes 8.8.8.8 at start: every Ray process here runs
under ``ip netns exec NS`` in a namespace holding only ``lo``. Each namespace has its own
loopback, so Ray's default ports (6379, 8265, 52365...) never meet the host's nor another
cluster's. Needs root, ``ip`` and Ray's CLI beside ``sys.executable``.

Teardown kills every process in the namespace by pid (never ``ray stop``: it kills every Ray
process on the host, whatever its namespace), removes the cgroups, the namespace and Ray's temp
dir; it runs on leaving the ``with`` block, at interpreter exit, and for the leftovers of a test
process that was killed (``sweep_stale``, when the next cluster starts).
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from isolation import (
    ClusterError,
    cgroup_cpu_root,
    cgroup_pids,
    in_netns,
    join_cgroup,
    kill_cgroup,
    kill_netns,
    limit_cgroup,
    make_cgroup,
    netns_pids,
    proc_cmdline,
    proc_name,
    proc_pgid,
    proc_ppid,
    remove_cgroup,
    running,
)
from surge.engine.target import TargetProcess

RAY = Path(sys.executable).parent / "ray"
"""RAY is Ray's CLI, installed beside the interpreter running the tests."""

PREFIX = "surge-ray"
"""PREFIX starts the name of every namespace and cgroup a cluster makes: ``surge-ray-PID-N``."""

NAME = re.compile(rf"^{PREFIX}-(\d+)-\d+")
"""NAME matches a cluster's namespace or cgroup name; its group 1 is the pid of the test process that made it."""

FAST_HEALTH_CHECK = {
    "RAY_health_check_period_ms": "500",
    "RAY_health_check_timeout_ms": "500",
    "RAY_health_check_failure_threshold": "3",
}
"""FAST_HEALTH_CHECK makes the head's GCS mark a lost node dead in about 1.5 s (0.5 s period, 3
missed checks) instead of Ray's default of about 14 s (3 s period, 5 missed checks): a
LoopbackCluster's ``env`` for a test about Ray's own node death. A generator's loss must not
wait for either (an actor call on a killed node fails in about 1.6 s)."""

START_TIMEOUT = 60.0
"""START_TIMEOUT bounds (seconds) the wait for every node of a new cluster to be alive."""

_serial = itertools.count()

# The probe run inside the namespace: polls ray.nodes() every 0.1 s until `alive` nodes are
# alive and every node of `dead` (raylet socket names) is dead, or `timeout` passes; prints one
# line "answer" and JSON {"ok", "seen_at", "nodes"}, among what Ray prints to stdout itself (a
# node's death notice). With "ready", prints "ready" once connected, first.
_PROBE = """
import json, logging, sys, time
import ray
want = json.loads(sys.argv[1])
ray.init(address=want["address"], logging_level=logging.ERROR, log_to_driver=False)
if want.get("ready"):
    print("ready", flush=True)
deadline = time.monotonic() + want["timeout"]
while True:
    nodes = [
        {"node_id": n["NodeID"], "alive": n["Alive"], "raylet_socket": n["RayletSocketName"],
         "cpus": n["Resources"].get("CPU", 0), "death": n.get("DeathReasonMessage", "")}
        for n in ray.nodes()
    ]
    seen_at = time.time()
    alive = sum(n["alive"] for n in nodes)
    dead = {n["raylet_socket"] for n in nodes if not n["alive"]}
    ok = alive >= want.get("alive", 0) and set(want.get("dead", [])) <= dead
    if ok or time.monotonic() > deadline:
        print("answer", json.dumps({"ok": ok, "seen_at": seen_at, "nodes": nodes}), flush=True)
        break
    time.sleep(0.1)
ray.shutdown()
"""


@dataclass
class Node:
    """Node is one ``ray start`` of a cluster: the process group it leads (which the node's
    raylet, log monitor and agents keep; the workers the raylet forks each make their own), its
    raylet, its cgroup (None for the head, or where no cpu hierarchy can be had) and its Ray node id."""

    index: int
    pgid: int
    raylet_pid: int
    raylet_socket: str
    cgroup: Path | None = None
    node_id: str = ""


def sweep_stale() -> list[str]:
    """sweep_stale removes the namespaces, temp dirs and cgroups a cluster left behind when the
    test process that made it died without its teardown (its pid, in the name, runs no more),
    and returns the names of the namespaces and cgroups."""
    swept = []
    done = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False)
    for name in [line.split()[0] for line in done.stdout.splitlines() if line.strip()]:
        match = NAME.match(name)
        if match and not running(int(match.group(1))):
            temp_dirs = {
                a.split("=", 1)[1] for p in netns_pids(name) for a in proc_cmdline(p) if a.startswith("--temp-dir=")
            }
            kill_netns(name)
            subprocess.run(["ip", "netns", "del", name], check=False, capture_output=True)
            for temp_dir in temp_dirs:
                if Path(temp_dir).parent == Path("/tmp"):
                    shutil.rmtree(temp_dir, ignore_errors=True)
            swept.append(name)
    with contextlib.suppress(ClusterError):
        _, root = cgroup_cpu_root()
        for path in root.glob(f"{PREFIX}-*"):
            match = NAME.match(path.name)
            if match and not running(int(match.group(1))):
                remove_cgroup(path)
                swept.append(path.name)
    return swept


class NetnsTarget(TargetProcess):
    """NetnsTarget is a reference target (``surge target``) running inside a network namespace,
    which the test process still reaches: its requests (``/health``, ``stats``, ``received``)
    are sent from a thread inside that namespace."""

    def __init__(self, netns: str, *args: str, **flags: Any) -> None:
        super().__init__(*args, **flags)
        self.netns = netns
        self.argv = ["ip", "netns", "exec", netns, *self.argv]

    def request(self, method: str, path: str, body: Any = None, timeout: float = 10.0) -> tuple[int, str]:
        """request sends one request to the target from inside its namespace (see TargetProcess.request)."""
        return in_netns(self.netns, lambda: super(NetnsTarget, self).request(method, path, body, timeout))


class LoopbackCluster:
    """LoopbackCluster is a Ray head and ``workers`` worker nodes in a fresh network namespace
    holding only loopback, every node at 127.0.0.1 with ``num_cpus`` CPUs (the head
    ``head_cpus``, by default as many: 0 keeps Ray's tasks and actors off it, so that N
    CPU-limited generators need ``workers=N, head_cpus=0``). Each worker node is in a cgroup of
    its own (so that killing a node kills all it forked); with ``cpu_quota`` that cgroup holds
    the node (its raylet and every worker it forks) to that many cores. ``env`` adds variables
    to every process started inside (``RAY_...`` settings: FAST_HEALTH_CHECK).

    Entering it returns once Ray sees all ``workers + 1`` nodes alive (ClusterError with Ray's
    output after START_TIMEOUT seconds); leaving it (or interpreter exit) leaves no process,
    namespace, cgroup nor temp dir behind."""

    def __init__(
        self,
        workers: int = 2,
        *,
        num_cpus: int = 1,
        head_cpus: int | None = None,
        cpu_quota: float | None = None,
        port: int = 6379,
        env: dict[str, str] | None = None,
        start_timeout: float = START_TIMEOUT,
    ) -> None:
        if cpu_quota is not None and cpu_quota <= 0:
            raise ClusterError(f"cpu_quota is the cores a worker node may use: above 0, not {cpu_quota}")
        self.workers = workers
        self.num_cpus = num_cpus
        self.head_cpus = num_cpus if head_cpus is None else head_cpus
        self.cpu_quota = cpu_quota
        self.port = port
        self.env = {**os.environ, **(env or {})}
        self.start_timeout = start_timeout
        self.netns = f"{PREFIX}-{os.getpid()}-{next(_serial)}"
        self.temp_dir: Path | None = None
        self.head: Node | None = None
        self.nodes: list[Node] = []  # the worker nodes, in start order
        self.start_seconds = 0.0
        self._cgroups: list[Path] = []
        self._up = False

    @property
    def address(self) -> str:
        """address is the head's GCS address inside the namespace, ``127.0.0.1:PORT``
        (``ray.init(address=...)``, ``ray start --address=...``, ``surge run --ray ...``)."""
        return f"127.0.0.1:{self.port}"

    # -- running things inside --

    def command(self, argv: list[str]) -> list[str]:
        """command is ``argv`` run inside the cluster's namespace (``ip netns exec NS ...``)."""
        return ["ip", "netns", "exec", self.netns, *argv]

    def popen(self, argv: list[str], *, node: int | None = None, **popen_kw: Any) -> subprocess.Popen[Any]:
        """popen starts ``argv`` inside the namespace (the environment passes through: PYTHONPATH,
        SURGE_DB...), and with ``node`` inside worker node ``node``'s cgroup, under its CPU quota."""
        return subprocess.Popen(self.command(argv), **self._inside(node, popen_kw))

    def run(self, argv: list[str], *, node: int | None = None, **run_kw: Any) -> subprocess.CompletedProcess[Any]:
        """run runs ``argv`` inside the namespace (as ``popen``) and waits for it (subprocess.run's arguments)."""
        return subprocess.run(self.command(argv), **self._inside(node, run_kw))

    def _inside(self, node: int | None, kw: dict[str, Any]) -> dict[str, Any]:
        """_inside is the subprocess arguments ``kw`` with the cluster's environment (unless
        ``env`` is given) and, for ``node``, a preexec_fn joining that worker node's cgroup."""
        kw.setdefault("env", self.env)
        if node is not None:
            cgroup = self.nodes[node].cgroup
            if cgroup is None:
                raise ClusterError(f"worker node {node} has no cgroup (no cpu controller is mounted)")
            kw["preexec_fn"] = lambda: join_cgroup(cgroup)
        return kw

    def target(self, *args: str, **flags: Any) -> NetnsTarget:
        """target is a reference target to start inside the namespace (``with cluster.target(...)
        as t``), flags as TargetProcess takes them; the test reaches it through t.request/t.stats."""
        return NetnsTarget(self.netns, *args, **flags)

    # -- what Ray sees --

    def probe(self, *, alive: int = 0, dead: list[str] | None = None, timeout: float = 0.0) -> dict[str, Any]:
        """probe asks Ray (a driver run inside the namespace) for its nodes, polling every 0.1 s
        until ``alive`` are alive and the raylets ``dead`` are dead, or ``timeout`` seconds pass:
        {"ok", "seen_at" (time.time() of the answer), "nodes": [{node_id, alive, raylet_socket, cpus, death}]}."""
        return self._answer(self._probe(alive=alive, dead=dead or [], timeout=timeout), timeout)

    def _probe(self, **want: Any) -> subprocess.Popen[str]:
        """_probe starts the probe (see _PROBE) for ``want`` (alive, dead, timeout, ready)."""
        argv = [sys.executable, "-c", _PROBE, json.dumps({"address": self.address, **want})]
        return self.popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def _answer(self, proc: subprocess.Popen[str], timeout: float) -> dict[str, Any]:
        """_answer is the probe's JSON answer, once it has exited (ClusterError if it failed)."""
        try:
            out, err = proc.communicate(timeout=timeout + 60)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        answers = [line.removeprefix("answer ") for line in out.splitlines() if line.startswith("answer ")]
        if proc.returncode != 0 or not answers:
            raise ClusterError(f"the Ray probe failed (exit {proc.returncode}): {(out + err)[-1500:]}")
        answer: dict[str, Any] = json.loads(answers[-1])
        return answer

    def alive_nodes(self) -> list[str]:
        """alive_nodes are the node ids Ray sees alive now."""
        return [n["node_id"] for n in self.probe()["nodes"] if n["alive"]]

    def node_pids(self) -> list[int]:
        """node_pids are the raylet pids of the worker nodes, in order (``kill_node(i)`` kills the i-th)."""
        return [n.raylet_pid for n in self.nodes]

    def node_processes(self, i: int) -> list[int]:
        """node_processes are the live processes of worker node ``i``: its raylet, log monitor and
        agents, and the workers the raylet forks (each in a process group of its own), as its
        cgroup lists them (``group_processes`` without one)."""
        cgroup = self.nodes[i].cgroup
        if cgroup is None:
            return self.group_processes(i)
        return sorted(pid for pid in cgroup_pids(cgroup) if running(pid))

    def group_processes(self, i: int) -> list[int]:
        """group_processes are the live processes of worker node ``i`` found without its cgroup:
        its ``ray start`` process group and their descendants."""
        parents = {pid: proc_ppid(pid) for pid in self._all_pids() if running(pid)}
        found = {pid for pid in parents if proc_pgid(pid) == self.nodes[i].pgid}
        while grown := {pid for pid, parent in parents.items() if parent in found} - found:
            found |= grown
        return sorted(found)

    def kill_node(self, i: int) -> float:
        """kill_node SIGKILLs every process of worker node ``i`` (as a machine losing power: the
        raylet first, so that it forks no more, then the rest) and returns the instant
        (time.time()) the raylet died."""
        node = self.nodes[i]
        if node.cgroup is None:  # freeze the group, so that the raylet's descendants stay its own
            with contextlib.suppress(ProcessLookupError):
                os.killpg(node.pgid, signal.SIGSTOP)
            doomed = self.group_processes(i)
        with contextlib.suppress(ProcessLookupError):
            os.kill(node.raylet_pid, signal.SIGKILL)
        at = time.time()
        if node.cgroup is not None:
            kill_cgroup(node.cgroup)
        else:
            for pid in doomed:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        return at

    def wait_dead(self, i: int, *, since: float, timeout: float = 60.0) -> float:
        """wait_dead waits until Ray marks worker node ``i`` dead and returns the seconds from
        ``since`` (kill_node's instant) to the first poll that saw it dead; ClusterError after
        ``timeout``. The probe takes about a second to connect: a death within that second after
        ``since`` is reported late (``kill_node_timed`` connects first)."""
        return self._seen_dead(i, self._probe(dead=[self.nodes[i].raylet_socket], timeout=timeout), since, timeout)

    def kill_node_timed(self, i: int, *, timeout: float = 60.0) -> float:
        """kill_node_timed kills worker node ``i`` (kill_node) once a probe is connected to Ray,
        and returns the seconds until Ray marks it dead (to the probe's 0.1 s poll)."""
        proc = self._probe(dead=[self.nodes[i].raylet_socket], timeout=timeout, ready=True)
        assert proc.stdout is not None
        said = []  # what Ray printed before (a warning under load)
        while (line := proc.stdout.readline()) and line.strip() != "ready":
            said.append(line)
        if not line:
            proc.wait()
            raise ClusterError(
                f"the Ray probe ended before it connected (exit {proc.returncode}): {''.join(said)[-1500:]}"
            )
        return self._seen_dead(i, proc, self.kill_node(i), timeout)

    def _seen_dead(self, i: int, proc: subprocess.Popen[str], since: float, timeout: float) -> float:
        """_seen_dead is the seconds from ``since`` to the probe ``proc`` seeing node ``i`` dead."""
        answer = self._answer(proc, timeout)
        if not answer["ok"]:
            node = self.nodes[i]
            raise ClusterError(f"Ray still sees worker node {i} ({node.node_id}) alive {timeout:.0f} s after its kill")
        return float(answer["seen_at"]) - since

    # -- start and teardown --

    def __enter__(self) -> LoopbackCluster:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        """start makes the namespace, starts the head then each worker node (in its cgroup when
        ``cpu_quota`` is set), waits until Ray sees them all alive, then applies the CPU quotas
        (after: a node's start-up is not slowed by its quota)."""
        if not RAY.exists():
            raise ClusterError(f"Ray's CLI is not at {RAY}: pip install ray==2.60.0")
        sweep_stale()
        atexit.register(self.stop)
        began = time.monotonic()
        subprocess.run(["ip", "netns", "add", self.netns], check=True, capture_output=True)
        self._up = True
        subprocess.run(self.command(["ip", "link", "set", "lo", "up"]), check=True, capture_output=True)
        self.temp_dir = Path(tempfile.mkdtemp(prefix="sr", dir="/tmp"))  # unix sockets: paths under 107 chars
        common = ["--node-ip-address=127.0.0.1", "--disable-usage-stats"]
        head = ["--head", f"--port={self.port}", "--include-dashboard=false", f"--temp-dir={self.temp_dir}"]
        self.head = self._start_node(-1, [*head, f"--num-cpus={self.head_cpus}", *common])
        for i in range(self.workers):
            self.nodes.append(
                self._start_node(i, [f"--address={self.address}", f"--num-cpus={self.num_cpus}", *common])
            )
        answer = self.probe(alive=self.workers + 1, timeout=max(1.0, self.start_timeout - (time.monotonic() - began)))
        if not answer["ok"]:
            raise ClusterError(
                f"Ray saw {sum(n['alive'] for n in answer['nodes'])} of {self.workers + 1} nodes alive "
                f"after {self.start_timeout:.0f} s (namespace {self.netns}){self._errors_logged()}"
            )
        by_socket = {n["raylet_socket"]: n["node_id"] for n in answer["nodes"] if n["alive"]}
        for node in [self.head, *self.nodes]:
            node.node_id = by_socket.get(node.raylet_socket, "")
        for node in self.nodes:
            if node.cgroup is not None and self.cpu_quota is not None:
                limit_cgroup(node.cgroup, self.cpu_quota)
        self.start_seconds = time.monotonic() - began

    def _start_node(self, i: int, flags: list[str]) -> Node:
        """_start_node runs ``ray start FLAGS`` (worker node ``i``; -1: the head) in a new session,
        so that the node's processes share a process group, and in its cgroup when the cluster
        has a CPU quota; returns the node once the CLI has exited (the daemons it leaves run on)."""
        before = set(self._all_pids())
        cgroup = None
        if i >= 0:
            try:
                cgroup = make_cgroup(f"{self.netns}-w{i}")
                self._cgroups.append(cgroup)
            except ClusterError:
                if self.cpu_quota is not None:
                    raise
                # no cpu hierarchy to join (a v2 container's): the node is its process group
        proc = subprocess.Popen(
            self.command([str(RAY), "start", *flags]),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=self.env,
            start_new_session=True,
            preexec_fn=None if cgroup is None else (lambda: join_cgroup(cgroup)),
        )
        try:
            output, _ = proc.communicate(timeout=self.start_timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            output, _ = proc.communicate()
            raise ClusterError(
                f"ray start ({'head' if i < 0 else f'worker {i}'}) hung: {output[-1500:]}{self._errors_logged()}"
            ) from None
        if proc.returncode != 0:
            raise ClusterError(
                f"ray start ({'head' if i < 0 else f'worker {i}'}) exit {proc.returncode}: {output[-1500:]}"
                f"{self._errors_logged()}"
            )
        raylets = [p for p in set(self._all_pids()) - before if proc_pgid(p) == proc.pid and proc_name(p) == "raylet"]
        if len(raylets) != 1:
            raise ClusterError(
                f"ray start ({'head' if i < 0 else f'worker {i}'}) left {len(raylets)} raylets: {output[-1500:]}"
            )
        socket_flag = next(a for a in proc_cmdline(raylets[0]) if a.startswith("--raylet_socket_name="))
        return Node(i, proc.pid, raylets[0], socket_flag.split("=", 1)[1], cgroup)

    def _errors_logged(self) -> str:
        """_errors_logged is the last error lines Ray's node processes logged in this cluster's
        session ("" if none): why a node died (its raylet fate-shares with its agents), which
        ``ray start`` only reports as a time-out, and which the temp dir's removal would lose."""
        logs = self.temp_dir / "session_latest" / "logs" if self.temp_dir is not None else None
        if logs is None or not logs.is_dir():
            return ""
        found = []
        for path in sorted(logs.glob("*.out")) + sorted(logs.glob("*.log")) + sorted(logs.glob("*.err")):
            lines = path.read_text(errors="replace").splitlines()
            errors = [line for line in lines if " E " in line[:40] or " C " in line[:40] or "Error" in line]
            if errors:
                found.append(f"{path.name}: " + " | ".join(line[:300] for line in errors[-3:]))
        return "\nlogged errors:\n" + "\n".join(found) if found else ""

    def _all_pids(self) -> list[int]:
        return netns_pids(self.netns) if self._up else []

    def stop(self) -> None:
        """stop kills every process in the namespace (Ray's and whatever ``popen`` started), then
        removes the cgroups, the namespace and the temp dir; calling it again does nothing."""
        atexit.unregister(self.stop)
        errors = []
        if self._up:
            try:
                kill_netns(self.netns)
            except ClusterError as e:
                errors.append(str(e))
        for cgroup in self._cgroups:
            try:
                remove_cgroup(cgroup)
            except ClusterError as e:
                errors.append(str(e))
        self._cgroups = []
        if self._up:
            done = subprocess.run(["ip", "netns", "del", self.netns], capture_output=True, text=True, check=False)
            if done.returncode != 0:
                errors.append(f"ip netns del {self.netns}: {done.stderr.strip()}")
            self._up = False
        if self.temp_dir is not None:
            shutil.rmtree(self.temp_dir, ignore_errors=True)
            self.temp_dir = None
        if errors:
            raise ClusterError("; ".join(errors))


def cannot_run() -> str:
    """cannot_run is why this machine cannot make a loopback cluster ("" if it can)."""
    if os.geteuid() != 0:
        return "network namespaces and cgroups need root"
    if shutil.which("ip") is None:
        return "no ip (iproute2)"
    if not RAY.exists():
        return f"Ray is not installed beside {sys.executable} (pip install ray==2.60.0)"
    try:
        cgroup_cpu_root()
    except RuntimeError as e:
        return str(e)
    return ""
