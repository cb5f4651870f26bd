"""tables: the HTML pieces report.html's pages share: a table from rows of cells, a key/value
table, findings (every text escaped here, once); numbers are written by surge.present.numbers."""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from surge.core.redact import redact_text
from surge.present import numbers as fmt
from surge.present.verdict import Verdict


class Cell(str):
    """Cell is a table cell's text that is already HTML (a class, a span): not escaped again."""


def esc(value: Any) -> str:
    """esc is ``value`` as HTML text, secrets masked (surge.core.redact), a Cell left as it is."""
    if isinstance(value, Cell):
        return str(value)
    return html.escape(redact_text(str(value)))


def verdict(text: str) -> Cell:
    """verdict colours pass/passed/better green and fail/failed/worse red."""
    style = "pass" if text in ("pass", "passed", "better") else "fail" if text in ("fail", "failed", "worse") else ""
    return Cell(f'<span class="{style}">{esc(text)}</span>')


def table(columns: Sequence[str], rows: Iterable[Sequence[Any]], left: int = 1, caption: str = "") -> str:
    """table is an HTML table: ``columns`` headings, the first ``left`` columns aligned left."""

    def cls(i: int) -> str:
        return ' class="l"' if i < left else ""

    head = "".join(f"<th{cls(i)}>{esc(c)}</th>" for i, c in enumerate(columns))
    body = "".join(
        "<tr>" + "".join(f"<td{cls(i)}>{esc(v)}</td>" for i, v in enumerate(row)) + "</tr>\n" for row in rows
    )
    title = f"<h3>{esc(caption)}</h3>\n" if caption else ""
    return f"{title}<table><thead><tr>{head}</tr></thead><tbody>\n{body}</tbody></table>\n"


def key_values(pairs: Iterable[tuple[str, Any]]) -> str:
    """key_values is a two-column table of labelled values: pairs whose value is None are left
    out, a flag is written yes/no, a number by the number formatter (never a Python repr)."""

    def text(value: Any) -> Any:
        if isinstance(value, bool):
            return "yes" if value else "no"
        return fmt.plain(value) if fmt.is_number(value) else value

    rows = "".join(f"<tr><td>{esc(k)}</td><td>{esc(text(v))}</td></tr>\n" for k, v in pairs if v is not None)
    return f'<table class="kv"><tbody>\n{rows}</tbody></table>\n'


def findings_list(findings: Iterable[Mapping[str, Any]]) -> str:
    """findings_list is the findings (a run's diagnosis: kind, severity, message; an experiment's:
    kind, text, advice) as a list, or a line saying there are none."""
    items = []
    for f in findings:
        severity = f.get("severity")
        tag = f'<b class="{"warn" if severity == "warning" else ""}">{esc(f.get("kind", ""))}</b>'
        text = f.get("message") or f.get("text") or ""
        advice = f.get("advice")
        items.append(
            f"<li>{tag}{' (' + esc(severity) + ')' if severity else ''}: {esc(text)}"
            + (f'<br><span class="note">{esc(advice)}</span>' if advice else "")
            + "</li>"
        )
    return f"<ul>{''.join(items)}</ul>\n" if items else '<p class="note">No findings.</p>\n'


def section(title: str, *parts: str) -> str:
    """section is an ``<h2>`` heading and its parts."""
    return f"<h2>{esc(title)}</h2>\n" + "".join(parts)


def verdict_block(v: Verdict) -> str:
    """verdict_block is the verdict that opens a report: the headline coloured by its state, the
    thresholds or SLO with pass/fail and the observed values, and the answer's figures."""
    checks = (
        table(
            ("threshold", "scope", "verdict", "observed"),
            ([expr, scope, verdict(state), observed] for expr, scope, state, observed in v.checks),
            left=2,
        )
        if v.checks
        else ""
    )
    return (
        f'<section class="verdict verdict-{esc(v.state)}" id="verdict"><h2>Verdict</h2>\n'
        f'<p class="headline">{esc(v.headline)}</p>\n{checks}{key_values(v.rows)}</section>\n'
    )


def bullet_list(items: Iterable[str], empty: str) -> str:
    """bullet_list is ``items`` as a list, or ``empty`` as a note when there are none."""
    lines = "".join(f"<li>{esc(item)}</li>" for item in items)
    return f"<ul>{lines}</ul>\n" if lines else f'<p class="note">{esc(empty)}</p>\n'
