"""Durations as users write them: ``30s``, ``1m30s``, ``500ms``, ``2h``, or plain seconds."""

from __future__ import annotations

import re

_UNIT_SECONDS = {"us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_PART = re.compile(r"(\d+(?:\.\d+)?)(us|µs|ms|s|m|h)")


def parse_duration(text: str | float | int) -> float:
    """parse_duration returns the number of seconds ``text`` stands for.

    Accepts a bare number (seconds) or a sequence of number+unit parts (``1m30s``).
    Raises ValueError with an example of the accepted forms.
    """
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        seconds = float(text)
    else:
        raw = str(text).strip().lower()
        try:
            seconds = float(raw)
        except ValueError:
            pos, seconds = 0, 0.0
            for match in _PART.finditer(raw):
                if match.start() != pos:
                    break
                seconds += float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
                pos = match.end()
            if pos != len(raw) or not raw:
                raise ValueError(
                    f"'{text}' is not a duration (examples: 30s, 1m30s, 500ms, 2h)"
                ) from None
    if seconds != seconds or seconds < 0:  # NaN or negative
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
