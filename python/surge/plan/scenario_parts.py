"""The parts of a scenario's plan beyond its executor and requests, as the engine takes them
(``crates/surge-engine/src/spec/``: ``flow.rs``, ``variables/spec.rs``, ``capture.rs``,
``check.rs``; docs/plan.md): think times, variables, captures and checks, each a frozen
dataclass per kind with the engine's JSON names and defaults. A scenario file's plans use them
(``surge.scenario.compile``); ``surge.plan.model`` only names them in its annotations, so that a
URL run, which has none, does not build these classes at start-up.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from surge.plan.json_form import OMITTED_AT_DEFAULT

# Think times: a pause after a step or an iteration.


@dataclass(frozen=True, kw_only=True)
class ThinkFixed:
    """ThinkFixed: a pause of exactly ``s`` seconds."""

    type: Literal["fixed"] = "fixed"
    s: float


@dataclass(frozen=True, kw_only=True)
class ThinkUniform:
    """ThinkUniform: a pause drawn uniformly between ``min_s`` and ``max_s`` seconds."""

    type: Literal["uniform"] = "uniform"
    min_s: float
    max_s: float


@dataclass(frozen=True, kw_only=True)
class ThinkExponential:
    """ThinkExponential: a pause drawn exponentially with mean ``mean_s`` (a Poisson process)."""

    type: Literal["exponential"] = "exponential"
    mean_s: float


ThinkSpec = ThinkFixed | ThinkUniform | ThinkExponential
"""ThinkSpec is the engine's ThinkTime, chosen by ``type``."""


THINK_TIMES: tuple[type[ThinkSpec], ...] = (ThinkFixed, ThinkUniform, ThinkExponential)
"""THINK_TIMES are the think time classes."""


# Variables: drawn once per iteration (docs/plan.md, "VariableSpec").


@dataclass(frozen=True, kw_only=True)
class CounterVariable:
    """CounterVariable yields ``start + step*k``, unique run-wide (striped over threads)."""

    name: str
    type: Literal["counter"] = "counter"
    start: int = 1
    step: int = 1


@dataclass(frozen=True, kw_only=True)
class UniformVariable:
    """UniformVariable yields an integer in ``[min, max]``, both inclusive."""

    name: str
    type: Literal["uniform"] = "uniform"
    min: int
    max: int


@dataclass(frozen=True, kw_only=True)
class ZipfVariable:
    """ZipfVariable yields a rank in ``1..=n`` with probability proportional to ``1/k^s``."""

    name: str
    type: Literal["zipf"] = "zipf"
    n: int
    s: float


@dataclass(frozen=True, kw_only=True)
class ChoiceVariable:
    """ChoiceVariable yields one of ``values``, uniformly or by ``weights``."""

    name: str
    type: Literal["choice"] = "choice"
    values: list[str]
    weights: list[float] | None = None


@dataclass(frozen=True, kw_only=True)
class UuidVariable:
    """UuidVariable yields a random version-4 UUID."""

    name: str
    type: Literal["uuid"] = "uuid"


@dataclass(frozen=True, kw_only=True)
class RandomStringVariable:
    """RandomStringVariable yields ``length`` characters drawn from ``alphabet`` (None: [A-Za-z0-9])."""

    name: str
    type: Literal["random-string"] = "random-string"
    length: int
    alphabet: str | None = None


@dataclass(frozen=True, kw_only=True)
class RowsVariable:
    """RowsVariable yields one row of a table (``name.column`` slots), the table given as
    ``rows`` or as ``cells`` (every cell followed by a NUL); ``pick`` sequential, random or unique."""

    name: str
    type: Literal["rows"] = "rows"
    columns: list[str]
    rows: list[list[str]] = field(default_factory=list, metadata=OMITTED_AT_DEFAULT)
    cells: str | None = field(default=None, metadata=OMITTED_AT_DEFAULT)
    pick: Literal["sequential", "random", "unique"] = "sequential"


@dataclass(frozen=True, kw_only=True)
class PoolVariable:
    """PoolVariable yields a value of the data pool ``pool`` (``pick`` sequential, random or
    zipf with exponent ``s``)."""

    name: str
    type: Literal["pool"] = "pool"
    pool: str
    pick: Literal["sequential", "random", "zipf"] = "random"
    s: float | None = None


@dataclass(frozen=True, kw_only=True)
class ConstantVariable:
    """ConstantVariable always yields ``value``."""

    name: str
    type: Literal["constant"] = "constant"
    value: str


@dataclass(frozen=True, kw_only=True)
class DecimalVariable:
    """DecimalVariable yields a number in ``[min, max]`` with ``decimals`` digits after the point."""

    name: str
    type: Literal["decimal"] = "decimal"
    min: float
    max: float
    decimals: int = 2


@dataclass(frozen=True, kw_only=True)
class VuVariable:
    """VuVariable yields the VU's number, 1-based, unique within the scenario."""

    name: str
    type: Literal["vu"] = "vu"


@dataclass(frozen=True, kw_only=True)
class TimestampVariable:
    """TimestampVariable yields the wall-clock time the iteration starts, in ``unit`` (s, ms, us)."""

    name: str
    type: Literal["timestamp"] = "timestamp"
    unit: Literal["s", "ms", "us"] = "ms"


VariableSpec = (
    CounterVariable
    | UniformVariable
    | ZipfVariable
    | ChoiceVariable
    | UuidVariable
    | RandomStringVariable
    | RowsVariable
    | PoolVariable
    | ConstantVariable
    | DecimalVariable
    | VuVariable
    | TimestampVariable
)
"""VariableSpec is one of the engine's variables, chosen by ``type``."""

VARIABLES: tuple[type[VariableSpec], ...] = (
    CounterVariable,
    UniformVariable,
    ZipfVariable,
    ChoiceVariable,
    UuidVariable,
    RandomStringVariable,
    RowsVariable,
    PoolVariable,
    ConstantVariable,
    DecimalVariable,
    VuVariable,
    TimestampVariable,
)
"""VARIABLES are the variable classes."""


# Captures: a value taken from a response into a VU variable or a pool.


@dataclass(frozen=True, kw_only=True)
class JsonCapture:
    """JsonCapture takes the value at the JSONPath ``path`` of a JSON body."""

    name: str
    to_pool: bool = False
    source: Literal["json"] = field(default="json", metadata={"json": "from"})
    path: str


@dataclass(frozen=True, kw_only=True)
class HeaderCapture:
    """HeaderCapture takes the value of the response header ``header``."""

    name: str
    to_pool: bool = False
    source: Literal["header"] = field(default="header", metadata={"json": "from"})
    header: str


@dataclass(frozen=True, kw_only=True)
class RegexCapture:
    """RegexCapture takes group ``group`` of the first match of ``pattern`` in the body."""

    name: str
    to_pool: bool = False
    source: Literal["regex"] = field(default="regex", metadata={"json": "from"})
    pattern: str
    group: int = 1


CaptureSpec = JsonCapture | HeaderCapture | RegexCapture
"""CaptureSpec is one of the engine's captures, chosen by ``from``."""


CAPTURES: tuple[type[CaptureSpec], ...] = (JsonCapture, HeaderCapture, RegexCapture)
"""CAPTURES are the capture classes (chosen by ``from``)."""


# Checks: counted per check, never aborting an iteration.


@dataclass(frozen=True, kw_only=True)
class StatusCheck:
    """StatusCheck passes when the status code is one of ``codes`` (JSON ``in``)."""

    name: str
    type: Literal["status"] = "status"
    codes: list[int] = field(metadata={"json": "in"})


@dataclass(frozen=True, kw_only=True)
class BodyContainsCheck:
    """BodyContainsCheck passes when the body contains ``text``."""

    name: str
    type: Literal["body_contains"] = "body_contains"
    text: str


@dataclass(frozen=True, kw_only=True)
class BodyMatchesCheck:
    """BodyMatchesCheck passes when the regex ``pattern`` matches the body."""

    name: str
    type: Literal["body_matches"] = "body_matches"
    pattern: str


@dataclass(frozen=True, kw_only=True)
class JsonEqualsCheck:
    """JsonEqualsCheck passes when the JSON body's value at ``path`` equals ``value``."""

    name: str
    type: Literal["json_equals"] = "json_equals"
    path: str
    value: Any


@dataclass(frozen=True, kw_only=True)
class HeaderPresentCheck:
    """HeaderPresentCheck passes when the response has the header ``header``."""

    name: str
    type: Literal["header_present"] = "header_present"
    header: str


@dataclass(frozen=True, kw_only=True)
class LatencyUnderCheck:
    """LatencyUnderCheck passes when the response came within ``ms`` milliseconds."""

    name: str
    type: Literal["latency_under"] = "latency_under"
    ms: float


CheckSpec = (
    StatusCheck | BodyContainsCheck | BodyMatchesCheck | JsonEqualsCheck | HeaderPresentCheck | LatencyUnderCheck
)
"""CheckSpec is one of the engine's checks, chosen by ``type``."""


CHECKS: tuple[type[CheckSpec], ...] = (
    StatusCheck,
    BodyContainsCheck,
    BodyMatchesCheck,
    JsonEqualsCheck,
    HeaderPresentCheck,
    LatencyUnderCheck,
)
"""CHECKS are the check classes."""
