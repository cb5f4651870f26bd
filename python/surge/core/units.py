"""Durations as users write them: ``30s``, ``1m30s``, ``500ms``, ``2h``, or plain seconds."""

from __future__ import annotations

import math
import re
from decimal import Decimal

# Decimal, so that 200us is 0.0002 s exactly as a float shows it (200 * 1e-6 is not).
_UNIT_SECONDS = {
    "us": Decimal("1e-6"),
    "µs": Decimal("1e-6"),
    "ms": Decimal("1e-3"),
    "s": Decimal(1),
    "m": Decimal(60),
    "h": Decimal(3600),
}
_PART = re.compile(r"(\d+(?:\.\d+)?)(us|µs|ms|s|m|h)")


def parse_duration(text: str | float | int) -> float:
    """parse_duration returns the number of seconds ``text`` stands for.

    Accepts a bare number (seconds) or a sequence of number+unit parts (``1m30s``); units
    ``us`` (or ``µs``), ``ms``, ``s``, ``m``, ``h``.
    Raises ValueError with an example of the accepted forms.
    """
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        seconds = float(text)
    else:
        raw = str(text).strip().lower()
        try:
            seconds = float(raw)
        except ValueError:
            pos, total = 0, Decimal(0)
            for match in _PART.finditer(raw):
                if match.start() != pos:
                    break
                total += Decimal(match.group(1)) * _UNIT_SECONDS[match.group(2)]
                pos = match.end()
            if pos != len(raw) or not raw:
                raise ValueError(f"'{text}' is not a duration (examples: 30s, 1m30s, 500ms, 200us, 2h)") from None
            seconds = float(total)
    if math.isnan(seconds):  # (infinity is refused as longer than the longest duration)
        raise ValueError(f"'{text}' is not a duration: it must be a finite number of seconds")
    if seconds < 0:
        raise ValueError(f"'{text}' is not a duration: it must not be negative")
    return seconds


def format_duration(seconds: float) -> str:
    """format_duration renders seconds compactly: ``850ms``, ``12.5s``, ``3m05s``."""
    if seconds < 1:
        return f"{seconds * 1000:.0f}ms"
    if seconds < 60:
        return f"{seconds:.1f}s".replace(".0s", "s")
    minutes, rest = divmod(int(round(seconds)), 60)
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
