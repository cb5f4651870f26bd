"""Experiments: several runs of one test as one recorded whole (docs/experiments.md). One run of
an experiment (``runner``), the experiment's record (``recorder``), and one module per kind, each
with one function that prepares, runs, analyses and returns the record and its exit code
(``repeat`` with ``stats``, ``sweep``, ``capacity``, ``compare_experiment``; ``outcome`` holds the
exit codes), and the baseline check (``baseline_check``)."""
