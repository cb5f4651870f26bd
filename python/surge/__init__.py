"""surge: load and capacity testing for HTTP services.

The engine is Rust (``surge._engine``); this package validates input, builds the
plan, drives runs and writes results.
"""

from surge._engine import __version__

__all__ = ["__version__"]
