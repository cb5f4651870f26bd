"""The distributed run's flags (--ray, --generators, --on-generator-loss): each mistake is one
BadInput naming its flag, and --ray without Ray installed names the extra to install."""

from __future__ import annotations

import importlib.util

import pytest

from surge.core.errors import BadInput
from surge.run.distributed import RAY_EXTRA, DistributedOptions, distributed_options
from surge.run.flags import test_flag_names

FLAGS = test_flag_names()


def options(ray=None, generators=None, on_loss=None):
    return distributed_options(ray, generators, on_loss, FLAGS.__getitem__)


def test_without_ray_a_run_is_local_and_the_other_flags_are_refused():
    assert options() is None
    with pytest.raises(BadInput, match=r"^--generators: only applies to a distributed run: add --ray$"):
        options(generators=3)
    with pytest.raises(BadInput, match=r"^--on-generator-loss: only applies"):
        options(on_loss="continue")


@pytest.mark.parametrize(
    "address, message",
    [
        ("http://127.0.0.1:8080/health", "write FILE|URL before --ray"),
        ("tests.yaml", "write FILE|URL before --ray"),
        ("  ", "an empty address"),
    ],
)
def test_an_address_that_is_the_test_itself_is_refused(address, message):
    with pytest.raises(BadInput, match=r"^--ray: ") as refused:
        options(ray=address)
    assert message in str(refused.value)


def test_generators_and_the_loss_policy_are_checked():
    with pytest.raises(BadInput, match=r"^--generators: must be at least 1, got 0$"):
        options(ray="auto", generators=0)
    with pytest.raises(BadInput, match=r"^--on-generator-loss: must be stop or continue, got 'retry'$"):
        options(ray="auto", on_loss="retry")
    assert options(ray="auto", generators=2, on_loss="continue") == DistributedOptions("auto", 2, "continue")
    assert options(ray="local") == DistributedOptions("local", None, "stop")


def test_ray_not_installed_is_one_line_naming_the_extra(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ray" else real(name, *a))
    with pytest.raises(BadInput) as refused:
        options(ray="auto")
    assert str(refused.value) == f"--ray: needs Ray, which is not installed here: {RAY_EXTRA}"
    assert RAY_EXTRA == "pip install 'surge[ray]'"
