"""Limits: every bound surge puts on what a user gives it, in one place, so that the docs
(docs/scenarios.md "Limits"), the scenario models and the CLI flags agree.

Two kinds: the engine's ranges (what ``crates/surge-engine`` accepts: checked in Python
first, so that an error names the flag or FILE:LINE instead of a field of the plan), and
input limits that keep a hostile or mistaken file from taking the machine (size, aliases,
nesting, number lengths, file types).
"""

from __future__ import annotations

# --- the engine's ranges (crates/surge-engine/src) -------------------------------------

MAX_VUS = 1_000_000
"""MAX_VUS bounds VUs, stage targets, max_vus and pre_allocated_vus (executor.rs MAX_VUS)."""

MAX_RATE = 10_000_000.0
"""MAX_RATE bounds an arrival rate, per second (executor.rs MAX_RATE)."""

MAX_ITERATIONS = 1_000_000_000_000
"""MAX_ITERATIONS bounds an executor's ``iterations`` and ``-n`` (the engine's u64 is far
beyond; a trillion iterations at 10,000,000/s take more than a day)."""

MAX_DURATION_S = 30 * 86_400.0
"""MAX_DURATION_S bounds every duration (executor durations, stages, timeouts, graceful
stops, ``-d``, ``--timeout``, ``--grace``): 30 days."""

MAX_START_TIME_S = 86_400.0
"""MAX_START_TIME_S bounds a scenario's ``start_time`` (scenario.rs MAX_START_TIME_S, a day)."""

MAX_THINK_S = 3_600.0
"""MAX_THINK_S bounds a think time, and an exponential think time's mean (flow.rs MAX_THINK_S)."""

MAX_THREADS = 1024
"""MAX_THREADS bounds ``--threads`` (plan.rs)."""

MAX_SEND_SLACK_S = 0.1
"""MAX_SEND_SLACK_S bounds the open model's send slack (``--send-slack``, ``send_slack``): 100 ms
(plan.rs)."""

SEND_SLACK_RANGE = "must be between 0 and 100ms"
"""SEND_SLACK_RANGE is what an error about a send slack outside 0..MAX_SEND_SLACK_S says."""

MAX_WEIGHT = 1e9
"""MAX_WEIGHT bounds a mix entry's or a choice's weight (weights are relative: their sum
must stay a finite number)."""

MAX_STEPS = 65_535
"""MAX_STEPS bounds the steps of a flow and the entries of a mix (flow.rs MAX_STEPS)."""

MAX_STRING_LENGTH = 1 << 20
"""MAX_STRING_LENGTH bounds a random-string's ``length`` (variables/spec.rs)."""

MAX_ZIPF_N = 1 << 53
"""MAX_ZIPF_N bounds a zipf variable's ``n`` (variables/spec.rs MAX_ZIPF_N)."""

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
"""INT64_MIN and INT64_MAX bound counters and uniform integers (the engine's i64)."""

MAX_DECIMAL = 1e15
"""MAX_DECIMAL bounds the magnitude of a decimal variable's min and max (their difference
must stay a finite number, and 9 decimals stay exact)."""

# --- input limits ------------------------------------------------------------------------

MAX_SCENARIO_FILE_BYTES = 8 << 20
"""MAX_SCENARIO_FILE_BYTES bounds a scenario file: 8 MiB."""

MAX_DATA_FILE_BYTES = 16 << 20
"""MAX_DATA_FILE_BYTES bounds a file read as data: ``--body @FILE`` and CSV files, 16 MiB."""

MAX_CSV_PLAN_BYTES = 64 << 20
"""MAX_CSV_PLAN_BYTES bounds the cells of every ``csv`` variable of one run together, a
variable counted once for each scenario using it (docs/scenarios.md, Memory): 64 MiB."""

MAX_VU_VALUE_BYTES = 512 << 20
"""MAX_VU_VALUE_BYTES bounds what the VUs of one run hold for their variables' values: the
VUs of each scenario times twice the longest values it uses (the values, and the requests
rendered from them), summed over the scenarios (docs/scenarios.md, Memory): 512 MiB."""

MAX_TAGS = 2_000
"""MAX_TAGS bounds the distinct tags of one run, a tag counted once in each scenario that
has it: each has its own metrics in every thread, interval and record (docs/scenarios.md,
Memory)."""

MAX_TOKEN_COUNT = 1 << 20
"""MAX_TOKEN_COUNT bounds a completion's ``max_tokens`` and a synthetic prompt's length in
tokens (words): 1,048,576, beyond any model's context."""

MAX_SYNTHETIC_PROMPTS = 100_000
"""MAX_SYNTHETIC_PROMPTS bounds how many distinct synthetic prompts a completion step generates
(``prompts.synthetic.count``): each is a value of the plan."""

MAX_SYNTHETIC_WORDS = 1 << 22
"""MAX_SYNTHETIC_WORDS bounds the words of one completion step's synthetic prompts together
(4,194,304, about 20 MB of text): they are generated when the file is compiled and held in the
plan."""

MAX_DEPTH = 64
"""MAX_DEPTH bounds how deeply mappings and lists nest in a scenario file."""

MAX_ALIAS_VALUES = 100_000
"""MAX_ALIAS_VALUES bounds the values YAML aliases (``*name``) repeat, all aliases together:
an alias bomb stops at the alias that passes it."""

MAX_NUMBER_DIGITS = 100
"""MAX_NUMBER_DIGITS bounds how long a number written in a scenario file may be."""

MAX_PROBLEMS = 50
"""MAX_PROBLEMS bounds the mistakes one error lists (the rest are counted)."""
