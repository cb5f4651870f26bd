"""surge.run: one run from its test description: the phases (setup, main, teardown), the run session, JUnit."""
