# shellcheck shell=bash
# Source this file (`. cmake/emscripten-env.sh`) to use Debian's emscripten by hand (em++, emcmake,
# or ninja -C build/wasm); the Makefile sources it and the `wasm` CMake presets set the same variables.
# scripts/setup.sh --wasm writes the config it points to (FROZEN_CACHE = False, writable cache).
# For bash (it finds its own folder through BASH_SOURCE). No `set -e` or other shell options here:
# this file runs inside the caller's shell.
_ftcost_root=$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")/.." && pwd)
export EM_CONFIG="$_ftcost_root/build/emscripten/config"
# Debian ships the acorn module the JS optimizer needs in /usr/share/nodejs, where node does not look.
case ":${NODE_PATH:-}:" in
  *:/usr/share/nodejs:*) ;;
  *) export NODE_PATH="/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}" ;;
esac
if [ ! -f "$EM_CONFIG" ]; then
  echo "cmake/emscripten-env.sh: $EM_CONFIG is missing: run scripts/setup.sh --wasm" >&2
fi
unset _ftcost_root
