"""The record's JSON Schema (``schemas/surge.record-1.schema.json``, draft 2020-12): what a
results directory's summary.json holds, field by field in docs/record.md. ``validate`` checks a
document against it, for the tests of every writer (surge's runs, imports); surge.record.check
checks every record read with it. It needs the ``jsonschema`` package and the ``schemas/``
directory."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

SCHEMA_FILE = Path(__file__).resolve().parents[3] / "schemas" / "surge.record-1.schema.json"
"""SCHEMA_FILE is the versioned schema of ``meta.schema`` ``surge.record/1``."""

EXPERIMENT_SCHEMA_FILE = SCHEMA_FILE.with_name("surge.experiment-1.schema.json")
"""EXPERIMENT_SCHEMA_FILE is the versioned schema of experiment.json (``surge.experiment/1``)."""


class RecordSchemaError(ValueError):
    """RecordSchemaError: a summary.json does not match the schema; ``problems`` lists each
    mismatch as ``path: message``."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__(f"{len(problems)} problem(s) with the record: " + "; ".join(problems))
        self.problems = problems


@lru_cache(maxsize=2)
def load_schema(path: Path = SCHEMA_FILE) -> dict[str, Any]:
    """load_schema is the parsed schema file (the record's unless told)."""
    schema: dict[str, Any] = json.loads(path.read_text())
    return schema


def problems(document: Any, schema_file: Path = SCHEMA_FILE) -> list[str]:
    """problems lists how ``document`` (a parsed summary.json; with ``schema_file``
    EXPERIMENT_SCHEMA_FILE an experiment.json) differs from the schema, as
    ``path: message`` (``$`` is the document, ``$.meta.tags``...), deepest mismatches first
    reported by jsonschema's best guess for each; empty when it matches."""
    # start-up: jsonschema (~90 modules) only when a record is checked
    import jsonschema  # type: ignore[import-untyped]

    validator = jsonschema.Draft202012Validator(load_schema(schema_file))
    out = []
    for error in sorted(validator.iter_errors(document), key=lambda e: list(map(str, e.absolute_path))):
        best = jsonschema.exceptions.best_match([error])
        path = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in best.absolute_path)
        out.append(f"{path}: {best.message[:300]}")
    return out


def validate(document: Any) -> None:
    """validate raises RecordSchemaError when ``document`` (a parsed summary.json: a finished
    record, or ``meta`` alone with ``complete`` false) does not match the schema."""
    found = problems(document)
    if found:
        raise RecordSchemaError(found)


def validate_file(path: Path) -> dict[str, Any]:
    """validate_file validates the summary.json at ``path`` (or in the directory ``path``) and
    returns it parsed."""
    file = path / "summary.json" if path.is_dir() else path
    document: dict[str, Any] = json.loads(file.read_text())
    validate(document)
    return document


def validate_experiment(document: Any) -> None:
    """validate_experiment raises RecordSchemaError when ``document`` (a parsed experiment.json)
    does not match its schema."""
    found = problems(document, EXPERIMENT_SCHEMA_FILE)
    if found:
        raise RecordSchemaError(found)
