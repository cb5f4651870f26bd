"""One generator run against one server, measured from both sides."""

from __future__ import annotations

import dataclasses
import threading
import time

from . import proc
from .generators import Generator, GenReport


@dataclasses.dataclass
class Sample:
    """Sample is a server-side reading during a run: harness time, requests so far, connections."""

    t: float
    requests: int
    active: int


@dataclasses.dataclass
class Measurement:
    """Measurement is one run: the generator's rusage, the server's count and CPU, the cores."""

    generator: str
    argv: list[str]
    returncode: int
    timed_out: bool
    wall_s: float
    gen_cpu_s: float
    gen_user_s: float
    gen_sys_s: float
    peak_rss_mb: float
    report: GenReport
    server_requests: int | None
    duration_s: float
    server_cpu_s: float | None
    gen_core_busy_s: float | None
    server_core_busy_s: float | None
    samples: list[Sample]
    stderr_tail: str
    loadavg: str
    server_accepts: int | None = None  # connections nginx accepted (status ones taken out)

    @property
    def ok(self) -> bool:
        """ok is true when the generator exited 0, in time, and its output parsed."""
        return self.returncode == 0 and not self.timed_out and self.report.parse_error is None

    @property
    def requests(self) -> int | None:
        """requests is the server-side count, or the generator's own where the server has none."""
        return self.server_requests if self.server_requests is not None else self.report.requests

    @property
    def req_per_s(self) -> float | None:
        """req_per_s is requests over the generator's own measured duration."""
        return self.requests / self.duration_s if self.requests and self.duration_s else None

    @property
    def cpu_us_per_req(self) -> float | None:
        """cpu_us_per_req is generator user+sys CPU per (server-counted) request, in µs."""
        return self.gen_cpu_s / self.requests * 1e6 if self.requests else None

    @property
    def server_us_per_req(self) -> float | None:
        """server_us_per_req is server CPU per request in µs."""
        if self.server_cpu_s is None or not self.requests:
            return None
        return self.server_cpu_s / self.requests * 1e6

    @property
    def gen_util(self) -> float:
        """gen_util is the generator's CPU over its wall time (1.0 = one core saturated)."""
        return self.gen_cpu_s / self.wall_s if self.wall_s else 0.0

    @property
    def server_util(self) -> float | None:
        """server_util is the server's CPU over the generator's wall time."""
        return self.server_cpu_s / self.wall_s if self.server_cpu_s is not None else None

    @property
    def other_load_gen_core(self) -> float | None:
        """other_load_gen_core is the fraction of the generator's core used by anyone else."""
        if self.gen_core_busy_s is None:
            return None
        return max(0.0, self.gen_core_busy_s - self.gen_cpu_s) / self.wall_s

    @property
    def other_load_server_core(self) -> float | None:
        """other_load_server_core is the fraction of the server's core used by anyone else."""
        if self.server_core_busy_s is None or self.server_cpu_s is None:
            return None
        return max(0.0, self.server_core_busy_s - self.server_cpu_s) / self.wall_s

    @property
    def saturated(self) -> str:
        """saturated names the sides that ran at 90 % of a core or more ("" when neither)."""
        sides = [
            name
            for name, util in (("generator", self.gen_util), ("server", self.server_util))
            if util is not None and util >= 0.9
        ]
        return "+".join(sides)

    @property
    def other_load(self) -> float:
        """other_load is the larger share of either measured core used by other processes."""
        return max(v for v in (self.other_load_gen_core, self.other_load_server_core, 0.0) if v is not None)

    @property
    def peak_active(self) -> int | None:
        """peak_active is the most connections the server saw open (minus the status one)."""
        return max((s.active - 1 for s in self.samples), default=None)

    def to_json(self) -> dict:
        """to_json is the raw record written to bench/out."""
        d = dataclasses.asdict(self)
        for key in (
            "ok",
            "requests",
            "req_per_s",
            "cpu_us_per_req",
            "server_us_per_req",
            "gen_util",
            "server_util",
            "other_load_gen_core",
            "other_load_server_core",
            "saturated",
            "other_load",
            "peak_active",
        ):
            d[key] = getattr(self, key)
        return d


class _Sampler(threading.Thread):
    """_Sampler reads the server's status every interval until stopped."""

    def __init__(self, server, base_requests: int, base_queries: int, interval_s: float):
        super().__init__(daemon=True)
        self.server = server
        self.base_requests = base_requests
        self.base_queries = base_queries
        self.interval_s = interval_s
        self.samples: list[Sample] = []
        self.stop_event = threading.Event()

    def run(self) -> None:
        t0 = time.monotonic()
        while not self.stop_event.wait(self.interval_s):
            try:
                st = self.server.status()
            except (OSError, ValueError):
                continue
            t = time.monotonic()
            own = self.server.status_requests - self.base_queries
            self.samples.append(Sample(t - t0, st.requests - own - self.base_requests, st.active))


def measure(
    gen: Generator,
    argv: list[str],
    server,
    gen_core: int,
    server_core: int,
    nominal_s: float,
    sample_interval_s: float = 1.0,
    wait_quiet_s: float = 0.0,
    stdin_bytes: bytes | None = None,
    realtime_priority: int | None = None,
) -> Measurement:
    """measure runs argv pinned to gen_core against server and accounts for every side.

    server is an Nginx (counted through stub_status, the status requests themselves taken
    out) or any object with cpu_s() and no status() (then the generator's own count is used).
    With wait_quiet_s, it first waits up to that long for both cores to be < 10 % busy.
    stdin_bytes is fed to the generator's stdin (run_plan reads its plan there).
    realtime_priority runs the generator SCHED_FIFO at it (the open section; docs/benchmarks.md).
    """
    if wait_quiet_s > 0:
        proc.wait_quiet([gen_core, server_core], 0.10, wait_quiet_s)
    counted = hasattr(server, "status")
    base_requests = base_queries = 0
    base_accepts = None
    if counted:
        base = server.status()
        base_requests = base.requests
        base_accepts = getattr(base, "accepts", None)  # nginx's; the reference target has none
        base_queries = server.status_requests
    cpu0 = server.cpu_s()
    busy0 = proc.cpu_busy_s([gen_core, server_core])
    sampler = None
    if counted:
        sampler = _Sampler(server, base_requests, base_queries, sample_interval_s)
        sampler.start()
    load = proc.loadavg()
    try:
        res = proc.run_measured(
            argv, {gen_core}, timeout_s=nominal_s * 2 + 60, stdin_bytes=stdin_bytes, realtime_priority=realtime_priority
        )
    finally:
        if sampler:
            sampler.stop_event.set()
            sampler.join()
    busy1 = proc.cpu_busy_s([gen_core, server_core])
    cpu1 = server.cpu_s()
    server_requests = server_accepts = None
    if counted:  # each status request opened one connection and made one request: taken out
        after = server.status()
        own = server.status_requests - base_queries
        server_requests = after.requests - base_requests - own
        if base_accepts is not None:
            server_accepts = after.accepts - base_accepts - own
    report = gen.parse(res.stdout)
    return Measurement(
        generator=gen.name,
        argv=res.argv,
        returncode=res.returncode,
        timed_out=res.timed_out,
        wall_s=res.wall_s,
        gen_cpu_s=res.cpu_s,
        gen_user_s=res.user_s,
        gen_sys_s=res.sys_s,
        peak_rss_mb=res.maxrss_mb,
        report=report,
        server_requests=server_requests,
        duration_s=report.duration_s or nominal_s,
        server_cpu_s=(cpu1 - cpu0) if cpu0 is not None and cpu1 is not None else None,
        gen_core_busy_s=busy1[gen_core] - busy0[gen_core] if gen_core in busy0 else None,
        server_core_busy_s=(busy1[server_core] - busy0[server_core] if server_core in busy0 else None),
        samples=sampler.samples if sampler else [],
        stderr_tail=res.stderr.strip()[-800:],
        loadavg=load,
        server_accepts=server_accepts,
    )
