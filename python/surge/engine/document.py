"""The engine's result document as plain data (``schema: surge.result/1``), for paths that
print or store it without loading the typed models in ``surge.engine.result``."""

from __future__ import annotations

from typing import Any

from surge.core import signals
from surge.core.redact import redact_document


def result_document(doc: dict[str, Any], *, interval_histograms: bool = False) -> dict[str, Any]:
    """result_document is an engine result document made ready for output: secrets masked
    (``surge.core.redact``: the URL's credentials and secret parameters, secret-named pools), the
    per-interval histograms dropped unless asked for (the run's full histograms stay), and
    ``stop_signal`` added: the stop signal that ended the run ("SIGTERM"), or null."""
    if not interval_histograms:
        for interval in doc.get("intervals", []):
            interval.pop("latency_histogram", None)
    out: dict[str, Any] = redact_document(doc)
    signum = signals.received()
    out["stop_signal"] = signals.signal_name(signum) if signum is not None else None
    return out
