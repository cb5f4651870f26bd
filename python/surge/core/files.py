"""Files read as input (scenario files, ``--body @FILE``, CSV data): regular files only, of
bounded size, read with a bounded read, so that ``/dev/zero``, a FIFO or a file that grows
while it is read can neither hang surge nor fill its memory."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from surge.core.units import size_text

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
)
_CHUNK = 1 << 20


class FileReadError(ValueError):
    """FileReadError: a file cannot be used as input; ``message`` says why, in words that
    follow the file's name (``cannot read it: No such file or directory``)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def read_bounded(path: str | Path, limit: int) -> bytes:
    """read_bounded returns the bytes of the regular file ``path`` if it holds at most
    ``limit`` bytes; FileReadError otherwise (missing, unreadable, not a regular file, too
    large). It never reads more than ``limit + 1`` bytes and never blocks on a FIFO."""
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused below).
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as e:
        raise FileReadError(f"cannot read it: {e.strerror or e}") from None
    try:
        info = os.fstat(fd)
        mode, size = info.st_mode, info.st_size
        if not stat.S_ISREG(mode):
            kind = next((name for test, name in _KINDS if test(mode)), "not a file")
            raise FileReadError(f"is {kind}, not a regular file")
        too_large = FileReadError(f"is larger than {size_text(limit)}, the most surge reads from one file")
        if size > limit:
            raise too_large
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, min(_CHUNK, limit + 1 - total))
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:  # it grew while being read (or /proc reports no size)
                raise too_large
    except OSError as e:
        raise FileReadError(f"cannot read it: {e.strerror or e}") from None
    finally:
        os.close(fd)
