"""surge's command line (in progress)."""


def main() -> None:
    """main is the `surge` console entry point."""
    raise SystemExit(0)
