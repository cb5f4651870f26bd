"""Experiments: several runs of one test as one recorded whole (docs/experiments.md). The test
description (``spec``), one run of an experiment (``runner``), the experiment's record
(``record``), each run's key figures (``figures``), and the commands built on them (repeat,
stats; sweep, capacity and compare)."""
