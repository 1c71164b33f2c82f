# One task runner. `make test` works on a fresh machine: it creates .venv unless a virtualenv
# is already active, installs the project with its test extras, then runs pytest.
PY ?= python3
ifdef VIRTUAL_ENV
  BIN := $(VIRTUAL_ENV)/bin
else
  BIN := .venv/bin
endif

.PHONY: install install-runtime test lint schemas bench demo clean

$(BIN)/python:
	$(PY) -m venv .venv

# Everything: the runtime plus the test, lint and model-training tools (what `make test` and CI need).
# uv (from PyPI, through pip) resolves, downloads and installs in parallel: about twice as fast as pip here
# (73 s against 138 s for '.[test]' on a fresh machine); --compile-bytecode writes the dependencies' .pyc.
# The editable install leaves src/ uncompiled: compileall writes its bytecode once, so no process (the tests
# start hundreds: ghost-agent, pcap-forensics, MCP servers) compiles netghost again, even where
# PYTHONDONTWRITEBYTECODE keeps the interpreter from writing the .pyc files itself.
install: $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade uv
	$(BIN)/uv pip install --quiet --python $(BIN)/python --compile-bytecode -e '.[test]'
	$(BIN)/python -m compileall -q src >/dev/null
	@touch $(BIN)/.netghost-installed $(BIN)/.netghost-test-installed

# The runtime only: what `ghost-agent` needs to run (the demo does not need pytest, mypy or scikit-learn).
install-runtime: $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade uv
	$(BIN)/uv pip install --quiet --python $(BIN)/python --compile-bytecode -e .
	$(BIN)/python -m compileall -q src >/dev/null
	@touch $(BIN)/.netghost-installed

# The Cython sources of the engine's compiled kernels: the install builds them (setup.py), so a change to one
# needs the install again.
PYX := $(shell find src -name '*.pyx')

# The demo installs only when the venv has never been installed or the project's requirements or compiled
# kernels changed since (a stamp newer than pyproject.toml, setup.py and the .pyx sources): a second
# `make demo` starts at once.
$(BIN)/.netghost-installed: pyproject.toml setup.py $(PYX) | $(BIN)/python
	$(MAKE) install-runtime

# The same for the test, lint and training tools: `make test` installs them on a fresh machine and after
# such a change, not on every run (the editable install rebuilds the compiled kernels: ~35-50 s each time).
$(BIN)/.netghost-test-installed: pyproject.toml setup.py $(PYX) | $(BIN)/python
	$(MAKE) install

# Three workers (pytest-xdist) on CI's two cores: many tests wait on subprocesses; the modules holding slow tests
# head the workers' first blocks (tests/_schedule.py); the 25 slowest are listed at the end.
test: $(BIN)/.netghost-test-installed
	$(BIN)/python -m pytest -q -n 3 --dist worksteal --durations=25

lint: $(BIN)/.netghost-test-installed
	$(BIN)/ruff check src tests bench examples
	$(BIN)/mypy

schemas: $(BIN)/.netghost-test-installed
	$(BIN)/python -m netghost.contracts.export schemas

# Each benchmark prints its figures (and ratios against peers measured in the same run).
# pcap_bench.py first builds a 2,000,000-packet capture (~1.5 GB) under bench/_work/.
bench: $(BIN)/.netghost-test-installed
	@set -e; for b in wal_bench shell_bench shell_exec_bench lab_synth_bench pcap_bench orchestrator_bench; do \
	  echo "== bench/$$b.py"; $(BIN)/python bench/$$b.py; done

demo: $(BIN)/.netghost-installed
	$(BIN)/ghost-agent demo

clean:
	rm -rf .venv build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache
