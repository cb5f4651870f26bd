"""Files read as data (``--body @FILE``, CSV variables): regular files of bounded size only,
read with a bounded read; anything else is one line naming the flag or FILE:LINE, exit 2,
without a hang or a read of /dev/zero."""

from __future__ import annotations

import pytest

from conftest import write
from hostile_inputs import KINDS, odd_file
from surge.core.files import FileReadError, read_bounded
from surge.scenario import ScenarioError, load


@pytest.mark.parametrize("kind", KINDS)
def test_a_csv_variable_reading_anything_but_a_small_regular_file_is_refused(tmp_path, kind):
    path = odd_file(tmp_path, kind)
    scenario = write(
        tmp_path,
        """\
        target: http://127.0.0.1:9/
        variables:
          user: {type: csv, file: @CSV@}
        scenarios:
          s:
            executor: {type: constant-vus, duration: 1s}
            flow: [{request: {path: "/{{user.name}}"}}]
        """,
        CSV=str(path),
    )
    with pytest.raises(ScenarioError) as err:
        load(scenario)
    assert str(err.value) == f"{scenario}:3: variables.user.file: {path}: {KINDS[kind]}"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("user name,id\nann,1\n", "1: column 'user name' is not a name a template can use (letters, digits and _)"),
        # The table goes to the engine as one string of NUL-separated cells: a NUL is refused.
        ('name,id\nann,1\n"b\x00b",2\n', "3: holds a NUL character (a template cannot send one)"),
    ],
    ids=["column name", "NUL"],
)
def test_csv_files_hold_what_a_template_can_send(tmp_path, text, problem):
    (tmp_path / "users.csv").write_text(text)
    scenario = write(
        tmp_path,
        """\
        target: http://127.0.0.1:9/
        variables:
          user: {type: csv, file: users.csv}
        scenarios:
          s:
            executor: {type: constant-vus, duration: 1s}
            flow: [{request: {path: "/{{user.id}}"}}]
        """,
    )
    with pytest.raises(ScenarioError) as err:
        load(scenario)
    assert str(err.value) == f"{scenario}:3: variables.user.file: {tmp_path / 'users.csv'}:{problem}"


def test_read_bounded_reads_exactly_a_file_at_the_limit(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"x" * 10)
    assert read_bounded(path, 10) == b"x" * 10
    with pytest.raises(FileReadError, match="larger than 9 bytes"):
        read_bounded(path, 9)
    with pytest.raises(FileReadError, match="cannot read it: No such file or directory"):
        read_bounded(tmp_path / "missing", 10)
