"""Templates: text with ``{{name}}`` and ``{{name.column}}`` slots that the engine fills per
iteration (paths, query values, header values, bodies)."""

from __future__ import annotations

import re
from dataclasses import dataclass

_SLOT = re.compile(r"\{\{(.*?)\}\}")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SLOT_BODY = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?:\.([A-Za-z0-9_-]+))?")

NAME_RULE = "letters, digits and _, not starting with a digit"
"""NAME_RULE says, for error messages, what a variable or capture name may contain."""


@dataclass(frozen=True)
class Slot:
    """Slot: one ``{{name}}`` or ``{{name.column}}`` in a template."""

    name: str
    column: str | None = None

    def __str__(self) -> str:
        return "{{" + self.name + (f".{self.column}" if self.column else "") + "}}"


class TemplateError(ValueError):
    """TemplateError: a template has a malformed slot; the message quotes it."""


def is_name(text: str) -> bool:
    """is_name tells whether ``text`` can name a variable or capture in a slot."""
    return _NAME.fullmatch(text) is not None


def slots(text: str) -> list[Slot]:
    """slots returns the slots of ``text`` in order; TemplateError for ``{{ }}`` that is not
    ``{{name}}`` or ``{{name.column}}``, or a ``{{`` left open."""
    if "{{" not in text:
        return []  # most text has no slot: no need for the regular expressions
    found = []
    for match in _SLOT.finditer(text):
        body = _SLOT_BODY.fullmatch(match.group(1))
        if body is None:
            raise TemplateError(
                f"'{match.group(0)}' is not a slot: write {{{{name}}}} or {{{{name.column}}}} "
                f"(names: {NAME_RULE}; no spaces)"
            )
        found.append(Slot(body.group(1), body.group(2)))
    if "{{" in _SLOT.sub("", text):
        raise TemplateError("a '{{' is never closed with '}}'")
    return found


def display(text: str) -> str:
    """display renders a template for a default tag: ``/tasks/{{id}}`` becomes ``/tasks/{id}``."""
    return _SLOT.sub(lambda m: "{" + m.group(1) + "}", text)
