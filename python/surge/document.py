"""The engine's result document as plain data (``schema: surge.result/1``), for paths that
print or store it without loading the typed models in ``surge.result``."""

from __future__ import annotations

from typing import Any


def result_document(doc: dict[str, Any], *, interval_histograms: bool = False) -> dict[str, Any]:
    """result_document trims an engine result document for output: the per-interval
    histograms are dropped unless asked for (the run's full histograms stay)."""
    if not interval_histograms:
        for interval in doc.get("intervals", []):
            interval.pop("latency_histogram", None)
    return doc
