"""Where a run's record goes: ``results/<UTC yyyymmdd-HHMMSS>-<name>/`` under the current
directory, or the directory ``--out`` names: a new or empty one, never one that holds another
record, and never one that another surge process is writing (it is locked while the run lasts)."""

from __future__ import annotations

import fcntl
import os
import re
from datetime import datetime
from pathlib import Path
from urllib.parse import urlsplit

from surge.core.errors import BadInput
from surge.core.redact import redact_text

RESULTS_DIR = "results"
"""RESULTS_DIR is the directory, under the current one, that holds the runs' records by default."""

KEPT = "kept in the history"
"""KEPT says where a recorded experiment's completed runs are, when a stop ends it early."""

NOT_KEPT = "not saved: --no-save"
"""NOT_KEPT says the same for an experiment run with --no-save: nowhere."""

MAX_NAME_CHARS = 80
"""MAX_NAME_CHARS bounds a run's name as it appears in a directory name."""


def run_name(target: str, scenario_file: Path | None) -> str:
    """run_name names a run: the scenario file's stem, or a slug of the URL's host and path
    (never its query, which may hold a secret; its path parameters masked):
    ``http://127.0.0.1:8080/api/v1;jsessionid=x?k=x`` is ``127.0.0.1-8080-api-v1-jsessionid-redacted``."""
    if scenario_file is not None:
        text = scenario_file.stem
    else:
        parts = urlsplit(target)
        host = parts.netloc.rpartition("@")[2]  # never the user information
        text = f"{host}{redact_text(parts.path)}"
    slug = re.sub(r"[^A-Za-z0-9._]+", "-", text).strip("-.")[:MAX_NAME_CHARS].strip("-.")
    return slug or "run"


RECORD_FILES = (
    "experiment.json",
    "summary.json",
    "report.md",
    "report.html",
    "timeseries.csv",
    "latency.hlog",
    "command.txt",
    "scenario.yaml",
    "runs",
    "charts",
)
"""RECORD_FILES are the names a record (a run's or an experiment's) writes in its directory: an
``--out`` holding any of them holds another record, and is refused."""

_locked: list[int] = []
"""_locked holds the descriptors of the directories this process locked, for its lifetime."""


def check_out(out: str | None) -> None:
    """check_out refuses, before the run, an ``--out`` that exists and is not a directory, or
    that holds another record (a file of RECORD_FILES: the run would mix its files with that
    record's, and an interrupted run would leave the old report beside its new summary)."""
    if out is None or not Path(out).exists():
        return
    if not Path(out).is_dir():
        raise BadInput("--out", f"{out} exists and is not a directory")
    held = next((name for name in RECORD_FILES if os.path.lexists(Path(out) / name)), None)
    if held is not None:
        what = "an experiment" if held in ("experiment.json", "runs") else "another run's record"
        raise BadInput("--out", f"{out} holds {what} already ({held}): choose a new directory, or remove that one")


def lock_directory(path: Path, flag: str) -> None:
    """lock_directory takes, for the rest of this process's life, an exclusive lock on the
    directory ``path`` (flock: the kernel releases it when the process ends, however it ends);
    BadInput naming ``flag`` when another process holds it (two runs never write one directory)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as e:
        raise BadInput(flag, f"cannot open {path}: {e.strerror or e}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise BadInput(flag, f"{path} is being written by another surge process (choose another directory)") from None
    _locked.append(fd)


def create_directory(
    out: str | None, name: str, started: datetime, base: Path = Path(RESULTS_DIR), *, lock: bool = True
) -> Path:
    """create_directory makes the record's directory: ``out`` (created if missing, locked for the
    process's life, refused when it holds another record or another process writes it), or a new
    ``<base>/<yyyymmdd-HHMMSS>-<name>`` (base ``results``; ``-2``, ``-3``... when two runs share
    a second)."""
    if out is not None:
        check_out(out)
        try:
            Path(out).mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise BadInput("--out", f"cannot create {out}: {e.strerror or e}") from None
        if lock:  # (not an experiment's run: its folder is inside the experiment's, locked already)
            lock_directory(Path(out), "--out")
        check_out(out)  # again under the lock: another run may have finished there since
        return Path(out)
    base = base / f"{started.strftime('%Y%m%d-%H%M%S')}-{name}"
    for attempt in range(1, 1000):
        path = base if attempt == 1 else base.with_name(f"{base.name}-{attempt}")
        try:
            path.mkdir(parents=True)
            return path
        except FileExistsError:
            continue
        except OSError as e:
            raise BadInput(
                RESULTS_DIR, f"cannot create {path}: {e.strerror or e} (choose another with --out, or --no-save)"
            ) from None
    raise BadInput(RESULTS_DIR, f"{base} and 998 more like it exist (choose another with --out)")
