"""Function-local imports say why (docs/architecture.md): an import inside a function is kept
there only for start-up (tests/e2e/test_cli_startup.py: a plain run, ``run --help``) or to stay
off a path that never needs it, and a comment on its line, or on the line just above it or its
group, says which. Every other import is at the top of its module."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import surge

PACKAGE = Path(surge.__file__).parent

PRAGMA = re.compile(r"#\s*(type:|noqa|pragma:)")
"""PRAGMA starts a comment for a tool, not a reader: ``# type: ignore[...]``, ``# noqa``."""


def says_why(line: str) -> bool:
    """says_why tells whether ``line`` holds a comment for a reader (a pragma alone is not one)."""
    if "#" not in line:
        return False
    return any(part.strip() and not PRAGMA.match("#" + part) for part in line.split("#")[1:])


def local_imports(source: str) -> list[ast.Import | ast.ImportFrom]:
    """local_imports are the import statements of ``source`` inside a function (at any depth)."""
    found: list[ast.Import | ast.ImportFrom] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found += [n for n in ast.walk(node) if isinstance(n, (ast.Import, ast.ImportFrom))]
    return sorted(set(found), key=lambda n: n.lineno)


def unexplained(source: str) -> list[str]:
    """unexplained are the first lines of ``source``'s function-local imports with no comment on
    their lines nor on the line above them or above the run of imports they end."""
    lines = source.splitlines()
    imports = local_imports(source)
    first_line = {n.end_lineno or n.lineno: n.lineno for n in imports}

    def commented(first: int, last: int) -> bool:
        return any(says_why(lines[i - 1]) for i in range(first, last + 1))

    missing = []
    for node in imports:
        if commented(node.lineno, node.end_lineno or node.lineno):
            continue
        above = node.lineno - 1
        while above in first_line and not commented(first_line[above], above):
            above = first_line[above] - 1
        if above >= 1 and lines[above - 1].strip().startswith("#"):
            continue
        missing.append(lines[node.lineno - 1].strip())
    return missing


def test_every_function_local_import_says_why():
    found = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        found |= {(relative, line) for line in unexplained(path.read_text(encoding="utf-8"))}
    assert found == set()


def test_unexplained_finds_only_a_local_import_without_a_comment():
    source = (
        "import json\n"
        "def f():\n"
        "    import math\n"
        "    import os  # start-up: only here\n"
        "    # start-up: both only here\n"
        "    import re\n"
        "    import sys\n"
        "    x = 1\n"
        "    import zlib  # type: ignore[import-untyped]\n"
        "    class C:\n"
        "        def g(self):\n"
        "            from a import (\n"
        "                b,  # start-up: b only here\n"
        "            )\n"
        "            from c import d\n"
        "    return 1\n"
        "if True:\n"
        "    import csv\n"
    )
    assert unexplained(source) == ["import math", "import zlib  # type: ignore[import-untyped]", "from c import d"]
