"""Reports written from records alone (docs/reports.md): report.md with SVG charts for a run or
an experiment (``write_markdown``), from what ``load_source`` finds (a run id, an experiment id,
``last``, a results directory)."""

from surge.present.report_source import ExperimentSource, Source, experiment_from_directory, load_source
from surge.present.write import REPORT_FILE, write_markdown, write_report_quietly

__all__ = [
    "REPORT_FILE",
    "ExperimentSource",
    "Source",
    "experiment_from_directory",
    "load_source",
    "write_markdown",
    "write_report_quietly",
]
