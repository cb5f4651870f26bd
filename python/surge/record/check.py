"""Checking a record before it is trusted: summary.json (or an import's document) parsed as
strict JSON, matched against the schema (``schemas/surge.record-1.schema.json``), then against
physical sense: times finite and ordered, latencies and rates at least zero, counts consistent,
statuses 100–599, histograms of the engine's configuration. Every problem is ``field: message``
(``requests.sent: ...``, ``intervals[3].end_s: ...``), so that a caller names the file and the
field in one line (docs/record.md, "Reading a record")."""

from __future__ import annotations

import base64
import binascii
import copy
import json
import math
import struct
import zlib
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

from surge.record.schema import load_schema

MAX_SPAN_S = 31 * 86_400
"""MAX_SPAN_S bounds every time span of a record (a run's duration, an interval's end, an
imported request's offset): 31 days, past the longest run surge makes (720 h)."""

MAX_LATENCY_MS = MAX_SPAN_S * 1000.0
"""MAX_LATENCY_MS bounds a latency (ms): no request outlasts the longest span."""

MAX_UNIX_S = 253_402_300_799
"""MAX_UNIX_S is the last second of year 9999, the latest start a record can name."""

MAX_COUNT = 2**53
"""MAX_COUNT bounds every whole number of a record: exact as a float and in SQLite."""

MAX_DEPTH = 32
"""MAX_DEPTH bounds the nesting of a record's JSON (surge writes at most ~8 levels)."""

MAX_NUMBER_DIGITS = 40
"""MAX_NUMBER_DIGITS bounds the digits of one JSON number (larger ones are no figure of a run)."""

HISTOGRAM_CONFIG = (1, 3_600_000_000, 3)
"""HISTOGRAM_CONFIG is the engine's histogram configuration (lowest µs, highest µs, significant
digits: crates/surge-engine/src/measure/histogram.rs), the only one a record holds."""

MAX_HISTOGRAM_CHARS = 1 << 20
"""MAX_HISTOGRAM_CHARS bounds one encoded histogram (the engine's, full, is ~100 KiB)."""

SURGE_FIGURES = ("requests", "latency", "throughput", "drain")
"""SURGE_FIGURES are the blocks of a surge run's record that hold no null (an import's may)."""

ALWAYS_COUNTED = ("succeeded", "failed", "success_rate", "failure_rate")
"""ALWAYS_COUNTED are the figures of ``requests`` every record has, an import's too (never null)."""

LATENCY_FIELDS = ("min_ms", "mean_ms", "stdev_ms", "p50_ms", "p90_ms", "p95_ms", "p99_ms", "p99_9_ms", "max_ms")
"""LATENCY_FIELDS are a latency summary's figures in milliseconds."""

_V2_COMPRESSION_COOKIE = 0x1C849304
_V2_ENCODING_COOKIE = 0x1C849303
_PAYLOAD_HEADER = struct.Struct(">IIIIqqd")


class RecordError(ValueError):
    """RecordError: a record (or an import's document) cannot be trusted; ``field`` names where
    (dotted, ``""`` for the whole document), ``line`` the line of a JSON syntax error (else
    None) and ``message`` says why, one line."""

    def __init__(self, field: str, message: str, line: int | None = None) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message
        self.line = line


def _no_constant(name: str) -> Any:
    raise RecordError("", f"{name} is not a number JSON allows")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value) or len(text) > MAX_NUMBER_DIGITS + 8:
        raise RecordError("", f"{text[:20]}{'…' if len(text) > 20 else ''} is too large a number")
    return value


def _bounded_int(text: str) -> int:
    if len(text) > MAX_NUMBER_DIGITS:
        raise RecordError("", f"a {len(text)}-digit number is too large")
    return int(text)


def strict_json(text: str) -> Any:
    """strict_json parses ``text`` as JSON as RFC 8259 has it: no NaN or Infinity, no number
    too large for a float, nesting at most MAX_DEPTH; RecordError (naming the line and column of
    a syntax error) otherwise. Its work and memory are bounded by the text's length."""
    try:
        document = json.loads(text, parse_constant=_no_constant, parse_float=_finite_float, parse_int=_bounded_int)
    except json.JSONDecodeError as e:
        raise RecordError("", f"not valid JSON: {e.msg} (column {e.colno})", e.lineno) from None
    except RecursionError:
        raise RecordError("", f"nested more than {MAX_DEPTH} levels deep") from None
    depth = max((d for d, _, _ in _walk(document)), default=0)
    if depth > MAX_DEPTH:
        raise RecordError("", f"nested more than {MAX_DEPTH} levels deep")
    return document


JsonPath = tuple[Any, ...] | None
"""JsonPath is where a value sits, as (parent path, key): built as cheaply as a pair, spelt only on a problem."""


def _spell(path: JsonPath) -> str:
    parts: list[str] = []
    while path is not None:
        path, key = path
        parts.append(f"[{key}]" if isinstance(key, int) else f".{key}")
    return "".join(reversed(parts)).lstrip(".")


def _walk(document: Any) -> Iterator[tuple[int, JsonPath, Any]]:
    """_walk yields (depth, path, value) of every value, iteratively (no recursion)."""
    stack: list[tuple[int, JsonPath, Any]] = [(0, None, document)]
    while stack:
        depth, path, value = stack.pop()
        yield depth, path, value
        if isinstance(value, dict):
            stack.extend((depth + 1, (path, k), v) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((depth + 1, (path, i), v) for i, v in enumerate(value))


@lru_cache(maxsize=1)
def _result_schema() -> dict[str, Any]:
    """_result_schema is the record's schema for the result document alone (an import's,
    before ``meta`` is added): a finished record's fields, less ``meta``."""
    schema = copy.deepcopy(load_schema())
    finished = schema.pop("anyOf")[0]
    schema.pop("allOf", None)
    schema["required"] = [name for name in finished["required"] if name != "meta"]
    return schema


LONG_LIST = 16
"""LONG_LIST is the length past which schema_problems validates a list's items by shape (see
_Shapes): jsonschema takes ~8 ms an interval, 30 s for an hour's record on a busy machine."""


def _shape(value: Any) -> frozenset[tuple[Any, ...]]:
    """_shape is what the schema can tell apart in ``value``: each leaf's path (keys, list
    positions left out), type, and whether a number is negative. Two values of one shape match
    the record's schema alike (rate fractions, its only upper bound, are checked by physics)."""
    leaves = set()
    stack: list[tuple[tuple[Any, ...], Any]] = [((), value)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, dict):
            leaves.add((*path, "{}"))
            stack.extend(((*path, k), v) for k, v in node.items())
        elif isinstance(node, list):
            leaves.add((*path, "[]"))
            stack.extend(((*path, "*"), v) for v in node)
        else:
            negative = isinstance(node, (int, float)) and not isinstance(node, bool) and node < 0
            leaves.add((*path, type(node).__name__, negative))
    return frozenset(leaves)


class _Shapes:
    """_Shapes is a document with each long list cut to one item of each shape (its first), and
    the way back from a path in the cut document to the same item in the whole one."""

    def __init__(self, document: Any) -> None:
        self.kept: dict[tuple[Any, ...], list[int]] = {}
        """kept maps a long list's path (in the cut document) to the indexes of the items kept."""
        self.document = self._cut(document, ())

    def _cut(self, value: Any, path: tuple[Any, ...]) -> Any:
        if isinstance(value, dict):
            return {k: self._cut(v, (*path, k)) for k, v in value.items()}
        if not isinstance(value, list):
            return value
        indexes = list(range(len(value)))
        if len(value) > LONG_LIST:
            first: dict[frozenset[tuple[Any, ...]], int] = {}
            for i, item in enumerate(value):
                first.setdefault(_shape(item), i)
            indexes = sorted(first.values())
            self.kept[path] = indexes
        return [self._cut(value[i], (*path, n)) for n, i in enumerate(indexes)]

    def original(self, path: Any) -> list[Any]:
        """original is ``path`` (in the cut document) in the whole document."""
        out: list[Any] = []
        cut: list[Any] = []
        for part in path:
            kept = self.kept.get(tuple(cut))
            out.append(kept[part] if kept is not None and isinstance(part, int) else part)
            cut.append(part)
        return out


def schema_problems(document: Any, *, with_meta: bool = True) -> list[str]:
    """schema_problems lists how ``document`` differs from the record's schema (a summary.json;
    without ``with_meta`` an import's result document, which has no ``meta`` yet) as
    ``field: message``. A long list's items are validated one of each shape (_Shapes): the
    time grows with the record's size, not jsonschema's ~8 ms an item."""
    # start-up: jsonschema (~90 modules) only when a record is checked
    import jsonschema  # type: ignore[import-untyped]

    schema = load_schema() if with_meta else _result_schema()
    shapes = _Shapes(document)
    out = []
    for error in sorted(
        jsonschema.Draft202012Validator(schema).iter_errors(shapes.document),
        key=lambda e: list(map(str, e.absolute_path)),
    ):
        best = jsonschema.exceptions.best_match([error])
        path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in shapes.original(best.absolute_path))
        out.append(f"{path.lstrip('.') or 'the document'}: {best.message[:200]}")
    return out


def histogram_problem(encoded: Any) -> str | None:
    """histogram_problem says why ``encoded`` is not a V2-compressed, base64 HdrHistogram of the
    engine's configuration (HISTOGRAM_CONFIG), or None when it is one. It reads only the
    headers: bounded work whatever the bytes claim."""
    if not isinstance(encoded, str) or len(encoded) > MAX_HISTOGRAM_CHARS:
        return "not an encoded histogram (base64 text of at most 1 MiB)"
    try:
        raw = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        return "not base64"
    if len(raw) < 8:
        return "too short for an HdrHistogram"
    cookie, length = struct.unpack(">II", raw[:8])
    if cookie & ~0xF0 != _V2_COMPRESSION_COOKIE or length != len(raw) - 8:
        return "not a V2-compressed HdrHistogram (wrong cookie or length)"
    try:
        header = zlib.decompressobj().decompress(raw[8:], _PAYLOAD_HEADER.size)
    except zlib.error:
        return "its compressed bytes are corrupt"
    if len(header) < _PAYLOAD_HEADER.size:
        return "its header is cut short"
    payload_cookie, _, _, digits, lowest, highest, _ = _PAYLOAD_HEADER.unpack(header)
    if payload_cookie & ~0xF0 != _V2_ENCODING_COOKIE:
        return "not a V2 HdrHistogram payload (wrong cookie)"
    if (lowest, highest, digits) != HISTOGRAM_CONFIG:
        return (
            f"tracks {lowest}..{highest} with {digits} digits, not the engine's "
            f"{HISTOGRAM_CONFIG[0]}..{HISTOGRAM_CONFIG[1]} µs with {HISTOGRAM_CONFIG[2]}"
        )
    return None


def _plain(bound: float) -> str:
    """_plain is a bound as people read it: 2,678,400,000 or 0.5."""
    return f"{bound:,.0f}" if bound == int(bound) else f"{bound:g}"


class _Physics:
    """_Physics collects the physical problems of one document (typed as the schema says)."""

    def __init__(self) -> None:
        self.found: list[str] = []

    def bad(self, field: str, message: str) -> None:
        self.found.append(f"{field}: {message}")

    def within(self, table: Mapping[str, Any], key: str, where: str, low: float, high: float) -> None:
        value = table.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and not low <= value <= high:
            self.bad(f"{where}{key}", f"{value!r} is outside {_plain(low)}..{_plain(high)}")

    def latency(self, summaries: Any, where: str) -> None:
        for name, summary in (summaries or {}).items():
            if not isinstance(summary, Mapping):
                continue
            for key in LATENCY_FIELDS:
                self.within(summary, key, f"{where}{name}.", 0.0, MAX_LATENCY_MS)
            low, high = summary.get("min_ms"), summary.get("max_ms")
            if isinstance(low, (int, float)) and isinstance(high, (int, float)) and low > high:
                self.bad(f"{where}{name}.min_ms", f"{low} is above max_ms {high}")

    def requests(self, r: Any, where: str, *, top: bool, surge: bool) -> None:
        if not isinstance(r, Mapping):
            return

        def known(*keys: str) -> bool:
            return all(isinstance(r.get(k), int) for k in keys)

        for key in ("success_rate", "failure_rate"):  # every interval's (the schema sees one of each shape)
            self.within(r, key, where, 0.0, 1.0)
        if top:
            missing = next((k for k in ALWAYS_COUNTED if k in r and r[k] is None), None)
            if missing is not None:
                self.bad(f"{where}{missing}", "null, but every source counts it")

        # An interval's responses may answer requests sent in an earlier one: responses <= sent
        # holds for a whole run only.
        pairs = (
            ("succeeded", "responses"),
            ("shed", "failed"),
            ("timed_out", "failed"),
            ("interrupted_unsent", "interrupted"),
        )
        for small, large in (("responses", "sent"), *pairs) if top or not surge else pairs:
            if known(small, large) and r[small] > r[large]:
                self.bad(f"{where}{small}", f"{r[small]:,} is more than {large} ({r[large]:,})")
        if not surge and known("succeeded", "failed", "sent") and r["succeeded"] + r["failed"] > r["sent"]:
            self.bad(
                f"{where}failed",
                f"succeeded + failed ({r['succeeded'] + r['failed']:,}) is more than sent ({r['sent']:,})",
            )
        keys = ("sent", "responses", "unanswered", "interrupted", "interrupted_unsent")
        retried = r.get("retried") or 0  # absent from records made before it: none were
        if (
            surge
            and top
            and known(*keys)
            and r["sent"] != (r["responses"] + r["unanswered"] + retried + r["interrupted"] - r["interrupted_unsent"])
        ):
            self.bad(
                f"{where}sent",
                f"{r['sent']:,} is not responses + unanswered + retried + interrupted − interrupted_unsent",
            )
        codes = r.get("status_codes")
        if top and isinstance(codes, Mapping) and known("responses") and sum(codes.values()) != r["responses"]:
            self.bad(f"{where}status_codes", f"add up to {sum(codes.values()):,}, not the {r['responses']:,} responses")

    def rates(self, table: Any, where: str, keys: tuple[str, ...]) -> None:
        if isinstance(table, Mapping):
            for key in keys:
                self.within(table, key, where, 0.0, float(MAX_COUNT))

    def intervals(self, intervals: Any, surge: bool) -> None:
        previous_end, previous_index = 0.0, -1
        for i, interval in enumerate(intervals or []):
            if not isinstance(interval, Mapping):
                continue
            where = f"intervals[{i}]."
            start, end, index = interval.get("start_s"), interval.get("end_s"), interval.get("index")
            if isinstance(start, (int, float)) and isinstance(end, (int, float)):
                if not 0 <= start < end <= MAX_SPAN_S:
                    self.bad(f"{where}end_s", f"[{start}, {end}] is not a span within 0..{MAX_SPAN_S} s")
                elif start < previous_end - 1e-6:
                    self.bad(f"{where}start_s", f"{start} is before the previous interval's end ({previous_end})")
                previous_end = end
            if isinstance(index, int):
                if index <= previous_index:
                    self.bad(f"{where}index", f"{index} does not follow {previous_index}")
                previous_index = index
            self.requests(interval.get("requests"), f"{where}requests.", top=False, surge=surge)
            self.latency(interval.get("latency"), f"{where}latency.")
            self.rates(interval, where, ("responses_per_s", "successes_per_s", "sent_per_s", "target_rate_per_s"))
            if "latency_histogram" in interval:
                self.histogram(interval["latency_histogram"], f"{where}latency_histogram")

    def no_nulls(self, document: Mapping[str, Any]) -> None:
        """no_nulls finds a null among a surge run's figures (requests, latency, throughput,
        drain; its scenarios', tags' and intervals' requests and latency): only an import may
        miss one."""
        blocks: list[tuple[str, Any]] = [(key, document.get(key)) for key in SURGE_FIGURES]
        for parent in ("scenarios", "tags", "intervals"):
            items = document.get(parent)
            for i, item in enumerate(items if isinstance(items, list) else []):
                if isinstance(item, Mapping):
                    blocks += [(f"{parent}[{i}].{key}", item.get(key)) for key in ("requests", "latency", "throughput")]
        for where, block in blocks:
            for _, path, value in _walk(block):
                if value is None and path is not None:
                    self.bad(
                        f"{where}.{_spell(path)}",
                        "null, but a surge run records every figure (only an import's may be missing)",
                    )
                    return

    def histogram(self, encoded: Any, field: str) -> None:
        problem = None if encoded is None else histogram_problem(encoded)
        if problem is not None:
            self.bad(field, problem)


def physical_problems(document: Mapping[str, Any]) -> list[str]:
    """physical_problems lists what in ``document`` (a result document that matches the
    schema) cannot be: whole numbers beyond MAX_COUNT, times outside their range or out of
    order, negative latencies or rates, counts that do not add up, histograms not of the
    engine's configuration. Each is ``field: message``."""
    check = _Physics()
    for _, path, value in _walk(document):
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_COUNT:
            check.bad(_spell(path), f"{str(value)[:20]} is more than {MAX_COUNT:,}, the largest count a record holds")
    if "requests" not in document:  # an incomplete record: meta only
        return check.found
    surge = (document.get("meta") or {}).get("tool", "surge") == "surge" and "meta" in document
    if surge:
        check.no_nulls(document)
    check.within(document, "started_at_unix_s", "", 0.0, float(MAX_UNIX_S))
    for key in ("duration_s", "elapsed_s"):
        check.within(document, key, "", 0.0, float(MAX_SPAN_S))
    check.requests(document.get("requests"), "requests.", top=True, surge=surge)
    check.latency(document.get("latency"), "latency.")
    check.rates(document.get("throughput"), "throughput.", ("responses_per_s", "successes_per_s", "sent_per_s"))
    check.within(document.get("throughput") or {}, "window_s", "throughput.", 0.0, float(MAX_SPAN_S))
    check.intervals(document.get("intervals"), surge)
    for name, encoded in (document.get("histograms") or {}).items():
        check.histogram(encoded, f"histograms.{name}")
    return check.found


def upgrade(document: Any) -> None:
    """upgrade fills in, in place, the fields a record written by an earlier surge lacks (the
    schema requires them since): ``peak_concurrency`` (null: not measured), and a threshold's
    ``abort_on_fail`` (false) and ``delay_s`` (0), so that such a record still reads."""
    if not isinstance(document, dict) or "requests" not in document:
        return
    document.setdefault("peak_concurrency", None)
    intervals, thresholds = document.get("intervals"), document.get("thresholds")
    for interval in intervals if isinstance(intervals, list) else []:
        if isinstance(interval, dict):
            interval.setdefault("peak_concurrency", None)
    for verdict in thresholds if isinstance(thresholds, list) else []:
        if isinstance(verdict, dict):
            verdict.setdefault("abort_on_fail", False)
            verdict.setdefault("delay_s", 0)


def check_document(document: Any, *, with_meta: bool = True) -> None:
    """check_document raises RecordError naming the first field at fault when ``document``
    (a parsed summary.json; without ``with_meta`` an import's result document) does not match
    the schema or physical sense."""
    if not isinstance(document, dict):
        raise RecordError("", "not a surge record (expected a JSON object)")
    found = schema_problems(document, with_meta=with_meta) or physical_problems(document)
    if found:
        field, _, message = found[0].partition(": ")
        more = f" (and {len(found) - 1} more problem{'s' if len(found) > 2 else ''})" if len(found) > 1 else ""
        raise RecordError(field, message + more)
