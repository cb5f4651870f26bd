"""--time-scale shortens a test, not what it measures: the gateway example
(examples/gateway-spike.yaml: a 50 -> 100 -> 200-VU spike, 0.5 s think time, 10 s timeout,
against 8 workers each held by one keep-alive connection) at --time-scale 0.25 fails the share
of requests a model of the same server predicts for that schedule: think times, the timeout and
the graceful ramp-down keep their length, so no request is cut off early and none is left out
of failure_rate.

The model is computed here rather than a measured figure written down: a thread-per-connection
server of 8 workers (docs/target.md), VUs following the ramp (a new VU starts at once with a new
connection, a VU above the target stops at the end of its iteration and closes its connection),
each sending, waiting for the response or the 10 s timeout (after which it drops its connection
and opens a new one for its next request), then thinking 0.5 s. A connection holding a worker
is answered at once (the ~1 ms service time is left out) and keeps it until its VU stops; the
worker then goes to the connection that has waited longest and whose client is still waiting.
For the full run it gives 34.4 % of 2,239 requests (the example's header measured 34.3 % of
2,228), for 0.25 30.1 % of 654.
"""

from __future__ import annotations

import json

from conftest import BUSY
from gateway_spike import EXAMPLE, SCALE, predicted_failures
from surge.scenario import load


@BUSY  # shares seed 004's run (gateway_spike_run), which runs apart
def test_a_shortened_gateway_run_fails_the_share_its_schedule_predicts(gateway_spike_run):
    scale = SCALE
    [scenario] = load(EXAMPLE).compile(time_scale=scale).main.to_dict()["scenarios"]
    [[step]] = [seq["steps"] for seq in scenario["flow"]["sequences"]]
    stages = [(s["duration_s"], s["target"]) for s in scenario["executor"]["stages"]]
    assert scenario["flow"]["think_after_iteration"] == {"type": "fixed", "s": 0.5}  # not scaled
    assert scenario["executor"]["graceful_ramp_down_s"] == 30.0  # not scaled
    share, sent = predicted_failures(stages, workers=8, timeout_s=step["timeout_s"], think_s=0.5)
    full_share, _ = predicted_failures(
        [(d / scale, t) for d, t in stages], workers=8, timeout_s=step["timeout_s"], think_s=0.5
    )
    assert abs(share - full_share) < 0.06  # the shortened run measures about what the full one does

    run, out = gateway_spike_run  # the example at this scale, against its target: seed 004's run too
    assert run.code == 99, run.stderr[-2000:]
    requests = json.loads((out / "summary.json").read_text())["requests"]
    assert requests["interrupted"] == 0, requests  # the graceful stops were not shortened
    assert abs(requests["sent"] - sent) <= 0.05 * sent, (requests, sent)
    assert abs(requests["failure_rate"] - share) <= 0.04, (requests, share, full_share)
