"""The base of every scenario-file model: strict (unknown keys are errors), and a helper type
for the problems that checks beyond one field's shape report."""

from __future__ import annotations

import types
import typing
from functools import cache
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

Path = tuple[str | int, ...]
"""Path is a location in the scenario file: mapping keys and list indexes from the top."""

Finding = tuple[Path, str]
"""Finding is one problem found by a model's own ``problems()``: where (relative to the
model) and what is wrong."""


class FileModel(BaseModel):
    """FileModel is the base of the scenario-file models: unknown keys are refused, values
    are validated when assigned, numbers must be finite, and instances are compared field by field."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, allow_inf_nan=False)

    @model_validator(mode="before")
    @classmethod
    def _no_booleans_for_numbers(cls, data: Any) -> Any:
        """A boolean where a number is due (``vus: true``) is refused, not read as 1: it
        reaches the field as a value no number accepts, shown as written."""
        if not isinstance(data, dict):
            return data
        for key in _number_fields(cls):
            value = data.get(key)
            if isinstance(value, bool):
                data = {**data, key: _Boolean(value)}
            elif type(value) is list and any(isinstance(v, bool) for v in value):
                data = {**data, key: [_Boolean(v) if isinstance(v, bool) else v for v in value]}
        return data


class _Boolean:
    """_Boolean stands for a boolean given where a number is due: no number validator takes
    it, and errors show it as the file wrote it."""

    def __init__(self, value: bool) -> None:
        self.value = value

    def __repr__(self) -> str:
        return str(self.value).lower()

    __str__ = __repr__


def _leaves(tp: Any) -> list[Any]:
    """_leaves lists the types an annotation may hold (Annotated, Optional, unions and lists opened)."""
    origin = typing.get_origin(tp)
    if origin is typing.Annotated or origin is list:
        return _leaves(typing.get_args(tp)[0])
    if origin in (typing.Union, types.UnionType):
        return [t for arg in typing.get_args(tp) for t in _leaves(arg)]
    return [tp]


@cache
def _number_fields(model: type[BaseModel]) -> frozenset[str]:
    """_number_fields names the fields of ``model`` that hold numbers (or lists of them) and
    never a boolean."""
    out = set()
    for name, f in model.model_fields.items():
        leaves = _leaves(f.annotation)
        if bool not in leaves and (int in leaves or float in leaves):
            out.add(f.alias or name)
    return frozenset(out)
