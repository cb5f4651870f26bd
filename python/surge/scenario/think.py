"""Think time: a pause after a request or after an iteration, fixed or random.

Written as a duration (``1s``: fixed), or ``{type: uniform, min: 0.5s, max: 1.5s}``, or
``{type: exponential, mean: 1s}``. None is scaled by ``--time-scale``: a user's pause is
part of what a test measures (it sets a closed model's rate).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field

from surge.scenario.base import FileModel, Finding
from surge.scenario.quantities import ThinkDuration


class FixedThink(FileModel):
    """FixedThink: always ``duration``."""

    type: Literal["fixed"] = "fixed"
    duration: ThinkDuration

    def problems(self) -> list[Finding]:
        """problems lists nothing: any duration is a valid pause."""
        return []


class UniformThink(FileModel):
    """UniformThink: drawn uniformly between ``min`` and ``max``."""

    type: Literal["uniform"] = "uniform"
    min: ThinkDuration
    max: ThinkDuration

    def problems(self) -> list[Finding]:
        """problems reports ``max`` below ``min``."""
        return [(("max",), "max is below min")] if self.max < self.min else []


class ExponentialThink(FileModel):
    """ExponentialThink: drawn from an exponential distribution of mean ``mean`` (Poisson arrivals)."""

    type: Literal["exponential"] = "exponential"
    mean: ThinkDuration = Field(gt=0)

    def problems(self) -> list[Finding]:
        """problems lists nothing: the field bounds say it all."""
        return []


def _shorthand(value: Any) -> Any:
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return {"type": "fixed", "duration": value}
    return value


ThinkTime = Annotated[
    Annotated[FixedThink | UniformThink | ExponentialThink, Field(discriminator="type")],
    BeforeValidator(_shorthand),
]
"""ThinkTime is a pause: a duration (fixed) or a uniform or exponential distribution."""
