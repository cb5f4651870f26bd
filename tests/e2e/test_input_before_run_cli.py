"""A file the engine refuses runs nothing, not even its setup, through the CLI against a live target."""

from __future__ import annotations

from conftest import surge, write

SETUP = """\
    target: @URL@
    setup:
      executor: {type: shared-iterations, vus: 4, iterations: 200}
      flow: [{request: {method: POST, path: /tasks, json: {title: t}}, capture: {ids: {json: $.id, to_pool: true}}}]
    scenarios:
      s:
        executor: {type: constant-vus, duration: 1s}
        flow:
          - request:
              path: /health
              headers: {Content-Length: "5"}
    """


def traffic(target) -> tuple[dict[str, int], int]:
    """traffic is what the target's /stats says it was sent (requests per route, tasks
    stored), leaving out the /stats requests that ask it."""
    stats = target.stats()
    return {route: n for route, n in stats["received_by_route"].items() if "/stats" not in route}, stats["tasks"]


def test_a_file_the_engine_refuses_runs_nothing_not_even_setup(tmp_path, fresh_target):
    path = write(tmp_path, SETUP, URL=fresh_target.url)
    before = traffic(fresh_target)
    run = surge("run", str(path))
    assert run.code == 2, run.stderr
    assert run.stderr == (
        f"surge: error: {path}:11: scenarios.s.flow[0].request.headers.Content-Length: "
        "'Content-Length' is set by surge from the body\n"
    )
    assert traffic(fresh_target) == before


def test_a_stage_target_out_of_range_runs_nothing(tmp_path, fresh_target):
    text = SETUP.replace(
        "executor: {type: constant-vus, duration: 1s}",
        "executor: {type: ramping-vus, stages: [{duration: 1s, target: 5000000000}]}",
    )
    path = write(tmp_path, text.replace('headers: {Content-Length: "5"}', "headers: {}"), URL=fresh_target.url)
    before = traffic(fresh_target)
    run = surge("run", str(path))
    assert run.code == 2 and f"{path}:7: scenarios.s.executor.stages[0].target: must be at most" in run.stderr
    assert traffic(fresh_target) == before
