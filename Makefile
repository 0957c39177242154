# Thin wrapper over CMakePresets.json and scripts/setup.sh. Everything here can be run by hand:
#   scripts/setup.sh && cmake --preset native && cmake --build --preset native && ctest --preset native
#
#   make serve    set up, build the browser calculator (build/wasm/site) and serve it on
#                 http://127.0.0.1:8080/ (PORT=N for another port); Ctrl+C stops it
#   make site     only build the calculator's static site (build/wasm/site)
#   make test     format check, clang-tidy gate on core/, native build + tests (with the UI's headless
#                 smoke test and the robustness suite), wasm build + core tests under node, browser
#                 end-to-end tests (Playwright + Chromium), cuda build + tests (if nvcc), ASan + UBSan build
#                 of the unit, CLI and robustness tests, 60 s of libFuzzer on the loaders (format-check,
#                 tidy, test-native, test-wasm, test-web, test-cuda, test-asan, test-fuzz)
#   make test-asan  Debug build with AddressSanitizer + UndefinedBehaviorSanitizer (build/asan); runs the
#                 unit, CLI and robustness tests
#   make test-fuzz  clang + libFuzzer build (build/fuzz); fuzzes the gpu-db/calibration loaders for 60 s
#   make format   clang-format -i on the project's C++/CUDA sources (format-check: list what differs)
#   make tidy     clang-tidy on core/ (.clang-tidy); fails on any warning tools/clang-tidy-baseline.txt does
#                 not accept (tools/clang_tidy_gate.py; TIDY_JOBS=2 files at once)
#   make clean    remove build/

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

.PHONY: setup setup-native setup-wasm setup-browser setup-cuda native wasm site cuda serve test test-native test-wasm \
	test-web test-cuda test-asan test-fuzz format format-check tidy clean

# `setup` installs what all of `make test` needs with one apt-get run; the parts ask only for theirs.
setup:
	@bash scripts/setup.sh
setup-native setup-wasm setup-browser: setup-%:
	@bash scripts/setup.sh --$*

native: setup-native
	cmake --preset native
	cmake --build --preset native

# The Emscripten build needs EM_CONFIG and NODE_PATH (cmake/emscripten-env.sh); the presets set them too.
wasm: setup-wasm
	. cmake/emscripten-env.sh && cmake --preset wasm && cmake --build --preset wasm

# The calculator's static site alone: ftcost.js/.wasm and site/'s files, in build/wasm/site.
SITE := build/wasm/site
site: setup-wasm
	. cmake/emscripten-env.sh && cmake --preset wasm && cmake --build --preset wasm --target ftcost_web

# The cuda preset does not build the UI: no ImGui sources or SDL2 needed.
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

test: setup format-check tidy test-native test-wasm test-web test-cuda test-asan test-fuzz

test-native: native
	ctest --preset native

test-wasm: wasm
	. cmake/emscripten-env.sh && ctest --preset wasm

# Browser end-to-end: serves build/wasm/site on 127.0.0.1, drives Debian's Chromium with playwright-core,
# compares window.ftcost.estimate with build/native/bin/ftcost; screenshots + report in build/web-test/.
test-web: native site setup-browser
	node tests/web/browser_test.mjs --site $(SITE) --cli $(FTCOST) --out build/web-test

test-cuda: cuda
	@if [ -n "$(NVCC)" ] && [ -f kernels/CMakeLists.txt ]; then set -x; ctest --preset cuda; fi

# ASan + UBSan (Debug, build/asan): the unit, CLI and robustness tests (the last part of `make test`).
test-asan: setup-cuda
	cmake --preset asan
	cmake --build --preset asan
	ctest --preset asan

# libFuzzer (clang, ASan + UBSan, build/fuzz): 60 seconds on the gpu-db, calibration and reference loaders.
# A crash fails the target and leaves crash-<hash> in build/fuzz/tests/fuzz (tests/fuzz/CMakeLists.txt).
test-fuzz: setup-native
	cmake --preset fuzz
	cmake --build --preset fuzz
	cmake --build build/fuzz --target fuzz-db

# clang-tidy needs only the configured build tree (compile_commands.json, the generated version header).
TIDY_JOBS ?= 2
tidy: setup-native
	cmake --preset native
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
