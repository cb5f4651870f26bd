"""seed001_exports: seed 001's twenty k6 exports, imported into the history as the seed ran them."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import surge

SEED_001_DIR = Path(__file__).parent / "fixtures" / "imports" / "seed001"
"""SEED_001_DIR holds seed 001's twenty k6 --summary-export files (its README: made from the
seed's per-run tables): ten runs at 35 VUs, ten at 75."""


MONOLITH = {35: [19.9, 20.2, 20.0], 75: [35.9, 36.2, 36.1]}
"""MONOLITH are req/s of a second architecture (seed 001's monolith: 36.08 req/s at 75 VUs, 84 %
efficiency): 20.03 → 36.07 req/s, 1.80×, 84 %."""


def import_files(paths: list[Path], *tags: str) -> None:
    """import_files runs ``surge import PATHS`` with each of ``tags`` (``--tag``); it must succeed."""
    imported = surge("import", *map(str, paths), *(arg for tag in tags for arg in ("--tag", tag)))
    assert imported.code == 0, imported.stderr


def import_seed_001_exports(tmp_path: Path) -> None:
    """import_seed_001_exports imports the twenty exports (arch=scaleout, vus=35 or 75), dated
    an hour apart in the seed's order (a summary export keeps no start time), and a monolith."""
    import os
    import sys

    sys.path.insert(0, str(SEED_001_DIR))
    from make_seed001 import export  # the seed's own file format, at the monolith's figures

    copies = tmp_path / "exports"
    copies.mkdir()
    for number, source in enumerate(sorted(SEED_001_DIR.glob("*.json"))):
        copy = copies / source.name
        copy.write_bytes(source.read_bytes())
        os.utime(copy, (1_577_836_800 + 3600 * number,) * 2)
    for vus, scenario in ((35, "baseline"), (75, "stress")):
        import_files(sorted(copies.glob(f"{scenario}-*.json")), "arch=scaleout", f"vus={vus}")
        mono = []
        for i, rate in enumerate(MONOLITH[vus]):
            path = tmp_path / f"monolith-{vus}-{i}.json"
            path.write_text(json.dumps(export(vus, 600, rate, 1000.0 + vus * 10 + i, 1500.0 + i)))
            mono.append(path)
        import_files(mono, "arch=monolith", f"vus={vus}")
