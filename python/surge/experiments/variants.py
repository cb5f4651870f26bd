"""Variants of ``surge compare`` (docs/experiments.md, "surge compare"): how each variant is
named on the command line and what it changes in the test.

New runs: ``--variant NAME=URL`` (another base URL), ``--variant NAME:K=V[,K=V...]`` (``-e``
pairs of its own), ``--variant NAME`` (the test as given), or ``--vus``/``--rates`` lists (one
variant per load level). From the history: ``--group [NAME:]KEY=VALUE[,KEY=VALUE...]`` (the runs
with all these tags) or ``--runs [NAME:]RUN,RUN...`` (the runs named).
"""

from __future__ import annotations

import itertools
import math
import random
import re
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from surge.core.errors import BadInput
from surge.core.redact import MASK, is_secret_name, redact_url
from surge.core.tags import parse_tags
from surge.core.units import parse_rate
from surge.run.spec import ENV_NAME, Overrides, TestSpec

VARIANT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,39}")
"""VARIANT_NAME is what a variant's name may be: letters, digits, ``_ . + -``, up to 40, not
starting with punctuation (it names folders and table rows)."""


@dataclass(frozen=True)
class Variant:
    """Variant: one side of a comparison of new runs: its ``name``, and what it changes in the
    test: a base ``url``, ``env`` pairs (a scenario file's -e), a load ``vus`` or ``rate``
    (Overrides); none of them is the test as given."""

    name: str
    url: str | None = None
    env: tuple[tuple[str, str], ...] = ()
    vus: int | None = None
    rate: float | None = None

    @property
    def load(self) -> float | None:
        """load is the variant's load level (VUs or rate), None when it does not set one."""
        return self.vus if self.vus is not None else self.rate

    def overrides(self) -> Overrides:
        """overrides are the load the variant sets (none when it sets none)."""
        return Overrides(vus=self.vus, rate=self.rate)

    def apply(self, test: TestSpec) -> TestSpec:
        """apply is ``test`` as this variant runs it: a URL test sent to the variant's URL (its
        scheme, host and port, the test's path and query kept when the variant's URL has no
        path), a scenario file with ``--target`` the variant's URL; its -e pairs after the test's."""
        changed = test
        if self.url is not None:
            changed = (
                replace(changed, target_url=self.url)
                if test.is_file
                else replace(changed, target=with_base(test.target, self.url))
            )
        if self.env:
            changed = replace(changed, env_pairs=test.env_pairs + tuple(f"{k}={v}" for k, v in self.env))
        return changed

    def describe(self) -> dict[str, Any]:
        """describe is the variant as the experiment's parameters record it (secrets masked)."""
        return {
            "name": self.name,
            "url": redact_url(self.url) if self.url else None,
            "env": {k: MASK if is_secret_name(k) else v for k, v in self.env},
            "vus": self.vus,
            "rate": self.rate,
        }


def with_base(test_url: str, base: str) -> str:
    """with_base is ``test_url`` sent to ``base``: its scheme, host and port, and the test's
    path and query when ``base`` has no path (or just ``/``); ``base`` as it is otherwise."""
    parts = urlsplit(base)
    if parts.path not in ("", "/") or parts.query:
        return base
    test = urlsplit(test_url)
    return urlunsplit((parts.scheme, parts.netloc, test.path, test.query, test.fragment))


def _name(flag: str, name: str, spec: str) -> str:
    if not VARIANT_NAME.fullmatch(name):
        raise BadInput(
            flag,
            f"'{name}' in '{spec}' is not a name: letters, digits and _ . + - (up to 40), starting "
            "with a letter or digit",
        )
    return name


def parse_variant(spec: str) -> Variant:
    """parse_variant reads one ``--variant``: ``NAME=URL`` (an http(s) URL), ``NAME:K=V[,K=V]``
    (-e pairs; a value holds no comma) or ``NAME``; BadInput names --variant."""
    flag = "--variant"
    cut = min((i for i in (spec.find("="), spec.find(":")) if i >= 0), default=-1)
    if cut < 0:
        return Variant(_name(flag, spec, spec))
    name = _name(flag, spec[:cut], spec)
    rest = spec[cut + 1 :]
    if spec[cut] == "=":
        if not rest.lower().startswith(("http://", "https://")) or not urlsplit(rest).netloc:
            raise BadInput(
                flag,
                f"'{redact_url(rest)}' in variant '{name}' is not an http(s) URL "
                "(write NAME=URL, or NAME:KEY=VALUE,... for -e pairs)",
            )
        return Variant(name, url=rest)
    pairs = []
    for pair in rest.split(","):
        key, sep, value = pair.partition("=")
        if not sep or not ENV_NAME.fullmatch(key):
            raise BadInput(
                flag,
                f"variant '{name}': expected NAME=VALUE pairs separated by commas, got '{key if not sep else pair}'",
            )
        pairs.append((key, value))
    return Variant(name, env=tuple(pairs))


def parse_loads(flag: str, text: str, whole: bool) -> list[float]:
    """parse_loads reads a comma-separated list of two or more increasing load levels (whole
    numbers when ``whole``: VUs; else rates, ``surge.core.units.parse_rate``); BadInput names ``flag``."""
    values: list[float] = []
    for item in text.split(","):
        try:
            value = float(item.strip()) if whole else parse_rate(item)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and value > 0) or (whole and value != int(value)):
            kind = "a whole number above 0" if whole else "a number above 0"
            raise BadInput(flag, f"expected {kind}, got '{item.strip()}' (write e.g. 35,75)")
        values.append(value)
    if len(values) < 2:
        raise BadInput(flag, f"give two load levels or more, e.g. 35,75 (got '{text}')")
    if any(b <= a for a, b in itertools.pairwise(values)):
        raise BadInput(flag, f"the levels must increase, got '{text}'")
    return values


ORDERS = ("balanced", "shuffle")
"""ORDERS are the run orders of a comparison of new runs (``--order``)."""


def run_plan(names: list[str], repeats: int, order: str, seed: int | None = None) -> list[list[str]]:
    """run_plan is the order a comparison makes its runs in, round by round (each round runs
    every variant once): ``balanced`` reverses every other round (A B, B A, A B, B A ...: a
    drift linear in time weighs on every variant alike, and no variant always runs first);
    ``shuffle`` shuffles each round with ``random.Random(seed)``, so the same seed gives the
    same order. ValueError for another order."""
    if order not in ORDERS:
        raise ValueError(f"unknown run order '{order}'")
    rng = random.Random(seed)
    plan = []
    for number in range(repeats):
        one = list(names)
        if order == "shuffle":
            rng.shuffle(one)
        elif number % 2:
            one.reverse()
        plan.append(one)
    return plan


def cross(variants: list[Variant], levels: list[Variant]) -> list[Variant]:
    """cross is variants × loads: every variant at every load level (``levels`` from
    load_variants), named ``VARIANT LEVEL`` (``scaleout vus=35``), variant by variant."""
    return [
        replace(v, name=f"{v.name} {level.name}", vus=level.vus, rate=level.rate) for v in variants for level in levels
    ]


def load_variants(vus: str | None, rates: str | None) -> list[Variant]:
    """load_variants are the variants of ``--vus`` (closed model, ``vus=35``...) or ``--rates``
    (open model, ``rate=100``...): one per level, lightest first."""
    if vus is not None:
        return [Variant(f"vus={v:g}", vus=int(v)) for v in parse_loads("--vus", vus, whole=True)]
    assert rates is not None
    return [Variant(f"rate={r:g}", rate=r) for r in parse_loads("--rates", rates, whole=False)]


@dataclass(frozen=True)
class RunGroup:
    """RunGroup: one side of a comparison of runs already in the history: its ``name`` and
    either the ``tags`` every run must have (``--group``) or the ``refs`` naming its runs (``--runs``)."""

    name: str
    tags: tuple[tuple[str, str], ...] = ()
    refs: tuple[str, ...] = ()

    def describe(self) -> dict[str, Any]:
        """describe is the group as the experiment's parameters record it."""
        return {"name": self.name, "tags": dict(self.tags), "runs": list(self.refs)}


def _split_name(spec: str) -> tuple[str | None, str]:
    head, sep, rest = spec.partition(":")
    return (head, rest) if sep and "=" not in head and "," not in head else (None, spec)


def parse_group(spec: str) -> RunGroup:
    """parse_group reads one ``--group [NAME:]KEY=VALUE[,KEY=VALUE...]`` (default name: the
    tags as written); BadInput names --group."""
    name, rest = _split_name(spec)
    tags = parse_tags(rest.split(","), flag="--group")
    return RunGroup(_name("--group", name, spec) if name is not None else rest, tags=tuple(tags.items()))


def parse_runs(spec: str, position: int) -> RunGroup:
    """parse_runs reads one ``--runs [NAME:]RUN,RUN...`` (default name: A, B, C... by
    ``position``, from 0); BadInput names --runs."""
    name, rest = _split_name(spec)
    refs = tuple(r.strip() for r in rest.split(","))
    if not all(refs):
        raise BadInput("--runs", f"expected RUN,RUN,... (ids, prefixes, results directories), got '{spec}'")
    default = chr(ord("A") + position) if position < 26 else f"G{position + 1}"
    return RunGroup(_name("--runs", name, spec) if name is not None else default, refs=refs)


def check_names(names: list[str], flag: str) -> None:
    """check_names refuses fewer than two variants, or two of one name (BadInput naming ``flag``)."""
    if len(names) < 2:
        raise BadInput(flag, f"a comparison needs two variants or more, got {len(names)}")
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise BadInput(flag, f"two variants are named '{name}'")
        seen.add(name)
