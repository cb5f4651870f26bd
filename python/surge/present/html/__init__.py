"""surge.present.html: report.html, one self-contained interactive page per run
(``run_page.render_run_html``) and per experiment (``experiment_page.render_experiment_html``)
(docs/report-html.md). Nothing is imported here: a run's page never loads an experiment's."""
