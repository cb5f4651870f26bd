"""Process exit codes of the ``surge`` command, documented in the README."""

OK = 0
"""OK: the run completed (and every threshold, if any, passed)."""

RUN_FAILED = 1
"""RUN_FAILED: an unexpected error stopped surge."""

BAD_INPUT = 2
"""BAD_INPUT: a flag, file or value is invalid; the message names it."""

UNREACHABLE = 3
"""UNREACHABLE: the target could never be reached (DNS failure, refused, connect timeout)."""

THRESHOLDS_FAILED = 99
"""THRESHOLDS_FAILED: the run completed but a threshold failed (k6's convention)."""

INTERRUPTED = 130
"""INTERRUPTED: the run was stopped by Ctrl-C (128 + SIGINT); partial results were reported."""
