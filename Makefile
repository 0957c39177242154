# Thin wrapper over CMakePresets.json and scripts/setup.sh. Everything here can be run by hand:
#   scripts/setup.sh && cmake --preset native && cmake --build --preset native && ctest --preset native
#
#   make serve    set up, build the browser calculator (build/wasm/site) and serve it on
#                 http://127.0.0.1:8080/ (PORT=N for another port); Ctrl+C stops it
#   make site     only build the calculator's static site (build/wasm/site)
#   make check    the edit-build-test loop: builds the core, the CLI and the C++ test programs (no UI, no
#                 CUDA), runs the tests labelled `quick` and the clang-tidy gate (cached per file: only
#                 what changed is analysed); a minute or two after a one-file change
#   make test     every gate, each phase timed (tools/ci_phases.sh): format check, clang-tidy gate on core/,
#                 native build + all its tests (with the CUDA calibrator when nvcc exists, the UI's headless
#                 smoke test and the whole robustness suite), wasm build + core tests under node, browser
#                 end-to-end tests (Playwright + Chromium), one clang ASan + UBSan build for the unit, CLI
#                 and a sample of the robustness tests and 60 s of libFuzzer on the loaders
#                 (format-check, tidy, test-native, test-wasm, test-web, test-asan, test-fuzz)
#   make test-asan  clang -O1 AddressSanitizer + UndefinedBehaviorSanitizer build (build/sanitize); runs the
#                 unit and CLI tests and a deterministic quarter of the robustness suite
#   make test-fuzz  the same build's libFuzzer target: replays the seeds, then fuzzes the gpu-db/calibration
#                 loaders for 60 s
#   make test-cuda  only the calibrator, in its own tree (build/cuda; for a machine without the UI's packages)
#   make format   clang-format -i on the project's C++/CUDA sources (format-check: list what differs)
#   make tidy     clang-tidy on core/ (.clang-tidy); fails on any warning tools/clang-tidy-baseline.txt does
#                 not accept (tools/clang_tidy_gate.py; TIDY_JOBS=2 files at once; results cached per file)
#   make clean    remove build/ (the compiler cache, ~/.cache/ccache, and the tidy cache,
#                 ~/.cache/ftcost/clang-tidy, stay)
#
# Every compiler goes through ccache when it is installed (cmake/ccache.cmake).

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := test
# One step at a time, in the order written, even under `make -j`: each build already uses both cores.
.NOTPARALLEL:

# nvcc: the CUDA Toolkit's usual place first, then PATH. Empty when there is none.
NVCC ?= $(firstword $(wildcard /usr/local/cuda/bin/nvcc) $(shell command -v nvcc 2>/dev/null))
CLANG_FORMAT ?= clang-format
FORMAT_DIRS := core native kernels tests web
FORMAT_GLOBS := '*.cpp' '*.hpp' '*.h' '*.cc' '*.cu' '*.cuh'

.PHONY: setup setup-native setup-wasm setup-browser setup-cuda native native-configure wasm site cuda serve check test \
	test-native test-wasm test-web test-cuda test-asan test-fuzz sanitize format format-check tidy clean

# `setup` installs what all of `make test` needs with one apt-get run; the parts ask only for theirs.
setup:
	@bash scripts/setup.sh
setup-native setup-wasm setup-browser: setup-%:
	@bash scripts/setup.sh --$*

# With nvcc, the native tree builds the CUDA calibrator too (the cuda preset's architectures), so that
# `make test` compiles the core once per compiler and runs each suite once. NATIVE_CUDA=0 leaves it out.
NATIVE_CUDA ?= 1
CUDA_ARCHS := 80-real;86-real;89-real;90
NATIVE_CUDA_FLAGS := $(if $(and $(NVCC),$(filter 1,$(NATIVE_CUDA)),$(wildcard kernels/CMakeLists.txt)),\
	-DFTCOST_CUDA=ON -DCMAKE_CUDA_COMPILER=$(NVCC) "-DCMAKE_CUDA_ARCHITECTURES=$(CUDA_ARCHS)",-DFTCOST_CUDA=OFF)

native-configure: setup-native
	cmake --preset native $(NATIVE_CUDA_FLAGS)

native: native-configure
	cmake --build --preset native

# The edit-build-test loop: what the `quick` tests need, no UI and no CUDA objects (the same tree and flags as
# `make native`, so nothing is rebuilt twice), then the tidy gate (unchanged files come from its cache).
CHECK_TARGETS := ftcost ftcost_unit_tests ftcost_cli_tests ftcost_db_tests ftcost_calibrate_tests \
	calibration_fixture_tool
check: native-configure
	cmake --build --preset native --target $(CHECK_TARGETS)
	ctest --preset quick
	python3 tools/clang_tidy_gate.py -p build/native -j $(TIDY_JOBS)

# The Emscripten build needs EM_CONFIG and NODE_PATH (cmake/emscripten-env.sh); the presets set them too.
wasm: setup-wasm
	. cmake/emscripten-env.sh && cmake --preset wasm && cmake --build --preset wasm

# The calculator's static site alone: ftcost.js/.wasm and site/'s files, in build/wasm/site.
SITE := build/wasm/site
site: setup-wasm
	. cmake/emscripten-env.sh && cmake --preset wasm && cmake --build --preset wasm --target ftcost_web

# The cuda preset builds only the calibrator: no ImGui sources or SDL2 needed.
setup-cuda:
	@bash scripts/setup.sh --native --no-ui

cuda: setup-cuda
	@if [ -z "$(NVCC)" ]; then \
	  echo "cuda: skipped: nvcc not found (looked in /usr/local/cuda/bin and PATH)"; \
	elif [ ! -f kernels/CMakeLists.txt ]; then \
	  echo "cuda: skipped: kernels/CMakeLists.txt does not exist yet"; \
	else \
	  set -x; \
	  cmake --preset cuda -DCMAKE_CUDA_COMPILER=$(NVCC); \
	  cmake --build --preset cuda; \
	fi

FTCOST := build/native/bin/ftcost

PORT ?= 8080

# A static server is all the calculator needs: everything runs in the page.
serve: site
	@echo "ftcost calculator: http://127.0.0.1:$(PORT)/   (serving $(SITE); Ctrl+C to stop)"
	@python3 -m http.server $(PORT) --bind 127.0.0.1 --directory $(SITE)

# Every gate, one phase at a time, each timed; the last line names the gates that ran (tools/ci_phases.sh).
TEST_PHASES := setup format-check tidy test-native test-wasm test-web test-asan test-fuzz
test:
	@bash tools/ci_phases.sh $(TEST_PHASES)

test-native: native
	ctest --preset native

test-wasm: wasm
	. cmake/emscripten-env.sh && ctest --preset wasm -LE browser

# Browser end-to-end (ctest label browser in the wasm tree): serves build/wasm/site on 127.0.0.1, drives
# Debian's Chromium with playwright-core, compares window.ftcost.estimate with build/native/bin/ftcost;
# screenshots + report in build/web-test/.
test-web: native site setup-browser
	. cmake/emscripten-env.sh && ctest --preset wasm -L browser

test-cuda: cuda
	@if [ -n "$(NVCC)" ] && [ -f kernels/CMakeLists.txt ]; then set -x; ctest --preset cuda; fi

# One clang build (build/sanitize, -O1, ASan + UBSan, the core instrumented for libFuzzer too) serves both.
sanitize: setup-cuda
	cmake --preset sanitize
	cmake --build --preset sanitize

# The unit and CLI tests and a deterministic quarter of the robustness suite under the sanitizers.
test-asan: sanitize
	ctest --preset sanitize

# libFuzzer: replays the seeds (gpu-db/, the fixtures) and fuzzes the gpu-db, calibration and reference
# loaders for 60 s. A crash fails the target and leaves crash-<hash> in build/sanitize/tests/fuzz.
test-fuzz: sanitize
	cmake --build build/sanitize --target fuzz-db

# clang-tidy needs only the configured build tree (compile_commands.json, the generated version header).
TIDY_JOBS ?= 2
tidy: native-configure
	python3 tools/clang_tidy_gate.py -p build/native -j $(TIDY_JOBS)

format-files = git ls-files --cached --others --exclude-standard -- \
	$(foreach d,$(FORMAT_DIRS),$(foreach g,$(FORMAT_GLOBS),':(glob)$(d)/**/$(g)'))

format:
	@$(format-files) | xargs -r $(CLANG_FORMAT) -i

format-check:
	@bad=0; for f in $$($(format-files)); do \
	  if ! $(CLANG_FORMAT) "$$f" | cmp -s - "$$f"; then echo "not formatted: $$f"; bad=1; fi; \
	done; \
	if [ $$bad = 1 ]; then echo "run: make format" >&2; exit 1; fi

clean:
	rm -rf build
