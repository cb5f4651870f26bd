"""Units of the scenario format: durations (always with a unit) and rates (per second).

``Duration`` is a length of time that ``--time-scale`` leaves alone (timeouts);
``ScheduledDuration`` is one it scales (executor durations, stages, start times, think
times). Both validate ``500ms``, ``1.5s``, ``2m``, ``1h``, ``1m30s`` or a
``datetime.timedelta``, hold seconds as a float, and refuse bare numbers: ``30`` could mean
seconds or milliseconds, so the error asks for a unit.
"""

from __future__ import annotations

import math
import re
from datetime import timedelta
from typing import Annotated, Any

from pydantic import BeforeValidator, PlainSerializer
from pydantic_core import PydanticCustomError

from surge.durations import parse_duration

_BARE_NUMBER = re.compile(r"[+-]?\d+(\.\d+)?([eE][+-]?\d+)?")
_RATE = re.compile(r"\s*(\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)\s*(?:/\s*(ms|s|m|h|sec|min|second|minute|hour))?\s*")
_PER_SECOND = {"ms": 1000.0, "s": 1.0, "sec": 1.0, "second": 1.0,
               "m": 1 / 60, "min": 1 / 60, "minute": 1 / 60, "h": 1 / 3600, "hour": 1 / 3600}


class Scaled:
    """Scaled marks a duration field that ``--time-scale`` multiplies."""


def to_seconds(value: Any) -> float:
    """to_seconds validates a duration as a user wrote it and returns seconds.

    Raises PydanticCustomError (code ``duration``) naming the accepted forms; a bare
    number is refused with a hint to add a unit.
    """
    if isinstance(value, timedelta):
        seconds = value.total_seconds()
    elif isinstance(value, bool) or value is None or not isinstance(value, (int, float, str)):
        raise PydanticCustomError("duration", "expected a duration such as 500ms, 1.5s, 2m or 1h")
    elif isinstance(value, (int, float)) or _BARE_NUMBER.fullmatch(value.strip()):
        raise PydanticCustomError(
            "duration",
            "'{value}' has no unit: write '{value}s' for seconds or '{value}ms' for milliseconds",
            {"value": str(value).strip()},
        )
    else:
        try:
            seconds = parse_duration(value)
        except ValueError:
            raise PydanticCustomError(
                "duration", "'{value}' is not a duration (examples: 500ms, 1.5s, 2m, 1m30s, 1h)",
                {"value": value},
            ) from None
    if not math.isfinite(seconds) or seconds < 0:
        raise PydanticCustomError("duration", "a duration cannot be negative")
    return seconds


MAX_RATE = 10_000_000.0
"""MAX_RATE is the engine's bound on an arrival rate, per second (crates/surge-engine executor.rs)."""


def to_rate(value: Any) -> float:
    """to_rate validates a rate (``300``, ``300/s``, ``18000/m``, ``2/ms``) and returns it per second."""
    if isinstance(value, bool) or value is None or not isinstance(value, (int, float, str)):
        raise PydanticCustomError("rate", "expected a rate such as 300, 300/s or 18000/m")
    if isinstance(value, (int, float)):
        per_second = float(value)
    else:
        match = _RATE.fullmatch(value)
        if match is None:
            raise PydanticCustomError(
                "rate", "'{value}' is not a rate (examples: 300, 300/s, 18000/m, 50/h)", {"value": value}
            )
        per_second = float(match.group(1)) * _PER_SECOND[match.group(2) or "s"]
    if not math.isfinite(per_second) or per_second < 0:
        raise PydanticCustomError("rate", "a rate cannot be negative")
    if per_second > MAX_RATE:
        raise PydanticCustomError("rate", "{value} per second is above the most one plan may ask for "
                                  "(10,000,000/s, the engine's bound)", {"value": f"{per_second:g}"})
    return per_second


def format_seconds(seconds: float) -> str:
    """format_seconds renders seconds so that ``to_seconds`` reads them back exactly."""
    if seconds == int(seconds):
        return f"{int(seconds)}s"
    return f"{format(seconds * 1000, '.6f').rstrip('0').rstrip('.')}ms"


def format_rate(per_second: float) -> str:
    """format_rate renders a per-second rate as ``to_rate`` reads it back."""
    return f"{per_second:.12g}/s"


Duration = Annotated[float, BeforeValidator(to_seconds), PlainSerializer(format_seconds)]
"""Duration is seconds, written with a unit; ``--time-scale`` leaves it alone (timeouts)."""

ScheduledDuration = Annotated[float, BeforeValidator(to_seconds), PlainSerializer(format_seconds), Scaled()]
"""ScheduledDuration is seconds, written with a unit, multiplied by ``--time-scale``."""

Rate = Annotated[float, BeforeValidator(to_rate), PlainSerializer(format_rate)]
"""Rate is iterations per second, written ``300``, ``300/s`` or ``18000/m``."""
