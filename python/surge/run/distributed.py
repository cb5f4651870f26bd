"""A distributed run (docs/distributed.md): one run whose engine is many. ``--ray`` places one
generator (``surge.run.generator_node.Generator``, a Ray actor) on each of N nodes of a Ray cluster
(a STRICT_SPREAD placement group); each runs the ordinary engine on its stripe of the plan
(VUs, iterations and arrivals split exactly), from a common start instant set by the driver
after measuring each node's clock offset. Their workers' reports stream to the driver, whose
engine merges them as one run's threads (``surge.engine.execute.merge_reports``: counts added,
histograms merged counter by counter), and the merged intervals feed the same run session as a
local run: live display, thresholds and abort_on_fail, diagnosis, record, reports.

Nothing is retried and no actor restarts: load is never replayed. A generator that dies or
answers nothing for ``SILENT_AFTER_S`` is lost: by default the run stops there (``stop``),
keeping everything received, and is recorded incomplete (stop reason ``generator_lost``);
with ``--on-generator-loss continue`` the others go on and the result says what is missing.

Ray is an optional extra: this module is imported only for a run with --ray, and imports Ray
only when it connects (``Cluster``)."""

from __future__ import annotations

import atexit
import contextlib
import functools
import importlib.util
import logging
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from surge.core.errors import BadInput, SurgeError
from surge.diagnosis.client_limits import open_file_exhaustion, port_exhaustion
from surge.diagnosis.generator import generator_late, generator_saturated
from surge.engine.execute import Received, merge_reports
from surge.run.generator_node import Generator
from surge.run.phases import run_phases
from surge.run.sinks import PhaseRunner

RAY_EXTRA = "pip install 'surge[ray]'"
"""RAY_EXTRA is how to install what --ray needs."""

LOSS_POLICIES = ("stop", "continue")
"""LOSS_POLICIES are what --on-generator-loss accepts: stop the run (default) or carry on."""

GENERATOR_LOST = "generator_lost"
"""GENERATOR_LOST is the stop reason of a distributed run stopped because a generator was lost."""

TAKE_WAIT_S = 0.25
"""TAKE_WAIT_S is how long a generator holds the driver's request for reports when it has none:
a live generator answers at least this often."""

SILENT_AFTER_S = 3.0
"""SILENT_AFTER_S: a generator that has answered nothing for this long is lost (with the
TAKE_WAIT_S it may have held the last request, a loss is detected within 3.5 s; under 5 s)."""

START_LEAD_S = 0.5
"""START_LEAD_S is how far ahead of the plans' delivery the common start is set (beside twice
the slowest round trip): time for every generator to prepare (validate, resolve, connect)."""

CLOCK_PROBES = 5
"""CLOCK_PROBES round trips measure each node's clock offset (the fastest one is kept)."""

PLACEMENT_TIMEOUT_S = 30.0
"""PLACEMENT_TIMEOUT_S bounds the wait for the generators' placement group."""


@dataclass(frozen=True)
class DistributedOptions:
    """DistributedOptions: --ray's ``address`` ("local": start a Ray instance here; "auto";
    ``ray://HOST:PORT``; ``HOST:PORT``), --generators (None: one per alive node) and
    --on-generator-loss (``stop`` or ``continue``)."""

    address: str
    generators: int | None = None
    on_loss: str = "stop"


def distributed_options(
    ray: str | None, generators: int | None, on_loss: str | None, flag: Callable[[str], str]
) -> DistributedOptions | None:
    """distributed_options checks the distributed run's flags (BadInput naming the flag, as
    ``flag(field)`` spells it) and whether Ray is installed; None without --ray."""
    if ray is None:
        for name, value in (("generators", generators), ("on_generator_loss", on_loss)):
            if value is not None:
                raise BadInput(flag(name), f"only applies to a distributed run: add {flag('ray')}")
        return None
    address = ray.strip()
    if address.lower().startswith(("http://", "https://")) or address.lower().endswith((".yaml", ".yml")):
        raise BadInput(
            flag("ray"),
            f"takes a Ray address (local, auto, ray://HOST:PORT or HOST:PORT), not {ray!r}: "
            f"write FILE|URL before {flag('ray')}, or --ray=local",
        )
    if not address:
        raise BadInput(flag("ray"), "an empty address: give local, auto, ray://HOST:PORT or HOST:PORT")
    if generators is not None and generators < 1:
        raise BadInput(flag("generators"), f"must be at least 1, got {generators}")
    policy = on_loss if on_loss is not None else "stop"
    if policy not in LOSS_POLICIES:
        raise BadInput(flag("on_generator_loss"), f"must be stop or continue, got {on_loss!r}")
    if importlib.util.find_spec("ray") is None:
        raise BadInput(flag("ray"), f"needs Ray, which is not installed here: {RAY_EXTRA}")
    return DistributedOptions(address, generators, policy)


class ClusterError(SurgeError):
    """ClusterError: the Ray cluster cannot give the run its generators (too few alive nodes,
    no placement in time, an actor that does not start); the message says which."""


class Cluster:
    """Cluster: a command's connection to Ray and its generators: one actor per node, placed
    once (STRICT_SPREAD) and used by every run the command makes; closed at exit."""

    def __init__(self, options: DistributedOptions) -> None:
        # Function-local, the three of them: Ray loads only for a distributed run (start-up of every other command).
        import ray  # (function-local: see above)
        from ray.util.placement_group import placement_group, remove_placement_group  # (function-local: see above)
        from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy  # (function-local: see above)

        self._ray = ray
        address = None if options.address == "local" else options.address
        if address is not None:
            check_reachable(address)
        try:
            ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False, configure_logging=False)
        except (ConnectionError, RuntimeError, ValueError) as e:
            raise BadInput("--ray", f"cannot connect to the Ray cluster at {options.address}: {e}") from None
        alive = [n for n in ray.nodes() if n.get("Alive")]  # type: ignore[no-untyped-call]
        wanted = options.generators or len(alive)
        if wanted > len(alive):
            ray.shutdown()
            raise BadInput(
                "--generators",
                f"{wanted} generators need {wanted} nodes, and the Ray cluster has {len(alive)} alive: "
                "each generator runs on a node of its own (add nodes with `ray start --address`, or ask for fewer)",
            )
        self._group = placement_group([{"CPU": 1}] * wanted, strategy="STRICT_SPREAD")
        self._remove_group = remove_placement_group
        if not self._group.wait(timeout_seconds=PLACEMENT_TIMEOUT_S):
            self.close()
            raise ClusterError(
                f"could not place {wanted} generators on distinct nodes within {PLACEMENT_TIMEOUT_S:.0f} s: "
                "each needs a node with a free CPU"
            )
        actor = ray.remote(Generator)
        # No restarts, no retries: a generator's load is never replayed. Its calls run on
        # threads beside the run (take, stop), so max_concurrency > 1.
        self.actors: list[Any] = [
            actor.options(
                num_cpus=1,
                max_concurrency=4,
                max_restarts=0,
                max_task_retries=0,
                scheduling_strategy=PlacementGroupSchedulingStrategy(
                    placement_group=self._group, placement_group_bundle_index=i
                ),
            ).remote()
            for i in range(wanted)
        ]
        self.nodes: list[dict[str, Any]] = ray.get([a.describe.remote() for a in self.actors], timeout=120)
        atexit.register(self.close)

    def get(self, ref: Any, timeout: float | None = None) -> Any:
        """get is a remote call's value; a generator's own exception is raised as itself
        (an UnreachableError stays one), a lost actor as ClusterError."""
        try:
            return self._ray.get(ref, timeout=timeout)
        except self._ray.exceptions.RayTaskError as e:
            cause = e.cause
            raise cause if isinstance(cause, BaseException) else ClusterError(str(e)) from e
        except self._ray.exceptions.RayError as e:
            raise ClusterError(f"a generator was lost: {e}") from e

    def close(self) -> None:
        """close kills the generators, removes their placement and disconnects (idempotent)."""
        ray = self._ray
        if not ray.is_initialized():
            return
        for actor in getattr(self, "actors", []):
            with contextlib.suppress(Exception):
                ray.kill(actor)
        with contextlib.suppress(Exception):
            self._remove_group(self._group)
        ray.shutdown()


def check_reachable(address: str, timeout_s: float = 5.0) -> None:
    """check_reachable refuses (BadInput naming --ray) a ``HOST:PORT`` or ``ray://HOST:PORT``
    address where nothing accepts a connection within ``timeout_s``: Ray itself would retry
    for minutes. ``auto`` is Ray's to resolve."""
    where = address.removeprefix("ray://")
    host, _, port = where.rpartition(":")
    if address == "auto" or not host or not port.isdigit():
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s).close()
    except OSError as e:
        raise BadInput(
            "--ray",
            f"nothing answers at {where} ({e.strerror or e}): is `ray start --head` running there, on that port?",
        ) from None


@dataclass
class GeneratorPart:
    """GeneratorPart: one generator's side of a run, as the driver knows it: whether it ended,
    its own result or error, whether and when it was lost and why, when it last answered."""

    done: bool = False
    result: dict[str, Any] | None = None
    error: BaseException | None = None
    lost: str | None = None
    lost_at_s: float | None = None
    heard_at: float = field(default_factory=time.monotonic)


class Transport:
    """Transport brings the generators' reports to the driver's merge: one pending ``take``
    per live generator; a generator that dies, fails, or answers nothing for SILENT_AFTER_S is
    lost, told to the merge as (generator, None); with the ``stop`` policy the others are then
    told to stop, as they are when the driver stops (a stop signal, abort_on_fail)."""

    def __init__(self, cluster: Cluster, policy: str, started_at: float) -> None:
        self.cluster = cluster
        self.policy = policy
        self.started_at = started_at
        self.parts = [GeneratorPart() for _ in cluster.actors]
        self._pending: dict[int, Any] = {}
        self._stopping = False
        self._told_stop = False

    def receive(self, wait_s: float, stopping: bool) -> Received:
        ray = self.cluster._ray
        self._stopping |= stopping
        live = [g for g, p in enumerate(self.parts) if not p.done and p.lost is None]
        if self._stopping and not self._told_stop:
            self._told_stop = True
            for g in live:
                self.cluster.actors[g].stop.remote()
        if not live:
            return None
        for g in live:
            if g not in self._pending:
                self._pending[g] = self.cluster.actors[g].take.remote(TAKE_WAIT_S)
        refs = list(self._pending.values())
        ready, rest = ray.wait(refs, num_returns=1, timeout=wait_s)
        if ready and rest:
            more, _ = ray.wait(rest, num_returns=len(rest), timeout=0)
            ready += more
        out: list[tuple[int, str | None]] = []
        now = time.monotonic()
        for g, ref in list(self._pending.items()):
            part = self.parts[g]
            if ref in ready:
                del self._pending[g]
                try:
                    answer = ray.get(ref)
                except ray.exceptions.RayError as e:
                    out.append(self._lose(g, f"it died ({type(e).__name__})"))
                    continue
                part.heard_at = now
                out.extend((g, report) for report in answer["reports"])
                if answer["done"]:
                    part.done, part.result, part.error = True, answer["result"], answer["error"]
                    if part.error is not None:
                        out.append(self._lose(g, f"its engine failed: {part.error}"))
            elif now - part.heard_at > SILENT_AFTER_S:
                del self._pending[g]
                out.append(self._lose(g, f"it answered nothing for {SILENT_AFTER_S:.0f} s"))
        return out

    def finish(self) -> None:
        """finish takes every generator's last answer (its own result): the merge ends with the
        last worker report, which may come before a generator's engine has returned."""
        while self.receive(TAKE_WAIT_S, False) is not None:
            pass

    def _lose(self, g: int, why: str) -> tuple[int, None]:
        part = self.parts[g]
        part.lost, part.lost_at_s = why, time.time() - self.started_at
        if self.policy == "stop":
            self._stopping = True
        return (g, None)


class DistributedEngines:
    """DistributedEngines (a ``surge.run.phases.Engines``): the measured run on every
    generator of ``cluster``, merged; setup and teardown once, on the first generator."""

    local = False

    def __init__(self, cluster: Cluster, policy: str) -> None:
        self.cluster = cluster
        self.policy = policy

    def run_once(self, plan: dict[str, Any]) -> dict[str, Any]:
        """run_once runs an unmeasured phase on the first generator."""
        result: dict[str, Any] = self.cluster.get(self.cluster.actors[0].run_once.remote(plan))
        return result

    def run_main(self, plan: dict[str, Any], on_interval: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """run_main runs the measured run on every generator and returns the merged result,
        with its ``distributed`` block (docs/distributed.md)."""
        cluster = self.cluster
        n = len(cluster.actors)
        threads = plan.get("threads") or min(int(node["cores"]) for node in cluster.nodes)
        whole = {**plan, "threads": threads}
        clocks = [_clock_offset(cluster, actor) for actor in cluster.actors]
        start_at = time.time() + START_LEAD_S + 2 * max(rtt for _, rtt in clocks)
        plans = [
            {**whole, "stripe": {"offset": g, "stride": n}, "start_at_unix_s": start_at + clocks[g][0]}
            for g in range(n)
        ]
        cluster.get([actor.start.remote(p) for actor, p in zip(cluster.actors, plans, strict=True)], timeout=60)
        transport = Transport(cluster, self.policy, start_at)
        merged = merge_reports(whole, n, start_at, transport.receive, on_interval)
        transport.finish()
        errors = [p.error for p in transport.parts if p.error is not None]
        if errors and len(errors) == n:
            raise errors[0]  # e.g. the target not reachable from any generator
        return with_parts(merged, transport.parts, clocks, cluster.nodes, threads, self.policy)


def _clock_offset(cluster: Cluster, actor: Any) -> tuple[float, float]:
    """_clock_offset is (offset, round trip) of a generator's clock to this one's, from the
    fastest of CLOCK_PROBES round trips (the offset is off by at most half of it)."""
    best: tuple[float, float] | None = None
    for _ in range(CLOCK_PROBES):
        sent = time.time()
        remote = float(cluster.get(actor.clock.remote(), timeout=30))
        back = time.time()
        rtt = back - sent
        if best is None or rtt < best[1]:
            best = (remote - (sent + back) / 2, rtt)
    assert best is not None
    return best


def with_parts(
    merged: dict[str, Any],
    parts: list[GeneratorPart],
    clocks: list[tuple[float, float]],
    nodes: list[dict[str, Any]],
    threads: int,
    policy: str,
) -> dict[str, Any]:
    """with_parts completes the merged result: the generators' own costs summed (CPU, the
    largest memory), the target's addresses, and the ``distributed`` block: each generator's
    node, share and figures, the clock offsets and start skew, what was lost."""
    results = [p.result for p in parts if p.result is not None]
    cpu = {key: sum(float(r["generator"]["cpu"].get(key, 0.0)) for r in results) for key in ("user_s", "system_s")}
    sent = merged["requests"]["sent"]
    generator = merged.setdefault("generator", {})
    generator["cpu"] = cpu
    generator["cpu_us_per_request"] = (cpu["user_s"] + cpu["system_s"]) * 1e6 / sent if sent else 0.0
    generator["max_rss_kib"] = max((int(r["generator"].get("max_rss_kib", 0)) for r in results), default=0)
    generator["open_file_limit"] = min((int(r["generator"].get("open_file_limit", 0)) for r in results), default=0)
    if results and not merged.get("addresses"):
        merged["addresses"] = results[0].get("addresses", [])
    starts = [float(p.result["started_at_unix_s"]) - clocks[g][0] for g, p in enumerate(parts) if p.result is not None]
    lost = [
        {"generator": g, "node_id": nodes[g].get("node_id"), "why": p.lost, "at_s": p.lost_at_s}
        for g, p in enumerate(parts)
        if p.lost is not None
    ]
    merged["distributed"] = {
        "generators": len(parts),
        "threads_per_generator": threads,
        "on_generator_loss": policy,
        "start_skew_s": (max(starts) - min(starts)) if starts else None,
        "clock_offsets_s": [offset for offset, _ in clocks],
        "clock_round_trips_s": [rtt for _, rtt in clocks],
        "lost": lost,
        "parts": [_part_figures(g, p, nodes[g], clocks[g][0]) for g, p in enumerate(parts)],
    }
    if lost:
        shares = ", ".join(f"generator {x['generator']} ({x['why']}, at {x['at_s']:.1f} s)" for x in lost)
        merged.setdefault("notes", []).append(
            f"{len(lost)} of {len(parts)} generators lost: {shares}; each carried 1/{len(parts)} of the load, "
            "missing from every figure after its loss (throughput is a lower bound)"
        )
        if policy == "stop":
            merged["stop_reason"] = GENERATOR_LOST
    return merged


def _part_figures(g: int, part: GeneratorPart, node: dict[str, Any], offset: float) -> dict[str, Any]:
    """_part_figures is one generator's line of the breakdown: where it ran and what it did."""
    r = part.result or {}
    requests = r.get("requests") or {}
    latency = (r.get("latency") or {}).get("all") or {}
    lag = (r.get("latency") or {}).get("send_lag") or {}
    gen = r.get("generator") or {}
    busy = gen.get("thread_busy") or []
    return {
        "generator": g,
        "node_id": node.get("node_id"),
        "host": node.get("host"),
        "clock_offset_s": offset,
        "started_at_unix_s": (float(r["started_at_unix_s"]) - offset) if r else None,
        "stop_reason": r.get("stop_reason"),
        "sent": requests.get("sent"),
        "responses": requests.get("responses"),
        "late": requests.get("late"),
        "dropped": requests.get("dropped"),
        "responses_per_s": (r.get("throughput") or {}).get("responses_per_s"),
        "p50_ms": latency.get("p50_ms"),
        "p99_ms": latency.get("p99_ms"),
        "send_lag_p99_ms": lag.get("p99_ms"),
        "cpu_us_per_request": gen.get("cpu_us_per_request"),
        "busiest_thread": max(busy, default=None),
        "findings": _own_findings(r) if r else [],
        "latency_histogram": (r.get("histograms") or {}).get("latency"),
        "notes": r.get("notes", []),
        "lost": part.lost,
    }


def _own_findings(result: dict[str, Any]) -> list[str]:
    """_own_findings are the kinds a generator's own result is found with, of those that are
    the generator's doing: saturated or late, out of ports, out of files."""
    open_model = any(i.get("target_rate_per_s") is not None for i in result.get("intervals") or [])
    found = [
        generator_saturated(result, open_model=open_model),
        generator_late(result, open_model=open_model),
        port_exhaustion(result),
        open_file_exhaustion(result),
    ]
    return [f.kind for f in found if f is not None]


@functools.cache
def _cluster(options: DistributedOptions) -> Cluster:
    """_cluster is the command's cluster for ``options``, connected on first use."""
    return Cluster(options)


def distributed_runner(options: DistributedOptions) -> PhaseRunner:
    """distributed_runner is the PhaseRunner of a distributed run (``run_phases`` on the
    cluster's generators), connecting to the cluster on first use; ClusterError says why the
    cluster cannot give the run its generators."""
    return functools.partial(run_phases, engines=DistributedEngines(_cluster(options), options.on_loss))
