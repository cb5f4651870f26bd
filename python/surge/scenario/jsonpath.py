"""JSON paths as captures and checks accept them: ``$``, then ``.key``, ``[index]`` or ``['key']`` steps."""

from __future__ import annotations

import re

_STEP = r"(?:\.[A-Za-z_$][A-Za-z0-9_$-]*|\[\d+\]|\['[^']*'\]|\[\"[^\"]*\"\])"
_PATH = re.compile(rf"\$(?:{_STEP})*")

JSON_PATH_FORMS = "$.id, $.items[0].id, $['odd key']"
"""JSON_PATH_FORMS are examples of accepted JSON paths, for error messages."""


def is_json_path(text: str) -> bool:
    """is_json_path tells whether ``text`` is a JSON path of the supported subset."""
    return _PATH.fullmatch(text) is not None
