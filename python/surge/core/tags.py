"""User tags: ``--tag key=value`` labels a run (``arch=scale-out``, ``build=abc123``) for the
history to filter on. One parser for every command that takes the flag (run, import, and the
experiments to come); a tag whose key looks secret keeps its key and has its value masked."""

from __future__ import annotations

import re
from collections.abc import Iterable

from surge.core.errors import BadInput
from surge.core.redact import MASK, is_secret_name

TAG_KEY = re.compile(r"[A-Za-z0-9_.-]{1,64}")
"""TAG_KEY is what a tag's key may be: 1 to 64 letters, digits, ``_``, ``.`` or ``-``."""

MAX_TAG_VALUE_CHARS = 256
"""MAX_TAG_VALUE_CHARS bounds a tag's value (printable characters, possibly none)."""

TAG_FLAG = "--tag"
"""TAG_FLAG is the flag errors name."""


def parse_tag(text: str, flag: str = TAG_FLAG) -> tuple[str, str]:
    """parse_tag splits one ``key=value``; BadInput names ``flag`` and the key, never the value
    (which may be a secret)."""
    key, sep, value = text.partition("=")
    if not sep:
        raise BadInput(flag, "expected a key, '=' and a value (e.g. --tag arch=scale-out), got no '='")
    if not TAG_KEY.fullmatch(key):
        shown = f"'{key}'" if key and len(key) <= 100 and key.isprintable() else f"of {len(key)} characters"
        raise BadInput(flag, f"key {shown} must be 1 to 64 letters, digits, '_', '.' or '-'")
    if len(value) > MAX_TAG_VALUE_CHARS:
        raise BadInput(flag, f"value of '{key}' is {len(value)} characters long, more than {MAX_TAG_VALUE_CHARS}")
    if not value.isprintable():
        raise BadInput(
            flag, f"value of '{key}' holds a character that is not printable (a control character or a line break)"
        )
    return key, value


def parse_tags(texts: Iterable[str], flag: str = TAG_FLAG) -> dict[str, str]:
    """parse_tags turns repeated ``--tag key=value`` into a mapping (in the order given), the
    values of secret-looking keys masked; a key given twice is refused."""
    tags: dict[str, str] = {}
    for text in texts:
        key, value = parse_tag(text, flag)
        if key in tags:
            raise BadInput(flag, f"key '{key}' is given twice")
        tags[key] = MASK if is_secret_name(key) else value
    return tags
