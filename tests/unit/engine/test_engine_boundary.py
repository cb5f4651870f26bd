"""The engine layer is the only importer of the compiled module: every other module of
python/surge reaches ``surge._engine`` through ``surge.engine`` (import-linter cannot see an
extension module, so this test walks the sources itself)."""

from __future__ import annotations

import ast
from pathlib import Path

import surge
from surge.engine.execute import DEFAULT_SEND_SLACK_S as ENGINE_SEND_SLACK_S
from surge.plan.model import DEFAULT_SEND_SLACK_S

PACKAGE = Path(surge.__file__).parent


def engine_imports(source: str) -> list[int]:
    """engine_imports are the lines of ``source`` that import ``surge._engine`` (in any form)."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import) and any(a.name.startswith("surge._engine") for a in node.names):
            lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module is not None:
            if node.module.startswith("surge._engine") or (
                node.module == "surge" and any(a.name == "_engine" for a in node.names)
            ):
                lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.level > 0 and any(a.name == "_engine" for a in node.names):
            lines.append(node.lineno)
    return lines


def test_engine_imports_finds_every_spelling():
    assert engine_imports("import surge._engine\nfrom surge import _engine\nfrom surge._engine import run\n") == [
        1,
        2,
        3,
    ]
    assert engine_imports("def f():\n    from .. import _engine\n") == [2]
    assert engine_imports("from surge.engine import execute\nimport surge\n") == []


def test_only_the_engine_layer_imports_the_compiled_module():
    outside = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative.startswith("engine/"):
            continue
        outside += [f"{relative}:{line}" for line in engine_imports(path.read_text(encoding="utf-8"))]
    assert outside == []


def test_the_plan_layers_send_slack_is_the_engines():
    assert DEFAULT_SEND_SLACK_S == ENGINE_SEND_SLACK_S
