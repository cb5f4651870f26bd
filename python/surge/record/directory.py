"""Where a run's record goes: ``results/<UTC yyyymmdd-HHMMSS>-<name>/`` under the current
directory, or the directory ``--out`` names."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from urllib.parse import urlsplit

from surge.errors import BadInput
from surge.redact import redact_text

RESULTS_DIR = "results"
"""RESULTS_DIR is the directory, under the current one, that holds the runs' records by default."""

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


def check_out(out: str | None) -> None:
    """check_out refuses an ``--out`` that exists and is not a directory, before the run."""
    if out is not None and Path(out).exists() and not Path(out).is_dir():
        raise BadInput("--out", f"{out} exists and is not a directory")


def create_directory(out: str | None, name: str, started: datetime, base: Path = Path(RESULTS_DIR)) -> Path:
    """create_directory makes the record's directory: ``out`` (created if missing), or a new
    ``<base>/<yyyymmdd-HHMMSS>-<name>`` (base ``results``; ``-2``, ``-3``... when two runs share
    a second)."""
    if out is not None:
        check_out(out)
        try:
            Path(out).mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise BadInput("--out", f"cannot create {out}: {e.strerror or e}") from None
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
            raise BadInput(RESULTS_DIR, f"cannot create {path}: {e.strerror or e} (choose another with --out, "
                                        "or --no-save)") from None
    raise BadInput(RESULTS_DIR, f"{base} and 998 more like it exist (choose another with --out)")
