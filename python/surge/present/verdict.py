"""The verdict that opens every report (docs/reports.md, "Verdict"): for a run, its thresholds
with pass/fail and the observed values, the exit code and what it means, and the headline
figures; for an experiment, its answer (a sweep's peak and zones, a capacity search's rate,
confirmed or not, and its best passing rate, a compare's verdicts). Built from the record alone
as words and numbers (surge.present.numbers), rendered by report.md and report.html alike."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from surge.present import numbers as fmt
from surge.record.figures import FIGURE_TITLES

SIGNAL_CODES = {"SIGINT": 130, "SIGTERM": 143, "SIGHUP": 129}
"""SIGNAL_CODES are the exit codes of the stop signals surge handles (128 + the signal's number)."""

EXIT_MEANINGS = {
    0: "the run completed and every threshold passed (or none was set)",
    3: "the run measured nothing: the target was never reached, or nothing was sent",
    99: "a threshold failed (or stopped the run)",
}
"""EXIT_MEANINGS say what each exit code of a run means (README, "Exit codes")."""

CAPACITY_STOPS = {
    "found": "the search narrowed the capacity down to its precision",
    "max_rate": "the search reached its highest rate (--max-rate) with every step passing",
    "max_steps": "the search used up its step budget (--max-steps)",
    "nothing_passed": "no rate passed the SLO",
    "unconfirmed": "no rate was confirmed",
    "generator_limit": "the generator could not keep the schedule: the target's limit was not reached",
    "client_limit": "a client-side cap (--max-in-flight, connections) limited the steps, not the target",
    "interrupted": "a stop signal ended the search",
}
"""CAPACITY_STOPS say in words why a capacity search stopped (``analysis.stop_reason``)."""


@dataclass
class Verdict:
    """Verdict: the report's first block. ``state`` is ``pass``, ``fail`` or ``info`` (nothing
    to pass or fail), ``headline`` one sentence saying so, ``checks`` the thresholds or SLO
    conditions (expression, scope, ``pass``/``fail``/other status, observed value), ``rows`` the
    answer's figures (label, value), every value already written in words or by the number
    formatter."""

    state: str
    headline: str
    checks: list[tuple[str, str, str, str]] = field(default_factory=list)
    rows: list[tuple[str, str]] = field(default_factory=list)


def _get(document: Any, *path: str) -> Any:
    for key in path:
        document = document.get(key) if isinstance(document, Mapping) else None
    return document


def threshold_scope(threshold: Mapping[str, Any]) -> str:
    """threshold_scope names what a threshold looks at: ``all``, ``scenario 'x'``, ``tag 'y'`` or both."""
    parts = [f"{key} '{threshold[key]}'" for key in ("scenario", "tag") if threshold.get(key)]
    return ", ".join(parts) or "all"


def run_exit_code(summary: Mapping[str, Any]) -> tuple[int | None, str]:
    """run_exit_code is the exit code surge gave the run, read back from its record, and what it
    means: 128 + the stop signal, 3 when nothing was measured, 99 when a threshold failed, else 0;
    None when the record holds no result (the process was killed)."""
    tool = _get(summary, "meta", "tool")
    if tool not in (None, "surge"):
        return None, f"none: the run was imported from {tool} (surge did not run it)"
    signal = summary.get("stop_signal")
    if signal:
        return SIGNAL_CODES.get(str(signal), 130), f"the run was stopped by {signal}: its figures are partial"
    requests = summary.get("requests")
    if not isinstance(requests, Mapping):
        return None, "no exit code: the record holds no result (the process ended before writing it)"
    if summary.get("stop_reason") == "unreachable" or (
        requests.get("sent") == 0 and not requests.get("connections_opened")
    ):
        return 3, EXIT_MEANINGS[3]
    thresholds = summary.get("thresholds") or []
    if summary.get("aborted_by_threshold") or any(not t.get("passed") for t in thresholds):
        return 99, EXIT_MEANINGS[99]
    return 0, EXIT_MEANINGS[0]


def thresholds_verdict(thresholds: Sequence[Mapping[str, Any]]) -> str:
    """thresholds_verdict sums a run's thresholds up: ``2 of 3 passed (failed: p(99) < 5ms)``."""
    if not thresholds:
        return "none set"
    failed = [str(t.get("expr") or fmt.MISSING) for t in thresholds if not t.get("passed")]
    text = f"{len(thresholds) - len(failed)} of {len(thresholds)} passed"
    return text + (f" (failed: {'; '.join(failed)})" if failed else "")


def _threshold_checks(thresholds: Sequence[Mapping[str, Any]]) -> list[tuple[str, str, str, str]]:
    return [
        (
            str(t.get("expr") or fmt.MISSING),
            threshold_scope(t),
            str(t.get("status") or ("pass" if t.get("passed") else "fail")),
            str(t.get("observed_text") or fmt.MISSING),
        )
        for t in thresholds
    ]


def run_verdict(summary: Mapping[str, Any]) -> Verdict:
    """run_verdict is a run's verdict: its thresholds, its exit code and the headline figures."""
    thresholds = summary.get("thresholds") or []
    failed = [t for t in thresholds if not t.get("passed")]
    code, meaning = run_exit_code(summary)
    exit_text = meaning if code is None else f"{code}: {meaning}"
    if code is None and isinstance(summary.get("requests"), Mapping):
        state, headline = (
            "info",
            f"Imported from {_get(summary, 'meta', 'tool')}: the figures are the tool's; no threshold was judged.",
        )
    elif code is None:
        state, headline = "info", "No result: the record holds none (the process ended before writing it)."
    elif failed:
        state = "fail"
        headline = (
            f"FAILED: {len(failed)} of {len(thresholds)} thresholds failed "
            f"({'; '.join(str(t.get('expr')) for t in failed)}); exit code {code}."
        )
    elif code == 3:
        state, headline = "fail", "FAILED: the run measured nothing (exit code 3)."
    elif code != 0:
        state, headline = "fail", f"STOPPED: {meaning} (exit code {code})."
    elif thresholds:
        state, headline = "pass", f"PASSED: all {len(thresholds)} thresholds passed; exit code 0."
    else:
        state, headline = "info", "No thresholds were set: the run completed (exit code 0)."
    latency = _get(summary, "latency", "all")
    timed = latency if isinstance(latency, Mapping) and latency.get("count") != 0 else None
    rows = [
        ("exit code", exit_text),
        ("responses/s", fmt.rate(_get(summary, "throughput", "responses_per_s"))),
        ("goodput (successes/s)", fmt.rate(_get(summary, "throughput", "successes_per_s"))),
        ("success rate", fmt.percent(_get(summary, "requests", "success_rate"))),
        ("failure rate", fmt.percent(_get(summary, "requests", "failure_rate"))),
        ("p50 latency (ms)", fmt.ms(_get(timed, "p50_ms"))),
        ("p95 latency (ms)", fmt.ms(_get(timed, "p95_ms"))),
        ("p99 latency (ms)", fmt.ms(_get(timed, "p99_ms"))),
        ("requests sent", fmt.count(_get(summary, "requests", "sent"))),
        ("thresholds", thresholds_verdict(thresholds)),
        ("load window (s)", fmt.seconds(summary.get("duration_s"))),
    ]
    drain = summary.get("drain")
    if isinstance(drain, Mapping):
        rows.append(
            (
                "drain after the load",
                f"{fmt.seconds(drain.get('seconds'))} s: {fmt.count(drain.get('responses'))} "
                f"responses ({fmt.count(drain.get('succeeded'))} succeeded, {fmt.count(drain.get('failed'))} "
                f"failed), {fmt.count(drain.get('interrupted'))} interrupted; not in the rates",
            )
        )
    return Verdict(state, headline, _threshold_checks(thresholds), rows)


def _load_number(model: Any, load: Any) -> str:
    if not fmt.is_number(load):
        return fmt.MISSING
    if model == "closed":
        return fmt.count(load) if load == int(load) else fmt.plain(load)
    return fmt.rate(load)


def _load_unit(model: Any) -> str:
    return " VUs" if model == "closed" else "/s"


def load_text(model: Any, load: Any) -> str:
    """load_text writes a sweep level: ``1,000 VUs`` (closed model) or ``1,000.0/s`` (open)."""
    return _load_number(model, load) + (_load_unit(model) if fmt.is_number(load) else "")


def zone_spans(levels: Sequence[Mapping[str, Any]], model: Any) -> str:
    """zone_spans writes a sweep's zones in load order, consecutive levels of a zone joined:
    ``optimal 100–1,000 VUs; stress 2,000 VUs; broken 5,000 VUs``."""
    spans: list[tuple[str, list[Any]]] = []
    for level in levels:
        zone = str(level.get("zone") or "unknown")
        if spans and spans[-1][0] == zone:
            spans[-1][1].append(level.get("load"))
        else:
            spans.append((zone, [level.get("load")]))
    parts = []
    for zone, loads in spans:
        first, last = _load_number(model, loads[0]), _load_number(model, loads[-1])
        parts.append(f"{zone} {first if len(loads) == 1 else first + '–' + last}{_load_unit(model)}")
    return "; ".join(parts) or fmt.MISSING


def _sweep(analysis: Mapping[str, Any]) -> Verdict:
    model = analysis.get("model")
    peak, knee, usl = analysis.get("peak") or {}, analysis.get("knee") or {}, analysis.get("usl") or {}
    levels = analysis.get("levels") or []
    if peak.get("load") is None:
        return Verdict("info", "No peak: no level was measured.", rows=[("levels measured", fmt.count(len(levels)))])
    headline = f"Peak: {fmt.rate(peak.get('throughput'))} responses/s at {load_text(model, peak['load'])}."
    rows = [
        ("peak", f"{fmt.rate(peak.get('throughput'))}/s at {load_text(model, peak['load'])}"),
        (
            "knee",
            f"{fmt.rate(knee.get('throughput'))}/s at {load_text(model, knee['load'])}"
            if knee.get("load") is not None
            else f"none: {knee.get('reason') or 'not found'}",
        ),
        ("zones", zone_spans(levels, model)),
        ("levels measured", f"{fmt.count(len(levels))} of {fmt.count(len(analysis.get('planned') or levels))}"),
    ]
    if "sigma" in usl:
        rows.append(
            ("USL peak (N*)", f"{fmt.general(usl.get('peak_n'))} VUs, {fmt.rate(usl.get('peak_throughput'))}/s")
        )
    if analysis.get("stopped_early"):
        rows.append(("stopped early", str(analysis["stopped_early"])))
    return Verdict("info", headline, rows=rows)


def best_passing(analysis: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """best_passing is the capacity search's highest step that passed (confirmed or not), None
    when none passed."""
    passed = [s for s in analysis.get("steps") or [] if s.get("passed") and fmt.is_number(s.get("rate"))]
    return max(passed, key=lambda s: s["rate"]) if passed else None


def _capacity(analysis: Mapping[str, Any]) -> Verdict:
    rate, confirmed = analysis.get("rate"), bool(analysis.get("confirmed"))
    best = best_passing(analysis)
    stop = str(analysis.get("stop_reason") or "")
    if fmt.is_number(rate) and stop in ("max_rate", "generator_limit", "client_limit"):
        state = "info" if stop != "max_rate" else "pass"
        headline = (
            f"Capacity: at least {fmt.rate(rate)}/s, "
            + ("confirmed" if confirmed else "not confirmed")
            + f"; {CAPACITY_STOPS[stop]}."
        )
    elif fmt.is_number(rate):
        state = "pass" if confirmed else "fail"
        headline = f"Capacity: {fmt.rate(rate)}/s, " + ("confirmed." if confirmed else "not confirmed.")
    else:
        state, headline = "fail", "No capacity found: " + CAPACITY_STOPS.get(stop, "no rate passed") + "."
    rows = [
        ("capacity", f"{fmt.rate(rate)}/s" if fmt.is_number(rate) else "none found"),
        ("confirmed", "yes" if confirmed else "no"),
        (
            "best passing rate",
            f"{fmt.rate(best['rate'])}/s (step {fmt.count(best.get('number'))}, achieved "
            f"{fmt.rate(best.get('achieved_per_s'))}/s, p99 {fmt.ms(best.get('p99_ms'))} ms)"
            if best
            else "none: no step passed",
        ),
        (
            "lowest failing rate",
            f"{fmt.rate(analysis.get('high'))}/s" if fmt.is_number(analysis.get("high")) else "none: no step failed",
        ),
        ("why the search stopped", CAPACITY_STOPS.get(stop, stop or fmt.MISSING)),
    ]
    if analysis.get("limit"):
        rows.append(("what limited it", str(analysis["limit"])))
    judged = next((s for s in analysis.get("steps") or [] if s.get("passed") and s.get("rate") == rate), best)
    if judged and judged.get("slo"):
        checks = [
            (
                str(c.get("expr") or fmt.MISSING),
                f"{c.get('scope') or 'all'}, step {fmt.count(judged.get('number'))} "
                f"at {fmt.rate(judged.get('rate'))}/s",
                "pass" if c.get("status") == "pass" else str(c.get("status") or "fail"),
                str(c.get("observed_text") or fmt.MISSING),
            )
            for c in judged["slo"]
        ]
    else:
        checks = [
            (str(c.get("expr") or fmt.MISSING), str(c.get("scope") or "all"), "no step passed", fmt.MISSING)
            for c in _get(analysis, "slo", "conditions") or []
        ]
    return Verdict(state, headline, checks, rows)


def _compare(analysis: Mapping[str, Any]) -> Verdict:
    rows = []
    worse = False
    for pair in analysis.get("comparisons") or []:
        said = []
        for c in pair.get("figures") or []:
            name = str(c.get("figure"))
            verdict = str(c.get("verdict") or fmt.MISSING)
            worse = worse or verdict == "worse"
            note = f"; {c['note']}" if c.get("note") else ""
            said.append(f"{FIGURE_TITLES.get(name, name)} {verdict} (ratio {fmt.general(c.get('ratio'))}{note})")
        rows.append((f"{pair.get('variant')} against {pair.get('reference')}", "; ".join(said) or fmt.MISSING))
    headline = f"{len(rows)} comparison(s) against the reference {analysis.get('reference')}" + (
        ": a variant is worse on some figure." if worse else "."
    )
    return Verdict("fail" if worse else "info", headline, rows=rows)


def _repeat(analysis: Mapping[str, Any]) -> Verdict:
    statistics = analysis.get("statistics") or {}
    rows = []
    for name in ("responses_per_s", "p95_ms", "p99_ms", "failure_rate"):
        s = statistics.get(name)
        if isinstance(s, Mapping):
            sd = s.get("sd")
            rows.append(
                (
                    f"{FIGURE_TITLES.get(name, name)} mean (CI)",
                    f"{fmt.figure_with_spread(s.get('mean'), name, sd)} "
                    f"({fmt.figure_with_spread(s.get('ci_low'), name, sd)} – "
                    f"{fmt.figure_with_spread(s.get('ci_high'), name, sd)})",
                )
            )
    verdicts = analysis.get("verdicts") or {}
    failed = int(verdicts.get("failed") or 0)
    runs = int(verdicts.get("runs") or 0)
    if failed:
        state, headline = "fail", f"FAILED: {failed} of {runs} runs failed a threshold."
    elif verdicts.get("passed"):
        state, headline = "pass", f"PASSED: every run's thresholds passed ({fmt.count(verdicts.get('passed'))} runs)."
    else:
        state, headline = "info", f"{fmt.count(runs or len(rows))} runs without thresholds: the figures over the runs."
    return Verdict(state, headline, rows=rows)


KIND_VERDICTS = {"sweep": _sweep, "capacity": _capacity, "compare": _compare, "repeat": _repeat, "stats": _repeat}
"""KIND_VERDICTS give each experiment kind's answer from its analysis."""


def experiment_exit_code(document: Mapping[str, Any]) -> tuple[int, str]:
    """experiment_exit_code is the exit code surge gave the experiment, read back from its record,
    and what it means (docs/experiments.md): 128 + the stop signal, 3 when a run measured nothing,
    for a capacity search 0 with a confirmed rate (or --max-rate) else 99, for the others 99 when
    a run failed a threshold, else 0."""
    if document.get("stop_signal"):
        signal = str(document["stop_signal"])
        return SIGNAL_CODES.get(signal, 130), f"the experiment was stopped by {signal}: its analysis is partial"
    runs = document.get("runs") or []
    if any(e.get("exit_code") == 3 for e in runs):
        return 3, "a run measured nothing (the target was not reached)"
    analysis = document.get("analysis") or {}
    if document.get("kind") == "capacity":
        if analysis.get("confirmed") or analysis.get("stop_reason") == "max_rate":
            return 0, "a capacity was found (confirmed, or every rate up to --max-rate passed)"
        return 99, "no rate passed the SLO, none was confirmed, or the step budget ran out"
    failed = sum(1 for e in runs if e.get("verdict") == "failed")
    if failed:
        return 99, f"{failed} of {len(runs)} runs failed a threshold"
    return 0, "every run completed and no threshold failed"


def experiment_verdict(document: Mapping[str, Any]) -> Verdict:
    """experiment_verdict is an experiment's verdict: its kind's answer and its exit code."""
    analysis = document.get("analysis")
    kind = str(document.get("kind"))
    code, meaning = experiment_exit_code(document)
    if isinstance(analysis, Mapping) and kind in KIND_VERDICTS:
        verdict = KIND_VERDICTS[kind](analysis)
    else:
        verdict = Verdict("info", "No answer: the experiment ended before its analysis.")
    if not document.get("complete"):
        verdict.headline += " The experiment is incomplete: its analysis covers only the runs it has."
    verdict.rows.insert(0, ("exit code", f"{code}: {meaning}"))
    return verdict


def parameter_text(value: Any) -> str | None:
    """parameter_text writes an experiment parameter in words: a number by the number formatter,
    a flag as yes/no, a list comma-separated, a mapping as ``key value`` pairs; None (not set)
    when the value is empty, so that a page never shows a Python ``None``, ``True`` or repr."""
    if value is None or value == [] or value == {} or value == "":
        return None
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, Mapping):
        parts = [f"{key} {text}" for key, text in ((k, parameter_text(v)) for k, v in value.items()) if text]
        return "; ".join(parts) or None
    if isinstance(value, (list, tuple)):
        texts = [t for t in (parameter_text(v) for v in value) if t]
        return ", ".join(texts) or None
    return fmt.plain(value)


def parameter_rows(parameters: Mapping[str, Any], skip: Sequence[str] = ()) -> list[tuple[str, str]]:
    """parameter_rows are an experiment's parameters as (name, words), those not set left out."""
    rows = []
    for key, value in parameters.items():
        text = parameter_text(value)
        if key not in skip and text is not None:
            rows.append((key.replace("_", " "), text))
    return rows
