"""surge.scenario: scenario files (YAML) and the same models built in Python, validated with
file/line/key errors and compiled to the engine's plans.

    from surge.scenario import load
    run = load("checkout.yaml").compile(time_scale=0.1)
    run.main, run.setup, run.teardown, run.thresholds
"""

from surge.plan.compiled import CompiledRun
from surge.scenario.captures import Capture
from surge.scenario.checks import Check
from surge.scenario.completion import Completion, FixedLength, NormalLength, Prompts, SyntheticPrompts, UniformLength
from surge.scenario.executors import (
    ConstantArrivalRateInput,
    ConstantVusInput,
    ExecutorInput,
    PerVuIterationsInput,
    RampingArrivalRateInput,
    RampingVusInput,
    RateStageInput,
    SharedIterationsInput,
    VuStageInput,
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
    "Completion",
    "Constant",
    "ConstantArrivalRateInput",
    "ConstantVusInput",
    "Counter",
    "Csv",
    "Decimal",
    "Defaults",
    "Env",
    "ExecutorInput",
    "ExponentialThink",
    "FixedLength",
    "FixedThink",
    "MixEntry",
    "NormalLength",
    "PerVuIterationsInput",
    "Phase",
    "Pool",
    "Problem",
    "Prompts",
    "RampingArrivalRateInput",
    "RampingVusInput",
    "RandomString",
    "RateStageInput",
    "Request",
    "Scenario",
    "ScenarioError",
    "ScenarioFile",
    "SharedIterationsInput",
    "Step",
    "SyntheticPrompts",
    "ThinkTime",
    "ThresholdSpec",
    "Timestamp",
    "Uniform",
    "UniformLength",
    "UniformThink",
    "Uuid",
    "Variable",
    "Vu",
    "VuStageInput",
    "Zipf",
    "compile_file",
    "load",
    "loads",
    "scale_time",
]
