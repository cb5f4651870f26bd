"""YAML with line numbers and limits: a document parsed into plain data plus the line of every
key and list item, so that errors can name the line a mistake is on.

The document is composed here, from the parser's events (libyaml's when it is installed),
rather than by PyYAML's composer and constructor, so that what a file may ask for is bounded
while it is read: nesting depth, the values aliases repeat (an alias bomb is refused at the
alias that passes the bound, and an alias inside the value it names at once), the length of
numbers, and tags (only YAML's plain ones). An alias is the very object its anchor names,
never a copy, so even the values aliases may repeat cost no memory.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.events import (
    AliasEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)
from yaml.nodes import ScalarNode

from surge.limits import MAX_ALIAS_VALUES, MAX_DEPTH, MAX_NUMBER_DIGITS
from surge.scenario.base import Path

_T = "tag:yaml.org,2002:"
_STR, _INT, _FLOAT, _BOOL, _NULL = _T + "str", _T + "int", _T + "float", _T + "bool", _T + "null"
_SEQ, _MAP, _MERGE, _TIMESTAMP = _T + "seq", _T + "map", _T + "merge", _T + "timestamp"
_TAGS = "!!str, !!int, !!float, !!bool, !!null, !!seq and !!map"

# Only true and false are booleans (as in YAML 1.2): yes, no, on and off stay text (a choice
# of [yes, no] means it).
_RESOLVERS: dict[str | None, list[tuple[str, re.Pattern[str]]]] = {
    first: [(tag, rx) for tag, rx in resolvers if tag != _BOOL]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
for _first in "tTfF":
    _RESOLVERS.setdefault(_first, []).append((_BOOL, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")))
_WILDCARD = _RESOLVERS.get(None, [])
_CONSTRUCTOR = yaml.SafeLoader("")
_EVENTS = yaml.CSafeLoader if getattr(yaml, "__with_libyaml__", False) else yaml.SafeLoader


@dataclass
class YamlDocument:
    """YamlDocument: the data of a YAML document, ``lines`` mapping each key's (or list
    item's) path to its 1-based line, and ``duplicates`` listing keys given twice in one
    mapping (path, line, line of the first one). Values an alias repeats are the anchor's
    own objects: paths inside them have no line of their own (``line_of`` finds the alias's)."""

    data: Any
    lines: dict[Path, int] = field(default_factory=dict)
    duplicates: list[tuple[Path, int, int]] = field(default_factory=list)


class YamlSyntaxError(ValueError):
    """YamlSyntaxError: the text is not YAML, or asks for more than a scenario file may
    (see ``surge.limits``); ``line`` is where the reading stopped (1-based), ``path`` the key
    it was in."""

    def __init__(self, line: int, message: str, path: Path = ()) -> None:
        super().__init__(message)
        self.line = line
        self.message = message
        self.path = path


def parse_yaml(text: str) -> YamlDocument:
    """parse_yaml parses one YAML document with plain types (only true and false are
    booleans; dates stay text); an empty document is None. YamlSyntaxError for text that
    is not YAML, holds several documents or passes a limit of ``surge.limits``."""
    events = _EVENTS(text)
    try:
        return _Composer(events).document()
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark is not None else 1
        raise YamlSyntaxError(line, f"not valid YAML: {e.problem or e.context}") from None
    except yaml.YAMLError as e:
        raise YamlSyntaxError(1, f"not valid YAML: {e}") from None
    finally:
        events.dispose()


_NO_KEY = object()
_MERGE_KEY = object()
_OPEN = object()  # an anchor whose value is still being read


@dataclass
class _Frame:
    """_Frame is a mapping or list being read: where it is, its anchor, how many values it
    holds (aliases counted as what they repeat) and how deep it nests."""

    value: Any
    path: Path
    anchor: str | None
    size: int = 1
    height: int = 1
    key: Any = _NO_KEY
    merge_line: int = 0
    merged: dict[Any, Any] | None = None
    first_line: dict[Any, int] = field(default_factory=dict)


class _Composer:
    def __init__(self, events: Any) -> None:
        self.events = events
        self.doc = YamlDocument(None)
        self.anchors: dict[str, Any] = {}
        self.repeated = 0

    def document(self) -> YamlDocument:
        self.events.get_event()  # stream start
        if self.events.check_event(StreamEndEvent):
            return self.doc
        self.events.get_event()  # document start
        self.doc.data = self.compose()
        self.events.get_event()  # document end
        if self.events.check_event(DocumentStartEvent):
            line = self.events.peek_event().start_mark.line + 1
            raise YamlSyntaxError(line, "a scenario file is one YAML document; a second one starts here")
        return self.doc

    def compose(self) -> Any:
        stack: list[_Frame] = []
        while True:
            event = self.events.get_event()
            line = event.start_mark.line + 1
            top = stack[-1] if stack else None
            path = self.child_path(top)
            if isinstance(event, (MappingStartEvent, SequenceStartEvent)):
                is_map = isinstance(event, MappingStartEvent)
                self.check_collection_tag(event.tag, _MAP if is_map else _SEQ, line, path)
                if top is not None and isinstance(top.value, dict) and top.key is _NO_KEY:
                    raise YamlSyntaxError(line, "a key must be a single value (text), not a list or mapping", path)
                if len(stack) >= MAX_DEPTH:
                    raise YamlSyntaxError(line, f"lists and mappings nest more than {MAX_DEPTH} levels deep "
                                                "(the most a scenario file may)", _outer(path))
                self.item_line(top, line)
                if event.anchor is not None:
                    self.anchors[event.anchor] = _OPEN
                stack.append(_Frame({} if is_map else [], path, event.anchor))
                continue
            if isinstance(event, (MappingEndEvent, SequenceEndEvent)):
                frame = stack.pop()
                value, size, height = self.finish(frame), frame.size, frame.height
                if frame.anchor is not None:
                    self.anchors[frame.anchor] = (value, size, height)
                top = stack[-1] if stack else None
            elif isinstance(event, AliasEvent):
                value, size, height = self.alias(str(event.anchor), line, path, len(stack))
                self.item_line(top, line)
            elif isinstance(event, ScalarEvent):
                if top is not None and isinstance(top.value, dict) and top.key is _NO_KEY:
                    self.key(top, event, line)
                    continue
                value, size, height = self.scalar(event, line, path), 1, 0
                if event.anchor is not None:
                    self.anchors[event.anchor] = (value, 1, 0)
                self.item_line(top, line)
            else:
                raise YamlSyntaxError(line, f"not valid YAML: unexpected {type(event).__name__}", path)
            if top is None:
                return value
            self.add(top, value, size, height, line)

    @staticmethod
    def child_path(top: _Frame | None) -> Path:
        if top is None:
            return ()
        if isinstance(top.value, list):
            return (*top.path, len(top.value))
        if top.key is _NO_KEY or top.key is _MERGE_KEY:
            return top.path
        return (*top.path, top.key)

    def item_line(self, top: _Frame | None, line: int) -> None:
        if top is None:
            self.doc.lines[()] = line
        elif isinstance(top.value, list):
            self.doc.lines[(*top.path, len(top.value))] = line

    def key(self, top: _Frame, event: ScalarEvent, line: int) -> None:
        tag = event.tag if event.tag not in (None, "!") else _resolve(event.value, event.implicit)
        if tag == _MERGE:
            top.key, top.merge_line = _MERGE_KEY, line
            return
        key = self.scalar(event, line, top.path)
        key = key if isinstance(key, (str, int)) and not isinstance(key, bool) else str(key)
        if event.anchor is not None:
            self.anchors[event.anchor] = (key, 1, 0)
        self.set_key(top, key, line)

    def set_key(self, top: _Frame, key: Any, line: int) -> None:
        path = (*top.path, key)
        if key in top.first_line:
            self.doc.duplicates.append((path, line, top.first_line[key]))
        top.first_line[key] = line
        self.doc.lines[path] = line
        top.key = key
        top.size += 1

    def add(self, top: _Frame, value: Any, size: int, height: int, line: int) -> None:
        top.size += size
        top.height = max(top.height, height + 1)
        if isinstance(top.value, list):
            top.value.append(value)
        elif top.key is _MERGE_KEY:
            self.merge(top, value, line)
            top.key = _NO_KEY
        elif top.key is _NO_KEY:  # an alias as a key
            if isinstance(value, (dict, list)):
                raise YamlSyntaxError(line, "a key must be a single value (text), not a list or mapping", top.path)
            self.set_key(top, value if isinstance(value, (str, int)) and not isinstance(value, bool) else str(value),
                         line)
        else:
            top.value[top.key] = value
            top.key = _NO_KEY

    @staticmethod
    def merge(top: _Frame, value: Any, line: int) -> None:
        sources = value if isinstance(value, list) else [value]
        if not sources or not all(isinstance(s, dict) for s in sources):
            raise YamlSyntaxError(line, "<< merges a mapping, or a list of mappings, into this one", top.path)
        merged = top.merged if top.merged is not None else {}
        for source in sources:  # the first mapping given wins, as in YAML
            for k, v in source.items():
                merged.setdefault(k, v)
        top.merged = merged

    def finish(self, frame: _Frame) -> Any:
        if frame.merged is None:
            return frame.value
        for k in frame.merged:  # the mapping's own keys win over merged ones
            if k not in frame.value:
                self.doc.lines[(*frame.path, k)] = frame.merge_line
        out = {k: v for k, v in frame.merged.items() if k not in frame.value}
        out.update(frame.value)
        return out

    def alias(self, name: str, line: int, path: Path, depth: int) -> tuple[Any, int, int]:
        found = self.anchors.get(name)
        if found is None:
            raise YamlSyntaxError(line, f"alias *{name} names no anchor (&{name}) given before it", path)
        if found is _OPEN:
            raise YamlSyntaxError(line, f"alias *{name} is inside the value &{name} names: it would repeat "
                                        "itself forever", path)
        value, size, height = found
        self.repeated += size
        if self.repeated > MAX_ALIAS_VALUES:
            raise YamlSyntaxError(line, f"aliases repeat more than {MAX_ALIAS_VALUES:,} values, the most a "
                                        f"scenario file may (*{name} passes it)", path)
        if depth + height > MAX_DEPTH:
            raise YamlSyntaxError(line, f"lists and mappings nest more than {MAX_DEPTH} levels deep through "
                                        f"alias *{name} (the most a scenario file may)", _outer(path))
        return value, size, height

    @staticmethod
    def check_collection_tag(tag: str | None, expected: str, line: int, path: Path) -> None:
        if tag not in (None, "!", expected):
            raise YamlSyntaxError(line, _unknown_tag(tag), path)

    @staticmethod
    def scalar(event: ScalarEvent, line: int, path: Path) -> Any:
        text = event.value
        tag = event.tag if event.tag not in (None, "!") else _resolve(text, event.implicit)
        if tag == _STR:
            return text
        if tag == _NULL:
            return None
        if tag == _TIMESTAMP:
            return text  # dates stay text, as written
        if tag == _BOOL:
            value = _CONSTRUCTOR.bool_values.get(text.lower())
            if value is None:
                raise YamlSyntaxError(line, f"'{_clip(text)}' is not true or false", path)
            return value
        if tag in (_INT, _FLOAT):
            if len(text) > MAX_NUMBER_DIGITS:
                raise YamlSyntaxError(line, f"a number of {len(text):,} characters: numbers may have at most "
                                            f"{MAX_NUMBER_DIGITS} (quote it to make it text)", path)
            node = ScalarNode(tag, text)
            try:
                number = (_CONSTRUCTOR.construct_yaml_int(node) if tag == _INT
                          else _CONSTRUCTOR.construct_yaml_float(node))
            except (ValueError, IndexError):
                raise YamlSyntaxError(line, f"'{_clip(text)}' is not a number", path) from None
            if isinstance(number, float) and not math.isfinite(number):
                raise YamlSyntaxError(line, f"'{_clip(text)}' is not a finite number (quote it to make it text)",
                                      path)
            return number
        raise YamlSyntaxError(line, _unknown_tag(tag), path)


def _resolve(value: str, implicit: tuple[bool, bool]) -> str:
    if not implicit[0]:
        return _STR
    for tag, rx in _RESOLVERS.get(value[0] if value else "", []) + _WILDCARD:
        if rx.match(value):
            return tag
    return _STR


def _unknown_tag(tag: str | None) -> str:
    shown = f"!!{tag[len(_T):]}" if tag and tag.startswith(_T) else str(tag)
    return f"unknown tag '{_clip(shown)}': scenario files use plain YAML (the only tags are {_TAGS})"


def _outer(path: Path, most: int = 6) -> Path:
    """_outer shortens a deep path for an error: up to its last key among the first ``most`` parts."""
    head = path[:most]
    keys = [i for i, part in enumerate(head) if isinstance(part, str)]
    return head[: keys[-1] + 1] if keys else ()


def _clip(text: str, most: int = 40) -> str:
    return text if len(text) <= most else text[:most] + "…"


def line_of(lines: Mapping[Path, int], path: Path) -> int | None:
    """line_of is the line of ``path``, or of its closest ancestor that has one."""
    for end in range(len(path), -1, -1):
        line = lines.get(path[:end])
        if line is not None:
            return line
    return None
