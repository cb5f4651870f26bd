"""Scenario file errors: one row per kind of mistake, each asserting the exact
``FILE:LINE: key.path:`` prefix and what the message says; every mistake of a file is
reported at once, as a BadInput (exit code 2), never a traceback. No engine needed."""

from __future__ import annotations

import textwrap

import pytest

from surge.scenario import ConstantVusInput, Request, Scenario, ScenarioError, ScenarioFile, Step, load, loads

HEAD = "target: http://127.0.0.1:8080\n"
VUS = "    executor: {type: constant-vus, vus: 2, duration: 1s}\n"
GET = "    flow: [{request: {path: /health}}]\n"

ROWS = [
    # (id, file text, expected "LINE: key" prefix, message fragment)
    (
        "unknown top-level key",
        HEAD + "defaultz: {}\nscenarios:\n  a:\n" + VUS + GET,
        "2: defaultz",
        "unknown key 'defaultz' (did you mean 'defaults'?)",
    ),
    (
        "unknown executor key",
        HEAD + "scenarios:\n  a:\n    executor: {type: constant-vus, durations: 1s}\n" + GET,
        "4: scenarios.a.executor.durations",
        "unknown key 'durations' (did you mean 'duration'?)",
    ),
    (
        "misplaced key",
        HEAD + "scenarios:\n  a:\n" + VUS + "    flow:\n      - request: {path: /, name: home}\n",
        "6: scenarios.a.flow[0].request.name",
        "unknown key 'name' (name belongs to the step, beside request)",
    ),
    (
        "key of the wrong level",
        HEAD + "scenarios:\n  a:\n" + VUS + "    vus: 3\n" + GET,
        "5: scenarios.a.vus",
        "vus belongs in executor",
    ),
    (
        "wrong type",
        HEAD + "scenarios:\n  a:\n    executor: {type: constant-vus, vus: ten, duration: 1s}\n" + GET,
        "4: scenarios.a.executor.vus",
        "expected a whole number, got 'ten'",
    ),
    (
        "list expected",
        HEAD + "scenarios:\n  a:\n" + VUS + "    flow: {request: {path: /}}\n",
        "5: scenarios.a.flow",
        "expected a list, got a mapping",
    ),
    (
        "duration without unit",
        HEAD + "scenarios:\n  a:\n    executor: {type: constant-vus, duration: 30}\n" + GET,
        "4: scenarios.a.executor.duration",
        "'30' has no unit: write '30s' for seconds or '30ms'",
    ),
    (
        "duration in words",
        HEAD + "scenarios:\n  a:\n" + VUS + "    start_time: 5 minutes\n" + GET,
        "5: scenarios.a.start_time",
        "'5 minutes' is not a duration (examples: 500ms",
    ),
    (
        "zero duration",
        HEAD + "scenarios:\n  a:\n    executor: {type: constant-vus, duration: 0s}\n" + GET,
        "4: scenarios.a.executor.duration",
        "must be above 0",
    ),
    (
        "bad rate",
        HEAD + "scenarios:\n  a:\n    executor:\n      type: constant-arrival-rate\n      rate: fast\n"
        "      duration: 1s\n      max_vus: 5\n" + GET,
        "6: scenarios.a.executor.rate",
        "'fast' is not a rate (examples: 300, 300/s, 18000/m",
    ),
    (
        "unknown executor type",
        HEAD + "scenarios:\n  a:\n    executor: {type: constant-vu, vus: 1}\n" + GET,
        "4: scenarios.a.executor",
        "unknown type 'constant-vu' (did you mean 'constant-vus'?",
    ),
    (
        "executor without type",
        HEAD + "scenarios:\n  a:\n    executor: {vus: 1}\n" + GET,
        "4: scenarios.a.executor",
        "missing 'type' (one of: constant-vus, ramping-vus",
    ),
    (
        "missing required key",
        HEAD + "scenarios:\n  a:\n    executor: {type: constant-vus, vus: 2}\n" + GET,
        "4: scenarios.a.executor",
        "missing required key 'duration'",
    ),
    (
        "stages of zero total duration",
        HEAD + "scenarios:\n  a:\n    executor:\n      type: ramping-vus\n"
        "      stages: [{duration: 0s, target: 5}]\n" + GET,
        "6: scenarios.a.executor.stages",
        "the stages last 0s in total",
    ),
    (
        "negative stage target",
        HEAD + "scenarios:\n  a:\n    executor:\n      type: ramping-vus\n      stages:\n"
        "        - {duration: 1s, target: 5}\n        - {duration: 1s, target: -1}\n" + GET,
        "8: scenarios.a.executor.stages[1].target",
        "must be at least 0, got -1",
    ),
    (
        "stages that never run a VU",
        HEAD + "scenarios:\n  a:\n    executor:\n      type: ramping-vus\n"
        "      stages: [{duration: 5s, target: 0}]\n" + GET,
        "6: scenarios.a.executor.stages",
        "every stage targets 0 VUs: nothing would run",
    ),
    (
        "no stages",
        HEAD + "scenarios:\n  a:\n    executor: {type: ramping-arrival-rate, stages: [], max_vus: 2}\n" + GET,
        "4: scenarios.a.executor.stages",
        "must not be empty",
    ),
    (
        "pre-allocated above max",
        HEAD + "scenarios:\n  a:\n    executor:\n      type: constant-arrival-rate\n"
        "      rate: 10/s\n      duration: 1s\n      pre_allocated_vus: 20\n      max_vus: 10\n" + GET,
        "8: scenarios.a.executor.pre_allocated_vus",
        "20 pre-allocated VUs exceed max_vus 10",
    ),
    (
        "arrival rate without a VU pool",
        HEAD + "scenarios:\n  a:\n    executor: {type: constant-arrival-rate, rate: 10, duration: 1s}\n" + GET,
        "4: scenarios.a.executor",
        "give max_vus (the most VUs the schedule may use) or pre_allocated_vus",
    ),
    (
        "fewer shared iterations than VUs",
        HEAD + "scenarios:\n  a:\n    executor: {type: shared-iterations, vus: 5, iterations: 2}\n" + GET,
        "4: scenarios.a.executor.iterations",
        "2 iterations cannot be shared by 5 VUs",
    ),
    (
        "undefined variable",
        HEAD
        + "variables: {id: {type: counter}}\nscenarios:\n  a:\n"
        + VUS
        + '    flow:\n      - request: {path: "/tasks/{{idd}}"}\n',
        "7: scenarios.a.flow[0].request.path",
        "'{{idd}}' uses 'idd', which is not a variable or an earlier capture in scenario 'a' (did you mean 'id'?)",
    ),
    (
        "undefined variable in a header",
        HEAD + "scenarios:\n  a:\n" + VUS + "    flow:\n      - request:\n"
        '          path: /\n          headers: {Authorization: "Bearer {{token}}"}\n',
        "8: scenarios.a.flow[0].request.headers.Authorization",
        "uses 'token', which is not a variable",
    ),
    (
        "undefined variable in a JSON body",
        HEAD + "scenarios:\n  a:\n" + VUS + "    flow:\n      - request:\n"
        '          method: POST\n          json:\n            title: "t{{n}}"\n',
        "9: scenarios.a.flow[0].request.json.title",
        "uses 'n', which is not a variable",
    ),
    (
        "capture used before it is taken",
        HEAD + "scenarios:\n  a:\n" + VUS + "    flow:\n"
        '      - request: {path: "/tasks/{{id}}"}\n      - request: {method: POST, path: /tasks}\n'
        "        capture: {id: {json: $.id}}\n",
        "6: scenarios.a.flow[0].request.path",
        "it is captured only later, at scenarios.a.flow[1].capture.id",
    ),
    (
        "capture from another flow of a mix",
        HEAD + "scenarios:\n  a:\n" + VUS + "    mix:\n"
        "      - {weight: 1, request: {path: /a}, capture: {id: {json: $.id}}}\n"
        '      - {weight: 1, request: {path: "/b/{{id}}"}}\n',
        "7: scenarios.a.mix[1].request.path",
        "uses 'id', which is not a variable or an earlier capture",
    ),
    (
        "malformed slot",
        HEAD + "scenarios:\n  a:\n" + VUS + '    flow: [{request: {path: "/t/{{ id }}"}}]\n',
        "5: scenarios.a.flow[0].request.path",
        "'{{ id }}' is not a slot",
    ),
    (
        "unknown CSV column",
        HEAD
        + "variables: {user: {type: csv, file: users.csv}}\nscenarios:\n  a:\n"
        + VUS
        + '    flow: [{request: {path: "/u/{{user.nmae}}"}}]\n',
        "6: scenarios.a.flow[0].request.path",
        "users.csv has no column 'nmae' (did you mean 'name'?)",
    ),
    (
        "CSV row without a column",
        HEAD
        + "variables: {user: {type: csv, file: users.csv}}\nscenarios:\n  a:\n"
        + VUS
        + '    flow: [{request: {path: "/u/{{user}}"}}]\n',
        "6: scenarios.a.flow[0].request.path",
        "'{{user}}' is a CSV row: name a column, {{user.COLUMN}}: one of name, password",
    ),
    (
        "column of a plain variable",
        HEAD
        + "variables: {id: {type: uuid}}\nscenarios:\n  a:\n"
        + VUS
        + '    flow: [{request: {path: "/u/{{id.x}}"}}]\n',
        "6: scenarios.a.flow[0].request.path",
        "only CSV variables have columns; write {{id}}",
    ),
    (
        "unreadable CSV file",
        HEAD + "variables:\n  user: {type: csv, file: missing.csv}\nscenarios:\n  a:\n" + VUS + GET,
        "3: variables.user.file",
        "missing.csv: cannot read it",
    ),
    (
        "ragged CSV row",
        HEAD + "variables:\n  user: {type: csv, file: ragged.csv}\nscenarios:\n  a:\n" + VUS + GET,
        "3: variables.user.file",
        "ragged.csv:3: row has 3 fields, the header has 2",
    ),
    (
        "empty CSV file",
        HEAD + "variables:\n  user: {type: csv, file: empty.csv}\nscenarios:\n  a:\n" + VUS + GET,
        "3: variables.user.file",
        "the file is empty: expected a header row",
    ),
    (
        "unique pick with more VUs than rows",
        HEAD + "variables:\n  user: {type: csv, file: users.csv, pick: unique}\n"
        "scenarios:\n  a:\n    executor: {type: constant-vus, vus: 3, duration: 1s}\n"
        '    flow: [{request: {path: "/u/{{user.name}}"}}]\n',
        "3: variables.user.pick",
        "pick: unique needs a row per VU: scenario 'a' runs up to 3 VUs but users.csv has 2 rows",
    ),
    (
        "environment variable missing",
        HEAD + "variables:\n  token: {type: env, name: SURGE_TEST_UNSET}\nscenarios:\n  a:\n" + VUS + GET,
        "3: variables.token.name",
        "environment variable SURGE_TEST_UNSET is not set and has no default",
    ),
    (
        "unknown variable type",
        HEAD + "variables:\n  id: {type: zipff, n: 10, s: 1}\nscenarios:\n  a:\n" + VUS + GET,
        "3: variables.id",
        "unknown type 'zipff' (did you mean 'zipf'?",
    ),
    (
        "bad variable name",
        HEAD + "variables:\n  task-id: {type: uuid}\nscenarios:\n  a:\n" + VUS + GET,
        "3: variables.task-id",
        "'task-id' cannot name a variable (letters, digits and _",
    ),
    (
        "zipf without n",
        HEAD + "variables:\n  id: {type: zipf, s: 1.1}\nscenarios:\n  a:\n" + VUS + GET,
        "3: variables.id",
        "missing required key 'n'",
    ),
    (
        "uniform min above max",
        HEAD + "variables:\n  id: {type: uniform, min: 5, max: 1}\nscenarios:\n  a:\n" + VUS + GET,
        "3: variables.id.max",
        "max 1 is below min 5",
    ),
    (
        "choice weights mismatch",
        HEAD + "variables:\n  c: {type: choice, values: [a, b], weights: [1]}\nscenarios:\n  a:\n" + VUS + GET,
        "3: variables.c.weights",
        "1 weights for 2 values",
    ),
    (
        "pool never filled",
        HEAD
        + "variables:\n  task: {type: pool, pool: task_ids}\nscenarios:\n  a:\n"
        + VUS
        + '    flow: [{request: {path: "/t/{{task}}"}}]\n',
        "3: variables.task.pool",
        "pool 'task_ids' is never filled before scenario 'a'",
    ),
    (
        "non-positive weight",
        HEAD + "scenarios:\n  a:\n" + VUS + "    mix:\n"
        "      - {weight: 1, request: {path: /a}}\n      - {weight: 0, request: {path: /b}}\n",
        "7: scenarios.a.mix[1].weight",
        "must be above 0, got 0",
    ),
    (
        "mix entry without a flow",
        HEAD + "scenarios:\n  a:\n" + VUS + "    mix:\n      - {weight: 1}\n",
        "6: scenarios.a.mix[0]",
        "give flow (a list of steps), request or completion (one step)",
    ),
    (
        "flow and mix both",
        HEAD + "scenarios:\n  a:\n" + VUS + GET + "    mix: [{weight: 1, request: {path: /}}]\n",
        "3: scenarios.a",
        "give either flow (one sequence of steps) or mix (weighted flows), not both",
    ),
    (
        "no flow",
        HEAD + "scenarios:\n  a:\n" + VUS,
        "3: scenarios.a",
        "missing flow: give flow (a list of steps) or mix",
    ),
    (
        "duplicate scenario names",
        HEAD + "scenarios:\n  a:\n" + VUS + GET + "  a:\n" + VUS + GET,
        "6: scenarios.a",
        "duplicate key 'a' (first given on line 3)",
    ),
    ("no scenarios", HEAD + "scenarios: {}\n", "2: scenarios", "must not be empty"),
    ("missing target", "scenarios:\n  a:\n" + VUS + GET, "1: ", "missing required key 'target'"),
    (
        "target not a URL",
        "target: 127.0.0.1:8080\nscenarios:\n  a:\n" + VUS + GET,
        "1: target",
        "'127.0.0.1:8080' is not an http:// or https:// URL",
    ),
    (
        "path without a slash",
        HEAD + "scenarios:\n  a:\n" + VUS + "    flow: [{request: {path: tasks}}]\n",
        "5: scenarios.a.flow[0].request.path",
        "'tasks' must start with '/'",
    ),
    (
        "body and json",
        HEAD + "scenarios:\n  a:\n" + VUS + "    flow:\n      - request: {body: x, json: {a: 1}}\n",
        "6: scenarios.a.flow[0].request.json",
        "give either body (text) or json, not both",
    ),
    (
        "bad status code",
        HEAD + "scenarios:\n  a:\n" + VUS + "    flow:\n      - request: {path: /}\n"
        "        check: {status: [200, 2000]}\n",
        "7: scenarios.a.flow[0].check.status[1]",
        "must be at most 599, got 2000",
    ),
    (
        "bad check regex",
        HEAD + "scenarios:\n  a:\n" + VUS + "    flow:\n      - request: {path: /}\n"
        '        check: {body_matches: "(unclosed"}\n',
        "7: scenarios.a.flow[0].check.body_matches[0]",
        "'(unclosed' is not a regular expression",
    ),
    (
        "bad JSON path",
        HEAD + "scenarios:\n  a:\n" + VUS + "    flow:\n      - request: {path: /}\n"
        "        capture: {id: {json: id}}\n",
        "7: scenarios.a.flow[0].capture.id.json",
        "'id' is not a JSON path (e.g. $.id",
    ),
    (
        "capture with two sources",
        HEAD + "scenarios:\n  a:\n" + VUS + "    flow:\n      - request: {path: /}\n"
        "        capture: {id: {json: $.id, header: X-Id}}\n",
        "7: scenarios.a.flow[0].capture.id",
        "give exactly one source, json, header or regex (got json and header)",
    ),
    (
        "regex group the pattern lacks",
        HEAD + "scenarios:\n  a:\n" + VUS + "    flow:\n      - request: {path: /}\n"
        "        capture: {id: {regex: 'id=(\\d+)', group: 2}}\n",
        "7: scenarios.a.flow[0].capture.id.group",
        "the regex has 1 group(s), not 2",
    ),
    (
        "threshold that does not parse",
        HEAD + "scenarios:\n  a:\n" + VUS + GET + 'thresholds:\n  - "p(95) < 300"\n',
        "7: thresholds[0]",
        "'p(95) < 300': a latency needs a duration (add a unit, e.g. 300ms",
    ),
    (
        "threshold with an unknown statistic",
        HEAD + "scenarios:\n  a:\n" + VUS + GET + 'thresholds:\n  - {expr: "p95 < 1s", tag: x}\n',
        "7: thresholds[0].expr",
        "unknown statistic 'p95' (write a percentile as p(95))",
    ),
    (
        "threshold on an unknown tag",
        HEAD
        + "scenarios:\n  a:\n"
        + VUS
        + "    flow: [{name: get task, request: {}}]\n"
        + 'thresholds:\n  - {expr: "p(95) < 1s", tag: get tasks}\n',
        "7: thresholds[0].tag",
        "no step has the tag 'get tasks' (did you mean 'get task'?)",
    ),
    (
        "threshold on an unknown scenario",
        HEAD + "scenarios:\n  a:\n" + VUS + GET + 'thresholds:\n  - {expr: "p(95) < 1s", scenario: b}\n',
        "7: thresholds[0].scenario",
        "no scenario is named 'b'",
    ),
    (
        "threshold with a bad no_data",
        HEAD + "scenarios:\n  a:\n" + VUS + GET + 'thresholds:\n  - {expr: "p(95) < 1s", no_data: ignore}\n',
        "7: thresholds[0].no_data",
        "expected one of 'fail' or 'pass', got 'ignore'",
    ),
    (
        "threshold delay without abort",
        HEAD + "scenarios:\n  a:\n" + VUS + GET + 'thresholds:\n  - {expr: "p(95) < 1s", delay: 5s}\n',
        "7: thresholds[0].delay",
        "delay only applies with abort_on_fail: true",
    ),
    ("YAML syntax", HEAD + "scenarios:\n  a:\n    executor: {type: constant-vus\n" + GET, "5: ", "not valid YAML"),
    ("not a mapping", "- a\n- b\n", "1: ", "expected a mapping with target: and scenarios:, got a list"),
]


COMPLETION = HEAD + "scenarios:\n  a:\n    executor: {type: constant-vus, vus: 3, duration: 1s}\n    flow:\n      - "
LENGTH = "expected a whole number of tokens (e.g. 128) or a distribution"
COMPLETION_ROWS = [
    # (id, a completion step of scenario a (docs/scenarios.md, Completions), expected prefix, fragment)
    ("unknown key", "completion: {prompts: {values: [a]}, max_tokens: 5, modle: x}", "6: scenarios.a.flow[0].completion.modle", "unknown key 'modle' (did you mean 'model'?)"),
    ("unknown prompts key", "completion: {prompts: {values: [a], colum: x}, max_tokens: 5}", "6: scenarios.a.flow[0].completion.prompts.colum", "did you mean 'column'?"),
    ("unknown distribution key", "completion: {prompts: {values: [a]}, max_tokens: {type: normal, mean: 3, stdev: 1, maxx: 4}}", "6: scenarios.a.flow[0].completion.max_tokens.maxx", "did you mean 'max'?"),
    ("key of the prompts", "completion: {csv: a.csv, max_tokens: 4}", "6: scenarios.a.flow[0].completion.csv", "csv belongs in prompts"),
    ("key of the completion", "{max_tokens: 4, completion: {prompts: {values: [a]}}}", "6: scenarios.a.flow[0].max_tokens", "max_tokens belongs in completion"),
    ("a body of its own", "completion: {prompts: {values: [a]}, max_tokens: 4, json: {}}", "6: scenarios.a.flow[0].completion.json", "a completion writes its own body"),
    ("request and completion", "{request: {path: /}, completion: {prompts: {values: [a]}, max_tokens: 5}}", "6: scenarios.a.flow[0].completion", "give either request (any request) or completion"),
    ("no max_tokens", "completion: {prompts: {values: [a]}}", "6: scenarios.a.flow[0].completion", "missing required key 'max_tokens'"),
    ("max_tokens 0", "completion: {prompts: {values: [a]}, max_tokens: 0}", "6: scenarios.a.flow[0].completion.max_tokens", "must be at least 1, got 0"),
    ("max_tokens negative", "completion: {prompts: {values: [a]}, max_tokens: -5}", "6: scenarios.a.flow[0].completion.max_tokens", "must be at least 1, got -5"),
    ("max_tokens too large", "completion: {prompts: {values: [a]}, max_tokens: 2000000}", "6: scenarios.a.flow[0].completion.max_tokens", "must be at most 1048576"),
    ("max_tokens a fraction", "completion: {prompts: {values: [a]}, max_tokens: 1.5}", "6: scenarios.a.flow[0].completion.max_tokens", LENGTH + " ({type: uniform, min, max} or {type: normal, mean, stdev, min, max}), got 1.5"),
    ("max_tokens a boolean", "completion: {prompts: {values: [a]}, max_tokens: true}", "6: scenarios.a.flow[0].completion.max_tokens", "got true"),
    ("max_tokens text", "completion: {prompts: {values: [a]}, max_tokens: lots}", "6: scenarios.a.flow[0].completion.max_tokens", "got 'lots'"),
    ("unknown distribution", "completion: {prompts: {values: [a]}, max_tokens: {type: gauss, mean: 3}}", "6: scenarios.a.flow[0].completion.max_tokens", "unknown type 'gauss' (expected one of: fixed, uniform, normal)"),
    ("no type", "completion: {prompts: {values: [a]}, max_tokens: {mean: 3}}", "6: scenarios.a.flow[0].completion.max_tokens", "missing 'type' (one of: fixed, uniform, normal)"),
    ("uniform min above max", "completion: {prompts: {values: [a]}, max_tokens: {type: uniform, min: 9, max: 3}}", "6: scenarios.a.flow[0].completion.max_tokens.max", "max 3 is below min 9"),
    ("normal min above max", "completion: {prompts: {synthetic: {tokens: {type: normal, mean: 5, stdev: 1, min: 10, max: 2}}}, max_tokens: 4}", "6: scenarios.a.flow[0].completion.prompts.synthetic.tokens.max", "max 2 is below min 10"),
    ("negative stdev", "completion: {prompts: {values: [a]}, max_tokens: {type: normal, mean: 5, stdev: -1}}", "6: scenarios.a.flow[0].completion.max_tokens.stdev", "must be at least 0"),
    ("unknown api", "completion: {api: embeddings, prompts: {values: [a]}, max_tokens: 4}", "6: scenarios.a.flow[0].completion.api", "expected one of 'chat' or 'text', got 'embeddings'"),
    ("no prompts", "completion: {max_tokens: 4}", "6: scenarios.a.flow[0].completion", "missing required key 'prompts'"),
    ("no source of prompts", "completion: {prompts: {pick: random}, max_tokens: 4}", "6: scenarios.a.flow[0].completion.prompts", "no prompts: give values (a list), csv (a file, with column) or synthetic"),
    ("two sources", "completion: {prompts: {values: [a], csv: p.csv}, max_tokens: 4}", "6: scenarios.a.flow[0].completion.prompts.csv", "give one source of prompts: values or csv, not both"),
    ("empty values", "completion: {prompts: {values: []}, max_tokens: 4}", "6: scenarios.a.flow[0].completion.prompts.values", "must not be empty"),
    ("column without csv", "completion: {prompts: {values: [a], column: x}, max_tokens: 4}", "6: scenarios.a.flow[0].completion.prompts.column", "column only applies to csv prompts"),
    ("a CSV file that is missing", "completion: {prompts: {csv: nope.csv}, max_tokens: 4}", "6: scenarios.a.flow[0].completion.prompts.csv", "nope.csv: cannot read it"),
    ("a CSV file without the column", "completion: {prompts: {csv: prompts.csv, column: promt}, max_tokens: 4}", "6: scenarios.a.flow[0].completion.prompts.column", "prompts.csv has no column 'promt' (did you mean 'prompt'?) (columns: id, prompt)"),
    ("a CSV file of several columns, none named", "completion: {prompts: {csv: prompts.csv}, max_tokens: 4}", "6: scenarios.a.flow[0].completion.prompts", "prompts.csv has columns id, prompt: say which holds the prompts (column:)"),
    ("a ragged CSV file", "completion: {prompts: {csv: ragged.csv, column: prompt}, max_tokens: 4}", "6: scenarios.a.flow[0].completion.prompts.csv", "ragged.csv:3: row has 3 fields, the header has 2"),
    ("unique with fewer prompts than VUs", "completion: {prompts: {values: [a, b], pick: unique}, max_tokens: 4}", "6: scenarios.a.flow[0].completion.prompts.pick", "pick: unique needs a prompt per VU: scenario 'a' runs up to 3 VUs but there are 2 prompts"),
    ("unique with fewer CSV rows than VUs", "completion: {prompts: {csv: prompts.csv, column: prompt, pick: unique}, max_tokens: 4}", "6: scenarios.a.flow[0].completion.prompts.pick", "up to 3 VUs but there are 2 prompts"),
    ("unknown pick", "completion: {prompts: {values: [a], pick: shuffled}, max_tokens: 4}", "6: scenarios.a.flow[0].completion.prompts.pick", "expected one of 'random', 'sequential' or 'unique', got 'shuffled'"),
    ("too many synthetic words", "completion: {prompts: {synthetic: {tokens: 100000, count: 100}}, max_tokens: 4}", "6: scenarios.a.flow[0].completion.prompts.synthetic.count", "100 prompts of these lengths hold 10,000,000 words, more than the 4,194,304"),
    ("no synthetic prompts", "completion: {prompts: {synthetic: {tokens: 5, count: 0}}, max_tokens: 4}", "6: scenarios.a.flow[0].completion.prompts.synthetic.count", "must be at least 1, got 0"),
    ("synthetic without tokens", "completion: {prompts: {synthetic: {count: 5}}, max_tokens: 4}", "6: scenarios.a.flow[0].completion.prompts.synthetic", "missing required key 'tokens'"),
    ("an undefined variable in the model", "completion: {model: '{{mdl}}', prompts: {values: [a]}, max_tokens: 4}", "6: scenarios.a.flow[0].completion.model", "'{{mdl}}' uses 'mdl', which is not a variable"),
    ("a path without its slash", "completion: {path: v1/x, prompts: {values: [a]}, max_tokens: 4}", "6: scenarios.a.flow[0].completion.path", "'v1/x' must start with '/'"),
    ("a bad header name", "completion: {headers: {'a b': x}, prompts: {values: [a]}, max_tokens: 4}", "6: scenarios.a.flow[0].completion.headers.a b", "'a b' is not a valid header name"),
    ("a timeout without unit", "completion: {prompts: {values: [a]}, max_tokens: 4, timeout: 30}", "6: scenarios.a.flow[0].completion.timeout", "'30' has no unit"),
    ("a method", "completion: {method: GET, prompts: {values: [a]}, max_tokens: 4}", "6: scenarios.a.flow[0].completion.method", "a completion is always a POST"),
]  # fmt: skip
ROWS += [(name, COMPLETION + step + "\n", prefix, message) for name, step, prefix, message in COMPLETION_ROWS]


@pytest.fixture
def data_dir(tmp_path):
    (tmp_path / "users.csv").write_text("name,password\nalice,a\nbob,b\n")
    (tmp_path / "ragged.csv").write_text("name,password\nalice,a\nbob,b,extra\n")
    (tmp_path / "empty.csv").write_text("")
    (tmp_path / "prompts.csv").write_text("id,prompt\n1,hello there\n2,how are you\n")
    return tmp_path


@pytest.mark.parametrize(("text", "prefix", "message"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_each_mistake_names_file_line_and_key(data_dir, text, prefix, message):
    path = data_dir / "scenario.yaml"
    path.write_text(text)
    with pytest.raises(ScenarioError) as err:
        load(path, env={})
    lines = str(err.value).splitlines()
    expected = f"{path}:{prefix}"
    matching = [line for line in lines if line.startswith(expected)]
    assert matching, f"no line starts with {expected!r}:\n" + "\n".join(lines)
    assert any(message in line for line in matching), "\n".join(lines)


def test_every_mistake_is_reported_at_once_in_line_order(data_dir):
    text = textwrap.dedent("""\
        target: http://127.0.0.1:8080
        scenarios:
          a:
            executor: {type: constant-vus, vus: 0, duration: 10}
            flow:
              - request: {path: /, method: GET, timeot: 1s}
          b:
            executor: {type: constant-arrival-rate, rate: -5, duration: 1s, max_vus: 1}
            flow: [{request: {path: /}}]
        thresholds: ["p(95) < 1"]
        """)
    with pytest.raises(ScenarioError) as err:
        loads(text, source="many.yaml")
    assert [str(p).split(": ")[0] + ": " + str(p).split(": ")[1] for p in err.value.problems] == [
        "many.yaml:4: scenarios.a.executor.vus",
        "many.yaml:4: scenarios.a.executor.duration",
        "many.yaml:6: scenarios.a.flow[0].request.timeot",
        "many.yaml:8: scenarios.b.executor.rate",
        "many.yaml:10: thresholds[0]",
    ]
    assert "did you mean 'timeout'?" in str(err.value)
    assert "Traceback" not in str(err.value)


def test_a_missing_file_is_a_scenario_error(tmp_path):
    with pytest.raises(ScenarioError, match=r"nope\.yaml: cannot read it"):
        load(tmp_path / "nope.yaml")


def test_scenario_errors_are_bad_input_for_the_cli():
    pytest.importorskip("surge._engine")
    from surge.core.errors import BadInput

    assert issubclass(ScenarioError, BadInput)


def test_scenario_errors_are_value_errors_with_where_and_message():
    err = ScenarioError([], "x.yaml")
    assert isinstance(err, ValueError)
    assert err.where == "x.yaml"


def test_models_built_in_python_report_key_paths_without_lines():
    f = ScenarioFile(
        target="http://127.0.0.1:8080",
        scenarios={
            "a": Scenario(
                executor=ConstantVusInput(vus=1, duration="1s"), flow=[Step(request=Request(path="/tasks/{{id}}"))]
            ),
        },
    )
    with pytest.raises(ScenarioError) as err:
        f.compile()
    assert str(err.value) == (
        "scenarios.a.flow[0].request.path: '{{id}}' uses 'id', which is not a variable "
        "or an earlier capture in scenario 'a'"
    )


def test_models_refuse_bare_numbers_for_durations_in_python_too():
    with pytest.raises(ValueError, match="'5' has no unit"):
        ConstantVusInput(vus=1, duration=5)
