"""watch_process: ``--watch-pid`` checked before the run (psutil loads only when it is given)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from surge.core.errors import BadInput

if TYPE_CHECKING:
    from surge.diagnosis.watch import TargetWatch


def watch_process(pid: int | None, flag: str = "--watch-pid") -> TargetWatch | None:
    """watch_process is the sampler of process ``pid`` (not yet started), or None without one; a
    pid that is not a running, readable process is refused before the run (BadInput naming
    ``flag``, exit 2)."""
    if pid is None:
        return None
    if pid <= 0:
        raise BadInput(flag, f"must be a process id above zero, got {pid}")
    from surge.diagnosis.watch import TargetWatch

    return TargetWatch(pid, flag=flag)
