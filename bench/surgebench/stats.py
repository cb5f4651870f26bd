"""Medians and spreads over repeated runs; rate over the steady part of a run."""

from __future__ import annotations

import statistics


def summary(values) -> dict | None:
    """summary is median, min, max and spread ((max-min)/median, %) of the non-None values."""
    vals = [v for v in values if v is not None]
    if not vals:
        return None
    med = statistics.median(vals)
    return {
        "n": len(vals),
        "median": med,
        "min": min(vals),
        "max": max(vals),
        "spread_pct": (max(vals) - min(vals)) / med * 100 if med else None,
        "values": vals,
    }


def steady_rate(samples, trim_s: float = 1.0) -> dict | None:
    """steady_rate is the server-side arrival rate over the run's active intervals.

    samples are (t, requests so far) readings taken by the harness. Intervals in which the
    count grew are the active ones; trim_s of them is dropped at each end (start-up and
    shutdown), and the rate is the count grown over the time elapsed across what is left.
    """
    pts = [(s.t, s.requests) for s in samples]
    active = [i for i in range(1, len(pts)) if pts[i][1] > pts[i - 1][1]]
    if len(active) < 3:
        return None
    first, last = active[0], active[-1]
    step = (pts[last][0] - pts[first - 1][0]) / (last - first + 1)
    trim = max(1, round(trim_s / step)) if step > 0 else 1
    lo, hi = first - 1 + trim, last - trim
    if hi - lo < 2:
        return None
    dt = pts[hi][0] - pts[lo][0]
    per = [(pts[i][1] - pts[i - 1][1]) / (pts[i][0] - pts[i - 1][0]) for i in range(lo + 1, hi + 1)]
    return {
        "rate": (pts[hi][1] - pts[lo][1]) / dt,
        "window_s": dt,
        "window_start_s": pts[lo][0],
        "interval_min": min(per),
        "interval_max": max(per),
        "intervals": len(per),
    }


def fmt(value, spec: str = ",.0f", missing: str = "—") -> str:
    """fmt formats a number, or returns missing for None."""
    return missing if value is None else format(value, spec)


def fmt_summary(s: dict | None, spec: str = ",.0f") -> str:
    """fmt_summary is 'median [min–max]'."""
    if not s:
        return "—"
    if s["n"] == 1:
        return format(s["median"], spec)
    return f"{format(s['median'], spec)} [{format(s['min'], spec)}–{format(s['max'], spec)}]"
