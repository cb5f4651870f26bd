"""Loading a scenario file: YAML → models, with every mistake reported as
``FILE:LINE: key.path: message`` (all of them, in line order) in one ScenarioError."""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Mapping
from pathlib import Path as FsPath
from typing import Any

from pydantic import BaseModel, ValidationError

from surge.core.files import FileReadError, read_bounded
from surge.core.limits import MAX_SCENARIO_FILE_BYTES
from surge.core.units import size_text
from surge.scenario.base import Path
from surge.scenario.file import ScenarioFile, paused_gc
from surge.scenario.lines import YamlSyntaxError, line_of, parse_yaml
from surge.scenario.models import Phase
from surge.scenario.problems import Problem, ScenarioError

_MISPLACED = {
    ("Request", "name"): "name belongs to the step, beside request",
    ("Request", "think_time"): "think_time belongs to the step, beside request",
    ("Request", "check"): "check belongs to the step, beside request",
    ("Request", "capture"): "capture belongs to the step, beside request",
    ("Step", "timeout"): "timeout belongs in request",
    ("Step", "method"): "method belongs in request",
    ("Step", "path"): "path belongs in request",
    ("Step", "headers"): "headers belongs in request",
    ("Step", "weight"): "weight belongs to a mix entry (mix: [{weight: 70, flow: [...]}])",
    ("Scenario", "vus"): "vus belongs in executor",
    ("Scenario", "duration"): "duration belongs in executor",
    ("Scenario", "stages"): "stages belongs in executor",
    ("Scenario", "thresholds"): "thresholds are top-level keys (scope one with scenario:)",
    ("Scenario", "timeout"): "timeout belongs in a request, or in defaults",
    ("Check", "status_code"): "the key is status",
    ("Step", "prompts"): "prompts belongs in completion",
    ("Step", "max_tokens"): "max_tokens belongs in completion",
    ("Completion", "method"): "a completion is always a POST",
    ("Completion", "body"): "a completion writes its own body from prompts and max_tokens",
    ("Completion", "json"): "a completion writes its own body from prompts and max_tokens",
    ("Completion", "stream"): "a completion is always streamed, with its usage asked for",
    ("Completion", "check"): "check belongs to the step, beside completion",
    ("Completion", "name"): "name belongs to the step, beside completion",
    ("Completion", "csv"): "csv belongs in prompts: prompts: {csv: FILE, column: NAME}",
    ("Completion", "values"): "values belongs in prompts: prompts: {values: [...]}",
    ("Completion", "synthetic"): "synthetic belongs in prompts: prompts: {synthetic: {tokens: N}}",
}


def load(path: str | FsPath, env: Mapping[str, str] | None = None) -> ScenarioFile:
    """load reads, validates and checks a scenario file. ScenarioError lists every mistake
    with its file, line and key; ``env`` replaces the process environment for ``env`` variables."""
    file = FsPath(path)
    try:
        text = read_bounded(file, MAX_SCENARIO_FILE_BYTES).decode("utf-8")
    except FileReadError as e:
        raise ScenarioError([Problem((), e.message, str(file))], str(file)) from None
    except UnicodeDecodeError as e:
        raise ScenarioError([Problem((), f"is not UTF-8 text ({e.reason})", str(file))], str(file)) from None
    return loads(text, source=str(file), base_dir=file.parent, env=env)


def loads(
    text: str, source: str = "<scenario>", base_dir: str | FsPath = ".", env: Mapping[str, str] | None = None
) -> ScenarioFile:
    """loads is ``load`` for YAML text; ``source`` names it in errors, ``base_dir`` is where
    relative CSV paths start."""
    with paused_gc():
        return _loads(text, source, base_dir, env)


def _loads(text: str, source: str, base_dir: str | FsPath, env: Mapping[str, str] | None) -> ScenarioFile:
    if len(text) > MAX_SCENARIO_FILE_BYTES or len(text.encode("utf-8", "surrogatepass")) > MAX_SCENARIO_FILE_BYTES:
        raise ScenarioError(
            [
                Problem(
                    (), f"is larger than {size_text(MAX_SCENARIO_FILE_BYTES)}, the most a scenario file may be", source
                )
            ],
            source,
        )
    try:
        doc = parse_yaml(text, lines=False)  # lines are read again only for a file with mistakes
    except YamlSyntaxError as e:
        raise ScenarioError([Problem(e.path, e.message, source, e.line)], source) from None
    problems = [
        Problem(p, f"duplicate key '{p[-1]}' (first given on line {first})", source, line)
        for p, line, first in doc.duplicates
    ]
    if not isinstance(doc.data, dict):
        got = "an empty file" if doc.data is None else f"a {type(doc.data).__name__}"
        problems.append(Problem((), f"expected a mapping with target: and scenarios:, got {got}", source, 1))
        raise ScenarioError(problems, source)
    try:
        model = ScenarioFile.model_validate(doc.data)
    except ValidationError as e:
        if not doc.has_lines:
            doc = parse_yaml(text)
        for err in e.errors():
            path, message = translate(err, doc.data)
            problems.append(Problem(path, message, source, line_of(doc.lines, path)))
        raise ScenarioError(_ordered(problems), source) from None
    model.with_base_dir(base_dir)
    model._source = source
    model._lines = doc.lines if doc.has_lines else None
    model._text = text
    problems += model.problems(env)
    if problems:
        raise ScenarioError(_ordered(problems), source)
    return model


def _ordered(problems: list[Problem]) -> list[Problem]:
    unique = list(dict.fromkeys(problems))
    return sorted(unique, key=lambda p: p.line or 0)


def translate(err: Any, data: Any) -> tuple[Path, str]:
    """translate turns one pydantic error into a path in the file's data (pydantic's union
    tags dropped) and a message saying what was expected."""
    loc = err["loc"]
    path: list[str | int] = []
    node = data
    model_loc: list[str | int] = []
    for part in loc:
        if (isinstance(node, dict) and part in node) or (
            isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        ):
            node = node[part]
            path.append(part)
        model_loc.append(part)
    return tuple(path), _message(err, loc, node, tuple(model_loc))


def _num(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _show(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "nothing (null)"
    text = f"'{value}'" if isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:60] + "…"


def _message(err: Any, loc: tuple[Any, ...], node: Any, model_loc: tuple[Any, ...]) -> str:
    kind, ctx, given = err["type"], err.get("ctx") or {}, err.get("input")
    if kind == "missing":
        return f"missing required key '{loc[-1]}'"
    if kind == "extra_forbidden":
        key = str(loc[-1])
        owner, fields = _model_at(ScenarioFile, model_loc[:-1])
        hint = _MISPLACED.get((owner.__name__ if owner else "", key))
        if hint is None and owner is Phase and key == "start_time":
            hint = "start_time only applies to scenarios"
        if hint is None:
            close = difflib.get_close_matches(key, fields, n=1, cutoff=0.6)
            hint = f"did you mean '{close[0]}'?" if close else f"valid keys: {', '.join(fields)}"
        return f"unknown key '{key}' ({hint})"
    if kind == "union_tag_invalid":
        expected = ctx.get("expected_tags", "").replace("'", "")
        close = difflib.get_close_matches(str(ctx.get("tag")), expected.split(", "), n=1, cutoff=0.6)
        mean = f"did you mean '{close[0]}'? " if close else ""
        return f"unknown type '{ctx.get('tag')}' ({mean}expected one of: {expected})"
    if kind == "union_tag_not_found":
        owner_types = _union_tags(ScenarioFile, loc)
        return "missing 'type'" + (f" (one of: {', '.join(owner_types)})" if owner_types else "")
    if kind in ("int_type", "int_parsing", "int_from_float"):
        return f"expected a whole number, got {_show(given)}"
    if kind in ("float_type", "float_parsing"):
        return f"expected a number, got {_show(given)}"
    if kind == "finite_number":
        return f"expected a finite number, got {_show(given)}"
    if kind == "too_long":
        return f"has {ctx.get('actual_length'):,} items, more than the {ctx.get('max_length'):,} surge accepts"
    if kind in ("string_type",):
        return f"expected text, got {_show(given)}"
    if kind in ("bool_type", "bool_parsing"):
        return f"expected true or false, got {_show(given)}"
    if kind == "list_type":
        return f"expected a list, got {_show(given)}"
    if kind in ("dict_type", "model_type", "model_attributes_type"):
        return f"expected a mapping (key: value), got {_show(given)}"
    if kind == "literal_error":
        return f"expected one of {ctx.get('expected')}, got {_show(given)}"
    if kind == "greater_than":
        return f"must be above {_num(ctx.get('gt'))}, got {_show(given)}"
    if kind == "greater_than_equal":
        return f"must be at least {_num(ctx.get('ge'))}, got {_show(given)}"
    if kind == "less_than_equal":
        return f"must be at most {_num(ctx.get('le'))}, got {_show(given)}"
    if kind == "too_short":
        return "must not be empty" if ctx.get("min_length") == 1 else f"needs at least {ctx.get('min_length')} items"
    if kind == "string_too_short":
        return "must not be empty"
    message = str(err.get("msg", kind))
    return message.removeprefix("Value error, ")


def _unwrap(tp: Any) -> list[Any]:
    """_unwrap lists the concrete types an annotation may hold (Annotated, Optional and unions opened)."""
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(tp)[0])
    if origin in (typing.Union, types.UnionType):
        return [t for arg in typing.get_args(tp) for t in _unwrap(arg)]
    return [tp]


def _step(tp: Any, part: Any) -> Any:
    """_step is the type found one location step below ``tp`` (None when lost)."""
    for t in _unwrap(tp):
        origin = typing.get_origin(t)
        if origin is list and isinstance(part, int):
            return typing.get_args(t)[0]
        if origin is dict and isinstance(part, str):
            return typing.get_args(t)[1]
        if isinstance(t, type) and issubclass(t, BaseModel):
            for name, field in t.model_fields.items():
                if part in (name, field.alias):
                    return field.annotation
    members = [t for t in _unwrap(tp) if isinstance(t, type) and issubclass(t, BaseModel)]
    for t in members:  # a union member named by its discriminating tag
        tag_field = t.model_fields.get("type")
        if tag_field is not None and tag_field.default == part:
            return t
    return None


def _model_at(root: type[BaseModel], loc: tuple[Any, ...]) -> tuple[type[BaseModel] | None, list[str]]:
    """_model_at is the model at ``loc`` (pydantic's location, union tags included) and its keys."""
    tp: Any = root
    for part in loc:
        tp = _step(tp, part)
        if tp is None:
            return None, []
    models = [t for t in _unwrap(tp) if isinstance(t, type) and issubclass(t, BaseModel)]
    if len(models) != 1:
        return None, []
    model = models[0]
    return model, [f.alias or n for n, f in model.model_fields.items()]


def _union_tags(root: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    tp: Any = root
    for part in loc:
        tp = _step(tp, part)
        if tp is None:
            return []
    return [
        str(t.model_fields["type"].default)
        for t in _unwrap(tp)
        if isinstance(t, type) and issubclass(t, BaseModel) and "type" in t.model_fields
    ]
