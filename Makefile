# surge: build, demo, test and bench from a fresh machine (Python 3.11 and Rust present).
# Everything Python lives in .venv; the Rust build is one release build shared by
# `maturin develop` and `cargo test --release`.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.deps-installed

.PHONY: all build wheel demo test test-fast test-rust test-python browser bench bench-open bench-history bench-capacity bench-report bench-http2 bench-saving bench-scaleout bench-dashboard bench-export bench-observers prometheus tools clean lint lint-python lint-rust

all: build

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(STAMP): requirements-dev.txt | $(BIN)/python
	$(BIN)/python -m pip install -q -r requirements-dev.txt
	touch $(STAMP)

## build: compile the engine (release) and install the surge package into .venv; byte-compile it
## (the package is installed in place, and PYTHONDONTWRITEBYTECODE would make every start compile it)
build: $(STAMP)
	$(BIN)/maturin develop --release --quiet
	$(BIN)/python -m compileall -q python/surge

## demo: start the reference target, run a real test against it, write a report
demo: build
	$(BIN)/surge demo

## test: Rust unit/integration tests, then the pytest suite (tests/unit, tests/e2e, tests/browser, tests/seeds,
## tests/distributed: markers of those names, set by directory in tests/conftest.py), in four phases: 3 workers for most
## (its tests mostly wait on loopback targets that sleep), grouped by a costly shared fixture (--dist loadgroup: a recorded
## run is made once) and ordered slowest first (tests/conftest.py); then those that keep a core busy two at a
## time, apart from the answer tests whose targets they would slow (marked cpu_heavy); then the tests that keep
## every core busy, alone (marked busy_machine); last the Ray cluster tests, alone (a cluster of three nodes
## keeps both cores busy: tests/distributed/cluster.py). Each phase prints its 20 slowest tests.
test: build test-rust test-python

## test-fast: the unit tests alone (tests/unit: no process, no network; tests/conftest.py refuses both), in seconds
test-fast: $(STAMP)
	@$(BIN)/python -c "import surge._engine" 2>/dev/null || $(MAKE) build
	$(BIN)/python -m pytest -q -m unit tests/unit

test-rust:
	cargo test --release --workspace --exclude surge-py

## browser: headless Chromium for the report.html tests (Debian's chromium package)
browser:
	@command -v chromium >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null)

## prometheus: a Prometheus for the --export tests and bench (Debian's prometheus package; the tests start their own)
prometheus:
	@command -v prometheus >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq prometheus >/dev/null)

## (the type checks, stubtest and mypy --strict, are in make lint, which .ci/run runs first)
test-python: build browser prometheus tools
	$(BIN)/python -m pytest -n 3 --dist loadgroup -m "not busy_machine and not cpu_heavy and not distributed" --durations=20 tests
	$(BIN)/python -m pytest -n 2 --dist loadgroup -m "cpu_heavy and not distributed" --durations=20 tests
	$(BIN)/python -m pytest -m "busy_machine and not distributed" --durations=20 tests
	$(BIN)/python -m pytest -m distributed --durations=20 tests

## wheel: the abi3 wheel (any CPython >= 3.11 on Linux x86_64; installing it needs no Rust) in dist/
wheel: build
	$(BIN)/maturin build --release --quiet --out dist

## tools: load-generator peers (wrk, h2load) and the nginx target the benchmarks and the HTTP/2 tests compare against
tools:
	@command -v wrk >/dev/null && command -v nginx >/dev/null && command -v h2load >/dev/null || \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk nginx nghttp2-client >/dev/null)

## bench: surge vs wrk (and oha, open model) against nginx, pinned cores, ratios from one run; then the history's and capacity's benches
bench: build tools
	$(BIN)/python bench/bench.py
	$(MAKE) bench-history
	$(MAKE) bench-capacity
	$(MAKE) bench-report
	$(MAKE) bench-http2
	$(MAKE) bench-saving
	$(MAKE) bench-scaleout
	$(MAKE) bench-dashboard
	$(MAKE) bench-export
	$(MAKE) bench-observers

## bench-open: only the open-model section: surge and oha at 20k, 50k, 80k req/s on one core, surge closed for the ratio (docs/benchmarks.md)
bench-open: build tools
	$(BIN)/python bench/bench.py --only open

## bench-capacity: surge capacity at full length (10 s steps) against targets of known capacity (docs/benchmarks.md)
bench-capacity: build
	$(BIN)/python bench/capacity.py

## bench-report: render a synthetic one-hour run's report.html, its size and its load time in Chromium (docs/benchmarks.md)
bench-report: build browser
	$(BIN)/python bench/report_html.py

## bench-http2: surge's HTTP/2 CPU per request vs h2load (1 and 10 connections x 100 streams) and vs its own HTTP/1.1, on nginx
bench-http2: build tools
	cargo build --release -p surge-engine --example run_plan
	$(BIN)/python bench/http2.py

## bench-export: the exporter thread's own CPU per run and per request, each kind (docs/export.md; the A/B is bench-observers)
bench-export: build prometheus
	$(BIN)/python bench/export.py

## bench-saving: what saving costs: surge run -d 1s by default vs --no-save, CPU and peak RSS (docs/benchmarks.md)
bench-saving: build
	$(BIN)/python bench/saving.py

## bench-scaleout: the distributed run's merge cost, and 1-3 generators in a loopback Ray cluster with CPU-limited nodes (docs/benchmarks.md)
bench-scaleout: build
	$(BIN)/python bench/scaleout.py

## bench-observers: the live view, the dashboard with one client and each exporter side by side against the same run without them: engine and process CPU per request, surge and the target pinned to a core each (docs/benchmarks.md)
bench-observers: build prometheus
	$(BIN)/python bench/observers.py

## bench-dashboard: the live dashboard's cost: engine CPU per request with and without --dashboard and one client, its work per interval (docs/benchmarks.md)
bench-dashboard: build
	$(BIN)/python bench/dashboard.py

## bench-history: record a one-hour run's intervals, list a history of 10,000 runs (docs/benchmarks.md)
bench-history: build
	$(BIN)/python bench/history.py

## lint: the gates .ci/run runs before the tests: ruff (lint and format), mypy --strict, the layers
## contract (import-linter), stubtest of the engine's bindings, rustfmt and clippy (pedantic, -D warnings)
lint: lint-python lint-rust

lint-python: build
	$(BIN)/ruff check python tests bench
	$(BIN)/ruff format --check python tests bench
	$(BIN)/python -m mypy --strict python/surge
	PYTHONPATH=python $(BIN)/lint-imports
	$(BIN)/python -m mypy.stubtest surge._engine

lint-rust:
	cargo fmt --all --check
	cargo clippy --workspace --all-targets --release -- -D warnings

clean:
	rm -rf $(VENV) target
