"""The record: every ``surge run`` leaves a results directory (docs/record.md): the summary
with its ``meta`` block, the time series, the latency histograms as an HdrHistogram interval
log, and the inputs, secrets masked; written as the run goes."""

from surge.record.directory import check_out, create_directory, run_name
from surge.record.writer import RecordWriter

__all__ = ["RecordWriter", "check_out", "create_directory", "run_name"]
