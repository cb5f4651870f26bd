"""``--junit FILE``: a run's thresholds and checks as JUnit XML, the verdict format CI systems
read. One testsuite per run; one testcase per threshold (named ``expr [scope]``) and per check
(named as the check), a ``failure`` carrying the observed value; a run that could not start
adds an ``error`` testcase. Secrets are masked (the names and messages pass through
``surge.core.redact``)."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from surge.core.redact import redact_text
from surge.plan.thresholds import Verdict

THRESHOLDS_CLASS = "surge.thresholds"
"""THRESHOLDS_CLASS is the classname of the threshold testcases."""

CHECKS_CLASS = "surge.checks"
"""CHECKS_CLASS prefixes the classname of the check testcases (``surge.checks.SCENARIO.TAG``)."""


def threshold_case(verdict: Verdict) -> ET.Element:
    """threshold_case is one threshold's testcase; failed (or no data that fails) carries the
    observed value: ``observed 312.40ms: fail``."""
    t = verdict.threshold
    case = ET.Element("testcase", classname=THRESHOLDS_CLASS, name=redact_text(f"{t.expr} [{t.scope()}]"))
    if not verdict.passed:
        status = "no data" if verdict.status == "no-data" else verdict.status
        note = f" ({verdict.note})" if verdict.note else ""
        failure = ET.SubElement(
            case,
            "failure",
            type="threshold",
            message=redact_text(f"observed {verdict.observed_text()}: {status}{note}"),
        )
        failure.text = redact_text(verdict.line())
    return case


def check_case(check: dict[str, Any]) -> ET.Element:
    """check_case is one check's testcase (``name``, ``scenario``, ``tag``, ``passes``,
    ``fails``); failed when any response failed it, with the counts."""
    total = check["passes"] + check["fails"]
    case = ET.Element(
        "testcase",
        classname=redact_text(f"{CHECKS_CLASS}.{check['scenario']}.{check['tag']}"),
        name=redact_text(check["name"]),
    )
    if check["fails"]:
        failure = ET.SubElement(
            case,
            "failure",
            type="check",
            message=f"{check['fails']:,} of {total:,} failed ({check['passes']:,} passed)",
        )
        failure.text = redact_text(
            f"{check['name']} [scenario '{check['scenario']}', tag '{check['tag']}']: "
            f"{check['fails']:,} failed, {check['passes']:,} passed"
        )
    return case


def all_checks(document: dict[str, Any]) -> list[dict[str, Any]]:
    """all_checks are a result document's checks: setup's, the measured run's, teardown's."""
    phases = [document.get("setup") or {}, document, document.get("teardown") or {}]
    return [check for phase in phases for check in phase.get("checks", [])]


def junit_xml(name: str, document: dict[str, Any], verdicts: Iterable[Verdict], *, error: str | None = None) -> str:
    """junit_xml is the JUnit XML of one run called ``name``: its result ``document`` (checks,
    duration, stop reason) and threshold ``verdicts``; ``error`` (why the run could not start)
    adds an ``error`` testcase."""
    cases = [threshold_case(v) for v in verdicts] + [check_case(c) for c in all_checks(document)]
    if error is not None:
        case = ET.Element("testcase", classname="surge.run", name="run")
        ET.SubElement(case, "error", type="run", message=redact_text(error))
        cases.append(case)
    failures = sum(1 for c in cases if c.find("failure") is not None)
    errors = sum(1 for c in cases if c.find("error") is not None)
    counts = {
        "tests": str(len(cases)),
        "failures": str(failures),
        "errors": str(errors),
        "skipped": "0",
        "time": f"{float(document.get('duration_s') or 0.0):.3f}",
    }
    root = ET.Element("testsuites", {"name": "surge", **counts})
    suite = ET.SubElement(root, "testsuite", {"name": redact_text(name), **counts})
    properties = ET.SubElement(suite, "properties")
    for key in ("url", "stop_reason", "stop_signal", "interrupted_in"):
        if document.get(key) is not None:
            ET.SubElement(properties, "property", name=key, value=redact_text(str(document[key])))
    suite.extend(cases)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(
    path: Path, name: str, document: dict[str, Any], verdicts: Iterable[Verdict], *, error: str | None = None
) -> None:
    """write_junit writes ``junit_xml`` to ``path`` (``write_in_place``); OSError is the
    caller's to report."""
    write_in_place(path, junit_xml(name, document, verdicts, error=error))


def write_in_place(path: Path, text: str) -> None:
    """write_in_place writes ``text`` (UTF-8) where ``path`` says, replacing only what is a regular
    file: a symlink is followed (its target is written, the link stays); a missing file or a
    regular file is written in one step (a temporary file beside it, then os.replace: a reader
    never sees half of it; a replaced file keeps its permissions); a FIFO or a device
    (``/dev/stdout``) is written into, never replaced. Anything else (a socket) is an OSError."""
    data = text.encode("utf-8")
    try:
        info = Path(path).stat()  # through symlinks: /dev/stdout is whatever stdout is
    except FileNotFoundError:
        info = None
    if info is not None and (stat.S_ISFIFO(info.st_mode) or stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode)):
        with Path(path).open("wb") as stream:
            stream.write(data)
        return
    target = Path(os.path.realpath(path))
    if info is not None and not stat.S_ISREG(info.st_mode):
        raise OSError(errno.EINVAL, "not a regular file, a FIFO or a device")
    fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as stream:
            stream.write(data)
        umask = os.umask(0)
        os.umask(umask)
        Path(temporary).chmod(stat.S_IMODE(info.st_mode) if info is not None else 0o666 & ~umask)
        Path(temporary).replace(target)
    except BaseException:
        with contextlib.suppress(OSError):
            Path(temporary).unlink()
        raise
