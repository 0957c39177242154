#!/usr/bin/env bash
# Installs what ftcost's builds and tests need, from Debian's packages, and prepares the Emscripten
# configuration that Debian's package needs to be usable (see build/emscripten/ below).
#
#   scripts/setup.sh [--native] [--wasm] [--cuda] [--browser] [--no-ui] [--all]
#
#   --native   g++, CMake, ...; the UI's Dear ImGui sources and libsdl2-dev (desktop app, headless UI test);
#              python3-torch (CPU) for the `probe` test of tools/ftcost_probe.py
#   --wasm     Debian's Emscripten, its config fix, and SDL2 built for wasm (scripts/web-deps.sh)
#   --browser  Chromium and npm, and `npm ci` in tests/web (playwright-core; it downloads no browser)
#   --no-ui    with --native: skip the UI's packages and sources (for builds without web/, e.g. the cuda preset)
# With no option: what `make test` needs (--native --wasm --cuda --browser).
# Idempotent: checks with dpkg first, runs `apt-get update` at most once and only when something is
# missing, and prints nothing when there is nothing to do. Works as root with no standard input (CI);
# as another user it uses sudo when it has to install.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

want_native=0 want_wasm=0 want_cuda=0 want_browser=0 explicit_cuda=0 want_ui=1
if [ $# -eq 0 ]; then
  want_native=1 want_wasm=1 want_cuda=1 want_browser=1
fi
for arg in "$@"; do
  case "$arg" in
    --native) want_native=1 ;;
    --wasm) want_wasm=1 ;;
    --cuda) want_cuda=1 explicit_cuda=1 ;;
    --browser) want_browser=1 ;;
    --no-ui) want_ui=0 ;;
    --all) want_native=1 want_wasm=1 want_cuda=1 want_browser=1 ;;
    -h | --help)
      sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "setup.sh: unknown option '$arg' (use --native, --wasm, --cuda, --browser, --no-ui, --all)" >&2
      exit 2
      ;;
  esac
done

say() { echo "setup: $*"; }

# ---- Debian packages ---------------------------------------------------------------------------
missing=()
need_pkg() {  # need_pkg PACKAGE...: queue the packages that dpkg does not list as installed
  local p
  for p in "$@"; do
    if [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)" != "install ok installed" ]; then
      missing+=("$p")
    fi
  done
}

# Both builds need make (the Makefile), a C++ compiler, cmake, ninja, the header-only libraries and
# clang-format (`make test` checks the formatting first), clang (libFuzzer: `make test-fuzz`), clang-tidy;
# python3-yaml parses the generated configs (test plan.configs).
common=(make g++ cmake ninja-build ccache nlohmann-json3-dev doctest-dev clang-format clang clang-tidy python3-yaml)
# The calculator's UI (web/) is built natively too (headless smoke test, desktop app): Dear ImGui's
# sources come from Debian's source package (dpkg-dev unpacks it), SDL2 + OpenGL from libsdl2-dev.
# A TrueType font for the UI (embedded at build time; without it ImGui's built-in bitmap font is used).
web_common=(dpkg-dev fonts-roboto-unhinted)
if [ $want_native = 1 ]; then
  # python3-torch (CPU, 1.13): the `probe` test trains a tiny model through tools/ftcost_probe.py
  need_pkg "${common[@]}" libcli11-dev python3-torch
  [ $want_ui = 0 ] || need_pkg "${web_common[@]}" libsdl2-dev
fi
if [ $want_wasm = 1 ]; then
  # emscripten depends on node-acorn (the JS optimizer's parser, in /usr/share/nodejs/acorn).
  need_pkg "${common[@]}" emscripten node-acorn "${web_common[@]}"
  # A node from another packager (e.g. NodeSource's "nodejs", which also provides npm) is fine too.
  command -v node >/dev/null 2>&1 || need_pkg nodejs
fi
if [ $want_browser = 1 ]; then
  need_pkg chromium
  command -v node >/dev/null 2>&1 || need_pkg nodejs
  # Debian's npm conflicts with a NodeSource nodejs, which ships its own npm: install only if absent.
  command -v npm >/dev/null 2>&1 || need_pkg npm
fi

if [ ${#missing[@]} -gt 0 ]; then
  # de-duplicate, keep order
  mapfile -t missing < <(printf '%s\n' "${missing[@]}" | awk '!seen[$0]++')
  sudo=()
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
      sudo=(sudo)
    else
      echo "setup: need root (or sudo) to install: ${missing[*]}" >&2
      exit 1
    fi
  fi
  say "installing ${missing[*]}"
  log=$(mktemp "${TMPDIR:-/tmp}/ftcost-setup.XXXXXX")
  if ! "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update </dev/null >"$log" 2>&1 ||
    ! "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      "${missing[@]}" </dev/null >>"$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "setup: apt-get failed (full log: $log)" >&2
    exit 1
  fi
  rm -f "$log"
fi

# ---- Emscripten configuration ------------------------------------------------------------------
# Debian's /usr/share/emscripten/.emscripten sets FROZEN_CACHE = True, so em++ cannot build any
# system library it has not got prebuilt ("Attempt to lock the cache but FROZEN_CACHE is set"), and
# EM_FROZEN_CACHE=0 does not override it. We use a private copy with FROZEN_CACHE = False and a
# writable CACHE in the build tree, and point EM_CONFIG at it (cmake/emscripten-env.sh, the presets
# and the Makefile do). The cache starts as a mirror of Debian's prebuilt one, so nothing is rebuilt
# that Debian already built; what is missing (e.g. a port) is built into build/emscripten/cache.
if [ $want_wasm = 1 ]; then
  debian_cfg=/usr/share/emscripten/.emscripten
  emdir="$root/build/emscripten"
  cfg="$emdir/config"
  cache="$emdir/cache"
  if [ ! -f "$debian_cfg" ]; then
    echo "setup: $debian_cfg not found (is Debian's emscripten package installed?)" >&2
    exit 1
  fi
  new=$(
    grep -v -E '^[[:space:]]*(FROZEN_CACHE|CACHE)[[:space:]]*=' "$debian_cfg"
    echo "FROZEN_CACHE = False"
    echo "CACHE = '$cache'"
  )
  if [ ! -f "$cfg" ] || [ "$(cat "$cfg")" != "$new" ]; then
    mkdir -p "$emdir"
    printf '%s\n' "$new" >"$cfg.tmp"
    mv "$cfg.tmp" "$cfg"
  fi
  if [ ! -d "$cache" ]; then
    # Debian's config has no CACHE line: its prebuilt cache is emscripten's default, <root>/cache.
    debian_cache=$(sed -n -E "s/^[[:space:]]*CACHE[[:space:]]*=[[:space:]]*['\"]([^'\"]*)['\"].*/\1/p" \
      "$debian_cfg" | tail -n 1)
    [ -n "$debian_cache" ] || debian_cache=/usr/share/emscripten/cache
    rm -rf "$cache.tmp"
    mkdir -p "$cache.tmp"
    if [ -d "$debian_cache" ]; then
      # Real folders, files as symbolic links (the prebuilt libraries are 750 MB): emscripten only
      # adds new files to its cache, and replaces or deletes entries without following links.
      cp -as "$debian_cache/." "$cache.tmp/"
      rm -f "$cache.tmp/cache.lock"
      for f in "$cache.tmp"/*.stamp "$cache.tmp"/*.txt; do
        if [ -L "$f" ]; then cp --remove-destination "$(readlink "$f")" "$f"; fi
      done
    fi
    mv "$cache.tmp" "$cache"
  fi
  # The header-only libraries the core and its tests use, from their Debian packages, in a prefix of
  # their own (build/emscripten/prefix) that the wasm preset adds to CMAKE_FIND_ROOT_PATH: em++ must
  # not see /usr/include (glibc's headers), nor the sysroot's include dir as an -isystem (its C
  # headers would then come before libc++'s). Their CMake package files are copied so that the
  # imported targets point into this prefix (both sit three levels below their prefix).
  prefix="$emdir/prefix"
  for dir in /usr/include/nlohmann /usr/include/doctest; do
    link="$prefix/include/$(basename "$dir")"
    if [ -d "$dir" ] && [ "$(readlink "$link" 2>/dev/null)" != "$dir" ]; then
      mkdir -p "$prefix/include"
      rm -rf "$link"
      ln -s "$dir" "$link"
    fi
  done
  for dir in /usr/share/cmake/nlohmann_json /usr/lib/cmake/doctest; do
    [ -d "$dir" ] || continue
    dest="$prefix/${dir#/usr/}"
    mkdir -p "$dest"
    for f in "$dir"/*.cmake; do
      # doctest's package file hard-codes its prefix ("/usr"): make it relative to where it now is.
      # shellcheck disable=SC2016  # ${CMAKE_CURRENT_LIST_DIR} is for CMake, not the shell
      sed 's|^set(_IMPORT_PREFIX "/usr")$|get_filename_component(_IMPORT_PREFIX "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)|' \
        "$f" >"$dest/.new"
      if cmp -s "$dest/.new" "$dest/$(basename "$f")"; then rm "$dest/.new"; else mv "$dest/.new" "$dest/$(basename "$f")"; fi
    done
  done
fi

# ---- the UI's third-party sources (Dear ImGui, SDL2) and SDL2 built for wasm ---------------------
# From Debian's source packages, prepared once in build/web-deps/ (see scripts/web-deps.sh).
if [ $want_wasm = 1 ]; then
  bash "$root/scripts/web-deps.sh" --sdl2-wasm
elif [ $want_native = 1 ] && [ $want_ui = 1 ]; then
  bash "$root/scripts/web-deps.sh" --sources
fi

# ---- browser tests: playwright-core from the committed package-lock.json (no browser download) ------
if [ $want_browser = 1 ]; then
  web_tests="$root/tests/web"
  stamp="$web_tests/node_modules/.ftcost-lock"
  if [ ! -f "$stamp" ] || ! cmp -s "$web_tests/package-lock.json" "$stamp"; then
    say "npm ci in tests/web (playwright-core)"
    # PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: the tests drive Debian's /usr/bin/chromium.
    if ! (cd "$web_tests" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error </dev/null); then
      echo "setup: npm ci in tests/web failed" >&2
      exit 1
    fi
    cp "$web_tests/package-lock.json" "$stamp"
  fi
fi

# ---- CUDA: nothing to install (nvcc comes with the CUDA Toolkit); only detect ---------------------
# Silent by default (the Makefile says "skipped" itself); with an explicit --cuda, say what was found.
if [ $want_cuda = 1 ] && [ $explicit_cuda = 1 ]; then
  nvcc=/usr/local/cuda/bin/nvcc
  [ -x "$nvcc" ] || nvcc=$(command -v nvcc 2>/dev/null || true)
  if [ -n "$nvcc" ] && [ -x "$nvcc" ]; then
    say "nvcc: $nvcc ($("$nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'))"
  else
    say "nvcc not found (looked in /usr/local/cuda/bin and PATH): the cuda build will be skipped"
  fi
fi
