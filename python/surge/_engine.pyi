"""Type stubs for ``surge._engine``, the compiled module (private: import from ``surge``)."""

from collections.abc import Callable

__version__: str
DEFAULT_SEND_SLACK_S: float

class SurgeError(Exception):
    """SurgeError is the base of every error surge raises."""

class PlanError(ValueError):
    """PlanError: the plan is invalid; args are (message, errors as JSON)."""

class UnreachableError(SurgeError):
    """UnreachableError: the target could not be resolved or connected to;
    args are (message, failure class, address or host)."""

class ConnectionLimitError(SurgeError):
    """ConnectionLimitError: the plan needs more connections than the open-file limit allows."""

class SetupError(SurgeError):
    """SetupError: the engine could not start (threads, poll, TLS setup)."""

def run(plan_json: str, on_interval: Callable[[str], bool | None] | None = None) -> str:
    """run runs a plan (JSON) with the GIL released and returns the result document (JSON).
    ``on_interval`` gets each interval as JSON; returning True ends the run early (stop
    reason "aborted"). Ctrl-C stops the run and returns what ran."""

def validate_plan(plan_json: str) -> str:
    """validate_plan returns the plan's errors as a JSON list ("[]" when valid)."""

def serve_target(config_json: str, on_ready: Callable[[str], None]) -> str:
    """serve_target serves the reference target until stopped; returns its summary (JSON)."""

def check_target_config(config_json: str) -> str:
    """check_target_config validates a target configuration without serving it."""
