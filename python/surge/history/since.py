"""``--since``: an ISO 8601 date or time (UTC when it names no zone), or a duration back from
now (``2h``, ``7d``, ``1w``, ``1d12h``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from surge.core.errors import BadInput
from surge.core.units import parse_duration


def _duration_s(text: str) -> float | None:
    """_duration_s is ``text`` as seconds (a surge duration, ``surge.core.units``: ``2h``, ``7d``,
    ``1w``), or None."""
    if text.strip().startswith("-"):
        return None
    try:
        return parse_duration(text)
    except ValueError:
        return None


def parse_since(text: str, now: datetime | None = None) -> datetime:
    """parse_since is the UTC time ``--since`` names; BadInput when it is neither a time nor a duration."""
    seconds = _duration_s(text)
    if seconds is not None:
        try:
            return (now or datetime.now(UTC)) - timedelta(seconds=seconds)
        except (OverflowError, ValueError):  # further back than year 1, or not a number of seconds
            raise BadInput(
                "--since", f"'{text}' reaches back before the year 1 (give a shorter duration, or a date)"
            ) from None
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise BadInput(
            "--since", f"'{text}' is neither a date or time (2026-11-23, 2026-11-23T14:00) nor a duration (30m, 2h, 7d)"
        ) from None
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)
