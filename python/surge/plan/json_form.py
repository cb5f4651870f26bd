"""The engine's JSON form of the plan's dataclasses (``surge.plan.model``,
``surge.plan.scenario_parts``): a dataclass is an object of its fields in their order, under
their JSON names (a field's ``metadata["json"]``, else its name), tuples written as lists, and
read back field by field, a tagged union by its tag (``type``, ``from``), unknown keys refused
as the engine refuses them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import MISSING, Field, fields, is_dataclass
from typing import Any, TypeVar

OMITTED_AT_DEFAULT = {"omit_default": True}
"""OMITTED_AT_DEFAULT marks a field ``to_dict`` leaves out while it holds its default (the
engine then applies its own): the plan's ``send_slack_s``, ``percentiles`` and
``interval_totals``, a rows variable's ``rows`` and ``cells`` (the engine writes them so too)."""

_T = TypeVar("_T")


def _json_name(f: Field[Any]) -> str:
    return str(f.metadata.get("json", f.name))


def _default(f: Field[Any]) -> Any:
    if f.default is not MISSING:
        return f.default
    if f.default_factory is not MISSING:
        return f.default_factory()
    return MISSING


def to_json_value(value: Any) -> Any:
    """to_json_value is ``value`` as JSON-ready data: a dataclass as an object of its fields under
    their JSON names, tuples as lists."""
    if is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {}
        for f in fields(value):
            item = getattr(value, f.name)
            if f.metadata.get("omit_default") and item == _default(f):
                continue
            out[_json_name(f)] = to_json_value(item)
        return out
    if isinstance(value, (list, tuple)):
        return [to_json_value(v) for v in value]
    if isinstance(value, dict):
        return {k: to_json_value(v) for k, v in value.items()}
    return value


Parsers = Mapping[str, Callable[[Any], Any]]
"""Parsers read a field's nested JSON value, by field name (``from_json_object``)."""


def from_json_object(cls: type[_T], data: Mapping[str, Any], parsers: Parsers | None = None) -> _T:
    """from_json_object builds ``cls`` from its JSON object ``data`` (keys by JSON name; ``parsers``
    read the nested ones by field name); ValueError for a key ``cls`` does not have, as the
    engine refuses unknown fields."""
    known = {_json_name(f): f.name for f in fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise ValueError(f"{cls.__name__}: unknown field(s) {', '.join(unknown)}")
    kwargs = {}
    for key, value in data.items():
        name = known[key]
        parse = (parsers or {}).get(name)
        kwargs[name] = parse(value) if parse is not None and value is not None else value
    return cls(**kwargs)


def from_tagged(union: Iterable[type[Any]], tag: str, data: Mapping[str, Any], what: str) -> Any:
    """from_tagged builds the member of ``union`` whose ``tag`` field's default is ``data[tag]``."""
    by_tag = {_default(next(f for f in fields(c) if _json_name(f) == tag)): c for c in union}
    cls = by_tag.get(data.get(tag))
    if cls is None:
        raise ValueError(f"{what}: unknown {tag} {data.get(tag)!r}")
    return from_json_object(cls, data)
