"""Finding: one diagnosis of a run, stated in a plain sentence with the figures behind it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

INFO = "info"
"""INFO is the severity of a finding that explains the results without casting doubt on them."""

WARNING = "warning"
"""WARNING is the severity of a finding that limits what the results show (a lower bound, a
queue, a server at its limit)."""

ERROR = "error"
"""ERROR is the severity of a finding that means part of the results measured a failure, not
the target's service (timeouts in a cascade, the client out of ports or files)."""

SEVERITIES = (INFO, WARNING, ERROR)
"""SEVERITIES are the severities, mildest first."""


@dataclass(frozen=True)
class Finding:
    """Finding: a diagnosis of ``kind`` (stable, snake_case, docs/diagnosis.md), its
    ``severity`` (SEVERITIES), a ``message`` (one or two plain sentences with the numbers
    behind it, secrets masked) and its ``evidence`` (the figures the rule used, by name)."""

    kind: str
    severity: str
    message: str
    evidence: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """to_dict is the finding as summary.json's ``findings[]`` holds it."""
        return {"kind": self.kind, "severity": self.severity, "message": self.message, "evidence": dict(self.evidence)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Finding:
        """from_dict reads a finding back from summary.json's ``findings[]``."""
        return cls(
            kind=data["kind"],
            severity=data["severity"],
            message=data["message"],
            evidence=dict(data.get("evidence") or {}),
        )
