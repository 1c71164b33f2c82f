# One task runner. `make test` works on a fresh machine: it creates .venv unless a virtualenv
# is already active, installs the project with its test extras, then runs pytest.
PY ?= python3
ifdef VIRTUAL_ENV
  BIN := $(VIRTUAL_ENV)/bin
else
  BIN := .venv/bin
endif

.PHONY: venv install test lint typecheck schemas bench demo clean

$(BIN)/python:
	$(PY) -m venv .venv

install: $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'

test: install
	$(BIN)/python -m pytest -q

lint: install
	$(BIN)/ruff check src tests bench examples
	$(BIN)/mypy

schemas: install
	$(BIN)/python -m netghost.contracts.export schemas

bench: install
	$(BIN)/python bench/wal_bench.py
	@for b in bench/shell_bench.py bench/pcap_bench.py; do [ -f $$b ] && $(BIN)/python $$b || true; done

demo: install
	$(BIN)/ghost-agent demo

clean:
	rm -rf .venv build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache
