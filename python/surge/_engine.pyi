"""Type stubs for ``surge._engine``, the compiled module (private: import from ``surge``)."""

from collections.abc import Callable

from surge.core.errors import SurgeError

__all__ = [
    "DEFAULT_SEND_SLACK_S",
    "ConnectionLimitError",
    "PlanError",
    "SetupError",
    "TargetConfigError",
    "TargetInternalError",
    "TargetServeError",
    "UnreachableError",
    "__version__",
    "check_json_path",
    "check_target_config",
    "merge",
    "run",
    "serve_target",
    "validate_plan",
]

__version__: str
DEFAULT_SEND_SLACK_S: float

class PlanError(SurgeError, ValueError):
    """PlanError: the plan is invalid; args are (message, errors as JSON)."""

class UnreachableError(SurgeError):
    """UnreachableError: the target could not be resolved or connected to;
    args are (message, failure class, address or host)."""

class ConnectionLimitError(SurgeError):
    """ConnectionLimitError: the plan needs more connections than the open-file limit allows."""

class SetupError(SurgeError):
    """SetupError: the engine could not start (threads, poll, TLS setup)."""

class TargetConfigError(SurgeError, ValueError):
    """TargetConfigError: the target's configuration is invalid; one line per mistake, each starting with its flag."""

class TargetServeError(SurgeError, OSError):
    """TargetServeError: the target could not listen on its address or start its runtime."""

class TargetInternalError(SurgeError, RuntimeError):
    """TargetInternalError: the target's serving thread failed (a bug in surge)."""

def run(
    plan_json: str,
    on_interval: Callable[[str], bool | None] | None = None,
    on_report: Callable[[str], bool | None] | None = None,
    poll: Callable[[], bool | None] | None = None,
) -> str:
    """run runs a plan (JSON) with the GIL released and returns the result document (JSON).
    ``on_interval`` gets each interval as JSON; returning True ends the run early (stop
    reason "aborted"). ``on_report`` (a distributed run's generator) gets each worker report
    encoded for the driver, ``poll`` is asked about ten times a second; True from either
    stops the run. Ctrl-C stops the run and returns what ran."""

def merge(
    plan_json: str,
    generators: int,
    start_at_unix_s: float,
    receive: Callable[[float, bool], list[tuple[int, str | None]] | None],
    on_interval: Callable[[str], bool | None] | None = None,
) -> str:
    """merge is a distributed run's driver: ``receive(wait_s, stopping)`` returns the
    generators' reports as (generator, report) pairs (report None: generator lost), or None
    once all have ended; the merged intervals go to ``on_interval`` (True: abort) and the
    merged result document (JSON) is returned."""

def validate_plan(plan_json: str) -> str:
    """validate_plan returns the plan's errors as a JSON list ("[]" when valid)."""

def check_json_path(path: str) -> None:
    """check_json_path parses a capture's or a check's JSON path with the engine's parser;
    raises PlanError with the engine's message when it refuses the path."""

def serve_target(config_json: str, on_ready: Callable[[str], None]) -> str:
    """serve_target serves the reference target until stopped; returns its summary (JSON)."""

def check_target_config(config_json: str) -> str:
    """check_target_config validates a target configuration without serving it."""
