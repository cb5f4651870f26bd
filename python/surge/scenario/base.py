"""The base of every scenario-file model: strict (unknown keys are errors), and a helper type
for the problems that checks beyond one field's shape report."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

Path = tuple[str | int, ...]
"""Path is a location in the scenario file: mapping keys and list indexes from the top."""

Finding = tuple[Path, str]
"""Finding is one problem found by a model's own ``problems()``: where (relative to the
model) and what is wrong."""


class FileModel(BaseModel):
    """FileModel is the base of the scenario-file models: unknown keys are refused, values
    are validated when assigned, numbers must be finite, and instances are compared field by field."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, allow_inf_nan=False)
