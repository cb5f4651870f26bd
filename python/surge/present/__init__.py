"""Reports written from records alone (docs/reports.md): report.md with SVG charts and report.html
for a run or an experiment (``surge.present.write``), from what ``surge.present.report_source``
finds (a run id, an experiment id, ``last``, a results directory); and the terminal's tables
(``surge.present.terminal``). Nothing is imported here: a run's report loads only what it draws."""
