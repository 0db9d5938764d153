# Two commands on a fresh machine: `make demo` (the main job) and `make test` (the whole suite).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: demo test lint bench bench-quick clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.test-installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[test,demo,bench]' 'torch==2.13.0'
	touch $@

$(VENV)/.demo-installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[demo]'
	touch $@

demo: $(VENV)/.demo-installed
	$(BIN)/python -m tapegrad demo

test: $(VENV)/.test-installed
	# one BLAS thread per test worker: two workers x two BLAS threads on two cores thrash; worksteal: an idle worker
	# takes tests queued on the other, so one long file does not finish alone at the end
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 $(BIN)/python -m pytest -n 2 --dist worksteal tests

lint: $(VENV)/.test-installed
	$(BIN)/ruff check src tests benchmarks examples

bench: $(VENV)/.test-installed
	$(BIN)/python benchmarks/run.py

bench-quick: $(VENV)/.test-installed
	$(BIN)/python benchmarks/run.py --quick

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info
