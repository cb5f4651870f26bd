"""surge.present.html: report.html, one self-contained interactive page per run and per
experiment (docs/report-html.md): render_run_html and render_experiment_html."""

from surge.present.html.experiment_page import render_experiment_html
from surge.present.html.run_page import render_run_html

__all__ = ["render_experiment_html", "render_run_html"]
