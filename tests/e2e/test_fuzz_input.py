"""Fuzzing the input: seeded mutations of every example and test scenario file and of the
flags of ``surge run`` and ``surge target``, plus the known hostile inputs (alias bombs, deep
nesting, tags, huge numbers, /dev/zero and FIFO reads). Whatever comes in, surge answers with
a compiled plan or with errors of one line each that name FILE:LINE or the flag (exit 2): no
traceback, no panic, no hang, never more than 200 MB.

Most cases go through the loader, the compiler and the engine's ``validate_plan`` in one
child process (run as ``python tests/test_fuzz_input.py TMPDIR SEED CASES``) whose peak RSS
is measured; a few dozen go through the CLI, each a child with 1 GB of address space at most
and a timeout. Nothing valid is run against anything: scenario files are sent to a closed
loopback port (127.0.0.1:9), which surge finds unreachable before it starts.
"""

from __future__ import annotations

import json
import os
import random
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from conftest import SCRATCH

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted([*(ROOT / "examples").glob("*.yaml"), *(ROOT / "tests" / "scenarios").glob("*.yaml")])
SEED = 20_251_123
IN_PROCESS_CASES = 400
CLI_CASES = 36
MAX_RSS_BYTES = 200 << 20
ENGINE_WORDS = ("Traceback", "invalid plan JSON", "line 1 column", "expected u32", "expected u64", "panicked")

EXTREME_NUMBERS = [
    "0",
    "-1",
    "1000000000000",
    "4294967296",
    "9223372036854775808",
    "18446744073709551616",
    "-9223372036854775809",
    "1.0e+308",
    "1.0e+400",
    ".nan",
    ".inf",
    "-.inf",
    "9" * 5000,
    "0x7fffffff",
    "1e3",
    "0.0000001",
    "1_000_000",
    "190:20:30",
]
EXTREME_DURATIONS = [
    "0s",
    "-1s",
    "1e400s",
    "99999999h",
    "inf",
    "nan",
    "1",
    "25h",
    "2h",
    "1us",
    "720h",
    "721h",
    "0.0000001ms",
    "1m1m",
    "",
]
TAGS = ["!foo ", "!!python/object:os.system ", "!!binary ", "!!set ", "!!omap ", "!!str ", "!!int ", "!!timestamp "]
WORD = re.compile(r"(?<=: )[^\s,{}\[\]]+")


def alias_bomb(levels: int, width: int = 9) -> str:
    """alias_bomb is ``levels`` lists of ``width`` aliases of the one before."""
    lines = [f"b0: &b0 [{', '.join(['x'] * width)}]"]
    lines += [f"b{i}: &b{i} [{', '.join([f'*b{i - 1}'] * width)}]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


def hostile(tmp: Path) -> list[tuple[str, str]]:
    """hostile are the known attacks, as (name, file text)."""
    head = "target: http://127.0.0.1:9/\n"
    tail = "scenarios: {s: {executor: {type: constant-vus, duration: 1s}, flow: [{request: {path: /}}]}}\n"
    fifo, folder, sparse = tmp / "fifo", tmp / "folder", tmp / "sparse.csv"
    csv = (
        "variables: {u: {type: csv, file: %s}}\nscenarios: {s: {executor: {type: constant-vus, duration: 1s}, "
        "flow: [{request: {path: '/{{u.a}}'}}]}}\n"
    )
    return [
        ("alias bomb", head + alias_bomb(9) + tail),
        (
            "alias bomb in variables",
            head + "variables:\n" + "".join("  " + line + "\n" for line in alias_bomb(6).splitlines()) + tail,
        ),
        ("wide alias bomb", head + alias_bomb(3, 400) + tail),
        ("self alias", head + "x: &x [*x]\n" + tail),
        ("self alias in a mapping", head + "x: &x {a: *x}\n" + tail),
        ("deep lists", head + "x: " + "[" * 100_000 + "]" * 100_000 + "\n" + tail),
        ("deep mappings", head + "x: " + "{a: " * 5_000 + "1" + "}" * 5_000 + "\n" + tail),
        ("deep block nesting", head + "".join("  " * i + f"k{i}:\n" for i in range(500)) + tail),
        ("unknown tag", "target: !foo http://127.0.0.1:9/\n" + tail),
        ("python tag", head + "x: !!python/object/apply:os.system [echo hi]\n" + tail),
        ("huge integer", head + tail.replace("duration: 1s", "vus: " + "9" * 5000 + ", duration: 1s")),
        ("infinite float", head + "x: 1.0e+400\n" + tail),
        ("csv /dev/zero", head + csv % "/dev/zero"),
        ("csv fifo", head + csv % fifo),
        ("csv folder", head + csv % folder),
        ("csv too large", head + csv % sparse),
        ("two documents", head + tail + "---\n" + head + tail),
        ("binary garbage", bytes(random.Random(1).randrange(256) for _ in range(4096)).decode("latin-1")),
        ("empty", ""),
        ("tabs", head + "scenarios:\n\ts: 1\n"),
        ("too large", head + tail + "#" * (8 << 20) + "\n"),
    ]


def mutate(rng: random.Random, text: str) -> str:
    """mutate applies one to three random edits to a scenario file's text."""
    for _ in range(rng.randint(1, 3)):
        lines = text.splitlines(keepends=True) or [""]
        i = rng.randrange(len(lines))
        op = rng.randrange(10)
        if op == 0:  # a number made extreme
            numbers = list(re.finditer(r"(?<![\w.{])\d+(?![\w.])", text))
            if numbers:
                m = rng.choice(numbers)
                text = text[: m.start()] + rng.choice(EXTREME_NUMBERS) + text[m.end() :]
        elif op == 1:  # a duration made extreme
            durations = list(re.finditer(r"\b\d+(?:\.\d+)?(?:ms|us|s|m|h)\b", text))
            if durations:
                m = rng.choice(durations)
                text = text[: m.start()] + rng.choice(EXTREME_DURATIONS) + text[m.end() :]
        elif op == 2:  # a line dropped
            del lines[i]
            text = "".join(lines)
        elif op == 3:  # a line given twice
            lines.insert(i, lines[i])
            text = "".join(lines)
        elif op == 4:  # a tag before a value
            values = list(WORD.finditer(text))
            if values:
                m = rng.choice(values)
                text = text[: m.start()] + rng.choice(TAGS) + text[m.start() :]
        elif op == 5:  # a value replaced by deep nesting
            values = list(WORD.finditer(text))
            if values:
                m, depth = rng.choice(values), rng.choice([10, 63, 64, 65, 200, 3000])
                text = text[: m.start()] + "[" * depth + "]" * depth + text[m.end() :]
        elif op == 6:  # indentation shifted
            lines[i] = ("  " + lines[i]) if rng.random() < 0.5 else lines[i][2:]
            text = "".join(lines)
        elif op == 7:  # cut short
            text = text[: rng.randrange(len(text) + 1)]
        elif op == 8:  # odd characters
            chars = rng.choice(["{{", "}}", "\t", "\x00", "\x01", "&a ", "*a ", "<<: ", '"', "'", ": ", "- ", "%"])
            at = rng.randrange(len(text) + 1)
            text = text[:at] + chars + text[at:]
        else:  # a word replaced by another key's word, or a type by another type
            values = list(WORD.finditer(text))
            if values:
                m, other = rng.choice(values), rng.choice(values)
                text = text[: m.start()] + other.group(0) + text[m.end() :]
    return text


LINE_OF_FILE = r"(?::\d+)?: \S"


def check_error(source: str, message: str) -> str | None:
    """check_error says what is wrong with an error's text, or None when every line names
    the file (FILE or FILE:LINE) or the --time-scale flag and nothing of the engine's leaks."""
    for line in message.splitlines() or [""]:
        if not re.match(rf"^(?:{re.escape(source)}{LINE_OF_FILE}|--time-scale: \S)", line):
            return f"a line names neither the file nor a flag: {line[:200]!r}"
        if any(word in line for word in ENGINE_WORDS):
            return f"engine text reached the user: {line[:200]!r}"
    return None


def run_in_process(tmp: Path, seed: int, cases: int) -> dict[str, Any]:
    """run_in_process loads and compiles the hostile inputs and ``cases`` mutations; returns
    the outcomes and every failure (an unexpected exception or a malformed error)."""
    from surge.core.errors import BadInput
    from surge.scenario import loads

    os.mkfifo(tmp / "fifo")
    (tmp / "folder").mkdir()
    with (tmp / "sparse.csv").open("wb") as f:
        f.truncate((16 << 20) + 1)
    rng = random.Random(seed)
    texts = [(p, p.read_text()) for p in SOURCES]
    work: list[tuple[str, str, Path]] = [(name, text, tmp) for name, text in hostile(tmp)]
    for n in range(cases):
        path, text = rng.choice(texts)
        work.append((f"{path.name} #{n}", mutate(rng, text), path.parent))
    outcomes: Counter[str] = Counter()
    failures = []
    for name, text, base in work:
        source = "fuzz.yaml"
        started = time.monotonic()
        try:
            loads(text, source=source, base_dir=base, env={}).compile(
                time_scale=rng.choice([1.0, 0.001, 1e-9, 1000.0, 1e12]), env={}
            )
            outcomes["compiled"] += 1
        except BadInput as e:
            outcomes["refused"] += 1
            why = check_error(source, str(e))
            if why:
                failures.append({"case": name, "why": why, "text": text[:2000]})
        except BaseException as e:  # anything else is a bug: a traceback would reach the user
            outcomes["crashed"] += 1
            failures.append({"case": name, "why": f"{type(e).__name__}: {str(e)[:300]}", "text": text[:2000]})
        if time.monotonic() - started > 10:
            failures.append({"case": name, "why": "took more than 10 s", "text": text[:2000]})
    return {"outcomes": dict(outcomes), "failures": failures, "cases": len(work)}


def limited() -> None:
    """limited caps a child's address space at 1 GB: a case that tried to take more fails
    the test instead of the machine."""
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


def run_child(args: list[str], timeout: float) -> tuple[int, str, str, int]:
    """run_child runs ``python args`` with 1 GB at most; returns its exit code, stdout,
    stderr and peak RSS in bytes."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(
            [sys.executable, *args],
            stdout=out,
            stderr=err,
            stdin=subprocess.DEVNULL,
            preexec_fn=limited,
            cwd=SCRATCH,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        )
        deadline = time.monotonic() + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                raise AssertionError(f"{args[:6]} did not finish within {timeout} s")
            time.sleep(0.02)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return proc.returncode, out.read(), err.read(), usage.ru_maxrss * 1024


def test_loading_and_compiling_hostile_and_mutated_files_never_crashes(tmp_path):
    code, out, err, rss = run_child([__file__, str(tmp_path), str(SEED), str(IN_PROCESS_CASES)], timeout=120)
    assert code == 0, err[-3000:]
    report = json.loads(out)
    assert report["failures"] == [], json.dumps(report["failures"][:5], indent=1)
    assert report["outcomes"].get("refused", 0) > report["cases"] // 2, report["outcomes"]
    assert report["outcomes"].get("compiled", 0) > 0, report["outcomes"]  # the mutations keep some files valid
    assert rss < MAX_RSS_BYTES, f"peak RSS {rss / 2**20:.0f} MB"


FLAG_VALUES = {
    "-c": ["0", "-1", "1", "9223372036854775808", "1000001", "abc"],
    "-n": ["0", "1", "99999999999999999999999", "-5"],
    "-r": ["0", "-1", "nan", "inf", "1e400", "1e12", "5"],
    "-d": ["inf", "nan", "-1s", "0s", "1e309", "99999999h", "10x", "1s"],
    "--timeout": ["0s", "inf", "1e309", "-1", "1ms"],
    "--grace": ["inf", "-1", "nan", "0s"],
    "--threads": ["0", "1025", "99999999999999999999", "1"],
    "--max-in-flight": ["0", "99999999999999999", "5"],
    "--body": ["@/dev/zero", "@/dev/urandom", "@/nonexistent", "@/", "x"],
    "-H": ["no-colon", "Bad Name: v", "Content-Length: 5", "X: \x01"],
    "-m": ["G ET", "", "POST"],
    "--time-scale": ["0", "nan", "1e300"],
}
TARGET_VALUES = {
    "--rate-limit": ["nan", "inf", "-1", "0", "1e400"],
    "--error-rate": ["nan", "2", "-0.5"],
    "--workers": ["99999999999999999999", "0", "-1"],
    "--queue": ["-1", "99999999999999999999"],
    "--seed": ["-1", "18446744073709551616"],
    "--threads": ["0", "99999999999999999999"],
    "--duration": ["inf", "nan", "-1s"],
}
ERROR_LINE = re.compile(
    r"^surge: error: (?:(?:-{1,2}[A-Za-z][\w/-]*|URL|[^:]*\.yaml(?::\d+)?): \S"
    r"|target 127\.0\.0\.1:9 is not reachable)"
)


def cli_cases(rng: random.Random, tmp: Path) -> list[list[str]]:
    """cli_cases are argument lists for ``surge``: URL runs with extreme flags, mutated files
    sent to a closed port, and ``surge target`` with extreme flags."""
    cases: list[list[str]] = []
    for _ in range(CLI_CASES // 2):
        flags = rng.sample(sorted(FLAG_VALUES), rng.randint(1, 3))
        cases.append(["run", "http://127.0.0.1:9/", *[a for f in flags for a in (f, rng.choice(FLAG_VALUES[f]))]])
    for csv in {p for source in SOURCES for p in source.parent.glob("*.csv")}:
        (tmp / csv.name).write_bytes(csv.read_bytes())  # the files' CSV data, beside them
    texts = [(p, p.read_text()) for p in SOURCES]
    for n in range(CLI_CASES // 3):
        source, text = rng.choice(texts)
        path = tmp / f"fuzz-{n}-{source.name}"
        path.write_text(mutate(rng, text))
        cases.append(["run", str(path), "--target", "http://127.0.0.1:9", "--time-scale", "0.001"])
    for _ in range(CLI_CASES - len(cases)):
        flag = rng.choice(sorted(TARGET_VALUES))
        cases.append(["target", "--bind", "127.0.0.1:0", "--duration", "1s", flag, rng.choice(TARGET_VALUES[flag])])
    return cases


def test_the_cli_answers_hostile_flags_and_files_in_one_line_each(tmp_path):
    rng = random.Random(SEED)
    cases = cli_cases(rng, tmp_path)
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("target: http://127.0.0.1:9/\n" + alias_bomb(9))
    cases.append(["run", str(bomb)])
    for args in cases:
        code, _out, err, rss = run_child(["-m", "surge", *args], timeout=60)
        assert code in (0, 2, 3), (args, code, err[-2000:])
        assert rss < MAX_RSS_BYTES, (args, f"peak RSS {rss / 2**20:.0f} MB")
        if code == 0:  # only surge target serving its second
            assert args[0] == "target", (args, err)
            continue
        lines = err.strip().splitlines()
        if code == 3:  # an unreachable target keeps its record and says where, before the error
            lines = [line for line in lines if not line.startswith("results: ")]
        assert lines, (args, code)
        for line in lines:
            assert ERROR_LINE.match(line), (args, line)
            assert not any(word in line for word in ENGINE_WORDS), (args, line)


if __name__ == "__main__":  # the in-process half, in a child whose memory the test measures
    print(json.dumps(run_in_process(Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))))
