"""A URL run's flags (``surge run URL -c -d -n -r -m -H --body ...``) turned into the engine's
Plan, each mistake a BadInput naming its flag as the command spells it (``FlagNames``)."""

from __future__ import annotations

import math
import resource
from collections.abc import Mapping

from surge.core.errors import BadInput
from surge.core.files import FileReadError, read_bounded
from surge.core.limits import (
    MAX_DATA_FILE_BYTES,
    MAX_ITERATIONS,
    MAX_RATE,
    MAX_SEND_SLACK_S,
    MAX_THREADS,
    MAX_VUS,
    SEND_SLACK_RANGE,
)
from surge.core.units import duration_flag, parse_duration
from surge.plan.model import (
    ConstantArrivalRate,
    ConstantVus,
    Executor,
    Http2Spec,
    Limits,
    Plan,
    RequestSpec,
    SharedIterations,
    TargetSpec,
)

DEFAULT_DURATION = "10s"
DEFAULT_TIMEOUT = "30s"
DEFAULT_GRACE = "5s"
DEFAULT_CONNECTIONS = 64
DEFAULT_MAX_IN_FLIGHT = 10_000

FlagNames = Mapping[str, str]
"""FlagNames maps each flag of the test description, by its TestSpec field (``requests``,
``connections``...), to the flag as the command spells it (``-n/--requests`` in ``surge run``,
``--requests`` in an experiment, whose ``-n`` counts runs): errors name what the user typed."""


def send_slack_flag(text: str | None, flag: str = "--send-slack") -> float | None:
    """send_slack_flag reads ``--send-slack`` in seconds (None when not given); BadInput names
    ``flag`` when it is not a duration from 0 to MAX_SEND_SLACK_S."""
    if text is None:
        return None
    if text.strip().startswith("-"):
        raise BadInput(flag, f"{SEND_SLACK_RANGE}, got '{text}'")
    try:
        seconds = parse_duration(text)
    except ValueError as e:
        raise BadInput(flag, str(e)) from None
    if not seconds <= MAX_SEND_SLACK_S:
        raise BadInput(flag, f"{SEND_SLACK_RANGE}, got '{text}'")
    return seconds


def _count(flag: str, value: int | None, most: int) -> None:
    """_count refuses a whole-number flag outside 1..most, naming the flag."""
    if value is not None and not 1 <= value <= most:
        raise BadInput(flag, f"must be from 1 to {most:,}, got {value}")


def check_threads(threads: int | None, flag: str = "--threads") -> None:
    """check_threads refuses a --threads value outside the engine's range, naming ``flag``."""
    _count(flag, threads, MAX_THREADS)


def _headers(values: list[str], flag: str) -> list[tuple[str, str]]:
    headers = []
    for number, value in enumerate(values, 1):
        name, sep, rest = value.partition(":")
        if not sep or not name.strip():
            # Not echoed: without its ':' a header cannot be told from a secret value.
            raise BadInput(flag, f"header {number} has no name before a ':': it must look like 'Name: value'")
        headers.append((name.strip(), rest.strip()))
    return headers


def _body(value: str | None, flag: str) -> bytes | None:
    if value is None:
        return None
    if value.startswith("@"):
        try:
            return read_bounded(value[1:], MAX_DATA_FILE_BYTES)
        except FileReadError as e:
            raise BadInput(flag, f"{value[1:]}: {e.message}") from None
    return value.encode()


def default_max_in_flight() -> int:
    """default_max_in_flight is the default in-flight cap: large enough to ride out a stall, within the fd limit."""
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY:
        return DEFAULT_MAX_IN_FLIGHT
    return max(1, min(DEFAULT_MAX_IN_FLIGHT, hard - 256))


DEFAULT_STREAMS = 100
"""DEFAULT_STREAMS is --http2's streams per connection without --streams (h2load's -m is 1; servers
advertise 100 to 256 concurrent streams, nginx 128)."""

MAX_STREAMS = 1000
"""MAX_STREAMS bounds --streams (the engine's bound, crates/surge-engine/src/spec/target.rs)."""


def http2_streams(http2: bool, streams: int | None, flag: str) -> int | None:
    """http2_streams is the streams per connection ``--http2 --streams`` ask for (None: HTTP/1.1);
    BadInput names ``flag`` (--streams) when it is out of range or given without --http2."""
    if streams is None:
        return DEFAULT_STREAMS if http2 else None
    if not http2:
        raise BadInput(flag, "only applies with --http2")
    if not 1 <= streams <= MAX_STREAMS:
        raise BadInput(flag, f"must be from 1 to {MAX_STREAMS}, got {streams}")
    return streams


def build_plan(
    url: str,
    *,
    connections: int | None,
    duration: str | None,
    requests: int | None,
    rate: float | None,
    method: str,
    headers: list[str],
    body: str | None,
    timeout: str,
    threads: int | None,
    insecure: bool,
    max_in_flight: int | None,
    grace: str,
    flags: FlagNames,
    http2: bool = False,
    streams: int | None = None,
    stream_idle_timeout: str | None = None,
    duration_s: float | None = None,
    send_slack: str | None = None,
) -> Plan:
    """build_plan turns ``surge run`` flags into a Plan; BadInput names the bad flag as
    ``flags`` spell it. The engine's own checks (URL, method, headers) are
    ``surge.engine.validation.check_url_plan``'s, which the caller runs next. ``duration_s``
    (an experiment's run length, already checked) replaces ``duration``."""
    _count(flags["connections"], connections, MAX_VUS)
    _count(flags["requests"], requests, MAX_ITERATIONS)
    if rate is not None and not (math.isfinite(rate) and rate > 0):
        raise BadInput(flags["rate"], f"must be a positive number of requests per second, got {rate:g}")
    if rate is not None and rate > MAX_RATE:
        raise BadInput(
            flags["rate"], f"must be at most {MAX_RATE:,.0f} requests per second (the engine's bound), got {rate:g}"
        )
    check_threads(threads, flags["threads"])
    _count(flags["max_in_flight"], max_in_flight, MAX_VUS)
    for field, value in (("max_in_flight", max_in_flight), ("send_slack", send_slack)):
        if value is not None and rate is None:
            raise BadInput(flags[field], f"only applies with {flags['rate']} (the open model)")
    streams_each = http2_streams(http2, streams, flags["streams"])
    # Over HTTP/2 a connection carries `streams` VUs: -c counts connections, as h2load's -c does.
    per_connection = streams_each or 1
    if connections is not None:
        _count(flags["connections"], connections * per_connection, MAX_VUS)
        connections *= per_connection
    target = TargetSpec(
        url=url, insecure=insecure, http2=None if streams_each is None else Http2Spec(streams=streams_each)
    )
    request = RequestSpec.build(method, _headers(headers, flags["header"]), _body(body, flags["body"]))
    limits = Limits(
        timeout_s=duration_flag(flags["timeout"], timeout),
        grace_period_s=duration_flag(flags["grace"], grace, positive=False),
        stream_idle_timeout_s=(
            None if stream_idle_timeout is None else duration_flag(flags["stream_idle_timeout"], stream_idle_timeout)
        ),
    )

    if duration_s is None and duration is not None:
        duration_s = duration_flag(flags["duration"], duration)
    if rate is not None:
        if requests is not None:
            # n requests at the rate take n/rate seconds; -d, if given, may cut it short.
            by_count = requests / rate
            duration_s = min(duration_s, by_count) if duration_s is not None else by_count
        limit = max_in_flight or default_max_in_flight()
        executor: Executor
        if connections is not None and connections > limit:
            raise BadInput(
                flags["connections"], f"{connections} connections up front exceed {flags['max_in_flight']} {limit}"
            )
        executor = ConstantArrivalRate(
            rate=rate,
            duration_s=duration_s or duration_flag(flags["duration"], DEFAULT_DURATION),
            max_vus=limit,
            pre_allocated_vus=connections,
        )
    elif requests is not None:
        vus = connections or DEFAULT_CONNECTIONS
        executor = SharedIterations(vus=min(vus, requests), iterations=requests, max_duration_s=duration_s or 600.0)
    else:
        executor = ConstantVus(
            vus=connections or DEFAULT_CONNECTIONS,
            duration_s=duration_s or duration_flag(flags["duration"], DEFAULT_DURATION),
        )
    plan = Plan.single(
        target,
        request,
        executor,
        limits=limits,
        threads=threads,
        send_slack_s=send_slack_flag(send_slack, flags["send_slack"]),
    )
    return plan


NOTHING_SENT = (
    "the run ended before any request was sent: -d/--duration is too short to open a connection, "
    "or to reach the first request -r/--rate schedules"
)
"""NOTHING_SENT says why a URL run that sent nothing exits 3 (an empty run, not bad input:
how long opening a connection takes depends on the machine, so no minimum is guessed)."""
