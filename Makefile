# Each target creates .venv if needed and installs the project into it.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Installs go through uv (from PyPI, into the venv), which downloads and unpacks in
# parallel: the test extra takes under a minute instead of pip's two.  Byte-compiled at
# install, as pip does: where PYTHONDONTWRITEBYTECODE is set, nothing is compiled later and
# every process would compile PyMC's stack from source again.
# --system-certs: the system's certificate store, which pip is configured to use here (a
# proxy's certificate authority may be in it and not in uv's own bundle).
# tools/constraints.txt keeps the stack pip would resolve (see the file).
UV := $(BIN)/python -m uv pip install --quiet --system-certs --compile-bytecode \
	--python $(BIN)/python -c tools/constraints.txt

.PHONY: demo engines test test-all lint bench app docs clean

$(STAMP): pyproject.toml tools/constraints.txt
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet "uv>=0.13"
	$(UV) -e ".[test]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/bayescm demo --out demo-output

# The web app: installs the [app] extra (Panel) and serves http://127.0.0.1:5006/ until
# Ctrl+C (`make app PORT=8000 HOST=0.0.0.0` to choose).
PORT ?= 5006
HOST ?= 127.0.0.1
$(VENV)/.installed-app: pyproject.toml tools/constraints.txt
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet "uv>=0.13"
	$(UV) -e ".[app]"
	touch $@

app: $(VENV)/.installed-app
	$(BIN)/bayescm app --port $(PORT) --host $(HOST)

# System engines the tests use (tools/engines.py: JAGS): installed with apt-get when run
# as root, otherwise their tests are skipped with a closing line saying how to install them
# (under CI=true they fail).
engines:
	$(PYTHON) tools/engines.py ensure

# -n auto: one pytest worker per core (the suite is CPU-bound; tests share no files);
# --dist loadgroup: tests marked with one xdist_group share a worker (and what it compiled);
# --durations: the slowest tests in the log, to keep the suite's time in view
test: $(STAMP) engines
	$(BIN)/python -m pytest -q -n auto --dist loadgroup --durations=30

$(VENV)/.installed-peers: pyproject.toml tools/constraints.txt $(STAMP)
	$(UV) -e ".[test,peers]"
	touch $@

test-all: $(STAMP) $(VENV)/.installed-peers engines
	$(BIN)/python -m pytest -q -n auto --dist loadgroup -m "slow or not slow"

# The documentation site into docs/_build/html (offline; every notebook executed with the
# reduced sizes of its `parameters` cell; BAYESCM_NOTEBOOK_FAST=0 for the full sizes).
$(VENV)/.installed-docs: pyproject.toml tools/constraints.txt
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet "uv>=0.13"
	$(UV) -e ".[docs]"
	touch $@

docs: $(VENV)/.installed-docs
	$(BIN)/python -m sphinx -W --keep-going -b html docs docs/_build/html

lint: $(STAMP)
	$(BIN)/ruff check .

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_core.py

clean:
	rm -rf $(VENV) demo-output .pytest_cache
