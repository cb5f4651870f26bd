"""The sparse reader of the intervals' histograms (surge.record.histogram_codec) gives every
slot and count hdrh's own decoder gives, and None (so the caller uses hdrh) for what it does
not expect."""

from __future__ import annotations

import base64
import struct
import zlib

import numpy as np
import pytest
from hdrh.histogram import HdrHistogram

from surge.record.histogram_codec import layout_of, recorded

ENGINE = (1, 3_600_000_000, 3)


def _hdrh_slots(encoded: str) -> tuple[list[int], list[int]]:
    h = HdrHistogram.decode(encoded)
    counts = np.ctypeslib.as_array(h.counts)[: h.counts_len]
    indexes = np.flatnonzero(counts)
    return indexes.tolist(), counts[indexes].tolist()


@pytest.mark.parametrize("seed", range(12))
def test_every_slot_and_count_is_hdrhs(seed):
    rng = np.random.default_rng(seed)
    h = HdrHistogram(*ENGINE)
    values = np.exp(rng.uniform(0, np.log(3_000_000_000), rng.integers(1, 3_000))).astype(np.int64)
    for value in values:
        h.record_value(int(value), int(rng.choice([1, 1, 7, 300, 2**40])))
    h.record_value(0, 3)  # the slot of 0 (a zero-microsecond answer)
    encoded = h.encode().decode()
    found = recorded(encoded)
    assert found is not None
    indexes, counts = _hdrh_slots(encoded)
    assert found.indexes.tolist() == indexes and found.counts.tolist() == counts
    assert found.layout == layout_of(*ENGINE)
    assert (found.layout.counts_len, found.layout.half) == (h.counts_len, h.sub_bucket_half_count)


def test_an_empty_histogram_has_no_slots():
    found = recorded(HdrHistogram(*ENGINE).encode().decode())
    assert found is not None and found.indexes.tolist() == [] and found.counts.tolist() == []


def _reencoded(payload: bytes) -> str:
    compressed = zlib.compress(payload)
    return base64.b64encode(struct.pack(">II", 0x1C849314, len(compressed)) + compressed).decode()


def test_what_it_does_not_expect_is_none_for_hdrh_to_read():
    h = HdrHistogram(*ENGINE)
    h.record_value(1000, 2**60)  # a count of nine bytes
    assert recorded(h.encode().decode()) is None
    assert _hdrh_slots(h.encode().decode())[1] == [2**60]
    assert recorded("not base64!") is None
    assert recorded(base64.b64encode(b"\x00" * 12).decode()) is None  # another cookie
    h = HdrHistogram(*ENGINE)
    h.record_value(1000)
    raw = base64.b64decode(h.encode())
    payload = bytearray(zlib.decompress(raw[8:]))
    assert recorded(_reencoded(bytes(payload))) is not None  # the re-encoding itself is read
    offset = bytearray(payload)
    offset[8:12] = struct.pack(">I", 5)  # a normalizing index offset
    assert recorded(_reencoded(bytes(offset))) is None
    truncated = payload + bytes([0x80])  # a last varint that never ends
    truncated[4:8] = struct.pack(">I", len(truncated) - 40)
    assert recorded(_reencoded(bytes(truncated))) is None
    past = bytearray(payload[:40]) + bytes([0xFF, 0xFF, 0x03, 0x02])  # a run of 32,768 empty slots, then 1
    past[4:8] = struct.pack(">I", 4)
    assert recorded(_reencoded(bytes(past))) is None  # past the array's 23,552 slots
