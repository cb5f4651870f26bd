"""Where the run history lives: ``--db PATH``, else ``SURGE_DB``, else ``history.db`` in the
user's data directory (``platformdirs.user_data_dir("surge")``)."""

from __future__ import annotations

import os
from pathlib import Path

ENV_VAR = "SURGE_DB"
"""ENV_VAR names the environment variable that chooses the history database when --db is not given."""

FILE_NAME = "history.db"
"""FILE_NAME is the database's file name in the user's data directory."""


def history_path(db: str | None) -> Path:
    """history_path is the database file to use: ``db`` (the --db flag), else $SURGE_DB (when
    set and not empty), else ``<user data dir>/surge/history.db``."""
    if db:
        return Path(db).expanduser()
    env = os.environ.get(ENV_VAR, "")
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir("surge")) / FILE_NAME
