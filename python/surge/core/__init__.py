"""surge.core: what every layer uses: errors, exit codes, units, limits, redaction, signals,
bounded file reads, the guarded streams, tags."""
