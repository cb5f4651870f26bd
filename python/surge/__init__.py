"""surge: load and capacity testing for HTTP services.

The engine is Rust (``surge._engine``); this package validates input, builds the
plan, drives runs and writes results. The pure-Python layers (scenario files, thresholds)
import without the compiled engine, so they can be used and tested before it is built.
"""

try:
    from surge.engine.execute import VERSION as __version__
except ImportError:  # the engine is not built: only the pure-Python modules are usable
    __version__ = "0+unbuilt"

__all__ = ["__version__"]
