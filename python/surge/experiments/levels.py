"""Sweep levels: what ``surge sweep --vus`` and ``--rates`` accept (docs/experiments.md, "surge
sweep"): a comma-separated list (``100,500,1000``), a geometric series ``START:END:xFACTOR``
(``100:3200:x2`` is 100, 200, 400, ..., 3200) or an arithmetic one ``START:END:+STEP``
(``100:500:+100``); a rate may carry its unit, as anywhere (``6000/m``: ``surge.core.units``).
A series stops at the last term not beyond END. Levels run from the lightest to the heaviest;
VU levels are whole numbers."""

from __future__ import annotations

import math
import re

from surge.core.errors import BadInput
from surge.core.limits import MAX_RATE, MAX_VUS
from surge.core.units import parse_rate

MAX_LEVELS = 100
"""MAX_LEVELS bounds how many levels one sweep runs."""

_SERIES = re.compile(r"^\s*([^:]+):([^:]+):\s*([x+])\s*([^:]+)$")
_EPSILON = 1e-9  # a term within this relative distance of END is END (0.1 × 3 is not quite 0.3)


def _number(flag: str, text: str, what: str, rate: bool = False) -> float:
    try:
        value = parse_rate(text) if rate else float(text.strip())
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise BadInput(flag, f"expected a number for {what}, got '{text.strip()}'")
    return value


def _series(flag: str, start: float, end: float, op: str, step: float) -> list[float]:
    if end < start:
        raise BadInput(flag, f"END ({end:g}) is below START ({start:g})")
    if op == "x" and not step > 1:
        raise BadInput(flag, f"the factor after x must be above 1, got {step:g}")
    if op == "+" and not step > 0:
        raise BadInput(flag, f"the step after + must be above 0, got {step:g}")
    terms: list[float] = []
    i = 0
    while True:
        term = start * step**i if op == "x" else start + step * i
        if term > end * (1 + _EPSILON):
            return terms
        terms.append(min(term, end))
        if len(terms) > MAX_LEVELS:
            raise BadInput(flag, f"more than {MAX_LEVELS} levels: use a larger factor or step")
        i += 1


def parse_levels(flag: str, text: str, *, whole: bool, most: float) -> list[float]:
    """parse_levels reads ``--vus`` (``whole``: VUs, rounded to whole numbers) or ``--rates``
    levels: a list or a series (module doc), above 0 and at most ``most``, distinct (a series'
    repeats after rounding dropped), at most MAX_LEVELS; returned lightest first. BadInput names ``flag``."""
    match = _SERIES.match(text)
    if match:
        start = _number(flag, match.group(1), "START", rate=not whole)
        end = _number(flag, match.group(2), "END", rate=not whole)
        step = _number(
            flag,
            match.group(4),
            "the factor" if match.group(3) == "x" else "the step",
            rate=not whole and match.group(3) == "+",
        )
        if not start > 0:
            raise BadInput(flag, f"START must be above 0, got {start:g}")
        values = _series(flag, start, end, match.group(3), step)
    elif ":" in text:
        raise BadInput(
            flag, f"expected a list (100,500,1000) or a series START:END:xFACTOR or START:END:+STEP, got '{text}'"
        )
    else:
        values = [_number(flag, part, "a level", rate=not whole) for part in text.split(",")] if text.strip() else []
    if not values:
        raise BadInput(flag, "no levels given")
    if whole:
        values = [float(round(v)) for v in values]
        if match:  # a slow series repeats a whole number (1, 1.2, 1.44 -> 1, 1, 1): once is enough
            values = list(dict.fromkeys(values))
    unit = " VUs" if whole else "/s"
    for value in values:
        if not (value > 0 if not whole else value >= 1) or value > most:
            low = "1" if whole else "above 0"
            raise BadInput(flag, f"a level must be from {low} to {most:,.0f}{unit}, got {value:g}")
    if len(set(values)) != len(values):
        repeated = sorted({v for v in values if values.count(v) > 1})
        raise BadInput(
            flag,
            f"a level is given twice: {', '.join(f'{v:g}' for v in repeated)}"
            + (" (once rounded to whole VUs)" if whole else ""),
        )
    if len(values) > MAX_LEVELS:
        raise BadInput(flag, f"more than {MAX_LEVELS} levels")
    return sorted(values)


def parse_vus(text: str) -> list[int]:
    """parse_vus reads ``--vus``: whole VU counts from 1 to MAX_VUS."""
    return [int(v) for v in parse_levels("--vus", text, whole=True, most=MAX_VUS)]


def parse_rates(text: str) -> list[float]:
    """parse_rates reads ``--rates``: arrival rates per second, above 0 and at most MAX_RATE."""
    return parse_levels("--rates", text, whole=False, most=MAX_RATE)
