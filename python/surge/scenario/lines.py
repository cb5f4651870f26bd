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

from surge.core.limits import MAX_ALIAS_VALUES, MAX_DEPTH, MAX_NUMBER_DIGITS
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
    has_lines: bool = True


class YamlSyntaxError(ValueError):
    """YamlSyntaxError: the text is not YAML, or asks for more than a scenario file may
    (see ``surge.core.limits``); ``line`` is where the reading stopped (1-based), ``path`` the key
    it was in."""

    def __init__(self, line: int, message: str, path: Path = ()) -> None:
        super().__init__(message)
        self.line = line
        self.message = message
        self.path = path


def parse_yaml(text: str, lines: bool = True) -> YamlDocument:
    """parse_yaml parses one YAML document with plain types (only true and false are
    booleans; dates stay text); an empty document is None. YamlSyntaxError for text that
    is not YAML, holds several documents or passes a limit of ``surge.core.limits``.

    With ``lines=False`` the lines of keys are left out (``has_lines`` is False) unless the
    document has duplicate keys: a quicker read for a document that will most likely be
    valid, whose lines a caller gets again with ``parse_yaml(text)`` if it needs them.
    Errors and duplicates are always exact."""
    if not lines:
        try:
            doc = _compose(text, track=False)
        except YamlSyntaxError:
            doc = None
        if doc is not None and not doc.duplicates:
            return doc
    return _compose(text, track=True)


def _compose(text: str, track: bool) -> YamlDocument:
    events = _EVENTS(text)
    try:
        return _Composer(events, track).document()
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark is not None else 1
        raise YamlSyntaxError(line, f"not valid YAML: {e.problem or e.context}") from None
    except yaml.reader.ReaderError as e:  # a character YAML does not allow (a control character)
        where = text.find(chr(e.character)) if isinstance(e.character, int) else -1
        line = text.count("\n", 0, where) + 1 if where >= 0 else 1
        raise YamlSyntaxError(
            line,
            f"not valid YAML: the character U+{e.character:04X} is not allowed (write it "
            'escaped in a double-quoted string, e.g. "\\x01")'
            if isinstance(e.character, int)
            else f"not valid YAML: {e.reason}",
        ) from None
    except yaml.YAMLError as e:
        raise YamlSyntaxError(1, "not valid YAML: " + " ".join(str(e).split())) from None
    finally:
        events.dispose()


_NO_KEY = object()
_MERGE_KEY = object()
_OPEN = object()  # an anchor whose value is still being read


@dataclass(slots=True)
class _Frame:
    """_Frame is a mapping or list being read: where it is, its anchor, how many values it
    holds (aliases counted as what they repeat) and how deep it nests."""

    value: Any
    is_map: bool
    path: Path
    anchor: str | None
    size: int = 1
    height: int = 1
    key: Any = _NO_KEY
    merge_line: int = 0
    merged: dict[Any, Any] | None = None
    first_line: dict[Any, int] = field(default_factory=dict)

    def child_path(self) -> Path:
        """child_path is the path of the value being read into this frame."""
        if not self.is_map:
            return (*self.path, len(self.value))
        if self.key is _NO_KEY or self.key is _MERGE_KEY:
            return self.path
        return (*self.path, self.key)


def _line(event: Any) -> int:
    return int(event.start_mark.line) + 1


class _Composer:
    """_Composer builds the document from the parser's events; with ``track`` it also
    records every path's line (and paths for errors), without it only what the data needs."""

    def __init__(self, events: Any, track: bool) -> None:
        self.events = events
        self.track = track
        self.doc = YamlDocument(None, has_lines=track)
        self.anchors: dict[str, Any] = {}
        self.repeated = 0
        self.plain: dict[str, Any] = {}  # plain scalars already read: a file repeats its keys and values

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
        # One loop over the parser's events, written for speed: a 5 MB file has a million.
        stack: list[_Frame] = []
        top: _Frame | None = None
        get_event, lines, track = self.events.get_event, self.doc.lines, self.track
        while True:
            event = get_event()
            kind = type(event)
            if kind is ScalarEvent:
                if top is not None and top.is_map and top.key is _NO_KEY:
                    self.key(top, event)
                    continue
                value, size, height = self.scalar(event, top), 1, 0
                if event.anchor is not None:
                    self.anchors[event.anchor] = (value, 1, 0)
                if top is None:
                    lines[()] = _line(event)
                    return value
                if track and not top.is_map:
                    lines[(*top.path, len(top.value))] = _line(event)
            elif kind is MappingStartEvent or kind is SequenceStartEvent:
                is_map = kind is MappingStartEvent
                path = top.child_path() if top is not None and track else ()
                if event.tag not in (None, "!", _MAP if is_map else _SEQ):
                    raise YamlSyntaxError(_line(event), _unknown_tag(event.tag), path)
                if top is not None and top.is_map and top.key is _NO_KEY:
                    raise YamlSyntaxError(
                        _line(event), "a key must be a single value (text), not a list or mapping", path
                    )
                if len(stack) >= MAX_DEPTH:
                    raise YamlSyntaxError(
                        _line(event),
                        f"lists and mappings nest more than {MAX_DEPTH} levels deep (the most a scenario file may)",
                        _outer(path),
                    )
                if top is None or (track and not top.is_map):  # a key's line is the line of its value
                    lines[path] = _line(event)
                if event.anchor is not None:
                    self.anchors[event.anchor] = _OPEN
                top = _Frame({} if is_map else [], is_map, path, event.anchor)
                stack.append(top)
                continue
            elif kind is MappingEndEvent or kind is SequenceEndEvent:
                frame = stack.pop()
                value, size, height = self.finish(frame), frame.size, frame.height
                if frame.anchor is not None:
                    self.anchors[frame.anchor] = (value, size, height)
                top = stack[-1] if stack else None
                if top is None:
                    return value
            elif kind is AliasEvent:
                path = top.child_path() if top is not None and track else ()
                value, size, height = self.alias(str(event.anchor), _line(event), path, len(stack))
                if top is None:
                    lines[()] = _line(event)
                    return value
                if track and not top.is_map:
                    lines[path] = _line(event)
            else:
                raise YamlSyntaxError(_line(event), f"not valid YAML: unexpected {kind.__name__}")
            self.add(top, value, size, height, event)

    def key(self, top: _Frame, event: ScalarEvent) -> None:
        if event.value == "<<" and event.tag is None and event.implicit[0]:  # YAML's merge key
            top.key, top.merge_line = _MERGE_KEY, _line(event)
            return
        key = self.scalar(event, top)
        if not isinstance(key, str):
            key = key if isinstance(key, int) and not isinstance(key, bool) else str(key)
        if event.anchor is not None:
            self.anchors[event.anchor] = (key, 1, 0)
        self.set_key(top, key, event)

    def set_key(self, top: _Frame, key: Any, event: Any) -> None:
        top.key = key
        top.size += 1
        if not self.track:  # only whether a key is given twice (the exact report is read again with lines)
            if key in top.value:
                self.doc.duplicates.append(((key,), 0, 0))
            return
        line = _line(event)
        path = (*top.path, key)
        first = top.first_line.get(key)
        if first is not None:
            self.doc.duplicates.append((path, line, first))
        top.first_line.setdefault(key, line)
        self.doc.lines[path] = line

    def add(self, top: _Frame, value: Any, size: int, height: int, event: Any) -> None:
        top.size += size
        if height >= top.height:
            top.height = height + 1
        if not top.is_map:
            top.value.append(value)
        elif top.key is _MERGE_KEY:
            self.merge(top, value, _line(event))
            top.key = _NO_KEY
        elif top.key is _NO_KEY:  # an alias as a key
            if isinstance(value, (dict, list)):
                raise YamlSyntaxError(
                    _line(event), "a key must be a single value (text), not a list or mapping", top.path
                )
            self.set_key(
                top, value if isinstance(value, (str, int)) and not isinstance(value, bool) else str(value), event
            )
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
            if self.track and k not in frame.value:
                self.doc.lines[(*frame.path, k)] = frame.merge_line
        out = {k: v for k, v in frame.merged.items() if k not in frame.value}
        out.update(frame.value)
        return out

    def alias(self, name: str, line: int, path: Path, depth: int) -> tuple[Any, int, int]:
        found = self.anchors.get(name)
        if found is None:
            raise YamlSyntaxError(line, f"alias *{name} names no anchor (&{name}) given before it", path)
        if found is _OPEN:
            raise YamlSyntaxError(
                line, f"alias *{name} is inside the value &{name} names: it would repeat itself forever", path
            )
        value, size, height = found
        self.repeated += size
        if self.repeated > MAX_ALIAS_VALUES:
            raise YamlSyntaxError(
                line,
                f"aliases repeat more than {MAX_ALIAS_VALUES:,} values, the most a "
                f"scenario file may (*{name} passes it)",
                path,
            )
        if depth + height > MAX_DEPTH:
            raise YamlSyntaxError(
                line,
                f"lists and mappings nest more than {MAX_DEPTH} levels deep through "
                f"alias *{name} (the most a scenario file may)",
                _outer(path),
            )
        return value, size, height

    def scalar(self, event: ScalarEvent, top: _Frame | None) -> Any:
        text = event.value
        if event.tag not in (None, "!") or not event.implicit[0]:
            tag = event.tag if event.tag not in (None, "!") else _resolve(text, event.implicit)
            return self.construct(tag, text, event, top)
        if text and text[0] not in _RESOLVERS:
            return text  # plain text, the common case
        if text.isdigit() and text.isascii() and (text[0] != "0" or len(text) == 1) and len(text) <= MAX_NUMBER_DIGITS:
            return int(text)  # a plain decimal integer, the next most common
        value = self.plain.get(text, _NO_KEY)
        if value is _NO_KEY:
            value = self.plain[text] = self.construct(_resolve(text, event.implicit), text, event, top)
        return value

    def construct(self, tag: str, text: str, event: Any, top: _Frame | None) -> Any:
        """construct is the value of a scalar of ``tag``; YamlSyntaxError for one past a limit."""
        if tag in (_STR, _TIMESTAMP):  # dates stay text, as written
            return text
        if tag == _NULL:
            return None
        path = top.child_path() if top is not None and self.track else ()
        line = _line(event)
        if tag == _BOOL:
            value = _CONSTRUCTOR.bool_values.get(text.lower())
            if value is None:
                raise YamlSyntaxError(line, f"'{_clip(text)}' is not true or false", path)
            return value
        if tag in (_INT, _FLOAT):
            if ":" in text:
                raise YamlSyntaxError(
                    line,
                    f"'{_clip(text)}' is not a number: base-60 numbers (1:30) are not "
                    "read as numbers; write the number itself",
                    path,
                )
            if len(text) > MAX_NUMBER_DIGITS:
                raise YamlSyntaxError(
                    line,
                    f"a number of {len(text):,} characters: numbers may have at most "
                    f"{MAX_NUMBER_DIGITS} (quote it to make it text)",
                    path,
                )
            node = ScalarNode(tag, text)
            try:
                number = (
                    _CONSTRUCTOR.construct_yaml_int(node) if tag == _INT else _CONSTRUCTOR.construct_yaml_float(node)
                )
            except (ValueError, IndexError):
                raise YamlSyntaxError(line, f"'{_clip(text)}' is not a number", path) from None
            if isinstance(number, float) and not math.isfinite(number):
                raise YamlSyntaxError(line, f"'{_clip(text)}' is not a finite number (quote it to make it text)", path)
            return number
        raise YamlSyntaxError(line, _unknown_tag(tag), path)


def _resolve(value: str, implicit: tuple[bool, bool]) -> str:
    if not implicit[0]:
        return _STR
    for tag, rx in _RESOLVERS.get(value[0] if value else "", []) + _WILDCARD:
        if rx.match(value):
            # YAML 1.1's base-60 numbers (190:20:30 is 685,230) stay text, as in YAML 1.2: a
            # number must be written as one, and a key that wants one says so with FILE:LINE.
            return _STR if tag in (_INT, _FLOAT) and ":" in value else tag
    return _STR


def _unknown_tag(tag: str | None) -> str:
    shown = f"!!{tag[len(_T) :]}" if tag and tag.startswith(_T) else str(tag)
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
