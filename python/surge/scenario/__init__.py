"""surge.scenario: scenario files (YAML) and the same models built in Python, validated with
file/line/key errors and compiled to the engine's plans.

    from surge.scenario import load
    run = load("checkout.yaml").compile(time_scale=0.1)
    run.main, run.setup, run.teardown, run.thresholds
"""

from surge.plan.compiled import CompiledRun
from surge.scenario.captures import Capture
from surge.scenario.checks import Check
from surge.scenario.executors import (
    ConstantArrivalRate,
    ConstantVus,
    Executor,
    PerVuIterations,
    RampingArrivalRate,
    RampingVus,
    RateStage,
    SharedIterations,
    VuStage,
)
from surge.scenario.file import ScenarioFile, compile_file
from surge.scenario.flow import MixEntry, Step
from surge.scenario.loader import load, loads
from surge.scenario.models import Defaults, Phase, Scenario, ThresholdSpec
from surge.scenario.problems import Problem, ScenarioError
from surge.scenario.request import Request
from surge.scenario.think import ExponentialThink, FixedThink, ThinkTime, UniformThink
from surge.scenario.time_scale import scale_time
from surge.scenario.variables import (
    Choice,
    Constant,
    Counter,
    Csv,
    Decimal,
    Env,
    Pool,
    RandomString,
    Timestamp,
    Uniform,
    Uuid,
    Variable,
    Vu,
    Zipf,
)

__all__ = [
    "Capture",
    "Check",
    "Choice",
    "CompiledRun",
    "Constant",
    "ConstantArrivalRate",
    "ConstantVus",
    "Counter",
    "Csv",
    "Decimal",
    "Defaults",
    "Env",
    "Executor",
    "ExponentialThink",
    "FixedThink",
    "MixEntry",
    "PerVuIterations",
    "Phase",
    "Pool",
    "Problem",
    "RampingArrivalRate",
    "RampingVus",
    "RandomString",
    "RateStage",
    "Request",
    "Scenario",
    "ScenarioError",
    "ScenarioFile",
    "SharedIterations",
    "Step",
    "ThinkTime",
    "ThresholdSpec",
    "Timestamp",
    "Uniform",
    "UniformThink",
    "Uuid",
    "Variable",
    "Vu",
    "VuStage",
    "Zipf",
    "compile_file",
    "load",
    "loads",
    "scale_time",
]
