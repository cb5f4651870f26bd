"""Variables: values drawn once per iteration and templated into requests as ``{{name}}``
(or ``{{name.column}}`` for a CSV row).

Every kind is a model with a ``type``; a bare scalar (``tenant: acme``) is a constant.
Kinds the engine draws itself compile one to one; ``csv`` compiles to the engine's ``rows``
(the file is read in Python) and ``env`` to a ``constant`` (resolved when compiling).
"""

from __future__ import annotations

import os
import string
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, PrivateAttr
from pydantic_core import PydanticCustomError

from surge.core.limits import INT64_MAX, INT64_MIN, MAX_DECIMAL, MAX_STRING_LENGTH, MAX_WEIGHT, MAX_ZIPF_N
from surge.scenario.base import FileModel, Finding
from surge.scenario.csvdata import CsvTable, read_csv


def scalar_text(value: Any) -> str:
    """scalar_text turns a YAML scalar into the text a template receives (``true``, ``42``, ``1.5``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        return str(value)
    raise PydanticCustomError("scalar", "expected a single value (text or number), not a list or mapping")


Text = Annotated[str, BeforeValidator(scalar_text)]
"""Text is a scalar written as text, a number or a boolean, kept as the text a template gets."""


class Counter(FileModel):
    """Counter: ``start``, ``start + step``, ... in the order iterations begin (per run)."""

    type: Literal["counter"] = "counter"
    start: int = Field(default=0, ge=INT64_MIN, le=INT64_MAX)
    step: int = Field(default=1, ge=INT64_MIN, le=INT64_MAX)

    def problems(self) -> list[Finding]:
        """problems reports a step of 0 (every value would be the same)."""
        return [(("step",), "a step of 0 never counts: use a constant")] if self.step == 0 else []


class Uniform(FileModel):
    """Uniform: an integer drawn uniformly from ``min`` to ``max``, both included."""

    type: Literal["uniform"] = "uniform"
    min: int = Field(ge=INT64_MIN, le=INT64_MAX)
    max: int = Field(ge=INT64_MIN, le=INT64_MAX)

    def problems(self) -> list[Finding]:
        """problems reports ``min`` above ``max``."""
        return [(("max",), f"max {self.max} is below min {self.min}")] if self.min > self.max else []


class Zipf(FileModel):
    """Zipf: an integer rank from 1 to ``n``, rank k drawn with weight 1/k^s (1 the most often)."""

    type: Literal["zipf"] = "zipf"
    n: int = Field(ge=1, le=MAX_ZIPF_N)
    s: float = Field(gt=0)

    def problems(self) -> list[Finding]:
        """problems lists nothing: the field bounds say it all."""
        return []


class Choice(FileModel):
    """Choice: one of ``values``, uniformly or by ``weights`` (one per value)."""

    type: Literal["choice"] = "choice"
    values: list[Text] = Field(min_length=1)
    weights: list[Annotated[float, Field(le=MAX_WEIGHT)]] | None = None

    def problems(self) -> list[Finding]:
        """problems reports weights that do not pair with the values or are not positive."""
        if self.weights is None:
            return []
        found: list[Finding] = []
        if len(self.weights) != len(self.values):
            found.append(
                (("weights",), f"{len(self.weights)} weights for {len(self.values)} values: give one weight per value")
            )
        found += [(("weights", i), f"weight {w:g} must be above 0") for i, w in enumerate(self.weights) if w <= 0]
        return found


class Uuid(FileModel):
    """Uuid: a random (version 4) UUID."""

    type: Literal["uuid"] = "uuid"

    def problems(self) -> list[Finding]:
        """problems lists nothing: a UUID has no parameters."""
        return []


class RandomString(FileModel):
    """RandomString: ``length`` characters drawn from ``alphabet`` (letters and digits by default)."""

    type: Literal["random-string"] = "random-string"
    length: int = Field(ge=1, le=MAX_STRING_LENGTH)
    alphabet: str = Field(default=string.ascii_letters + string.digits, min_length=1)

    def problems(self) -> list[Finding]:
        """problems lists nothing: the field bounds say it all."""
        return []


class Csv(FileModel):
    """Csv: a row of ``file`` (a CSV with a header row; relative to the scenario file), used as
    ``{{name.column}}``; ``pick`` is ``sequential`` (rows in turn), ``random``, or ``unique``
    (one row per VU: the file needs at least as many rows as VUs)."""

    type: Literal["csv"] = "csv"
    file: str = Field(min_length=1)
    pick: Literal["sequential", "random", "unique"] = "sequential"
    _table: CsvTable | None = PrivateAttr(default=None)

    def problems(self) -> list[Finding]:
        """problems lists nothing about the fields alone; ``table`` reads the file."""
        return []

    def path(self, base_dir: Path) -> Path:
        """path is the CSV file, resolved against ``base_dir`` (the scenario file's folder)."""
        return Path(self.file) if Path(self.file).is_absolute() else base_dir / self.file

    def table(self, base_dir: Path) -> CsvTable:
        """table reads the CSV file once and keeps it; CsvError names the file and line."""
        if self._table is None:
            self._table = read_csv(self.path(base_dir))
        return self._table


class Pool(FileModel):
    """Pool: a value from the pool ``pool`` that ``to_pool`` captures filled (typically in
    ``setup``); ``pick`` is ``random``, ``sequential`` or ``zipf`` (with exponent ``s``)."""

    type: Literal["pool"] = "pool"
    pool: str = Field(min_length=1)
    pick: Literal["random", "sequential", "zipf"] = "random"
    s: float | None = Field(default=None, gt=0)

    def problems(self) -> list[Finding]:
        """problems reports ``s`` missing for a zipf pick, or given for another."""
        if self.pick == "zipf" and self.s is None:
            return [(("s",), "a zipf pick needs the exponent s (e.g. s: 1.1)")]
        if self.pick != "zipf" and self.s is not None:
            return [(("s",), f"s only applies to pick: zipf, not pick: {self.pick}")]
        return []


class Env(FileModel):
    """Env: the environment variable ``name`` when the run starts, else ``default``; with no
    default a missing variable is an error before anything runs."""

    type: Literal["env"] = "env"
    name: str = Field(min_length=1)
    default: Text | None = None

    def problems(self) -> list[Finding]:
        """problems lists nothing about the fields alone; ``resolve`` reads the environment."""
        return []

    def resolve(self, env: Mapping[str, str] | None = None) -> str | None:
        """resolve returns the variable's value from ``env`` (default: the process
        environment), else the default, else None."""
        value = (os.environ if env is None else env).get(self.name)
        return value if value is not None else self.default


class Constant(FileModel):
    """Constant: the same text every time."""

    type: Literal["constant"] = "constant"
    value: Text

    def problems(self) -> list[Finding]:
        """problems lists nothing: a constant is always valid."""
        return []


class Decimal(FileModel):
    """Decimal: a number drawn uniformly from ``min`` to ``max``, written with ``decimals``
    digits after the point (a sensor reading, a price)."""

    type: Literal["decimal"] = "decimal"
    min: float = Field(ge=-MAX_DECIMAL, le=MAX_DECIMAL)
    max: float = Field(ge=-MAX_DECIMAL, le=MAX_DECIMAL)
    decimals: int = Field(default=2, ge=0, le=9)

    def problems(self) -> list[Finding]:
        """problems reports ``min`` above ``max``."""
        return [(("max",), f"max {self.max:g} is below min {self.min:g}")] if self.min > self.max else []


class Vu(FileModel):
    """Vu: the virtual user's number, 1-based and unique within its scenario (k6's ``__VU``)."""

    type: Literal["vu"] = "vu"

    def problems(self) -> list[Finding]:
        """problems lists nothing: it has no parameters."""
        return []


class Timestamp(FileModel):
    """Timestamp: the wall-clock time when the iteration starts, since the Unix epoch, in
    ``s``, ``ms`` (default) or ``us``."""

    type: Literal["timestamp"] = "timestamp"
    unit: Literal["s", "ms", "us"] = "ms"

    def problems(self) -> list[Finding]:
        """problems lists nothing: the unit's values say it all."""
        return []


def _shorthand(value: Any) -> Any:
    if isinstance(value, (str, int, float, bool)):
        return {"type": "constant", "value": value}
    return value


AnyVariable = (
    Counter | Uniform | Zipf | Choice | Uuid | RandomString | Csv | Pool | Env | Constant | Decimal | Vu | Timestamp
)
"""AnyVariable is any one of the variable kinds."""

Variable = Annotated[Annotated[AnyVariable, Field(discriminator="type")], BeforeValidator(_shorthand)]
"""Variable is a variable of the kind its ``type`` names; a bare scalar is a Constant."""

VARIABLE_TYPES = (
    "counter",
    "uniform",
    "zipf",
    "choice",
    "uuid",
    "random-string",
    "csv",
    "pool",
    "env",
    "constant",
    "decimal",
    "vu",
    "timestamp",
)
"""VARIABLE_TYPES are the accepted ``type`` values of a variable."""
