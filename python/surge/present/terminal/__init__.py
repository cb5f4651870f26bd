"""surge.present.terminal: what the terminal shows: a run's summary, the live view while a run
goes (docs/cli.md), stored runs, experiments' tables."""
