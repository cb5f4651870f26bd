"""Experiments in the history (schema version 3, docs/history.md): an experiment's row as it
starts, each of its runs as it is added, its analysis and findings when it ends; listing them
(``surge experiments``) and finding one by id, prefix or ``last`` (``surge show``)."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from surge.core.errors import BadInput
from surge.core.redact import redact_document, redact_text
from surge.history.queries import LAST
from surge.history.store import History, normal_time

KINDS = ("repeat", "sweep", "capacity", "compare", "stats")
"""KINDS are the kinds of experiment the history holds."""


@dataclass(frozen=True)
class ExperimentRun:
    """ExperimentRun: one run's place in an experiment: its ``position`` (1, 2, ...), ``role``
    (``repeat 3/10``, ``level vus=500``, ``variant A``), a short ``label`` for tables, and the
    ``level`` (VUs or rate) or ``variant`` it ran, when the experiment has them."""

    run_id: str
    position: int
    role: str
    label: str | None = None
    level: float | None = None
    variant: str | None = None


def begin_experiment(history: History, document: Mapping[str, Any]) -> None:
    """begin_experiment records an experiment as it starts, from its experiment.json document
    (incomplete, no runs yet), secrets masked (``surge.core.redact``)."""
    document = redact_document(document)
    history.write(
        lambda c: c.execute(
            "INSERT INTO experiments (id, kind, name, parameters, started_at, ended_at, complete, directory, document) "
            "VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?)",
            (
                document["experiment_id"],
                document["kind"],
                document["name"],
                json.dumps(document["parameters"]),
                normal_time(document["started_at"]),
                normal_time(document.get("ended_at")),
                document.get("directory"),
                json.dumps(document),
            ),
        )
    )


def add_experiment_run(history: History, experiment_id: str, run: ExperimentRun, document: Mapping[str, Any]) -> None:
    """add_experiment_run records that ``run`` belongs to the experiment (the run itself is
    already in the history) and the experiment.json ``document`` as it now is, secrets masked."""
    document = redact_document(document)
    role, label = redact_text(run.role), None if run.label is None else redact_text(run.label)

    def insert(c: sqlite3.Connection) -> None:
        c.execute(
            "INSERT OR REPLACE INTO experiment_runs (experiment_id, run_id, position, role, label, level, "
            "variant) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (experiment_id, run.run_id, run.position, role, label, run.level, run.variant),
        )
        c.execute("UPDATE experiments SET document = ? WHERE id = ?", (json.dumps(document), experiment_id))

    history.write(insert)


def finish_experiment(history: History, document: Mapping[str, Any]) -> None:
    """finish_experiment records the experiment's end from its final experiment.json document:
    when it ended, whether it is complete, its analysis and findings, secrets masked."""
    document = redact_document(document)
    history.write(
        lambda c: c.execute(
            "UPDATE experiments SET ended_at = ?, complete = ?, analysis = ?, findings = ?, document = ? WHERE id = ?",
            (
                normal_time(document.get("ended_at")),
                int(bool(document.get("complete"))),
                json.dumps(document.get("analysis")),
                json.dumps(document.get("findings")),
                json.dumps(document),
                document["experiment_id"],
            ),
        )
    )


@dataclass(frozen=True)
class ExperimentRow:
    """ExperimentRow: one experiment as ``surge experiments`` lists it."""

    id: str
    kind: str
    name: str
    started_at: str
    ended_at: str | None
    complete: bool
    runs: int
    directory: str | None

    def to_dict(self) -> dict[str, Any]:
        """to_dict is the row as a JSON object (``surge experiments --json``)."""
        return asdict(self)


def list_experiments(history: History, *, kind: str | None = None, limit: int = 20) -> list[ExperimentRow]:
    """list_experiments lists the experiments (of ``kind`` when given), newest first, at most ``limit``."""
    where, args = ("WHERE kind = ?", [kind]) if kind is not None else ("", [])
    rows = history.conn.execute(
        "SELECT id, kind, name, started_at, ended_at, complete, "
        "(SELECT COUNT(*) FROM experiment_runs r WHERE r.experiment_id = e.id), directory "
        f"FROM experiments e {where} ORDER BY started_at DESC, rowid DESC LIMIT ?",
        [*args, limit],
    ).fetchall()
    return [ExperimentRow(r[0], r[1], r[2], r[3], r[4], bool(r[5]), int(r[6]), r[7]) for r in rows]


def find_experiments(history: History, ref: str) -> list[str]:
    """find_experiments lists the ids of the experiments ``ref`` names: ``last`` (the newest), a
    full id or a unique prefix (the exact one alone when it matches; at most 11 otherwise)."""
    if ref == LAST:
        row = history.conn.execute("SELECT id FROM experiments ORDER BY started_at DESC, rowid DESC LIMIT 1").fetchone()
        return [str(row[0])] if row is not None else []
    if not re.fullmatch(r"[0-9a-fA-F-]{1,64}", ref):
        return []
    prefix = ref.lower().replace("-", "")
    ids = [
        str(r[0])
        for r in history.conn.execute(
            "SELECT id FROM experiments WHERE id >= ? AND id < ? ORDER BY started_at DESC LIMIT 11",
            (prefix, prefix + "g"),
        )
    ]
    return [prefix] if prefix in ids else ids


def resolve_experiment(history: History, ref: str, *, where: str = "EXPERIMENT") -> str:
    """resolve_experiment is the id of the experiment ``ref`` names (``last``, an id or a unique
    prefix); BadInput naming ``where`` when none or several match."""
    ids = find_experiments(history, ref)
    if not ids:
        empty = ref == LAST
        raise BadInput(
            where,
            f"there is no experiment in the history ({history.path})"
            if empty
            else f"no experiment '{ref}' in the history ({history.path})",
        )
    if len(ids) > 1:
        raise BadInput(
            where, f"'{ref}' matches several experiments: {', '.join(i[:12] for i in ids[:10])}; give more of the id"
        )
    return ids[0]


def load_experiment(history: History, experiment_id: str) -> dict[str, Any]:
    """load_experiment is the experiment.json document of ``experiment_id`` (which must exist)."""
    row = history.conn.execute("SELECT document FROM experiments WHERE id = ?", (experiment_id,)).fetchone()
    document: dict[str, Any] = json.loads(row[0])
    return document


def experiment_runs(history: History, experiment_id: str) -> list[ExperimentRun]:
    """experiment_runs are the experiment's runs as the history links them, by position."""
    return [
        ExperimentRun(*r)
        for r in history.conn.execute(
            "SELECT run_id, position, role, label, level, variant FROM experiment_runs WHERE experiment_id = ? "
            "ORDER BY position",
            (experiment_id,),
        )
    ]
