"""detect: which tool and format made a file, by its content (``--tool auto``), and the
check that a file is the ``--tool`` named."""

from __future__ import annotations

from surge.imports import hey_csv, k6_ndjson, k6_summary, oha_json
from surge.imports.builder import Imported
from surge.imports.source import Source
from surge.record.check import RecordError, check_document

TOOLS = ("k6", "hey", "oha")
"""TOOLS are the tools whose output ``surge import`` reads."""

FORMATS = {"k6-summary-export": "k6", "k6-handle-summary": "k6", "k6-ndjson": "k6", "hey-csv": "hey", "oha-json": "oha"}
"""FORMATS map each format surge reads to the tool that writes it."""

KNOWN = "k6 --summary-export or handleSummary JSON, k6 --out json NDJSON, hey -o csv, oha JSON"
"""KNOWN lists the formats in words, for errors."""


def detect(source: Source) -> str:
    """detect names the format of ``source`` from its content; BadInput if none fits (a
    file that starts like JSON but is malformed names its line)."""
    text = source.text.lstrip("\ufeff \t\r\n")
    if hey_csv.looks_like(text):
        return "hey-csv"
    if text.startswith("{"):
        first = text.split("\n", 1)[0]
        if k6_ndjson.looks_like(first) and text.count("\n", 0, len(text.rstrip())) > 0:
            return "k6-ndjson"
        doc = source.json_document()
        if k6_summary.looks_like(doc):
            return "k6-handle-summary" if k6_summary.is_handle_summary(doc) else "k6-summary-export"
        if oha_json.looks_like(doc):
            return "oha-json"
        if k6_ndjson.looks_like(first):
            return "k6-ndjson"
    raise source.error(f"not a format surge imports ({KNOWN}); if it is one of these, name it with --tool")


def load(source: Source, tool: str = "auto") -> Imported:
    """load parses ``source``, detected by content; with ``tool`` other than auto, a file
    another tool made is refused naming both. The document it makes is checked against the
    record's schema and physical sense (surge.record.check) before anything is written: a
    figure that cannot be (a negative latency, more failures than requests) names the
    document's field."""
    fmt = detect(source)
    if tool != "auto" and FORMATS[fmt] != tool:
        raise source.error(f"--tool {tool}, but this is {FORMATS[fmt]}'s output ({fmt})")
    if fmt == "hey-csv":
        imported = hey_csv.parse(source)
    elif fmt == "k6-ndjson":
        imported = k6_ndjson.parse(source)
    else:
        doc = source.json_document()
        imported = oha_json.parse(source, doc) if fmt == "oha-json" else k6_summary.parse(source, doc)
    document = imported.document
    if document["started_at_unix_s"] is None:  # the file's time gives it (surge import): any time will do here
        document = {**document, "started_at_unix_s": 0.0}
    try:
        check_document(document, with_meta=False)
    except RecordError as e:
        raise source.error(
            f"{e.message} (in the record it makes: {fmt}'s figures cannot be a run's)", key=e.field or None
        ) from None
    return imported
