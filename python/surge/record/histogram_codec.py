"""The intervals' latency histograms (``latency_histogram``: HdrHistogram's V2 compressed
encoding, base64, docs/record.md) read as the slots that hold a count, without the counts array.
``hdrh``'s decoder fills an array of every slot (23,552 for the engine's one-hour range,
188 KB), which a watcher of the run (an exporter) then scans for the few hundred that count;
on the engine's core that costs it about 1 ms an interval. The encoding is small and fixed
(HdrHistogram's "V2": a header, then each count as a ZigZag LEB128 varint, a run of empty slots
as one negative number): ``recorded`` decodes it with numpy's whole-array operations, and says
None for anything it does not expect, so that the caller can use ``hdrh``."""

from __future__ import annotations

import base64
import binascii
import functools
import struct
import zlib
from dataclasses import dataclass
from typing import Any

COMPRESSION_COOKIE = 0x1C849304
"""COMPRESSION_COOKIE is the V2 compressed encoding's cookie (its word-size bits masked)."""

ENCODING_COOKIE = 0x1C849303
"""ENCODING_COOKIE is the V2 payload's cookie (its word-size bits masked)."""

COOKIE_MASK = ~0xF0 & 0xFFFFFFFF
"""COOKIE_MASK leaves a cookie's word-size bits out."""

PAYLOAD_HEADER = struct.Struct(">IIIIqqd")
"""PAYLOAD_HEADER is the payload's header: cookie, length of the counts, normalizing index
offset, significant figures, lowest and highest trackable value, integer-to-double ratio."""


@dataclass(frozen=True)
class Layout:
    """Layout is an HdrHistogram's counts array's shape, as ``hdrh`` computes it from the
    encoded range: ``counts_len`` slots, sub-bucket half count ``half`` = 2^``magnitude``,
    ``unit_magnitude``."""

    counts_len: int
    half: int
    magnitude: int
    unit_magnitude: int


@dataclass(frozen=True)
class Recorded:
    """Recorded is a histogram's slots that hold a count: their ``indexes`` in the counts array
    (rising) and their ``counts`` (numpy int64 arrays), and the array's ``layout``."""

    indexes: Any
    counts: Any
    layout: Layout


@functools.lru_cache(maxsize=8)
def layout_of(lowest: int, highest: int, significant_figures: int) -> Layout:
    """layout_of is the Layout ``hdrh`` gives a histogram of that range, computed once."""
    from hdrh.histogram import HdrHistogram  # type: ignore[import-untyped]  # function-local: the reference layout

    h = HdrHistogram(lowest, highest, significant_figures)
    return Layout(h.counts_len, h.sub_bucket_half_count, h.sub_bucket_half_count_magnitude, h.unit_magnitude)


def recorded(encoded: str) -> Recorded | None:
    """recorded is the slots of the base64 V2 histogram ``encoded`` that hold a count; None when
    it is not what the engine writes (another cookie, a normalizing offset, a count of 2^56 or
    more, slots past the array's end, a malformed body)."""
    import numpy as np  # function-local: loaded by the watchers that decode intervals

    try:
        raw = base64.b64decode(encoded, validate=True)
        cookie, length = struct.unpack_from(">II", raw)
        if cookie & COOKIE_MASK != COMPRESSION_COOKIE or len(raw) != 8 + length:
            return None
        payload = zlib.decompress(raw[8:])
    except (binascii.Error, struct.error, zlib.error, ValueError):
        return None
    if len(payload) < PAYLOAD_HEADER.size:
        return None
    cookie, counts_length, offset, digits, lowest, highest, _ = PAYLOAD_HEADER.unpack_from(payload)
    body = np.frombuffer(payload, dtype=np.uint8, offset=PAYLOAD_HEADER.size)
    if cookie & COOKIE_MASK != ENCODING_COOKIE or offset != 0 or counts_length != len(body):
        return None
    try:
        layout = layout_of(lowest, highest, digits)
    except Exception:  # a range hdrh refuses
        return None
    if not len(body):
        return Recorded(np.zeros(0, np.int64), np.zeros(0, np.int64), layout)
    ends = np.flatnonzero(body < 0x80)  # the last byte of each varint
    if not len(ends) or ends[-1] != len(body) - 1:
        return None
    starts = np.concatenate(([0], ends[:-1] + 1))
    sizes = ends - starts + 1
    if sizes.max() > 8:  # 2^56 and more: a ninth byte holds eight bits; hdrh reads those
        return None
    place = np.arange(len(body)) - np.repeat(starts, sizes)
    words = np.add.reduceat((body & 0x7F).astype(np.uint64) << (7 * place).astype(np.uint64), starts)
    values = (words >> np.uint64(1)).astype(np.int64) ^ -(words & np.uint64(1)).astype(np.int64)  # ZigZag
    steps = np.where(values < 0, -values, 1)
    slots = np.cumsum(steps) - steps
    counted = values > 0
    indexes, counts = slots[counted], values[counted]
    if len(indexes) and indexes[-1] >= layout.counts_len:
        return None
    return Recorded(indexes, counts, layout)


__all__ = ["Layout", "Recorded", "layout_of", "recorded"]
