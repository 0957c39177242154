# Thin wrapper over CMakePresets.json and scripts/setup.sh. Everything here can be run by hand:
#   scripts/setup.sh && cmake --preset native && cmake --build --preset native && ctest --preset native
#
#   make serve    build the native CLI; print the paper's Table IV and an example estimate
#   make test     native build + tests, wasm core build + tests under node, cuda build + tests (if nvcc)
#                 (test-native, test-wasm, test-cuda: one part each)
#   make format   clang-format -i on the project's C++/CUDA sources (format-check: list what differs)
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

.PHONY: setup setup-native setup-wasm native wasm cuda serve test test-native test-wasm test-cuda \
	format format-check clean

# `setup` installs what all of `make test` needs with one apt-get run; the parts ask only for theirs.
setup:
	@bash scripts/setup.sh
setup-native setup-wasm: setup-%:
	@bash scripts/setup.sh --$*

native: setup-native
	cmake --preset native
	cmake --build --preset native

# The Emscripten build needs EM_CONFIG and NODE_PATH (cmake/emscripten-env.sh); the presets set them too.
wasm: setup-wasm
	. cmake/emscripten-env.sh && cmake --preset wasm && cmake --build --preset wasm

cuda: setup-native
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

serve: native
	$(FTCOST) paper table4
	$(FTCOST) estimate --model mixtral-8x7b --gpu a40 --method qlora --moe sparse --dataset math14k --batch max

test: setup test-native test-wasm test-cuda

test-native: native
	ctest --preset native

test-wasm: wasm
	. cmake/emscripten-env.sh && ctest --preset wasm

test-cuda: cuda
	@if [ -n "$(NVCC)" ] && [ -f kernels/CMakeLists.txt ]; then set -x; ctest --preset cuda; fi

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
