"""Imports: runs made by other tools (k6, hey, oha) as surge records (docs/imports.md): one
module per format, detection by content, and a shared builder of the ``surge.result/1``
document."""

from surge.imports.builder import Imported
from surge.imports.detect import FORMATS, TOOLS, detect, load
from surge.imports.source import Source

__all__ = ["FORMATS", "TOOLS", "Imported", "Source", "detect", "load"]
