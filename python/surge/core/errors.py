"""surge's exception base, SurgeError, and BadInput for what a user typed. Pure Python: the
engine's exceptions (``surge.engine.execute``) are created under SurgeError when the compiled
module loads."""

from __future__ import annotations

__all__ = ["BadInput", "SurgeError"]


class SurgeError(Exception):
    """SurgeError is the base of every error surge raises."""


class BadInput(SurgeError, ValueError):
    """BadInput: a value the user gave is invalid; ``where`` names the flag, file or key."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.where = where
        self.message = message
        self.lines = [f"{where}: {message}"]
        """lines are what the CLI prints, one ``surge: error:`` line each (one, but a scenario
        file's ScenarioError lists a line per mistake)."""
