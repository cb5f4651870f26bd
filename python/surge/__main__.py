"""``python -m surge``: the same as the ``surge`` command."""

from surge.cli import main

main()
