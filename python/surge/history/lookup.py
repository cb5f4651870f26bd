"""Finding the run a command's RUN argument names: ``last``, a results directory (read as it
is, or by its run id in the history), a run id or a unique prefix of one."""

from __future__ import annotations

from pathlib import Path

from surge.core.errors import BadInput
from surge.history.queries import LAST, load_run, resolve_run
from surge.history.store import History, open_history
from surge.record.stored import StoredRun


def _directory(ref: str) -> Path | None:
    return Path(ref) if ref != LAST and Path(ref).is_dir() else None


def lookup(ref: str, db: str | None) -> StoredRun:
    """lookup is the record RUN (``ref``) names: a results directory's files (no history
    needed), else the history's record (``db`` as --db). BadInput naming RUN when there is none."""
    directory = _directory(ref)
    if directory is not None:
        return StoredRun.from_directory(directory)
    with open_history(db) as history:
        return load_run(history, resolve_run(history, ref))


def lookup_id(history: History, ref: str) -> str:
    """lookup_id is the id of the history's run RUN (``ref``) names; a results directory names
    the run whose id its summary.json holds, which must be in the history."""
    directory = _directory(ref)
    if directory is None:
        return resolve_run(history, ref)
    run_id = StoredRun.from_directory(directory).run_id
    if not run_id or history.conn.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone() is None:
        raise BadInput("RUN", f"{ref}: its run ({run_id or 'no run id'}) is not in the history ({history.path})")
    return run_id
