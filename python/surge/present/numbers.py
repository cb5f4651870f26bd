"""The one number formatter (docs/reports.md, "Numbers"): how the terminal (``surge run``,
``show``, ``history``, every experiment's tables), report.md and report.html write a number, one
rule per unit and one mark for a figure the record does not hold, so that a reader (and the
test that parses the tables back) knows how far each figure was rounded."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, TypeGuard

MISSING = "-"
"""MISSING is what a table shows for a figure the record does not hold (an import's tool did
not report it): never an estimate."""


def is_number(value: Any) -> TypeGuard[float]:
    """is_number tells a JSON number from anything else (a bool is not one)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


THREE_DECIMALS = "{:,.3f}"
"""THREE_DECIMALS is the rule of milliseconds, seconds, cores and percentages: three decimals,
thousands separated."""


def _written(value: Any, form: str, scale: Callable[[Any], Any] | None = None) -> str:
    """_written is ``value`` (through ``scale`` first, when given) written by ``form``, or MISSING
    when it is not a number."""
    if not is_number(value):
        return MISSING
    return form.format(value if scale is None else scale(value))


def rate(value: Any) -> str:
    """rate writes a per-second figure with one decimal and thousands separators: ``69,839.5``."""
    return _written(value, "{:,.1f}")


def ms(value: Any) -> str:
    """ms writes a latency in milliseconds with three decimals (the histograms' microsecond
    resolution): ``0.027``."""
    return _written(value, THREE_DECIMALS)


def count(value: Any) -> str:
    """count writes an integer count with thousands separators: ``139,702``."""
    return _written(value, "{:,}", int)


def mean(value: Any) -> str:
    """mean writes an average of counts with one decimal and thousands separators: ``9.8``."""
    return _written(value, "{:,.1f}")


def percent(value: Any) -> str:
    """percent writes a fraction (0–1) as a percentage with three decimals: ``99.875%``."""
    return _written(value, THREE_DECIMALS + "%", lambda v: v * 100)


def seconds(value: Any) -> str:
    """seconds writes a duration in seconds with three decimals: ``2.000``."""
    return _written(value, THREE_DECIMALS)


def cores(value: Any) -> str:
    """cores writes CPU use in cores (1.0 = one core busy) with three decimals: ``0.282``."""
    return _written(value, THREE_DECIMALS)


def mib(value: Any) -> str:
    """mib writes a size in bytes as mebibytes with one decimal: ``121.5 MiB``."""
    return _written(value, "{:,.1f} MiB", lambda v: v / 2**20)


def size(value: Any) -> str:
    """size writes a traffic volume in bytes with decimal units, bytes whole and the others with
    one decimal: ``512 B``, ``1.2 KB``, ``34.5 MB``, ``1.0 GB``."""
    if not is_number(value):
        return MISSING
    n = float(value)
    for unit in ("B", "KB", "MB"):
        if n < 1000:
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1000
    return f"{n:,.1f} GB"


def micros(value: Any) -> str:
    """micros writes a time in microseconds (CPU per request) with one decimal: ``12.5``."""
    return _written(value, "{:,.1f}")


def busy(value: Any) -> str:
    """busy writes how busy a thread was (a fraction of its time) as a whole percentage: ``93%``."""
    return _written(value, "{:.0%}")


def times(value: Any) -> str:
    """times writes a scaling ratio (throughput or load between two levels) with two decimals
    and ``×``, as the scaling sentences of an experiment's record do: ``2.40×``."""
    return _written(value, "{:,.2f}×")


def efficiency(value: Any) -> str:
    """efficiency writes a scaling efficiency (a fraction: throughput ratio / load ratio) as a
    whole percentage, as the scaling sentences do: ``112 %``."""
    return _written(value, "{:.0%}").replace("%", " %")


def general(value: Any) -> str:
    """general writes any other figure (a threshold's observed value, a USL parameter) with six
    significant digits: ``0.0123457``."""
    return _written(value, "{:.6g}")


def figure(value: Any, name: str) -> str:
    """figure writes a key figure (surge.record.figures) by its unit: ``*_per_s`` a rate,
    ``*_ms`` a latency, ``failure_rate`` and ``*_rate`` a percentage, any other ``general``."""
    if name.endswith("_per_s"):
        return rate(value)
    if name.endswith("_ms"):
        return ms(value)
    if name.endswith("_rate") or name.endswith("_share"):
        return percent(value)
    return general(value)


def level(value: Any) -> str:
    """level writes a confidence level (a fraction) as a plain percentage: 0.95 is ``95%``."""
    return _written(value, "{:g}%", lambda v: v * 100)


def plain(value: Any) -> str:
    """plain writes an experiment's parameter: a list comma-separated, a number with ``g``,
    None as MISSING, anything else as text."""
    if value is None:
        return MISSING
    if isinstance(value, (list, tuple)):
        return ", ".join(plain(v) for v in value) or MISSING
    return f"{value:g}" if is_number(value) else str(value)


SPREAD_DIGITS = 2
"""SPREAD_DIGITS is how many significant digits a spread (an SD, a CI's half-width) is shown with."""

MAX_DECIMALS = 6
"""MAX_DECIMALS bounds the decimals the spread rule may ask for."""


def spread_decimals(spread: Any, default: int) -> int:
    """spread_decimals is how many decimals figures of a spread ``spread`` keep: enough to show
    the spread with SPREAD_DIGITS significant digits (0.38 → 2, 1.06 → 1, 50.25 → 0), never
    fewer than the unit's ``default`` nor more than MAX_DECIMALS; ``default`` without a
    positive spread."""
    if not is_number(spread) or not math.isfinite(spread) or spread <= 0:
        return default
    return min(MAX_DECIMALS, max(default, SPREAD_DIGITS - 1 - math.floor(math.log10(spread))))


def figure_with_spread(value: Any, name: str, spread: Any) -> str:
    """figure_with_spread writes a key figure as ``figure`` does, with the decimals its spread
    supports (spread_decimals; a spread in the figure's unit): a rate of SD 0.38 as ``21.88``
    where ``figure`` writes ``21.9``. A percentage's spread is a fraction, like its value."""
    if not is_number(value):
        return MISSING
    if name.endswith("_per_s"):
        return f"{value:,.{spread_decimals(spread, 1)}f}"
    if name.endswith("_ms"):
        return f"{value:,.{spread_decimals(spread, 3)}f}"
    if name.endswith("_rate") or name.endswith("_share"):
        places = spread_decimals(spread * 100 if is_number(spread) else None, 3)
        return f"{value * 100:,.{places}f}%"
    return general(value)
