"""Flow: the steps an iteration runs (a sequence of requests), and weighted mixes of flows."""

from __future__ import annotations

from pydantic import Field

from surge.core.limits import MAX_STEPS, MAX_WEIGHT
from surge.scenario.base import FileModel, Finding
from surge.scenario.captures import Capture
from surge.scenario.checks import Check
from surge.scenario.request import Request
from surge.scenario.think import ThinkTime


class Step(FileModel):
    """Step: one request, named by ``name`` (its tag for per-endpoint metrics and thresholds;
    default ``METHOD /path/{slot}``), with optional ``check``, ``capture`` (name → source)
    and ``think_time`` (a pause after the response)."""

    name: str | None = Field(default=None, min_length=1)
    request: Request = Field(default_factory=Request)
    check: Check | None = None
    capture: dict[str, Capture] = Field(default_factory=dict)
    think_time: ThinkTime | None = None


class MixEntry(FileModel):
    """MixEntry: one choice of a weighted mix: either a ``flow`` (a list of steps) or the
    fields of a single step (``request``, ``check``, ``capture``, ``think_time``) inline.
    ``weight`` is relative (70/25/5 and 0.7/0.25/0.05 mean the same); ``name`` names the
    flow (and, inline, the step's tag)."""

    weight: float = Field(gt=0, le=MAX_WEIGHT)
    name: str | None = Field(default=None, min_length=1)
    flow: list[Step] | None = Field(default=None, max_length=MAX_STEPS)
    request: Request | None = None
    check: Check | None = None
    capture: dict[str, Capture] = Field(default_factory=dict)
    think_time: ThinkTime | None = None

    def problems(self) -> list[Finding]:
        """problems reports an entry with both or neither of ``flow`` and ``request``, step
        fields beside a ``flow``, and an empty flow."""
        if self.flow is not None and self.request is not None:
            return [((), "give either flow (several steps) or request (one step), not both")]
        if self.flow is None and self.request is None:
            return [((), "give flow (a list of steps) or request (one step)")]
        if self.flow is not None:
            extra = [
                k for k, v in (("check", self.check), ("capture", self.capture), ("think_time", self.think_time)) if v
            ]
            if extra:
                return [((extra[0],), f"{extra[0]} belongs to a step: move it into one of the flow's steps")]
            if not self.flow:
                return [(("flow",), "the flow has no steps")]
        return []

    def steps(self) -> list[Step]:
        """steps are the entry's steps: its flow, or its one inline step."""
        if self.flow is not None:
            return self.flow
        return [
            Step(
                name=self.name,
                request=self.request or Request(),
                check=self.check,
                capture=self.capture,
                think_time=self.think_time,
            )
        ]
