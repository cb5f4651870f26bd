"""hostile_inputs: scenario and body files built to break a reader: alias bombs (with a head and a
tail that make them a scenario file) and paths that are not a small regular file."""

from __future__ import annotations

import os

from surge.core.limits import MAX_DATA_FILE_BYTES

HEAD = "target: http://127.0.0.1:9/\n"
"""HEAD is the first line of a scenario file around an alias bomb: its target."""


TAIL = "scenarios: {s: {executor: {type: constant-vus, duration: 1s}, flow: [{request: {path: /}}]}}\n"
"""TAIL is the last line of a scenario file around an alias bomb: one scenario."""


def alias_bomb(levels: int, indent: str = "") -> str:
    """alias_bomb is a YAML text of ``levels`` lists each holding nine aliases of the one before."""
    lines = [f'{indent}a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    lines += [f"{indent}a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


def odd_file(tmp_path, kind: str):
    """odd_file makes a path that is not a small regular file: a device, a FIFO, a directory
    or a sparse file just over the data file limit."""
    path = tmp_path / f"odd-{kind.replace(' ', '-')}"
    if kind == "character device":
        path.symlink_to("/dev/zero")
    elif kind == "FIFO":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    else:
        with path.open("wb") as f:
            f.truncate(MAX_DATA_FILE_BYTES + 1)
    return path


KINDS = {
    "character device": "is a character device, not a regular file",
    "FIFO": "is a pipe (FIFO), not a regular file",
    "directory": "is a directory, not a regular file",
    "too large": "is larger than 16 MiB, the most surge reads from one file",
}
"""KINDS are the kinds of odd_file, each with the words of its refusal."""


def vu_values(tmp_path, vus: int, variables: int, length: int) -> str:
    """vu_values writes a file whose scenario runs ``vus`` VUs, each using ``variables``
    random strings of ``length`` characters (defined from line 3 on)."""
    defs = "".join(f"  s{i}: {{type: random-string, length: {length}}}\n" for i in range(variables))
    body = "".join(f"{{{{s{i}}}}}" for i in range(variables))
    path = tmp_path / "values.yaml"
    path.write_text(
        f"target: http://127.0.0.1:9/\nvariables:\n{defs}scenarios:\n  s:\n"
        f"    executor: {{type: constant-vus, vus: {vus}, duration: 1s}}\n"
        f"    flow: [{{request: {{method: POST, path: /, body: '{body}'}}}}]\n"
    )
    return str(path)
