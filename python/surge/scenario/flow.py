"""Flow: the steps an iteration runs (a sequence of requests), and weighted mixes of flows."""

from __future__ import annotations

from pydantic import Field

from surge.core.limits import MAX_STEPS, MAX_WEIGHT
from surge.scenario.base import FileModel, Finding
from surge.scenario.captures import Capture
from surge.scenario.checks import Check
from surge.scenario.completion import PLACEHOLDER_SLOTS, Completion, CompletionSlots
from surge.scenario.request import Request
from surge.scenario.think import ThinkTime

_BOTH = "give either request (any request) or completion (an OpenAI-compatible completion), not both"


class Step(FileModel):
    """Step: one request, named by ``name`` (its tag for per-endpoint metrics and thresholds;
    default ``METHOD /path/{slot}``), with optional ``check``, ``capture`` (name → source)
    and ``think_time`` (a pause after the response). The request is ``request``, or a
    ``completion`` (an OpenAI-compatible completion, which makes its own request)."""

    name: str | None = Field(default=None, min_length=1)
    request: Request = Field(default_factory=Request)
    completion: Completion | None = None
    check: Check | None = None
    capture: dict[str, Capture] = Field(default_factory=dict)
    think_time: ThinkTime | None = None

    def problems(self) -> list[Finding]:
        """problems reports a step with both ``request`` and ``completion``."""
        if self.completion is not None and "request" in self.model_fields_set:
            return [(("completion",), _BOTH)]
        return []

    def sent(self, slots: CompletionSlots = PLACEHOLDER_SLOTS) -> Request:
        """sent is the request the step sends: ``request``, or its completion's (a POST whose
        body reads the variables ``slots`` names)."""
        return self.request if self.completion is None else self.completion.request(slots)

    def default_tag(self, default_path: str) -> str:
        """default_tag is the step's tag when it has no name: ``METHOD /path/{slot}``."""
        return self.completion.default_tag() if self.completion is not None else self.request.default_tag(default_path)


class MixEntry(FileModel):
    """MixEntry: one choice of a weighted mix: either a ``flow`` (a list of steps) or the
    fields of a single step (``request``, ``check``, ``capture``, ``think_time``) inline.
    ``weight`` is relative (70/25/5 and 0.7/0.25/0.05 mean the same); ``name`` names the
    flow (and, inline, the step's tag). An inline step's request may be a ``completion``."""

    weight: float = Field(gt=0, le=MAX_WEIGHT)
    name: str | None = Field(default=None, min_length=1)
    flow: list[Step] | None = Field(default=None, max_length=MAX_STEPS)
    request: Request | None = None
    completion: Completion | None = None
    check: Check | None = None
    capture: dict[str, Capture] = Field(default_factory=dict)
    think_time: ThinkTime | None = None

    def problems(self) -> list[Finding]:
        """problems reports an entry with more than one or none of ``flow``, ``request`` and
        ``completion``, step fields beside a ``flow``, and an empty flow."""
        if self.request is not None and self.completion is not None:
            return [(("completion",), _BOTH)]
        one = "request" if self.completion is None else "completion"
        if self.flow is not None and (self.request is not None or self.completion is not None):
            return [((), f"give either flow (several steps) or {one} (one step), not both")]
        if self.flow is None and self.request is None and self.completion is None:
            return [((), "give flow (a list of steps), request or completion (one step)")]
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
        # An entry with both is reported by problems(); its step takes the completion alone.
        step = Step(name=self.name, check=self.check, capture=self.capture, think_time=self.think_time)
        if self.completion is not None:
            return [step.model_copy(update={"completion": self.completion})]
        return [step.model_copy(update={"request": self.request or Request()})]
