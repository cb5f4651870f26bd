"""surge's exceptions: the engine's tree, plus BadInput for what a user typed."""

from __future__ import annotations

from surge._engine import (
    ConnectionLimitError,
    PlanError,
    SetupError,
    SurgeError,
    UnreachableError,
)

__all__ = [
    "BadInput",
    "ConnectionLimitError",
    "PlanError",
    "SetupError",
    "SurgeError",
    "UnreachableError",
]


class BadInput(SurgeError, ValueError):
    """BadInput: a value the user gave is invalid; ``where`` names the flag, file or key."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.where = where
        self.message = message
        self.lines = [f"{where}: {message}"]
        """lines are what the CLI prints, one ``surge: error:`` line each (one, but a scenario
        file's ScenarioError lists a line per mistake)."""
