"""CSV data for ``csv`` variables: a header row naming the columns, then one row per value set."""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path

from surge.core.files import FileReadError, read_bounded
from surge.core.limits import MAX_DATA_FILE_BYTES

_COLUMN = re.compile(r"[A-Za-z0-9_]+")


class CsvError(ValueError):
    """CsvError: a CSV file cannot be used; ``line`` is its 1-based line (0 when the file
    as a whole is at fault) and the message says what was expected."""

    def __init__(self, path: Path, line: int, message: str) -> None:
        where = f"{path}:{line}" if line else f"{path}"
        super().__init__(f"{where}: {message}")
        self.path = path
        self.line = line
        self.message = message


@dataclass(frozen=True)
class CsvTable:
    """CsvTable: the columns (from the header) and the rows of a CSV file, every row as long
    as the header, held as one string: ``cells`` is every cell in row order, each followed by
    a NUL character (the engine's ``rows`` ``cells`` form), so a table costs about its file's
    size however many rows it has, not an object per cell."""

    columns: tuple[str, ...]
    cells: str
    rows: int
    widest: int = 0
    """widest bounds the UTF-8 bytes of the longest row's cells together (what a VU's slots hold)."""


def read_csv(path: Path) -> CsvTable:
    """read_csv reads a UTF-8 CSV file with a header row (a regular file of at most
    ``MAX_DATA_FILE_BYTES``); CsvError names the file and the line of the first problem
    (unreadable, too large, empty, blank, duplicate or unusable column names, a row with a
    different number of fields than the header, a NUL character, which no request can carry
    in a template). It keeps no object per row: the cells go into one string as they are read."""
    try:
        text = read_bounded(path, MAX_DATA_FILE_BYTES).decode("utf-8-sig")
        nul = text.find("\0")
        if nul >= 0:
            raise CsvError(path, text.count("\n", 0, nul) + 1, "holds a NUL character (a template cannot send one)")
        reader = csv.reader(io.StringIO(text, newline=""))
        header = next(reader, None)
        if header is None:
            raise CsvError(path, 0, "the file is empty: expected a header row naming the columns")
        columns = tuple(h.strip() for h in header)
        for i, name in enumerate(columns):
            if not name:
                raise CsvError(path, 1, f"column {i + 1} of the header has no name")
            if not _COLUMN.fullmatch(name):
                raise CsvError(path, 1, f"column '{name}' is not a name a template can use (letters, digits and _)")
            if name in columns[:i]:
                raise CsvError(path, 1, f"column name '{name}' appears twice in the header")
        cells = io.StringIO()
        rows = widest = 0
        width = len(columns)
        for row in reader:
            if not row:  # blank line
                continue
            if len(row) != width:
                raise CsvError(path, reader.line_num, f"row has {len(row)} fields, the header has {width}")
            line = "\0".join(row)
            cells.write(line)
            cells.write("\0")
            rows += 1
            if len(line) > widest:
                widest = len(line)
        del text
    except FileReadError as e:
        raise CsvError(path, 0, e.message) from None
    except UnicodeDecodeError as e:
        raise CsvError(path, 0, f"is not UTF-8 text ({e.reason})") from None
    except csv.Error as e:
        raise CsvError(path, 0, f"is not valid CSV ({e})") from None
    if not rows:
        raise CsvError(path, 0, "has a header but no rows")
    text = cells.getvalue()
    return CsvTable(columns=columns, cells=text, rows=rows, widest=widest * (1 if text.isascii() else 4))
