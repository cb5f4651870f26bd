"""One name, one module (docs/architecture.md): no two modules of the package share a name, and no
module is named like a package, so that a name in a traceback, an import or a review comment
points at one file."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import surge

PACKAGE = Path(surge.__file__).parent


def module_names(root: Path) -> dict[str, list[str]]:
    """module_names maps each module's and package's name under ``root`` to where it is."""
    found: dict[str, list[str]] = defaultdict(list)
    for path in sorted(root.rglob("*.py")):
        if path.name == "__main__.py":
            continue
        relative = path.relative_to(root)
        if path.name == "__init__.py":
            if relative.parent != Path():
                found[relative.parent.name].append(f"{relative.parent}/")
            continue
        found[path.stem].append(str(relative))
    return found


def test_no_two_modules_or_packages_share_a_name():
    assert {name: where for name, where in module_names(PACKAGE).items() if len(where) > 1} == {}


def test_a_shared_name_is_found(tmp_path):
    for relative in ("a/__init__.py", "a/run.py", "b/__init__.py", "b/run.py", "b/a.py"):
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text("")
    shared = {name: where for name, where in module_names(tmp_path).items() if len(where) > 1}
    assert shared == {"run": ["a/run.py", "b/run.py"], "a": ["a/", "b/a.py"]}
