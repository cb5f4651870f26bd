"""The test description's options as a plain table, declared once for every command that runs a
test (``surge run``, ``repeat`` and the other experiments): each option's TestSpec field, its
flags, its kind, its default and its help. ``surge.cli.test_options`` turns the table into click
options; TestSpec (``surge.run.spec``) reads the flags' names from it to name them in errors, so
the run layer needs no click."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from surge.core.errors import BadInput

OptionKind = Literal["int", "float", "rate", "text", "switch", "texts", "tags", "address"]
"""OptionKind is what an option takes: a whole number, a number, a text, nothing (a switch:
True when given), a text repeatable (``texts``: a tuple), ``KEY=VALUE`` labels repeatable
(``tags``: checked by ``surge.core.tags.parse_tags``), or an address that may be left out
(``address``: the flag alone means the option's ``alone``, ``local`` unless it names another)."""

DB_HELP = (
    "The run history's database file (default: $SURGE_DB, else history.db in the user's data directory, "
    "e.g. ~/.local/share/surge/history.db)."
)
"""DB_HELP is the help of ``--db``, the same on every command."""

NO_SAVE_HELP = "Write no results directory, and record nothing in the history."
"""NO_SAVE_HELP is the help of ``--no-save``, the same on every command."""

TAG_HELP = (
    "Label the run (e.g. arch=scale-out, build=abc123) for the history; repeatable. "
    "Keys: letters, digits, _ . - (up to 64); values up to 256 printable characters."
)
"""TAG_HELP is the help of ``--tag``, the same on every command."""


@dataclass(frozen=True)
class TestOption:
    """TestOption: one option of the test description: the TestSpec ``field`` it fills, its
    ``flags`` as ``surge run`` spells them (``experiment_flags``: as an experiment does, when
    they differ), its ``kind``, its ``help`` and ``metavar`` (``alone``: an address option's
    value when its flag is given alone). Its default is the kind's: None, False for a switch, ()
    for a repeatable one."""

    __test__ = False  # not a pytest test class, whatever its name

    field: str
    flags: tuple[str, ...]
    kind: OptionKind
    help: str
    metavar: str | None = None
    experiment_flags: tuple[str, ...] | None = None
    alone: str = "local"

    @property
    def default(self) -> Any:
        """default is the field's value when the option is not given."""
        return {"switch": False, "texts": (), "tags": ()}.get(self.kind)

    def spelled(self, experiment: bool) -> tuple[str, ...]:
        """spelled are the option's flags in ``surge run`` or, with ``experiment``, in an
        experiment's command."""
        return self.experiment_flags if experiment and self.experiment_flags is not None else self.flags


TEST_OPTIONS: tuple[TestOption, ...] = (
    TestOption(
        "connections",
        ("-c", "--connections"),
        "int",
        "Closed model: virtual users, one connection each (default 64). With -r: connections opened "
        "up front (default: 2 ms of arrivals).",
    ),
    TestOption("duration", ("-d", "--duration"), "text", "How long to send, e.g. 30s, 1m30s (default 10s)."),
    TestOption(
        "requests",
        ("-n", "--requests"),
        "int",
        "Send exactly this many requests.",
        experiment_flags=("--requests",),  # an experiment's -n is its number of runs
    ),
    TestOption("rate", ("-r", "--rate"), "rate", "Open model: requests per second, timed from the intended send time."),
    TestOption("method", ("-m", "--method"), "text", "HTTP method (default GET)."),
    TestOption("header", ("-H", "--header"), "texts", "'Name: value' header; repeatable."),
    TestOption("body", ("--body",), "text", "Request body: text, or @file."),
    TestOption(
        "timeout",
        ("--timeout",),
        "text",
        "Per-request timeout (default 30s). With a scenario file: replaces "
        "defaults.timeout (a request's own timeout stays).",
    ),
    TestOption("threads", ("--threads",), "int", "Event-loop threads (default: one per core)."),
    TestOption(
        "max_in_flight", ("--max-in-flight",), "int", "Open model: cap on outstanding requests (and connections)."
    ),
    TestOption(
        "send_slack",
        ("--send-slack",),
        "text",
        "Open model: how late a send may go out to be batched with others (default 1ms, at most 16 "
        "sends a batch; 0 sends each at its time). Latency is still timed from the intended send time. With a scenario "
        "file: replaces send_slack.",
        metavar="DURATION",
    ),
    TestOption(
        "grace",
        ("--grace",),
        "text",
        "How long requests in flight at the end may still finish (default 5s). With a "
        "scenario file: replaces graceful_stop.",
    ),
    TestOption(
        "stream_idle_timeout",
        ("--stream-idle-timeout",),
        "text",
        "Event streams (text/event-stream): after the first event, the longest wait for the next "
        "one; a stream past it fails as stream_idle_timeout (default: only --timeout bounds it). With a "
        "scenario file: replaces stream_idle_timeout.",
        metavar="DURATION",
    ),
    TestOption(
        "slo",
        ("--slo",),
        "texts",
        "A service-level objective in threshold syntax, e.g. 'p(99) < 100ms', 'ttft p(95) < 500ms'; "
        "repeatable. Each run is judged by it as a threshold (exit code 99 when missed) and counts the "
        "responses that met its latency, TTFT and TPOT bounds (goodput); with a TTFT or TPOT bound, "
        "'goodput >= Q%' joins it (Q: its highest percentile). surge sweep and surge capacity judge "
        "each level or step by it instead (default: the scenario's thresholds).",
        metavar="EXPR",
    ),
    TestOption("insecure", ("--insecure",), "switch", "Do not verify TLS certificates (with a scenario file too)."),
    TestOption(
        "http2",
        ("--http2",),
        "switch",
        "Speak HTTP/2: h2 by ALPN over https://, h2c (prior knowledge) over http://; --streams requests share "
        "each connection (with a scenario file too).",
    ),
    TestOption(
        "streams",
        ("--streams",),
        "int",
        "With --http2: concurrent streams per connection (default 100). Closed model: -c connections carry "
        "-c x N virtual users.",
        metavar="N",
    ),
    TestOption(
        "time_scale",
        ("--time-scale",),
        "float",
        "Scenario files: multiply executor durations, stages, start times and threshold delays by "
        "FACTOR (not think times, timeouts or graceful stops: the test is shorter, the load the "
        "same).",
    ),
    TestOption(
        "target_url", ("--target",), "text", "Scenario files: send to this base URL instead of the file's target."
    ),
    TestOption(
        "env_pairs",
        ("-e", "--env"),
        "texts",
        "Scenario files: set NAME for the file's env variables (over the process environment); repeatable.",
        metavar="NAME=VALUE",
    ),
    TestOption(
        "out",
        ("--out",),
        "text",
        "Write the results directory here (default: results/<UTC yyyymmdd-HHMMSS>-<name>/).",
        metavar="DIR",
    ),
    TestOption("db", ("--db",), "text", DB_HELP, metavar="PATH"),
    TestOption("tags", ("--tag",), "tags", TAG_HELP, metavar="KEY=VALUE"),
    TestOption("no_save", ("--no-save",), "switch", NO_SAVE_HELP),
    TestOption(
        "ray",
        ("--ray",),
        "address",
        "Run on a Ray cluster: one generator per node, merged into one exact result (docs/distributed.md). "
        "ADDRESS: auto, ray://HOST:PORT or HOST:PORT; alone (or local): start Ray here. Needs "
        "pip install 'surge[ray]'. Write it after FILE|URL.",
        metavar="[ADDRESS]",
    ),
    TestOption(
        "generators",
        ("--generators",),
        "int",
        "With --ray: how many generators, one per node (default: one per alive node).",
        metavar="N",
    ),
    TestOption(
        "on_generator_loss",
        ("--on-generator-loss",),
        "text",
        "With --ray: when a generator dies or goes silent, stop the run keeping what was received "
        "(stop, the default) or carry on without it (continue).",
        metavar="stop|continue",
    ),
    TestOption(
        "export",
        ("--export",),
        "texts",
        "Push the run's metrics as it runs: prometheus=URL (Prometheus remote write, e.g. "
        "http://127.0.0.1:9090/api/v1/write) or otlp=URL (OpenTelemetry metrics over OTLP/HTTP, e.g. "
        "http://127.0.0.1:4318); repeatable (docs/export.md). Needs pip install 'surge[export]'.",
        metavar="KIND=URL",
    ),
    TestOption(
        "watch_pid",
        ("--watch-pid",),
        "int",
        "Sample process PID (the target, with its child processes) every second during each run: "
        "CPU, RSS, threads, open files, into the time series, summary.json and the findings.",
        metavar="PID",
    ),
    TestOption(
        "dashboard",
        ("--dashboard",),
        "address",
        "Serve a live web dashboard of the run (every run of an experiment) at HOST:PORT while the command "
        "runs (docs/dashboard.md); alone: 127.0.0.1:5665. Write it after FILE|URL.",
        metavar="[HOST:PORT]",
        alone="127.0.0.1:5665",
    ),
    TestOption(
        "dashboard_open", ("--dashboard-open",), "switch", "Open the dashboard in a web browser (implies --dashboard)."
    ),
)
"""TEST_OPTIONS are the test's options (after its FILE|URL argument) in the order ``--help``
lists them."""


def test_flag_names(*, experiment: bool = False) -> Mapping[str, str]:
    """test_flag_names maps each TestSpec field to its flag, short and long, as ``surge run``
    spells it (``requests`` -> ``-n/--requests``) or, with ``experiment``, as an experiment's
    command does (``--requests``: its ``-n`` counts runs)."""
    return {o.field: "/".join(o.spelled(experiment)) for o in TEST_OPTIONS}


def check_no_save(no_save: bool, recording_flags: Mapping[str, object]) -> None:
    """check_no_save refuses, with ``--no-save``, each flag of ``recording_flags`` (flag -> its
    value, None when not given) that was given: flags that only say where to record (``--out``;
    ``--db`` where the command only writes the history). BadInput names the flag."""
    for flag, value in recording_flags.items():
        if no_save and value is not None:
            raise BadInput(flag, "cannot be used with --no-save")


test_flag_names.__test__ = False  # type: ignore[attr-defined]  # not a pytest test
