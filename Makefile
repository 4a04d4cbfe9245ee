# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: dr-drill demo test checks dist-and-ministack lint typecheck tf-check pytest test-ministack test-localstack bench clean dist lambda-layer test-dist

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Installs are stamped on pyproject.toml, so repeated runs are quick.
$(VENV)/.demo-installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[demo]'
	touch $@

$(VENV)/.dev-installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e . --group dev
	touch $@

demo: $(VENV)/.demo-installed
	$(BIN)/s3memory demo

lint: $(VENV)/.dev-installed
	$(BIN)/ruff check s3memory tests bench terraform
	$(BIN)/ruff format --check s3memory tests bench

typecheck: $(VENV)/.dev-installed
	$(BIN)/mypy

tf-check:
	bash scripts/tf-check.sh

# The test runs write bytecode beside the sources (git ignores __pycache__/) even where the
# environment sets PYTHONDONTWRITEBYTECODE: pytest then rewrites the test modules' asserts once
# instead of in every process (collecting the suite took 26 s of CPU a process without a cache,
# 13 s with one), and the tool subprocesses the tests start import compiled code. The tests that
# load files Terraform packages keep __pycache__ out of terraform/ themselves.
TEST_ENV := env -u PYTHONDONTWRITEBYTECODE

# Each test has its own in-process moto, so the suite runs on every core (at most 4 workers).
# worksteal: a worker that runs out takes half of another's queue, and the modules with slow tests
# come first (tests/conftest.py), so no long test starts last.
pytest: $(VENV)/.dev-installed
	$(TEST_ENV) $(BIN)/python -m pytest -n auto --maxprocesses=4 --dist worksteal

# The storage suites again, against MiniStack on 127.0.0.1 (conditions moto ignores, real error codes).
test-ministack: $(VENV)/.dev-installed
	$(TEST_ENV) bash scripts/test-endpoint.sh ministack

# Optional, not part of make test: the same against LocalStack core (needs `pip install localstack-core`).
test-localstack: $(VENV)/.dev-installed
	bash scripts/test-endpoint.sh localstack

# What CI runs, in three steps: the static checks side by side (each one process); the moto suite on
# every core; then the built artifacts' tests (mostly installs: network and disk) beside the
# MiniStack run (CPU). --output-sync (GNU make 4; 3.81 interleaves) prints each target's output
# whole when it ends.
test: checks pytest dist-and-ministack

SYNC := $(if $(filter output-sync,$(.FEATURES)),--output-sync=target)
checks:
	$(MAKE) --no-print-directory $(SYNC) -j3 lint typecheck tf-check

dist-and-ministack:
	$(MAKE) --no-print-directory $(SYNC) -j2 test-dist test-ministack

# The wheel and the sdist in dist/, built by the PEP 517 front end in an isolated environment and
# checked as PyPI checks uploads. Its own small venv (build and twine only, not the dev toolchain);
# SOURCE_DATE_EPOCH (the last commit's time) fixes the wheel's file times, and
# scripts/reproducible-sdist.py the sdist's (setuptools leaves the gzip time and the files' own), so
# two builds of one commit give the same bytes.
BUILD_VENV := .venv-build
$(BUILD_VENV)/.installed:
	$(PYTHON) -m venv $(BUILD_VENV)
	$(BUILD_VENV)/bin/python -m pip install --quiet --upgrade pip 'build>=1.2' 'twine>=6.1'
	touch $@

SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 315532800)
dist: $(BUILD_VENV)/.installed
	rm -rf dist
	SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) $(BUILD_VENV)/bin/python -m build --outdir dist .
	SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) $(BUILD_VENV)/bin/python scripts/reproducible-sdist.py dist/s3memory-*.tar.gz
	$(BUILD_VENV)/bin/twine check --strict dist/*

# Lambda layers in dist/ (python/... zips of manylinux wheels), one per architecture, for the
# python$(LAYER_PYTHON) runtime; prints their sizes against Lambda's limits.
LAYER_PYTHON ?= 3.12
lambda-layer: dist | $(BIN)/python
	PYTHON=$(BIN)/python LAYER_PYTHON=$(LAYER_PYTHON) bash scripts/lambda-layer.sh dist/s3memory-*.whl dist

# The built artifacts as users install them (tests/dist): the wheel in fresh virtualenvs outside
# the repository with the lowest and the newest dependencies, a layer, the image's filesystem.
test-dist: dist $(VENV)/.dev-installed
	$(TEST_ENV) S3MEMORY_DIST_DIR=dist $(BIN)/python -m pytest -p no:xdist tests/dist

bench: $(VENV)/.dev-installed
	$(BIN)/python bench/run.py
	$(BIN)/python bench/versus.py --reps 5 --write

# The recovery drill (docs/disaster-recovery.md): a fleet on moto in two regions, replicated,
# failed over mid-session, verified, written, failed back; prints RPO and RTO as measured.
dr-drill: $(VENV)/.dev-installed
	$(BIN)/python bench/dr_drill.py

clean:
	rm -rf $(VENV) .venv-build .venv-checkov .venv-ministack .mypy_cache .ruff_cache .pytest_cache tests/terraform/sim/node_modules
