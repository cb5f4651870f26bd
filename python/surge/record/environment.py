"""The machine a run ran on, as the record's ``meta.environment``."""

from __future__ import annotations

import os
import platform
from pathlib import Path
from typing import Any


def environment() -> dict[str, Any]:
    """environment describes this machine: CPU model, cores, memory, OS, kernel, Python."""
    return {
        "cpu_model": _cpu_model(),
        "cores": os.cpu_count(),
        "memory_bytes": _memory_bytes(),
        "os": platform.system(),
        "kernel": platform.release(),
        "python": platform.python_version(),
    }


def _proc_field(path: str, key: str) -> str | None:
    """_proc_field is the value of the first ``key: value`` line of a /proc file, or None."""
    try:
        lines = Path(path).read_text(errors="replace").splitlines()
    except OSError:
        return None
    for line in lines:
        name, sep, value = line.partition(":")
        if sep and name.strip() == key:
            return value.strip()
    return None


def _cpu_model() -> str | None:
    return _proc_field("/proc/cpuinfo", "model name") or platform.processor() or None


def _memory_bytes() -> int | None:
    value = _proc_field("/proc/meminfo", "MemTotal")  # "16318040 kB"
    if value is None or not value.split()[0].isdigit():
        return None
    return int(value.split()[0]) * 1024
