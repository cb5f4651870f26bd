"""surge.plan: what the engine runs: the Plan, a URL's flags turned into one, the compiled run,
thresholds, the heading that names a plan."""
