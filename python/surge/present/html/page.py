"""page: report.html's frame. One self-contained document: the vendored uPlot script and style,
report.js and report.css, and the charts' data in a ``<script type="application/json">`` block,
all inline; a Content-Security-Policy that forbids every network request (docs/report-html.md)."""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Any

from surge.present.html.tables import bullet_list, esc, findings_list, key_values, section, verdict_block
from surge.present.verdict import Verdict

CSP = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; "
    "connect-src 'none'; font-src 'none'; form-action 'none'; base-uri 'none'"
)
"""CSP is report.html's Content-Security-Policy: inline scripts and styles only, no request of
any kind (a chart library that tried one would be refused and say so on the console)."""


@cache
def asset(name: str) -> str:
    """asset is the text of a packaged file under surge/present/html (``vendor/uPlot.iife.min.js``,
    ``assets/report.js``...), read through importlib.resources so it works installed."""
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def data_block(data: dict[str, Any]) -> str:
    """data_block is ``data`` as JSON fit for a ``<script>`` element: ``<``, ``>`` and ``&``
    escaped, so no string in it can end the element."""
    text = json.dumps(data, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def chart_div(chart_id: str, title: str) -> str:
    """chart_div is a chart's heading and the container report.js draws it in."""
    return f'<h3>{html.escape(title)}</h3>\n<div class="chart" id="chart-{html.escape(chart_id)}"></div>\n'


def page(title: str, body: str, charts: list[dict[str, Any]]) -> str:
    """page is the whole report.html: ``body`` (HTML already escaped) and ``charts`` (chart specs
    report.js draws, each with an ``id`` matching a chart_div in the body)."""
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{html.escape(title)}</title>",
            f"<style>{asset('vendor/uPlot.min.css')}</style>",
            f"<style>{asset('assets/report.css')}</style>",
            "</head><body>",
            body,
            f'<script type="application/json" id="surge-data">{data_block({"charts": charts})}</script>',
            f"<script>{asset('vendor/uPlot.iife.min.js')}</script>",
            f"<script>{asset('assets/report.js')}</script>",
            "</body></html>",
            "",
        ]
    )


def report_page(
    *,
    title: str,
    heading: Sequence[str],
    sub: str,
    banners: Sequence[str],
    verdict: Verdict,
    sections: str,
    findings: Iterable[Mapping[str, Any]],
    limitations: Iterable[str],
    method: Iterable[tuple[str, Any]],
    charts: list[dict[str, Any]],
) -> str:
    """report_page is a report.html as both pages (a run's, an experiment's) lay it out: the
    heading (``surge report:`` and the ``heading`` words, the ``sub`` line, each of ``banners``:
    HTML already escaped), the verdict, the page's own ``sections`` (HTML), then Findings,
    Limitations and Method (``method``'s labelled values), in the frame ``page`` writes with
    ``title`` and ``charts``."""
    head = [
        f"<h1>surge report: {' '.join(esc(word) for word in heading)}</h1>",
        f'<p class="sub">{esc(sub)}</p>',
        *(f'<p class="banner">{banner}</p>' for banner in banners),
    ]
    body = (
        "\n".join(head)
        + "\n"
        + verdict_block(verdict)
        + sections
        + section("Findings", findings_list(findings))
        + section("Limitations", bullet_list(limitations, "No limitation found in the record."))
        + section("Method", key_values(method))
    )
    return page(title, body, charts)
