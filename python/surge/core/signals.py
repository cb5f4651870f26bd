"""Stop signals: SIGINT (Ctrl-C), SIGTERM (``timeout``, a cancelled CI job, ``docker stop``)
and SIGHUP (the terminal closed) all stop a run the same way.

The handler raises StopRequested, a KeyboardInterrupt: the engine polls for it about ten
times a second and ends the run keeping what it measured (``stop_reason: "interrupted"``);
in Python code between runs it unwinds to the caller, which starts no later phase. The
first signal is remembered, so that the exit code (128 + its number) and the line saying
why name it even after the engine has swallowed the exception.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""STOP_SIGNALS are the signals that stop a run, keeping its results."""


class StopRequested(KeyboardInterrupt):
    """StopRequested: a stop signal arrived; ``signum`` is its number."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal_name(signum))
        self.signum = signum


_first: int | None = None
_deferring = False


def install() -> None:
    """install makes each stop signal raise StopRequested in the main thread. A signal that
    was ignored when surge started stays ignored (``nohup`` ignores SIGHUP; a shell ignores
    SIGINT for a background job), as Python itself does for SIGINT."""
    for sig in STOP_SIGNALS:
        try:
            if sig != signal.SIGTERM and signal.getsignal(sig) == signal.SIG_IGN:
                continue
            signal.signal(sig, _handle)
        except ValueError:  # not the main thread (surge used as a library): leave signals alone
            return


def _handle(signum: int, frame: FrameType | None) -> None:
    global _first
    first = _first is None
    if first:
        _first = signum
    if first and _deferring:
        return  # the results are being written: let them finish, exit with the signal's code
    raise StopRequested(signum)


def ignore() -> None:
    """ignore ignores every stop signal from now on: surge's last step before it exits with its
    code, so that a signal arriving during Python's own shutdown (which gives the signals their
    default action back) cannot end the process without the line that says why."""
    for sig in STOP_SIGNALS:
        try:
            signal.signal(sig, signal.SIG_IGN)
        except ValueError:
            return


def received() -> int | None:
    """received is the number of the first stop signal received, or None."""
    return _first


def note(signum: int) -> None:
    """note records ``signum`` as received when no signal was yet (a KeyboardInterrupt that
    did not come through the handler, e.g. before ``install``)."""
    global _first
    if _first is None:
        _first = signum


def reset() -> None:
    """reset forgets the signal received (for tests running several commands in-process)."""
    global _first
    _first = None


@contextmanager
def deferred() -> Iterator[None]:
    """deferred: while results are printed, the first stop signal is only recorded (the
    output completes, the exit code still names it); a second one stops at once."""
    global _deferring
    before, _deferring = _deferring, True
    try:
        yield
    finally:
        _deferring = before


def signal_name(signum: int) -> str:
    """signal_name is the signal's name, e.g. ``SIGTERM``."""
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def exit_code(signum: int) -> int:
    """exit_code is the shell's convention for a process stopped by ``signum``: 128 + its
    number (130 SIGINT, 143 SIGTERM, 129 SIGHUP)."""
    return 128 + signum
