"""surge.present.terminal: what the terminal shows: a run's summary, live progress, stored runs, experiments' tables."""
