"""surge.present.markdown: report.md for a run and for an experiment."""
