"""Scenario errors: every mistake in a scenario file as one ``FILE:LINE: key.path: message``
line, all of them in one ScenarioError, which the CLI reports with exit code 2."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from surge.core.limits import MAX_PROBLEMS
from surge.core.redact import redact_message
from surge.scenario.base import Path

try:
    from surge.core.errors import BadInput
except ImportError:  # the compiled engine is absent (pure-Python use): same interface, no engine base

    class BadInput(ValueError):  # type: ignore[no-redef]
        """BadInput: a value the user gave is invalid; ``where`` names the flag, file or key."""

        def __init__(self, where: str, message: str) -> None:
            super().__init__(f"{where}: {message}")
            self.where = where
            self.message = message
            self.lines = [f"{where}: {message}"]


def key_path(path: Path) -> str:
    """key_path renders a location as users read it: ``scenarios.reads.flow[0].request.path``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif "." in part or not part:
            out += f'["{part}"]'
        else:
            out += f".{part}" if out else part
    return out


@dataclass(frozen=True)
class Problem:
    """Problem: one mistake, at ``path`` in the file (and at ``line`` of ``file`` when the
    model came from a file), with a message saying what was expected."""

    path: Path
    message: str
    file: str | None = None
    line: int | None = None

    def located(self, file: str | None, line: int | None) -> Problem:
        """located returns the problem placed at ``file``:``line``."""
        return replace(self, file=file, line=line)

    def __str__(self) -> str:
        where = ""
        if self.file is not None:
            where = f"{self.file}:{self.line}: " if self.line is not None else f"{self.file}: "
        key = key_path(self.path)
        message = redact_message(self.path, self.message)  # a secret-named key's value is not echoed
        return f"{where}{key}: {message}" if key else f"{where}{message}"


class ScenarioError(BadInput):
    """ScenarioError: a scenario file or model is invalid; ``problems`` lists every mistake
    and ``lines`` (``str()`` joins them) one line per mistake (the first ``MAX_PROBLEMS``, then how
    many more).
    It is a ``surge.core.errors.BadInput`` (exit code 2)."""

    def __init__(self, problems: Sequence[Problem], file: str | None = None) -> None:
        self.problems = list(problems)
        lines = [str(p) for p in self.problems[:MAX_PROBLEMS]]
        if len(self.problems) > MAX_PROBLEMS:
            lines.append(
                f"{file or 'scenario'}: {len(self.problems) - MAX_PROBLEMS:,} more mistakes not listed "
                "(fix these first)"
            )
        super().__init__(file or "scenario", "\n".join(lines))
        self.lines = lines
        self.text = "\n".join(lines)

    def __str__(self) -> str:
        return self.text
