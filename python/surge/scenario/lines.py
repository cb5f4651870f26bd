"""YAML with line numbers: a document parsed into plain data plus the line of every key and
list item, so that errors can name the line a mistake is on."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from surge.scenario.base import Path

_BOOL = "tag:yaml.org,2002:bool"


class _Loader(yaml.SafeLoader):
    """_Loader reads YAML's safe types, except that only true and false are booleans (as in
    YAML 1.2): ``yes``, ``no``, ``on`` and ``off`` stay text (a choice of [yes, no] means it)."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != _BOOL]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(_BOOL, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))


@dataclass
class YamlDocument:
    """YamlDocument: the data of a YAML document, ``lines`` mapping each key's (or list
    item's) path to its 1-based line, and ``duplicates`` listing keys given twice in one
    mapping (path, line, line of the first one)."""

    data: Any
    lines: dict[Path, int] = field(default_factory=dict)
    duplicates: list[tuple[Path, int, int]] = field(default_factory=list)


class YamlSyntaxError(ValueError):
    """YamlSyntaxError: the text is not YAML; ``line`` is where the parser stopped (1-based)."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


def parse_yaml(text: str) -> YamlDocument:
    """parse_yaml parses one YAML document with safe types (no custom tags; only true and false
    are booleans); an
    empty document is None. YamlSyntaxError for text that is not YAML or holds several documents."""
    try:
        node = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark is not None else 1
        raise YamlSyntaxError(line, f"not valid YAML: {e.problem or e.context}") from None
    except yaml.YAMLError as e:
        raise YamlSyntaxError(1, f"not valid YAML: {e}") from None
    doc = YamlDocument(None)
    if node is not None:
        doc.lines[()] = node.start_mark.line + 1
        doc.data = _build(node, (), doc, _Loader(""))
    return doc


def _build(node: yaml.Node, path: Path, doc: YamlDocument, loader: yaml.SafeLoader) -> Any:
    if isinstance(node, yaml.MappingNode):
        loader.flatten_mapping(node)  # resolve "<<" merge keys
        out: dict[Any, Any] = {}
        first_line: dict[Any, int] = {}
        for key_node, value_node in node.value:
            key = _build(key_node, path, doc, loader) if isinstance(key_node, yaml.ScalarNode) else str(key_node.value)
            key = key if isinstance(key, (str, int)) and not isinstance(key, bool) else str(key)
            line = key_node.start_mark.line + 1
            if key in first_line:
                doc.duplicates.append(((*path, key), line, first_line[key]))
            first_line[key] = line
            doc.lines[(*path, key)] = line
            out[key] = _build(value_node, (*path, key), doc, loader)
        return out
    if isinstance(node, yaml.SequenceNode):
        items = []
        for i, item in enumerate(node.value):
            doc.lines[(*path, i)] = item.start_mark.line + 1
            items.append(_build(item, (*path, i), doc, loader))
        return items
    value = loader.construct_object(node, deep=True)
    if not isinstance(value, (str, int, float, bool)) and value is not None:
        return str(node.value)  # dates, binary: keep the text as written
    return value


def line_of(lines: Mapping[Path, int], path: Path) -> int | None:
    """line_of is the line of ``path``, or of its closest ancestor that has one."""
    for end in range(len(path), -1, -1):
        line = lines.get(path[:end])
        if line is not None:
            return line
    return None
