"""Analysis of experiments: statistics over runs, curves, fits and comparisons (docs/experiments.md)."""
