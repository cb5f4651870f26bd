"""surge.run: one run from its test description: the test's options (``flags``) and TestSpec
(``spec``), the phases (setup, main, teardown: ``phases``), the interval stream and its sinks
(``sinks``), the run session that records, diagnoses and reports (``session``), JUnit
(``junit``) and a record rebuilt from the history (``export``)."""
