"""The scenario file as pydantic models: ScenarioModel at the top (``surge.scenario.file``'s
ScenarioFile adds checking and compiling), its scenarios, setup and teardown phases, defaults
and thresholds. Building these in Python is the same as writing
the YAML file: both validate the same way and compile to the same plan."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path as FsPath
from typing import TYPE_CHECKING, Annotated, Any, Literal, Self
from urllib.parse import urlsplit

from pydantic import BeforeValidator, Field, PrivateAttr, field_validator
from pydantic_core import PydanticCustomError

from surge.core.limits import MAX_DURATION_S, MAX_SEND_SLACK_S, MAX_STEPS
from surge.plan.thresholds import Threshold, ThresholdError, parse_threshold
from surge.scenario.base import FileModel, Finding, Path
from surge.scenario.executors import ExecutorInput, SharedIterationsInput
from surge.scenario.flow import MixEntry, Step
from surge.scenario.lines import line_of, parse_yaml
from surge.scenario.quantities import Duration, ScheduledDuration, SendSlack, StartTime
from surge.scenario.think import ThinkTime
from surge.scenario.variables import Text, Variable

if TYPE_CHECKING:
    from surge.scenario.problems import Problem


def _seconds(name: str, seconds: float, least: float, most: float = MAX_DURATION_S) -> float:
    """_seconds checks an override given in seconds: finite, from ``least`` to ``most``."""
    if not (isinstance(seconds, (int, float)) and least <= seconds <= most):
        raise ValueError(f"{name} must be from {least:g} to {most:g} seconds, got {seconds!r}")
    return float(seconds)


class Defaults(FileModel):
    """Defaults: what every request gets unless it says otherwise: ``timeout`` (default 30s)
    and ``headers`` (a request's own headers win, names compared without case)."""

    timeout: Duration = Field(default=30.0, gt=0)
    headers: dict[str, Text] = Field(default_factory=dict)


def _threshold_shorthand(value: Any) -> Any:
    return {"expr": value} if isinstance(value, str) else value


class ThresholdSpec(FileModel):
    """ThresholdSpec: a threshold as written: ``expr`` (``p(95) < 300ms``), optional ``tag``
    and ``scenario`` scopes, ``abort_on_fail`` (stop the run once it fails, not before
    ``delay`` into the run) and ``no_data`` (``fail``, the default, or ``pass``). A bare
    string is an ``expr``."""

    expr: str
    tag: str | None = None
    scenario: str | None = None
    abort_on_fail: bool = False
    delay: ScheduledDuration = 0.0
    no_data: Literal["fail", "pass"] = "fail"

    @field_validator("expr")
    @classmethod
    def _parses(cls, expr: str) -> str:
        try:
            parse_threshold(expr)
        except ThresholdError as e:
            raise PydanticCustomError("threshold", "{why}", {"why": str(e)}) from None
        return expr

    def threshold(self) -> Threshold:
        """threshold is the parsed rule, scoped and with its abort settings."""
        return parse_threshold(
            self.expr,
            tag=self.tag,
            scenario=self.scenario,
            abort_on_fail=self.abort_on_fail,
            delay_s=self.delay,
            no_data=self.no_data,
        )


@dataclass(frozen=True)
class Sequence:
    """Sequence: one flow of a phase, as the engine runs it: a name, a weight, and its steps
    with their paths in the file."""

    name: str
    weight: float
    steps: list[tuple[Path, Step]]


class Phase(FileModel):
    """Phase: load with a flow: an ``executor`` (default: one iteration on one VU), its own
    ``variables`` (beside the file's), either ``flow`` (the steps of every iteration) or
    ``mix`` (weighted flows, one chosen per iteration), and ``think_time`` after each
    iteration. ``setup`` and ``teardown`` are phases; a Scenario is a phase with a start time."""

    executor: ExecutorInput = Field(default_factory=SharedIterationsInput)
    variables: dict[str, Variable] = Field(default_factory=dict)
    flow: list[Step] | None = Field(default=None, max_length=MAX_STEPS)
    mix: list[MixEntry] | None = Field(default=None, min_length=1, max_length=MAX_STEPS)
    think_time: ThinkTime | None = None

    def problems(self) -> list[Finding]:
        """problems reports a phase with both or neither of ``flow`` and ``mix``, or an empty flow."""
        if self.flow is not None and self.mix is not None:
            return [((), "give either flow (one sequence of steps) or mix (weighted flows), not both")]
        if self.flow is None and self.mix is None:
            return [((), "missing flow: give flow (a list of steps) or mix (weighted flows)")]
        if self.flow is not None and not self.flow:
            return [(("flow",), "the flow has no steps")]
        return []

    def sequences(self, name: str, default_path: str) -> list[Sequence]:
        """sequences are the phase's flows with their weights and the paths of their steps:
        ``flow`` is one sequence named like the phase; a mix entry is named by its ``name``,
        else by its single step's tag, else ``flow-N``."""
        if self.flow is not None:
            return [Sequence(name, 1.0, [(("flow", i), s) for i, s in enumerate(self.flow)])]
        out = []
        for i, entry in enumerate(self.mix or []):
            steps: list[tuple[Path, Step]]
            if entry.flow is not None:
                steps = [(("mix", i, "flow", j), s) for j, s in enumerate(entry.flow)]
                default = f"flow-{i + 1}"
            else:
                steps = [(("mix", i), entry.steps()[0])]
                default = entry.steps()[0].default_tag(default_path)
            out.append(Sequence(entry.name or default, entry.weight, steps))
        return out


class Scenario(Phase):
    """Scenario: a measured phase: an ``executor`` (required) and a ``start_time`` offset
    from the start of the run; scenarios run in parallel."""

    executor: ExecutorInput
    start_time: StartTime = 0.0


class Http2(FileModel):
    """Http2: the file's ``http2`` key, ``{streams: N}``: HTTP/2 to the target (h2 by ALPN over
    https, h2c with prior knowledge over http), N requests at once per connection (default 100)."""

    streams: int = Field(default=100, ge=1, le=1000)


class ScenarioModel(FileModel):
    """ScenarioModel: a whole scenario file's keys (``surge.scenario.ScenarioFile`` checks and
    compiles one): the ``target`` base URL, ``defaults``,
    ``variables`` visible to every phase, optional ``setup`` and ``teardown`` (not measured),
    the named ``scenarios`` (at least one), ``thresholds``, ``graceful_stop`` (how long
    iterations in progress at the end may finish), ``stream_idle_timeout`` (after an event
    stream's first event, the longest wait for the next), ``send_slack`` (how late an open-model send
    may go out to be batched; None: the engine's default), ``insecure`` (skip TLS verification)
    and ``http2`` (speak HTTP/2, ``streams`` requests at once per connection; None: HTTP/1.1)."""

    target: str
    insecure: bool = False
    http2: Http2 | None = None
    defaults: Defaults = Field(default_factory=Defaults)
    graceful_stop: Duration = 5.0
    stream_idle_timeout: Duration | None = None
    send_slack: SendSlack | None = None
    variables: dict[str, Variable] = Field(default_factory=dict)
    setup: Phase | None = None
    teardown: Phase | None = None
    scenarios: dict[str, Scenario] = Field(min_length=1)
    thresholds: list[Annotated[ThresholdSpec, BeforeValidator(_threshold_shorthand)]] = Field(default_factory=list)

    _base_dir: FsPath = PrivateAttr(default_factory=FsPath)
    _source: str | None = PrivateAttr(default=None)
    _lines: Mapping[Path, int] | None = PrivateAttr(default_factory=dict)  # None: not read yet, see _text
    _text: str | None = PrivateAttr(default=None)
    _checked: tuple[Mapping[str, str] | None] | None = PrivateAttr(default=None)  # (env,) of the last clean check

    def __setattr__(self, name: str, value: Any) -> None:
        if not name.startswith("_"):
            self._checked = None  # a key changed: the meaning checks must run again
        super().__setattr__(name, value)

    @field_validator("target")
    @classmethod
    def _url(cls, target: str) -> str:
        parts = urlsplit(target)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise PydanticCustomError(
                "url", "'{target}' is not an http:// or https:// URL with a host", {"target": target}
            )
        if parts.query or parts.fragment:
            raise PydanticCustomError("url", "the target is a base URL: put the query on each request's path")
        if "@" in parts.netloc:
            raise PydanticCustomError(
                "url",
                "credentials in the URL are not supported: send them in a header (defaults: headers: Authorization)",
            )
        return target

    def with_target(self, url: str) -> Self:
        """with_target returns a copy aimed at ``url`` (validated like ``target``), e.g. for a
        ``--target`` flag or a test server on a free port; the copy keeps the file's folder and lines."""
        copy = self.model_copy(update={"target": type(self)._url(url)})
        copy._checked = None  # the target's path names the steps that give none
        return copy

    def with_overrides(
        self,
        timeout: float | None = None,
        graceful_stop: float | None = None,
        insecure: bool = False,
        send_slack: float | None = None,
        stream_idle_timeout: float | None = None,
        http2_streams: int | None = None,
    ) -> Self:
        """with_overrides returns a copy with ``defaults.timeout``, ``graceful_stop`` and
        ``send_slack`` (in seconds) replaced where given, and ``insecure`` set when true: what
        ``surge run FILE --timeout/--grace/--send-slack/--insecure`` change. A request's own
        ``timeout`` stays."""
        update: dict[str, Any] = {}
        if timeout is not None:
            update["defaults"] = self.defaults.model_copy(update={"timeout": _seconds("timeout", timeout, 1e-9)})
        if graceful_stop is not None:
            update["graceful_stop"] = _seconds("graceful_stop", graceful_stop, 0.0)
        if stream_idle_timeout is not None:
            update["stream_idle_timeout"] = _seconds("stream_idle_timeout", stream_idle_timeout, 1e-9)
        if send_slack is not None:
            update["send_slack"] = _seconds("send_slack", send_slack, 0.0, MAX_SEND_SLACK_S)
        if insecure:
            update["insecure"] = True
        if http2_streams is not None:
            update["http2"] = Http2(streams=http2_streams)
        return self.model_copy(update=update) if update else self

    def default_path(self) -> str:
        """default_path is the target URL's path, used by steps that give none (``/`` if empty)."""
        return urlsplit(self.target).path or "/"

    def phases(self) -> list[tuple[Path, str, Phase]]:
        """phases lists setup, every scenario, then teardown, with their paths and names."""
        out: list[tuple[Path, str, Phase]] = []
        if self.setup is not None:
            out.append((("setup",), "setup", self.setup))
        out += [(("scenarios", name), name, s) for name, s in self.scenarios.items()]
        if self.teardown is not None:
            out.append((("teardown",), "teardown", self.teardown))
        return out

    def with_base_dir(self, base_dir: str | FsPath) -> Self:
        """with_base_dir sets the folder CSV paths are relative to (the file's folder when
        loaded; the working directory otherwise) and returns the same object."""
        self._base_dir = FsPath(base_dir)
        self._checked = None
        return self

    def base_dir(self) -> FsPath:
        """base_dir is the folder CSV paths are relative to."""
        return self._base_dir

    def locate(self, problem: Problem) -> Problem:
        """locate places a problem at its file and line, when the model came from a file."""
        if self._source is None:
            return problem

        if self._lines is None:  # loaded without lines (the quick way): read them now
            self._lines = parse_yaml(self._text).lines if self._text is not None else {}
        return problem.located(self._source, line_of(self._lines, problem.path))

    def thresholds_parsed(self) -> list[Threshold]:
        """thresholds_parsed are the file's thresholds, parsed and scoped."""
        return [t.threshold() for t in self.thresholds]
