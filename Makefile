# Two entry points: `make demo` and `make test`. Both build their own virtualenv.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
BASE_STAMP := $(VENV)/.installed-base

.PHONY: demo test lint typecheck unit bench mutation docs clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $(STAMP)

# The demo needs deskwork alone: no dev tools, no PyTorch, no LangGraph.
$(BASE_STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e .
	touch $(BASE_STAMP)

demo: $(BASE_STAMP)
	$(BIN)/deskwork demo

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/pytest

test: lint typecheck unit

bench: $(STAMP)
	$(BIN)/python bench/core.py 15
	$(BIN)/python bench/core.py 15 --cpu
	$(BIN)/python bench/graph.py
	$(BIN)/python bench/serve.py
	$(BIN)/python bench/serve.py --fan-out --split-cores
	$(BIN)/python bench/durable.py
	$(BIN)/python bench/parallel.py
	$(BIN)/python bench/realtime.py

# The documentation site, built into site/ (no broken links or references allowed).
docs: $(STAMP)
	$(BIN)/mkdocs build --strict

# Mutation testing (slow, ~15 min; not part of make test). Scores: docs/reliability.md.
mutation: $(STAMP)
	$(BIN)/mutmut run --max-children 1
	$(BIN)/mutmut results

clean:
	rm -rf $(VENV) .deskwork .pytest_cache .mypy_cache .ruff_cache mutants site
