"""surge.plan.model: what the engine runs: the Plan, a URL's flags turned into one, thresholds, the heading that names a plan."""
