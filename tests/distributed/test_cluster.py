"""The loopback Ray cluster harness itself (tests/distributed/cluster.py): a head and two worker nodes
come up in a namespace holding only loopback, a reference target inside answers, a worker
node's CPU quota holds, a killed node is seen dead, and teardown leaves nothing behind. One
cluster for the module (it starts in about 14 s on 2 cores)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cluster import FAST_HEALTH_CHECK, LoopbackCluster, cannot_run, sweep_stale
from isolation import cgroup_pids, cgroup_throttled, cpu_seconds, netns_pids, running

QUOTA = 0.25
"""QUOTA is the cores each worker node may use."""


@pytest.fixture(scope="module")
def cluster() -> Iterator[LoopbackCluster]:
    """cluster is a head with no CPU for Ray's tasks and two worker nodes with one each, held to
    QUOTA cores, Ray's health check fast (FAST_HEALTH_CHECK)."""
    reason = cannot_run()
    if reason:
        pytest.skip(reason)
    with LoopbackCluster(workers=2, head_cpus=0, cpu_quota=QUOTA, env=FAST_HEALTH_CHECK) as made:
        yield made


def test_head_and_two_workers_alive_on_loopback_only(cluster: LoopbackCluster) -> None:
    alive = cluster.alive_nodes()
    assert len(alive) == 3 and len(set(alive)) == 3, alive
    assert sorted(alive) == sorted(n.node_id for n in [cluster.head, *cluster.nodes] if n is not None)
    cpus = {n["node_id"]: n["cpus"] for n in cluster.probe()["nodes"]}
    assert cluster.head is not None and [cpus[n.node_id] for n in [cluster.head, *cluster.nodes]] == [0, 1, 1]
    assert cluster.address == "127.0.0.1:6379"
    assert cluster.start_seconds < 60
    links = cluster.run(["ip", "-o", "link", "show"], capture_output=True, text=True, check=True).stdout
    assert [line.split(":")[1].strip() for line in links.splitlines()] == ["lo"], links
    for i, node in enumerate(cluster.nodes):  # every worker node's daemons in its own cgroup
        assert node.cgroup is not None and node.raylet_pid in cgroup_pids(node.cgroup)
        assert node.raylet_pid in cluster.node_processes(i) and cluster.node_pids()[i] == node.raylet_pid
        # where no cgroup can be made, kill_node finds a node's processes by its process group
        # (a worker the raylet forks between the two looks is caught on a next try)
        assert _group_is_cgroup(cluster, i), cluster.node_processes(i)


def test_namespace_ports_are_its_own(cluster: LoopbackCluster) -> None:
    """A port bound on the host's loopback is free on the namespace's (and the head's 6379 there
    is not taken on the host by it): each cluster may use Ray's default ports."""
    with socket.socket() as host:
        host.bind(("127.0.0.1", 0))
        host.listen()
        port = host.getsockname()[1]
        bind = f"import socket; s = socket.socket(); s.bind(('127.0.0.1', {port})); s.listen(); print('bound')"
        inside = cluster.run([sys.executable, "-c", bind], capture_output=True, text=True, timeout=30)
        assert inside.stdout.strip() == "bound", inside.stderr
    probe = "import socket; s = socket.socket(); s.settimeout(5); print(s.connect_ex(('127.0.0.1', 6379)))"
    assert cluster.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=30).stdout.strip() == "0"


def test_target_inside_answers(cluster: LoopbackCluster) -> None:
    with cluster.target() as target:
        assert target.host == "127.0.0.1" and target.pid is not None
        assert target.pid in netns_pids(cluster.netns)  # `ip netns exec` execs the target
        fetch = f"import urllib.request; print(urllib.request.urlopen('{target.url}/health', timeout=10).status)"
        inside = cluster.run([sys.executable, "-c", fetch], capture_output=True, text=True, timeout=30)
        assert inside.stdout.strip() == "200", inside.stderr
        assert target.received() == 2  # its own /health at start, and the one from inside


def test_cpu_quota_holds_a_busy_loop(cluster: LoopbackCluster) -> None:
    node = cluster.nodes[0]
    assert node.cgroup is not None
    throttled = cgroup_throttled(node.cgroup)
    spinner = cluster.popen([sys.executable, "-c", "while True: pass"], node=0)
    try:
        time.sleep(0.5)  # past the interpreter's start
        assert spinner.pid in cgroup_pids(node.cgroup)
        used, began = cpu_seconds(spinner.pid), time.monotonic()
        time.sleep(2.0)
        share = (cpu_seconds(spinner.pid) - used) / (time.monotonic() - began)
    finally:
        spinner.kill()
        spinner.wait()
    assert 0.02 < share <= QUOTA + 0.05, share
    assert cgroup_throttled(node.cgroup) > throttled


def test_killed_node_seen_dead(cluster: LoopbackCluster) -> None:
    """Ray marks a killed worker node dead in about 1.5 s with FAST_HEALTH_CHECK (measured 1.5;
    about 14.4 with Ray's defaults); the other nodes stay alive."""
    seconds = cluster.kill_node_timed(1, timeout=30)
    assert seconds < 5, seconds
    assert cluster.node_processes(1) == []
    alive = cluster.alive_nodes()
    assert cluster.nodes[1].node_id not in alive and cluster.nodes[0].node_id in alive and len(alive) == 2


ORPHAN = """
import sys, time
sys.path.insert(0, sys.argv[1])
from cluster import LoopbackCluster
cluster = LoopbackCluster(workers=1, cpu_quota=0.5)
cluster.start()
print(cluster.netns, cluster.temp_dir, flush=True)
time.sleep(600)
"""
"""ORPHAN starts a cluster of a head and one worker node and waits to be killed: its teardown never runs."""


def test_cluster_of_a_killed_test_is_swept(cluster: LoopbackCluster) -> None:
    """A test process killed with its cluster up (no teardown, no atexit) leaves a namespace, a
    cgroup and a temp dir that the next cluster's start sweeps away; live clusters stay."""
    argv = [sys.executable, "-c", ORPHAN, str(Path(__file__).parent)]
    orphan = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert orphan.stdout is not None and orphan.stderr is not None
    try:
        started = orphan.stdout.readline().split()  # once its cluster is up (or it failed)
    finally:
        orphan.kill()
        orphan.wait()
    assert len(started) == 2, orphan.stderr.read()[-2000:]
    netns, temp_dir = started
    pids = netns_pids(netns)
    assert pids and Path(temp_dir).exists()
    swept = sweep_stale()
    assert sorted(swept) == sorted([netns, f"{netns}-w0"])
    assert [pid for pid in pids if running(pid)] == []
    assert not Path(temp_dir).exists()
    assert cluster.netns in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert len(cluster.alive_nodes()) >= 2  # the module's cluster lives on (a worker of it may be killed already)


def test_teardown_leaves_nothing(cluster: LoopbackCluster) -> None:
    pids = netns_pids(cluster.netns)
    cgroups = [n.cgroup for n in cluster.nodes if n.cgroup is not None]
    temp_dir = cluster.temp_dir
    assert pids and len(cgroups) == 2 and temp_dir is not None and temp_dir.exists()
    cluster.stop()
    namespaces = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    assert cluster.netns not in namespaces.split()
    assert [pid for pid in pids if running(pid)] == []
    assert [c for c in cgroups if c.exists()] == []
    assert not temp_dir.exists()


def _group_is_cgroup(cluster: LoopbackCluster, i: int, tries: int = 5) -> bool:
    """_group_is_cgroup says whether worker node ``i``'s processes found by process group were
    those its cgroup lists, on one of ``tries`` looks 0.2 s apart."""
    for _ in range(tries):
        if cluster.group_processes(i) == cluster.node_processes(i):
            return True
        time.sleep(0.2)
    return False
