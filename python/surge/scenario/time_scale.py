"""Time scale: ``--time-scale FACTOR`` scales how long a test lasts, never what it measures.
It multiplies the schedule: executor ``duration``, stage durations, ``start_time`` and
threshold ``delay``. What a request or an iteration lives through keeps its length: think
times, timeouts, ``latency_under``, ``graceful_stop``, ``graceful_ramp_down`` and
``max_duration`` (the bound of a count of iterations, which is not scaled either); rates and
counts stay too. So a shortened run offers the same load and sees the same rates and
latencies as the full one, only for less time."""

from __future__ import annotations

import math
import typing
from typing import Any, TypeVar

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from surge.core.errors import BadInput
from surge.core.units import format_limit
from surge.scenario.base import Path
from surge.scenario.problems import key_path
from surge.scenario.quantities import Scaled

M = TypeVar("M", bound=BaseModel)


def _scaled_marker(field: FieldInfo) -> Scaled | None:
    """_scaled_marker is the field's Scaled mark (also inside Optional[...]), or None."""
    for m in field.metadata:
        if isinstance(m, Scaled):
            return m
    pending = [field.annotation]
    while pending:
        tp = pending.pop()
        if typing.get_origin(tp) is typing.Annotated:
            for m in typing.get_args(tp)[1:]:
                if isinstance(m, Scaled):
                    return m
        pending += [a for a in typing.get_args(tp) if a is not None]
    return None


def check_factor(factor: float) -> float:
    """check_factor returns ``factor`` if it is a finite number above zero; otherwise a
    BadInput naming ``--time-scale`` (a ValueError; exit code 2 in the CLI)."""
    if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not math.isfinite(factor) or factor <= 0:
        raise BadInput(
            "--time-scale", f"the time scale must be a number above 0 (0.1 runs ten times faster), got {factor!r}"
        )
    return float(factor)


def scale_time(model: M, factor: float) -> M:
    """scale_time returns a copy of ``model`` with every scheduled duration multiplied by
    ``factor`` (the model itself when the factor is 1); BadInput naming ``--time-scale`` for
    a factor not above 0, or one that stretches a duration past its bound."""
    factor = check_factor(factor)
    return model if factor == 1.0 else _scale(model, factor, ())


def _scale(value: Any, factor: float, path: Path) -> Any:
    if isinstance(value, BaseModel):
        updates: dict[str, Any] = {}
        for name, field in type(value).model_fields.items():
            current = getattr(value, name)
            key = field.alias or name
            marker = _scaled_marker(field) if isinstance(current, float) else None
            if marker is not None:
                updates[name] = _stretched(current * factor, marker.most, factor, (*path, key))
            else:
                scaled = _scale(current, factor, (*path, key))
                if scaled is not current:
                    updates[name] = scaled
        return value.model_copy(update=updates) if updates else value
    if isinstance(value, list):
        items = [_scale(v, factor, (*path, i)) for i, v in enumerate(value)]
        return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
    if isinstance(value, dict):
        scaled_dict = {k: _scale(v, factor, (*path, k)) for k, v in value.items()}
        return scaled_dict if any(scaled_dict[k] is not v for k, v in value.items()) else value
    return value


def _stretched(seconds: float, most: float, factor: float, path: Path) -> float:
    if seconds > most:
        raise BadInput(
            "--time-scale",
            f"{factor:g} makes {key_path(path)} {seconds:.6g}s, longer than {format_limit(most)}, the most it may be",
        )
    return seconds
