"""Units of the scenario format: the pydantic types of durations and rates, read by
``surge.core.units`` (the one parser a flag uses too; docs/scenarios.md, "Units").

``Duration`` is a length of time that ``--time-scale`` leaves alone (timeouts, think
times, graceful stops and ramp-downs, max durations); ``ScheduledDuration`` is one it
scales (executor durations, stages, start times, threshold delays). Both validate ``500ms``,
``1.5s``, ``2m``, ``1h``, ``1m30s`` or a ``datetime.timedelta``, hold seconds as a float, and
refuse bare numbers but 0: ``30`` could mean seconds or milliseconds, so the error asks for a
unit. Every duration is at most ``MAX_DURATION_S`` (start times and think times less:
``surge.core.limits``).
"""

from __future__ import annotations

import math
from typing import Annotated, Any

from pydantic import BeforeValidator, PlainSerializer
from pydantic_core import PydanticCustomError

from surge.core.limits import (
    MAX_DURATION_S,
    MAX_RATE,
    MAX_SEND_SLACK_S,
    MAX_START_TIME_S,
    MAX_THINK_S,
    SEND_SLACK_RANGE,
)
from surge.core.units import format_limit, format_rate, format_seconds, parse_duration, parse_rate


class Scaled:
    """Scaled marks a duration field that ``--time-scale`` multiplies; ``most`` is the
    longest it may be once scaled."""

    def __init__(self, most: float = MAX_DURATION_S) -> None:
        self.most = most


def to_seconds(value: Any) -> float:
    """to_seconds validates a duration as a user wrote it (``surge.core.units.parse_duration``)
    and returns seconds; PydanticCustomError (code ``duration``) says what is wrong."""
    try:
        seconds = parse_duration(value)
    except ValueError as e:
        raise PydanticCustomError("duration", "{message}", {"message": str(e)}) from None
    return _at_most(value, seconds, MAX_DURATION_S, "the longest duration surge accepts")


def _at_most(value: Any, seconds: float, most: float, what: str) -> float:
    if seconds > most:
        shown = _clip(str(value)) if isinstance(value, str) or not math.isfinite(seconds) else format_seconds(seconds)
        raise PydanticCustomError(
            "duration",
            "'{value}' is longer than {most}, {what}",
            {"value": shown, "most": format_limit(most), "what": what},
        )
    return seconds


def _clip(text: str, most: int = 40) -> str:
    return text if len(text) <= most else text[:most] + "…"


def to_start_time(value: Any) -> float:
    """to_start_time is ``to_seconds`` for a scenario's start time: at most a day (the engine's bound)."""
    return _at_most(value, to_seconds(value), MAX_START_TIME_S, "the latest a scenario may start")


def to_think_seconds(value: Any) -> float:
    """to_think_seconds is ``to_seconds`` for a think time: at most an hour (the engine's bound)."""
    return _at_most(value, to_seconds(value), MAX_THINK_S, "the longest think time")


def to_send_slack(value: Any) -> float:
    """to_send_slack is ``to_seconds`` for the open model's send slack: at most MAX_SEND_SLACK_S."""
    seconds = to_seconds(value)
    if seconds > MAX_SEND_SLACK_S:
        raise PydanticCustomError("duration", SEND_SLACK_RANGE + ", got '{value}'", {"value": _clip(str(value))})
    return seconds


def to_rate(value: Any) -> float:
    """to_rate validates a rate (``300``, ``300/s``, ``18000/m``, ``2/ms``: ``surge.core.units.parse_rate``)
    and returns it per second; PydanticCustomError (code ``rate``) says what is wrong."""
    try:
        per_second = parse_rate(value)
    except ValueError as e:
        raise PydanticCustomError("rate", "{message}", {"message": str(e)}) from None
    if not math.isfinite(per_second):
        raise PydanticCustomError("rate", "'{value}' is not a finite rate", {"value": _clip(str(value))})
    if per_second < 0:
        raise PydanticCustomError("rate", "a rate cannot be negative")
    if per_second > MAX_RATE:
        raise PydanticCustomError(
            "rate",
            "{value} per second is above the most one plan may ask for (10,000,000/s, the engine's bound)",
            {"value": f"{per_second:g}"},
        )
    return per_second


Duration = Annotated[float, BeforeValidator(to_seconds), PlainSerializer(format_seconds)]
"""Duration is seconds, written with a unit; ``--time-scale`` leaves it alone (timeouts)."""

ScheduledDuration = Annotated[float, BeforeValidator(to_seconds), PlainSerializer(format_seconds), Scaled()]
"""ScheduledDuration is seconds, written with a unit, multiplied by ``--time-scale``."""

StartTime = Annotated[float, BeforeValidator(to_start_time), PlainSerializer(format_seconds), Scaled(MAX_START_TIME_S)]
"""StartTime is a scenario's start offset: a ScheduledDuration of at most a day."""

ThinkDuration = Annotated[float, BeforeValidator(to_think_seconds), PlainSerializer(format_seconds)]
"""ThinkDuration is a think time's length: a Duration of at most an hour (not scaled: a
user's pause is part of what a test measures)."""

SendSlack = Annotated[float, BeforeValidator(to_send_slack), PlainSerializer(format_seconds)]
"""SendSlack is how late an open-model send may go out to be batched: a Duration of at most
100 ms (not scaled: it is a property of the generator, not of the test's schedule)."""

Rate = Annotated[float, BeforeValidator(to_rate), PlainSerializer(format_rate)]
"""Rate is iterations per second, written ``300``, ``300/s`` or ``18000/m``."""
