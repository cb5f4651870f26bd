"""surge's stdout and stderr, made so that printing can never cost a run its record.

``install`` (called once by the CLI's ``main``) guards both streams: a file descriptor 0, 1 or
2 that the caller closed (``2>&-``) is reopened on /dev/null, so that no file surge opens takes
its number (and gets the output meant for the terminal); a character the terminal's encoding
cannot show (the summary's "·" under ``PYTHONIOENCODING=ascii``) degrades to an ASCII
look-alike; a write to stdout that fails (a closed pipe: ``| true``, a full disk: ``> /dev/full``,
a closed stdout) is remembered and everything after it discarded, never raised into the code
that prints. The command then ends with ``OUTPUT_FAILED`` (``failure`` says why) unless the run
ended with a code of its own. A failed write to stderr is only dropped: there is nowhere left
to say so.
"""

from __future__ import annotations

import codecs
import contextlib
import errno
import io
import os
import select
import sys
import unicodedata
from typing import IO

FALLBACK_ERRORS = "surge-ascii"
"""FALLBACK_ERRORS is the codec error handler ``install`` gives both streams: a character the
stream's encoding cannot hold becomes its ASCII look-alike (``·`` is ``-``, ``×`` is ``x``,
``é`` is ``e``), else ``?``."""

_LOOKALIKES = {
    "·": "-",
    "•": "*",
    "×": "x",
    "±": "+/-",
    "—": "-",
    "–": "-",
    "…": "...",
    "→": "->",
    "←": "<-",
    "≤": "<=",
    "≥": ">=",
    "≈": "~",
    "≠": "!=",
    "µ": "u",
    "μ": "u",
    "σ": "sd",
    "κ": "k",
    "λ": "l",
    "‘": "'",
    "’": "'",
    "“": '"',
    "”": '"',
    "█": "#",
    "▏": "|",
    "│": "|",
    "─": "-",
    "━": "-",
    "┃": "|",
    "✓": "ok",
    "✗": "x",
    "⚠": "!",
    "°": "deg",
    "²": "2",
    "³": "3",
    "√": "sqrt",
    "∞": "inf",
    "−": "-",
}
"""_LOOKALIKES are the ASCII stand-ins of the characters surge prints outside ASCII."""


def _lookalike(char: str) -> str:
    if char in _LOOKALIKES:
        return _LOOKALIKES[char]
    ascii_text = unicodedata.normalize("NFKD", char).encode("ascii", "ignore").decode("ascii")
    return ascii_text or "?"


def _fallback(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeEncodeError):
        raise error
    text = error.object[error.start : error.end]
    replacement = "".join(_lookalike(c) for c in text)
    try:
        replacement.encode(error.encoding)
    except (UnicodeError, LookupError):  # an encoding without ASCII (UTF-16...): its own replacement
        return "?" * (error.end - error.start), error.end
    return replacement, error.end


codecs.register_error(FALLBACK_ERRORS, _fallback)

_failure: str | None = None


def failure() -> str | None:
    """failure is why printing to stdout failed (``cannot write to stdout: Broken pipe``), or
    None while every write succeeded."""
    return _failure


def reset() -> None:
    """reset forgets a failure (for tests running several commands in one process)."""
    global _failure
    _failure = None


class GuardedWriter(io.RawIOBase):
    """GuardedWriter writes to the file descriptor ``fd`` (``closed``: the caller had closed it,
    and /dev/null holds its number: every write fails) and never raises: with ``report``
    (stdout) the first failure is remembered (``failure``), and after a failure every write is
    discarded, as if it had been written. A descriptor left non-blocking is waited on."""

    def __init__(self, fd: int, *, closed: bool, report: bool, name: str) -> None:
        super().__init__()
        self._fd = fd
        self._report = report
        self._name = name
        self._failed = False
        self._closed = closed

    def _fail(self, why: str) -> None:
        global _failure
        self._failed = True
        if self._report and _failure is None:
            _failure = why

    def writable(self) -> bool:
        """writable: always (a failed stream takes writes and discards them)."""
        return True

    def fileno(self) -> int:
        """fileno is the descriptor written to (/dev/null's when the caller closed it)."""
        return self._fd

    def isatty(self) -> bool:
        """isatty: whether the descriptor is a terminal (False after a failure)."""
        return not (self._failed or self._closed) and os.isatty(self._fd)

    def write(self, data: bytes | bytearray | memoryview) -> int:  # type: ignore[override]
        """write writes all of ``data`` or, on the first error, nothing more ever; it returns
        ``len(data)`` either way."""
        view = memoryview(data).cast("B")
        if self._closed and not self._failed:
            self._fail(f"cannot write to {self._name}: it is closed")
        if self._failed:
            return len(view)
        done = 0
        while done < len(view):
            try:
                done += os.write(self._fd, view[done:])
            except InterruptedError:
                continue
            except BlockingIOError:  # a non-blocking descriptor (set so by another process): wait for room
                select.select([], [self._fd], [])
                continue
            except OSError as e:
                self._fail(f"cannot write to {self._name}: {e.strerror or errno.errorcode.get(e.errno or 0, e)}")
                break
        return len(view)


def _reopen_closed(fd: int) -> bool:
    """_reopen_closed opens /dev/null on ``fd`` when the caller closed it; True if it did."""
    try:
        os.fstat(fd)
        return False
    except OSError:
        pass
    null = os.open(os.devnull, os.O_RDWR)
    if null != fd:
        os.dup2(null, fd)
        os.close(null)
    return True


def _guarded(stream: IO[str] | None, fd: int, *, closed: bool, report: bool, name: str) -> IO[str]:
    encoding = getattr(stream, "encoding", None) or "utf-8"
    tty = not closed and os.isatty(fd)
    raw = GuardedWriter(fd, closed=closed, report=report, name=name)
    buffered = io.BufferedWriter(raw)  # type: ignore[type-var]
    return io.TextIOWrapper(
        buffered, encoding=encoding, errors=FALLBACK_ERRORS, line_buffering=tty or not report, write_through=not report
    )


def install() -> None:
    """install guards stdin, stdout and stderr as the module says; stdout and stderr become
    text streams that never raise on write, in their encoding with ASCII look-alikes."""
    _reopen_closed(0)
    for fd in (1, 2):
        name = "stdout" if fd == 1 else "stderr"
        stream = sys.stdout if fd == 1 else sys.stderr
        if stream is not None:
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        closed = _reopen_closed(fd)
        guarded = _guarded(stream, fd, closed=closed, report=fd == 1, name=name)
        if fd == 1:
            sys.stdout = guarded
        else:
            sys.stderr = guarded
