"""Completion: a step that sends an OpenAI-compatible completion (docs/scenarios.md,
"Completions"): ``POST /v1/chat/completions`` (``api: chat``: the prompt as one user message)
or ``POST /v1/completions`` (``api: text``: the prompt as ``prompt``), streamed, with the usage
asked for; its prompt drawn per iteration from a list, a CSV column or synthetic prompts of a
length distribution, its ``max_tokens`` a number or a distribution.

It compiles to what the engine already runs: a POST whose JSON body is a template, the prompt
and ``max_tokens`` its slots, filled by variables the compiler adds to the scenario (a
one-column ``rows`` table of prompts; a ``uniform`` or weighted ``choice`` of ``max_tokens``).
The engine puts a slot's value into a body as it is, so the prompts are JSON-escaped here,
once, when compiling: a prompt with quotes, backslashes or line breaks still makes a valid body.
"""

from __future__ import annotations

import collections
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, Field, PrivateAttr
from pydantic_core import PydanticCustomError

from surge.core.limits import INT64_MAX, MAX_SYNTHETIC_PROMPTS, MAX_SYNTHETIC_WORDS, MAX_TOKEN_COUNT
from surge.scenario.base import FileModel, Finding
from surge.scenario.csvdata import CsvTable, read_csv
from surge.scenario.quantities import Duration
from surge.scenario.request import Request
from surge.scenario.templates import display
from surge.scenario.variables import Text

ENDPOINTS = {"chat": "/v1/chat/completions", "text": "/v1/completions"}
"""ENDPOINTS is each ``api``'s default path."""

PROMPT_COLUMN = "prompt"
"""PROMPT_COLUMN names the one column of the table of prompts a completion step compiles to."""

MAX_TOKENS_DRAWS = 1000
"""MAX_TOKENS_DRAWS is how many ``max_tokens`` a normal distribution is drawn when compiling:
each request picks one of those draws (a weighted ``choice`` of the distinct values)."""

_WORDS = (
    "the of and to in is was for that with as on by at from his her this which have are had "
    "not but they one all were when there been has their more will would who also time new "
    "first two may after other people some year over into out many only most could made "
    "these world between work such life where part state city then long"
)
VOCABULARY = tuple(_WORDS.split())
"""VOCABULARY is the words of synthetic prompts: common English words, each one token to most
tokenizers and one word to the reference target's (a prompt of N words is N prompt tokens)."""


class FixedLength(FileModel):
    """FixedLength: every length is ``value`` tokens; a bare number (``max_tokens: 128``) is one."""

    type: Literal["fixed"] = "fixed"
    value: int = Field(ge=1, le=MAX_TOKEN_COUNT)

    def problems(self) -> list[Finding]:
        """problems lists nothing: the field bounds say it all."""
        return []

    def draw(self, rng: random.Random, n: int) -> list[int]:
        """draw returns ``n`` lengths: ``value`` each time."""
        return [self.value] * n


class UniformLength(FileModel):
    """UniformLength: a whole number of tokens drawn uniformly from ``min`` to ``max``, both included."""

    type: Literal["uniform"] = "uniform"
    min: int = Field(ge=1, le=MAX_TOKEN_COUNT)
    max: int = Field(ge=1, le=MAX_TOKEN_COUNT)

    def problems(self) -> list[Finding]:
        """problems reports ``min`` above ``max``."""
        return [(("max",), f"max {self.max} is below min {self.min}")] if self.min > self.max else []

    def draw(self, rng: random.Random, n: int) -> list[int]:
        """draw returns ``n`` lengths drawn with ``rng``."""
        return [rng.randint(self.min, self.max) for _ in range(n)]


class NormalLength(FileModel):
    """NormalLength: a number of tokens drawn from a normal distribution of ``mean`` and
    ``stdev``, rounded, and clamped to ``min`` (default 1) and ``max`` (default 1,048,576)."""

    type: Literal["normal"] = "normal"
    mean: float = Field(gt=0, le=MAX_TOKEN_COUNT)
    stdev: float = Field(ge=0, le=MAX_TOKEN_COUNT)
    min: int = Field(default=1, ge=1, le=MAX_TOKEN_COUNT)
    max: int = Field(default=MAX_TOKEN_COUNT, ge=1, le=MAX_TOKEN_COUNT)

    def problems(self) -> list[Finding]:
        """problems reports ``min`` above ``max``."""
        return [(("max",), f"max {self.max} is below min {self.min}")] if self.min > self.max else []

    def draw(self, rng: random.Random, n: int) -> list[int]:
        """draw returns ``n`` lengths drawn with ``rng``, each within ``min`` and ``max``."""
        return [min(max(round(rng.gauss(self.mean, self.stdev)), self.min), self.max) for _ in range(n)]


def _length_shorthand(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        return {"type": "fixed", "value": value}
    if isinstance(value, (dict, BaseModel)):
        return value
    shown = str(value).lower() if isinstance(value, bool) else repr(value)
    raise PydanticCustomError(
        "length",
        "expected a whole number of tokens (e.g. 128) or a distribution ({type: uniform, min, max} or "
        "{type: normal, mean, stdev, min, max}), got {given}",
        {"given": shown},
    )


Length = Annotated[
    Annotated[FixedLength | UniformLength | NormalLength, Field(discriminator="type")],
    BeforeValidator(_length_shorthand),
]
"""Length is a number of tokens: a whole number, or a distribution named by its ``type``."""


def _escaped(text: str) -> str:
    """_escaped is ``text`` as the inside of a JSON string (quotes, backslashes and control
    characters escaped), ready to stand between the quotes of a body template."""
    return json.dumps(text, ensure_ascii=False)[1:-1]


def prompt_table(prompts: list[str]) -> CsvTable:
    """prompt_table is the one-column table (``PROMPT_COLUMN``) of ``prompts``, each JSON-escaped,
    in the engine's ``rows`` form; ``widest`` is the longest escaped prompt's UTF-8 bytes."""
    escaped = [_escaped(p) for p in prompts]
    widest = max((len(e.encode()) for e in escaped), default=0)
    cells = "".join(e + "\0" for e in escaped)
    return CsvTable(columns=(PROMPT_COLUMN,), cells=cells, rows=len(escaped), widest=widest)


class SyntheticPrompts(FileModel):
    """SyntheticPrompts: ``count`` prompts (default 1000) of words from ``VOCABULARY``, their
    lengths in words drawn from ``tokens``, generated from ``seed`` (default 0) when compiling:
    the same file and seed give the same prompts."""

    tokens: Length
    count: int = Field(default=1000, ge=1, le=MAX_SYNTHETIC_PROMPTS)
    seed: int = Field(default=0, ge=0, le=INT64_MAX)

    def problems(self) -> list[Finding]:
        """problems reports the length distribution's mistakes, and prompts of more words
        together than ``MAX_SYNTHETIC_WORDS``."""
        found = [(("tokens", *path), message) for path, message in self.tokens.problems()]
        if not found:
            words = sum(self.lengths())
            if words > MAX_SYNTHETIC_WORDS:
                found.append(
                    (
                        ("count",),
                        f"{self.count:,} prompts of these lengths hold {words:,} words, more than the "
                        f"{MAX_SYNTHETIC_WORDS:,} a step's synthetic prompts may hold together: "
                        "generate fewer or shorter prompts",
                    )
                )
        return found

    def lengths(self) -> list[int]:
        """lengths are the prompts' lengths in words, in order (the first draws from the seed)."""
        return self.tokens.draw(random.Random(f"surge-prompt-lengths:{self.seed}"), self.count)

    def texts(self) -> list[str]:
        """texts are the prompts: words of ``VOCABULARY`` drawn from the seed, one space apart."""
        rng = random.Random(f"surge-prompt-words:{self.seed}")
        return [" ".join(rng.choices(VOCABULARY, k=n)) for n in self.lengths()]


class Prompts(FileModel):
    """Prompts: where a completion's prompts come from, exactly one of ``values`` (a list),
    ``csv`` (a file with a header row, relative to the scenario file; ``column`` names the
    prompts' column, optional when the file has one) and ``synthetic`` (generated); ``pick``
    is how a prompt is chosen per iteration: ``random`` (default), ``sequential`` or ``unique``
    (one per VU), as a ``csv`` variable picks its rows."""

    values: list[Text] | None = Field(default=None, min_length=1)
    csv: str | None = Field(default=None, min_length=1)
    column: str | None = Field(default=None, min_length=1)
    synthetic: SyntheticPrompts | None = None
    pick: Literal["random", "sequential", "unique"] = "random"
    _source: CsvTable | None = PrivateAttr(default=None)
    _table: CsvTable | None = PrivateAttr(default=None)

    def problems(self) -> list[Finding]:
        """problems reports no source of prompts or more than one, a ``column`` without
        ``csv``, and the synthetic prompts' mistakes; ``source_table`` reads the CSV file."""
        given = [key for key in ("values", "csv", "synthetic") if getattr(self, key) is not None]
        if not given:
            return [((), "no prompts: give values (a list), csv (a file, with column) or synthetic (generated)")]
        if len(given) > 1:
            return [((given[1],), f"give one source of prompts: {given[0]} or {given[1]}, not both")]
        if self.column is not None and self.csv is None:
            return [(("column",), f"column only applies to csv prompts, not to {given[0]}")]
        if self.synthetic is not None:
            return [(("synthetic", *path), message) for path, message in self.synthetic.problems()]
        return []

    def path(self, base_dir: Path) -> Path:
        """path is the CSV file, resolved against ``base_dir`` (the scenario file's folder)."""
        file = Path(self.csv or "")
        return file if file.is_absolute() else base_dir / file

    def source_table(self, base_dir: Path) -> CsvTable:
        """source_table reads the CSV file once and keeps it; CsvError names the file and line."""
        if self._source is None:
            self._source = read_csv(self.path(base_dir))
        return self._source

    def column_in(self, table: CsvTable) -> str | None:
        """column_in is the column of ``table`` that holds the prompts: ``column``, else the
        only one; None when the file has several and ``column`` names none."""
        if self.column is not None:
            return self.column
        return table.columns[0] if len(table.columns) == 1 else None

    def texts(self, base_dir: Path) -> list[str]:
        """texts are the prompts as given: the values, the CSV column's cells in file order, or
        the synthetic prompts (the sources checked first: ``problems`` and the CSV's column)."""
        if self.values is not None:
            return list(self.values)
        if self.synthetic is not None:
            return self.synthetic.texts()
        table = self.source_table(base_dir)
        width = len(table.columns)
        column = table.columns.index(self.column_in(table) or "")
        return table.cells.split("\0")[column : table.rows * width : width]

    def table(self, base_dir: Path) -> CsvTable:
        """table is the prompts as the engine's one-column ``rows`` table, JSON-escaped, built once."""
        if self._table is None:
            self._table = prompt_table(self.texts(base_dir))
        return self._table


@dataclass(frozen=True)
class CompletionSlots:
    """CompletionSlots: the names of the variables a completion step's body reads: ``prompts``
    (a one-column table of escaped prompts) and ``max_tokens`` (None when it is a fixed number)."""

    prompts: str
    max_tokens: str | None


PLACEHOLDER_SLOTS = CompletionSlots("prompts", "max_tokens")
"""PLACEHOLDER_SLOTS names the variables of a completion's request where only its shape matters
(its path, headers and default tag)."""


class Completion(FileModel):
    """Completion: an OpenAI-compatible completion, sent as ``POST`` to ``path`` (default
    ``/v1/chat/completions`` for ``api: chat``, ``/v1/completions`` for ``api: text``) with a
    JSON body: ``model`` (when given), the prompt (a user message, or ``prompt``), ``max_tokens``,
    ``"stream": true`` and ``"stream_options": {"include_usage": true}``; ``prompts`` says where
    the prompt is drawn from per iteration, ``max_tokens`` is a number or a distribution;
    ``headers`` and ``timeout`` as a request's."""

    api: Literal["chat", "text"] = "chat"
    model: Text | None = None
    prompts: Prompts
    max_tokens: Length
    path: str | None = None
    headers: dict[str, Text] = Field(default_factory=dict)
    timeout: Duration | None = Field(default=None, gt=0)

    def problems(self) -> list[Finding]:
        """problems reports the prompts' and ``max_tokens``' mistakes, and the request's (its
        path and header names, checked as a request's)."""
        found = [(("prompts", *path), message) for path, message in self.prompts.problems()]
        found += [(("max_tokens", *path), message) for path, message in self.max_tokens.problems()]
        found += [f for f in self.request(PLACEHOLDER_SLOTS).problems() if f[0][:1] in (("path",), ("headers",))]
        return found

    def endpoint(self) -> str:
        """endpoint is the path the completion is sent to: ``path``, else the ``api``'s."""
        return self.path if self.path is not None else ENDPOINTS[self.api]

    def default_tag(self) -> str:
        """default_tag names a completion step without a name: ``POST /v1/chat/completions``."""
        return f"POST {display(self.endpoint().split('?', 1)[0])}"

    def body(self, slots: CompletionSlots) -> str:
        """body is the JSON body template: the prompt and (unless fixed) ``max_tokens`` are
        the slots ``slots`` names; the prompts' values are JSON-escaped already."""
        prompt = '"{{' + slots.prompts + "." + PROMPT_COLUMN + '}}"'
        fields = [] if self.model is None else ['"model":' + json.dumps(self.model, ensure_ascii=False)]
        if self.api == "chat":
            fields.append('"messages":[{"role":"user","content":' + prompt + "}]")
        else:
            fields.append('"prompt":' + prompt)
        n = self.max_tokens
        tokens = str(n.value) if isinstance(n, FixedLength) else "{{" + str(slots.max_tokens) + "}}"
        fields += ['"max_tokens":' + tokens, '"stream":true', '"stream_options":{"include_usage":true}']
        return "{" + ",".join(fields) + "}"

    def request(self, slots: CompletionSlots) -> Request:
        """request is the Request this completion sends, its body's slots named by ``slots``:
        ``Content-Type: application/json`` unless ``headers`` sets one."""
        headers = dict(self.headers)
        if not any(name.lower() == "content-type" for name in headers):
            headers["Content-Type"] = "application/json"
        return Request.model_construct(
            method="POST", path=self.endpoint(), headers=headers, body=self.body(slots), timeout=self.timeout
        )


def tally_draws(length: Length) -> collections.Counter[int]:
    """tally_draws counts ``MAX_TOKENS_DRAWS`` draws of ``length`` (the same every time: a fixed
    seed), for a weighted choice of the distinct values."""
    return collections.Counter(length.draw(random.Random("surge-max-tokens"), MAX_TOKENS_DRAWS))
