"""Limitations that apply to a run or an experiment (docs/reports.md, "Limitations"): what a
reader must know before trusting the figures, each found from the record alone."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

from surge.present.numbers import percent

MIN_RUNS_FOR_CI = 5
"""MIN_RUNS_FOR_CI: with fewer runs than this, a confidence interval over runs is too wide to
tell much (Student's t at n = 4 is 3.18)."""

MAX_CI_HALF_WIDTH = 0.10
"""MAX_CI_HALF_WIDTH: a CI wider than ±10 % of its mean does not pin the figure down."""


def is_loopback(host: str) -> bool:
    """is_loopback tells whether ``host`` (a name or an address) is this machine: ``localhost``
    or a loopback address (127.0.0.0/8, ::1)."""
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def co_located(summary: Mapping[str, Any]) -> str | None:
    """co_located is the target's host when the run's target was on the generator's own machine
    (its URL or the address it resolved to is loopback), else None."""
    url = str((summary.get("meta") or {}).get("target") or summary.get("url") or "")
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:  # a record masked before issue 20: http://u:[redacted]@host, an invalid IPv6 literal
        host = ""
    addresses = [str(a) for a in summary.get("addresses") or []]
    if is_loopback(host) or (addresses and is_loopback(addresses[0].rsplit(":", 1)[0])):
        return host or addresses[0]
    return None


CO_LOCATED = (
    "the generator ran on the same machine as the target ({host}): they shared its CPU, memory "
    "and network stack, so the figures are those of the pair, not of the target alone"
)
"""CO_LOCATED says what a co-located generator means for the figures."""


def saturated(findings: Iterable[Mapping[str, Any]]) -> bool:
    """saturated tells whether a run's findings include ``generator_saturated``."""
    return any(f.get("kind") == "generator_saturated" for f in findings)


def incomplete_reason(summary: Mapping[str, Any]) -> str | None:
    """incomplete_reason says why a run's record is incomplete (None when it is complete): a
    stop signal, an unreachable target, or no result at all (the process was killed)."""
    meta = summary.get("meta") or {}
    if meta.get("complete"):
        return None
    if "requests" not in summary:
        return "the record holds no result: the process ended before writing it (killed, or still running)"
    if summary.get("stop_signal"):
        return f"the run was stopped early by {summary['stop_signal']}: the figures cover only the part that ran"
    if summary.get("stop_reason") == "unreachable":
        return "the target was not reachable at the start: nothing was sent"
    if summary.get("stop_reason") == "generator_lost":
        return (
            "a generator of the distributed run was lost and the run stopped there: the figures cover the "
            "part received (finding generator_lost)"
        )
    return f"the run ended with stop reason '{summary.get('stop_reason')}' or a failed write to its results directory"


RUN_FIGURES = (
    ("throughput", "responses_per_s"),
    ("throughput", "successes_per_s"),
    ("latency", "all", "p50_ms"),
    ("latency", "all", "p95_ms"),
    ("latency", "all", "p99_ms"),
    ("requests", "status_codes"),
    ("requests", "failure_classes"),
    ("histograms",),
    ("intervals",),
)
"""RUN_FIGURES are the parts of a record an import may lack, which its report then cannot show."""


def missing_figures(summary: Mapping[str, Any]) -> list[str]:
    """missing_figures names the RUN_FIGURES an imported record does not hold (null or absent)."""
    missing = []
    for path in RUN_FIGURES:
        value: Any = summary
        for key in path:
            value = value.get(key) if isinstance(value, Mapping) else None
        if value is None:
            missing.append(".".join(path))
    return missing


def run_limitations(summary: Mapping[str, Any]) -> list[str]:
    """run_limitations are the limitations of one run's figures, in sentences."""
    found = []
    host = co_located(summary)
    if host:
        found.append(CO_LOCATED.format(host=host))
    if saturated(summary.get("findings") or []):
        found.append(
            "the generator itself was saturated (finding generator_saturated): the target may be able "
            "to do more than measured"
        )
    if any(f.get("kind") == "machine_saturated" for f in summary.get("findings") or []):
        found.append(
            "the machine's cores were all busy (finding machine_saturated): the generator, the target "
            "and other processes shared them, so the figures measure the machine, not the target alone"
        )
    reason = incomplete_reason(summary)
    if reason:
        found.append(f"incomplete record: {reason}")
    meta = summary.get("meta") or {}
    if meta.get("tool") not in (None, "surge"):
        missing = missing_figures(summary)
        found.append(
            f"imported from {meta.get('tool')}: the machine that ran it is unknown"
            + (f"; the import holds no {', '.join(missing)} (shown as -, never estimated)" if missing else "")
        )
    return found


def wide_cis(statistics: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """wide_cis lists the figures whose CI is wider than ±MAX_CI_HALF_WIDTH of their mean:
    ``p99_ms (±34.567%)``."""
    wide = []
    for name, s in statistics.items():
        if not s:
            continue  # no run has the figure
        mean, low, high = s.get("mean"), s.get("ci_low"), s.get("ci_high")
        if mean and low is not None and high is not None and (high - low) / 2 > MAX_CI_HALF_WIDTH * abs(mean):
            wide.append(f"{name} (±{percent((high - low) / 2 / abs(mean))})")
    return wide


def repetition_limitations(groups: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> list[str]:
    """repetition_limitations say where a group's runs (a repeat's, each compare variant's) are
    too few for the CI asked (n < MIN_RUNS_FOR_CI) or leave it wider than ±10 % of the mean.
    ``groups`` maps a group's name ("" for a repeat's one) to its statistics by figure."""
    found = []
    for group, statistics in groups.items():
        label = f"variant {group}: " if group else ""
        counts = [int(s["n"]) for s in statistics.values() if s and s.get("n")]  # n 0: a figure no run has
        if counts and min(counts) < MIN_RUNS_FOR_CI:
            found.append(
                f"{label}only {min(counts)} run(s) behind a figure: fewer than {MIN_RUNS_FOR_CI} "
                "repetitions give confidence intervals too wide to rely on (run more with -n)"
            )
        wide = wide_cis(statistics)
        if wide:
            found.append(f"{label}confidence intervals wider than ±10% of the mean: {', '.join(wide)}")
    return found


def experiment_run_limitations(runs: list[Mapping[str, Any]], summaries: list[Mapping[str, Any]]) -> list[str]:
    """experiment_run_limitations are what an experiment's runs share: a co-located generator
    (any run), a saturated generator (which runs, by label), incomplete runs (which)."""
    found = []
    hosts = sorted({h for h in (co_located(s) for s in summaries) if h})
    if hosts:
        found.append(CO_LOCATED.format(host=", ".join(hosts)))
    labels = [str(e.get("label") or e.get("position")) for e in runs]
    hot = [label for label, e in zip(labels, runs, strict=True) if saturated(e.get("findings") or [])]
    if hot:
        found.append(f"the generator was saturated in run(s) {', '.join(hot)}: their figures may understate the target")
    cut = [label for label, e in zip(labels, runs, strict=True) if not e.get("complete")]
    if cut:
        found.append(f"incomplete run(s) {', '.join(cut)}: their records cover only the part that ran")
    return found


def experiment_limitations(document: Mapping[str, Any], runs: Iterable[Any]) -> list[str]:
    """experiment_limitations are every limitation of an experiment (experiment.json's
    ``document`` and its runs' records, StoredRun): its runs' (experiment_run_limitations), too
    few repetitions or wide CIs (a repeat's statistics, each compare variant's estimates), and an
    experiment stopped before its end."""
    analysis = document.get("analysis") or {}
    kind = document.get("kind")
    groups: Mapping[str, Mapping[str, Mapping[str, Any]]] = {}
    if kind in ("repeat", "stats"):
        groups = {"": analysis.get("statistics") or {}}
    elif kind == "compare":
        groups = {str(v): e for v, e in (analysis.get("estimates") or {}).items()}
    found = experiment_run_limitations(document.get("runs") or [], [r.summary for r in runs])
    found += repetition_limitations(groups)
    if not document.get("complete"):
        how = f"stopped by {document['stop_signal']}" if document.get("stop_signal") else "ended early"
        found.append(f"the experiment is incomplete ({how}): its analysis covers only the runs it has")
    return found
