"""surge: load and capacity testing for HTTP services.

The engine is Rust (``surge._engine``); this package validates input, builds the
plan, drives runs and writes results.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("surge")
except PackageNotFoundError:  # running from a source tree without install
    __version__ = "0.0.0"

__all__ = ["__version__"]
