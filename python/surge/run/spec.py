"""The test description every run and experiment shares: ``surge run``'s argument and flags (a
URL with its flags, or a scenario file with ``--target``, ``-e``, ``--time-scale``...), declared
once (``surge.run.flags``) and held as a TestSpec, which prepares a run (``TestSpec.prepare``) as
it is, or with an experiment's Overrides (a VU count, an arrival rate, a duration).

The override rule (docs/experiments.md): a URL test becomes ``-c VUS -d D`` (closed model) or
``-r RATE -d D`` (open model, its ``-c`` still the connections opened up front); a scenario
file's measured scenarios all start at once and each runs a constant executor for the
duration, the level shared among them evenly (VUs by largest remainder), their flows, think
times, setup, teardown and thresholds unchanged.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from surge.core.errors import BadInput
from surge.core.limits import MAX_RATE, MAX_VUS
from surge.core.redact import redact_url
from surge.core.units import duration_flag
from surge.engine.validation import check_url_plan, plan_errors
from surge.plan.compiled import CompiledRun
from surge.plan.heading import PlanLike, scenario_heading
from surge.plan.model import OPEN_MODEL, ConstantArrivalRate, ConstantVus, Executor, Plan, executor_planned_s
from surge.plan.thresholds import Threshold
from surge.plan.url import (
    DEFAULT_GRACE,
    DEFAULT_TIMEOUT,
    FlagNames,
    build_plan,
    check_threads,
    default_max_in_flight,
    http2_streams,
    send_slack_flag,
)
from surge.record.directory import run_name
from surge.run.distributed import DistributedOptions, distributed_options, distributed_runner
from surge.run.export import Export, parse_exports
from surge.run.flags import test_flag_names
from surge.run.sinks import LOCAL, PhaseRunner

ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
"""ENV_NAME is what an environment variable's name may be (as in a POSIX shell)."""

LEVEL = "experiment level"
"""LEVEL is where an error in an experiment's override is reported when no flag gave it."""


@dataclass(frozen=True)
class Overrides:
    """Overrides: what an experiment changes in the test for one run: ``vus`` (closed model:
    constant VUs), ``rate`` (open model: constant arrival rate, per second) and ``duration_s``
    (the run's length); None leaves the test's own. ``vus`` and ``rate`` exclude each other."""

    vus: int | None = None
    rate: float | None = None
    duration_s: float | None = None

    def __post_init__(self) -> None:
        if self.vus is not None and self.rate is not None:
            raise ValueError("Overrides: a run has either a VU count or an arrival rate, not both")

    def is_empty(self) -> bool:
        """is_empty tells whether nothing is overridden."""
        return self.vus is None and self.rate is None and self.duration_s is None


@dataclass(frozen=True)
class PreparedRun:
    """PreparedRun: a test ready to run through ``surge.run.session.run_prepared``: the ``compiled`` run,
        the ``threads`` to give run_phases (a scenario file's --threads; a URL plan holds its own),
        the ``url_plan`` of a URL test (None for a scenario file), the ``scenario_file`` (None for a
        URL), the ``heading`` its summary describes, its ``name`` (``TestSpec.name``: the
    results directory's and the record's) and the ``exports`` its stream is pushed to (--export)."""

    compiled: CompiledRun
    threads: int | None
    url_plan: Plan | None
    scenario_file: Path | None
    heading: PlanLike
    name: str
    exports: tuple[Export, ...] = ()

    @property
    def target_url(self) -> str:
        """target_url is the URL the run sends to (secrets not masked: for the record to mask)."""
        return self.compiled.main.target.url

    @property
    def planned_s(self) -> float:
        """planned_s is how long the measured run is meant to take (0 for a count of iterations)."""
        return self.compiled.main.planned_s()


@dataclass(frozen=True)
class TestSpec:
    """TestSpec: one test as ``surge run`` takes it (``target`` is the FILE|URL argument; every
    other field the flag of its name, None when not given; ``no_save`` is --no-save: nothing
    recorded). It checks nothing until ``prepare``, whose BadInput names the flag as the command
    spells it (``flags``: ``surge.run.flags.test_flag_names``; None: as ``surge run`` does)."""

    __test__ = False  # not a pytest test class, whatever its name

    target: str
    connections: int | None = None
    duration: str | None = None
    requests: int | None = None
    rate: float | None = None
    method: str | None = None
    header: tuple[str, ...] = ()
    body: str | None = None
    timeout: str | None = None
    threads: int | None = None
    max_in_flight: int | None = None
    grace: str | None = None
    stream_idle_timeout: str | None = None
    insecure: bool = False
    http2: bool = False
    streams: int | None = None
    slo: tuple[str, ...] = ()
    time_scale: float | None = None
    target_url: str | None = None
    env_pairs: tuple[str, ...] = ()
    out: str | None = None
    db: str | None = None
    tags: tuple[tuple[str, str], ...] = ()
    watch_pid: int | None = None
    send_slack: str | None = None
    ray: str | None = None
    generators: int | None = None
    on_generator_loss: str | None = None
    export: tuple[str, ...] = ()
    no_save: bool = False
    dashboard: str | None = None
    dashboard_open: bool = False
    flags: FlagNames | None = field(default=None, compare=False)

    def flag(self, name: str) -> str:
        """flag is the flag of the field ``name`` (``requests``) as the command spells it
        (``-n/--requests`` for ``surge run``, ``--requests`` for an experiment)."""
        return self.flag_names[name]

    @property
    def flag_names(self) -> FlagNames:
        """flag_names are ``flags``, or ``surge run``'s when the TestSpec was not made by a command."""
        return self.flags if self.flags is not None else test_flag_names()

    @property
    def is_file(self) -> bool:
        """is_file tells whether the test is a scenario file (a .yaml/.yml name, or an existing
        file that is not an http(s) URL) rather than a URL."""
        lower = self.target.lower()
        return lower.endswith((".yaml", ".yml")) or (
            not lower.startswith(("http://", "https://")) and Path(self.target).is_file()
        )

    @property
    def scenario_file(self) -> Path | None:
        """scenario_file is the scenario file's path, None for a URL test."""
        return Path(self.target) if self.is_file else None

    @property
    def tag_dict(self) -> dict[str, str]:
        """tag_dict is the --tag labels as a dict (already checked by ``surge.core.tags.parse_tags``)."""
        return dict(self.tags)

    def name(self) -> str:
        """name is the test's name: the scenario file's stem, or a slug of the URL's host and path."""
        return run_name(self.target, self.scenario_file)

    def describe(self) -> dict[str, Any]:
        """describe is the test as an experiment's parameters record it: what it is (secrets
        masked; headers and body left out), the overridable flags and the tags."""
        return {
            "test": redact_url(self.target) if not self.is_file else self.target,
            "scenario_file": self.is_file,
            "connections": self.connections,
            "duration": self.duration,
            "rate": self.rate,
            "time_scale": self.time_scale,
            "target": redact_url(self.target_url) if self.target_url else None,
            "threads": self.threads,
            "send_slack": self.send_slack,
            "slo": list(self.slo),
            "tags": self.tag_dict,
        }

    def distributed(self) -> DistributedOptions | None:
        """distributed is the distributed run --ray asks for (None: a run on this machine);
        BadInput names the flag at fault (--generators without --ray, Ray not installed)."""
        return distributed_options(self.ray, self.generators, self.on_generator_loss, self.flag)

    def runner(self) -> PhaseRunner:
        """runner is where the test's runs take their load from: this machine's engine, or with
        --ray the generators of a Ray cluster, connected (once per command) here: ClusterError,
        or BadInput naming --generators, when the cluster cannot give them."""
        options = self.distributed()
        return LOCAL if options is None else distributed_runner(options)

    def prepare(self, overrides: Overrides | None = None) -> PreparedRun:
        """prepare checks the flags and compiles the test, with ``overrides`` applied (the module's
        rule) and the ``--slo`` conditions added to its thresholds (``CompiledRun.with_thresholds``:
        goodput counted against their bounds); BadInput names the flag (or LEVEL) at fault."""
        self.distributed()
        exports = parse_exports(self.export, self.flag("export"))
        slo: list[Threshold] = []
        if self.slo:
            # function-local: the analysis layer (numpy, scipy) stays out of a plain run's start-up
            from surge.analysis.slo import slo_conditions

            slo = slo_conditions(self.slo, self.flag("slo"))
        overrides = overrides or Overrides()
        _check_overrides(overrides)
        prepared = self._prepare_file(overrides) if self.is_file else self._prepare_url(overrides)
        compiled = prepared.compiled.with_thresholds(slo)
        if prepared.url_plan is not None:  # a URL's plan is its main plan and its heading
            prepared = replace(prepared, url_plan=compiled.main, heading=compiled.main)
        return replace(prepared, compiled=compiled, exports=exports)

    def _prepare_url(self, overrides: Overrides) -> PreparedRun:
        for name, value in (
            ("time_scale", self.time_scale),
            ("target_url", self.target_url),
            ("env_pairs", self.env_pairs or None),
        ):
            if value is not None:
                raise BadInput(self.flag(name), "only applies to a scenario file (surge run FILE.yaml)")
        connections, rate, max_in_flight = self.connections, self.rate, self.max_in_flight
        if not overrides.is_empty() and self.requests is not None:
            raise BadInput(
                self.flag("requests"), f"an experiment sets each run's load and length: use {self.flag('duration')}"
            )
        if overrides.vus is not None:
            for name, value in (("max_in_flight", max_in_flight), ("send_slack", self.send_slack)):
                if value is not None:
                    raise BadInput(self.flag(name), "only applies to the open model; this experiment runs VU levels")
            connections, rate = overrides.vus, None
        elif overrides.rate is not None:
            rate = overrides.rate
        plan = build_plan(
            self.target,
            connections=connections,
            duration=self.duration,
            requests=self.requests,
            rate=rate,
            method=self.method or "GET",
            headers=list(self.header),
            body=self.body,
            timeout=self.timeout or DEFAULT_TIMEOUT,
            threads=self.threads,
            insecure=self.insecure,
            http2=self.http2,
            streams=self.streams,
            max_in_flight=max_in_flight,
            grace=self.grace or DEFAULT_GRACE,
            stream_idle_timeout=self.stream_idle_timeout,
            flags=self.flag_names,
            duration_s=overrides.duration_s,
            send_slack=self.send_slack,
        )
        check_url_plan(plan, self.flag_names)
        return PreparedRun(CompiledRun(main=plan), None, plan, None, plan, self.name())

    def _prepare_file(self, overrides: Overrides) -> PreparedRun:
        # The load's shape and the request are the file's; the limits and TLS may be overridden.
        given = {
            "connections": self.connections,
            "duration": self.duration,
            "requests": self.requests,
            "rate": self.rate,
            "method": self.method,
            "header": self.header or None,
            "body": self.body,
            "max_in_flight": self.max_in_flight,
        }
        for name, value in given.items():
            if value is not None:
                raise BadInput(
                    self.flag(name), f"does not apply to a scenario file ({self.target}): set it in the file"
                )
        timeout = duration_flag(self.flag("timeout"), self.timeout) if self.timeout is not None else None
        grace = duration_flag(self.flag("grace"), self.grace, positive=False) if self.grace is not None else None
        stream_idle = (
            duration_flag(self.flag("stream_idle_timeout"), self.stream_idle_timeout)
            if self.stream_idle_timeout is not None
            else None
        )
        send_slack_s = send_slack_flag(self.send_slack, self.flag("send_slack"))
        env = _env_overrides(self.env_pairs, self.flag("env_pairs"))
        if self.time_scale is not None and not (math.isfinite(self.time_scale) and self.time_scale > 0):
            raise BadInput(self.flag("time_scale"), f"must be a positive factor, got {self.time_scale:g}")
        check_threads(self.threads, self.flag("threads"))
        if not Path(self.target).exists():
            raise BadInput(self.target, "no such scenario file")
        from surge.scenario import load  # start-up: yaml and pydantic, which a URL run never needs

        scenario_file = load(Path(self.target), env=env)
        if self.target_url is not None:
            try:
                scenario_file = scenario_file.with_target(self.target_url)
            except ValueError as e:  # pydantic's PydanticCustomError: the message says what is wrong
                raise BadInput(self.flag("target_url"), str(e)) from None
        scenario_file = scenario_file.with_overrides(
            timeout=timeout,
            graceful_stop=grace,
            insecure=self.insecure,
            send_slack=send_slack_s,
            stream_idle_timeout=stream_idle,
            http2_streams=http2_streams(self.http2, self.streams, self.flag("streams")),
        )
        compiled = scenario_file.compile(time_scale=self.time_scale or 1.0, env=env)
        if not overrides.is_empty():
            compiled = replace(compiled, main=override_scenarios(compiled.main, overrides))
        return PreparedRun(
            compiled, self.threads, None, Path(self.target), scenario_heading(compiled.main), self.name()
        )


def _check_overrides(overrides: Overrides) -> None:
    if overrides.vus is not None and not 1 <= overrides.vus <= MAX_VUS:
        raise BadInput(LEVEL, f"a VU count must be from 1 to {MAX_VUS:,}, got {overrides.vus}")
    if overrides.rate is not None and not (math.isfinite(overrides.rate) and 0 < overrides.rate <= MAX_RATE):
        raise BadInput(LEVEL, f"an arrival rate must be above 0 and at most {MAX_RATE:,.0f}/s, got {overrides.rate:g}")
    if overrides.duration_s is not None and not (math.isfinite(overrides.duration_s) and overrides.duration_s > 0):
        raise BadInput(LEVEL, f"a run's duration must be above zero, got {overrides.duration_s:g}s")


def shares(total: int, parts: int) -> list[int]:
    """shares splits ``total`` into ``parts`` whole shares differing by at most one, the larger
    ones first (largest remainder on an even split)."""
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


def override_scenarios(main: Plan, overrides: Overrides) -> Plan:
    """override_scenarios is a scenario file's main plan with the overrides applied: every
    scenario starts at 0 and runs a constant-vus (``vus`` shared out) or constant-arrival-rate
    (``rate`` shared evenly; its max VUs kept from an arrival-rate executor, else the default
    in-flight cap) executor for ``duration_s`` (else its own planned length). BadInput (LEVEL)
    when it cannot apply: fewer VUs than scenarios, or no duration for an iterations executor."""
    scenarios = main.scenarios
    vus = shares(overrides.vus, len(scenarios)) if overrides.vus is not None else None
    if vus is not None and min(vus) < 1:
        raise BadInput(
            LEVEL,
            f"{overrides.vus} VUs cannot be shared among the file's {len(scenarios)} scenarios "
            "(each needs at least one)",
        )
    changed = []
    for i, scenario in enumerate(scenarios):
        executor: Executor = scenario.executor
        duration = overrides.duration_s or executor_planned_s(executor)
        if duration <= 0:
            raise BadInput(
                LEVEL,
                f"scenario '{scenario.name}' runs a count of iterations ({executor.type}): "
                "an experiment needs a duration to override it",
            )
        if vus is not None:
            executor = ConstantVus(vus=vus[i], duration_s=duration)
        elif overrides.rate is not None:
            max_vus = (executor.max_vus if isinstance(executor, OPEN_MODEL) else None) or default_max_in_flight()
            executor = ConstantArrivalRate(rate=overrides.rate / len(scenarios), duration_s=duration, max_vus=max_vus)
        elif isinstance(executor, (ConstantVus, ConstantArrivalRate)):
            executor = replace(executor, duration_s=duration)
        else:
            raise BadInput(
                LEVEL,
                f"scenario '{scenario.name}' has a {executor.type} executor: only a "
                "constant one's duration can be overridden without a VU count or a rate",
            )
        changed.append(replace(scenario, start_time_s=0.0, executor=executor))
    plan = replace(main, scenarios=changed)
    _validate(plan)
    return plan


def _validate(plan: Plan) -> None:
    for where, message in plan_errors(plan.to_dict()):
        raise BadInput(LEVEL, f"{where}: {message}")


def _env_overrides(pairs: tuple[str, ...], flag: str) -> dict[str, str] | None:
    """_env_overrides is the process environment with each -e NAME=VALUE set over it, or
    None when no -e was given; BadInput names ``flag``."""
    if not pairs:
        return None
    env = dict(os.environ)
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not ENV_NAME.fullmatch(name):
            raise BadInput(flag, f"expected NAME=VALUE with NAME made of letters, digits and _, got {pair!r}")
        env[name] = value
    return env


__all__ = ["LEVEL", "Overrides", "PreparedRun", "TestSpec", "override_scenarios", "shares"]
