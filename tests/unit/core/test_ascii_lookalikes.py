"""What an output encoding cannot hold degrades to ASCII lookalikes."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.cpu_heavy  # runs apart from the answer tests (Makefile: test-python)

LOOKALIKES = [
    ("·", "ascii", "-"),
    ("200 × 5", "ascii", "200 x 5"),
    ("4.2 µs", "ascii", "4.2 us"),
    ("café", "ascii", "cafe"),
    ("━╇│", "ascii", "-?|"),
    ("中", "latin-1", "?"),
    ("±·", "latin-1", "±·"),
]
"""LOOKALIKES: text, an encoding that cannot hold all of it, and what it degrades to."""


@pytest.mark.parametrize("text, encoding, shown", LOOKALIKES, ids=[t for t, _, _ in LOOKALIKES])
def test_what_an_encoding_cannot_hold_degrades_to_ascii_lookalikes(text, encoding, shown):
    from surge.core.streams import FALLBACK_ERRORS

    assert text.encode(encoding, errors=FALLBACK_ERRORS).decode(encoding) == shown
