"""Units as users write them, one parser per unit, the same in a flag and in a scenario file
(docs/scenarios.md, "Units"):

- a **duration** has a unit: ``500ms``, ``1.5s``, ``2m``, ``1h``, ``1m30s``, ``200us``, ``7d``;
  a bare number is refused (``30`` could be seconds or, to a k6 user, milliseconds), except
  ``0``, which is the same in every unit (as Go's ``time.ParseDuration`` has it);
- a **rate** is per second: ``300`` or ``300/s``, ``18000/m``, ``2/ms``, ``50/h``; no ``k``;
- a **percentage** is ``5%``, or a fraction from 0 to 1 (``0.05``), as k6's thresholds write it;
  a bare number above 1 is refused (``5`` could be 5 % or 500 %);
- a **size** is never read from input today; ``size_text`` prints one (``8 MiB``).

Each parser raises ValueError with a one-line message quoting the value; the ``*_flag``
readers turn it into BadInput naming the flag, the scenario layer into FILE:LINE.
"""

from __future__ import annotations

import math
import re
from datetime import timedelta
from decimal import Decimal

from surge.core.errors import BadInput
from surge.core.limits import MAX_DURATION_S

SECONDS_PER_UNIT = {
    "us": Decimal("1e-6"),
    "µs": Decimal("1e-6"),
    "ms": Decimal("1e-3"),
    "s": Decimal(1),
    "m": Decimal(60),
    "h": Decimal(3600),
    "d": Decimal(86400),
    "w": Decimal(7 * 86400),
}
"""SECONDS_PER_UNIT are the units of a duration, in seconds (Decimal, so that 200us is 0.0002 s
exactly as a float shows it: 200 * 1e-6 is not)."""

PER_SECOND = {
    "ms": 1000.0,
    "s": 1.0,
    "sec": 1.0,
    "second": 1.0,
    "m": 1 / 60,
    "min": 1 / 60,
    "minute": 1 / 60,
    "h": 1 / 3600,
    "hour": 1 / 3600,
}
"""PER_SECOND are the time units a rate may be given per (``18000/m``), as events per second."""

DURATION_EXAMPLES = "examples: 500ms, 1.5s, 2m, 1m30s, 1h"
"""DURATION_EXAMPLES are the forms a duration error suggests."""

RATE_EXAMPLES = "examples: 300, 300/s, 18000/m, 50/h"
"""RATE_EXAMPLES are the forms a rate error suggests."""

_UNITS = "|".join(sorted(map(re.escape, SECONDS_PER_UNIT), key=len, reverse=True))
_PART = re.compile(rf"(\d+(?:\.\d+)?)({_UNITS})")
_BARE_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|[+-]?(?:inf|infinity|nan)", re.IGNORECASE)
_RATE_UNITS = "|".join(sorted(PER_SECOND, key=len, reverse=True))
_RATE = re.compile(rf"\s*(\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)\s*/\s*({_RATE_UNITS})\s*")


def parse_duration(value: str | float | timedelta) -> float:
    """parse_duration returns the seconds a duration stands for (module doc: a unit is required
    but for 0). A bare number that could not be a length (not a number, negative) says so, and
    an infinite one is returned, for the caller's bound to refuse as too long. ValueError
    quotes the value and gives examples."""
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError("expected a duration such as 500ms, 1.5s, 2m or 1h")
    text = str(value).strip()
    if isinstance(value, (int, float)) or _BARE_NUMBER.fullmatch(text):
        seconds = float(text)
        if math.isnan(seconds):
            raise ValueError(f"'{text}' is not a duration: it must be a finite number of seconds")
        if seconds < 0:
            raise ValueError(f"'{text}' is not a duration: it must not be negative")
        if seconds == 0 or math.isinf(seconds):
            return abs(seconds)
        raise ValueError(f"'{text}' has no unit: write '{text}s' for seconds or '{text}ms' for milliseconds")
    raw, pos, total = text.lower(), 0, Decimal(0)
    for match in _PART.finditer(raw):
        if match.start() != pos:
            break
        total += Decimal(match.group(1)) * SECONDS_PER_UNIT[match.group(2)]
        pos = match.end()
    if pos != len(raw) or not raw:
        raise ValueError(f"'{value}' is not a duration ({DURATION_EXAMPLES})")
    return float(total)


def parse_rate(value: str | float) -> float:
    """parse_rate returns a rate per second: a bare number is per second (whatever its sign or
    size: bounds are the caller's), ``N/UNIT`` is N per ``ms``, ``s``, ``m`` or ``h`` (``sec``,
    ``min``, ``hour`` too). ValueError quotes the value and gives examples."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError("expected a rate such as 300, 300/s or 18000/m")
    if isinstance(value, (int, float)):
        return float(value)
    if _BARE_NUMBER.fullmatch(value.strip()):
        return float(value)
    match = _RATE.fullmatch(value)
    if match is None:
        raise ValueError(f"'{value}' is not a rate ({RATE_EXAMPLES})")
    return float(match.group(1)) * PER_SECOND[match.group(2)]


def parse_percent(text: str) -> float:
    """parse_percent returns a percentage as a fraction: ``5%`` is 0.05, a bare number from 0
    to 1 is that fraction; ValueError for anything else (a bare number above 1 is ambiguous: the
    message shows both readings)."""
    raw = text.strip()
    number = raw.removesuffix("%").strip()
    try:
        value = float(number) if _BARE_NUMBER.fullmatch(number) else math.nan
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"'{text}' is not a percentage")
    if raw.endswith("%"):
        return value / 100
    if value > 1:
        raise ValueError(f"'{text}' is ambiguous: write {number}% for {number} percent, or a fraction from 0 to 1")
    return value


def duration_flag(flag: str, text: str, *, positive: bool = True) -> float:
    """duration_flag reads a duration flag's text in seconds (above zero unless not ``positive``,
    at most MAX_DURATION_S); BadInput names ``flag``."""
    try:
        seconds = parse_duration(text)
    except ValueError as e:
        raise BadInput(flag, str(e)) from None
    if positive and seconds <= 0:
        raise BadInput(flag, f"must be above zero, got '{text}'")
    if not seconds <= MAX_DURATION_S:  # inf too
        raise BadInput(
            flag, f"'{text}' is longer than {format_limit(MAX_DURATION_S)}, the longest duration surge accepts"
        )
    return seconds


def percent_flag(flag: str, text: str, *, above_zero: bool, example: str) -> float:
    """percent_flag reads a percentage flag (``parse_percent``) as a fraction, above 0 when
    ``above_zero``; BadInput names ``flag`` and shows ``example`` (``10%``)."""
    try:
        value = parse_percent(text)
    except ValueError as e:
        if "ambiguous" in str(e):
            raise BadInput(flag, str(e)) from None
        value = math.nan
    if not (value > 0 if above_zero else value >= 0):
        low = "above 0 " if above_zero else ""
        raise BadInput(flag, f"expected a percentage {low}such as {example}, got '{text}'")
    return value


def format_duration(seconds: float) -> str:
    """format_duration renders seconds compactly: ``850ms``, ``12.5s``, ``3m05s``."""
    if seconds < 1:
        return f"{seconds * 1000:.0f}ms"
    if seconds < 60:
        return f"{seconds:.1f}s".replace(".0s", "s")
    minutes, rest = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{rest:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def format_limit(seconds: float) -> str:
    """format_limit renders a bound in its largest whole unit: ``720h``, ``1h``, ``90s``."""
    for unit, size in (("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"


def size_text(n: int) -> str:
    """size_text renders a byte count as people read it: ``512 bytes``, ``8 MiB``, ``1.5 GiB``."""
    if n < 1024:
        return f"{n} bytes"
    value, units = n / 1024, ["KiB", "MiB", "GiB", "TiB"]
    while value >= 1024 and len(units) > 1:
        value /= 1024
        units.pop(0)
    return f"{value:.3g} {units[0]}"


def format_seconds(seconds: float) -> str:
    """format_seconds renders seconds so that ``parse_duration`` reads them back exactly."""
    if seconds == int(seconds):
        return f"{int(seconds)}s"
    return f"{format(seconds * 1000, '.6f').rstrip('0').rstrip('.')}ms"


def format_rate(per_second: float) -> str:
    """format_rate renders a per-second rate as ``parse_rate`` reads it back."""
    return f"{per_second:.12g}/s"
